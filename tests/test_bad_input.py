"""Bad input exits 2 with one line; closed streams, signals and killed runs leave nothing behind.

Each case is a reproducer from the reliability issue: before, it exited 3 ("a bug in pecli"), 130 or 1,
or printed a traceback or a huge line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import TEST_ENV
from pecli.cli import main

COMMANDS = ("encode", "check", "compare", "wavelengths", "plot")


def run_main(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """Run the console entry point in-process: (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["pecli", *map(str, args)])
    for key, value in TEST_ENV.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(SystemExit) as exit_info:
        main()
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def assert_one_line_error(code: int, err: str, *words: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("pecli: error: "), err
    assert "Traceback" not in err
    for word in words:
        assert word in err, err


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("content", [b"dim: 8\n\xff\xfe\n", "dim: 8\n".encode("utf-16")], ids=["latin-1", "utf-16"])
def test_config_that_is_not_utf8(monkeypatch, capsys, tmp_path, command, content):
    path = tmp_path / "c.yaml"
    path.write_bytes(content)
    code, _, err = run_main(monkeypatch, capsys, command, "--config", path)
    assert_one_line_error(code, err, "not UTF-8")


@pytest.mark.parametrize(
    "text, words",
    [
        ("dim: 8\ndim: 16\n", ["dim: is given twice (line 2)"]),
        ("dim: 010\n", ["leading zero"]),
        # deeper than Python recurses (the parser's RecursionError), as deep as 5000 levels would be, faster
        ("a: " + "[" * 600 + "]" * 600 + "\n", ["nested too deeply"]),
        (
            # 9 levels of 9 aliases: 9^9 = 387 million values from 310 bytes
            "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
                f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8)
            ),
            ["expands to more than 100,000 values"],
        ),
    ],
    ids=["duplicate-key", "octal", "deep", "alias-bomb"],
)
def test_yaml_that_would_mislead_or_explode(monkeypatch, capsys, tmp_path, text, words):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    code, _, err = run_main(monkeypatch, capsys, "encode", "--config", path)
    assert_one_line_error(code, err, *words)  # the guard's own words: refused before the values were built
    assert len(err) < 300


def test_config_file_size_is_bounded(monkeypatch, capsys, tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("values: [" + "1, " * 400_000 + "1]\n")
    code, _, err = run_main(monkeypatch, capsys, "encode", "--config", path)
    assert_one_line_error(code, err, "larger than 1 MiB")


def test_empty_config_name_is_an_error(monkeypatch, capsys):
    code, _, err = run_main(monkeypatch, capsys, "encode", "--config", "")
    assert_one_line_error(code, err, "config:", "empty")


def test_hf_config_must_be_a_path(monkeypatch, capsys, tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("hf_config: [3]\n")
    code, _, err = run_main(monkeypatch, capsys, "compare", "--config", path)
    assert_one_line_error(code, err, "hf_config")
    code, _, err = run_main(monkeypatch, capsys, "compare", "--set", "hf_config=-1")
    assert_one_line_error(code, err, "hf_config")
    path.write_text("hf_config: 3\n")
    code, _, err = run_main(monkeypatch, capsys, "encode", "--config", path)
    assert_one_line_error(code, err, "hf_config")


@pytest.fixture
def arrays(tmp_path: Path) -> Path:
    """Files that are not an .npy of real numbers."""
    np.savez(tmp_path / "x.npz", a=np.zeros((4, 8)))
    (tmp_path / "renamed.npy").write_bytes((tmp_path / "x.npz").read_bytes())
    (tmp_path / "empty.npy").write_bytes(b"")
    np.save(tmp_path / "strings.npy", np.array([["a"] * 8] * 4))
    np.save(tmp_path / "complex.npy", np.ones((4, 8), dtype=np.complex128))
    np.save(tmp_path / "dates.npy", np.array(["2024-01-01"] * 32, dtype="datetime64[D]").reshape(4, 8))
    np.save(tmp_path / "records.npy", np.zeros((4, 8), dtype=[("a", "f8"), ("b", "i4")]))
    return tmp_path


@pytest.mark.parametrize(
    "name, words",
    [
        ("x.npz", [".npz archive"]),
        ("renamed.npy", [".npz archive"]),
        ("empty.npy", ["is empty"]),
        ("strings.npy", ["<U1", "real numbers"]),
        ("complex.npy", ["complex128", "real numbers"]),
        ("dates.npy", ["datetime64", "real numbers"]),
        ("records.npy", ["real numbers"]),
        (os.devnull, ["is not a regular file"]),  # a device: refused before it is opened, as a FIFO
    ],
)
def test_apply_and_positions_read_only_arrays_of_numbers(monkeypatch, capsys, arrays, name, words):
    path = name if name == os.devnull else arrays / name
    code, _, err = run_main(monkeypatch, capsys, "encode", "--scheme", "rope", "--dim", "8", "--apply", path, "--out", arrays / "o.npy")
    assert_one_line_error(code, err, "apply:", *words)
    code, _, err = run_main(monkeypatch, capsys, "encode", "--positions", path)
    assert_one_line_error(code, err, "positions:", *words)


def test_output_to_a_full_device_is_one_line():
    env = {**os.environ, **TEST_ENV}
    with open("/dev/full", "w") as full:
        process = subprocess.run(
            [sys.executable, "-m", "pecli", "encode", "--length", "8", "--dim", "8", "--json"],
            stdout=full, stderr=subprocess.PIPE, text=True, env=env, timeout=60,
        )
    assert process.returncode == 2
    assert process.stderr == "pecli: error: cannot write the output: No space left on device\n"


def test_closed_stdout_and_stdin():
    env = {**os.environ, **TEST_ENV}
    closed_out = subprocess.run(
        [sys.executable, "-c", "import os, sys; os.close(1); sys.argv = ['pecli', 'encode', '--json']; "
         "from pecli.cli import main; main()"],
        capture_output=False, stderr=subprocess.PIPE, text=True, env=env, timeout=60,
    )
    assert closed_out.returncode == 2 and closed_out.stderr.startswith("pecli: error: cannot write the output"), closed_out.stderr
    closed_stdin = subprocess.run(
        [sys.executable, "-c", "import os, sys; os.close(0); sys.stdin = None; sys.argv = ['pecli', 'encode', '--config', '-']; "
         "from pecli.cli import main; main()"],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert closed_stdin.returncode == 2 and "standard input is closed" in closed_stdin.stderr, closed_stdin.stderr


@pytest.mark.parametrize("output", [["--json"], []], ids=["json", "table"])  # a table goes through Rich's console
def test_reader_going_away_is_a_quiet_exit_141(output):
    env = {**os.environ, **TEST_ENV}
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before pecli writes: like `| head` that has already quit
    try:
        process = subprocess.run(
            [sys.executable, "-m", "pecli", "wavelengths", "--scheme", "rope", "--dim", "64", *output],
            stdout=write_end, stderr=subprocess.PIPE, env=env, timeout=120,
        )
    finally:
        os.close(write_end)
    assert process.returncode == 141, process.stderr
    assert process.stderr == b""


#: A pecli run whose write of ``--out`` stalls after its first bytes, so that a test can stop it mid-write.
STALLED_WRITE = """
import sys, time
import pecli.io as io

write_atomic = io.write_atomic

def stalled(path, write, *, force):
    def write_slowly(stream):
        stream.write(b"partial")
        stream.flush()
        time.sleep(120)
    return write_atomic(path, write_slowly, force=force)

io.write_atomic = stalled
sys.argv = ["pecli", "encode", "--length", "8", "--dim", "8", "--out", sys.argv[1], "--quiet"]
from pecli.cli import main
main()
"""


def _stalled_write(tmp_path: Path) -> subprocess.Popen:
    env = {**os.environ, **TEST_ENV}
    return subprocess.Popen(
        [sys.executable, "-c", STALLED_WRITE, str(tmp_path / "out.npy")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=env, preexec_fn=_interruptible,
    )


def _interruptible() -> None:
    """SIGINT as a terminal's child has it: a suite started in the background (``pytest … &`` from a script)
    passes it on ignored, and Python then never turns it into KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for_temporary(tmp_path: Path, process: subprocess.Popen) -> list[Path]:
    for _ in range(1200):
        found = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp") and p.stat().st_size]
        if found or process.poll() is not None:
            return found
        time.sleep(0.05)
    return []


@pytest.mark.parametrize("signum, code, line", [(signal.SIGTERM, 143, "pecli: terminated\n"), (signal.SIGINT, 130, "pecli: interrupted\n")])
def test_a_signal_mid_write_leaves_nothing(tmp_path, signum, code, line):
    process = _stalled_write(tmp_path)
    assert _wait_for_temporary(tmp_path, process), process.communicate()
    process.send_signal(signum)
    _, err = process.communicate(timeout=60)
    assert process.returncode == code and err.decode() == line
    assert list(tmp_path.iterdir()) == []


def test_a_killed_writers_temporary_is_removed_by_the_next_write(tmp_path, monkeypatch, capsys):
    process = _stalled_write(tmp_path)
    assert _wait_for_temporary(tmp_path, process), process.communicate()
    process.kill()
    process.wait(timeout=60)
    assert [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # SIGKILL cannot clean up
    monkeypatch.chdir(tmp_path)  # the next write, by another pecli run (here in this process)
    code, _, err = run_main(monkeypatch, capsys, "encode", "--length", "4", "--dim", "4", "--out", "small.npy", "--quiet")
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.npy"]


def test_a_live_writers_temporary_is_left_alone(tmp_path, monkeypatch, capsys):
    # pecli runs in this process: the live writer is another process that started before its file was
    # written, this process's parent.
    alive = tmp_path / f".other.npy.pecli-{os.getppid()}-abc.tmp"
    alive.write_bytes(b"partial")
    dead = tmp_path / ".other.npy.pecli-999999999-abc.tmp"
    dead.write_bytes(b"partial")
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main(monkeypatch, capsys, "encode", "--length", "4", "--dim", "4", "--out", "small.npy", "--quiet")
    assert code == 0, err
    assert alive.exists() and not dead.exists()


@pytest.mark.parametrize(
    "args, words",
    [
        (["check", "all", "--scheme", "rope", "--length", "40000000", "--dim", "256", "--max-memory", "2G"], ["check all needs about", "over the budget of 2.00 GiB"]),
        (["compare", "--length", "1000000", "--max-memory", "500M"], ["compare needs about", "500.0 MiB"]),
        (["plot", "dot-distance", "--scheme", "rope", "--length", "100000000", "--max-memory", "1G"], ["plot dot-distance needs about"]),
        (["plot", "circle", "--points", "1000000000"], ["points: must be <= 100000"]),
        (["wavelengths", "--scheme", "rope", "--target-context", "100000000"], ["target_context: must be <="]),
        (["compare", "--dim", str(2**63), "--schemes", "sinusoidal"], ["dim: must be <= 1048576"]),
        (["plot", "--length", str(2**62)], ["length: must be <= 4294967296"]),
        (["encode", "--out", ""], ["out: expected a file name"]),
    ],
)
def test_memory_is_bounded_before_work(monkeypatch, capsys, tmp_path, args, words):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main(monkeypatch, capsys, *args)
    assert_one_line_error(code, err, *words)
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("args", [
    ("wavelengths", "--hf-config", "a.json", "--hf-config", "b.json"),
    ("encode", "-d", "8", "--dim", "16"),
    ("check", "--length=8", "-L", "16"),
])
def test_an_option_of_one_value_given_twice_is_refused(run_main, args):
    # Click keeps the last of two values silently; pecli names the option instead.
    result = run_main(*args)
    assert result.returncode == 2 and "is given 2 times; it takes one value" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_repeatable_options_stay_repeatable(invoke):
    assert invoke("encode", "--set", "dim=8", "--set", "base=100", "-L", "2", "--quiet").exit_code == 0


@pytest.mark.parametrize(("option", "command"), [
    ("--config", "encode"), ("--hf-config", "wavelengths"), ("--hf-config", "check"), ("--positions", "encode"),
])
def test_a_fifo_is_refused_before_it_is_opened(invoke, tmp_path, option, command):
    # Opening a FIFO blocks until a writer comes: pecli hung on `--config fifo`. Only regular files are read.
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    args = (command, option, str(fifo)) if option != "--positions" else (command, "--scheme", "rope", option, str(fifo))
    result = invoke(*args)
    assert result.exit_code == 2 and "is not a regular file" in result.stderr, result.stderr


@pytest.mark.parametrize(("args", "words"), [
    (("encode", "--quiet", "--json"), ["--quiet prints nothing and --json one document"]),
    (("plot", "--size", "40x40", "--dpi", "600", "-o", "x.png"), ["size: 40x40 inches at 600 dpi is 24,000 pixels"]),
    (("plot", "--title", "a\x07b", "-o", "x.png"), ["title: holds the control character"]),
    (("encode", "--scheme", "rope", "--set", "max_position_embeddings=1e300"), ["max_position_embeddings"]),
    (("encode", "--scheme", "rope", "--positions", "[9007199254740992]"), ["below 2**53"]),
    (("encode", "--max-memory", ""), ["max_memory: expected a size"]),
    # 10^8 ids are 763 MiB: refused from the range's count, before np.arange builds them
    (("encode", "--positions", "0:100000000:1", "--max-memory", "100M"), ["762.9 MiB for their ids alone"]),
    (("encode", "--scheme", "rope", "--parts", "", "-o", "x.npz"), ["parts: is empty"]),
    (("plot", "precision", "--dtypes", "", "-o", "x.png"), ["dtypes: expected comma-separated names"]),
    (("check", "relativity", "--set", "samples=1000000000000", "-L", "64"), ["samples: asks for 1,000,000,000,000"]),
])
def test_values_refused_with_the_option_named(monkeypatch, capsys, tmp_path, args, words):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main(monkeypatch, capsys, *args)
    assert_one_line_error(code, err, *words)
    assert not (tmp_path / "x.png").exists() and not (tmp_path / "x.npz").exists()


def test_a_single_number_is_not_a_list_of_positions(monkeypatch, capsys, tmp_path):
    path = tmp_path / "p.npy"
    np.save(path, np.array(5))
    code, _, err = run_main(monkeypatch, capsys, "encode", "--positions", path)
    assert_one_line_error(code, err, "a single number")


@pytest.mark.parametrize(("array", "words"), [
    (np.zeros((0, 16), np.float32), ["empty"]),
    (np.zeros((4, 0), np.float32), ["empty"]),
    (np.array(1.0, np.float32), ["got shape []"]),
    (np.ones((4, 4), bool), ["holds bool values"]),
    (np.where(np.eye(4) > 0, np.nan, 1.0).astype(np.float32), ["NaN or ±inf (row 0)"]),
], ids=["no-rows", "no-columns", "0-d", "bool", "nan"])
def test_permute_refuses_what_is_not_a_projection(monkeypatch, capsys, tmp_path, array, words):
    source, out = tmp_path / "w.npy", tmp_path / "out.npy"
    np.save(source, array)
    code, _, err = run_main(monkeypatch, capsys, "permute", source, "--from", "interleaved", "--to", "half",
                            "--heads", "1", "-o", out)
    assert_one_line_error(code, err, "input:", *words)
    assert not out.exists()
