"""Where ``check all`` spends its time and memory: a cProfile summary by property and by function.

    python benchmarks/profile_check_all.py [--length 1048576] [--dim 128] [--top 12]

Runs ``run_checks(rope, "all")`` once under cProfile (the time each property's task took, and the
functions with the most time of their own), then once under tracemalloc (the peak of traced memory).
Prints Markdown: ``benchmarks/profile_check_all.md`` holds its output before and after issue 24.
Profiles are for finding where the time goes; ratios against a reference are bench_check_all.py's.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import sys
import time
import tracemalloc

from pecli.analysis.options import CheckOptions
from pecli.analysis.registry import run_checks
from pecli.config import build_scheme
from pecli.progress import reporting


class Stopwatch:
    """A progress reporter that notes when each task starts: the properties' ``NAME (i/6)`` and the
    passes they open (``encode``, ``relativity``, ``precision``)."""

    def __init__(self) -> None:
        self.starts: list[tuple[str, float]] = []

    def start(self, label: str, total: int | None) -> None:
        self.starts.append((label, time.perf_counter()))

    def advance(self, amount: int) -> None:
        pass

    def finish(self) -> None:
        pass

    def properties(self, end: float) -> list[tuple[str, float]]:
        """Each property's seconds, from its task's start to the next property's (its passes included);
        the shared pass, which runs before the first property, as its own line."""
        marks = [(label, at) for label, at in self.starts if "/" in label] + [("", end)]
        first = marks[0][1]
        before = [("shared pass over the rows (before the first property)", first - self.begin)] if first - self.begin > 0.005 else []
        return before + [(label, marks[i + 1][1] - at) for i, (label, at) in enumerate(marks[:-1])]


def traced_peak(run) -> int:
    """The peak of traced memory while ``run()`` runs, the remembered encodings dropped first."""
    from pecli.analysis import structure

    structure._remembered_vectors.cache_clear()
    gc.collect()
    tracemalloc.start()
    run()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=1 << 20)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args(argv)
    scheme = build_scheme("rope", {"dim": args.dim}, length=args.length)
    options = CheckOptions(length=args.length)
    from pecli.analysis import structure

    structure._remembered_vectors.cache_clear()
    profile, watch = cProfile.Profile(), Stopwatch()
    gc.collect()
    watch.begin = started = time.perf_counter()
    with reporting(watch):
        profile.enable()
        results = run_checks(scheme, "all", options)
        profile.disable()
    end = time.perf_counter()
    peak = traced_peak(lambda: run_checks(scheme, "all", options))
    print(f"`run_checks(rope dim={args.dim}, \"all\", L={args.length})`: {end - started:.2f} s under cProfile, "
          f"traced peak {peak / (1 << 20):.0f} MiB; verdicts {', '.join(r.verdict for r in results)}\n")
    print("| property (its passes included) | seconds |\n|---|---:|")
    for label, seconds in watch.properties(end):
        print(f"| {label} | {seconds:.2f} |")
    text = io.StringIO()
    stats = pstats.Stats(profile, stream=text)
    stats.sort_stats("tottime")
    print("\n| function | calls | own s | cumulative s |\n|---|---:|---:|---:|")
    for (path, line, name), (_, calls, own, cumulative, _) in sorted(stats.stats.items(), key=lambda item: -item[1][2])[: args.top]:
        where = path.split("site-packages/")[-1].split("pecli/", 1)[-1] if "pecli" in path or "site-packages" in path else path
        print(f"| `{where}:{line}({name})` | {calls} | {own:.2f} | {cumulative:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
