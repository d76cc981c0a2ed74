"""pecli's llama.cpp engine against llama.cpp's own code: every case of
``tests/fixtures/engines/llama_cpp/gguf_cases.json`` (a GGUF file's metadata run under llama.cpp's flags by
llama.cpp built from source: its argument parser, its loader, its context constructor, the graph it builds and
``ggml_rope_ext`` on unit vectors; see ``generate.py`` and ``RULES.md`` there).

Per case pecli must give llama.cpp's answer: the flags accepted or refused, the context served (``n_ctx``), and
per layer whether it rotates, the rotated components, the layout (adjacent pairs or pairs half a head apart)
and the cos and sin at the probe positions (angle and magnitude: every factor llama.cpp puts on them), within
float32's rounding. Where a case is the conversion of a ``config.json``, ``pecli diff --runtime llama.cpp``
over the config and over the file must say "same" exactly when llama.cpp's numbers are transformers'.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gguf")

from pecli.engines import engine  # noqa: E402
from pecli.errors import ConfigError  # noqa: E402

ROOT = Path(__file__).parent.parent
DOCUMENT = json.loads((ROOT / "tests" / "fixtures" / "engines" / "llama_cpp" / "gguf_cases.json").read_text())
CASES = DOCUMENT["cases"]
IDS = [case["id"] for case in CASES]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The case's GGUF file, written once per model (:func:`tests.gguf_models.write_case_gguf`)."""
    from tests.gguf_models import write_case_gguf

    folder = tmp_path_factory.mktemp("llama_cpp")
    made: dict[str, str] = {}

    def file_of(case: dict) -> str:
        if case["model"] not in made:
            made[case["model"]] = write_case_gguf(folder / f"{case['model']}.gguf", DOCUMENT["models"][case["model"]])
        return made[case["model"]]

    return file_of


def angles_of(group, positions: list[int]) -> tuple[np.ndarray, np.ndarray, int]:
    """(angle, magnitude) per probe position and rotated pair of a pecli rope group, and its rotated components."""
    from pecli.models.rope_facts import scheme_of

    scheme = scheme_of(group)
    angles, scales = [], []
    for position in positions:
        at = scheme_of(group, position + 1) if scheme.reads_context else scheme
        angles.append(position * np.asarray(at.inv_freq, dtype=np.float64))
        scales.append(np.full(len(at.inv_freq), float(at.attention_scaling)))
    return np.array(angles), np.array(scales), int(scheme.rotated_dim)


def why_not(group, fixture: dict, permuted: bool) -> str | None:
    """Why pecli's group is not llama.cpp's numbers for the fixture's layers (None: it is)."""
    kind = fixture["kind"]
    ours = "none" if group.options is None else group.scheme
    if kind == "none":
        return None if ours in ("none", "nope") or group.options is None else f"pecli applies {ours}, llama.cpp nothing"
    if kind == "alibi":
        if ours != "alibi":
            return f"pecli applies {ours}, llama.cpp ALiBi"
        return None if fixture["max_bias"] == 8.0 and group.options["heads"] == fixture["heads"] else \
            f"ALiBi heads {group.options['heads']} vs {fixture['heads']}, max_bias {fixture['max_bias']}"
    if ours != "rope":
        return f"pecli applies {ours}, llama.cpp RoPE"
    positions = fixture["probe_positions"]
    angles, scales, rotated = angles_of(group, positions)
    if rotated != fixture["rotary_dim"]:
        return f"rotary dims {rotated}, llama.cpp {fixture['rotary_dim']}"
    # pecli's plan is in the checkpoint's frame: llama.cpp's adjacent pairs on q/k rows the converter permuted
    # are the checkpoint's halves
    layout = "half" if fixture["neox"] or permuted else "interleaved"
    if group.options.get("layout", "half") != layout:
        return f"layout {group.options.get('layout')}, llama.cpp {layout} (mode {fixture['mode']})"
    cos, sin = np.asarray(fixture["cos"], dtype=np.float64), np.asarray(fixture["sin"], dtype=np.float64)
    if cos.shape != angles.shape:
        return f"{angles.shape[1]} pairs, llama.cpp {cos.shape[1]}"
    theirs = np.arctan2(sin, cos)
    gap = np.abs(np.angle(np.exp(1j * (angles - theirs))))
    # ggml (ggml_rope_cache_init): θ_i by i float32 products θ·θ_scale, one rounding each, then p·θ and
    # cos/sin in float32: a relative error of a few ulps per pair index on the angle
    pair = np.arange(angles.shape[1])
    allowed = (pair + 8) * np.abs(angles) * 2.0 ** -23 + 2e-5
    if np.any(gap > allowed):
        i, j = np.unravel_index(int(np.argmax(gap - allowed)), gap.shape)
        return f"pair {j} at position {positions[i]}: angle {angles[i, j]:.7g} vs llama.cpp's {theirs[i, j]:.7g}"
    magnitude = np.hypot(cos, sin)
    if not np.allclose(scales, magnitude, rtol=1e-5, atol=0):
        return f"cos/sin scale {scales.flat[0]:.7g}, llama.cpp {magnitude.flat[0]:.7g}"
    return None


def softmax_gap(group, fixture: dict, arch: str) -> str | None:
    """DeepSeek 2's softmax factor: llama.cpp's ``kq_scale`` (its softmax node) is mscale²/√192 (MLA's q·k width)."""
    if arch != "deepseek2" or fixture.get("kq_scale") is None:
        return None
    ours = group.attention_scale.factor if group.attention_scale is not None else 1.0
    theirs = fixture["kq_scale"] * np.sqrt(192.0)
    return None if np.isclose(ours, theirs, rtol=2e-6) else f"softmax factor {ours:.7g}, llama.cpp {theirs:.7g}"


def temperature_gap(group, fixture: dict, case: dict) -> str | None:
    """Llama 4's attention temperature: the layers whose queries llama.cpp's graph multiplies by ``inp_attn_scale``
    (``attn_temp`` in the fixture) carry the factor its ``set_input`` writes at each position (or, where that
    aborts, pecli says it cannot give the layer's scale); other layers carry no position-dependent factor."""
    if not fixture.get("attn_temp"):
        return None if group.attention_scale.constant else f"pecli scales the queries ({group.attention_scale.text()}), llama.cpp does not"
    temperature = case["attn_temp"]
    if isinstance(temperature["values"], str):  # llama.cpp aborts in set_input
        return None if group.logit_scale_unknown else f"llama.cpp: {temperature['values']}; pecli gives a logit scale"
    ours = group.attention_scale.at(temperature["positions"])
    if group.logit_scale_unknown or not np.allclose(ours, temperature["values"], rtol=2e-7, atol=0):
        return f"query scale {ours.tolist()}, llama.cpp {temperature['values']}"
    return None


def problems(plan, case: dict, permuted: bool) -> list[str]:
    found = []
    arch = DOCUMENT["models"][case["model"]]["arch"]
    for fixture in case["groups"]:
        answers: dict[int, str | None] = {}  # a group's answer holds for each of its layers: worked out once
        for layer in fixture["layers"]:
            group = next((g for g in plan.groups if layer in g.layers), None)
            if group is None:
                found.append(f"layer {layer}: no pecli group")
                continue
            if id(group) not in answers:
                answers[id(group)] = why_not(group, fixture, permuted) or softmax_gap(group, fixture, arch) or \
                    temperature_gap(group, fixture, case)
            why = answers[id(group)]
            if why is not None:
                found.append(f"layer {layer}: {why}")
                break
    return found


def permuted_of(case: dict) -> bool:
    from pecli.models.gguf import ARCHS

    return ARCHS[DOCUMENT["models"][case["model"]]["arch"]].permuted


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_pecli_computes_what_llama_cpp_computes(case, files):
    """pecli's llama.cpp engine over the case's GGUF file and flags gives llama.cpp's own answer."""
    record = engine("llama.cpp")
    path = files(case)
    if not case["accepted"]:
        with pytest.raises(ConfigError):
            run = record.run_gguf(path, case["args"])
            assert not run.accepted, f"llama.cpp refuses ({case['error']}); pecli accepts"
            raise ConfigError("runtime", run.refused)
        return
    run = record.run_gguf(path, case["args"])
    assert run.accepted, run.refused
    assert run.served == case["served"], f"pecli serves {run.served}, llama.cpp {case['served']}"
    found = problems(run.plan, case, permuted_of(case))
    assert not found, found


CONFIG_CASES = [case for case in CASES if case["config"]]


def transformers_equal(case: dict, reference) -> bool:
    """Whether llama.cpp's numbers (the case) are transformers' (pecli's reading of the config), layer by layer."""
    return case["accepted"] and not problems(reference, case, permuted_of(case))


@functools.cache
def config_plan(config: str) -> tuple:
    """The config file's text and pecli's plan of it (transformers' numbers), read once per file."""
    from pecli.models.families.from_config import plan_of

    text = (ROOT / config).read_text()
    return text, plan_of(json.loads(text), "config.json")


@functools.cache
def reference_of(case_id: str) -> tuple:
    """The case's config text, its reference plan and :func:`transformers_equal`, worked out once for the tests
    over the config and over the file."""
    case = next(case for case in CONFIG_CASES if case["id"] == case_id)
    text, reference = config_plan(case["config"])
    return text, reference, transformers_equal(case, reference)


@pytest.mark.parametrize("case", CONFIG_CASES, ids=[c["id"] for c in CONFIG_CASES])
def test_diff_over_the_config_says_same_exactly_when_llama_cpp_computes_the_model(case):
    """``pecli diff --hf-config C --runtime llama.cpp --args A``: the config runs as the GGUF file the converter
    writes from it; "same" exactly when llama.cpp's measured numbers are the model's."""
    from pecli.engines.compare import engine_diff

    text, reference, equal = reference_of(case["id"])
    config = json.loads(text)
    if not case["accepted"]:  # refused: a ConfigError (the flags), or a run pecli says llama.cpp refuses
        try:
            found = engine_diff(engine("llama.cpp"), config, case["args"], reference)
        except ConfigError:
            return
        assert not found.run.accepted and not found.same, found.lines()
        return
    found = engine_diff(engine("llama.cpp"), config, case["args"], reference)
    assert found.run.accepted
    assert not problems(found.run.plan, case, permuted_of(case)), problems(found.run.plan, case, permuted_of(case))
    assert found.same == equal, found.lines()


@pytest.mark.parametrize("case", CONFIG_CASES, ids=[c["id"] for c in CONFIG_CASES])
def test_diff_over_the_file_says_same_exactly_when_llama_cpp_computes_the_model(case, files):
    """``pecli diff --gguf F --hf-config C --runtime llama.cpp --args A``: "same" exactly when llama.cpp's
    measured numbers on the file are the model's."""
    from pecli.models.gguf_blame import diff_gguf_flags

    _, reference, equal = reference_of(case["id"])
    if not case["accepted"]:
        with pytest.raises(ConfigError):
            diff_gguf_flags(files(case), case["args"], reference)
        return
    found = diff_gguf_flags(files(case), case["args"], reference)
    assert found.same == equal, found.lines()


def test_the_measured_architectures_are_the_fixtures():
    """``MEASURED_ARCHS`` (a config converted to another architecture is "cannot be sure") is exactly the
    architectures the fixtures ran, and every architecture pecli reads from a GGUF file is among them."""
    from pecli.engines.llama_cpp import MEASURED_ARCHS
    from pecli.models.gguf import ARCHS

    ran = {DOCUMENT["models"][case["model"]]["arch"] for case in CASES if case["accepted"]}
    assert set(MEASURED_ARCHS) == ran
    assert set(ARCHS) <= ran


def test_a_config_of_an_unmeasured_architecture_is_not_said_same():
    """A model type whose converted architecture the fixtures did not run: a difference, "cannot be sure"."""
    from pecli.engines.compare import engine_diff
    from pecli.models.families.from_config import plan_of

    config = json.loads((ROOT / "tests" / "fixtures" / "models" / "rope" / "exaone4.json").read_text())["config"]
    found = engine_diff(engine("llama.cpp"), config, "", plan_of(config, "config.json"))
    assert not found.same and any("cannot be sure" in line for line in found.lines()), found.lines()


def test_the_engine_record_names_the_measured_version():
    assert engine("llama.cpp").version.startswith("0c1e57098")
    assert DOCUMENT["engine_version"].startswith("0c1e57098")


def test_the_cli_runs_a_gguf_file_under_flags(files, runner):
    """The command line's door: ``pecli diff --gguf F --runtime llama.cpp --args …`` on the Gemma 3 file."""
    from pecli.cli import app

    case = next(c for c in CASES if c["model"] == "gemma-3-4b" and c["args"] == "--rope-freq-base 20000")
    result = runner.invoke(app, ["diff", "--gguf", files(case), "--runtime", "llama.cpp", "--args", case["args"],
                                 "--json"])
    assert result.exit_code == 1, result.output
    document = json.loads(result.output)
    assert not document["same"]


def test_a_llama4_config_without_windows_is_not_said_same():
    """Llama 4 with every layer full attention converts with sliding_window 0 (conversion/llama.py:396-399), a file
    the fixtures measured (``llama4-no-window``: the last layer's temperature input aborts llama.cpp); from a config
    pecli says it cannot be sure, and gives that NoPE layer no logit scale."""
    from pecli.engines.compare import engine_diff
    from pecli.models.families.from_config import plan_of

    config = json.loads((ROOT / "sample_configs" / "hf" / "meta-llama--llama-4-scout-17b-16e-instruct.json").read_text())
    config["text_config"]["layer_types"] = ["full_attention"] * config["text_config"]["num_hidden_layers"]
    found = engine_diff(engine("llama.cpp"), config, "", plan_of(config, "config.json"))
    assert not found.same and any("cannot be sure" in line for line in found.lines())
    assert all(group.logit_scale_unknown for group in found.run.plan.groups if group.options is None)
    measured = next(case for case in CASES if case["id"] == "llama4-no-window")
    assert measured["attn_temp"]["values"] == "set_input stopped by signal 6"
