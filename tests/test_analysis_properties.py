"""Every (scheme, property) verdict of issue 3, and the seed examples by their numbers.

Expected values are derived by hand in the comments, never read from the code's own output.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pecli.analysis.options import CheckOptions
from pecli.analysis.registry import run_checks
from pecli.analysis.composability import check_composability
from pecli.analysis.distinguishability import check_distinguishability
from pecli.analysis.extrapolation import angle_ranges, check_extrapolation
from pecli.analysis.precision import check_precision, precision_profile
from pecli.analysis.relativity import check_relativity, score_by_distance
from pecli.analysis.structure import collisions, rotation_blocks
from pecli.analysis.uniqueness import check_uniqueness
from pecli.config import build_scheme
from pecli.schemes.frequencies import FrequencyPairs


def scheme(name, length=512, **params):
    return build_scheme(name, params, length=length)


# -- uniqueness ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["integer", "binary", "sinusoidal", "learned", "rope", "alibi"])
def test_uniqueness_passes(name):
    result = check_uniqueness(scheme(name, 256), 256)
    assert result.verdict == "pass"
    assert result.figures["colliding_pairs"] == 0


def test_uniqueness_sinusoidal_min_distance_is_adjacent():
    # d = 2, base 10000: ω_0 = 1, ||E_p − E_q|| = 2|sin((p − q)/2)|; for L = 5 the smallest over Δ = 1..4 is
    # Δ = 1: 2 sin(0.5) = 0.958851 (Δ = 4: 2|sin 2| = 1.8186, Δ = 2: 1.683, Δ = 3: 1.995).
    result = check_uniqueness(scheme("sinusoidal", 5, dim=2), 5)
    assert result.figures["min_distance"] == pytest.approx(2 * math.sin(0.5), rel=1e-12)
    assert result.figures["min_distance_pair"] == [0, 1]


def test_uniqueness_t5_collision_named():
    # Bidirectional, 32 buckets: 16 per side, 8 exact. bucket(8) = 8 + floor(ln(8/8)/ln(128/8)·8) = 8 and
    # bucket(9) = 8 + floor(ln(9/8)/ln(16)·8) = 8 + floor(0.34) = 8: distances 8 and 9 share a bucket.
    result = check_uniqueness(scheme("t5"), 64)
    assert result.verdict == "fail"
    assert result.figures["first_collision"] == [-8, -9]


def test_uniqueness_relative_collision_past_k():
    # clip(Δ, −16, 16): Δ = −17 gets the index of −16.
    result = check_uniqueness(scheme("relative", max_relative_position=16), 64)
    assert result.verdict == "fail"
    assert result.figures["first_collision"] == [-16, -17]
    # 2·63 + 1 = 127 distances, 2·16 + 1 = 33 distinct indices
    assert result.figures["distinct_biases"] == 33


def test_uniqueness_in_bfloat16_integer_collides():
    # bfloat16 keeps 8 significant bits: 257 rounds to 256 (tie to even), so 256 and 257 collide.
    result = check_uniqueness(scheme("integer", 300, dim=4), 300, dtype="bfloat16")
    assert result.verdict == "fail"
    assert result.figures["first_collision"] == [256, 257]


def test_collisions_counts_pairs_exactly():
    rows = np.array([[1.0, 0.0], [2.0, 0.0], [1.0, -0.0], [1.0, 0.0]])  # rows 0, 2, 3 equal: 3 pairs
    found = collisions(rows)
    assert (found.pairs, found.repeated, found.first, found.first_adjacent) == (3, 2, (0, 2), 3)


# -- distinguishability -----------------------------------------------------------------------------------
def test_binary_fails_naming_seven_to_eight():
    # [Conditions]: 7 = 0111 and 8 = 1000 differ in all 4 bits, step √4 = 2; every other step is ≥ 1.
    result = check_distinguishability(scheme("binary", 16), 16)
    assert result.verdict == "fail"
    assert result.figures["worst_jump"] == {"pair": [7, 8], "components_changed": 4, "of": 4}
    assert result.figures["max_step"] == pytest.approx(2.0)
    assert "positions 7 and 8 differ in 4 of 4 bits" in result.reason
    assert "Hamming distance 4" in result.reason


def test_sinusoidal_base_1_dim_2_fails():
    # ω_0 = 1 for every base when d = 2; ||E_p − E_q|| = 2|sin(Δ/2)|: f(1) = 0.959 but f(6) = 2|sin 3| = 0.282,
    # so every position (each reaches Δ = 6 when L = 64) has a nearer position than p ± 1: share 0.
    result = check_distinguishability(scheme("sinusoidal", 64, dim=2, base=1), 64)
    assert result.verdict == "fail"
    assert result.figures["local_share"] == 0.0


def test_sinusoidal_base_10000_passes():
    result = check_distinguishability(scheme("sinusoidal", 512, dim=128), 512)
    assert result.verdict == "pass"
    assert result.figures["step_ratio"] == pytest.approx(1.0)
    assert result.figures["local_share"] == 1.0


@pytest.mark.parametrize("name", ["integer", "rope", "alibi"])
def test_distinguishability_passes(name):
    assert check_distinguishability(scheme(name, 128), 128).verdict == "pass"


@pytest.mark.parametrize("name", ["learned", "t5", "relative"])
def test_distinguishability_fails(name):
    # learned: a random table has random nearest neighbours; t5/relative: distances past the last bucket /
    # the clip get identical biases (step 0).
    assert check_distinguishability(scheme(name, 128, **({"dim": 64} if name == "learned" else {})), 128).verdict == "fail"


# -- composability ---------------------------------------------------------------------------------------
def test_rotation_block_is_seed_001_matrix():
    # [Fleetwood]: M_k = [[cos ω k, sin ω k], [−sin ω k, cos ω k]] on (sin, cos) pairs; ω = 1, k = 1.
    pairs = FrequencyPairs(np.array([1.0]), np.array([1.0]), np.array([0]), np.array([1]), True, 2, 10000.0)
    expected = np.array([[math.cos(1), math.sin(1)], [-math.sin(1), math.cos(1)]])
    np.testing.assert_allclose(rotation_blocks(pairs, 1)[0], expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize("name, params", [("sinusoidal", {"dim": 8}), ("sinusoidal", {"dim": 8, "layout": "half"}), ("rope", {"dim": 8}), ("rope", {"dim": 8, "layout": "interleaved"})])
def test_composability_passes_with_the_rotation(name, params):
    result = check_composability(scheme(name, 128, **params), 128)
    assert result.verdict == "pass"
    assert result.figures["max_residual"] < 1e-10
    assert result.figures["max_rotation_distance"] < 1e-9
    assert result.figures["max_rotation_residual"] < 1e-12


@pytest.mark.parametrize("name, params", [("integer", {"dim": 4}), ("binary", {}), ("learned", {"dim": 16}), ("learned", {"dim": 64})])
def test_composability_fails(name, params):
    # integer: (p + k)·1 = c·p·1 has no solution at p = 0; learned dim 64 > L = 48 is underdetermined and
    # judged on held-out positions.
    assert check_composability(scheme(name, 48, **params), 48).verdict == "fail"


@pytest.mark.parametrize("name", ["alibi", "t5", "relative"])
def test_composability_bias_schemes_pass(name):
    assert check_composability(scheme(name, 64), 64).verdict == "pass"


# -- relativity --------------------------------------------------------------------------------------------
def test_relativity_table_shows_seed_000_identity():
    # d = 8, base 10000: ω = 1, 0.1, 0.01, 0.001; Δ = 1: cos 1 + cos 0.1 + cos 0.01 + cos 0.001
    # = 0.5403023 + 0.9950042 + 0.9999500 + 0.9999995 = 3.5352560; Δ = 0: 4 (= d/2).
    result = check_relativity(scheme("sinusoidal", 64, dim=8), 64)
    assert result.verdict == "pass"
    rows = {row["distance"]: row for row in result.table}
    assert rows[0]["mean"] == pytest.approx(4.0, abs=1e-12)
    assert rows[1]["mean"] == pytest.approx(3.5352560, abs=1e-6)
    assert rows[1]["sum_cos"] == pytest.approx(3.5352560, abs=1e-6)


@pytest.mark.parametrize("name", ["sinusoidal", "rope", "alibi", "t5", "relative"])
def test_relativity_passes(name):
    assert check_relativity(scheme(name, 64), 64).verdict == "pass"


@pytest.mark.parametrize("name", ["integer", "binary", "learned"])
def test_relativity_fails(name):
    # integer: E_m·E_n = d·m·n; at Δ = 0 it runs from 0 (m = 0) to d·63² (m = 63).
    assert check_relativity(scheme(name, 64), 64).verdict == "fail"


def test_score_by_distance_alibi_values():
    # ALiBi, 8 heads: slope of head 0 = 2^(−8/8) = 1/2; S(m, m+Δ) = −|Δ|/2 for every m.
    profile = score_by_distance(scheme("alibi"), 32, max_distance=5)
    assert list(profile.distance) == [-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5]
    np.testing.assert_allclose(profile.mean[0], -0.5 * np.abs(profile.distance))
    assert np.all(profile.spread == 0)
    assert profile.mean.shape == (8, 11) and not profile.sampled


def test_score_by_distance_samples_say_so():
    profile = score_by_distance(scheme("sinusoidal", 64, dim=4), 64, samples=8)
    assert profile.sampled and profile.queries == 10  # 8 drawn plus positions 0 and 63 (some may coincide)
    assert np.all(profile.count >= 1)


# -- extrapolation ---------------------------------------------------------------------------------------------
def test_learned_undefined_past_max_length():
    result = check_extrapolation(scheme("learned", 512, dim=8), 512, train_length=256)
    assert result.verdict == "fail"
    assert "undefined past max_length" in result.reason
    assert result.figures["first_undefined"] == 256


def test_binary_overflow_after_256_names_300():
    # [Conditions]: trained on 256 positions → ⌈log2 256⌉ = 8 bits; 256 = 2**8 is the first overflow, and
    # 300 = 0b100101100 needs 9 bits.
    result = check_extrapolation(scheme("binary", 512), 512, train_length=256)
    assert result.verdict == "fail"
    assert result.figures["first_undefined"] == 256
    assert "position 300 needs 9 bits" in result.reason


def test_integer_unbounded():
    result = check_extrapolation(scheme("integer", 512, dim=4), 512, train_length=256)
    assert result.verdict == "fail"
    assert result.figures["train_range"] == [0.0, 255.0]
    assert result.figures["test_range"] == [256.0, 511.0]


def test_rope_unseen_angle_pairs():
    # d = 128, base 10000: wavelength_i = 2π·10000^(i/64). Unseen when (T − 1)θ_i < 2π, i.e.
    # 10000^(i/64) > 255/(2π) = 40.58 → i > 64·log10(40.58)/4 = 25.7 → pairs 26 … 63: 38 of them.
    result = check_extrapolation(scheme("rope", 512), 512, train_length=256)
    assert result.verdict == "warn"
    assert result.figures["unseen_angle_pairs"] == 38
    assert result.figures["first_unseen_pair"] == 26
    strict = run_checks(scheme("rope", 512), "extrapolation", CheckOptions(length=512, train_length=256, strict=True))[0]
    assert strict.verdict == "fail"


def test_sinusoidal_bounded():
    result = check_extrapolation(scheme("sinusoidal", 512, dim=16), 512, train_length=256)
    assert result.verdict == "warn"  # bounded and defined; low-frequency pairs see new angles
    low, high = result.figures["test_range"]
    assert -1.0 <= low and high <= 1.0


def test_angle_ranges_full_turn_is_not_unseen():
    # dim 4, base 10000: θ = (1, 0.01). T = 10: pair 0 covered 9 rad > 2π in training → seen; pair 1 covered
    # 0.09 rad and reaches 0.99 at L = 100 → unseen.
    ranges = angle_ranges(scheme("rope", dim=4), 10, 100)
    np.testing.assert_allclose(ranges.train_max_angle, [9.0, 0.09])
    np.testing.assert_allclose(ranges.test_max_angle, [99.0, 0.99])
    assert list(ranges.unseen) == [False, True]
    assert ranges.first_unseen_pair == 1
    np.testing.assert_allclose(ranges.wavelength, [2 * math.pi, 200 * math.pi])


def test_t5_and_shaw_map_unseen_onto_last_bucket():
    # T = 256 > max_distance 128 (T5) and > K = 16 (Shaw): unseen distances get the last bucket / the clip
    # of each side: 2 values, both seen in training.
    for name in ("t5", "relative"):
        result = check_extrapolation(scheme(name), 512, train_length=256)
        assert result.verdict == "pass", name
        assert result.figures["distinct_unseen_biases"] == 2
        assert result.figures["unseen_biases_not_in_training"] == 0


def test_t5_untrained_buckets_warn():
    # T = 64 < max_distance = 128: distances 64 … 127 reach buckets training never used.
    result = check_extrapolation(scheme("t5"), 512, train_length=64)
    assert result.verdict == "warn"


def test_alibi_monotone_largest_unseen_bias():
    # head 0 slope 1/2, farthest distance 511: −255.5
    result = check_extrapolation(scheme("alibi"), 512, train_length=256)
    assert result.verdict == "pass"
    assert result.figures["largest_unseen_bias"] == -255.5


# -- precision -------------------------------------------------------------------------------------------------
def test_rope_angles_in_bfloat16_collapse_at_257():
    # bfloat16 has 8 significant bits: 257 = 0b100000001 rounds to 256, so positions 256 and 257 get the
    # same angles; below 256 every integer is exact.
    profile = precision_profile(scheme("rope", dim=8), 512, dtype="bfloat16", compute_dtype="bfloat16")
    assert profile.case == "computed"
    assert profile.first_adjacent_collision == 257
    assert profile.collisions > 0
    assert check_precision(scheme("rope", dim=8), 512, compute_dtype="bfloat16").verdict == "fail"


def test_rope_angles_in_float16_collapse_at_2049():
    # float16: 11 significant bits, integers exact up to 2048; 2049 rounds to 2048.
    profile = precision_profile(scheme("rope", dim=4), 2100, dtype="float32", compute_dtype="float16")
    assert profile.first_adjacent_collision == 2049


def test_an_adjacent_collision_across_chunks_is_found(monkeypatch):
    # The case above in chunks of 2,049 rows: positions 2048 and 2049 fall in different chunks.
    from pecli.analysis import structure

    rope = scheme("rope", dim=4)
    monkeypatch.setattr(structure, "CHUNK_BYTES", 2049 * 8 * 4 * rope.width)
    assert structure.chunk_rows(4 * rope.width) == 2049
    profile = precision_profile(rope, 2100, dtype="float32", compute_dtype="float16")
    assert profile.first_adjacent_collision == 2049


def test_cast_after_exact_keeps_positions_apart():
    # cos/sin exact then cast: the fastest pair (θ = 1) moves ~1 rad per position, far above bfloat16's
    # 2^-8 spacing, so adjacent positions stay distinct; errors are at most half an ulp of 1 (2^-9).
    profile = precision_profile(scheme("rope", dim=8), 512, dtype="bfloat16")
    assert profile.case == "cast" and profile.first_adjacent_collision is None
    assert profile.max_error <= 2.0**-9
    assert profile.phase_error.shape == (4,)


def test_integer_bfloat16_precision_fails():
    result = check_precision(scheme("integer", 300, dim=2), 300)
    assert result.verdict == "fail"
    assert result.figures["first_adjacent_collision"] == 257


# -- what schemes declare --------------------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "expected"), [("integer", True), ("sinusoidal", True), ("rope", True), ("binary", False), ("learned", False)])
def test_shift_isometry_is_declared_by_the_scheme(name, expected):
    assert scheme(name, 16).shift_isometric is expected


def test_extrapolation_trains_the_scheme_at_T_keeping_what_the_user_gave():
    # bits given by the user stay 9 at T = 256, so nothing is undefined past T.
    result = check_extrapolation(scheme("binary", 512, bits=9), 512, train_length=256)
    assert result.figures["first_undefined"] is None
    assert result.figures["trained_with"] == {"bits": 9}


def test_composability_of_a_large_table_is_judged_on_held_out_positions():
    # A 2200 × 256 random table takes the sampled path; with fewer positions than the sample wants it is
    # fitted on half and measured on the other half — never on no held-out position at all, which
    # passed any table (a trained GPT-2 table, 1024 × 768, was reported composable).
    result = check_composability(scheme("learned", 2200, dim=256), 2200)
    assert result.verdict == "fail" and result.sampled
    assert "measured on 1068 held-out ones" in result.notes[0]


def test_check_all_on_a_table_shorter_than_the_length(tmp_path):
    # A 64-row trained table checked at L = 100: extrapolation fails (positions 64 … 99 have no row); the
    # other properties are measured on the table's 64 rows and say so.
    save_file = pytest.importorskip("safetensors.numpy", reason="the models extra (safetensors) is not installed").save_file

    from pecli.config import build_scheme as build

    table = np.random.default_rng(1).normal(0, 0.02, (64, 16)).astype(np.float32)
    save_file({"wpe.weight": table}, str(tmp_path / "model.safetensors"))
    learned = build("learned", {"weights": str(tmp_path / "model.safetensors")})
    results = {r.property: r for r in run_checks(learned, "all", CheckOptions(length=100))}
    assert results["extrapolation"].verdict == "fail"
    assert results["uniqueness"].figures["positions"] == 64
    assert "measured on positions 0 … 63, the rows the table has" in results["uniqueness"].notes[-1]
