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


def test_footnotes_where_measurement_disagrees_with_an_article():
    document = json.loads(run("--schemes", "sinusoidal,rope", "--length", "128", "--dim", "16", "--json").output)
    notes = {(n["scheme"], n["property"]) for n in document["footnotes"]}
    # Common-PE says fixed sinusoids cannot adapt to long sequences: measured defined, bounded, unique
    assert ("sinusoidal", "extrapolation") in notes
    # Common-PE and EulerBlind say RoPE extrapolates well: measured, low-frequency pairs reach unseen
    # angles (warning)
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


def test_footnotes_say_what_was_measured_and_what_the_claim_says():
    document = json.loads(run("--schemes", "sinusoidal,rope", "--length", "128", "--dim", "16", "--json").output)
    texts = {(n["scheme"], n["property"]): n["text"] for n in document["footnotes"]}
    sinusoidal = texts[("sinusoidal", "extrapolation")]
    assert "Common-PE" in sinusoidal and "(fixed encoding: cannot adapt to long sequences)" in sinusoidal
    assert "measured WARN" in sinusoidal and "the claim says FAIL" in sinusoidal
    assert "the claim says PASS without reservation" in texts[("rope", "extrapolation")]


def test_no_article_is_called_a_seed():
    from pecli.comparison.claims import ARTICLES, CLAIMS

    result = run("--length", "64")
    assert "seed 0" not in result.output.lower()
    for claim in CLAIMS:
        assert all(label in ARTICLES for label in claim.source.split(", ")), claim
        assert "(" in claim.quote or claim.quote.isascii(), claim  # an English translation next to the original
    texts = [(ROOT / "README.md").read_text(encoding="utf-8")]
    texts += [path.read_text(encoding="utf-8") for path in (ROOT / "docs").rglob("*.md")]
    assert not any("seed 00" in text.lower() or "seeds 00" in text.lower() for text in texts)
    references = (ROOT / "docs" / "references.md").read_text(encoding="utf-8")
    for label in ARTICLES:
        assert f"[{label}]" in references, label  # cited in the References page


def dims(*args):
    document = json.loads(run("--length", "32", "--json", *args).output)
    return {row["label"]: row["params"].get("dim") for row in document["rows"]}


def test_one_dim_for_every_scheme_side_by_side():
    # sinusoidal defaults to d = 512 and rope to 128 on their own; side by side both get one d.
    assert dims("--schemes", "sinusoidal,rope,integer,alibi") == {"sinusoidal": 128, "rope": 128, "integer": 128, "alibi": None}
    assert dims("--schemes", "sinusoidal,rope", "--dim", "16") == {"sinusoidal": 16, "rope": 16}


def test_a_scheme_keeps_the_dim_of_its_own_entry(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("schemes: [sinusoidal, {scheme: rope, dim: 32}]\n")
    assert dims("--config", str(path)) == {"sinusoidal": 128, "rope(dim=32)": 32}
    table = run("--config", str(path), "--length", "32").output
    note = " ".join(table.split())
    assert "d = 128 for every scheme that has a dimension" in note and "own: rope(dim=32)" in note


def test_key_figure_legend_names_each_property_in_column_order():
    table = run("--schemes", "rope,alibi,t5", "--length", "32").output
    legend = table.split("key figures")[1]
    rows = [line.split()[0] for line in legend.splitlines()[1:7]]
    assert rows == ["unique", "distinct", "compose", "relative", "extrap.", "precision"]
    extrapolation = " ".join(legend.split("extrap.")[1].split("precision")[0].split())
    assert extrapolation.index("(rope)") < extrapolation.index("(alibi)") < extrapolation.index("(t5)")


def test_model_rows_break_after_hyphens_not_inside_words():
    from pecli.render.check import row_label

    assert row_label("meta-llama--llama-3.1-8b") == "meta-llama--\nllama-3.1-8b"
    assert row_label("mistralai--mistral-7b-instruct-v0.3") == "mistralai--\nmistral-7b-\ninstruct-v0.3"
    assert row_label("rope(base=500000)") == "rope(base=500000)"
