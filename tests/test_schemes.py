"""Known values of every scheme, worked out by hand (the derivation is in the comment of each test).

Nothing here compares the code with its own output: expected numbers come from the formulas of the
papers and seeds, from textbook values (sin 1, cos 1 …) or from an independent construction (an
explicit rotation matrix, a hand-written index table).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pecli.config import build_scheme
from pecli.errors import ConfigError, PositionError
from pecli.schemes import as_positions
from pecli.schemes.alibi import alibi_slopes
from pecli.schemes.t5 import t5_buckets


def close(actual, expected, rtol=1e-12, atol=1e-15):
    np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64),
                               rtol=rtol, atol=atol)


# Textbook values (Abramowitz & Stegun table 4.6; also the Taylor series to 1e-16):
SIN1, COS1 = 0.8414709848078965, 0.5403023058681398
SIN2, COS2 = 0.9092974268256817, -0.4161468365471424
# sin x ≈ x − x³/6 + x⁵/120, cos x ≈ 1 − x²/2 + x⁴/24 at x = 0.01 and 0.02 (next term < 1e-16):
SIN_001, COS_001 = 0.01 - 1e-6 / 6 + 1e-10 / 120, 1 - 0.00005 + 1e-8 / 24
SIN_002, COS_002 = 0.02 - 8e-6 / 6 + 3.2e-9 / 120, 1 - 0.0002 + 1.6e-7 / 24


# ================================================================================== sinusoidal
def test_sinusoidal_interleaved_d4_by_hand():
    # d = 4, base 10000: ω_0 = 10000^0 = 1, ω_1 = 10000^(−2/4) = 1/100.
    # PE[p] = [sin(p), cos(p), sin(p/100), cos(p/100)].
    scheme = build_scheme("sinusoidal", {"dim": 4, "layout": "interleaved"})
    out = scheme.encode([0, 1, 2])
    close(out[0], [0.0, 1.0, 0.0, 1.0])
    close(out[1], [SIN1, COS1, SIN_001, COS_001])
    close(out[2], [SIN2, COS2, SIN_002, COS_002])
    assert out.dtype == np.float64 and out.shape == (3, 4)


def test_sinusoidal_half_d4_by_hand():
    # Same frequencies, all sines then all cosines (Marian): PE[p] = [sin p, sin p/100, cos p, cos p/100].
    scheme = build_scheme("sinusoidal", {"dim": 4, "layout": "half"})
    out = scheme.encode([0, 1, 2])
    close(out[0], [0.0, 0.0, 1.0, 1.0])
    close(out[1], [SIN1, SIN_001, COS1, COS_001])
    close(out[2], [SIN2, SIN_002, COS2, COS_002])


def test_sinusoidal_d8_frequencies_and_base():
    # d = 8, base 10000: ω_i = 10000^(−2i/8) = 10^(−i) = 1, 0.1, 0.01, 0.001. At p = 3, the angles are
    # 3, 0.3, 0.03, 0.003. With base 100 and d = 4: ω = 1, 100^(−1/2) = 0.1.
    out = build_scheme("sinusoidal", {"dim": 8}).encode([3])[0]
    angles = [3.0, 0.3, 0.03, 0.003]
    close(out[0::2], [math.sin(a) for a in angles])
    close(out[1::2], [math.cos(a) for a in angles])
    out = build_scheme("sinusoidal", {"dim": 4, "base": 100}).encode([5])[0]
    close(out, [math.sin(5), math.cos(5), math.sin(0.5), math.cos(0.5)])


def test_sinusoidal_dot_product_depends_on_distance_only():
    # [Conditions] and [Common-PE]: PE_p · PE_q = Σ_i [sin pω sin qω + cos pω cos qω] = Σ_i cos(ω_i (p − q)).
    # d = 8: ω = 1, .1, .01, .001; for p − q = 5 the sum is cos 5 + cos .5 + cos .05 + cos .005.
    expected = math.cos(5) + math.cos(0.5) + math.cos(0.05) + math.cos(0.005)
    for layout in ("interleaved", "half"):
        scheme = build_scheme("sinusoidal", {"dim": 8, "layout": layout})
        for p in (5, 12, 105, 1005):
            e = scheme.encode([p, p - 5])
            close(e[0] @ e[1], expected, rtol=1e-12)


def test_sinusoidal_large_position_angles_in_float64():
    # The angle p·ω is formed in float64: p = 10^6 at ω_0 = 1 gives sin(10^6) = −0.34999350217129294
    # (libm); p = 10^6 + 1 at ω_1 = 1/100 gives sin(10000.01). A float32 angle 10000.01 would be off by
    # ~4e-4 rad, so rtol 1e-9 tells the two apart.
    e = build_scheme("sinusoidal", {"dim": 4}).encode([1_000_000, 1_000_001])
    close(e[0, 0], -0.34999350217129294, rtol=1e-9)
    close(e[1, 2], math.sin(1_000_001 / 100), rtol=1e-9)


# ================================================================================== binary / integer
def test_binary_seed_001_example_252():
    # [Fleetwood]: 252 = 128 + 64 + 32 + 16 + 8 + 4 = 0b11111100; least significant bit first in the
    # components: [0, 0, 1, 1, 1, 1, 1, 1].
    scheme = build_scheme("binary", {"bits": 8})
    close(scheme.encode([252])[0], [0, 0, 1, 1, 1, 1, 1, 1])
    # 5 = 0b101 → [1, 0, 1, 0, 0, 0, 0, 0]; 0 → all zeros; 255 → all ones.
    close(scheme.encode([5, 0, 255]), [[1, 0, 1, 0, 0, 0, 0, 0], [0] * 8, [1] * 8])


def test_binary_seven_and_eight_are_four_bits_apart():
    # [Conditions]: 7 = 0111, 8 = 1000 — all four low bits differ.
    e = build_scheme("binary", {"bits": 4}).encode([7, 8])
    assert int(np.sum(e[0] != e[1])) == 4


def test_binary_overflow_300_with_8_bits():
    # Trained on 256 positions: bits = ceil(log2 256) = 8, so positions < 2^8 = 256. 300 = 0b100101100
    # needs 9 bits.
    scheme = build_scheme("binary", {}, length=256)
    assert scheme.bits == 8
    with pytest.raises(PositionError) as info:
        scheme.encode([255, 300])  # 255 = 0b11111111 still fits
    assert "300" in str(info.value) and "9 bits" in str(info.value)
    # With 9 bits (ceil(log2 300) = 9) 300 = 256 + 32 + 8 + 4 → LSB first [0,0,1,1,0,1,0,0,1].
    nine = build_scheme("binary", {}, length=300)
    assert nine.bits == 9
    close(nine.encode([300])[0], [0, 0, 1, 1, 0, 1, 0, 0, 1])


def test_integer_p_and_p_over_n():
    # [Fleetwood]: E[p, k] = p in every component, or p / N. N = 10: 5 → 0.5, 9 → 0.9; with N = 20 the
    # same position 5 becomes 0.25 — the length dependence the seed criticises.
    raw = build_scheme("integer", {"dim": 3})
    close(raw.encode([0, 5, 9]), [[0, 0, 0], [5, 5, 5], [9, 9, 9]])
    by_ten = build_scheme("integer", {"dim": 2, "normalize": "length"}, length=10)
    close(by_ten.encode([0, 5, 9]), [[0, 0], [0.5, 0.5], [0.9, 0.9]])
    by_twenty = build_scheme("integer", {"dim": 2, "normalize": "length"}, length=20)
    close(by_twenty.encode([5]), [[0.25, 0.25]])


# ================================================================================== learned / relative
def test_learned_undefined_past_max_length():
    scheme = build_scheme("learned", {"dim": 4, "max_length": 8})
    assert scheme.encode([0, 7]).shape == (2, 4)
    with pytest.raises(PositionError, match="max_length"):
        scheme.encode([8])
    with pytest.raises(PositionError):
        scheme.encode([3, 100])


def test_learned_deterministic_per_seed():
    a = build_scheme("learned", {"dim": 16, "max_length": 64, "seed": 1})
    b = build_scheme("learned", {"dim": 16, "max_length": 64, "seed": 1})
    c = build_scheme("learned", {"dim": 16, "max_length": 64, "seed": 2})
    positions = np.arange(64)
    np.testing.assert_array_equal(a.encode(positions), b.encode(positions))
    assert not np.allclose(a.encode(positions), c.encode(positions))
    # Rows are looked up, not recomputed per call: position 10 alone equals row 10 of the whole table.
    np.testing.assert_array_equal(a.encode([10])[0], a.encode(positions)[10])
    # N(0, 0.02²) over 1024 draws: the sample std is within 10 % of 0.02 (its relative s.e. is ~2 %).
    assert abs(a.encode(positions).std() - 0.02) < 0.002


def test_relative_index_table_by_hand():
    # index[i, j] = clip(j − i, −K, K) + K with K = 2, L = 4:
    #   i=0: j−i = 0, 1, 2, 3 → 2, 3, 4, 4
    #   i=1: −1, 0, 1, 2      → 1, 2, 3, 4
    #   i=2: −2, −1, 0, 1     → 0, 1, 2, 3
    #   i=3: −3, −2, −1, 0    → 0, 0, 1, 2
    scheme = build_scheme("relative", {"dim": 3, "max_relative_position": 2})
    arrays = scheme.arrays(np.arange(4))
    np.testing.assert_array_equal(arrays["index"], [[2, 3, 4, 4], [1, 2, 3, 4], [0, 1, 2, 3], [0, 0, 1, 2]])
    assert arrays["table"].shape == (5, 3)  # 2K + 1 rows of dim
    assert arrays["embeddings"].shape == (4, 4, 3)
    for i in range(4):
        for j in range(4):
            np.testing.assert_array_equal(arrays["embeddings"][i, j], arrays["table"][arrays["index"][i, j]])
    # Positions 10, 11 give the same index as 0, 1 (only j − i matters).
    np.testing.assert_array_equal(scheme.arrays([10, 11])["index"], [[2, 3], [1, 2]])


# ================================================================================== alibi
def test_alibi_slopes_8_heads():
    # n = 8, a power of two: m_k = 2^(−8k/8) = 2^−k, k = 1 … 8 → 1/2, 1/4, …, 1/256.
    close(alibi_slopes(8), [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256], rtol=0)


def test_alibi_slopes_12_heads_paper_rule():
    # n = 12: the 8 slopes of 8 heads (2^−1 … 2^−8), then every other slope of 16 heads
    # (2^(−8k/16) = 2^(−k/2), k = 1, 3, 5, 7) → 2^−0.5, 2^−1.5, 2^−2.5, 2^−3.5.
    expected = [2.0 ** -k for k in range(1, 9)] + [2.0 ** -0.5, 2.0 ** -1.5, 2.0 ** -2.5, 2.0 ** -3.5]
    close(alibi_slopes(12), expected)


def test_alibi_slopes_other_counts():
    # n = 1: 2^(−8·1/1) = 1/256 (get_slopes(1) in the reference code).
    # n = 6: 4 heads → 2^−2, 2^−4, 2^−6, 2^−8; then 8 heads' 1st and 3rd slopes → 2^−1, 2^−3.
    close(alibi_slopes(1), [1 / 256])
    close(alibi_slopes(6), [2.0 ** -2, 2.0 ** -4, 2.0 ** -6, 2.0 ** -8, 2.0 ** -1, 2.0 ** -3])


def test_alibi_bias_matrix():
    # bias[h, i, j] = −m_h |i − j|; 2 heads: m = 2^−4, 2^−8 (n = 2: 2^(−8k/2) = 2^−4k).
    scheme = build_scheme("alibi", {"heads": 2})
    bias = scheme.arrays(np.arange(3))["bias"]
    distance = np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0]])
    close(bias[0], -distance / 16)
    close(bias[1], -distance / 256)


# ================================================================================== t5
# The T5 rule (Raffel et al. 2020; HF _relative_position_bucket), n = j − i:
#   bidirectional, 32 buckets: 16 per side, keys after the query (n > 0) offset by 16; d = |n|;
#   max_exact = 8: d < 8 → d; else 8 + int(log(d/8) / log(128/8) · 8) = 8 + int(2·log2(d/8)), capped at 15.
#     d=0 → 0; d=1 → 1; d=15: 2·log2(1.875) = 1.81 → 9; d=16: 2·log2(2) = 2 → 10;
#     d=127: 2·log2(15.875) = 7.98 → 15; d=128: 2·log2(16) = 8 → 16 → cap 15; d=1000 → 15.
#   causal, 32 buckets: d = max(−n, 0); max_exact = 16: d < 16 → d;
#     else 16 + int(log(d/16) / log(128/16) · 16) = 16 + int(16·log2(d/16)/3), capped at 31.
#     d=0 → 0; 1 → 1; 15 → 15; 16 → 16; 32: 16/3 = 5.33 → 21; 64: 32/3 = 10.67 → 26;
#     127: 16·log2(7.9375)/3 = 15.94 → 31; 128: 16 → 32 → cap 31; 1000 → 31. Future keys (n > 0) → 0.
BIDIRECTIONAL = {0: 0, 1: 1, 15: 9, 16: 10, 127: 15, 128: 15, 1000: 15}
CAUSAL = {0: 0, 1: 1, 15: 15, 16: 16, 32: 21, 64: 26, 127: 31, 128: 31, 1000: 31}


@pytest.mark.parametrize("distance", sorted(BIDIRECTIONAL))
def test_t5_bidirectional_buckets(distance):
    before = t5_buckets([-distance], buckets=32, max_distance=128, bidirectional=True)[0]
    after = t5_buckets([distance], buckets=32, max_distance=128, bidirectional=True)[0]
    assert before == BIDIRECTIONAL[distance]
    assert after == (16 + BIDIRECTIONAL[distance] if distance > 0 else 0)


@pytest.mark.parametrize("distance", sorted(CAUSAL))
def test_t5_causal_buckets(distance):
    # n = j − i = −d: a key d positions before the query.
    assert t5_buckets([-distance], buckets=32, max_distance=128, bidirectional=False)[0] == CAUSAL[distance]
    assert t5_buckets([distance], buckets=32, max_distance=128, bidirectional=False)[0] == 0


def test_t5_scheme_bucket_matrix():
    # Through the scheme, positions 0, 1, 20 (n = j − i), bidirectional: n = 1 → 16 + 1 = 17; −1 → 1;
    # ±20: 8 + int(2·log2(20/8) = 2.64) = 10, so 20 → 26 and −20 → 10; ±19: 8 + int(2·log2(19/8) = 2.50) = 10,
    # so 19 → 26 and −19 → 10.
    scheme = build_scheme("t5", {})
    buckets = scheme.arrays([0, 1, 20])["buckets"]
    np.testing.assert_array_equal(buckets, [[0, 17, 26], [1, 0, 26], [10, 10, 0]])
    assert buckets.dtype.kind == "i"
    causal = build_scheme("t5", {"bidirectional": False}).arrays([0, 1, 20])["buckets"]
    # causal: i − j = 0, 1, 20, 19 → 0, 1, 16 + int(16·log2(1.25)/3 = 1.72) = 17, 16 + int(16·log2(1.1875)/3 = 1.32) = 17.
    np.testing.assert_array_equal(causal, [[0, 0, 0], [1, 0, 0], [17, 17, 0]])


# ================================================================================== rope
def rope(**params):
    return build_scheme("rope", params)


def rotate(scheme, x, p):
    """R_p x for one vector x at one position p."""
    return scheme.apply(np.asarray(x, dtype=np.float64)[None, :], [p])[0]


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rope_dot_product_depends_only_on_distance(layout):
    # R_m^T R_n = R_{n−m}, so (R_m q)·(R_n k) = q · R_{n−m} k: equal for every (m, n) with the same n − m,
    # and different for another difference.
    rng = np.random.default_rng(7)
    q, k = rng.standard_normal((2, 16))
    scheme = rope(dim=16, layout=layout)
    values = [rotate(scheme, q, m) @ rotate(scheme, k, m - 3) for m in (3, 10, 103, 5000)]
    close(values, [values[0]] * 4, rtol=1e-9)
    other = rotate(scheme, q, 4) @ rotate(scheme, k, 0)
    assert abs(other - values[0]) > 1e-6


def explicit_rotation(dim, p, thetas, pairs):
    """The dim×dim block rotation built by hand: [[cos, −sin], [sin, cos]] on each pair (a, b)."""
    matrix = np.eye(dim)
    for theta, (a, b) in zip(thetas, pairs):
        c, s = math.cos(p * theta), math.sin(p * theta)
        matrix[a, a], matrix[a, b], matrix[b, a], matrix[b, b] = c, -s, s, c
    return matrix


@pytest.mark.parametrize("layout,pairs", [
    ("interleaved", [(0, 1), (2, 3), (4, 5)]),  # GPT-J / Meta: (2i, 2i+1)
    ("half", [(0, 3), (1, 4), (2, 5)]),  # HF rotate_half: (i, i + d/2)
])
def test_rope_apply_matches_explicit_rotation_matrix(layout, pairs):
    # d = 6, base 10000: θ_i = 10000^(−2i/6) = 1, 10^(−4/3), 10^(−8/3).
    thetas = [1.0, 10 ** (-4 / 3), 10 ** (-8 / 3)]
    scheme = rope(dim=6, layout=layout)
    close(scheme.inv_freq, thetas)
    x = np.random.default_rng(3).standard_normal((4, 6))
    positions = [0, 1, 7, 1000]
    out = scheme.apply(x, positions)
    for row, p in enumerate(positions):
        close(out[row], explicit_rotation(6, p, thetas, pairs) @ x[row], rtol=1e-12, atol=1e-14)
    # Batch axes in front are carried along: (2, L, d).
    batch = scheme.apply(np.stack([x, 2 * x]), positions)
    close(batch[1], 2 * out)


def test_rope_layouts_same_up_to_a_permutation():
    # Pair i is (2i, 2i+1) interleaved and (i, i + d/2) half; moving half's components i → 2i and
    # i + d/2 → 2i + 1 turns one layout into the other, for the encoding and for apply().
    d = 8
    to_interleaved = np.empty(d, dtype=int)
    to_interleaved[0::2] = np.arange(d // 2)
    to_interleaved[1::2] = np.arange(d // 2) + d // 2
    inter, half = rope(dim=d, layout="interleaved"), rope(dim=d, layout="half")
    positions = np.arange(0, 50, 7)
    close(half.encode(positions)[:, to_interleaved], inter.encode(positions))
    x = np.random.default_rng(5).standard_normal((positions.size, d))
    x_half = np.empty_like(x)
    x_half[:, to_interleaved] = x
    close(half.apply(x_half, positions)[:, to_interleaved], inter.apply(x, positions), rtol=1e-12, atol=1e-14)
    # The same dot products between positions (Gram matrices).
    close(half.encode(positions) @ half.encode(positions).T, inter.encode(positions) @ inter.encode(positions).T)


def test_rope_encoding_is_rotated_reference_vector():
    # d = 4, base 10000: θ = 1, 0.01. Interleaved E[p] = [cos p, sin p, cos p/100, sin p/100];
    # half E[p] = [cos p, cos p/100, sin p, sin p/100].
    close(rope(dim=4, layout="interleaved").encode([1])[0], [COS1, SIN1, COS_001, SIN_001])
    close(rope(dim=4, layout="half").encode([2])[0], [COS2, COS_002, SIN2, SIN_002])


def test_rope_cos_sin_caches_framework_convention():
    # d = 4, p = 2: θ = 1, 0.01 → angles 2, 0.02.
    # HF (half): cos = concat(cos θ, cos θ) = [cos 2, cos .02, cos 2, cos .02];
    # GPT-J/Meta (interleaved): each angle twice adjacently = [cos 2, cos 2, cos .02, cos .02].
    half = rope(dim=4, layout="half").arrays([0, 2])
    close(half["cos"][1], [COS2, COS_002, COS2, COS_002])
    close(half["sin"][1], [SIN2, SIN_002, SIN2, SIN_002])
    close(half["cos"][0], [1, 1, 1, 1])
    inter = rope(dim=4, layout="interleaved").arrays([0, 2])
    close(inter["cos"][1], [COS2, COS2, COS_002, COS_002])
    close(inter["sin"][1], [SIN2, SIN2, SIN_002, SIN_002])
    close(half["inv_freq"], [1.0, 0.01])
    np.testing.assert_array_equal(half["positions"], [0, 2])


def test_rope_partial_rotary_tail_untouched_and_theta_over_rotated_dim():
    # dim 8, partial_rotary_factor 0.5 → r = 4 rotated components; θ_i = 10000^(−2i/4) = 1, 0.01
    # (not 10000^(−2i/8) = 1, 0.1). Components 4 … 7 pass through unchanged.
    for layout in ("half", "interleaved"):
        scheme = rope(dim=8, partial_rotary_factor=0.5, layout=layout)
        assert scheme.rotated_dim == 4
        close(scheme.inv_freq, [1.0, 0.01])
        x = np.random.default_rng(11).standard_normal((3, 8))
        out = scheme.apply(x, [0, 5, 900])
        np.testing.assert_array_equal(out[:, 4:], x[:, 4:])
        assert not np.allclose(out[1:, :4], x[1:, :4])
        # The reference vector is 0 on the tail, so the encoding is too.
        np.testing.assert_array_equal(scheme.encode([0, 5])[:, 4:], 0.0)
    # The rotated part of dim 8 at factor 0.5 equals a full rope of dim 4 (half layout: pairs (0,2), (1,3)).
    partial = rope(dim=8, partial_rotary_factor=0.5)
    x = np.random.default_rng(2).standard_normal((2, 8))
    close(partial.apply(x, [3, 40])[:, :4], rope(dim=4).apply(x[:, :4], [3, 40]))


def test_rope_positions_integer_and_base_alias():
    # rope_theta is base's alias; base 100, d = 4: θ = 1, 100^(−1/2) = 0.1.
    scheme = build_scheme("rope", {"dim": 4, "rope_theta": 100})
    assert scheme.base == 100.0
    close(scheme.inv_freq, [1.0, 0.1])
    # Large positions: angles in float64 (p θ_1 = 123456.7 exactly representable to ~1e-11).
    close(scheme.encode([1234567])[0], [math.cos(1234567), math.cos(123456.7), math.sin(1234567), math.sin(123456.7)],
          rtol=1e-9, atol=1e-9)


def test_rope_linear_scaling_halves_inv_freq():
    # linear, factor 2: θ_i / 2. d = 8, base 10000: θ = 1, .1, .01, .001 → .5, .05, .005, .0005.
    scheme = rope(dim=8, scaling="linear", factor=2)
    close(scheme.inv_freq, [0.5, 0.05, 0.005, 0.0005])
    # So position 2 under linear ×2 is position 1 without scaling.
    close(scheme.encode([2]), rope(dim=8).encode([1]))


def test_rope_llama3_scaling_keeps_high_frequencies():
    # llama3, base 500000, d = 8, factor 8, low 1, high 4, original 8192:
    # θ_i = 500000^(−i/4) = 1, 0.037606, 0.0014142, 5.3183e-5; wavelengths 2π/θ = 6.28, 167.1, 4442.9, 118143.
    # high_freq_wavelen = 8192/4 = 2048, low_freq_wavelen = 8192/1 = 8192:
    #   pairs 0, 1 (λ < 2048) keep θ; pair 3 (λ > 8192) → θ/8;
    #   pair 2 (2048 ≤ λ ≤ 8192): s = (8192/λ − 1)/(4 − 1), θ' = (1 − s)·θ/8 + s·θ.
    theta = [500000.0 ** (-i / 4) for i in range(4)]
    wavelength_2 = 2 * math.pi / theta[2]
    s = (8192 / wavelength_2 - 1) / 3
    expected = [theta[0], theta[1], (1 - s) * theta[2] / 8 + s * theta[2], theta[3] / 8]
    scheme = rope(dim=8, base=500000, scaling="llama3", factor=8, low_freq_factor=1, high_freq_factor=4,
                  original_max_position=8192)
    close(scheme.inv_freq, expected)
    assert 0.28 < s < 0.29  # 8192 / 4442.88 = 1.8438 → s = 0.2813


def test_rope_yarn_attention_scaling_multiplies_cos_and_sin():
    # YaRN: mscale = 0.1·ln(s) + 1; s = 4 → 1 + 0.1·ln 4 = 1.1386294361119891. It multiplies both caches,
    # so cos² + sin² = mscale² everywhere, and cos at p = 0 equals mscale.
    mscale = 1 + 0.1 * math.log(4)
    scheme = rope(dim=8, scaling="yarn", factor=4, original_max_position=64)
    close(scheme.attention_scaling, mscale)
    arrays = scheme.arrays(np.arange(5))
    close(arrays["cos"][0], [mscale] * 8)
    close(arrays["sin"][0], [0.0] * 8)
    close(arrays["cos"] ** 2 + arrays["sin"] ** 2, np.full((5, 8), mscale ** 2))
    # apply() scales the rotated vector by mscale too: |R_p x| = mscale · |x|.
    x = np.random.default_rng(0).standard_normal((5, 8))
    close(np.linalg.norm(scheme.apply(x, np.arange(5)), axis=1), mscale * np.linalg.norm(x, axis=1))


def test_p_rope_zeroes_lowest_frequencies():
    # p-RoPE (Barbero et al. 2024), rope_fraction 0.5, d = 8 → 4 pairs, floor(0.5·4) = 2 rotate: the two
    # highest frequencies θ = 1, 0.1 stay, θ = 0.01, 0.001 become 0 (those pairs never rotate).
    scheme = rope(dim=8, rope_fraction=0.5, layout="interleaved")
    close(scheme.inv_freq, [1.0, 0.1, 0.0, 0.0])
    e = scheme.encode([0, 17, 3000])
    np.testing.assert_array_equal(e[:, 4:], np.tile([1.0, 0.0, 1.0, 0.0], (3, 1)))
    close(e[1, :4], [math.cos(17), math.sin(17), math.cos(1.7), math.sin(1.7)])
    # rope_fraction 0 is NoPE: nothing rotates.
    x = np.random.default_rng(1).standard_normal((2, 8))
    np.testing.assert_array_equal(rope(dim=8, rope_fraction=0).apply(x, [5, 9]), x)


def test_rope_bad_dims():
    with pytest.raises(ConfigError) as info:
        rope(dim=7)
    assert info.value.key == "dim"
    # dim 8 at factor 0.1 → int(0.8) = 0 rotated components.
    with pytest.raises(ConfigError) as info:
        rope(dim=8, partial_rotary_factor=0.1)
    assert info.value.key == "partial_rotary_factor"


# ================================================================================== positions
@pytest.mark.parametrize("bad,fragment", [
    ([-1, 2], ">= 0"),
    ([0.5], "whole numbers"),
    ([[0, 1], [2, 3]], "one-dimensional"),
    (["a"], "integers"),
])
def test_as_positions_rejects(bad, fragment):
    with pytest.raises(PositionError, match=fragment):
        as_positions(bad)


def test_as_positions_accepts_whole_floats_and_scalars():
    np.testing.assert_array_equal(as_positions([0.0, 3.0]), [0, 3])
    assert as_positions(np.array([1, 2], dtype=np.uint8)).dtype == np.int64
    np.testing.assert_array_equal(as_positions(5), [5])
