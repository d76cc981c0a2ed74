"""Extrapolation on a grid: trained on a smaller grid of cells, tested on the scheme's own.

Every expected count below is worked out by hand from the axial rule (Heo et al. 2024's RoPE-Axial):
rope-nd with dim 8 gives each of two axes d_a = 4 components, so its ladder is
θ_j = base^(−2j/d_a) = 100^(−j/2): θ_0 = 1, θ_1 = 0.1 at base 100. Training along axis a saw angles
p·θ_j for p < T_a, and counts as seen up to T_a·θ_j (the 1-D rule); a pair is unseen when it never
turned fully in training (T_a·θ_j < 2π) and the test reaches (G_a − 1)·θ_j > T_a·θ_j.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from pecli.analysis.options import CheckOptions
from pecli.analysis.registry import run_checks
from pecli.analysis.extrapolation_grid import default_train_grid, new_cell_collisions
from pecli.config import build_scheme
from pecli.errors import ConfigError

THETA = [1.0, 0.1]  # 100^(−2j/4), j = 0, 1: each axis's ladder at dim 8, base 100


def extrapolation(name: str, grid, train_grid, **params):
    scheme = build_scheme(name, {"dim": 8, "base": 100, "grid": list(grid), **params})
    (result,) = run_checks(scheme, "extrapolation", CheckOptions(train_grid=train_grid))
    return result


def test_the_ladder_is_the_axial_rule():
    scheme = build_scheme("rope-nd", {"dim": 8, "base": 100, "grid": [4, 4]})
    h, w = scheme.axis_frequencies()
    assert h.tolist() == pytest.approx(THETA) and w.tolist() == pytest.approx(THETA)


def test_every_pair_unseen_from_2x2_to_4x4():
    # T = 2: seen up to 2·θ = 2, 0.2 (both < 2π); the test reaches 3·θ = 3, 0.3: both pairs of both axes
    result = extrapolation("rope-nd", (4, 4), (2, 2))
    assert result.verdict == "warn"
    figures = result.figures
    assert figures["train_grid"] == [2, 2] and figures["grid"] == [4, 4]
    assert figures["axis_unseen_pairs"] == {"h": 2, "w": 2}
    assert figures["first_unseen"] == {"h": 0, "w": 0}
    assert figures["unseen_angle_pairs"] == 4 and result.key_figure == "unseen_angle_pairs"
    assert figures["largest_angle_overshoot"] == pytest.approx(3 / 2)
    assert figures["new_cells"] == 16 - 4 and figures["colliding_pairs"] == 0


def test_a_pair_that_turned_in_training_has_seen_every_angle():
    # h: T = 7, G = 10. θ_0 = 1: 7·1 ≥ 2π, seen; θ_1 = 0.1: 0.7 < 2π and 9·0.1 = 0.9 > 0.7, unseen.
    # w: T = G = 4, the test reaches 3·θ < 4·θ: nothing unseen.
    result = extrapolation("rope-nd", (10, 4), (7, 4))
    assert result.verdict == "warn"
    assert result.figures["axis_unseen_pairs"] == {"h": 1, "w": 0}
    assert result.figures["first_unseen"] == {"h": 1, "w": None}
    assert result.figures["largest_angle_overshoot"] == pytest.approx(0.9 / 0.7)
    assert "along h, 1 of 2 pairs" in result.reason and "along w" not in result.reason


def test_one_more_row_stays_within_the_angles_seen():
    # h: T = 9, G = 10: θ_0 turned fully (9 ≥ 2π); θ_1 reaches 9·0.1 = 0.9, exactly T·θ_1: seen
    result = extrapolation("rope-nd", (10, 4), (9, 4))
    assert result.verdict == "pass"
    assert result.figures["unseen_angle_pairs"] == 0 and result.figures["first_unseen"] == {"h": None, "w": None}


def test_a_video_grid_per_axis():
    # dim 12 on 3 axes: d_a = 4 each, the same ladder. Default training grid of 2 x 4 x 4: 1 x 2 x 2.
    # t: T = 1, G = 2 reaches 1·θ = T·θ: seen; h and w as 2 → 4: both pairs unseen.
    result = extrapolation("rope-nd", (2, 4, 4), None, dim=12)
    assert result.figures["train_grid"] == [1, 2, 2]
    assert result.figures["axis_unseen_pairs"] == {"t": 0, "h": 2, "w": 2}
    assert result.verdict == "warn"


def test_sinusoidal_nd_per_axis_and_new_collisions():
    # concat: each axis's encoding has width 4, ω = 1, 0.1: as rope-nd
    concat = extrapolation("sinusoidal-nd", (4, 4), (2, 2))
    assert concat.verdict == "warn" and concat.figures["axis_unseen_pairs"] == {"h": 2, "w": 2}
    # add: PE(h) + PE(w) is symmetric, cells (h, w) and (w, h) coincide: 6 pairs off the diagonal of
    # 4 x 4, of which only (0, 1)–(1, 0) lies inside the 2 x 2 training grid: 5 involve a new cell
    added = extrapolation("sinusoidal-nd", (4, 4), (2, 2), combine="add")
    assert added.verdict == "fail" and added.key_figure == "colliding_pairs"
    assert added.figures["colliding_pairs"] == 5
    assert "first cells (0, 2) and (2, 0)" in added.reason


def test_nothing_to_extrapolate_when_the_training_grid_is_the_grid():
    result = extrapolation("rope-nd", (4, 4), (4, 4))
    assert result.verdict == "n/a" and result.reason.startswith("nothing to extrapolate")


def test_default_training_grid_halves_each_side():
    assert default_train_grid((16, 12)) == (8, 6)
    assert default_train_grid((1, 5)) == (1, 2)
    assert default_train_grid((3, 3, 2)) == (1, 1, 1)


@pytest.mark.parametrize("train_grid, words", [
    ((2, 2, 2), "2x2x2 has 3 axes but the grid 4x4 has 2"),
    ((2, 5), "larger than the test grid 4x4 along w"),
])
def test_training_grid_must_fit_the_grid(train_grid, words):
    with pytest.raises(ConfigError, match=words):
        extrapolation("rope-nd", (4, 4), train_grid)


def test_new_cell_collisions_leave_out_those_among_trained_cells():
    a, b, c = [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]
    rows = np.array([a, b, a, c, b])
    trained = np.array([True, True, True, False, False])
    found = new_cell_collisions(rows, trained)  # rows 0 and 2 are both trained; rows 1 and 4: one new
    assert found.pairs == 1 and found.first == (1, 4)


# -- the CLI ---------------------------------------------------------------------------------------------------
def test_check_extrapolation_on_a_grid_warns(invoke):
    result = invoke("check", "extrapolation", "--scheme", "rope-nd", "--grid", "8x8", "--train-grid", "4x4")
    assert result.exit_code == 0, result.output
    assert "WARN" in result.stdout


def test_a_training_length_on_a_grid_names_the_training_grid(invoke):
    result = invoke("check", "extrapolation", "--scheme", "rope-nd", "--grid", "8x8", "--train-length", "4")
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "--train-grid" in result.stderr
    line = invoke("check", "extrapolation", "--scheme", "rope", "--dim", "8", "--train-grid", "4x4")
    assert line.exit_code == 2 and "--train-length" in line.stderr


def test_check_all_on_a_grid_has_no_n_a(invoke, tmp_path):
    config = tmp_path / "grid.yaml"
    config.write_text("scheme: rope-nd\ndim: 8\nbase: 100\ngrid: [4, 4]\ntrain_grid: [2, 2]\n")
    result = invoke("check", "all", "--config", config, "--json")
    assert result.exit_code == 0, result.output
    results = {r["property"]: r for r in json.loads(result.stdout)["results"]}
    assert not [name for name, r in results.items() if r["verdict"] == "n/a"]
    assert results["extrapolation"]["figures"]["axis_unseen_pairs"] == {"h": 2, "w": 2}
