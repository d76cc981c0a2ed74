"""Distinguishability and composability on grids (rope-nd, sinusoidal-nd) and M-RoPE sequences.

Expected values are worked out by hand from the axial rule of pecli/schemes/axial.py's docstring
(``θ_j = base^(−2j/d_a)`` per axis, pair j of axis a turning by ``c_a θ_j``): with unit (cos, sin)
pairs, the step along axis a is ``sqrt(Σ_{pairs j on a} |e^{iθ_j} − 1|²) = sqrt(Σ 2(1 − cos θ_j))``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

from pecli.analysis.options import CheckOptions
from pecli.analysis.registry import run_checks
from pecli.config import build_scheme, resolve
from pecli.errors import PositionError
from pecli.schemes.base import AdditiveScheme
from pecli.schemes.positions import grid_cells

HF = "sample_configs/hf/qwen--qwen2-vl-7b-instruct-gptq-int8.json"


def step(*thetas: float) -> float:
    """``sqrt(Σ 2(1 − cos θ_j))``: how far a set of unit pairs moves when each turns by its θ_j
    (written ``4 sin²(θ/2)``, without the cancellation of ``1 − cos θ`` at small θ)."""
    return math.sqrt(sum(4 * math.sin(theta / 2) ** 2 for theta in thetas))


def check(scheme, prop: str):
    (result,) = run_checks(scheme, prop)
    return result


# -- distinguishability -----------------------------------------------------------------------------------
def test_rope_nd_steps_along_each_axis_by_hand():
    # dim 8 on 4 x 4, base 100: 4 components per axis, θ_j = 100^(−2j/4) = 1, 0.1 on h and on w
    result = check(build_scheme("rope-nd", {"dim": 8, "base": 100, "grid": [4, 4]}), "distinguishability")
    expected = step(1.0, 0.1)  # 0.96405…
    assert result.verdict == "pass", result.reason
    for axis in ("h", "w"):
        assert result.figures["axis_min_step"][axis] == pytest.approx(expected, abs=1e-12)
        assert result.figures["axis_max_step"][axis] == pytest.approx(expected, abs=1e-12)
    assert result.figures["min_step"] == pytest.approx(expected, abs=1e-12)
    assert result.figures["step_ratio"] == pytest.approx(1.0, abs=1e-12)
    assert result.figures["local_share"] == 1.0


def test_uneven_axis_dims_give_each_axis_its_own_step():
    # axis_dims 2, 6: h has one pair (θ = 1); w three, θ_j = 100^(−2j/6) = 1, 0.215443…, 0.0464158…
    scheme = build_scheme("rope-nd", {"dim": 8, "base": 100, "grid": [4, 5], "axis_dims": [2, 6]})
    result = check(scheme, "distinguishability")
    assert result.figures["axis_min_step"]["h"] == pytest.approx(step(1.0), abs=1e-12)
    assert result.figures["axis_min_step"]["w"] == pytest.approx(step(1.0, 0.2154434690031884, 0.046415888336127795), abs=1e-12)
    # h's step is the smaller: a pair of cells one apart along h (every such pair has that step, in exact
    # arithmetic; which one is smallest in float64 depends on NumPy's sin and cos to the last bit)
    (h0, w0), (h1, w1) = result.figures["min_step_pair"]
    assert (abs(h1 - h0), w1 - w0) == (1, 0)


def test_wrapping_frequencies_make_far_cells_nearest():
    # dim 4: one pair per axis at θ = 1, so f(Δ)² = 2(1 − cos Δh) + 2(1 − cos Δw). The neighbour step²
    # is 2(1 − cos 1) = 0.919; offsets at or below it other than ±e_a have |Δh|, |Δw| in {0, 6, 7}
    # (not both 7: 0.98): on an 8 x 8 grid only the cells that cannot move 6 along either axis
    # (h, w in 2 … 5) are local, 16 of 64. The exact pass and the all-pairs scan agree.
    scheme = build_scheme("rope-nd", {"dim": 4, "grid": [8, 8]})
    exact = check(scheme, "distinguishability")
    (scanned,) = run_checks(scheme, "distinguishability", CheckOptions(samples=64))  # every cell as a query
    assert exact.figures["local_share"] == scanned.figures["local_share"] == 0.25
    assert exact.verdict == "fail" and exact.figures["non_local_example"] == [[0, 0], [0, 6]]
    assert not exact.sampled and "exact" in exact.notes[0]


def test_added_sinusoids_are_symmetric_so_not_local():
    # PE(h) + PE(w): cell (0, 1) and (1, 0) have one encoding, each the other's nearest cell
    result = check(build_scheme("sinusoidal-nd", {"dim": 8, "grid": [4, 4], "combine": "add"}), "distinguishability")
    assert result.verdict == "fail"
    assert result.figures["non_local_example"] == [[0, 1], [1, 0]]


def test_qwen2_vl_w_axis_steps_slowest():
    # Qwen2-VL: θ_i = 1e6^(−2i/128); mrope_section 16, 24, 24 gives h pairs 16 … 39, w pairs 40 … 63
    scheme = resolve({"hf_config": HF, "sequence": "text:3,image:1x8x12,text:2"}).scheme
    result = check(scheme, "distinguishability")
    theta = [1e6 ** (-2 * i / 128) for i in range(64)]
    assert result.figures["axis_min_step"]["h"] == pytest.approx(step(*theta[16:40]), rel=1e-9)
    # 3.0e-4, a difference of rows of norm 8: measured to about 1e-12 absolute
    assert result.figures["axis_min_step"]["w"] == pytest.approx(step(*theta[40:64]), rel=1e-7)
    assert "t" not in result.figures["axis_min_step"]  # one image: every patch has the same t
    assert result.verdict == "pass", result.reason
    assert any("text tokens" in note for note in result.notes)


# -- composability -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("params", [
    {"dim": 8, "base": 100, "grid": [4, 4]},
    {"dim": 12, "grid": [3, 4, 5]},
])
def test_rope_nd_is_composable_along_every_axis_and_the_diagonal(params):
    result = check(build_scheme("rope-nd", params), "composability")
    assert result.verdict == "pass", result.reason
    axes = set(result.figures["axis_residual"])
    assert axes == {*build_scheme("rope-nd", params).axis_names, "diagonal"}
    assert max(result.figures["axis_residual"].values()) <= 1e-12
    assert result.figures["max_rotation_distance"] <= 1e-10  # the map is each pair's own axis rotation
    offsets = [row["offset"] for row in result.table]
    assert "(1, 1)" in offsets or "(1, 1, 1)" in offsets


def test_sinusoidal_nd_concat_composes_and_add_only_diagonally():
    concat = check(build_scheme("sinusoidal-nd", {"dim": 16, "grid": [6, 6]}), "composability")
    assert concat.verdict == "pass", concat.reason
    # add: E(h, w) = E(w, h) while E(h + k, w) ≠ E(w + k, h): no map along an axis; the diagonal
    # shift is R_k (PE(h) + PE(w)), one rotation
    added = check(build_scheme("sinusoidal-nd", {"dim": 16, "grid": [6, 6], "combine": "add"}), "composability")
    assert added.verdict == "fail"
    assert added.figures["axis_residual"]["diagonal"] <= 1e-10
    assert min(added.figures["axis_residual"]["h"], added.figures["axis_residual"]["w"]) > 1e-3


@dataclass(frozen=True)
class CellTable(AdditiveScheme):
    """A learned-like table over a 6 x 6 grid's cells (seeded), or with ``product`` a value depending on h·w."""

    name: ClassVar[str] = "cell-table"
    summary: ClassVar[str] = "a table over cells"
    has_cells: ClassVar[bool] = True
    position_rank: ClassVar[int] = 2
    axis_names: ClassVar[tuple[str, ...]] = ("h", "w")
    product: bool = False

    @property
    def width(self) -> int:
        return 4

    def cells(self):
        return grid_cells((6, 6))

    def check_positions(self, positions):
        if np.any(np.asarray(positions) > 5):
            raise PositionError("past the table")

    def encode(self, positions):
        p = np.asarray(positions, dtype=np.int64)
        if self.product:
            angle = (p[:, 0] * p[:, 1])[:, None] * np.array([0.3, 0.05])
            return np.concatenate([np.cos(angle), np.sin(angle)], axis=1)
        return np.random.default_rng(0).normal(size=(36, 4))[p[:, 0] * 6 + p[:, 1]]


@pytest.mark.parametrize("product", [False, True])
def test_tables_over_cells_are_not_composable(product):
    result = check(CellTable(product=product), "composability")
    assert result.verdict == "fail"
    assert result.figures["axis_residual"]["h"] > 1e-3 and result.figures["axis_residual"]["w"] > 1e-3


def test_mrope_shifts_along_its_ids_and_the_text_diagonal():
    scheme = build_scheme("mrope", {"dim": 16, "mrope_section": [2, 3, 3], "sequence": "text:3,image:1x4x6,video:2x4x4,text:2"})
    result = check(scheme, "composability")
    assert result.verdict == "pass", result.reason
    assert set(result.figures["axis_residual"]) == {"t", "h", "w", "diagonal"}


# -- the CLI ---------------------------------------------------------------------------------------------------
def test_check_composability_on_a_grid_exits_0(invoke):
    result = invoke("check", "composability", "--scheme", "rope-nd", "--grid", "4x4")
    assert result.exit_code == 0, result.output
    assert "E(c + Δ) ≈ M_Δ E(c) per offset Δ" in result.stdout
    far = invoke("check", "composability", "--scheme", "rope-nd", "--grid", "4x4", "--shifts", "4")
    assert far.exit_code == 2 and "shift 4 fits no axis of the 4 x 4 grid" in far.stderr


def test_check_all_on_a_grid_gives_the_verdicts(invoke):
    result = invoke("check", "all", "--scheme", "rope-nd", "--dim", "8", "--grid", "4x4", "--json")
    assert result.exit_code == 0, result.output
    verdicts = {r["property"]: r["verdict"] for r in json.loads(result.stdout)["results"]}
    assert verdicts["distinguishability"] == verdicts["composability"] == "pass"
    assert verdicts["extrapolation"] == "warn"  # trained on the default 2 x 2 (tests/test_grid_extrapolation.py)


def test_compare_measures_both_on_an_nd_row(invoke):
    result = invoke("compare", "--schemes", "rope,rope-nd", "--dim", "8", "--grid", "3x3", "--length", "16", "--json")
    assert result.exit_code == 0, result.output
    rows = {row["label"]: row["results"] for row in json.loads(result.stdout)["rows"]}
    assert rows["rope-nd"]["distinguishability"]["verdict"] == "pass"
    assert rows["rope-nd"]["composability"]["verdict"] == "pass"


def test_a_text_only_sequence_has_no_axis_step():
    # text tokens are (p, p, p): no two are neighbours along one axis, each is one diagonal step on
    results = run_checks(build_scheme("mrope", {"dim": 8, "sequence": "text:5"}), ["distinguishability", "composability"])
    distinct, compose = results
    assert distinct.verdict == "n/a" and "no two cells are next to each other" in distinct.reason
    assert compose.verdict == "pass" and set(compose.figures["axis_residual"]) == {"diagonal"}
