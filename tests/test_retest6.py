"""Hostile and new-user retest, round six: odd YAML, ``--set``, signalling NaNs in input files, ``--apply``
over non-finite values.

Every refusal is exit 2 with one line on stderr naming the problem (``docs/exit-codes.md``), never exit 3
nor a warning of NumPy's on stderr; what pecli accepts it reads as YAML, NumPy and llama.cpp do.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from conftest import assert_refused

#: IEEE 754 signalling NaNs (quiet bit clear, payload 1): what a file may hold, and what NumPy warns about
#: ("invalid value encountered in cast") when it converts one to another format.
SIGNALLING_F32 = 0x7F800001
SIGNALLING_F16 = 0x7C01
LLAMA31 = Path(__file__).resolve().parents[1] / "sample_configs/hf/meta-llama--llama-3.1-8b.json"


@pytest.fixture
def strict_run(run_main):
    """``run_main`` with NumPy's warnings (RuntimeWarning) errors, as ``python -W error`` runs pecli: a warning
    NumPy raises on the way is then exit 3, "internal error". (Other warnings stay: an old matplotlib's
    deprecation warnings of a newer pyparsing are no concern of these tests.)"""

    def _run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            return run_main(*args)

    return _run


def signalling(values: np.ndarray, at: tuple) -> np.ndarray:
    """``values`` (float32 or float16) with a signalling NaN at ``at``."""
    values = values.copy()
    bits = values.view(np.uint32 if values.dtype == np.float32 else np.uint16)
    bits[at] = SIGNALLING_F32 if values.dtype == np.float32 else SIGNALLING_F16
    assert np.isnan(values[at])
    return values


# -- YAML --------------------------------------------------------------------------------------------------------
def test_a_yaml_merge_key_is_read_as_yaml_reads_it(run_main, tmp_path):
    # "<<: *anchor" (YAML 1.1's merge key, which PyYAML's safe loader reads) was "not valid YAML at line 3"
    # the mapping's own keys win over the merged ones, as in YAML
    (tmp_path / "top.yaml").write_text("<<: {scheme: rope, dim: 8, base: 100}\nbase: 500\nlength: 4\n")
    done = run_main("encode", "--config", "top.yaml", "--json")
    assert done.returncode == 0, done.stderr
    params = json.loads(done.stdout)["params"]
    assert (params["dim"], params["base"]) == (8, 500.0)


def test_a_key_given_twice_beside_a_merge_is_still_refused(run_main, tmp_path):
    (tmp_path / "c.yaml").write_text("<<: {scheme: rope}\ndim: 8\ndim: 16\n")
    assert_refused(run_main("encode", "--config", "c.yaml"), "dim", "given twice")


# -- --set -------------------------------------------------------------------------------------------------------
def test_set_giving_a_key_two_values_is_refused(run_main):
    # as an option of one value given twice, or a YAML key: the last one won, silently
    assert_refused(run_main("encode", "--scheme", "rope", "--set", "dim=8", "--set", "dim=16"), "dim", "twice", "8", "16")


@pytest.mark.parametrize("second", ["dim=8", "head_dim=8"])
def test_set_giving_a_key_the_same_value_twice_is_accepted(run_main, second):
    done = run_main("encode", "--scheme", "rope", "--length", "4", "--set", "dim=8", "--set", second, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["params"]["dim"] == 8


def test_an_alias_beside_an_integer_no_float_holds_is_refused(run_main):
    # base and its alias rope_theta compared as numbers: float(10**400) raised OverflowError (exit 3)
    done = run_main("encode", "--scheme", "rope", "--set", "base=1" + "0" * 400, "--set", "rope_theta=1")
    assert_refused(done, "rope_theta", "keep one")


# -- signalling NaNs in the files read ---------------------------------------------------------------------------
def rope_cos_sin(positions: int = 16, dim: int = 8, base: float = 10000.0) -> tuple[np.ndarray, np.ndarray]:
    """HF's cos and sin caches (half layout), from θ_i = base^(−2i/d)."""
    theta = base ** (-np.arange(0, dim, 2) / dim)
    angles = np.arange(positions)[:, None] * theta
    both = np.concatenate([angles, angles], axis=1)
    return np.cos(both), np.sin(both)


def test_verify_reads_a_signalling_nan_without_a_warning(strict_run, tmp_path):
    cos, sin = rope_cos_sin()
    np.save(tmp_path / "cos.npy", signalling(cos.astype(np.float32), (3, 3)))
    np.save(tmp_path / "sin.npy", sin.astype(np.float32))
    done = strict_run("verify", "--scheme", "rope", "--dim", "8", "--cos", "cos.npy", "--sin", "sin.npy", "--quiet")
    assert (done.returncode, done.stderr) == (1, "")  # a NaN where cos(3·θ_3) is: they differ, said by the exit code


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_positions_with_a_signalling_nan_are_refused_in_one_line(strict_run, tmp_path, dtype):
    np.save(tmp_path / "p.npy", signalling(np.arange(8, dtype=dtype), (2,)))
    assert_refused(strict_run("encode", "--scheme", "rope", "--dim", "8", "--positions", "p.npy"),
                   "positions", "finite")


def test_inverse_frequencies_with_a_signalling_nan_are_refused_in_one_line(strict_run, tmp_path):
    np.save(tmp_path / "f.npy", signalling(np.ones(4, np.float32), (0,)))
    assert_refused(strict_run("encode", "--scheme", "rope", "--dim", "8", "--inv-freq", "f.npy"), "inv_freq", "finite")


def test_a_signalling_nan_in_rope_freqs_is_refused_naming_the_factor(strict_run, tmp_path):
    pytest.importorskip("gguf")
    from tests.gguf_models import convert

    path, _ = convert(tmp_path, "llama31")
    data = bytearray(Path(path).read_bytes())
    # rope_freqs, the file's only tensor, is its last 64 float32 values (d = 128): factor 5 made signalling
    start = len(data) - 64 * 4 + 5 * 4
    data[start: start + 4] = SIGNALLING_F32.to_bytes(4, "little")
    Path(path).write_bytes(bytes(data))
    done = strict_run("diff", "--gguf", path, "--runtime", "llama.cpp", "--args", "")
    # before: NumPy's warning on stderr, then "must hold 64 positive factors …, got 64"
    assert_refused(done, "rope_freqs", "64 positive factors", "factor 5 = nan")


# -- --apply over non-finite values ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype, value", [(np.float32, np.nan), (np.float64, np.inf), (np.float32, "signalling")])
def test_apply_over_a_non_finite_value_says_so_once_and_no_overflow(strict_run, tmp_path, dtype, value):
    x = np.ones((16, 8), dtype)
    x = signalling(x, (0, 0)) if value == "signalling" else x
    if value != "signalling":
        x[0, 0] = value
    np.save(tmp_path / "x.npy", x)
    done = strict_run("encode", "--scheme", "rope", "--dim", "8", "--length", "16", "--apply", "x.npy", "--out", "y.npy")
    assert done.returncode == 0, done.stderr
    # before: a NaN spread to its pair's other half was called an overflow, and ±inf · sin 0 printed NumPy's
    # "invalid value encountered in multiply" (under -W error: exit 3)
    assert done.stderr.splitlines() == ["warning: the input holds 1 NaN or ±inf values; they stay non-finite",
                                        "wrote y.npy"]
    y = np.load(tmp_path / "y.npy")
    assert np.isfinite(y[1:]).all() and not np.isfinite(y[0, [0, 4]]).any()  # row 0's pair (0, 4), half layout


def test_apply_still_reports_a_real_overflow(strict_run, tmp_path):
    x = np.full((4, 8), 70000.0, np.float32)  # past float16's largest value, 65,504, with or without E
    x[2, 1] = np.nan  # a NaN given in row 2: that row tells nothing; rows 0, 1 and 3 overflow, 3 × 8 values
    np.save(tmp_path / "x.npy", x)
    done = strict_run("encode", "--scheme", "sinusoidal", "--dim", "8", "--length", "4",
                      "--apply", "x.npy", "--dtype", "float16", "--out", "y.npy")
    assert done.returncode == 0, done.stderr
    assert "warning: 24 values overflow float16 (stored as ±inf)" in done.stderr.splitlines()


# -- checkpoints -------------------------------------------------------------------------------------------------
def test_a_checkpoint_whose_header_safetensors_refuses_is_one_line(run_main, tmp_path):
    pytest.importorskip("safetensors")
    import struct

    # the format's __metadata__ maps strings to strings; safetensors' loader refuses a number there with its
    # own SafetensorError, which pecli did not expect (exit 3)
    name = "model.layers.0.self_attn.q_proj.weight"
    header = json.dumps({"__metadata__": {"format": 1},
                         name: {"dtype": "F32", "shape": [4, 8], "data_offsets": [0, 128]}}).encode()
    (tmp_path / "w.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + bytes(128))
    done = run_main("permute", "w.safetensors", "--from", "interleaved", "--to", "half", "--heads", "1", "--out", "p.npy")
    assert_refused(done, "cannot read tensor", name)
    assert not (tmp_path / "p.npy").exists()


# -- figures -----------------------------------------------------------------------------------------------------
def test_wavelengths_near_the_end_of_float64_are_drawn_without_numpys_warnings(strict_run):
    # base 1e308, d = 64: the longest wavelength is 2π·1e308^(62/64) ≈ 1e299; matplotlib's log axis overflowed
    # in its margins (exp(1.05 ln v)): "RuntimeWarning: overflow encountered in exp" twice on stderr. (Sinusoids:
    # RoPE refuses a base past float32's largest number, which transformers' float32 frequencies cannot hold.)
    done = strict_run("plot", "wavelengths", "--scheme", "sinusoidal", "--dim", "64", "--base", "1e308", "--out", "w.svg",
                      "--quiet")
    # (matplotlib's own note about an unwritable cache folder may be there, on a machine without a HOME)
    assert done.returncode == 0 and "Warning" not in done.stderr, done.stderr


# -- @LIST ------------------------------------------------------------------------------------------------------
def test_a_list_with_a_byte_order_mark_names_its_first_file(run_main, tmp_path):
    pytest.importorskip("gguf")
    from tests.gguf_models import convert

    path, config = convert(tmp_path, "llama31")
    (tmp_path / "config.json").write_text(json.dumps(config))
    # Windows Notepad's UTF-8 starts with a BOM, which was read as the first letter of the first name
    (tmp_path / "list.txt").write_bytes("\ufeff".encode() + f"{Path(path).name}\n".encode())
    done = run_main("diff", "--gguf", "@list.txt", "--hf-config", "config.json", "--json")
    assert done.returncode == 0, done.stdout[-500:] + done.stderr
    rows = json.loads(done.stdout)["rows"]
    assert [(Path(row["file"]).name, row["verdict"]) for row in rows] == [(Path(path).name, "same")]


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_a_list_that_is_no_regular_file_is_refused_at_once(run_main, tmp_path, special):
    # a FIFO waited for a writer forever; /dev/zero was read until memory ran out ("out of memory; ask for
    # fewer positions")
    if special == "fifo":
        os.mkfifo(tmp_path / "fifo")
    elif not os.path.exists(special):
        pytest.skip(f"no {special} here")
    done = run_main("diff", "--gguf", f"@{special}", "--hf-config", str(LLAMA31))
    assert_refused(done, f"@{special}", "not a regular file")


# -- extend --out ------------------------------------------------------------------------------------------------
def test_extend_never_writes_its_patch_over_the_config_json_of_the_model_folder_it_reads(run_main, tmp_path):
    (tmp_path / "model").mkdir()
    original = LLAMA31.read_bytes()
    (tmp_path / "model" / "config.json").write_bytes(original)
    # the folder stands for its config.json; --out model/config.json --force replaced the model's config by the patch
    done = run_main("extend", "--hf-config", "model", "--target", "262144", "--out", "model/config.json", "--force")
    assert_refused(done, "--out", "is an input of this command")
    assert (tmp_path / "model" / "config.json").read_bytes() == original


# -- verify against a model whose frequencies are a list ---------------------------------------------------------
def test_verify_against_a_gguf_file_whose_frequencies_come_from_rope_freqs(run_main, tmp_path):
    pytest.importorskip("gguf")
    from tests.gguf_models import convert, llama3_rope_freqs

    path, config = convert(tmp_path, "llama31")
    # llama.cpp divides each θ_i = 500000^(−2i/128) by the file's rope_freqs factor (the converter's llama3 rule)
    theta = 500000.0 ** (-np.arange(0, 128, 2) / 128) / llama3_rope_freqs(config).astype(np.float64)
    angles = np.arange(32)[:, None] * theta
    np.save(tmp_path / "cos.npy", np.cos(np.concatenate([angles, angles], axis=1)))
    np.save(tmp_path / "sin.npy", np.sin(np.concatenate([angles, angles], axis=1)))
    # the group's inv_freq (a list) was taken for verify's own --inv-freq (your file): "inv_freq: expected a
    # string, got a list of 64 items"
    done = run_main("verify", "--gguf", path, "--cos", "cos.npy", "--sin", "sin.npy", "--quiet")
    assert (done.returncode, done.stderr) == (0, "")


def test_verify_takes_a_list_of_frequencies_as_the_reference_and_a_file_as_yours(run_main, tmp_path):
    cos, sin = rope_cos_sin()  # base 10,000, d = 8: θ = 1, 0.1, 0.01, 0.001
    np.save(tmp_path / "cos.npy", cos)
    np.save(tmp_path / "sin.npy", sin)
    done = run_main("verify", "--dim", "8", "--set", "inv_freq=[1, 0.1, 0.01, 0.001]", "--cos", "cos.npy",
                    "--sin", "sin.npy", "--quiet")
    assert (done.returncode, done.stderr) == (0, "")
    np.save(tmp_path / "mine.npy", np.array([1, 0.1, 0.01, 0.001]))
    done = run_main("verify", "--dim", "8", "--inv-freq", "mine.npy", "--quiet")
    assert (done.returncode, done.stderr) == (0, "")


def test_cos_and_sin_stored_in_two_precisions_are_refused(run_main, tmp_path):
    cos, sin = rope_cos_sin()
    np.save(tmp_path / "cos.npy", cos.astype(np.float32))
    np.save(tmp_path / "sin.npy", sin)
    # before: both held to float64's tolerance, the float32 cos "DIFFER"s, and the cause named was "the angles
    # p·θ were formed in bfloat16" — a wrong diagnosis of correct values
    done = run_main("verify", "--dim", "8", "--cos", "cos.npy", "--sin", "sin.npy")
    assert_refused(done, "cos is stored as float32 and sin as float64")


def test_a_home_matplotlib_cannot_write_in_adds_nothing_to_stderr(tmp_path):
    import subprocess
    import sys

    from tests.conftest import TEST_ENV

    # HOME=/dev/null: no folder can be made under it (for root too), as under a read-only or missing HOME;
    # matplotlib's two notes about it ("mkdir -p failed …", "Matplotlib created a temporary cache directory …")
    # were printed around pecli's own lines
    env = {key: value for key, value in os.environ.items() if key not in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")}
    env.update(TEST_ENV, HOME="/dev/null")
    done = subprocess.run([sys.executable, "-m", "pecli", "plot", "wavelengths", "--scheme", "rope", "--dim", "8",
                           "--out", "w.svg", "--quiet"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, "")


def test_parts_naming_a_part_twice_is_refused_and_nothing_written(run_main, tmp_path):
    target = tmp_path / "r.npz"
    done = run_main("encode", "--scheme", "rope", "--dim", "8", "--length", "4", "--parts", "cos,sin,cos",
                    "-o", str(target))
    assert_refused(done, "parts", "cos twice")
    assert not target.exists()
