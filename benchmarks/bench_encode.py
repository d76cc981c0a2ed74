"""Encode benchmark: ``pecli encode`` against the NumPy snippet a user would write instead, in one run.

Run from the repository root::

    python benchmarks/bench_encode.py              # the issue's sizes (about 3 minutes, 3 GiB of disk)
    python benchmarks/bench_encode.py --scale 8    # lengths divided by 8: a quick look
    python benchmarks/bench_encode.py --json       # one JSON document on stdout

What is measured
----------------
Every command runs in a child process of its own (``python -m pecli encode …`` or ``python -c
SNIPPET``); its wall time is taken around it and its peak memory is the child's maximum resident set
size (``os.wait4``'s ``ru_maxrss``). Each pecli run is paired with a run of its reference just before
it, ``--repeat`` pairs; a ratio is the median of the pairs' ratios, so that a slow moment of a shared
machine weighs on both sides of a pair.

1. ``sinusoidal``: ``encode --scheme sinusoidal --dim 1024 --length 262144 --dtype float32 --out pe.npy``
   against: float64 angles, sin and cos into an (L, d) float64 matrix, ``astype(float32)``, ``np.save``.
   Targets: time ≤ 0.25×, memory ≤ 0.10×, largest error of the file against the float64 matrix
   ≤ 1e-6 (checked on blocks of rows spread over the file, the first and last included).
2. ``rope``: ``encode --scheme rope --dim 128 --length 1048576 --dtype float32 --out rope.npz`` (encoding,
   cos, sin (L, 128) each, inv_freq, positions) against: float64 angles (L, 64), float32 cos and sin,
   ``np.savez``. Targets: time ≤ 1.0×, memory ≤ 1.0×.
3. ``summary``: target 1 run in this process, the CPU seconds spent in the summary (its work on every
   block and at the end) against the CPU seconds of everything else (computing, casting, writing, on
   every thread); the median of three runs.
   Target: ≤ 0.25×.
4. ``flat``: the peak memory of target 1 at L/4 and at L (≤ 1.25×: flat in L), and pecli's memory
   estimate against the measured peak above the interpreter's own (``encode --length 1``).

5. ``rope-hf``: ``encode --scheme rope --dim 128 --length 4194304 --out rope.npz`` (float64; members
   cos, sin, inv_freq, positions) against transformers' ``LlamaRotaryEmbedding`` forward at float64
   (its cos and sin, (L, 128) each) saved with ``np.savez(cos=…, sin=…)``, both whole processes; also at
   L/4. The reference runs in another interpreter that has torch and transformers
   (``--transformers-python``, default ``$PECLI_TRANSFORMERS_PYTHON``); without one this target is
   skipped. Targets: time ≤ 1.0×, pecli's peak ≤ 300 MiB at both lengths.
6. ``huge`` (only with ``--huge``: 17 GB of disk): ``encode --scheme rope --dim 128 --length 16777216
   --dtype float32 --out rope.npz``: it works, the archive checked with ``np.load`` on a few rows;
   targets: peak ≤ 300 MiB, and the memory estimate (which refuses work over ``--max-memory``) at
   least the peak above the interpreter's own (``--length 1``).

7. ``write speed`` (``--only-write`` runs these alone; first the start-up, ``encode --length 1``, this tree's
   and ``--before``'s, reported as the floor under every ratio): ``encode`` to ``.npy``/``.npz`` against writing
   the same number of bytes of zeros to the same folder with ``dd if=/dev/zero bs=1M`` (the machine's
   own write speed, printed beside), in pairs, each file removed just before its writer runs again
   (new files, as a user's; the other's dirty pages are written back meanwhile, alike for both): sinusoidal d = 1024 at 2^18 to ``.npy`` and rope d = 128 at 2^21 to ``.npz`` (cos, sin,
   inv_freq, positions), float32 and float64 (1, 2, 2 and 4 GiB). Target: time ≤ 2× dd's. Each run's CPU
   seconds (user and system, every thread: ``os.wait4``) are printed beside its wall time, dd's too: on a
   shared machine the wall time moves with the other work, the CPU seconds much less. ``--before TREE``
   also runs a pecli source tree given (``PYTHONPATH=TREE``, e.g. a checkout of main), each of its runs
   paired with a dd of its own, in the same run: dd, TREE, dd, this tree, ``--repeat`` times. Before each
   run the dirty pages of the runs before are written to disk (``sync``, untimed; ``--no-sync`` skips it),
   so that the kernel does not throttle a run for the bytes the one before it wrote.
8. ``far error`` (with target 7): float32 files of the last 16,384 positions below 2^24 (``--positions``),
   sinusoidal d = 1024 and rope d = 128, against cos and sin of the float64 angles. Target: ≤ 1e-6.

Times are seconds of wall clock (CPU seconds for target 3); memory is MiB. Performance is measured here, never in timed unit
tests; this file is not collected by pytest.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

MIB = float(1 << 20)

SINUSOID_SNIPPET = """
import sys, numpy as np
L, d, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
inv_freq = 1.0 / np.power(10000.0, np.arange(0, d, 2, dtype=np.float64) / d)
angles = np.outer(np.arange(L, dtype=np.float64), inv_freq)
pe = np.empty((L, d), dtype=np.float64)
pe[:, 0::2] = np.sin(angles)
pe[:, 1::2] = np.cos(angles)
np.save(out, pe.astype(np.float32))
"""

ROPE_SNIPPET = """
import sys, numpy as np
L, d, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
inv_freq = 1.0 / np.power(10000.0, np.arange(0, d, 2, dtype=np.float64) / d)
angles = np.outer(np.arange(L, dtype=np.float64), inv_freq)
np.savez(out, cos=np.cos(angles).astype(np.float32), sin=np.sin(angles).astype(np.float32))
"""


TRANSFORMERS_SNIPPET = """
import sys, numpy as np, torch
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
L, d, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
config = LlamaConfig(hidden_size=d * 32, num_attention_heads=32, head_dim=d, max_position_embeddings=L)
module = LlamaRotaryEmbedding(config)
with torch.no_grad():
    cos, sin = module(torch.zeros(1, 1, d, dtype=torch.float64), torch.arange(L).unsqueeze(0))
np.savez(out, cos=cos[0].numpy(), sin=sin[0].numpy())
"""


def transformers_python(given: str | None) -> str | None:
    """An interpreter that imports torch and transformers, or None (the paired target is then skipped)."""
    candidate = given or os.environ.get("PECLI_TRANSFORMERS_PYTHON")
    if not candidate or not Path(candidate).exists():
        return None
    check = subprocess.run([candidate, "-c", "import torch, transformers"], capture_output=True)
    return candidate if check.returncode == 0 else None


def run_child(argv: list[str], source: str | None = None) -> tuple[float, float, float]:
    """Run ``argv`` as a child process: (wall seconds, its peak resident memory in MiB, its CPU seconds:
    user and system, every thread). ``source``: a pecli source tree the child imports (``PYTHONPATH``)."""
    env = {**os.environ, **({} if source is None else {"PYTHONPATH": source})}
    # A user's pecli runs from its bytecode cache (pip compiles it on install): a child told not to write
    # one (as some shells and CI runners say) would compile every module of pecli at every run, 0.03–0.06
    # CPU s counted against encode and not against dd. The untimed first run of each case writes it.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.perf_counter()
    # ``python -m`` puts the working folder ahead of PYTHONPATH: run in the tree the child must import
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                               cwd=source or Path(__file__).resolve().parent.parent)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {process.stderr.read().decode(errors='replace') if process.stderr else ''}")
    return seconds, usage.ru_maxrss * 1024 / MIB, usage.ru_utime + usage.ru_stime  # Linux reports kilobytes


def pecli(*args: Any) -> list[str]:
    return [sys.executable, "-m", "pecli", "encode", *map(str, args), "--quiet", "--force"]


def snippet(code: str, *args: Any) -> list[str]:
    return [sys.executable, "-c", code, *map(str, args)]


def paired(reference: list[str], candidate: list[str], repeat: int, cleanup: list[Path],
           reference_cleanup: tuple[Path, ...] = ()) -> dict[str, Any]:
    """``repeat`` pairs (reference, then candidate): medians of the times, of the peaks and of the ratios.
    ``cleanup`` is removed before each candidate run, ``reference_cleanup`` before each reference run."""
    pairs = []
    for _ in range(repeat):
        for path in reference_cleanup:
            path.unlink(missing_ok=True)
        ref = run_child(reference)
        for path in cleanup:
            path.unlink(missing_ok=True)
        ours = run_child(candidate)
        pairs.append((ref, ours))
    return {
        "reference_seconds": statistics.median(r[0] for r, _ in pairs),
        "seconds": statistics.median(o[0] for _, o in pairs),
        "time_ratio": statistics.median(o[0] / r[0] for r, o in pairs),
        "reference_mib": statistics.median(r[1] for r, _ in pairs),
        "mib": statistics.median(o[1] for _, o in pairs),
        "memory_ratio": statistics.median(o[1] / r[1] for r, o in pairs),
        "reference_cpu": statistics.median(r[2] for r, _ in pairs),
        "cpu": statistics.median(o[2] for _, o in pairs),
    }


def largest_error(path: Path, length: int, dim: int, samples: int = 33, rows: int = 300) -> float:
    """Largest |file − float64 sinusoid| over ``samples`` blocks of ``rows`` rows spread over the file."""
    stored = np.load(path, mmap_mode="r")
    inv_freq = 1.0 / np.power(10000.0, np.arange(0, dim, 2, dtype=np.float64) / dim)
    worst = 0.0
    for start in np.unique(np.linspace(0, max(length - rows, 0), samples).astype(np.int64)):
        angles = np.outer(np.arange(start, min(start + rows, length), dtype=np.float64), inv_freq)
        exact = np.empty((angles.shape[0], dim))
        exact[:, 0::2], exact[:, 1::2] = np.sin(angles), np.cos(angles)
        worst = max(worst, float(np.abs(stored[start : start + angles.shape[0]] - exact).max()))
    return worst


def summary_share(length: int, dim: int, folder: Path, repeat: int = 3) -> dict[str, float]:
    """Target 1 run in this process: CPU seconds spent in the summary, and in everything else
    (computing, casting, writing the file, on every thread); the median of ``repeat`` runs.

    CPU time rather than wall time: the summary runs on the main thread while a writer thread writes,
    and on a shared machine CPU seconds move far less with the other work than wall seconds do.
    """
    from pecli.analysis.summary import StreamingSummary
    from pecli.cli import encode as encode_command
    from pecli.config import resolve

    add, finish = StreamingSummary.add, StreamingSummary.finish
    spent = {"summary": 0.0}

    def timed(method):
        def run(*args, **kwargs):
            t0 = time.thread_time()
            try:
                return method(*args, **kwargs)
            finally:
                spent["summary"] += time.thread_time() - t0

        return run

    runs = []
    StreamingSummary.add, StreamingSummary.finish = timed(add), timed(finish)
    try:
        spec = resolve({"scheme": "sinusoidal", "dim": dim, "length": length, "dtype": "float32"}, encode_command.SETTINGS)
        for _ in range(repeat):
            spent["summary"] = 0.0
            t0 = time.process_time()
            encode_command._encode(spec, folder / "summary.npy", 1 << 50, force=True, quiet=True)
            total = time.process_time() - t0
            runs.append((spent["summary"], total - spent["summary"]))
    finally:
        StreamingSummary.add, StreamingSummary.finish = add, finish
    summary, rest = sorted(runs, key=lambda run: run[0] / run[1])[len(runs) // 2]
    return {"encoding_seconds": rest, "summary_seconds": summary, "ratio": summary / rest}


def last_row_ok(path: Path, length: int, dim: int) -> None:
    """The archive's members are cos and sin first, and the last row of cos is cos((L − 1)·θ_i), read
    through ``zipfile`` without loading the member (loading it here would count in the next child's
    peak: a child starts with a copy of this process)."""
    import zipfile

    with zipfile.ZipFile(path) as archive:
        assert archive.namelist()[:2] == ["cos.npy", "sin.npy"], archive.namelist()
        with archive.open("cos.npy") as member:
            version = np.lib.format.read_magic(member)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, _, dtype = read(member)
            assert shape == (length, dim), shape
            member.seek(member.tell() + (length - 1) * dim * dtype.itemsize)
            row = np.frombuffer(member.read(dim * dtype.itemsize), dtype=dtype)
    theta = 1.0 / 10000.0 ** (np.arange(0, dim, 2) / dim)
    expected = np.cos(np.float64(length - 1) * np.concatenate([theta, theta]))
    # the rounding of the stored value, and that of an angle of L radians (θ_0 = 1) in float64
    assert np.abs(row - expected).max() <= 2 * np.finfo(dtype).eps + length * 2.0**-52, np.abs(row - expected).max()


def write_targets(work: Path, repeat: int, scale: int, before: str | None = None, settle: bool = True) -> list[dict[str, Any]]:
    """Target 7: encode against ``dd`` writing as many bytes of zeros to the same folder, in pairs; with
    ``before`` (a pecli source tree, e.g. the release before), that tree's encode too, each run of it
    paired with a dd of its own: dd, before, dd, this tree, ``repeat`` times. ``settle``: the dirty pages
    of the runs before are written to disk (``sync``, not timed) before each run, so that no run starts
    with the 2–4 GiB the run before it left (near the level past which the kernel slows writers, about
    3 GB here; a slow run left more of them written back than a fast one)."""
    results = start_targets(work, repeat, before)
    zeros, out = work / "zeros.bin", work / "encoded"
    cases = [("sinusoidal", 1024, (1 << 18) // scale, ".npy"), ("rope", 128, (1 << 21) // scale, ".npz")]
    for name, dim, length, suffix in cases:
        for dtype in ("float32", "float64"):
            target = out.with_suffix(suffix)
            command = pecli("--scheme", name, "--dim", dim, "--length", length, "--dtype", dtype, "--out", target)
            target.unlink(missing_ok=True)
            run_child(command)  # untimed: the size of the file, and Python's bytecode cache written
            if before is not None:
                run_child(command, before)
            size = target.stat().st_size
            target.unlink()
            count = -(-size // (1 << 20))
            print(f"7. {name} d={dim} L={length} {dtype} {suffix} ({size / 2**30:.2f} GiB) against dd, {repeat} pairs",
                  file=sys.stderr, flush=True)
            dd = ["dd", "if=/dev/zero", f"of={zeros}", "bs=1M", f"count={count}"]
            # each file is removed just before its own writer runs again: the other's dirty pages are
            # written back while it runs, alike for both
            runs: dict[str, list[tuple[tuple[float, float, float], tuple[float, float, float]]]] = {"before": [], "this": []}
            for _ in range(repeat):
                for which, source in ([("before", before)] if before is not None else []) + [("this", None)]:
                    zeros.unlink(missing_ok=True)
                    if settle:
                        os.sync()
                    reference = run_child(dd)
                    target.unlink(missing_ok=True)
                    if settle:
                        os.sync()
                    runs[which].append((reference, run_child(command, source)))
            target.unlink(missing_ok=True)
            zeros.unlink(missing_ok=True)
            for which, pairs in runs.items():
                if not pairs:
                    continue
                pair = {
                    "reference_seconds": statistics.median(r[0] for r, _ in pairs),
                    "seconds": statistics.median(o[0] for _, o in pairs),
                    "time_ratio": statistics.median(o[0] / r[0] for r, o in pairs),
                    "mib": statistics.median(o[1] for _, o in pairs),
                    "reference_mib": statistics.median(r[1] for r, _ in pairs),
                    "reference_cpu": statistics.median(r[2] for r, _ in pairs),
                    "cpu": statistics.median(o[2] for _, o in pairs),
                }
                label = "" if which == "this" else " (before)"
                results.append({"target": f"{name} d={dim} L={length} {dtype} {suffix} / dd{label}", "value": pair["time_ratio"],
                                "limit": 2.0, "write_gb_s": count * (1 << 20) / pair["reference_seconds"] / 1e9,
                                "bytes": size, **pair})
    return results


def start_targets(work: Path, repeat: int, before: str | None = None) -> list[dict[str, Any]]:
    """The floor under target 7: ``encode --length 1 --out x.npy`` (Python, NumPy, pecli's imports, a file
    of 4 KiB), ``repeat`` + 1 runs each of this tree and ``before``, the median of the last ``repeat``
    (the first writes the bytecode cache). Reported, not a target: its wall time is what every encode
    pays before its first value."""
    out, results = work / "start.npy", []
    command = pecli("--scheme", "sinusoidal", "--dim", 1024, "--length", 1, "--dtype", "float32", "--out", out)
    for label, source in [("", None)] + ([(" (before)", before)] if before is not None else []):
        runs = [run_child(command, source) for _ in range(repeat + 1)][1:]
        seconds, cpu = statistics.median(r[0] for r in runs), statistics.median(r[2] for r in runs)
        print(f"7. start-up{label}: encode --length 1, {seconds:.3f} s, CPU {cpu:.3f} s", file=sys.stderr, flush=True)
        results.append({"target": f"start-up: encode --length 1{label}, s", "value": seconds, "limit": 10.0,
                        "start_seconds": seconds, "cpu": cpu})
    out.unlink(missing_ok=True)
    return results


def far_error_targets(work: Path, length: int = 1 << 24, rows: int = 1 << 14) -> list[dict[str, Any]]:
    """Target 8: the largest error of float32 files against cos and sin of the float64 angles at the
    last ``rows`` positions below ``length`` (``--positions``: the values depend on the position alone),
    sinusoidal d = 1024 (.npy) and rope d = 128 (.npz, cos and sin)."""
    positions = f"{length - rows}:{length}"
    ids = np.arange(length - rows, length, dtype=np.float64)
    results = []
    for name, dim, suffix in (("sinusoidal", 1024, ".npy"), ("rope", 128, ".npz")):
        out = work / f"far{suffix}"
        print(f"8. {name} d={dim} float32 at positions {positions}: error against float64", file=sys.stderr, flush=True)
        run_child(pecli("--scheme", name, "--dim", dim, "--positions", positions, "--dtype", "float32", "--out", out))
        inv_freq = 1.0 / np.power(10000.0, np.arange(0, dim, 2, dtype=np.float64) / dim)
        worst = 0.0
        for start in range(0, rows, 2048):
            angles = np.outer(ids[start : start + 2048], inv_freq)
            if suffix == ".npy":
                stored = np.load(out, mmap_mode="r")[start : start + 2048]
                worst = max(worst, float(np.abs(stored[:, 0::2] - np.sin(angles)).max()),
                            float(np.abs(stored[:, 1::2] - np.cos(angles)).max()))
            else:
                with np.load(out) as archive:
                    cos, sin = archive["cos"][start : start + 2048], archive["sin"][start : start + 2048]
                half = dim // 2
                worst = max(worst, float(np.abs(cos[:, :half] - np.cos(angles)).max()), float(np.abs(cos[:, half:] - np.cos(angles)).max()),
                            float(np.abs(sin[:, :half] - np.sin(angles)).max()), float(np.abs(sin[:, half:] - np.sin(angles)).max()))
        out.unlink(missing_ok=True)
        results.append({"target": f"{name} float32 max error at {positions}", "value": worst, "limit": 1e-6})
    return results


def hf_targets(python: str | None, length: int, repeat: int, work: Path) -> list[dict[str, Any]]:
    """Target 5: float64 rope archives against transformers + np.savez, at L/4 and L (whole processes)."""
    if python is None:
        print("5. skipped: no interpreter with torch and transformers (--transformers-python)", file=sys.stderr)
        return []
    results = []
    ref_npz, rope_npz = work / "hf.npz", work / "rope64.npz"
    for size in (length // 4, length):
        print(f"5. rope L={size} d=128 float64 .npz against transformers + np.savez, {repeat} pairs", file=sys.stderr, flush=True)
        pair = paired([python, "-c", TRANSFORMERS_SNIPPET, str(size), "128", str(ref_npz)],
                      pecli("--scheme", "rope", "--dim", 128, "--length", size, "--out", rope_npz), repeat, [ref_npz])
        last_row_ok(rope_npz, size, 128)
        ref_npz.unlink(missing_ok=True)
        rope_npz.unlink(missing_ok=True)
        results += [
            {"target": f"rope float64 .npz L={size} time vs transformers", "value": pair["time_ratio"], "limit": 1.0, **pair},
            {"target": f"rope float64 .npz L={size} peak MiB", "value": pair["mib"], "limit": 300},
        ]
    return results


def huge_target(work: Path) -> list[dict[str, Any]]:
    """Target 6: 2^24 positions, float32: it works (time, peak), the archive readable."""
    length, out = 1 << 24, work / "huge.npz"
    print(f"6. rope L={length} d=128 float32 .npz (17 GB)", file=sys.stderr, flush=True)
    seconds, mib, _ = run_child(pecli("--scheme", "rope", "--dim", 128, "--length", length, "--dtype", "float32", "--out", out))
    last_row_ok(out, length, 128)
    size = out.stat().st_size
    out.unlink()
    _, alone, _ = run_child(pecli("--scheme", "rope", "--dim", 128, "--length", 1, "--dtype", "float32", "--out", out))
    out.unlink(missing_ok=True)
    from pecli.cli.encode import encode_run
    from pecli.config import resolve
    from pecli.cli.encode import SETTINGS

    spec = resolve({"scheme": "rope", "dim": 128, "length": length, "dtype": "float32"}, SETTINGS)
    estimate = encode_run(spec, True).memory / MIB
    return [{"target": f"rope float32 .npz L={length} works: peak MiB", "value": mib, "limit": 300,
             "seconds": seconds, "file_gb": size / 1e9},
            # the estimate refuses work over --max-memory before it starts: it must bound the peak
            {"target": f"L={length}: measured above the interpreter / estimate", "value": (mib - alone) / estimate,
             "limit": 1.0, "measured_mib": mib - alone, "estimate_mib": estimate}]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=1, help="divide the issue's lengths by this (default 1)")
    parser.add_argument("--repeat", type=int, default=2, help="pairs of runs per target (default 2)")
    parser.add_argument("--dir", default=None, help="folder for the files written (default: a temporary one)")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of the table")
    parser.add_argument("--transformers-python", default=None, help="a Python with torch and transformers (target 5)")
    parser.add_argument("--huge", action="store_true", help="also target 6: 2^24 positions, 17 GB on disk")
    parser.add_argument("--only-hf", action="store_true", help="run targets 5 (and 6 with --huge) only")
    parser.add_argument("--only-write", action="store_true", help="run target 7 (encode against dd) only")
    parser.add_argument("--before", default=None,
                        help="with --only-write: also a pecli source tree to compare (e.g. a checkout of the release before)")
    parser.add_argument("--no-sync", action="store_true",
                        help="target 7: do not write the dirty pages to disk before each run (faster, less fair)")
    args = parser.parse_args(argv)
    if args.only_write:
        with tempfile.TemporaryDirectory(dir=args.dir) as folder:
            return report(write_targets(Path(folder), args.repeat, args.scale, args.before, not args.no_sync)
                          + far_error_targets(Path(folder)), args.json)
    sin_length, sin_dim = 262144 // args.scale, 1024
    rope_length, rope_dim = 1048576 // args.scale, 128

    def progress(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    results: list[dict[str, Any]] = []
    if args.only_hf:
        with tempfile.TemporaryDirectory(dir=args.dir) as folder:
            results = hf_targets(transformers_python(args.transformers_python), (1 << 22) // args.scale, args.repeat, Path(folder))
            results += huge_target(Path(folder)) if args.huge else []
        return report(results, args.json)
    # Children first: a child's peak memory counts what it inherited at fork, so this process stays small
    # until every child has run.
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        work = Path(folder)
        ref_npy, pe_npy = work / "ref.npy", work / "pe.npy"
        progress(f"1. sinusoidal L={sin_length} d={sin_dim} float32 .npy, {args.repeat} pairs")
        sinusoid = paired(snippet(SINUSOID_SNIPPET, sin_length, sin_dim, ref_npy),
                          pecli("--scheme", "sinusoidal", "--dim", sin_dim, "--length", sin_length, "--dtype", "float32",
                                "--out", pe_npy), args.repeat, [ref_npy])
        ref_npy.unlink(missing_ok=True)

        progress(f"4. flat memory: L={sin_length // 4} and the interpreter alone (L=1)")
        quarter_npy = work / "quarter.npy"
        quarter = run_child(pecli("--scheme", "sinusoidal", "--dim", sin_dim, "--length", sin_length // 4,
                                  "--dtype", "float32", "--out", quarter_npy))
        baseline = run_child(pecli("--scheme", "sinusoidal", "--dim", sin_dim, "--length", 1, "--dtype", "float32",
                                   "--out", quarter_npy))
        quarter_npy.unlink(missing_ok=True)

        progress(f"2. rope L={rope_length} d={rope_dim} float32 .npz, {args.repeat} pairs")
        ref_npz, rope_npz = work / "ref.npz", work / "rope.npz"
        rope = paired(snippet(ROPE_SNIPPET, rope_length, rope_dim, ref_npz),
                      pecli("--scheme", "rope", "--dim", rope_dim, "--length", rope_length, "--dtype", "float32",
                            "--out", rope_npz), args.repeat, [ref_npz])
        ref_npz.unlink(missing_ok=True)
        rope_npz.unlink(missing_ok=True)

        progress("1. largest error of the file against float64")
        error = largest_error(pe_npy, sin_length, sin_dim)
        pe_npy.unlink(missing_ok=True)

        results += hf_targets(transformers_python(args.transformers_python), (1 << 22) // args.scale, args.repeat, work)
        results += huge_target(work) if args.huge else []
        results += write_targets(work, args.repeat, args.scale)
        results += far_error_targets(work)

        progress(f"3. summary against the rest of encode, L={sin_length} d={sin_dim}, in this process")
        share = summary_share(sin_length, sin_dim, work)

    from pecli.encoding_files import memory_needed
    from pecli.config import build_scheme

    estimate = memory_needed(build_scheme("sinusoidal", {"dim": sin_dim}), sin_length, "float32", ["encoding"]) / MIB
    held = sinusoid["mib"] - baseline[1]
    results[:0] = [
        {"target": "sinusoidal time", "value": sinusoid["time_ratio"], "limit": 0.25, **sinusoid},
        {"target": "sinusoidal memory", "value": sinusoid["memory_ratio"], "limit": 0.10},
        {"target": "sinusoidal max error vs float64", "value": error, "limit": 1e-6},
        {"target": "rope .npz time", "value": rope["time_ratio"], "limit": 1.0, **rope},
        {"target": "rope .npz memory", "value": rope["memory_ratio"], "limit": 1.0},
        {"target": "summary CPU time / rest of encode", "value": share["ratio"], "limit": 0.25, **share},
        {"target": "memory flat in L (peak at L / peak at L/4)", "value": sinusoid["mib"] / quarter[1], "limit": 1.25},
        {"target": "estimate / measured (above the interpreter)", "value": estimate / held, "limit": 1.25,
         "low": 0.75, "estimate_mib": estimate, "measured_mib": held},
    ]

    return report(results, args.json)


def report(results: list[dict[str, Any]], as_json: bool) -> int:
    """Print the results (a table, or one JSON document); 0 when every target passes."""
    for result in results:
        result["pass"] = result.get("low", -np.inf) <= result["value"] <= result["limit"]
    if as_json:
        print(json.dumps({"results": results, "numpy": np.__version__, "python": sys.version.split()[0]}, indent=2))
    else:
        for result in results:
            detail = ""
            if "reference_seconds" in result:
                detail = (f"  (pecli {result['seconds']:.2f} s / {result['mib']:.0f} MiB, "
                          f"reference {result['reference_seconds']:.2f} s / {result['reference_mib']:.0f} MiB)")
            if "estimate_mib" in result:
                detail = f"  (estimate {result['estimate_mib']:.0f} MiB, measured {result['measured_mib']:.0f} MiB)"
            if "file_gb" in result:
                detail = f"  ({result['seconds']:.1f} s, {result['file_gb']:.1f} GB)"
            if "write_gb_s" in result:
                detail = (f"  (pecli {result['seconds']:.2f} s, CPU {result['cpu']:.2f} s; dd {result['reference_seconds']:.2f} s, "
                          f"CPU {result['reference_cpu']:.2f} s: {result['write_gb_s']:.2f} GB/s; peak {result['mib']:.0f} MiB)")
            if "start_seconds" in result:
                detail = f"  (CPU {result['cpu']:.3f} s; the floor under every encode above)"
            if "encoding_seconds" in result:
                detail = f"  (summary {result['summary_seconds']:.2f} s, the rest {result['encoding_seconds']:.2f} s)"
            verdict = "pass" if result["pass"] else "FAIL"
            print(f"{result['target']:<48} {result['value']:>10.3g}  limit {result['limit']:<6g} {verdict}{detail}")
    return 0 if all(r["pass"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
