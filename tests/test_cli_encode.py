"""``pecli encode`` end to end: the issue's example commands with checks on what they write, the safety
rules (no silent overwrite, atomic writes, the memory budget), and the installed pecli in a subprocess
for exit codes and one-line errors.

Expected values are derived by hand in the comments (formulas, textbook values, float16/bfloat16
rounding worked out bit by bit), never read back from pecli itself.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

import pecli

SAMPLE_CONFIGS = Path(__file__).resolve().parents[1] / "sample_configs"

#: Keys of ``pecli encode --json`` that pipelines rely on.
JSON_KEYS = {
    "scheme", "params", "length", "dtype", "kind", "positions", "main", "shape", "bytes", "min", "max",
    "min_adjacent_distance", "min_adjacent_pair", "colliding_positions", "out",
}


def ok(result):
    assert result.exit_code == 0, f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    return result


def run_json(invoke, *args):
    result = ok(invoke("encode", *args, "--json"))
    return json.loads(result.stdout)


# ============================================================================== the examples
def test_encode_with_no_options_prints_the_default(invoke):
    # The embedded default: sinusoidal, d = 512, 512 positions (README quick start).
    result = ok(invoke("encode"))
    out = result.stdout
    assert "sinusoidal" in out and "(512, 512)" in out and "float64" in out
    assert "colliding positions" in out and "min adjacent distance" in out
    assert "\x1b[" not in out  # NO_COLOR: plain text


def test_example_rope_npz(invoke, tmp_path):
    # pecli encode --scheme rope --dim 128 --length 4096 --base 500000 --layout half --out rope.npz
    out = tmp_path / "rope.npz"
    result = ok(invoke("encode", "--scheme", "rope", "--dim", "128", "--length", "4096", "--base", "500000",
                       "--layout", "half", "--out", out))
    assert "wrote" in result.stderr and "wrote" not in result.stdout
    with np.load(out) as archive:
        # What a user loads: cos and sin (HF's layout); the interleaved encoding only with --parts.
        assert archive.files == ["cos", "sin", "inv_freq", "positions", "metadata"]
        # θ_i = 500000^(−2i/128), i = 0 … 63.
        theta = 500000.0 ** (-np.arange(64) * 2 / 128)
        np.testing.assert_allclose(archive["inv_freq"], theta, rtol=1e-13)
        assert archive["cos"].shape == archive["sin"].shape == (4096, 128)
        np.testing.assert_array_equal(archive["positions"], np.arange(4096))
        # HF convention (half): cos[p] = concat(cos pθ, cos pθ); p = 4095 at θ_0 = 1 and θ_1 = 500000^(−1/64).
        cos, sin = archive["cos"], archive["sin"]
        np.testing.assert_allclose(cos[4095, [0, 64]], math.cos(4095), rtol=1e-12)
        np.testing.assert_allclose(sin[4095, [1, 65]], math.sin(4095 * 500000.0 ** (-1 / 64)), rtol=1e-12)
        metadata = json.loads(str(archive["metadata"]))
    with_encoding = tmp_path / "with-encoding.npz"
    ok(invoke("encode", "--scheme", "rope", "--dim", "128", "--length", "4096", "--base", "500000", "--out", with_encoding,
              "--parts", "encoding,cos"))
    with np.load(with_encoding) as archive:
        assert archive.files == ["encoding", "cos", "metadata"]
        # The encoding is the reference vector rotated: (cos pθ_i, sin pθ_i) on the pair (i, i + 64).
        np.testing.assert_allclose(archive["encoding"][7, [3, 67]],
                                   [math.cos(7 * theta[3]), math.sin(7 * theta[3])], rtol=1e-12)
    assert metadata["scheme"] == "rope" and metadata["kind"] == "rotary"
    assert metadata["length"] == 4096 and metadata["dtype"] == "float64"
    assert metadata["params"]["base"] == 500000.0 and metadata["params"]["layout"] == "half"
    assert metadata["params"]["dim"] == 128


def test_example_sinusoidal_npy(invoke, tmp_path):
    # pecli encode --scheme sinusoidal --dim 512 --length 1000 --out pe.npy
    out = tmp_path / "pe.npy"
    ok(invoke("encode", "--scheme", "sinusoidal", "--dim", "512", "--length", "1000", "--out", out))
    pe = np.load(out)
    assert pe.shape == (1000, 512) and pe.dtype == np.float64
    # PE[p, 2i] = sin(p / 10000^(2i/512)), PE[p, 2i+1] = cos(...).
    assert pe[1, 0] == pytest.approx(0.8414709848078965, rel=1e-15)  # sin 1
    assert pe[1, 1] == pytest.approx(0.5403023058681398, rel=1e-15)  # cos 1
    for p, i in [(999, 10), (500, 255), (37, 128)]:
        angle = p / 10000 ** (2 * i / 512)
        assert pe[p, 2 * i] == pytest.approx(math.sin(angle), rel=1e-12, abs=1e-15)
        assert pe[p, 2 * i + 1] == pytest.approx(math.cos(angle), rel=1e-12, abs=1e-15)


def test_example_alibi_npz_json(invoke, tmp_path):
    # pecli encode --scheme alibi --heads 12 --length 64 --out alibi.npz --json | jq .
    out = tmp_path / "alibi.npz"
    document = run_json(invoke, "--scheme", "alibi", "--heads", "12", "--length", "64", "--out", out)
    assert JSON_KEYS <= set(document)
    assert document["scheme"] == "alibi" and document["kind"] == "bias" and document["main"] == "bias"
    assert document["shape"] == [12, 64, 64] and document["dtype"] == "float64"
    assert document["bytes"] == 12 * 64 * 64 * 8
    assert document["positions"] == {"count": 64, "first": 0, "last": 63}
    assert document["out"] == str(out)
    # The farthest pair: −m_max·63 with m_max = 2^−0.5 (the largest of the 12 slopes).
    assert document["min"] == pytest.approx(-63 * 2 ** -0.5, rel=1e-12) and document["max"] == 0.0
    with np.load(out) as archive:
        slopes = archive["slopes"]
        bias = archive["bias"]
    # 12 heads by the paper's rule: 2^−1 … 2^−8, then 2^−0.5, 2^−1.5, 2^−2.5, 2^−3.5.
    np.testing.assert_allclose(slopes, [2.0 ** -k for k in range(1, 9)] + [2 ** -0.5, 2 ** -1.5, 2 ** -2.5, 2 ** -3.5])
    assert bias.shape == (12, 64, 64)
    assert bias[0, 10, 3] == pytest.approx(-7 / 2) and bias[7, 0, 63] == pytest.approx(-63 / 256)


def test_example_rope_apply(invoke, tmp_path):
    # pecli encode --scheme rope --dim 64 --length 37 --apply q.npy --out q_rot.npy
    rng = np.random.default_rng(0)
    q = rng.standard_normal((2, 37, 64)).astype(np.float32)
    np.save(tmp_path / "q.npy", q)
    out = tmp_path / "q_rot.npy"
    ok(invoke("encode", "--scheme", "rope", "--dim", "64", "--length", "37", "--apply", tmp_path / "q.npy",
              "--out", out))
    rotated = np.load(out)
    assert rotated.shape == (2, 37, 64) and rotated.dtype == np.float32  # keeps the input's float dtype
    # By hand, rope's default layout (half, HF rotate_half): pair (i, i + 32), θ_i = 10000^(−2i/64),
    # a' = a cos pθ − b sin pθ, b' = b cos pθ + a sin pθ.
    theta = 10000.0 ** (-np.arange(32) * 2 / 64)
    angle = np.arange(37)[:, None] * theta
    a, b = q[..., :32].astype(np.float64), q[..., 32:].astype(np.float64)
    expected = np.concatenate([a * np.cos(angle) - b * np.sin(angle), b * np.cos(angle) + a * np.sin(angle)], axis=-1)
    np.testing.assert_allclose(rotated, expected, rtol=1e-5, atol=1e-6)
    # Norms are kept by a rotation.
    np.testing.assert_allclose(np.linalg.norm(rotated, axis=-1), np.linalg.norm(q, axis=-1), rtol=1e-5)


def test_example_config_with_set(invoke):
    # pecli encode --config sample_configs/rope-llama.yaml --set base=1e6
    document = run_json(invoke, "--config", SAMPLE_CONFIGS / "rope-llama.yaml", "--set", "base=1e6")
    assert document["scheme"] == "rope"
    assert document["params"]["base"] == 1_000_000.0
    assert document["params"]["dim"] == 128 and document["params"]["layout"] == "half"
    assert document["length"] == 8192 and document["dtype"] == "float32"
    assert document["shape"] == [8192, 128] and document["bytes"] == 8192 * 128 * 4


# ============================================================================== --apply, --positions, dtypes
def test_apply_additive_adds_the_encoding(invoke, tmp_path):
    # sinusoidal d = 4: PE[1] = [sin 1, cos 1, sin .01, cos .01]; x = 1 everywhere → 1 + PE.
    np.save(tmp_path / "x.npy", np.ones((3, 4)))
    out = tmp_path / "y.npy"
    ok(invoke("encode", "--dim", "4", "--length", "3", "--apply", tmp_path / "x.npy", "--out", out))
    y = np.load(out)
    assert y.dtype == np.float64
    np.testing.assert_allclose(y[0], [1, 2, 1, 2])
    np.testing.assert_allclose(y[1], 1 + np.array([math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)]))


def test_apply_npz_holds_result_and_positions(invoke, tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((2, 4)))
    out = tmp_path / "y.npz"
    ok(invoke("encode", "--scheme", "integer", "--dim", "4", "--positions", "5:7", "--apply", tmp_path / "x.npy",
              "--out", out))
    with np.load(out) as archive:
        assert archive.files[0] == "result"
        np.testing.assert_array_equal(archive["result"], [[5] * 4, [6] * 4])  # 0 + p
        np.testing.assert_array_equal(archive["positions"], [5, 6])


def test_apply_errors(invoke, tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((3, 8)))
    out = ("--out", tmp_path / "y.npy")
    result = invoke("encode", "--scheme", "alibi", "--length", "3", "--apply", tmp_path / "x.npy", *out)
    assert result.exit_code == 2 and "cannot be applied" in result.stderr
    result = invoke("encode", "--scheme", "rope", "--dim", "4", "--length", "3", "--apply", tmp_path / "x.npy", *out)
    assert result.exit_code == 2 and "last axis has 8 features, the scheme expects 4" in result.stderr
    result = invoke("encode", "--apply", tmp_path / "missing.npy", *out)
    assert result.exit_code == 2 and "no such file" in result.stderr
    # Without --out the result would be thrown away.
    result = invoke("encode", "--scheme", "rope", "--dim", "8", "--length", "3", "--apply", tmp_path / "x.npy")
    assert result.exit_code == 2 and result.stderr == "pecli: error: --apply writes its result to --out: give --out x.npy\n"
    assert not (tmp_path / "y.npy").exists()


def test_positions_option(invoke, tmp_path):
    out = tmp_path / "p.npz"
    ok(invoke("encode", "--scheme", "integer", "--dim", "2", "--positions", "100:106:2", "--out", out))
    with np.load(out) as archive:
        np.testing.assert_array_equal(archive["positions"], [100, 102, 104])
        np.testing.assert_array_equal(archive["encoding"], [[100, 100], [102, 102], [104, 104]])
    ids = tmp_path / "ids.npy"
    np.save(ids, np.array([9, 2]))
    document = run_json(invoke, "--scheme", "integer", "--dim", "2", "--positions", ids)
    assert document["positions"] == {"count": 2, "first": 9, "last": 2}


def test_bfloat16_stored_widened_to_float32(invoke, tmp_path):
    # sinusoidal d = 2: PE[1] = [sin 1, cos 1] = [0.84147…, 0.54030…]. bfloat16 keeps 8 significant bits:
    # in [0.5, 1) the spacing is 2^−8, so 0.84147·256 = 215.42 → 215/256 = 0.83984375 and
    # 0.54030·256 = 138.32 → 138/256 = 0.5390625 — exact in float32.
    out = tmp_path / "b.npy"
    ok(invoke("encode", "--dim", "2", "--length", "2", "--dtype", "bfloat16", "--out", out))
    stored = np.load(out)
    assert stored.dtype == np.float32
    np.testing.assert_array_equal(stored[1], [0.83984375, 0.5390625])
    np.testing.assert_array_equal(stored[0], [0.0, 1.0])
    document = run_json(invoke, "--dim", "2", "--length", "2", "--dtype", "bfloat16")
    assert document["dtype"] == "bfloat16" and document["bytes"] == 2 * 2 * 2


def test_float32_output_from_float64_angles(invoke, tmp_path):
    # rope d = 4: θ = 1, 0.01. At p = 1000001 the angle p·θ_1 = 10000.01; float32 cannot hold 10000.01
    # (its spacing there is 2^−10 ≈ 0.001), so an angle formed in float32 would be off by ~4e-4 rad.
    # Formed in float64 and then cast, the stored value is float32(cos 10000.01) to the last bit.
    out = tmp_path / "r.npy"
    ok(invoke("encode", "--scheme", "rope", "--dim", "4", "--layout", "interleaved", "--positions", "1000001:1000002",
              "--dtype", "float32", "--out", out))
    stored = np.load(out)
    assert stored.dtype == np.float32
    expected = np.array([math.cos(1000001), math.sin(1000001), math.cos(10000.01), math.sin(10000.01)], dtype=np.float32)
    np.testing.assert_allclose(stored[0], expected, rtol=0, atol=float(np.spacing(np.float32(1))))


def test_float16_collisions_reported(invoke):
    # float16 has 11 significant bits: above 2048 the spacing is 2. Positions 2048 … 2051 round (to even)
    # to 2048, 2048, 2050, 2052: one collision, the smallest step 0 between 2048 and 2049.
    document = run_json(invoke, "--scheme", "integer", "--dim", "1", "--positions", "2048:2052", "--dtype", "float16")
    assert document["colliding_positions"] == 1
    assert document["min_adjacent_distance"] == 0.0 and document["min_adjacent_pair"] == [2048, 2049]
    assert document["max"] == 2052.0 and document["bytes"] == 4 * 2


def test_json_summary_values(invoke):
    # binary, 8 positions → 3 bits; adjacent codes differ in at least one bit, so the smallest distance
    # between adjacent rows is 1 (0→1 flips one bit); no collisions; values in [0, 1].
    document = run_json(invoke, "--scheme", "binary", "--length", "8")
    assert document["shape"] == [8, 3] and document["params"] == {"bits": 3}
    assert document["min_adjacent_distance"] == 1.0 and document["colliding_positions"] == 0
    assert (document["min"], document["max"]) == (0.0, 1.0)


def test_quiet_prints_nothing(invoke, tmp_path):
    result = ok(invoke("encode", "--dim", "4", "--length", "3", "--out", tmp_path / "q.npy", "--quiet"))
    assert result.stdout == "" and result.stderr == ""
    assert (tmp_path / "q.npy").exists()


def test_position_errors_via_cli(invoke):
    result = invoke("encode", "--scheme", "binary", "--length", "256", "--positions", "300:301")
    assert result.exit_code == 2
    assert result.stderr == "pecli: error: binary overflow: position 300 needs 9 bits, the encoding has 8 (positions < 256)\n"
    result = invoke("encode", "--scheme", "learned", "--dim", "4", "--length", "10", "--positions", "0:12")
    assert result.exit_code == 2 and "undefined past max_length" in result.stderr


# ============================================================================== files: overwrite, atomic
def test_refuses_to_overwrite_without_force(invoke, tmp_path):
    out = tmp_path / "pe.npy"
    ok(invoke("encode", "--dim", "4", "--length", "3", "--out", out))
    before = out.read_bytes()
    result = invoke("encode", "--dim", "8", "--length", "3", "--out", out)
    assert result.exit_code == 2
    assert result.stderr == f"pecli: error: {out} exists; pass --force to overwrite it\n"
    assert out.read_bytes() == before
    ok(invoke("encode", "--dim", "8", "--length", "3", "--out", out, "--force"))
    assert np.load(out).shape == (3, 8)


def test_atomic_write_leaves_no_temporary_file(invoke, tmp_path):
    ok(invoke("encode", "--dim", "4", "--length", "3", "--out", tmp_path / "a.npz"))
    ok(invoke("encode", "--dim", "4", "--length", "3", "--out", tmp_path / "a.npz", "--force"))
    invoke("encode", "--dim", "4", "--length", "3", "--out", tmp_path / "a.npz")  # refused
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npz"]


@pytest.mark.parametrize("sync", ["", "1"])
def test_writes_are_synced_only_when_asked(invoke, tmp_path, monkeypatch, sync):
    # By default a file is renamed into place without waiting for the disk (as np.save); PECLI_SYNC=1
    # syncs it first, the streamed .npy and the .npz alike. The files are the same either way.
    synced = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append("fsync"))
    monkeypatch.setattr(os, "fdatasync", lambda fd: synced.append("fdatasync"))
    monkeypatch.setenv("PECLI_SYNC", sync)
    for out in (tmp_path / "pe.npy", tmp_path / "rope.npz"):
        ok(invoke("encode", "--scheme", "rope", "--dim", "8", "--length", "5", "--out", out, "--parts", "encoding")
           if out.suffix == ".npz" else invoke("encode", "--scheme", "rope", "--dim", "8", "--length", "5", "--out", out))
    assert np.allclose(np.load(tmp_path / "pe.npy"), np.load(tmp_path / "rope.npz")["encoding"])
    assert synced.count("fsync") == (2 if sync else 0)


def test_failed_write_leaves_nothing(invoke, tmp_path, monkeypatch):
    # A write that dies halfway (disk full…) must leave neither the target nor a temporary file.
    import pecli.io_stream

    def broken_write(region, values, crc=None):
        os.pwrite(region.fd, b"partial", region.offset)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pecli.io_stream.Region, "write", broken_write)
    for out in ("a.npy", "b.npz"):
        try:
            result = invoke("encode", "--dim", "4", "--length", "3", "--out", tmp_path / out)
            assert result.exit_code != 0
        except OSError:
            pass  # how the failure is reported is test_unwritable_output_is_a_one_line_error's business
        assert list(tmp_path.iterdir()) == []


def test_unwritable_output_is_a_one_line_error(invoke, tmp_path, monkeypatch):
    # An output folder pecli may not write to (EACCES, a read-only file system…) is bad input: one line
    # "pecli: error: …" and exit code 2 — not "internal error" and exit 3 (as `--out /sys/x.npy` gives).
    import tempfile

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / ".x.npy.tmp"))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    try:
        result = invoke("encode", "--dim", "4", "--length", "3", "--out", tmp_path / "x.npy")
    except OSError as error:
        pytest.fail(f"the OSError escaped the command: {error!r}")
    assert result.exit_code == 2
    assert result.stderr.startswith("pecli: error: ") and "Permission denied" in result.stderr
    assert result.stderr.count("\n") == 1


def test_written_file_has_the_usual_permissions(invoke, tmp_path):
    # Like any file a user creates: 0666 minus the umask (a temporary file alone would be 0600).
    umask = os.umask(0o022)
    os.umask(umask)
    out = tmp_path / "perm.npy"
    ok(invoke("encode", "--dim", "4", "--length", "3", "--out", out))
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask


@pytest.mark.parametrize("out,fragment", [
    ("x.txt", "unsupported suffix .txt; use one of .npy, .npz"),
    ("missing-folder/x.npy", "does not exist"),
])
def test_bad_out(invoke, tmp_path, out, fragment):
    result = invoke("encode", "--dim", "4", "--length", "3", "--out", tmp_path / out)
    assert result.exit_code == 2 and fragment in result.stderr
    assert result.stderr.count("\n") == 1


# ============================================================================== memory budget
def test_max_memory_refusal_with_the_figure(invoke, tmp_path):
    # rope, 100000 × 64 float64: written block by block, pecli still holds a block and a few numbers per
    # position (8 bytes × 100000 = 0.76 MiB for the ids alone): over 1 MiB.
    out = tmp_path / "big.npy"
    result = invoke("encode", "--scheme", "rope", "--dim", "64", "--length", "100000", "--max-memory", "1M", "--out", out)
    assert result.exit_code == 2
    match = re.search(r"needs about ([\d.]+) (MiB|GiB) of memory, over the budget of 1\.0 MiB", result.stderr)
    assert match, result.stderr
    needed_mib = float(match.group(1)) * (1024 if match.group(2) == "GiB" else 1)
    assert needed_mib > 1.0
    assert "--max-memory" in result.stderr and result.stderr.count("\n") == 1
    assert not out.exists()
    # Within a larger budget the same request is computed.
    ok(invoke("encode", "--scheme", "rope", "--dim", "64", "--length", "1000", "--max-memory", "1G", "--quiet"))


def test_max_memory_bad_value(invoke):
    result = invoke("encode", "--max-memory", "lots")
    assert result.exit_code == 2 and result.stderr.startswith("pecli: error: max_memory: expected a size")


def test_huge_length_refused_with_the_figure(invoke):
    # 10^9 positions: the estimate (10^9 × 512 × 8 bytes) must be refused before anything is allocated,
    # with the figure — not a generic "out of memory" after trying. (10^15 is over the length cap, 2^32.)
    result = invoke("encode", "--length", str(10 ** 9), "--max-memory", "1G")
    assert result.exit_code == 2
    assert "over the budget of 1.00 GiB" in result.stderr, result.stderr


# ============================================================================== the console entry point
# What the console script runs (pecli.cli.run) turns every usage or input error into one line and exit 2:
# checked in-process (run_main); the installed pecli itself runs in a subprocess in the tests after these.
@pytest.mark.parametrize("args,expected", [
    (["encode", "--dim", "-3"], "pecli: error: dim: must be >= 2, got -3"),
    (["encode", "--dim", "abc"], "pecli: error: Invalid value for '--dim'"),
    (["encode", "--bogus"], "pecli: error: No such option: --bogus"),
    (["encode", "--scheme", "nope"], "pecli: error: scheme: must be one of integer, binary, sinusoidal, learned, relative, t5, alibi, rope"),
    (["encode", "--scheme", "sinusoidal", "--dim", "7"], "pecli: error: dim: must be even, got 7"),
    (["encode", "--scheme", "rope", "--base", "0"], "pecli: error: base: must be > 0"),
    (["encode", "--scheme", "rope", "--base", "-2.5"], "pecli: error: base: must be > 0"),
    (["encode", "--config", "no-such-file.yaml"], "pecli: error: config: cannot read no-such-file.yaml"),
])
def test_bad_input_one_line(run_main, args, expected):
    process = run_main(*args)
    assert process.returncode == 2, process.stderr
    assert process.stderr.startswith(expected), process.stderr
    assert process.stderr.count("\n") == 1 and "Traceback" not in process.stderr
    assert process.stdout == ""


def test_yaml_unknown_key_one_line(run_main, tmp_path):
    (tmp_path / "c.yaml").write_text("scheme: rope\nfoo: 1\n", encoding="utf-8")
    process = run_main("encode", "--config", "c.yaml")
    assert process.returncode == 2
    assert process.stderr.startswith("pecli: error: foo: unknown key for scheme 'rope'")
    assert process.stderr.count("\n") == 1 and "Traceback" not in process.stderr


def test_encode_default(run_main):
    # `pecli encode` with no options: the embedded default, a table on stdout, nothing on stderr.
    process = run_main("encode")
    assert process.returncode == 0, process.stderr
    assert "sinusoidal" in process.stdout and "(512, 512)" in process.stdout
    assert process.stderr == ""


# ============================================================================== the installed pecli
def main_exit(monkeypatch, capsys, *args: str) -> tuple[int, str]:
    """What the console script's :func:`pecli.cli.main` exits with, and prints, for ``pecli ARGS…``."""
    import signal

    from pecli.cli import main

    monkeypatch.setattr(sys, "argv", ["pecli", *args])
    handler = signal.getsignal(signal.SIGTERM)  # main() installs its own; this process keeps the runner's
    try:
        with pytest.raises(SystemExit) as exited:
            main()
    finally:
        signal.signal(signal.SIGTERM, handler)
    return exited.value.code, capsys.readouterr().out


def test_version(monkeypatch, capsys):
    assert main_exit(monkeypatch, capsys, "--version") == (0, f"pecli {pecli.__version__}\n")


def test_subprocess_python_m_pecli_encode_writes(run_pecli, run_main, tmp_path):
    process = run_pecli("encode", "--scheme", "t5", "--length", "20", "--out", "t5.npy", "--json")
    assert process.returncode == 0, process.stderr
    document = json.loads(process.stdout)
    assert document["shape"] == [20, 20]
    buckets = np.load(tmp_path / "t5.npy")
    # buckets[i, j] for n = j − i: n = 1 → 17, n = −1 → 1, n = 19 → 16 + 8 + int(2·log2(19/8) = 2.50) = 26.
    assert (buckets[0, 1], buckets[1, 0], buckets[0, 19]) == (17, 1, 26)
    again = run_main("encode", "--scheme", "t5", "--length", "20", "--out", "t5.npy")  # the refusal, in-process
    assert again.returncode == 2 and "exists; pass --force" in again.stderr


def test_no_arguments_shows_help(monkeypatch, capsys):
    code, out = main_exit(monkeypatch, capsys)
    assert code == 0 and "Usage: pecli" in out and "encode" in out


def test_npz_keeps_inv_freq_in_float64(invoke, tmp_path):
    # The caches are cast to --dtype; inv_freq is a parameter and stays float64: θ_1 = 10000^(−2/8).
    out = tmp_path / "r.npz"
    ok(invoke("encode", "--scheme", "rope", "--dim", "8", "--length", "4", "--dtype", "float16", "--out", out))
    with np.load(out) as archive:
        assert archive["cos"].dtype == np.float16
        assert archive["inv_freq"].dtype == np.float64
        assert archive["inv_freq"][1] == 10000.0 ** (-2 / 8)


def test_adjacent_distance_of_a_shift_invariant_encoding_is_constant(invoke):
    # Sinusoidal: ||E_(p+1) − E_p||² = Σ_i (2 − 2 cos ω_i), the same for every p; d = 4, base 10000:
    # ω = (1, 0.01) → sqrt(2 − 2 cos 1 + 2 − 2 cos 0.01) = 0.968245.
    document = json.loads(invoke("encode", "--dim", "4", "--length", "50", "--json").stdout)
    assert document["adjacent_distance_constant"] is True
    assert document["min_adjacent_distance"] == pytest.approx(np.sqrt(4 - 2 * np.cos(1) - 2 * np.cos(0.01)))
    # Binary: steps differ (7 → 8 flips 4 bits), so the smallest one is named.
    document = json.loads(invoke("encode", "--scheme", "binary", "--length", "16", "--json").stdout)
    assert document["adjacent_distance_constant"] is False and document["min_adjacent_pair"] == [0, 1]
