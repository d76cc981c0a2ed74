"""``check all`` and ``compare`` as a user runs them, against their references, paired in one run.

Run from the repository root::

    python benchmarks/bench_check_all.py                 # the issue's sizes, 3 rounds (about 8 minutes)
    python benchmarks/bench_check_all.py --repeat 5
    python benchmarks/bench_check_all.py --scale 16      # lengths divided by 16: a quick look
    python benchmarks/bench_check_all.py --first --before ../main   # the goal's row alone, and the same
                                                                    # pair run from another tree in each round

What is measured
----------------
Each command runs in a child process of its own (``python -m pecli …``); its wall time is taken
around it, its peak memory is the child's maximum resident set size (``os.wait4``). Each row is
``--repeat`` rounds; in a round the reference runs just before the command it is compared with, and a
ratio is the median of the rounds' ratios (smallest and largest beside it), so that a slow moment of
a shared machine weighs on both sides of a pair.

1. ``check all --scheme rope --dim 128 --length 4194304 --json`` against ``encode`` of the same array
   (``encode --scheme rope --dim 128 --length 4194304 --json``: float64, summarised, nothing written).
   Target: time ≤ 3×. Printed beside it: the peak, and pecli's estimate of it
   (``pecli.analysis.estimate_check_bytes``) against the peak above the interpreter's own (``check
   all`` at 3 positions).
2. ``check all`` at 2^22 against ``check all`` at 2^18 (same options). Target: ≤ 20× (linear: 16×).
3. ``compare --schemes rope,alibi,sinusoidal,t5 --length 1048576 --json`` against the sum of the four
   ``check all --scheme S --length 1048576 --json`` runs with the options compare gives each scheme
   (``--dim 128`` for rope and sinusoidal, their own defaults for alibi and t5). Targets: time ≤ 1.2×;
   peak memory printed beside the largest of the four (compare holds one scheme's checks at a time).

``--first`` runs the first row only (the goal's). ``--before TREE`` also runs that row's pair from the
source tree TREE (a checkout of the release before) in each round, just before this tree's pair: each
child of a tree runs in that tree's folder with ``PYTHONPATH`` naming it (``python -m`` puts the
folder it runs in ahead of ``PYTHONPATH``).

Not collected by pytest; it times nothing in the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

MIB = float(1 << 20)
GIB = float(1 << 30)


def run_child(args: list[str], tree: str | None = None) -> tuple[float, float, float]:
    """Run ``python -m pecli ARGS`` in a child process (from source tree ``tree``, default the one
    imported): (wall seconds, peak resident MiB, CPU seconds: user + system). Exit 0 or 1 (a check
    that fails) is a run; anything else stops the benchmark."""
    argv = [sys.executable, "-m", "pecli", *args]
    env = None if tree is None else {**os.environ, "PYTHONPATH": tree}
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tree, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {code}: {process.stderr.read().decode(errors='replace') if process.stderr else ''}")
    return seconds, usage.ru_maxrss * 1024 / MIB, usage.ru_utime + usage.ru_stime


def spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def check_all(length: int, scheme: str = "rope", *extra: str) -> list[str]:
    return ["check", "all", "--scheme", scheme, "--length", str(length), *extra, "--json"]


def goal_rows(length: int, repeat: int, before: str | None) -> list[dict[str, Any]]:
    """The first row alone (``--first``), and with ``before`` the same pair from that tree, in each
    round just before this tree's."""
    encode = ["encode", "--scheme", "rope", "--dim", "128", "--length", str(length), "--json"]
    big = check_all(length, "rope", "--dim", "128")
    trees = ([(f"{before} (before)", before)] if before else []) + [("this tree", None)]
    pairs: dict[str, list[Any]] = {name: [] for name, _ in trees}
    for number in range(repeat):
        print(f"round {number + 1}/{repeat}", file=sys.stderr, flush=True)
        for name, tree in trees:
            pairs[name].append((run_child(encode, tree), run_child(big, tree)))
    return [
        {"row": f"check all L={length} / encode L={length}: {name}", "target": 3.0,
         "ratio": spread([c[0] / e[0] for e, c in runs]),
         "seconds": spread([c[0] for _, c in runs]), "reference_seconds": spread([e[0] for e, _ in runs]),
         "cpu_ratio": spread([c[2] / e[2] for e, c in runs]),
         "cpu_seconds": spread([c[2] for _, c in runs]), "reference_cpu_seconds": spread([e[2] for e, _ in runs]),
         "peak_mib": spread([c[1] for _, c in runs])}
        for name, runs in pairs.items()
    ]


def rows_of(length: int, short: int, compare_length: int, repeat: int) -> list[dict[str, Any]]:
    encode = ["encode", "--scheme", "rope", "--dim", "128", "--length", str(length), "--json"]
    big, small = check_all(length, "rope", "--dim", "128"), check_all(short, "rope", "--dim", "128")
    parts = [check_all(compare_length, "rope", "--dim", "128"), check_all(compare_length, "alibi"),
             check_all(compare_length, "sinusoidal", "--dim", "128"), check_all(compare_length, "t5")]
    compare = ["compare", "--schemes", "rope,alibi,sinusoidal,t5", "--length", str(compare_length), "--json"]
    rounds: dict[str, list[Any]] = {"encode": [], "check": [], "short": [], "parts": [], "compare": []}
    for number in range(repeat):
        print(f"round {number + 1}/{repeat}", file=sys.stderr, flush=True)
        rounds["encode"].append(run_child(encode))
        rounds["check"].append(run_child(big))
        rounds["short"].append(run_child(small))
        rounds["parts"].append([run_child(args) for args in parts])
        rounds["compare"].append(run_child(compare))
    pairs = list(zip(rounds["encode"], rounds["check"], rounds["short"], rounds["parts"], rounds["compare"]))
    return [
        {"row": f"check all L={length} / encode L={length}", "target": 3.0,
         "ratio": spread([c[0] / e[0] for e, c, *_ in pairs]),
         "seconds": spread([c[0] for _, c, *_ in pairs]), "reference_seconds": spread([e[0] for e, *_ in pairs]),
         "cpu_ratio": spread([c[2] / e[2] for e, c, *_ in pairs]),
         "cpu_seconds": spread([c[2] for _, c, *_ in pairs]), "reference_cpu_seconds": spread([e[2] for e, *_ in pairs]),
         "peak_mib": spread([c[1] for _, c, *_ in pairs])},
        {"row": f"check all L={length} / check all L={short}", "target": 20.0,
         "ratio": spread([c[0] / s[0] for _, c, s, *_ in pairs]),
         "seconds": spread([s[0] for _, _, s, *_ in pairs])},
        {"row": f"compare 4 schemes L={compare_length} / sum of their check all", "target": 1.2,
         "ratio": spread([m[0] / sum(p[0] for p in parts) for *_, parts, m in pairs]),
         "seconds": spread([m[0] for *_, m in pairs]), "reference_seconds": spread([sum(p[0] for p in ps) for *_, ps, _ in pairs]),
         "peak_mib": spread([m[1] for *_, m in pairs]), "largest_check_mib": spread([max(p[1] for p in ps) for *_, ps, _ in pairs])},
    ]


def estimate_mib(length: int) -> float:
    """pecli's estimate of the peak of ``check all`` on rope, d = 128 (computed here, nothing encoded)."""
    from pecli.analysis.options import CheckOptions
    from pecli.analysis.registry import estimate_check_bytes
    from pecli.config import build_scheme

    scheme = build_scheme("rope", {"dim": 128}, length=length)
    return estimate_check_bytes(scheme, "all", CheckOptions(length=length)) / MIB


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scale", type=int, default=1, help="divide every length by this (default 1)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--first", action="store_true", help="only the first row (check all / encode at 2^22)")
    parser.add_argument("--before", metavar="TREE", help="also run the first row's pair from this source tree")
    args = parser.parse_args(argv)
    length, short, compare_length = (n // args.scale for n in (1 << 22, 1 << 18, 1 << 20))
    if args.first or args.before:
        rows = goal_rows(length, args.repeat, args.before)
        if not args.first:
            rows += rows_of(length, short, compare_length, args.repeat)[1:]
    else:
        rows = rows_of(length, short, compare_length, args.repeat)
    this = next(i for i, row in enumerate(rows) if not row["row"].endswith("(before)"))
    rows[this]["estimate_mib"] = estimate_mib(length)
    rows[this]["interpreter_mib"] = run_child(check_all(3, "rope", "--dim", "128"))[1]
    if args.json:
        print(json.dumps({"repeat": args.repeat, "rows": rows}, indent=2))
        return 0
    print(f"{'row':<52}{'ratio':>7} {'(min … max)':<15}{'target':>8}  peak")
    for row in rows:
        ratio = row["ratio"]
        verdict = "pass" if ratio["median"] <= row["target"] else "FAIL"
        peak = ""
        if "peak_mib" in row:
            peak = f"{row['peak_mib']['median']:.0f} MiB"
            if "peak_target_mib" in row:
                peak += f" (≤ {row['peak_target_mib']:.0f}: {'pass' if row['peak_mib']['median'] <= row['peak_target_mib'] else 'FAIL'})"
            if "estimate_mib" in row:
                whole, above = row["peak_mib"]["median"], row["peak_mib"]["median"] - row["interpreter_mib"]
                peak += (f" (estimate {row['estimate_mib']:.0f} MiB: {row['estimate_mib'] / whole:.2f}× the peak, "
                         f"{row['estimate_mib'] / above:.2f}× above the interpreter)")
            if "largest_check_mib" in row:
                peak += f" (largest check all: {row['largest_check_mib']['median']:.0f} MiB)"
        print(f"{row['row']:<52}{ratio['median']:>6.2f}× ({ratio['min']:.2f} … {ratio['max']:.2f})"
              f"  ≤ {row['target']:g}× {verdict}  {peak}")
        if "cpu_ratio" in row:
            cpu = row["cpu_ratio"]
            print(f"{'  in CPU seconds (user + system)':<52}{cpu['median']:>6.2f}× ({cpu['min']:.2f} … {cpu['max']:.2f})"
                  f"  {row['cpu_seconds']['median']:.1f} s / {row['reference_cpu_seconds']['median']:.1f} s;"
                  f" wall {row['seconds']['median']:.1f} s / {row['reference_seconds']['median']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
