"""Start-up of the ``pecli`` command against importing its dependencies, in the same run.

    python benchmarks/bench_startup.py [--repeat N]

Each command runs N times in a fresh interpreter (as a user runs it), after one untimed run that
leaves Python's bytecode cache written as an installed pecli has it (even where the environment sets
PYTHONDONTWRITEBYTECODE); the figure is the median wall time as a ratio to the median of
``python -c "import numpy, typer, rich, yaml"``, with the target (1.5×) and pass/fail, and the median
CPU time (user + system) beside it, which a busy machine disturbs less. ``encode --help`` runs twice:
into a pipe (plain text) and into a pseudo-terminal 100 columns wide (the styled page a user sees).
"""

from __future__ import annotations

import argparse
import os
import pty
import resource
import statistics
import subprocess
import sys
import threading
import time

REFERENCE = [sys.executable, "-c", "import numpy, typer, rich, yaml"]
COMMANDS = {
    "pecli --version": ["--version"],
    "pecli encode --help": ["encode", "--help"],
    "pecli encode --help, on a terminal": ["encode", "--help"],
    "pecli encode --length 8 --dim 8 --json": ["encode", "--length", "8", "--dim", "8", "--json"],
}
#: Commands whose output goes to a pseudo-terminal (styled, as a user sees it) rather than a pipe.
ON_A_TERMINAL = {"pecli encode --help, on a terminal"}
TARGET = 1.5


ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def timed(argv: list[str], terminal: bool = False) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``argv`` (its output to a pseudo-terminal if ``terminal``)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    if terminal:
        leader, follower = pty.openpty()
        reader = threading.Thread(target=_drain, args=(leader,))
        reader.start()
        subprocess.run(argv, stdout=follower, stderr=subprocess.DEVNULL, check=True, env={**ENV, "COLUMNS": "100"})
        os.close(follower)
        reader.join()
        os.close(leader)
    else:
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=ENV)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _drain(descriptor: int) -> None:
    """Read a pseudo-terminal until its other end is closed (a full terminal would block the writer)."""
    try:
        while os.read(descriptor, 1 << 16):
            pass
    except OSError:  # EIO: the other end is closed
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    commands = {"reference": REFERENCE, **{name: [sys.executable, "-m", "pecli", *argv] for name, argv in COMMANDS.items()}}
    for name, argv in commands.items():
        timed(argv, name in ON_A_TERMINAL)  # writes the bytecode cache
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(args.repeat):  # interleaved, so that load on the machine hits every command alike
        for name, argv in commands.items():
            runs[name].append(timed(argv, name in ON_A_TERMINAL))
    wall = {name: statistics.median(w for w, _ in values) for name, values in runs.items()}
    cpu = {name: statistics.median(c for _, c in values) for name, values in runs.items()}
    print(f"reference: import numpy, typer, rich, yaml  {wall['reference']:.3f} s, CPU {cpu['reference']:.3f} s "
          f"(medians of {args.repeat})")
    failed = 0
    for name in COMMANDS:
        ratio = wall[name] / wall["reference"]
        verdict = "pass" if ratio <= TARGET else "FAIL"
        failed += verdict == "FAIL"
        print(f"{name:45s} {wall[name]:.3f} s  {ratio:.2f}×  (target ≤ {TARGET}×) {verdict};  "
              f"CPU {cpu[name] / cpu['reference']:.2f}×")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
