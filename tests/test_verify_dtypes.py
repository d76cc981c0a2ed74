"""pecli verify across the dtypes values are stored in, at any positions, with the model's scaling kept.

Every array is built here from the formulas (θ_i = b^(−2i/r), Meta's llama3 rule, YaRN's ramp, the
dynamic-NTK base, float32/float16/bfloat16 rounding through NumPy and ml_dtypes), never from pecli: no
random, all-zero or buggy array passes, every correct array passes in its dtype, and the cause named
is the planted one.
"""

from __future__ import annotations

import json
import math
import os
import warnings

import ml_dtypes
import numpy as np
import pytest

from pecli.verification.arrays import verify_arrays
from pecli.config import build_scheme
from test_verify import LLAMA31, ladder, llama3  # the formulas, written once for both files

BF16 = ml_dtypes.bfloat16


def yarn(base: float, rotated: int, factor: float, original: int) -> np.ndarray:
    """YaRN's frequencies (Peng et al., "YaRN: Efficient Context Window Extension of Large Language
    Models"): interpolated below the correction dim of β = 32 rotations, kept above that of β = 1."""
    def correction(rotations: float) -> float:
        return rotated * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low, high = max(math.floor(correction(32)), 0), min(math.ceil(correction(1)), rotated - 1)
    ramp = np.clip((np.arange(rotated // 2) - low) / (high - low), 0, 1)
    theta = ladder(base, rotated)
    return theta / factor * ramp + theta * (1 - ramp)


def half(inv_freq: np.ndarray, positions: np.ndarray, scale: float = 1.0, dtype=np.float64):
    """HF's caches: concat(cos pθ, cos pθ) and the same for sin, times ``scale``, rounded to ``dtype``."""
    angles = np.outer(positions, inv_freq)
    cos, sin = (np.cos(angles) * scale).astype(dtype), (np.sin(angles) * scale).astype(dtype)
    return np.concatenate([cos, cos], axis=1), np.concatenate([sin, sin], axis=1)  # each half computed once


def float32_pipeline(inv_freq: np.ndarray, positions: np.ndarray, dtype=np.float32):
    """transformers' way: float32 inverse frequencies times float32 positions, cos and sin in float32,
    then cast to the model's dtype."""
    angles = positions.astype(np.float32)[:, None] * inv_freq.astype(np.float32)[None, :]
    cos, sin = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
    return np.concatenate([cos, cos], axis=1), np.concatenate([sin, sin], axis=1)


def verdict(scheme, cos, sin, positions=None):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning: overflowing angles are a mismatch, quietly
        return verify_arrays(scheme, positions, cos=cos, sin=sin)


def codes(report) -> list[str]:
    assert not report.match
    return [d.code for d in report.diagnosis]


@pytest.fixture(scope="module")
def llama():
    return build_scheme("rope", LLAMA31)


# -- nothing random, empty or buggy passes ---------------------------------------------------------------
@pytest.mark.parametrize(("start", "stop", "dtype"), [
    (256, 768, np.float16), (300, 332, np.float16), (100_000, 100_010, np.float16), (3_000_000, 3_000_032, np.float32),
    (3_000_000, 3_000_032, BF16), (2**24 + 5, 2**24 + 40, np.float32),
])
def test_random_and_all_zero_arrays_never_pass(llama, start, stop, dtype):
    rng = np.random.default_rng(start)
    positions = np.arange(start, stop)
    shape = (len(positions), 128)
    random = verdict(llama, rng.uniform(-1, 1, shape).astype(dtype), rng.uniform(-1, 1, shape).astype(dtype), positions)
    assert codes(random) == [] and "no known cause" in random.notes[-1]
    zero = verdict(llama, np.zeros(shape, dtype), np.zeros(shape, dtype), positions)
    assert codes(zero) == [] and zero.max_abs_error >= math.sqrt(0.5)  # max(|cos|, |sin|) of every pair
    assert zero.tolerance <= 0.5 and random.ratio_tolerance <= 0.5  # the cap, well under the largest error 2


def test_a_correct_float32_pipeline_at_three_million_passes_within_the_cap(llama):
    # float32 angles at p = 3·10⁶ are off by up to a few tenths of a radian: real, allowed, under the cap
    positions = np.arange(3_000_000, 3_000_032)
    report = verdict(llama, *float32_pipeline(llama3(ladder(500000.0, 128)), positions), positions)
    assert report.match and 0.01 < report.max_abs_error <= 0.5


def test_llama31_without_its_scaling_in_float16_fails_and_names_scaling(llama):
    positions = np.arange(4096)
    report = verdict(llama, *half(ladder(500000.0, 128), positions, dtype=np.float16))
    assert codes(report) == ["scaling"] and report.values == "float16"
    # the largest |Δ| is the largest, wherever the worst error-to-tolerance ratio is
    angles = np.outer(positions, ladder(500000.0, 128)) - np.outer(positions, llama3(ladder(500000.0, 128)))
    true_max = np.max(np.maximum(np.abs(np.cos(np.outer(positions, ladder(500000.0, 128))) -
                                        np.cos(np.outer(positions, llama3(ladder(500000.0, 128))))),
                                 np.abs(np.sin(np.outer(positions, ladder(500000.0, 128))) -
                                        np.sin(np.outer(positions, llama3(ladder(500000.0, 128)))))))
    assert np.abs(angles).max() > 1 and abs(report.max_abs_error - true_max) < 2e-3  # float16's rounding
    assert report.ratio is not None and report.ratio > 1


def test_non_finite_values_are_a_mismatch_never_skipped(llama):
    cos, sin = half(llama3(ladder(500000.0, 128)), np.arange(64))
    cos[10, 3] = np.nan
    report = verdict(llama, cos, sin)
    assert not report.match and report.max_abs_error == math.inf and "NaN or ±inf at position 10" in report.notes[0]
    # float16 angles overflow past 65,504: the float16 candidate's NaN blocks explain nothing
    positions = np.arange(100_000, 100_010)
    rng = np.random.default_rng(3)
    random = verdict(llama, *(rng.uniform(-1, 1, (10, 128)).astype(np.float16) for _ in range(2)), positions)
    assert codes(random) == []


# -- every correct array passes in its dtype ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, BF16, "bfloat16-widened"])
def test_correct_arrays_pass_in_their_dtype(llama, dtype):
    positions = np.arange(0, 16384, 5)
    inv_freq = llama3(ladder(500000.0, 128))
    if dtype == "bfloat16-widened":  # a bfloat16 model's cos and sin, saved widened to float32
        cos, sin = (a.astype(np.float32) for a in float32_pipeline(inv_freq, positions, BF16))
        expected = "bfloat16"
    else:
        cos, sin = float32_pipeline(inv_freq, positions, dtype) if dtype != np.float64 else half(inv_freq, positions)
        expected = np.dtype(dtype).name
    report = verdict(llama, cos, sin, positions)
    assert report.match and report.values == expected


def test_float32_values_that_are_not_all_bfloat16_are_held_to_float32(llama):
    positions = np.arange(512)
    cos, sin = half(llama3(ladder(500000.0, 128)), positions, dtype=BF16)
    cos, sin = cos.astype(np.float32), sin.astype(np.float32)
    cos[-1, 5] += 2.0**-12  # one value bfloat16 cannot hold: float32 storage, off by far more than float32's rounding
    report = verdict(llama, cos, sin)
    assert not report.match and report.values == "float32"


# -- the right cause, at any positions, scaling kept ----------------------------------------------------------
@pytest.mark.parametrize("base", [10000.0, 1e6])
def test_a_wrong_base_under_the_llama3_scaling_is_named(llama, base):
    positions = np.arange(2048)
    report = verdict(llama, *half(llama3(ladder(base, 128)), positions, dtype=np.float32))
    assert codes(report) == ["base"] and f"{base:,.6g}" in report.diagnosis[0].message and "llama3" in report.diagnosis[0].message


@pytest.mark.parametrize("positions", [np.arange(0, 4096, 16), np.arange(8, 520), np.arange(100, 612),
                                       np.array([3, 50, 51, 700, 701, 2000, 4000, 4003])])
def test_a_wrong_base_at_strided_late_or_sparse_positions(positions):
    # Gemma 3's sliding layers turn at base 10,000 (head 256); arrays made with the global layers' 1e6
    sliding = build_scheme("rope", {"dim": 256, "base": 10000.0})
    report = verdict(sliding, *half(ladder(1e6, 256), positions, dtype=np.float32), positions)
    assert codes(report) == ["base"] and "fit base 1e+06" in report.diagnosis[0].message


def test_dynamic_ntk_names_the_effective_base_at_that_context():
    # HF's dynamic NTK: base·((factor·L/L₀) − (factor − 1))^(d/(d−2)) at sequence length L past L₀
    scheme = build_scheme("rope", {"dim": 128, "base": 10000.0, "max_position_embeddings": 2048,
                                   "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}})
    positions = np.arange(4096)
    effective = 10000.0 * (2.0 * 4096 / 2048 - 1.0) ** (128 / 126)
    assert verdict(scheme, *half(ladder(effective, 128), positions, dtype=np.float32)).match
    assert codes(verdict(scheme, *half(ladder(10000.0, 128), positions, dtype=np.float32))) == ["scaling"]
    report = verdict(scheme, *half(ladder(20000.0, 128), positions, dtype=np.float32))
    assert codes(report) == ["base"] and f"{effective:,.6g}" in report.diagnosis[0].message


def test_yarn_attention_factor_and_base_at_strided_positions():
    # Yarn-Llama-2-7b-64k: factor 16 over 4,096, attention factor 0.1·ln 16 + 1
    scheme = build_scheme("rope", {"dim": 128, "base": 10000.0, "max_position_embeddings": 65536, "rope_scaling": {
        "rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 4096}})
    positions, factor = np.arange(0, 65536, 64), 0.1 * math.log(16) + 1
    inv_freq = yarn(10000.0, 128, 16.0, 4096)
    assert verdict(scheme, *half(inv_freq, positions, factor, BF16), positions).match
    assert codes(verdict(scheme, *half(inv_freq, positions, 1.0, np.float16), positions)) == ["attention-scaling"]
    doubled = verdict(scheme, *half(inv_freq, positions, factor**2, np.float32), positions)
    assert codes(doubled) == ["attention-scaling"] and f"{factor**2:.6g}" in doubled.diagnosis[0].message
    rebased = verdict(scheme, *half(yarn(1e6, 128, 16.0, 4096), positions, factor, np.float32), positions)
    assert codes(rebased) == ["base"] and "yarn" in rebased.diagnosis[0].message


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16])
def test_structural_bugs_at_late_strided_positions_in_each_dtype(dtype):
    scheme = build_scheme("rope", {"dim": 128, "base": 500000.0})
    positions = np.arange(5000, 9000, 5)
    theta = ladder(500000.0, 128)
    interleaved = np.repeat(np.outer(positions, theta), 2, axis=1)
    assert codes(verdict(scheme, np.cos(interleaved).astype(dtype), np.sin(interleaved).astype(dtype), positions)) == ["layout"]
    assert codes(verdict(scheme, *half(theta, positions + 1, dtype=dtype), positions)) == ["position-offset"]
    cos, sin = half(theta, positions, dtype=dtype)
    assert codes(verdict(scheme, cos, -sin, positions)) == ["sin-sign"]


def test_phi2_whole_head_rotated_in_float16_at_late_positions():
    scheme = build_scheme("rope", {"dim": 80, "base": 10000.0, "partial_rotary_factor": 0.4})
    positions = np.arange(1000, 3000, 3)
    assert codes(verdict(scheme, *half(ladder(10000.0, 80), positions, dtype=np.float16), positions)) == ["rotary-dim"]
    cos, sin = half(ladder(10000.0, 32), positions)
    wide_cos, wide_sin = np.hstack([cos, np.ones((len(positions), 48))]), np.hstack([sin, np.zeros((len(positions), 48))])
    assert verdict(scheme, wide_cos.astype(np.float16), wide_sin.astype(np.float16), positions).match


@pytest.mark.parametrize("name", ["bfloat16", "float16"])
def test_angles_formed_in_low_precision_are_the_precision_bug(llama, name):
    positions = np.arange(4096)
    low = BF16 if name == "bfloat16" else np.float16
    inv_freq = llama3(ladder(500000.0, 128))
    angles = (positions.astype(low)[:, None] * inv_freq.astype(low)[None, :]).astype(np.float64)
    cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    report = verdict(llama, np.concatenate([cos, cos], axis=1), np.concatenate([sin, sin], axis=1))
    assert codes(report) == ["precision"] and name in report.diagnosis[0].message


# -- the command line: streamed files --------------------------------------------------------------------------
def test_verify_streams_files_within_a_small_budget(invoke, tmp_path, llama):
    # 8,000 × 128 float32 arrays (4 MiB each) checked with a 1 MiB budget: read a block at a time
    positions = np.arange(8000)
    cos, sin = float32_pipeline(llama3(ladder(500000.0, 128)), positions)
    np.save(tmp_path / "cos.npy", cos)
    np.save(tmp_path / "sin.npy", sin)
    np.savez_compressed(tmp_path / "packed.npz", cos=cos, sin=-sin)
    from pathlib import Path

    config = ["--hf-config", Path(__file__).parents[1] / "sample_configs" / "hf" / "meta-llama--llama-3.1-8b.json"]
    same = invoke("verify", *config, "--cos", tmp_path / "cos.npy", "--sin", tmp_path / "sin.npy", "--max-memory", "1M", "--json")
    assert same.exit_code == 0, same.stderr
    packed = invoke("verify", *config, "--cos", f"{tmp_path / 'packed.npz'}:cos", "--sin", tmp_path / "packed.npz",
                    "--max-memory", "1M", "--json")
    assert packed.exit_code == 1 and [d["code"] for d in json.loads(packed.stdout)["diagnosis"]] == ["sin-sign"]


def test_verify_reads_raw_bfloat16_npy_and_encode_output(invoke, tmp_path):
    positions = np.arange(300)
    cos, sin = half(ladder(10000.0, 64), positions, dtype=BF16)
    np.save(tmp_path / "cos.npy", cos)  # '<V2' in the header
    np.save(tmp_path / "sin.npy", sin)
    raw = invoke("verify", "--dim", "64", "--cos", tmp_path / "cos.npy", "--sin", tmp_path / "sin.npy", "--json")
    assert raw.exit_code == 0 and json.loads(raw.stdout)["values"] == "bfloat16"
    archive = tmp_path / "e.npz"
    assert invoke("encode", "--scheme", "rope", "--dim", "64", "-L", "3000", "--dtype", "bfloat16", "-o", archive,
                  "--quiet").exit_code == 0
    own = invoke("verify", "--dim", "64", "--cos", archive, "--sin", archive, "--json")
    assert own.exit_code == 0 and json.loads(own.stdout)["values"] == "bfloat16"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("suffix", ["", ":cos"])
def test_a_fifo_named_npz_is_refused_at_once(run_main, tmp_path, suffix):
    import threading

    fifo = tmp_path / "fifo.npz"
    os.mkfifo(fifo)
    finished, unblocked = threading.Event(), []

    def writer_after_a_while():  # a hang fails, not blocks: a pecli waiting on the FIFO gets a writer after 30 s
        if not finished.wait(30):
            unblocked.append(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            os.close(unblocked[-1])

    watchdog = threading.Thread(target=writer_after_a_while, daemon=True)
    watchdog.start()
    result = run_main("verify", "--dim", "64", "--cos", f"{fifo}{suffix}", "--sin", f"{fifo}{suffix}")
    finished.set()
    watchdog.join()
    assert not unblocked, "pecli opened the FIFO and waited for a writer"
    assert result.returncode == 2 and "not a regular file" in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(("extra", "words"), [
    (["--plot", "x.gif"], "--plot x.gif: unsupported suffix"),
    (["--positions", "[-3, 1]"], "-3 is negative"),
    (["--positions", "[0.5, 1]"], "integer position ids"),
])
def test_verify_names_the_option_at_fault(invoke, tmp_path, extra, words):
    np.save(tmp_path / "c.npy", np.ones((2, 64)))
    result = invoke("verify", "--dim", "64", "--cos", tmp_path / "c.npy", "--sin", tmp_path / "c.npy", *extra)
    assert result.exit_code == 2 and words in result.stderr


def test_assert_rope_close_refuses_positions_that_are_not_whole_numbers():
    from pecli.testing import assert_rope_close

    cos, sin = half(ladder(10000.0, 8), np.arange(4))
    with pytest.raises(ValueError, match="positions: 0.5 is not a whole number"):
        assert_rope_close(cos, sin, scheme=build_scheme("rope", {"dim": 8}), positions=[0.5, 1, 2, 3])


def test_long_arrays_report_their_progress(llama):
    from pecli.progress import Recorded, reporting

    positions = np.arange(30000)
    recorder = Recorded()
    with reporting(recorder):
        assert verdict(llama, *half(llama3(ladder(500000.0, 128)), positions, dtype=np.float32)).match
    assert recorder.started == [("verify: compare", 30000)] and recorder.done == 30000


# -- M-RoPE position ids ---------------------------------------------------------------------------------------
def mrope(**params):
    return build_scheme("mrope", {"dim": 16, **params})


def test_mrope_position_ids_against_the_rule_written_out():
    # text ×2, an image of 4×4 patches merged 2×2 (a 2×2 grid), text ×2 — Qwen2-VL's get_rope_index:
    # text p → (p, p, p); the image starts at s = 2: (2, 2 + row, 2 + column); the next text starts past
    # its largest id 3, at 4.
    scheme = mrope(sequence="text:2,image:1x4x4,text:2")
    right = np.array([[0, 1, 2, 2, 2, 2, 4, 5], [0, 1, 2, 2, 3, 3, 4, 5], [0, 1, 2, 3, 2, 3, 4, 5]])
    assert verify_arrays(scheme, position_ids=right).match
    assert verify_arrays(scheme, position_ids=right[:, None, :]).match  # HF's (3, batch 1, N)
    flat = verify_arrays(scheme, position_ids=np.tile(np.arange(8), (3, 1)))
    assert codes(flat) == ["vision-rule"] and "token 3 (block 2, image, its token 1)" in flat.notes[0]
    counted = right.copy()
    counted[:, 6:] = [[6, 7]] * 3  # the text after the image at its token index (1-D habit)
    assert codes(verify_arrays(scheme, position_ids=counted)) == ["block-start"]
    assert codes(verify_arrays(scheme, position_ids=right[[0, 2, 1]])) == ["axes"]
    one = right.copy()
    one[2, 5] = 9
    report = verify_arrays(scheme, position_ids=one)
    assert codes(report) == [] and "(t, h, w) = (2, 3, 9), the rule gives (2, 3, 3)" in report.notes[0]


def test_mrope_video_temporal_ids_follow_the_models_rule():
    # Qwen2.5-VL: τ_i = ⌊i · second_per_grid_t · tokens_per_second⌋ = ⌊i · 2 · 2⌋: group 1 at τ = 4;
    # Qwen2-VL's τ_i = i puts it at 1 and the text after at 3 instead of 6.
    sequence = "text:1,video:2x4x4@2,text:1"
    time_rule = np.array([[0, 1, 1, 1, 1, 5, 5, 5, 5, 6], [0, 1, 1, 2, 2, 1, 1, 2, 2, 6], [0, 1, 2, 1, 2, 1, 2, 1, 2, 6]])
    index_rule = np.array([[0, 1, 1, 1, 1, 2, 2, 2, 2, 3], [0, 1, 1, 2, 2, 1, 1, 2, 2, 3], [0, 1, 2, 1, 2, 1, 2, 1, 2, 3]])
    qwen25 = mrope(sequence=sequence, temporal="time")
    assert verify_arrays(qwen25, position_ids=time_rule).match
    assert codes(verify_arrays(qwen25, position_ids=index_rule)) == ["temporal-rule"]
    assert verify_arrays(mrope(sequence=sequence, temporal="index"), position_ids=index_rule).match


def test_mrope_position_ids_on_the_command_line(invoke, tmp_path):
    from pathlib import Path

    config = Path(__file__).parents[1] / "sample_configs" / "hf" / "qwen--qwen2-vl-7b-instruct-gptq-int8.json"
    right = np.array([[0, 1, 2, 2, 2, 2, 4, 5], [0, 1, 2, 2, 3, 3, 4, 5], [0, 1, 2, 3, 2, 3, 4, 5]])
    np.save(tmp_path / "ids.npy", right)
    np.save(tmp_path / "short.npy", right[:, :5])
    args = ["verify", "--hf-config", config, "--sequence", "text:2,image:1x4x4,text:2", "--position-ids"]
    assert invoke(*args, tmp_path / "ids.npy", "--quiet").exit_code == 0
    short = invoke(*args, tmp_path / "short.npy")
    assert short.exit_code == 2 and "ids for 5 tokens; the sequence has 8" in short.stderr


def test_float32_angles_past_the_cap_are_the_precision_bug(llama):
    # past 2^24 float32 positions are no longer whole numbers: angles off by up to a radian
    positions = np.arange(20_000_001, 20_000_065)
    report = verdict(llama, *float32_pipeline(llama3(ladder(500000.0, 128)), positions), positions)
    assert codes(report) == ["precision"] and "float32" in report.diagnosis[0].message


# -- arrays made by transformers' own rotary modules (tests/fixtures/verify/generate.py) --------------------------
FIXTURES = __import__("pathlib").Path(__file__).parent / "fixtures" / "verify"
CASES = json.loads((FIXTURES / "cases.json").read_text())["cases"]
#: Each case's layer (Gemma 3: layers 0-4 slide, layer 5 is global) and the reference it is held to:
#: its own config, or — for the two bugs reproduced with transformers — the config that was meant.
LAYERS = {"sliding_attention": 0, "full_attention": 5}
MEANT = {"llama3_unscaled_float16": ("llama31_float32", "scaling"),
         "gemma3_sliding_global_base_float32": ("gemma3_sliding_float32", "base")}


def fixture(name: str):
    from pecli import model_scheme

    reference, cause = MEANT.get(name, (name, None))
    scheme = model_scheme(CASES[reference]["config"], layer=LAYERS.get(CASES[name]["layer_type"]))
    with np.load(FIXTURES / f"{name}.npz") as arrays:
        return scheme, arrays["positions"], arrays["cos"], arrays["sin"], cause


@pytest.mark.parametrize("name", sorted(CASES))
def test_transformers_arrays_pass_and_their_bugs_are_named(name):
    scheme, positions, cos, sin, cause = fixture(name)
    report = verdict(scheme, cos, sin, positions)
    if cause is not None:
        assert codes(report) == [cause]
        return
    expected = "bfloat16" if name.endswith("bfloat16") else CASES[name]["dtype"]
    assert report.match and report.values == expected
    assert codes(verdict(scheme, cos, -sin, positions)) == ["sin-sign"]
    rotated = scheme.rotated_dim
    if cos.shape[1] == rotated:  # the same values in GPT-J's pairs: each cos twice in a row
        pairs = rotated // 2
        assert codes(verdict(scheme, np.repeat(cos[:, :pairs], 2, axis=1), np.repeat(sin[:, :pairs], 2, axis=1),
                             positions)) == ["layout"]


def test_transformers_batch_of_one_and_truncated_files(invoke, tmp_path):
    # transformers returns cos and sin as (batch, P, r): a batch of one is read as (P, r)
    cos, sin = half(ladder(10000.0, 64), np.arange(64), dtype=np.float32)
    np.save(tmp_path / "cos.npy", cos[None])
    np.save(tmp_path / "sin.npy", sin[None])
    assert invoke("verify", "--dim", "64", "--cos", tmp_path / "cos.npy", "--sin", tmp_path / "sin.npy", "-q").exit_code == 0
    assert verify_arrays(build_scheme("rope", {"dim": 64}), cos=cos[None], sin=sin[None]).match
    whole = (tmp_path / "cos.npy").read_bytes()
    (tmp_path / "cut.npy").write_bytes(whole[:-1000])
    cut = invoke("verify", "--dim", "64", "--cos", tmp_path / "cut.npy", "--sin", tmp_path / "sin.npy")
    assert cut.exit_code == 2 and "ends before its 64 rows" in cut.stderr
