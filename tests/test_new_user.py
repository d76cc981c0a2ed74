"""What a new user meets (issue 44): a model folder for --hf-config, the library's verify, diff and GGUF
plan, readable reports outside a notebook, the YAML did-you-mean."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_library_encode import hf_cos_sin  # HF's RoPE caches, written out once

ROOT = Path(__file__).parent.parent
LLAMA31 = ROOT / "sample_configs" / "hf" / "meta-llama--llama-3.1-8b.json"


@pytest.fixture
def model_folder(tmp_path) -> Path:
    """A model's folder as from_pretrained takes it: config.json beside (here, no) weights."""
    folder = tmp_path / "Llama-3.1-8B"
    folder.mkdir()
    shutil.copy(LLAMA31, folder / "config.json")
    return folder


@pytest.mark.parametrize("command", [
    ("inspect", "config", "--json"), ("wavelengths", "--json"), ("check", "relativity", "--length", "64", "--json"),
    ("encode", "--length", "4", "--json"), ("compare", "--length", "64", "--json"),
    ("extend", "--target", "262144", "--json"), ("diff", "--hf-config", str(LLAMA31), "--json"),
])
def test_a_model_folder_is_its_config_json(invoke, model_folder, command):
    by_folder = invoke(*command[:1], "--hf-config", model_folder, *command[1:])
    by_file = invoke(*command[:1], "--hf-config", model_folder / "config.json", *command[1:])
    assert by_folder.exit_code == by_file.exit_code == 0, by_folder.stderr
    source = str(model_folder)
    # compared as parsed: JSON writes a non-ASCII letter of the checkout's path as an escape (ü as \u00fc)
    as_file = json.dumps(json.loads(by_file.stdout), ensure_ascii=False).replace(source + "/config.json", source)
    folder, file = json.loads(by_folder.stdout), json.loads(as_file)
    if command[0] == "compare":  # a row is named after the folder, as after a file's stem
        assert [row["label"] for row in folder["rows"]] == ["Llama-3.1-8B"]
        folder["rows"][0]["label"] = file["rows"][0]["label"]
    assert folder == file


def test_a_folder_without_config_json_is_one_line(invoke, tmp_path):
    result = invoke("wavelengths", "--hf-config", tmp_path)
    assert result.exit_code == 2
    assert result.stderr.strip() == f"pecli: error: hf_config: {tmp_path} is a folder without a config.json; give the model's folder or its config.json"


def test_the_library_reads_a_model_folder(model_folder):
    import pecli

    assert pecli.model_plan(model_folder).single.options == pecli.model_plan(LLAMA31).single.options
    assert pecli.model_plan(str(model_folder)).single.options["base"] == 500000.0


def test_the_library_reads_a_gguf_plan_and_diffs_it(tmp_path):
    pytest.importorskip("gguf")
    import pecli
    from gguf_models import convert

    good, config = convert(tmp_path, "qwen25")
    plan = pecli.model_plan(good)
    assert plan.single.options["base"] == config["rope_theta"] == 1e6  # read from rope.freq_base
    assert pecli.diff(config, good).same
    # a converter that forgot the YaRN keys: the GGUF's pairs turn at the unscaled θ_i
    bad, _ = convert(tmp_path, "qwen25", bug="yarn_missing")
    found = pecli.diff(config, bad)
    assert not found.same and found.candidate_name == "gguf" and found.reference_name == "hf"
    assert [d.what for d in found.differences] == ["frequencies", "attention factor"], found.lines()
    assert found.differences[0].reference_key == "rope_scaling" and found.lines()[0].startswith("layers 0–27: frequencies")
    # two configs: new against old
    other = pecli.diff(config, dict(config, rope_theta=5e5))
    assert (other.candidate_name, other.reference_name) == ("new", "old")
    assert [(d.what, d.candidate_value, d.reference_value) for d in other.differences] == [("base", 5e5, 1e6)]
    assert repr(found).startswith("<PlanDiff: gguf ") and repr(found).count("\n") == 2  # a line per difference


def test_the_library_verifies_arrays_and_names_the_bug():
    import numpy as np

    import pecli

    rope = pecli.build_scheme("rope", {"dim": 16, "base": 10000})
    cos, sin = (a.astype(np.float32) for a in hf_cos_sin(np.arange(64), 16))
    assert pecli.verify(rope, cos=cos, sin=sin).match
    # a base of 100,000 where the model says 10,000: named "base"
    wrong_cos, wrong_sin = (a.astype(np.float32) for a in hf_cos_sin(np.arange(64), 16, base=100000.0))
    report = pecli.verify(rope, cos=wrong_cos, sin=wrong_sin)
    assert not report.match and [d.code for d in report.diagnosis] == ["base"]
    assert pecli.verify(rope, np.arange(64), cos=cos, sin=sin).match


def test_the_library_verify_reads_npy_files(tmp_path):
    import numpy as np

    import pecli

    rope = pecli.build_scheme("rope", {"dim": 8})
    cos, sin = hf_cos_sin(np.arange(32), 8)
    np.save(tmp_path / "cos.npy", cos)
    np.save(tmp_path / "sin.npy", sin)
    assert pecli.verify(rope, cos=tmp_path / "cos.npy", sin=str(tmp_path / "sin.npy")).match
    with pytest.raises(TypeError, match="scheme object"):
        pecli.verify("rope", cos=cos, sin=sin)


def test_extension_report_takes_a_path_as_model_plan_does(model_folder):
    import pecli

    by_path = pecli.extension_report(LLAMA31, 262144)
    by_folder = pecli.extension_report(model_folder, 262144)
    by_mapping = pecli.extension_report(json.loads(LLAMA31.read_text()), 262144)
    assert [c.method for c in by_path.candidates] == [c.method for c in by_mapping.candidates] == \
        [c.method for c in by_folder.candidates]


def test_results_print_as_short_summaries_outside_a_notebook():
    import pecli

    report = pecli.check("rope", "all", length=256)
    text = repr(report)
    assert str(report) == text and len(text) < 2000 and text.count("\n") < 20
    assert text.startswith("<CheckReport: rope (rotary), L = 256:")
    assert all(r.property in text for r in report)  # a line per property
    plan = repr(pecli.model_plan(ROOT / "sample_configs" / "hf" / "google--gemma-3-27b-it.json"))
    assert "sliding_attention" in plan and "full_attention" in plan and len(plan) < 1000
    assert "PositionPlan(" not in plan


def test_a_yaml_key_typo_gets_a_did_you_mean_and_the_aliases_are_listed(invoke, tmp_path):
    config = tmp_path / "rope.yaml"
    config.write_text("scheme: rope\nrope_thetta: 500000\ndim: 64\n")
    result = invoke("encode", "--config", config, "--length", "4")
    assert result.exit_code == 2
    line = result.stderr.strip()
    assert line.startswith("pecli: error: rope_thetta: unknown key for scheme 'rope'; did you mean rope_theta?")
    assert "base (or rope_theta)" in line and "dim (or head_dim)" in line and "rope_scaling (or rope_parameters)" in line
    assert line.count("\n") == 0
    assert invoke("encode", "--scheme", "rope", "--set", "rope_theta=5e5", "--length", "4", "-q").exit_code == 0
