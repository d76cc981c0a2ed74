"""The options of ``pecli check`` are declared once (the fields of CheckOptions), and what each command
accepts is derived from the analyses' records; ``layout`` is a record like the others.

Known values: composability of RoPE at shift k is exact (E_{p+k} = R_k E_p, a rotation by kθ_i in each
pair), so the fitted residual is at rounding level for any whole k; a record added in a test reads the
option it names and nothing else.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from pecli.analysis.options import CheckOptions
from pecli.analysis.registry import ANALYSES, AnalysisInfo, all_names, properties
from pecli.analysis.result import PropertyResult
from pecli.analysis.options import CHECK_PANEL, check_options, check_parameters, reads
from pecli.errors import ConfigError

ROPE = ("--scheme", "rope", "--dim", "8", "--length", "32")


def one_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# -- one declaration -------------------------------------------------------------------------------------
def test_every_user_option_of_checkoptions_is_one_declaration_shared_by_the_commands():
    from pecli.checks import SETTINGS
    from pecli.cli.compare import SETTINGS as COMPARE
    from pecli.sweeps import check_settings

    declared = check_parameters()
    fields = [f.name for f in dataclasses.fields(CheckOptions)]
    assert set(fields) - set(declared) == {"length", "query_scale"}  # a run key, and the model's factor
    assert all(p.group == CHECK_PANEL for p in declared.values())
    assert all(a is b for a, b in zip(SETTINGS, declared.values())) and len(SETTINGS) == len(declared)
    assert all(any(s is declared[name] for s in check_settings()) for name in declared)
    for name in ("dtype", "train_length", "train_grid", "strict"):  # compare's are check's, not a copy
        assert sum(s is declared[name] for s in COMPARE) == 1
    for info in ANALYSES.values():  # a record reads declarations, never a free-standing copy
        assert all(option is declared[option.name] for option in info.options)


def test_reads_refuses_an_option_that_is_not_declared():
    with pytest.raises(TypeError, match="names: shift is not a check option"):
        reads("shift")


def test_options_are_built_from_their_declared_defaults():
    built = check_options({"tol": None, "strict": None, "shifts": (1, 3), "unrelated": 5}, length=7)
    assert built == CheckOptions(length=7, shifts=(1, 3))
    assert built.tol == 0.0 and built.strict is False


# -- shifts: whole numbers ≥ 1 in the one declaration ------------------------------------------------------
def test_shifts_are_whole_numbers_in_the_declaration():
    shifts = check_parameters()["shifts"]
    assert shifts.coerce("1,2.0") == (1, 2) and all(type(k) is int for k in shifts.coerce([4.0]))
    for bad in ("1.5", "0", [2, 2.5]):
        with pytest.raises(ConfigError, match="^shifts: "):
            shifts.coerce(bad)


@pytest.mark.parametrize("given", ["1.5", "0", "-2"])
def test_a_bad_shift_is_one_line_naming_shifts(invoke, given):
    result = invoke("check", "composability", *ROPE, "--shifts", given)
    assert result.exit_code == 2 and one_line(result).startswith("pecli: error: shifts: ")


def test_a_bad_shift_in_yaml_is_one_line_naming_shifts(invoke, tmp_path):
    (tmp_path / "c.yaml").write_text("scheme: rope\ndim: 8\nlength: 32\nshifts: [1, 2.5]\n")
    result = invoke("check", "composability", "--config", tmp_path / "c.yaml")
    assert result.exit_code == 2 and one_line(result) == "pecli: error: shifts: expected an integer, got 2.5"


def test_whole_shifts_given_as_floats_measure_the_same(invoke):
    result = invoke("check", "composability", *ROPE, "--shifts", "2.0,5", "--json")
    figures = json.loads(result.stdout)["results"][0]["figures"]
    assert result.exit_code == 0 and figures["shifts"] == [2, 5]
    assert figures["max_residual"] < 1e-12  # a rotation exactly: rounding only


# -- what a command accepts comes from the records ---------------------------------------------------------
def _tolerant(scheme, options) -> PropertyResult:
    """A toy property that reads --tol: passes when tol is at most 1."""
    return PropertyResult("tolerant", "pass" if options.tol <= 1 else "fail", f"tol {options.tol:g}",
                          {"tol": options.tol}, "tol")


@pytest.fixture
def tolerant(monkeypatch):
    monkeypatch.setitem(ANALYSES, "tolerant", AnalysisInfo("tolerant", "reads tol", _tolerant, reads("tol"), any_rank=True))


def test_a_new_record_reads_the_options_it_names(tolerant, invoke):
    accepted = invoke("check", "tolerant", *ROPE, "--tol", "2", "--json")
    assert accepted.exit_code == 1 and json.loads(accepted.stdout)["results"][0]["figures"]["tol"] == 2.0
    refused = invoke("check", "tolerant", *ROPE, "--samples", "4")
    assert refused.exit_code == 2
    assert one_line(refused).endswith("--samples does not apply to tolerant (it applies to uniqueness, distinguishability, relativity)")
    listed = invoke("check", "relativity", *ROPE, "--tol", "0.5")
    assert one_line(listed).endswith("--tol does not apply to relativity (it applies to uniqueness, tolerant)")


# -- layout: a registered property of weights --------------------------------------------------------------
def test_layout_is_a_record_asked_for_by_name_only():
    layout = ANALYSES["layout"]
    assert not layout.in_all and layout.option_names == ("weights",)
    assert "layout" not in all_names() and properties()[-2:] == ("all", "layout")


def test_layout_reads_no_other_check_option(invoke):
    result = invoke("check", "layout", *ROPE, "--weights", "model.safetensors", "--tol", "0.1")
    assert result.exit_code == 2 and one_line(result).endswith("--tol does not apply to layout (it applies to uniqueness)")


def test_weights_with_another_property_name_layout_and_the_learned_table(invoke):
    result = invoke("check", "uniqueness", *ROPE, "--weights", "model.safetensors")
    assert one_line(result) == ("pecli: error: weights: --weights does not apply to uniqueness (it applies to layout; "
                                "scheme learned takes it as a parameter of its own)")


def test_layout_needs_a_rotary_scheme_before_reading_weights(invoke):
    result = invoke("check", "layout", "--scheme", "alibi", "--weights", "missing.safetensors")
    assert result.exit_code == 2 and "check layout needs a scheme that rotates queries and keys" in one_line(result)
    missing = invoke("check", "layout", *ROPE)
    assert one_line(missing) == "pecli: error: weights: check layout reads the q/k projections of a checkpoint: give its file (weights=, --weights FILE)"


def test_the_library_runs_layout_through_the_same_record(tmp_path):
    pytest.importorskip("safetensors")
    from safetensors.numpy import save_file

    import pecli

    # one layer, two heads of 4 rotated components, pairs (0, 2) and (1, 3) in the half layout, each of
    # norm 1: pair 0's rows hold energies 0.9 and 0.1 (an orientation in its plane), pair 1's 0.5 and 0.5.
    # Read in halves both pairs have norm 1 (roughness 0); read in neighbours (0, 1) and (2, 3) they have
    # √1.4 and √0.6: roughness (½ ln(1.4/0.6))², the same for every head, q and k.
    energies = (0.9, 0.5, 0.1, 0.5)
    q = np.zeros((8, 8), np.float32)
    for head in range(2):
        for row, energy in enumerate(energies):
            q[4 * head + row, head + row] = np.sqrt(energy)
    save_file({"model.layers.0.self_attn.q_proj.weight": q, "model.layers.0.self_attn.k_proj.weight": q},
              str(tmp_path / "m.safetensors"))
    rope = pecli.build_scheme("rope", {"dim": 4, "layout": "half"})
    report = pecli.check(rope, "layout", weights=str(tmp_path / "m.safetensors"))
    (result,) = report
    assert result.property == "layout" and report.verdict == "pass" and result.figures["found_layout"] == "half"
    assert result.figures["roughness_half"] == pytest.approx(0.0, abs=1e-12)
    assert result.figures["roughness_interleaved"] == pytest.approx((0.5 * np.log(1.4 / 0.6)) ** 2, rel=1e-6)
