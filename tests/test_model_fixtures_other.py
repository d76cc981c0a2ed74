"""Non-RoPE models from their config.json against transformers' own functions (fixtures in
``tests/fixtures/models/other``, made by its ``generate.py``; versions in its INDEX.json).

Each fixture holds the config.json that ``save_pretrained`` writes for the model type's default config
(and a few changed copies), and arrays computed by the model's own code: BLOOM's and Falcon's
``build_alibi_tensor``, MPT's ``build_mpt_alibi_tensor``, T5's ``_relative_position_bucket``, Marian's
and Pegasus' sinusoidal modules, Whisper's ``sinusoids``, fairseq's ``get_embedding``. pecli reads the
config through its model table and must give the same numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pecli.config import build_scheme, resolve
from pecli.errors import ConfigError
from pecli.models.families.from_config import plan_of
from pecli.schemes.t5 import t5_buckets

FIXTURES = Path(__file__).parent / "fixtures" / "models" / "other"
INDEX = json.loads((FIXTURES / "INDEX.json").read_text())


def fixture(model_type: str) -> dict:
    return json.loads((FIXTURES / f"{model_type}.json").read_text())


def config_of(data: dict, case: dict) -> dict:
    variant = case.get("inputs", {}).get("config_variant")
    return data["config_variants"][variant] if variant else data["config"]


def scheme_of(config: dict, group: str | None = None):
    plan = plan_of(config, "config.json")
    chosen = plan.single if group is None else plan.group_named(group)
    options = dict(chosen.options)
    return build_scheme(options.pop("scheme"), options)


@pytest.mark.parametrize("model_type", ["bloom", "mpt", "falcon"])
def test_alibi_slopes_equal_the_models_own(model_type):
    data = fixture(model_type)
    cases = [c for c in data["cases"] if c["what"] == "alibi_bias_seq8" and c["inputs"].get("dtype", "float32") == "float32"]
    assert cases
    for case in cases:
        scheme = scheme_of(config_of(data, case))
        bias = np.asarray(case["output"], dtype=np.float64)  # (heads, 1, 8)
        assert scheme.heads == case["inputs"]["num_heads"] == bias.shape[0]
        # BLOOM and Falcon: slope·j for key j ≥ 0; MPT: slope·(j − 7), ending at 0. The key next to the
        # zero is one slope away, exactly in any precision: BLOOM's and MPT's float32 slopes are 2^x
        # rounded, powers formed in float32 (two float32 ulps), Falcon's bfloat16 ones pecli rounds alike (exact).
        zero = int(np.argmin(np.abs(bias[0, 0])))
        slopes = np.abs(bias[:, 0, zero + (1 if zero == 0 else -1)])
        np.testing.assert_allclose(slopes, scheme.slopes, rtol=2.4e-7 if model_type != "falcon" else 0)


def test_falcon_slopes_are_bfloat16_and_said_so():
    data = fixture("falcon")
    case = next(c for c in data["cases"] if c["what"] == "alibi_bias_seq8")
    plan = plan_of(config_of(data, case), "falcon.json")
    assert plan.single.options["slope_dtype"] == "bfloat16" and "bfloat16" in plan.single.note
    # 71 heads: the first slope 2^(-1/8) = 0.917004 rounds to bfloat16's 0.91796875.
    assert scheme_of(config_of(data, case)).slopes[0] == 0.91796875


@pytest.mark.parametrize("model_type", ["t5", "mt5", "umt5", "longt5", "switch_transformers", "pop2piano"])
def test_t5_buckets_of_encoder_and_decoder(model_type):
    data = fixture(model_type)
    plan = plan_of(data["config"], f"{model_type}.json")
    assert [g.name for g in plan.groups] == ["encoder", "decoder"]
    for case in data["cases"]:
        if not case["what"].startswith("buckets_"):
            continue
        stack = "encoder" if case["inputs"]["bidirectional"] else "decoder"
        scheme = scheme_of(data["config"], stack)
        assert (scheme.buckets, scheme.max_distance) == (case["inputs"]["num_buckets"], case["inputs"]["max_distance"])
        expected = np.asarray(case["output"])
        if expected.ndim == 1:
            delta = np.arange(-300, 301)
        else:
            delta = np.arange(8)[None, :] - np.arange(8)[:, None]  # [i, j] = j − i
        got = t5_buckets(delta, buckets=scheme.buckets, max_distance=scheme.max_distance, bidirectional=scheme.bidirectional)
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(("model_type", "case_name", "first_row"), [
    ("marian", "table_64_d16", 0), ("pegasus", "table_64_d16", 0), ("whisper", "table_64_d16", 0),
    # fairseq's raw table: row p is position p (the model's token t reads row t + 2); row 1 is the padding row.
    ("m2m_100", "raw_table_d16", 2), ("speech_to_text", "raw_table_d16", 2), ("fsmt", "raw_table_d16", 2),
    ("xglm", "raw_table_d16", 2),
])
def test_sinusoidal_tables_equal_the_models_own(model_type, case_name, first_row):
    data = fixture(model_type)
    case = next(c for c in data["cases"] if c["what"] == case_name)
    config = data["config_variants"]["d_model_16"]
    plan = plan_of(config, f"{model_type}.json")
    group = plan.single or plan.group_named("encoder")
    options = dict(group.options)
    scheme = build_scheme(options.pop("scheme"), options)
    table = np.asarray(case["output"], dtype=np.float64)[first_row:]
    # Whisper and fairseq form their angles in float32 (2^-24 relative: 4e-6 rad at position 65).
    np.testing.assert_allclose(scheme.encode(np.arange(first_row, first_row + len(table))), table, atol=1e-5)
    if first_row:
        assert "row t + 2" in group.note


@pytest.mark.parametrize("model_type", ["gpt2", "opt", "bert", "bart"])
def test_learned_tables_ask_for_the_checkpoint(model_type, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(fixture(model_type)["config"]))
    with pytest.raises(ConfigError) as error:
        resolve({"hf_config": str(path)})
    assert error.value.key == "weights" and "--weights" in str(error.value)


def test_whisper_encoder_table_and_learned_decoder(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(fixture("whisper")["config"]))
    spec = resolve({"hf_config": str(path), "layer_group": "encoder"})
    assert (spec.scheme.name, spec.scheme.spacing, spec.scheme.layout) == ("sinusoidal", "tensor2tensor", "half")
    with pytest.raises(ConfigError) as error:
        resolve({"hf_config": str(path), "layer_group": "decoder"})
    assert error.value.key == "weights"


def test_musicgen_is_refused_with_its_reason():
    with pytest.raises(ConfigError) as error:
        plan_of(fixture("musicgen")["config"], "musicgen.json")
    assert "cosines before the sines" in str(error.value)


def test_every_generated_fixture_is_tested():
    tested = {"bloom", "mpt", "falcon", "t5", "mt5", "umt5", "longt5", "switch_transformers", "pop2piano", "marian",
              "pegasus", "whisper", "m2m_100", "speech_to_text", "fsmt", "xglm", "gpt2", "opt", "bert", "bart", "musicgen"}
    assert set(INDEX["generated"]) == tested
