"""The rows ``check`` measures are the rows ``encode`` gives: the same bits as :func:`pecli.encode` and
``pecli encode``'s file, within the documented bound of cos and sin of the exact angle, the same
whatever the blocks of the pass."""

from __future__ import annotations

import numpy as np
import pytest

import pecli
from pecli.analysis import structure
from pecli.analysis.encoding_pass import EncodingRows
from pecli.analysis.composability import check_composability
from pecli.analysis.options import CheckOptions
from pecli.analysis.precision import check_precision
from pecli.analysis.registry import run_checks
from pecli.config import build_scheme

#: Schemes whose rows come from angle addition (past position 256), in the layouts and scalings that
#: change how a row is laid out or scaled.
ANGLE_ADDITION = [
    ("rope", {"dim": 16}),
    ("rope", {"dim": 16, "layout": "interleaved", "direction": "negative"}),
    ("rope", {"dim": 16, "partial_rotary_factor": 0.5, "rope_fraction": 0.5}),
    ("rope", {"dim": 16, "scaling": "yarn", "factor": 4.0, "original_max_position": 512}),
    ("sinusoidal", {"dim": 16}),
    ("sinusoidal", {"dim": 16, "layout": "interleaved", "scale": 2.0}),
]


def _small_blocks(monkeypatch, rows: int = 1024) -> None:
    """Blocks of ``rows`` rows of width 16 in the pass (the smallest block is 1024 rows)."""
    monkeypatch.setattr(structure, "CHUNK_BYTES", rows * 8 * 16 * structure.BLOCK_SHARE)
    assert structure.block_rows(16) == rows


def _pass_rows(scheme, length: int) -> np.ndarray:
    return np.concatenate([block.values for block in EncodingRows(scheme, length).blocks()])


@pytest.mark.parametrize(("name", "params"), [*ANGLE_ADDITION, ("rope", {"dim": 16, "xpos": 512})])
def test_the_pass_sees_the_rows_pecli_encode_returns(monkeypatch, name, params):
    _small_blocks(monkeypatch)
    length = 2600  # three blocks of the pass, the last one short; ten anchors of 256
    scheme = build_scheme(name, params, length=length)
    seen = _pass_rows(scheme, length)
    given = pecli.encode(scheme, range(length)).encoding
    np.testing.assert_array_equal(seen, given)
    # what pecli encode writes to its file: the main part of the parts it asks for
    written = scheme.parts(np.arange(length), exact=False, wanted=[scheme.main_key])[0]
    np.testing.assert_array_equal(seen, np.concatenate([block.values for block in written.blocks(700)]))
    # rows encoded again on their own (a collision to verify, an example to name): the same bits
    some = np.array([2599, 0, 255, 256, 1023, 1024, 1500])
    np.testing.assert_array_equal(EncodingRows(scheme, length)[some], seen[some])
    np.testing.assert_array_equal(structure.rows_at(scheme, some), seen[some])


@pytest.mark.parametrize(("name", "params"), ANGLE_ADDITION)
def test_the_rows_are_within_the_bound_of_the_exact_angle(name, params):
    # unit_phasors' bound: each value within 2⁻⁵³·|p·θ| + 2⁻⁵² of cos and sin of the exact angle p·θ
    # (θ the float64 frequency), times the scheme's factor on cos and sin. The reference: cos and sin
    # of p·θ in extended precision (a 64-bit significand: the product of an integer below 2¹¹ and a
    # float64 is exact in it), independent of NumPy's float64 cos and of the angle addition.
    length = 2048
    scheme = build_scheme(name, params, length=length)
    rows = structure.rows_at(scheme, np.arange(length))
    pairs = structure.rotation_pairs(scheme)
    positions = np.arange(length, dtype=np.longdouble)[:, None]
    sign = -1 if params.get("direction") == "negative" else 1
    angles = positions * pairs.inv_freq.astype(np.longdouble)[None, :]
    cos, sin = np.cos(angles), sign * np.sin(angles)
    if pairs.sin_first:
        first, second = sin, cos
    else:
        first, second = cos, sin
    factor = float(pairs.attention_scaling)
    # the bound, then the product by the factor and the reference's own rounding to float64: 2⁻⁵³ each
    bound = factor * (2.0**-53 * np.abs(angles).astype(np.float64) + 2.0**-52 + 2 * 2.0**-53)
    assert np.all(np.abs(rows[:, pairs.first] - factor * first.astype(np.float64)) <= bound)
    assert np.all(np.abs(rows[:, pairs.second] - factor * second.astype(np.float64)) <= bound)
    # below position 256 the angle addition is the direct evaluation, bit for bit
    np.testing.assert_array_equal(rows[:256], scheme.encode(np.arange(256)))


def test_rows_without_angle_addition_are_the_schemes_own():
    # integer rows are p on every component
    integer = build_scheme("integer", {"dim": 3}, length=3000)
    np.testing.assert_array_equal(structure.rows_at(integer, np.arange(3000)), np.repeat(np.arange(3000.0)[:, None], 3, axis=1))


def test_rows_of_rope_with_xpos_are_the_angle_addition_times_the_factors():
    # below 256 the angle addition is the direct evaluation, bit for bit; above, both are within the
    # angle's rounding (2⁻⁵³·p·θ + 2⁻⁵², θ ≤ 1) of the exact values, times xPos's factor (ζ^((p − 300)/512)
    # ≤ 0.28^(−300/512) < 2.2 here), plus the product's own rounding
    xpos = build_scheme("rope", {"dim": 8, "xpos": 512}, length=600)
    rows, direct = structure.rows_at(xpos, np.arange(600)), xpos.encode(np.arange(600))
    np.testing.assert_array_equal(rows[:256], direct[:256])
    assert not np.array_equal(rows, direct)
    assert np.abs(rows - direct).max() <= 2.2 * 2 * (2.0**-53 * 600 + 2.0**-52) + 2 * 2.2 * 2.0**-53


@pytest.mark.parametrize("length", [1023, 1024, 1025, 2048, 2049, 3073])
def test_verdicts_and_figures_do_not_depend_on_the_blocks(monkeypatch, length):
    # rope over positions that end just before, at and after a block of 1024 rows: the pass in blocks
    # of 1024 rows and in one block gives the same figures; every property passes (rope at d = 16,
    # base 10⁴: distinct rows, relative scores, no collisions in bfloat16 at these lengths) but
    # extrapolation, which warns: trained on the first half (the default), the slowest pairs turn
    # past the angles the first half reached
    scheme = build_scheme("rope", {"dim": 16}, length=length)
    options = CheckOptions(length=length)

    def figures() -> list[tuple[str, str, dict]]:
        structure.forget_vectors()
        return [(r.property, r.verdict, r.figures) for r in run_checks(scheme, "all", options)]

    _small_blocks(monkeypatch, 1 << 20)
    whole = figures()
    _small_blocks(monkeypatch)
    blocks = figures()
    assert [verdict for _, verdict, _ in blocks] == ["pass"] * 4 + ["warn", "pass"]
    assert blocks == whole


def test_a_lagging_second_lane_gives_the_figures_of_one(monkeypatch):
    # eleven blocks of 1024 rows: on one thread, and on two with the second thread up to two blocks
    # behind (it waits at the third), every accumulator takes every block in order: the same figures
    from pecli.analysis import encoding_pass

    length = 11000
    scheme = build_scheme("rope", {"dim": 16}, length=length)
    options = CheckOptions(length=length)
    _small_blocks(monkeypatch)
    threads = []
    two = encoding_pass.EncodingRows._measure_on_two_threads
    monkeypatch.setattr(encoding_pass.EncodingRows, "_measure_on_two_threads",
                        lambda self, *a, **k: threads.append(2) or two(self, *a, **k))

    def figures(least: float) -> list[tuple[str, str, dict]]:
        monkeypatch.setattr(encoding_pass, "MIN_LANE_COST", least)
        structure.forget_vectors()
        return [(r.property, r.verdict, r.figures) for r in run_checks(scheme, "all", options)]

    one = figures(float("inf"))
    assert not threads
    monkeypatch.setattr(encoding_pass, "LANE_LAG", 2)
    assert figures(0.0) == one
    assert threads


@pytest.mark.parametrize("compute_dtype", [None, "float32"])
def test_pairs_turning_backwards_round_as_their_mirror_image(compute_dtype):
    # direction negative: rows (cos pθ, −sin pθ), the mirror image of positive's (cos pθ, sin pθ).
    # Rounding is symmetric (round(−x) = −round(x)), so each value's error and each pair's phase error
    # are those of the positive direction: the phase read back is −(its angle) against −pθ.
    # Compared with −pθ's own angle, not +pθ's (which gave errors near π), and computed in float32 the
    # sine negated (else each row's error was about 2).
    dtype = "float32" if compute_dtype else "bfloat16"
    positive, negative = (
        check_precision(build_scheme("rope", {"dim": 16, "direction": d}, length=5000), 5000, dtype=dtype, compute_dtype=compute_dtype)
        for d in ("positive", "negative")
    )
    assert negative.figures["max_error"] == positive.figures["max_error"]
    assert negative.figures["max_error"] < (1e-4 if compute_dtype else 2.0**-8)
    # the same, but for the rounding of the float64 differences (read back − angle) + π, angles up to
    # 5,000 radians: a float64 unit there is 9.1e-13
    np.testing.assert_allclose(negative.figures["phase_error"], positive.figures["phase_error"], rtol=0, atol=1e-11)
    assert negative.figures["max_phase_error"] < 0.01
    assert negative.figures["collisions"] == positive.figures["collisions"]


def test_composability_of_pairs_turning_backwards_is_the_rotation_by_minus_k_theta():
    # E_(p+k) = R(−kθ) E_p for rope turning by −pθ: the fitted maps are that rotation, within rounding
    scheme = build_scheme("rope", {"dim": 16, "direction": "negative"}, length=3000)
    result = check_composability(scheme, 3000)
    assert result.verdict == "pass"
    assert result.figures["max_rotation_distance"] < 1e-12
