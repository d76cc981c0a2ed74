"""``pecli compare`` end to end."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from pecli.cli import app

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}
ROOT = Path(__file__).resolve().parents[1]


def run(*args):
    return CliRunner().invoke(app, ["compare", *args], env=ENV)


def test_issue_example_json():
    result = run("--schemes", "sinusoidal,rope,binary,alibi", "--length", "256", "--dim", "16", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert set(document) == {"length", "properties", "rows", "footnotes"}
    rows = {row["scheme"]: row for row in document["rows"]}
    assert list(rows) == ["sinusoidal", "rope", "binary", "alibi"]
    assert {rows[n]["acts_on"] for n in rows} == {"input", "q,k", "logits"}
    assert rows["binary"]["results"]["distinguishability"]["verdict"] == "fail"
    assert rows["binary"]["results"]["extrapolation"]["verdict"] == "fail"
    assert rows["alibi"]["results"]["extrapolation"]["verdict"] == "pass"
    assert rows["alibi"]["parameter_count"] == 0
    # rope, dim 16, base 10000: largest wavelength 2π·10000^(14/16) = 2π·3162.28 = 19869.2
    assert abs(rows["rope"]["max_wavelength"] - 2 * 3.141592653589793 * 10000 ** (14 / 16)) < 1e-6
    assert rows["binary"]["max_wavelength"] is None


def test_footnotes_where_measurement_disagrees_with_a_seed():
    document = json.loads(run("--schemes", "sinusoidal,rope", "--length", "128", "--dim", "16", "--json").output)
    notes = {(n["scheme"], n["property"]) for n in document["footnotes"]}
    # seed 002 says fixed sinusoids cannot adapt to long sequences: measured defined, bounded, unique
    assert ("sinusoidal", "extrapolation") in notes
    # seeds 002/003 say RoPE extrapolates well: measured, low-frequency pairs reach unseen angles (warning)
    assert ("rope", "extrapolation") in notes


def test_no_options_table_lists_base_schemes():
    result = run("--length", "64")
    assert result.exit_code == 0, result.output
    for name in ("integer", "binary", "sinusoidal", "learned", "relative", "t5", "alibi", "rope"):
        assert name in result.output


def test_sample_config_runs():
    result = run("--config", str(ROOT / "sample_configs" / "compare.yaml"), "--length", "128", "--json")
    assert result.exit_code == 0, result.output
    labels = [row["label"] for row in json.loads(result.output)["rows"]]
    assert labels[1].startswith("rope(") and "500000" in labels[1]


def test_bad_scheme_exit_2(tmp_path):
    assert run("--schemes", "sinusoidal,nope").exit_code == 2
    path = tmp_path / "c.yaml"
    path.write_text("colour: blue\n")
    assert run("--config", str(path)).exit_code == 2


def test_hf_config_rows_and_set_override():
    llama = ROOT / "sample_configs" / "hf" / "meta-llama--llama-3.1-8b.json"
    result = run("--hf-config", str(llama), "--set", "length=96", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["length"] == 96
    (row,) = document["rows"]  # --hf-config without --schemes compares the model alone
    assert row["label"] == "meta-llama--llama-3.1-8b"
    assert (row["params"]["base"], row["params"]["scaling"], row["params"]["factor"]) == (500000.0, "llama3", 8.0)
    assert run("--set", "colour=blue").exit_code == 2


def test_hf_config_as_a_yaml_key(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(f"hf_config: {ROOT / 'sample_configs' / 'hf' / 'mistralai--mistral-7b-instruct-v0.3.json'}\nlength: 64\n")
    document = json.loads(run("--config", str(path), "--json").output)
    (row,) = document["rows"]
    assert row["label"] == "mistralai--mistral-7b-instruct-v0.3" and row["params"]["base"] == 1e6


def test_null_in_compare_settings_is_the_default():
    document = json.loads(run("--schemes", "alibi", "--set", "length=null", "--set", "strict=null", "--json").output)
    assert document["length"] == 512
