"""Sweep benchmark (issue 23): ``pecli sweep --jobs 2`` against ``--jobs 1``, paired in the same run.

Run from the repository root::

    python benchmarks/bench_sweep.py                  # 3 × 3 grid, distinguishability at L = 65,536
    python benchmarks/bench_sweep.py --repeat 5 --json

What is measured
----------------
The command a user runs, end to end (a fresh interpreter, pecli's start-up, the pool's start-up, the
rows file): ``pecli sweep distinguishability --scheme rope -L 65536 --grid base=1e4,5e5,1e7
--grid dim=256,512,1024 -o rows.jsonl --jobs J`` for J = 1 and J = 2, one after the other, ``--repeat``
times, the order of the pair alternating so that a drift of the machine's load falls on both. Each
pair's files must be byte for byte the same (the same rows, whatever ran them).

How to read the output
----------------------
``ratio`` is the time of ``--jobs 2`` over that of ``--jobs 1`` in the same pair; the issue's target is
at most 0.7 (two cores: 0.5 at best, plus the pool's start-up and the grid's imbalance). ``cpu`` is the
processor time of each run's processes: about equal for both when the work splits without waste. On a
machine whose cores other work keeps busy, ``--jobs 2`` gets less than two cores and the ratio rises
towards 1 however well the work splits (a wall time well above the CPU time says so): compare the
pairs, and read the median. This file is not collected by pytest.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_RATIO = 0.7
GRID = ("--grid", "base=1e4,5e5,1e7", "--grid", "dim=256,512,1024")
COMMAND = ("sweep", "distinguishability", "--scheme", "rope", "-L", "65536", *GRID)


def timed(folder: Path, jobs: int, tag: str) -> tuple[float, float, bytes]:
    """Wall seconds of one ``pecli sweep --jobs J`` into a new file, the CPU seconds (user + system) of
    its processes, and the file's bytes."""
    out = folder / f"rows-{tag}-{jobs}.jsonl"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pecli", *COMMAND, "-o", str(out), "--jobs", str(jobs), "-q"], check=True,
                   env={**os.environ, "NO_COLOR": "1"})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out.read_bytes()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="pairs of runs (default 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)
    pairs = []
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(args.repeat):
            order = (1, 2) if repeat % 2 == 0 else (2, 1)
            runs = {jobs: timed(Path(folder), jobs, str(repeat)) for jobs in order}
            if runs[1][2] != runs[2][2]:
                raise SystemExit("--jobs 1 and --jobs 2 wrote different files")
            pairs.append({"jobs_1": runs[1][0], "jobs_2": runs[2][0], "ratio": runs[2][0] / runs[1][0],
                          "cpu_1": runs[1][1], "cpu_2": runs[2][1]})
    median = statistics.median(pair["ratio"] for pair in pairs)
    if args.json:
        print(json.dumps({"command": "pecli " + " ".join(COMMAND), "pairs": pairs, "median_ratio": median,
                          "target": TARGET_RATIO, "cores": os.cpu_count()}, indent=2))
    else:
        print(f"pecli {' '.join(COMMAND)}  ({os.cpu_count()} cores)")
        print(f"{'pair':>4}  {'jobs 1 s':>9}  {'jobs 2 s':>9}  {'ratio':>6}  {'cpu 1 s':>8}  {'cpu 2 s':>8}")
        for number, pair in enumerate(pairs, 1):
            print(f"{number:>4}  {pair['jobs_1']:>9.2f}  {pair['jobs_2']:>9.2f}  {pair['ratio']:>6.2f}"
                  f"  {pair['cpu_1']:>8.2f}  {pair['cpu_2']:>8.2f}")
        verdict = "meets" if median <= TARGET_RATIO else "misses"
        print(f"median ratio {median:.2f}: {verdict} the target of at most {TARGET_RATIO} (same rows in every pair)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
