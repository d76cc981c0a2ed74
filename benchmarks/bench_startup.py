"""Start-up of the ``pecli`` command against importing its dependencies, in the same run.

    python benchmarks/bench_startup.py [--repeat N]

Each command runs N times in a fresh interpreter (as a user runs it); the figure is the median wall
time as a ratio to the median of ``python -c "import numpy, typer, rich, yaml"``, with the target
(1.5×) and pass/fail.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

REFERENCE = [sys.executable, "-c", "import numpy, typer, rich, yaml"]
COMMANDS = {
    "pecli --version": ["--version"],
    "pecli encode --help": ["encode", "--help"],
    "pecli encode --length 8 --dim 8 --json": ["encode", "--length", "8", "--dim", "8", "--json"],
}
TARGET = 1.5


def wall(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    timings: dict[str, list[float]] = {"reference": [], **{name: [] for name in COMMANDS}}
    for _ in range(args.repeat):  # interleaved, so that load on the machine hits every command alike
        timings["reference"].append(wall(REFERENCE))
        for name, argv in COMMANDS.items():
            timings[name].append(wall([sys.executable, "-m", "pecli", *argv]))
    reference = statistics.median(timings["reference"])
    print(f"reference: import numpy, typer, rich, yaml  {reference:.3f} s (median of {args.repeat})")
    failed = 0
    for name in COMMANDS:
        ratio = statistics.median(timings[name]) / reference
        verdict = "pass" if ratio <= TARGET else "FAIL"
        failed += verdict == "FAIL"
        print(f"{name:45s} {statistics.median(timings[name]):.3f} s  {ratio:.2f}×  (target ≤ {TARGET}×) {verdict}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
