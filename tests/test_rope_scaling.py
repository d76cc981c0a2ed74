"""Tests of pecli.schemes.scaling against values worked out by hand or from the papers.

Expected numbers are derived in the comments (never taken from the module's output). Notation:
theta_i = base ** (-2 i / d), wavelength w_i = 2 pi / theta_i, s = factor, L = original context.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from pecli.config import build_scheme
from pecli.errors import ConfigError
from pecli.schemes.scaling.compute import compute_inv_freq
from pecli.schemes.scaling.longrope import longrope_attention_factor
from pecli.schemes.scaling.ntk import ntk_base
from pecli.schemes.scaling.record import ScaledFrequencies
from pecli.schemes.scaling.registry import SCALING_TYPES
from pecli.schemes.scaling.unscaled import default_inv_freq
from pecli.schemes.scaling.value import RopeScaling
from pecli.schemes.rope import RopeScheme
from pecli.schemes.scaling.yarn import yarn_correction_range, yarn_get_mscale

SAMPLES = Path(__file__).resolve().parent.parent / "sample_configs" / "hf"

# base 10000, d = 8: theta_i = 10000 ** (-i / 4) = [1, 0.1, 0.01, 0.001];
# wavelengths 2 pi * [1, 10, 100, 1000] = [6.283, 62.83, 628.3, 6283.2].
THETA8 = np.array([1.0, 0.1, 0.01, 0.001])


def close(actual, expected, rtol=1e-12):
    np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64),
                               rtol=rtol, atol=0)


# --------------------------------------------------------------------------- default / partial rotary
def test_default_theta_base_10000_d4():
    # i = 0: 10000 ** 0 = 1; i = 1: 10000 ** (-2/4) = 1/100.
    out = compute_inv_freq(base=10000.0, rotated_dim=4)
    close(out.inv_freq, [1.0, 0.01])
    close(out.original_inv_freq, [1.0, 0.01])
    assert out.inv_freq.dtype == np.float64 and out.inv_freq.shape == (2,)
    assert out.attention_scaling == 1.0
    assert out.base == 10000.0
    assert out.regimes == ("unchanged", "unchanged")
    assert out.rope_type == "none"


def test_default_theta_d8():
    close(default_inv_freq(10000.0, 8), THETA8)


def test_partial_rotary_exponent_runs_over_rotated_dim():
    # head_dim 8, partial_rotary_factor 0.5 -> caller passes d = 4. theta_1 = 10000 ** (-2/4) = 0.01,
    # NOT 10000 ** (-2/8) = 0.1 (which an exponent over head_dim would give).
    rotated = int(8 * 0.5)
    out = compute_inv_freq(base=10000.0, rotated_dim=rotated)
    close(out.inv_freq, [1.0, 0.01])
    assert not np.isclose(out.inv_freq[1], 0.1)


def test_none_scaling_object_equals_no_scaling():
    a = compute_inv_freq(base=500000.0, rotated_dim=128)
    b = compute_inv_freq(base=500000.0, rotated_dim=128, scaling=RopeScaling())
    np.testing.assert_array_equal(a.inv_freq, b.inv_freq)


def test_result_arrays_are_read_only():
    out = compute_inv_freq(base=10000.0, rotated_dim=4)
    with pytest.raises(ValueError):
        out.inv_freq[0] = 2.0
    assert isinstance(out, ScaledFrequencies)


# --------------------------------------------------------------------------- linear
def test_linear_halves_theta_at_factor_2():
    # theta / 2 = [0.5, 0.005]
    out = compute_inv_freq(base=10000.0, rotated_dim=4, scaling=RopeScaling("linear", factor=2.0))
    close(out.inv_freq, [0.5, 0.005])
    close(out.original_inv_freq, [1.0, 0.01])
    assert out.regimes == ("scaled", "scaled")
    assert out.attention_scaling == 1.0


def test_linear_factor_one_is_identity():
    out = compute_inv_freq(base=10000.0, rotated_dim=4, scaling=RopeScaling("linear", factor=1.0))
    close(out.inv_freq, [1.0, 0.01])
    assert out.regimes == ("unchanged", "unchanged")


# --------------------------------------------------------------------------- ntk
def test_ntk_base_d128_factor4():
    # b' = 10000 * 4 ** (128/126) = 10000 * 4 * 4 ** (1/63)
    #    = 40000 * exp(ln 4 / 63) = 40000 * exp(0.02200467...) = 40000 * 1.02224856... = 40889.94...
    expected = 40000.0 * math.exp(math.log(4.0) / 63.0)
    assert ntk_base(10000.0, 4.0, 128) == pytest.approx(expected, rel=1e-13)
    assert expected == pytest.approx(40889.94, abs=0.01)
    out = compute_inv_freq(base=10000.0, rotated_dim=128, scaling=RopeScaling("ntk", factor=4.0))
    assert out.base == pytest.approx(expected, rel=1e-13)
    # the lowest frequency (i = 63) is divided by exactly s: b'^(-126/128) = b^(-126/128) / 4
    close(out.inv_freq[-1], out.original_inv_freq[-1] / 4.0, rtol=1e-12)
    assert out.regimes[0] == "unchanged"  # theta_0 = b'^0 = 1 whatever the base
    assert set(out.regimes[1:]) == {"scaled"}


def test_ntk_d4_by_hand():
    # d = 4: b' = 10000 * 2 ** (4/2) = 40000; theta = [1, 40000 ** -0.5] = [1, 0.005]
    out = compute_inv_freq(base=10000.0, rotated_dim=4, scaling=RopeScaling("ntk", factor=2.0))
    assert out.base == pytest.approx(40000.0, rel=1e-15)
    close(out.inv_freq, [1.0, 0.005])


# --------------------------------------------------------------------------- dynamic
def test_dynamic_unchanged_at_or_below_original():
    sc = RopeScaling("dynamic", factor=2.0)
    for ctx in (None, 1, 999, 1000):
        out = compute_inv_freq(base=10000.0, rotated_dim=4, scaling=sc, max_position_embeddings=1000, context=ctx)
        close(out.inv_freq, [1.0, 0.01])
        assert out.base == 10000.0
        assert out.regimes == ("unchanged", "unchanged")


def test_dynamic_growth_formula_above_original():
    # d = 4, s = 2, L = 1000, C = 2000: b' = 10000 * (2 * 2000/1000 - (2 - 1)) ** (4/2) = 10000 * 3**2 = 90000
    # theta_1 = 90000 ** -0.5 = 1/300
    sc = RopeScaling("dynamic", factor=2.0)
    out = compute_inv_freq(base=10000.0, rotated_dim=4, scaling=sc, max_position_embeddings=1000, context=2000)
    assert out.base == pytest.approx(90000.0, rel=1e-14)
    close(out.inv_freq, [1.0, 1.0 / 300.0])
    assert out.regimes == ("unchanged", "scaled")
    assert out.original_context == 1000


def test_dynamic_uses_max_position_embeddings_as_original_like_hf():
    # HF's dynamic NTK ignores original_max_position_embeddings: L = max_position_embeddings = 1000 here,
    # so C = 2000 gives b' = 90000 as above (not (2*2000/500 - 1)**2 * 10000 = 490000).
    sc = RopeScaling("dynamic", factor=2.0, original_max_position_embeddings=500)
    out = compute_inv_freq(base=10000.0, rotated_dim=4, scaling=sc, max_position_embeddings=1000, context=2000)
    assert out.base == pytest.approx(90000.0, rel=1e-14)
    # ... and falls back to it when max_position_embeddings is unknown: (2*2000/500 - 1)**2 = 49
    out = compute_inv_freq(base=10000.0, rotated_dim=4, scaling=sc, context=2000)
    assert out.base == pytest.approx(490000.0, rel=1e-14)


def test_dynamic_context_without_any_original_length():
    with pytest.raises(ConfigError) as e:
        compute_inv_freq(base=10000.0, rotated_dim=4, scaling=RopeScaling("dynamic", factor=2.0), context=5000)
    assert e.value.key == "max_position_embeddings"


# --------------------------------------------------------------------------- yarn
def test_yarn_mscale_paper_values():
    # 0.1 ln 4 + 1 = 0.1 * 1.3862943611 + 1 = 1.1386294361
    # 0.1 ln 32 + 1 = 0.1 * 3.4657359028 + 1 = 1.3465735903
    assert yarn_get_mscale(4.0) == pytest.approx(1.1386294361, abs=1e-10)
    assert yarn_get_mscale(32.0) == pytest.approx(1.3465735903, abs=1e-10)
    assert yarn_get_mscale(1.0) == 1.0
    assert yarn_get_mscale(0.5) == 1.0
    for s, expected in ((4.0, 1.1386294361), (32.0, 1.3465735903)):
        out = compute_inv_freq(base=10000.0, rotated_dim=8,
                               scaling=RopeScaling("yarn", factor=s, original_max_position_embeddings=4096))
        assert out.attention_scaling == pytest.approx(expected, abs=1e-10)


def test_yarn_ramp_by_hand():
    # d = 8, b = 10000, L = 4096, s = 4, beta_fast 32, beta_slow 1.
    # corr(r) = d ln(L / (2 pi r)) / (2 ln b) = 4 ln(4096 / (2 pi r)) / ln(10000)
    #   corr(32) = 4 ln(20.371833) / 9.210340 = 4 * 3.014153 / 9.210340 = 1.309 -> floor 1
    #   corr(1)  = 4 ln(651.8986)  / 9.210340 = 4 * 6.479854 / 9.210340 = 2.814 -> ceil 3
    # ramp r_i = clip((i - 1) / (3 - 1), 0, 1) = [0, 0, 0.5, 1]
    # inv_i = theta_i/s * r_i + theta_i * (1 - r_i) = [1, 0.1, 0.01 * (0.5/4 + 0.5), 0.001/4]
    #       = [1, 0.1, 0.00625, 0.00025]
    sc = RopeScaling("yarn", factor=4.0, original_max_position_embeddings=4096)
    out = compute_inv_freq(base=10000.0, rotated_dim=8, scaling=sc)
    close(out.inv_freq, [1.0, 0.1, 0.00625, 0.00025])
    assert out.correction_range == (1.0, 3.0)
    close(out.ramp, [0.0, 0.0, 0.5, 1.0])
    assert out.regimes == ("extrapolated", "extrapolated", "blended", "interpolated")
    assert out.original_context == 4096


def test_yarn_unchanged_below_l_over_beta_fast_and_divided_above_l_over_beta_slow():
    # Realistic head: d = 128, b = 1e6, L = 32768, s = 4 (Qwen2.5 YaRN block).
    sc = RopeScaling.from_hf({"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768})
    out = compute_inv_freq(base=1e6, rotated_dim=128, scaling=sc, max_position_embeddings=131072)
    w = 2 * math.pi / out.original_inv_freq
    fast = w < 32768 / 32  # more than 32 rotations in the original context
    slow = w > 32768 / 1  # less than one rotation
    assert fast.any() and slow.any()
    np.testing.assert_array_equal(out.inv_freq[fast], out.original_inv_freq[fast])
    close(out.inv_freq[slow], out.original_inv_freq[slow] / 4.0, rtol=1e-15)
    assert all(r == "extrapolated" for r, f in zip(out.regimes, fast) if f)
    assert all(r == "interpolated" for r, sl in zip(out.regimes, slow) if sl)


def test_yarn_truncate_false_uses_unrounded_range():
    # Same setup as test_yarn_ramp_by_hand; without rounding low = corr(32), high = corr(1) and pair 2 gets
    # r_2 = (2 - corr(32)) / (corr(1) - corr(32)) (YaRN eq. 18 without HF's floor/ceil).
    c32 = 8 * math.log(4096 / (2 * math.pi * 32)) / (2 * math.log(10000))
    c1 = 8 * math.log(4096 / (2 * math.pi * 1)) / (2 * math.log(10000))
    r2 = (2 - c32) / (c1 - c32)
    assert 0.45 < r2 < 0.47
    sc = RopeScaling("yarn", factor=4.0, original_max_position_embeddings=4096, truncate=False)
    out = compute_inv_freq(base=10000.0, rotated_dim=8, scaling=sc)
    close(out.correction_range, (c32, c1))
    close(out.inv_freq[2], 0.01 * (r2 / 4 + (1 - r2)))
    close(out.inv_freq[:2], [1.0, 0.1])  # i = 0, 1 <= corr(32): still extrapolated


def test_yarn_attention_factor_deepseek_and_explicit():
    base = dict(rope_type="yarn", factor=10.0, original_max_position_embeddings=4096)
    # DeepSeek form: (0.1 * 2 * ln 10 + 1) / (0.1 * 1 * ln 10 + 1) = 1.4605170 / 1.2302585 = 1.187164...
    out = compute_inv_freq(base=10000.0, rotated_dim=8, scaling=RopeScaling(**base, mscale=2.0, mscale_all_dim=1.0))
    expected = (0.2 * math.log(10) + 1) / (0.1 * math.log(10) + 1)
    assert out.attention_scaling == pytest.approx(expected, rel=1e-14)
    assert expected == pytest.approx(1.18716, abs=1e-5)
    # DeepSeek-V3 ships mscale == mscale_all_dim -> ratio 1
    out = compute_inv_freq(base=10000.0, rotated_dim=8, scaling=RopeScaling(**base, mscale=1.0, mscale_all_dim=1.0))
    assert out.attention_scaling == 1.0
    # only one of the two set -> plain 0.1 ln s + 1 (HF: `if mscale and mscale_all_dim`)
    out = compute_inv_freq(base=10000.0, rotated_dim=8, scaling=RopeScaling(**base, mscale=0.707))
    assert out.attention_scaling == pytest.approx(0.1 * math.log(10) + 1, rel=1e-14)
    # explicit attention_factor wins over everything
    out = compute_inv_freq(base=10000.0, rotated_dim=8,
                           scaling=RopeScaling(**base, mscale=2.0, mscale_all_dim=1.0, attention_factor=0.5))
    assert out.attention_scaling == 0.5


def test_yarn_explicit_factor_not_rescaled_by_max_position_embeddings():
    # factor 4 with L = 4096 and max_position_embeddings = 65536 (implicit ratio 16): the explicit factor is used
    # (HF v4.5x / v5), so the interpolated pair is theta / 4, and mscale is 0.1 ln 4 + 1.
    sc = RopeScaling("yarn", factor=4.0, original_max_position_embeddings=4096)
    out = compute_inv_freq(base=10000.0, rotated_dim=8, scaling=sc, max_position_embeddings=65536)
    close(out.inv_freq[3], 0.001 / 4)
    assert out.attention_scaling == pytest.approx(1 + 0.1 * math.log(4), rel=1e-14)
    assert out.factor == 4.0


def test_yarn_original_falls_back_to_max_position_embeddings():
    # Without original_max_position_embeddings the correction range is computed with L = 4096 from
    # max_position_embeddings: same numbers as test_yarn_ramp_by_hand.
    out = compute_inv_freq(base=10000.0, rotated_dim=8, scaling=RopeScaling("yarn", factor=4.0),
                           max_position_embeddings=4096)
    close(out.inv_freq, [1.0, 0.1, 0.00625, 0.00025])
    with pytest.raises(ConfigError) as e:
        compute_inv_freq(base=10000.0, rotated_dim=8, scaling=RopeScaling("yarn", factor=4.0))
    assert e.value.key == "original_max_position_embeddings"


def test_yarn_correction_range_clips():
    # tiny original context: corr(32) < 0 -> low clipped to 0; huge one: high clipped to d - 1 = 7
    low, _ = yarn_correction_range(32, 1, 8, 10000.0, 16)
    assert low == 0.0
    _, high = yarn_correction_range(32, 1, 8, 10000.0, 10**12)
    assert high == 7.0


# --------------------------------------------------------------------------- llama3
def test_llama3_regimes_and_blend_by_hand():
    # d = 8, b = 10000, s = 8, low 1, high 4, L = 2048:
    # high-frequency edge L/high = 512, low-frequency edge L/low = 2048.
    # w = [6.28, 62.8, 628.3, 6283.2] -> unchanged, unchanged, smoothed, divided.
    # pair 2: g = (L / w_2 - low) / (high - low) = (2048 / 628.3185 - 1) / 3 = (3.2594932 - 1) / 3 = 0.7531644
    #         inv = (1 - g) * 0.01 / 8 + g * 0.01 = 0.01 * (0.125 + 0.875 g) = 0.0078401886
    # pair 3: 0.001 / 8 = 0.000125
    g = (2048 / (2 * math.pi * 100) - 1) / 3
    sc = RopeScaling("llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                     original_max_position_embeddings=2048)
    out = compute_inv_freq(base=10000.0, rotated_dim=8, scaling=sc, max_position_embeddings=131072)
    assert out.regimes == ("unchanged", "unchanged", "smoothed", "divided")
    close(out.inv_freq, [1.0, 0.1, (1 - g) * 0.01 / 8 + g * 0.01, 0.000125])
    assert out.inv_freq[2] == pytest.approx(0.0078401886, abs=1e-10)
    assert out.attention_scaling == 1.0


def test_llama3_real_config_bands():
    # Llama 3.1 8B: base 500000, d 128, s 8, low 1, high 4, L 8192.
    sc = RopeScaling.from_hf({"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                              "original_max_position_embeddings": 8192, "rope_type": "llama3"})
    out = compute_inv_freq(base=500000.0, rotated_dim=128, scaling=sc, max_position_embeddings=131072)
    w = 2 * math.pi / out.original_inv_freq
    short, long_ = w < 8192 / 4, w > 8192 / 1
    np.testing.assert_array_equal(out.inv_freq[short], out.original_inv_freq[short])
    close(out.inv_freq[long_], out.original_inv_freq[long_] / 8, rtol=1e-15)
    assert all(r == "unchanged" for r, m in zip(out.regimes, short) if m)
    assert all(r == "divided" for r, m in zip(out.regimes, long_) if m)
    assert "smoothed" in out.regimes


def test_llama3_defaults_supplied():
    # low 1, high 4, L 8192 supplied: same result as spelling them out
    explicit = RopeScaling("llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                           original_max_position_embeddings=8192)
    a = compute_inv_freq(base=500000.0, rotated_dim=128, scaling=RopeScaling("llama3", factor=8.0))
    b = compute_inv_freq(base=500000.0, rotated_dim=128, scaling=explicit)
    np.testing.assert_array_equal(a.inv_freq, b.inv_freq)
    assert a.original_context == 8192
    assert any("defaulted" in n for n in a.notes)


# --------------------------------------------------------------------------- longrope
LONGROPE = dict(rope_type="longrope", short_factor=(1.0, 2.0), long_factor=(4.0, 8.0),
                original_max_position_embeddings=4096)


def test_longrope_switches_strictly_above_original():
    # d = 4: base^(2i/d) = [1, 100]; inv = 1 / (ext * [1, 100])
    # short: [1/1, 1/(2*100)] = [1, 0.005]; long: [1/4, 1/(8*100)] = [0.25, 0.00125]
    sc = RopeScaling(**LONGROPE)
    kw = dict(base=10000.0, rotated_dim=4, scaling=sc, max_position_embeddings=131072)
    for ctx in (None, 1, 4096):
        out = compute_inv_freq(**kw, context=ctx)
        close(out.inv_freq, [1.0, 0.005])
        assert out.regimes == ("short", "short") and out.longrope_factors == "short"
    out = compute_inv_freq(**kw, context=4097)
    close(out.inv_freq, [0.25, 0.00125])
    assert out.regimes == ("long", "long") and out.longrope_factors == "long"


def test_longrope_attention_factor_formula():
    # Phi-3-mini-128k: L = 4096, max 131072 -> f = 32; sqrt(1 + ln 32 / ln 4096) = sqrt(1 + 5/12) = sqrt(17/12)
    # = 1.1902380714...
    expected = math.sqrt(17.0 / 12.0)
    assert longrope_attention_factor(32.0, 4096) == pytest.approx(expected, rel=1e-14)
    out = compute_inv_freq(base=10000.0, rotated_dim=4, scaling=RopeScaling(**LONGROPE), max_position_embeddings=131072)
    assert out.attention_scaling == pytest.approx(1.1902380714, abs=1e-10)
    assert out.factor == 32.0
    # f <= 1 -> 1.0
    out = compute_inv_freq(base=10000.0, rotated_dim=4, scaling=RopeScaling(**LONGROPE), max_position_embeddings=4096)
    assert out.attention_scaling == 1.0
    # explicit attention_factor wins
    out = compute_inv_freq(base=10000.0, rotated_dim=4, scaling=RopeScaling(**LONGROPE, attention_factor=1.5),
                           max_position_embeddings=131072)
    assert out.attention_scaling == 1.5


def test_longrope_original_falls_back_to_max_position_embeddings():
    # no original: L = max_position_embeddings = 4096, f = 1 -> attention 1, long factors only above 4096
    sc = RopeScaling("longrope", short_factor=(1.0, 2.0), long_factor=(4.0, 8.0))
    out = compute_inv_freq(base=10000.0, rotated_dim=4, scaling=sc, max_position_embeddings=4096, context=8000)
    assert out.original_context == 4096 and out.attention_scaling == 1.0
    close(out.inv_freq, [0.25, 0.00125])


def test_longrope_from_hf_phi3_block():
    block = {"type": "su", "short_factor": [1, 2], "long_factor": [4.0, 8]}
    sc = RopeScaling.from_hf(block)
    assert sc.rope_type == "longrope"
    assert sc.short_factor == (1.0, 2.0) and sc.long_factor == (4.0, 8.0)
    assert all(isinstance(x, float) for x in sc.short_factor)


# --------------------------------------------------------------------------- from_hf
def test_from_hf_none_and_default():
    assert RopeScaling.from_hf(None) == RopeScaling()
    assert RopeScaling.from_hf({}) == RopeScaling()
    assert RopeScaling.from_hf({"rope_type": "default"}).rope_type == "none"
    # a v5 rope_parameters dict carries rope_theta / partial_rotary_factor: ignored
    sc = RopeScaling.from_hf({"rope_type": "default", "rope_theta": 1e6, "partial_rotary_factor": 0.5})
    assert sc == RopeScaling()


def test_from_hf_type_accepted_as_rope_type():
    sc = RopeScaling.from_hf({"type": "linear", "factor": 2.0})
    assert sc == RopeScaling("linear", factor=2.0)
    # rope_type wins when both are present (HF)
    assert RopeScaling.from_hf({"type": "linear", "rope_type": "dynamic", "factor": 2}).rope_type == "dynamic"


def test_from_hf_yarn_deepseek_block():
    sc = RopeScaling.from_hf({"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
                              "original_max_position_embeddings": 4096, "type": "yarn"})
    assert sc.rope_type == "yarn" and sc.factor == 40.0 and sc.original_max_position_embeddings == 4096
    assert sc.to_hf()["rope_type"] == "yarn"
    assert RopeScaling.from_hf(sc.to_hf()) == sc


def test_from_hf_unknown_type_lists_valid_ones():
    for bad in ("xpos", "foo"):
        with pytest.raises(ConfigError) as e:
            RopeScaling.from_hf({"rope_type": bad})
        assert e.value.key == "rope_type"
        assert str(e.value).startswith("rope_type:")
        for name in SCALING_TYPES:
            assert name in str(e.value)


def test_from_hf_unknown_key_named_with_allowed_keys():
    with pytest.raises(ConfigError) as e:
        RopeScaling.from_hf({"rope_type": "linear", "factor": 2.0, "beta_fast": 32})
    assert e.value.key == "beta_fast"
    assert str(e.value).startswith("beta_fast:")
    assert "factor" in str(e.value)  # the allowed keys are listed


def test_from_hf_bad_value_kinds():
    with pytest.raises(ConfigError) as e:
        RopeScaling.from_hf({"rope_type": "linear", "factor": "2"})
    assert e.value.key == "factor"
    with pytest.raises(ConfigError) as e:
        RopeScaling.from_hf({"rope_type": "yarn", "factor": 2.0, "truncate": "no"})
    assert e.value.key == "truncate"
    with pytest.raises(ConfigError) as e:
        RopeScaling.from_hf({"rope_type": "longrope", "short_factor": [1, "x"], "long_factor": [1, 2]})
    assert e.value.key == "short_factor"
    with pytest.raises(ConfigError) as e:
        RopeScaling.from_hf(["linear"])  # type: ignore[arg-type]
    assert e.value.key == "rope_scaling"


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize("rope_type", ["linear", "ntk", "dynamic", "yarn", "llama3"])
def test_factor_below_one_rejected(rope_type):
    with pytest.raises(ConfigError) as e:
        compute_inv_freq(base=10000.0, rotated_dim=8, scaling=RopeScaling(rope_type, factor=0.5),
                         max_position_embeddings=131072)
    assert e.value.key == "factor" and str(e.value).startswith("factor:")
    assert ">= 1" in str(e.value)


@pytest.mark.parametrize("rope_type", ["linear", "ntk", "dynamic", "yarn", "llama3"])
def test_factor_required(rope_type):
    with pytest.raises(ConfigError) as e:
        RopeScaling(rope_type).validate(rotated_dim=8, max_position_embeddings=131072)
    assert e.value.key == "factor"


def test_beta_fast_must_exceed_beta_slow():
    for fast, slow in ((1.0, 1.0), (1.0, 2.0)):
        with pytest.raises(ConfigError) as e:
            RopeScaling("yarn", factor=4.0, beta_fast=fast, beta_slow=slow).validate(
                rotated_dim=8, max_position_embeddings=4096)
        assert e.value.key == "beta_fast" and "beta_slow" in str(e.value)
    # against the defaults: beta_slow 40 > default beta_fast 32
    with pytest.raises(ConfigError):
        RopeScaling("yarn", factor=4.0, beta_slow=40.0).validate(rotated_dim=8, max_position_embeddings=4096)


def test_llama3_low_must_not_exceed_high():
    with pytest.raises(ConfigError) as e:
        RopeScaling("llama3", factor=8.0, low_freq_factor=4.0, high_freq_factor=2.0).validate(
            rotated_dim=8, max_position_embeddings=131072)
    assert e.value.key == "high_freq_factor" and "low_freq_factor" in str(e.value)


def test_llama3_equal_band_edges_cut_sharply_as_llama4_scout():
    # Llama 4 Scout: base 5e5, head dim 128, factor 16, low = high = 1, original 8192. With no band
    # between the edges, a pair is divided by 16 when its wavelength 2π/θ_i exceeds 8192 / 1, else kept:
    # ln(8192 / 2π) / ln(5e5) · 64 = 34.98, so pairs 35 … 63 are divided.
    scheme = build_scheme("rope", {"dim": 128, "base": 500000.0, "max_position_embeddings": 10485760, "rope_scaling": {
        "rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0, "high_freq_factor": 1.0,
        "original_max_position_embeddings": 8192}})
    theta = 500000.0 ** (-np.arange(64) / 64)
    expected = np.where(np.arange(64) >= 35, theta / 16, theta)
    np.testing.assert_allclose(scheme.inv_freq, expected, rtol=1e-12)


def test_llama3_original_not_below_max_position_embeddings_is_computed_with_a_note():
    # transformers 5.24 (_validate_llama3_rope_parameters) only warns when original >= max_position_embeddings
    scaling = RopeScaling("llama3", factor=8.0, original_max_position_embeddings=8192)
    scaling.validate(rotated_dim=8, max_position_embeddings=8192)
    scheme = RopeScheme(dim=8, base=100.0, max_position_embeddings=8192, rope_scaling=scaling)
    theta = 100.0 ** (-np.arange(0, 8, 2) / 8)
    wavelength = 2 * np.pi / theta  # 6.3, 19.9, 62.8, 198.7: all below 8192 / 4, so unchanged
    assert (wavelength < 8192 / 4).all()
    np.testing.assert_allclose(scheme.inv_freq, theta, rtol=1e-15)
    assert any("not below max_position_embeddings 8192" in note for note in scheme.frequencies.notes)


def test_a_llama3_config_without_its_original_length_takes_the_models_as_transformers_5_does():
    # transformers 5.24 standardize_rope_params: for llama3, yarn and longrope blocks,
    # rope_parameters.setdefault("original_max_position_embeddings", config.max_position_embeddings)
    from pecli.models.families.from_config import plan_of

    config = json.loads((SAMPLES / "meta-llama--llama-3.1-8b.json").read_text())
    del config["rope_scaling"]["original_max_position_embeddings"]
    inv = plan_of(config, "config.json").groups[0].encoding.inv_freq
    theta = 500000.0 ** (-np.arange(0, 128, 2) / 128)
    wavelength, original, low, high, s = 2 * np.pi / theta, 131072, 1.0, 4.0, 8.0
    smooth = (original / wavelength - low) / (high - low)  # Meta's apply_scaling
    expected = np.where(wavelength < original / high, theta,
                        np.where(wavelength > original / low, theta / s, (1 - smooth) * theta / s + smooth * theta))
    np.testing.assert_allclose(inv, expected, rtol=1e-12)
    assert not np.allclose(inv, plan_of(json.loads((SAMPLES / "meta-llama--llama-3.1-8b.json").read_text()),
                                        "config.json").groups[0].encoding.inv_freq)  # 8192 would differ


def test_longrope_factor_list_length():
    # d = 8 -> 4 entries needed
    with pytest.raises(ConfigError) as e:
        RopeScaling(**LONGROPE).validate(rotated_dim=8, max_position_embeddings=131072)
    assert e.value.key == "short_factor" and "4" in str(e.value)
    sc = RopeScaling("longrope", short_factor=(1.0,) * 4, long_factor=(1.0,) * 3,
                     original_max_position_embeddings=4096)
    with pytest.raises(ConfigError) as e:
        sc.validate(rotated_dim=8, max_position_embeddings=131072)
    assert e.value.key == "long_factor"


def test_longrope_missing_lists():
    with pytest.raises(ConfigError) as e:
        RopeScaling("longrope", long_factor=(1.0, 1.0)).validate(rotated_dim=4, max_position_embeddings=4096)
    assert e.value.key == "short_factor"


def test_field_not_used_by_type_rejected():
    with pytest.raises(ConfigError) as e:
        RopeScaling("linear", factor=2.0, short_factor=(1.0, 1.0)).validate(rotated_dim=4, max_position_embeddings=None)
    assert e.value.key == "short_factor"


def test_unknown_type_in_dataclass():
    with pytest.raises(ConfigError) as e:
        compute_inv_freq(base=10000.0, rotated_dim=4, scaling=RopeScaling("xpos"))
    assert e.value.key == "rope_type"


def test_default_alias_in_dataclass():
    assert RopeScaling("default").rope_type == "none"


@pytest.mark.parametrize("bad", [0, 3, -2, 2.0, True])
def test_rotated_dim_must_be_even_positive_int(bad):
    with pytest.raises(ConfigError) as e:
        compute_inv_freq(base=10000.0, rotated_dim=bad)
    assert e.value.key == "rotated_dim"


def test_bad_base_and_context():
    with pytest.raises(ConfigError) as e:
        compute_inv_freq(base=-1.0, rotated_dim=4)
    assert e.value.key == "base"
    with pytest.raises(ConfigError) as e:
        compute_inv_freq(base=10000.0, rotated_dim=4, context=0)
    assert e.value.key == "context"


# --------------------------------------------------------------------------- properties
def test_yarn_and_llama3_stay_between_interpolation_and_extrapolation():
    # hypothesis is imported here rather than with the module: every test process imports every test
    # module to collect it, and only the one running this test needs hypothesis.
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=60, deadline=None)
    @given(
        s=st.floats(min_value=1.0, max_value=64.0),
        half=st.integers(min_value=2, max_value=64),
        base=st.floats(min_value=100.0, max_value=1e7),
        original=st.integers(min_value=64, max_value=1 << 17),
    )
    def between(s, half, base, original):
        d = 2 * half
        theta = default_inv_freq(base, d)
        for sc in (RopeScaling("yarn", factor=s, original_max_position_embeddings=original),
                   RopeScaling("llama3", factor=s, original_max_position_embeddings=original)):
            out = compute_inv_freq(base=base, rotated_dim=d, scaling=sc)
            assert np.all(out.inv_freq <= theta * (1 + 1e-12))
            assert np.all(out.inv_freq >= theta / s * (1 - 1e-12))

    between()


def test_mrope_has_the_default_frequencies():
    # HF's Qwen2-VL configuration maps rope_type "mrope" to "default"; the sections only choose which
    # position id (t, h, w) each pair rotates by.
    scaling = RopeScaling.from_hf({"type": "mrope", "mrope_section": [16, 24, 24]})
    assert scaling.rope_type == "none"
