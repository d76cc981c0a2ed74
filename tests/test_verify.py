"""pecli verify: planted bugs, each built from the formulas themselves (not from pecli), recognised
with the right code and no other; correct arrays pass, transformers' float32 pipeline too."""

from __future__ import annotations

import json
import math

import ml_dtypes
import numpy as np
import pytest

from pecli.verification.rope import verify_rope
from pecli.config import build_scheme

POSITIONS = np.arange(0, 4096, 7)
LLAMA31 = {"dim": 128, "base": 500000.0, "max_position_embeddings": 131072, "rope_scaling": {
    "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192}}


def ladder(base: float, rotated: int) -> np.ndarray:
    """θ_i = base^(−2i/r)."""
    return base ** (-np.arange(0, rotated, 2) / rotated)


def llama3(theta: np.ndarray) -> np.ndarray:
    """Meta's apply_scaling: by wavelength 2π/θ against 8192/4 and 8192/1, factor 8, smoothed between."""
    wavelength = 2 * np.pi / theta
    smooth = (8192 / wavelength - 1.0) / (4.0 - 1.0)
    return np.where(wavelength > 8192, theta / 8, np.where(wavelength < 8192 / 4, theta, (1 - smooth) * theta / 8 + smooth * theta))


def yarn(theta: np.ndarray, rotated: int, base: float, factor: float, original: int) -> np.ndarray:
    """YaRN's frequencies (Peng et al. 2023): ramp between the correction dims of β = 32 and β = 1."""
    def correction(rotations: float) -> float:
        return rotated * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low, high = max(math.floor(correction(32)), 0), min(math.ceil(correction(1)), rotated - 1)
    ramp = np.clip((np.arange(rotated // 2) - low) / (high - low), 0, 1)
    return theta / factor * ramp + theta * (1 - ramp)


def half(inv_freq: np.ndarray, positions=POSITIONS, scale: float = 1.0):
    angles = np.outer(positions, inv_freq)
    angles = np.concatenate([angles, angles], axis=1)
    return np.cos(angles) * scale, np.sin(angles) * scale


def codes(cos, sin, scheme, positions=POSITIONS) -> list[str]:
    report = verify_rope(cos, sin, scheme, positions)
    assert not report.match
    return [d.code for d in report.diagnosis]


@pytest.fixture(scope="module")
def llama():
    return build_scheme("rope", LLAMA31)


def test_correct_arrays_and_transformers_float32_pipeline_match(llama):
    inv_freq = llama3(ladder(500000.0, 128))
    assert verify_rope(*half(inv_freq), llama, POSITIONS).match
    # float32 inverse frequencies times float32 positions, cos and sin in float32, as transformers does
    angles = POSITIONS.astype(np.float32)[:, None] * inv_freq.astype(np.float32)[None, :]
    angles = np.concatenate([angles, angles], axis=1)
    report = verify_rope(np.cos(angles), np.sin(angles), llama, POSITIONS)
    assert report.match and 1e-5 < report.max_abs_error < 1e-3  # the error the float32 angles carry, reported


def test_each_planted_bug_is_named_alone(llama):
    inv_freq = llama3(ladder(500000.0, 128))
    cos, sin = half(inv_freq)
    interleaved = np.repeat(np.outer(POSITIONS, inv_freq), 2, axis=1)
    assert codes(np.cos(interleaved), np.sin(interleaved), llama) == ["layout"]
    assert codes(*half(inv_freq, POSITIONS + 1), llama) == ["position-offset"]
    assert codes(cos, -sin, llama) == ["sin-sign"]
    # the scaling never applied: the unscaled ladder — a scaling, not a base, is blamed
    assert codes(*half(ladder(500000.0, 128)), llama) == ["scaling"]
    # angles formed in bfloat16: positions and frequencies rounded, their product rounded again
    bf16 = ml_dtypes.bfloat16
    angles = (POSITIONS.astype(bf16)[:, None] * inv_freq.astype(bf16)[None, :]).astype(bf16).astype(np.float64)
    angles = np.concatenate([angles, angles], axis=1)
    assert codes(np.cos(angles), np.sin(angles), llama) == ["precision"]


def test_a_wrong_base_is_named_with_the_base_that_fits():
    scheme = build_scheme("rope", {"dim": 128, "base": 10000.0})
    report = verify_rope(*half(ladder(500000.0, 128)), scheme, POSITIONS)
    assert [d.code for d in report.diagnosis] == ["base"] and "500,000" in report.diagnosis[0].message


def test_yarn_without_its_attention_factor():
    # Yarn-Llama-2-7b-64k: base 10,000, d = 128, factor 16 over 4,096; attention factor 0.1 ln 16 + 1.
    scheme = build_scheme("rope", {"dim": 128, "base": 10000.0, "max_position_embeddings": 65536,
                                   "rope_scaling": {"rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 4096}})
    inv_freq = yarn(ladder(10000.0, 128), 128, 10000.0, 16.0, 4096)
    assert verify_rope(*half(inv_freq, scale=0.1 * math.log(16) + 1), scheme, POSITIONS).match
    assert codes(*half(inv_freq), scheme) == ["attention-scaling"]


def test_phi2_rotating_the_whole_head():
    # Phi-2: head 80, partial_rotary_factor 0.4: 32 components turn on base^(−2i/32).
    scheme = build_scheme("rope", {"dim": 80, "base": 10000.0, "partial_rotary_factor": 0.4})
    assert verify_rope(*half(ladder(10000.0, 32)), scheme, POSITIONS).match
    assert codes(*half(ladder(10000.0, 80)), scheme) == ["rotary-dim"]


def test_random_arrays_get_no_cause(llama):
    rng = np.random.default_rng(0)
    shape = (len(POSITIONS), 128)
    report = verify_rope(rng.normal(size=shape), rng.normal(size=shape), llama, POSITIONS)
    assert not report.match and report.diagnosis == () and "no known cause" in report.notes[0]


@pytest.fixture
def arrays(tmp_path):
    inv_freq = ladder(500000.0, 128)
    cos, sin = half(inv_freq, np.arange(64))
    paths = {}
    for name, array in {"cos": cos, "sin": sin, "bad": cos[:, :7], "nan": np.full_like(cos, np.nan), "short": cos[:10]}.items():
        paths[name] = tmp_path / f"{name}.npy"
        np.save(paths[name], array)
    return paths


def test_verify_command_exit_codes_and_json(invoke, arrays):
    same = invoke("verify", "--dim", "128", "--base", "500000", "--cos", arrays["cos"], "--sin", arrays["sin"], "--json")
    assert same.exit_code == 0 and json.loads(same.stdout)["match"] is True
    other = invoke("verify", "--dim", "128", "--base", "10000", "--cos", arrays["cos"], "--sin", arrays["sin"], "--json")
    document = json.loads(other.stdout)
    assert other.exit_code == 1 and [d["code"] for d in document["diagnosis"]] == ["base"]
    assert set(document) >= {"match", "max_abs_error", "worst", "diagnosis"}


@pytest.mark.parametrize(("cos", "sin", "words"), [
    ("bad", "bad", "7 wide"), ("cos", "short", "must be the same"),
])
def test_verify_bad_input_is_one_line(run_main, arrays, cos, sin, words):
    result = run_main("verify", "--dim", "128", "--cos", arrays[cos], "--sin", arrays[sin])
    assert result.returncode == 2 and words in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_verify_non_finite_values_differ(run_main, arrays):
    # NaN is a wrong value, not a malformed file: the arrays differ (exit 1), and a note says where
    result = run_main("verify", "--dim", "128", "--base", "500000", "--cos", arrays["nan"], "--sin", arrays["sin"])
    assert result.returncode == 1 and "NaN or ±inf at position 0" in result.stdout


def test_verify_positions_of_another_length(run_main, arrays):
    result = run_main("verify", "--dim", "128", "--cos", arrays["cos"], "--sin", arrays["sin"], "--positions", "0:10")
    assert result.returncode == 2 and "64 rows and the positions are 10" in result.stderr


def test_assert_rope_close_for_users_test_suites():
    from pecli.testing import assert_rope_close

    llama = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 2,
             "rope_theta": 500000.0, "max_position_embeddings": 8192}
    positions = np.arange(256)
    assert_rope_close(*half(ladder(500000.0, 128), positions), hf_config=llama, positions=positions)
    with pytest.raises(AssertionError, match="sin-sign"):
        cos, sin = half(ladder(500000.0, 128), positions)
        assert_rope_close(cos, -sin, hf_config=llama)


def test_inverse_frequencies_and_their_causes():
    from pecli.verification.arrays import verify_inv_freq

    llama = build_scheme("rope", LLAMA31)
    theta = ladder(500000.0, 128)
    assert verify_inv_freq(llama3(theta), llama).match
    assert verify_inv_freq(llama3(theta).astype(np.float32), llama).match  # float32 values, to float32's precision
    assert [d.code for d in verify_inv_freq(theta, llama).diagnosis] == ["scaling"]
    report = verify_inv_freq(theta, build_scheme("rope", {"dim": 128, "base": 10000.0}))
    assert [d.code for d in report.diagnosis] == ["base"] and "500,000" in report.diagnosis[0].message
    phi = build_scheme("rope", {"dim": 80, "base": 10000.0, "partial_rotary_factor": 0.4})
    assert [d.code for d in verify_inv_freq(ladder(10000.0, 80), phi).diagnosis] == ["rotary-dim"]


def test_alibi_slopes_and_their_causes():
    # 12 heads: 2^-1 … 2^-8 from the 8-head ladder, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5 (Press et al.'s code).
    from pecli.verification.arrays import verify_slopes

    twelve = build_scheme("alibi", {"heads": 12})
    right = np.concatenate([2.0 ** -np.arange(1, 9), 2.0 ** -np.array([0.5, 1.5, 2.5, 3.5])])
    assert verify_slopes(right, twelve).match
    assert [d.code for d in verify_slopes(2.0 ** (-8.0 * np.arange(1, 13) / 12), twelve).diagnosis] == ["slope-rule"]
    assert [d.code for d in verify_slopes(right[::-1], twelve).diagnosis] == ["order"]


def test_verify_takes_the_inputs_of_its_scheme(invoke, tmp_path):
    slopes = tmp_path / "slopes.npy"
    np.save(slopes, 2.0 ** -np.arange(1, 9))
    ok = invoke("verify", "--scheme", "alibi", "--heads", "8", "--slopes", slopes, "--quiet")
    assert ok.exit_code == 0, ok.stderr
    wrong = invoke("verify", "--scheme", "alibi", "--heads", "8", "--cos", slopes)
    assert wrong.exit_code == 2 and "alibi is verified from --slopes" in wrong.stderr


def test_sinusoidal_tables_and_their_causes():
    # Marian's table: sines then cosines of p·10000^(−2i/d); Whisper spaces them 10000^(−i/(d/2−1)).
    from pecli.verification.arrays import verify_table

    positions = np.arange(64)
    marian = build_scheme("sinusoidal", {"dim": 16, "layout": "half"})
    angles = np.outer(positions, 10000.0 ** (-np.arange(0, 16, 2) / 16))
    assert verify_table(np.hstack([np.sin(angles), np.cos(angles)]), marian, positions).match
    paper = np.empty((64, 16))
    paper[:, 0::2], paper[:, 1::2] = np.sin(angles), np.cos(angles)
    assert [d.code for d in verify_table(paper, marian, positions).diagnosis] == ["layout"]
    whisper = np.outer(positions, np.exp(-math.log(10000.0) * np.arange(8) / 7))
    assert [d.code for d in verify_table(np.hstack([np.sin(whisper), np.cos(whisper)]), marian, positions).diagnosis] == ["spacing"]
    shifted = np.outer(positions + 2, 10000.0 ** (-np.arange(0, 16, 2) / 16))
    assert [d.code for d in verify_table(np.hstack([np.sin(shifted), np.cos(shifted)]), marian, positions).diagnosis] == ["position-offset"]


def test_t5_buckets_and_their_causes():
    # The T5 rule written out for 32 buckets, distance 128, causal: key − query n ≤ 0 → −n exact below
    # 16, then 16 + ⌊ln(−n/16) / ln(128/16) · 16⌋ capped at 31; keys after the query share bucket 0.
    from pecli.verification.arrays import verify_buckets

    positions = np.arange(200)
    n = positions[None, :] - positions[:, None]
    distance = np.maximum(-n, 0)
    large = 16 + (np.log(np.maximum(distance, 1) / 16) / math.log(128 / 16) * 16).astype(np.int64)
    causal = np.where(distance < 16, distance, np.minimum(large, 31))
    decoder = build_scheme("t5", {"bidirectional": False})
    assert verify_buckets(causal, decoder, positions).match
    assert [d.code for d in verify_buckets(causal.T, decoder, positions).diagnosis] == ["sign"]
    encoder = build_scheme("t5", {"bidirectional": True})
    assert [d.code for d in verify_buckets(causal, encoder, positions).diagnosis] == ["direction"]


def test_verify_reads_the_archive_encode_writes(invoke, tmp_path):
    # `pecli encode -o x.npz` writes cos and sin under those names: verify takes them from the archive.
    archive = tmp_path / "x.npz"
    assert invoke("encode", "--scheme", "rope", "--dim", "64", "-L", "32", "-o", archive, "--dtype", "float32", "--quiet").exit_code == 0
    same = invoke("verify", "--dim", "64", "--cos", archive, "--sin", archive, "--quiet")
    assert same.exit_code == 0, same.stderr
    swapped = invoke("verify", "--dim", "64", "--cos", f"{archive}:sin", "--sin", f"{archive}:cos", "--quiet")
    assert swapped.exit_code == 1
    missing = invoke("verify", "--dim", "64", "--cos", f"{archive}:nope", "--sin", archive)
    assert missing.exit_code == 2 and "has no array 'nope'" in missing.stderr


def test_alibi_bias_up_to_a_constant_per_query():
    # The paper's causal m·(j − i) masked above the diagonal, BLOOM's broadcast m·j and −m·|i − j| all pass.
    from pecli.verification.arrays import verify_bias

    slopes, length = 2.0 ** -np.arange(1, 9), 16
    i, j = np.arange(length)[:, None], np.arange(length)[None, :]
    scheme = build_scheme("alibi", {"heads": 8})
    assert verify_bias(np.where(j <= i, slopes[:, None, None] * (j - i), -np.inf), scheme).match
    assert verify_bias((slopes[:, None] * np.arange(length))[:, None, :], scheme).match
    symmetric = -slopes[:, None, None] * np.abs(i - j)
    assert verify_bias(symmetric, scheme).match
    assert [d.code for d in verify_bias(-symmetric, scheme).diagnosis] == ["sign"]
    assert [d.code for d in verify_bias(symmetric[::-1], scheme).diagnosis] == ["order"]


def test_assert_encoding_close_for_other_schemes():
    from pecli.testing import assert_encoding_close

    bloom = {"model_type": "bloom", "n_head": 8, "hidden_size": 64, "n_layer": 2}
    assert_encoding_close(hf_config=bloom, slopes=2.0 ** -np.arange(1, 9))
    with pytest.raises(AssertionError, match="order"):
        assert_encoding_close(hf_config=bloom, slopes=2.0 ** -np.arange(8, 0, -1))
