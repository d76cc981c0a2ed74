"""``pecli check`` end to end: verdicts, exit codes 0/1/2, JSON with stable keys."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from pecli.cli import app

ENV = {"NO_COLOR": "1", "COLUMNS": "100"}
RESULT_KEYS = {"property", "verdict", "passed", "reason", "key_figure", "figures", "table", "warnings", "sampled", "notes"}


def run(*args):
    return CliRunner().invoke(app, ["check", *args], env=ENV)


def test_runs_with_no_options():
    result = run()
    assert result.exit_code == 0, result.output  # sinusoidal, all: passes (extrapolation only warns)
    for name in ("uniqueness", "distinguishability", "composability", "relativity", "extrapolation", "precision"):
        assert name in result.output


@pytest.mark.parametrize("prop", ["uniqueness", "distinguishability", "composability", "relativity", "extrapolation", "precision"])
def test_each_property_runs_with_no_options(prop):
    result = run(prop)
    assert result.exit_code == 0, result.output


def test_binary_distinguishability_exit_1_names_7_to_8():
    result = run("distinguishability", "--scheme", "binary", "--length", "16")
    assert result.exit_code == 1
    assert "positions 7 and 8 differ in 4 of 4 bits" in " ".join(result.output.split())


def test_json_document_and_stable_keys():
    result = run("all", "--scheme", "rope", "--dim", "16", "--length", "64", "--json")
    assert result.exit_code == 0
    document = json.loads(result.output)
    assert set(document) == {"scheme", "kind", "params", "length", "property", "verdict", "passed", "results"}
    assert [r["property"] for r in document["results"]] == [
        "uniqueness", "distinguishability", "composability", "relativity", "extrapolation", "precision"]
    assert all(set(r) == RESULT_KEYS for r in document["results"])
    assert document["verdict"] == "warn" and document["passed"] is True


def test_relativity_table_in_json():
    result = run("relativity", "--dim", "8", "--length", "32", "--json")
    table = json.loads(result.output)["results"][0]["table"]
    # d = 8, Δ = 2: cos 2 + cos 0.2 + cos 0.02 + cos 0.002 = −0.4161468 + 0.9800666 + 0.9998000 + 0.9999980
    row = next(r for r in table if r["distance"] == 2)
    assert row["mean"] == pytest.approx(2.5637178, abs=1e-6)
    assert row["sum_cos"] == pytest.approx(2.5637178, abs=1e-6)


def test_strict_turns_warning_into_failure():
    assert run("extrapolation", "--scheme", "rope", "--dim", "16").exit_code == 0
    assert run("extrapolation", "--scheme", "rope", "--dim", "16", "--strict").exit_code == 1


def test_precision_compute_dtype_bfloat16_fails():
    result = run("precision", "--scheme", "rope", "--dim", "8", "--compute-dtype", "bfloat16", "--json")
    assert result.exit_code == 1
    figures = json.loads(result.output)["results"][0]["figures"]
    assert figures["first_adjacent_collision"] == 257 and figures["case"] == "computed"


def test_config_file_and_set(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("scheme: binary\nlength: 512\ntrain_length: 256\n")
    result = run("extrapolation", "--config", str(path), "--json")
    assert result.exit_code == 1
    figures = json.loads(result.output)["results"][0]["figures"]
    assert figures["first_undefined"] == 256


def test_bad_train_length_exit_2_one_line():
    result = run("extrapolation", "--length", "100", "--train-length", "200")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines() if hasattr(result, "stderr") else result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pecli: error: ")


def test_bad_shift_exit_2():
    result = run("composability", "--shifts", "0")
    assert result.exit_code == 2


def test_unknown_property_usage_error_subprocess():
    done = subprocess.run([sys.executable, "-m", "pecli", "check", "beauty"], capture_output=True, text=True, env={**ENV, "PATH": ""})
    assert done.returncode == 2
    assert done.stderr.startswith("pecli: error: ") and len(done.stderr.strip().splitlines()) == 1


def verdict(*args):
    result = run(*args, "--json")
    document = json.loads(result.stdout)
    return result.exit_code, document["results"][0]


def test_learned_rows_past_training_are_untrained_whatever_the_seed():
    # A table of 1024 rows trained on the first 512 positions: rows 512 … 1023 keep their N(0, 0.02²)
    # initialisation, so the verdict must not depend on how those random values happen to fall.
    for seed in ("0", "3"):
        code, result = verdict("extrapolation", "--scheme", "learned", "--max-length", "1024", "--length", "1024", "--seed", seed)
        assert code == 1 and result["verdict"] == "fail"
        assert "training never updated" in result["reason"]
        assert result["figures"]["untrained_rows"] == 512


def test_binary_bit_never_set_in_training_is_a_warning():
    # 4 bits, trained on 0 … 7: bit 3 is 0 throughout training and 1 for 8 … 15.
    code, result = verdict("extrapolation", "--scheme", "binary", "--bits", "4", "--length", "16", "--train-length", "8")
    assert code == 0 and result["verdict"] == "warn"
    assert "component 3" in result["reason"]
    assert run("extrapolation", "--scheme", "binary", "--bits", "4", "--length", "16", "--train-length", "8", "--strict").exit_code == 1


def test_library_default_fixes_length_derived_parameters_at_the_training_length():
    # Without rebuild, binary built for L = 512 (bits = 9) is judged as trained on T = 256 (bits = 8).
    from pecli import build_scheme
    from pecli.analysis.options import CheckOptions
    from pecli.analysis.registry import run_checks

    (result,) = run_checks(build_scheme("binary", {}, length=512), "extrapolation", CheckOptions(length=512))
    assert result.verdict == "fail"
    assert "position 256 needs 9 bits" in result.reason


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("composability", "--dtype", "bfloat16"), "--dtype does not apply to composability (it applies to uniqueness, precision)"),
        (("relativity", "--shifts", "3"), "--shifts does not apply to relativity (it applies to composability)"),
        (("precision", "--train-length", "10"), "--train-length does not apply to precision (it applies to extrapolation)"),
    ],
)
def test_options_a_property_does_not_read_are_refused(args, message):
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.splitlines()) == 1


def test_quiet_prints_nothing_and_keeps_the_exit_code():
    result = run("distinguishability", "--scheme", "binary", "--length", "16", "--quiet")
    assert result.exit_code == 1 and result.stdout == ""


def test_check_report_is_typed_and_its_dict_is_the_json():
    from pecli import build_scheme
    from pecli.analysis.options import CheckOptions
    from pecli.analysis.registry import check_report
    from pecli.analysis.result import CheckReport

    report = check_report(build_scheme("binary", {}, length=16), ["uniqueness", "extrapolation"], CheckOptions(length=16))
    assert isinstance(report, CheckReport)
    assert [r.property for r in report.results] == ["uniqueness", "extrapolation"]
    assert report.verdict == "fail" and not report.passed  # 8 bits past T = 8 need a fourth bit
    document = report.to_dict()
    assert list(document) == ["scheme", "kind", "params", "length", "property", "verdict", "passed", "results"]
    assert {r["property"]: r["verdict"] for r in document["results"]} == {"uniqueness": "pass", "extrapolation": "fail"}
