"""Adding a scaling type is one record: a fixture registers one that reads the context and says what
``pecli extend`` may build from it, and the command line takes it everywhere (--scaling with --context,
extend's candidates, --method and --pick). The expected numbers are worked out here from the rule the
fixture defines, not read from pecli.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pecli.params import Parameter
from pecli.schemes.scaling.keys import FACTOR
from pecli.schemes.scaling.record import Extension, ExtensionStart, ScalingType
from pecli.schemes.scaling.record import scaled_frequencies  # the helper a new rule returns through
from pecli.schemes.scaling.registry import SCALINGS, extension_types, scaling_keys

#: A key of the new type only (HF spelling), declared as every scaling key is.
FLOOR = Parameter("stretch_floor", float, None, "stretched: the least stretch", minimum=1, group="RoPE scaling")
ORIGINAL = "original_max_position_embeddings"

#: A small Llama: 64 rotated components, trained and served at 512 tokens, base 10,000.
LLAMA = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2,
         "max_position_embeddings": 512, "rope_theta": 10000.0}


def stretched(scaling, model):
    """θ_i / m with m = min(s, max(floor, n / L₀)) at a sequence of n tokens (s without one): it reads the context."""
    floor = scaling.stretch_floor or 1.0
    scale = scaling.factor if model.context is None else min(scaling.factor, max(floor, model.context / scaling.value(ORIGINAL)))
    return scaled_frequencies(model, scaling, model.theta / scale, regimes=("scaled",) * model.pairs,
                              factor=scaling.factor, original_context=scaling.value(ORIGINAL))


def write_stretched(record, start: ExtensionStart):
    return {"rope_type": "stretched", "factor": start.factor, ORIGINAL: start.pretraining}


@pytest.fixture
def stretched_type(monkeypatch):
    """The new type, registered for the test's duration."""
    original = next(key for key in SCALINGS["yarn"].keys if key.name == ORIGINAL)
    record = ScalingType(
        "stretched", "stretched: θ_i / min(s, n / L₀)", (FACTOR, original, FLOOR), stretched,
        required=("factor", ORIGINAL), reads_context=True,
        extension=Extension("stretched", "stretched", "θ_i / min(s, n / L₀)", "`factor`, "
                            "`original_max_position_embeddings` L₀; N", write_stretched, order=6))
    monkeypatch.setitem(SCALINGS, "stretched", record)
    return record


def test_context_is_taken_by_the_new_type_and_refused_by_one_that_does_not_read_it(stretched_type, invoke):
    # context 100 over L₀ 64: the stretch is min(2, 100/64) = 1.5625, so pair 1 (θ = 10000^(-2/8) = 0.1) turns at
    # 0.1 / 1.5625 = 0.064 radians a token
    args = ["--scheme", "rope", "--dim", "8", "--length", "4", "--factor", "2", "--set", f"{ORIGINAL}=64"]
    result = invoke("wavelengths", *args, "--scaling", "stretched", "--context", "100", "--json")
    assert result.exit_code == 0, result.output
    pairs = json.loads(result.stdout)["pairs"]
    assert pairs[1]["inv_freq"] == pytest.approx(0.1 / 1.5625, rel=1e-12)
    assert pairs[3]["inv_freq"] == pytest.approx(10000 ** -0.75 / 1.5625, rel=1e-12)
    encoded = invoke("encode", *args, "--scaling", "stretched", "--context", "100", "--json")
    assert encoded.exit_code == 0, encoded.output
    params = json.loads(encoded.stdout)["params"]
    assert (params["scaling"], params["context"]) == ("stretched", 100)
    # its own key is an option of the rope scheme too
    floored = invoke("wavelengths", *args, "--scaling", "stretched", "--context", "70", "--stretch-floor", "1.25", "--json")
    assert json.loads(floored.stdout)["pairs"][1]["inv_freq"] == pytest.approx(0.1 / 1.25, rel=1e-12)
    refused = invoke("encode", "--scheme", "rope", "--dim", "8", "--length", "4", "--scaling", "linear", "--factor", "2",
                     "--context", "100")
    assert refused.exit_code == 2 and "context" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1


def test_extend_offers_the_new_type(stretched_type, invoke, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(LLAMA))
    result = invoke("extend", "--hf-config", config, "--target", "2048", "--pick", "stretched", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    found = {c["method"]: c for c in document["candidates"]}
    assert set(found) >= {"yarn", "llama3", "dynamic", "linear", "stretched"}
    candidate = found["stretched"]
    # s = 2048 / 512 = 4; the patch in the config's own form (rope_theta beside rope_scaling)
    assert candidate["config_patch"] == {"rope_theta": 10000.0, "max_position_embeddings": 2048,
                                         "rope_scaling": {"rope_type": "stretched", "factor": 4.0, ORIGINAL: 512}}
    # read back and measured at N = 2048: the stretch is min(4, 2048 / 512) = 4, every pair divided by 4
    theta = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    full = 512 * theta >= 2 * math.pi
    measures = candidate["measures"]
    assert measures["length_dependent"] is True
    assert measures["trained_pair_shift"] == pytest.approx(np.mean(np.abs(np.log2(np.full(full.sum(), 0.25)))))
    step = np.sqrt(np.sum(4 - 4 * np.cos(theta / 4))) / np.sqrt(np.sum(4 - 4 * np.cos(theta)))
    assert measures["local_resolution"] == pytest.approx(step, rel=1e-12)
    # --method takes it with a factor of one's own, and the table names it as it names the others
    given = invoke("extend", "--hf-config", config, "--target", "2048", "--method", "stretched", "--factor", "2",
                   "--pick", "given", "--json")
    assert given.exit_code == 0, given.output
    patch = json.loads(given.stdout)["candidates"]
    chosen = next(c for c in patch if c["origin"] == "given")
    assert chosen["config_patch"]["rope_scaling"] == {"rope_type": "stretched", "factor": 2.0, ORIGINAL: 512}


def test_without_the_record_the_name_is_refused_everywhere(invoke, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(LLAMA))
    for args in (["extend", "--hf-config", config, "--target", "2048", "--pick", "stretched"],
                 ["extend", "--hf-config", config, "--target", "2048", "--method", "stretched", "--factor", "2"],
                 ["encode", "--scheme", "rope", "--dim", "8", "--scaling", "stretched"]):
        result = invoke(*args)
        assert result.exit_code == 2 and "stretched" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_extend_reads_its_methods_from_the_records_only():
    import importlib

    from pecli.cli import extend as cli
    from pecli.extend import patches as extension

    # the options' choices are made when the module is imported: a test that registered a toy type may have
    # imported it first, so it is made again here from the registry as it ships
    cli = importlib.reload(cli)

    shipped = ("yarn", "llama3", "dynamic", "base", "linear", "longrope")  # the order the ranking has always used
    assert tuple(extension_types()) == extension.methods() == shipped
    assert cli.PICK.choices == (*shipped, "given", "shipped") and cli.METHOD.choices == shipped
    assert not any(isinstance(value, tuple) and set(value) == set(shipped) for name, value in vars(cli).items()
                   if name not in ("PICK", "METHOD"))
    # the keys a candidate drops from the model's block are the records' keys
    assert extension.scaling_block_keys() == {"rope_type", "type", *scaling_keys()}
    assert {"factor", "beta_fast", "short_factor", "truncate"} <= extension.scaling_block_keys()


def test_a_new_key_of_a_new_type_is_dropped_from_the_model_block(stretched_type):
    from pecli.extend.patches import extension_base, method_patch

    config = {**LLAMA, "rope_scaling": {"rope_type": "stretched", "factor": 2.0, ORIGINAL: 256, "stretch_floor": 1.5}}
    start = extension_base(config)
    assert start.pretraining == 256 and start.scaling == "stretched"
    patch = method_patch(start, "linear", 8.0, 2048)
    assert patch["rope_scaling"] == {"rope_type": "linear", "factor": 8.0}


def test_the_documentation_lists_the_records_methods(stretched_type):
    import importlib.util
    from pathlib import Path

    docs = Path(__file__).resolve().parent.parent / "docs"
    spec = importlib.util.spec_from_file_location("docs_hooks", docs / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = (docs / "commands" / "extend.md").read_text(encoding="utf-8")
    assert hooks.METHODS.search(page)  # the page holds the table between its markers (tests/test_docs.py: not stale)
    table = hooks.extend_methods().splitlines()
    assert table[-1] in hooks.with_methods(page)  # a new record reaches the page when it is written
    assert [row.split("`")[1] for row in table[2:]] == [*extension_types()]
    assert table[-1].startswith("| `stretched` | θ_i / min(s, n / L₀) |")
