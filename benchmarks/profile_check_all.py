"""Where ``check all`` spends its time and memory: a cProfile summary by property and by function,
and the CPU seconds of each accumulator of the pass over the rows.

    python benchmarks/profile_check_all.py [--length 1048576] [--dim 128] [--top 12] [--cpu-only]

Runs ``run_checks(rope, "all")`` once under cProfile (the time each property's task took, and the
functions with the most time of their own), then once under tracemalloc (the peak of traced memory),
then once more with the pass on one thread, timing each accumulator's blocks, the encoding of the rows
and each property's work after the pass in CPU seconds of the thread that ran them (cProfile sees the
main thread only, and the pass runs on three; CPU seconds hold on a shared machine where wall seconds
do not). Prints Markdown: ``benchmarks/profile_check_all.md`` holds its output before and after
issues 24 and 46. Profiles are for finding where the time goes; ratios against a reference are
bench_check_all.py's.
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


def cpu_by_part(scheme, options) -> tuple[dict[str, float], dict[str, float], float]:
    """CPU seconds of each accumulator of the pass and of the rows' encoding (the pass run on one
    thread, so that each is timed alone), of each property after the pass, and of the whole run."""
    from pecli.analysis import encoding_pass, registry, structure

    parts: dict[str, float] = {}
    properties: dict[str, float] = {}

    def take(accumulators, block):
        for accumulator in accumulators:
            started = time.thread_time()
            accumulator.add(block)
            name = type(accumulator).__name__
            parts[name] = parts.get(name, 0.0) + time.thread_time() - started

    get, run_one = encoding_pass.EncodingRows.__getitem__, registry._run_one

    def encoded(self, index):
        # the process's clock: the rows may be made on two threads (pecli.schemes.frequencies.fill_rows),
        # and nothing else runs while this thread waits for them
        started = time.process_time()
        rows = get(self, index)
        parts["encoding the rows"] = parts.get("encoding the rows", 0.0) + time.process_time() - started
        return rows

    def one(scheme, name, options, label):
        started = time.thread_time()
        result = run_one(scheme, name, options, label)
        properties[name] = time.thread_time() - started
        return result

    saved = (encoding_pass._take, encoding_pass.lanes, encoding_pass.EncodingRows._encoded)
    encoding_pass._take, encoding_pass.lanes, registry._run_one = take, lambda accumulators: [accumulators], one
    encoding_pass.EncodingRows.__getitem__ = encoded
    encoding_pass.EncodingRows._encoded = lambda self, blocks: ((part, self[part]) for part in blocks)
    structure._remembered_vectors.cache_clear()
    try:
        started = time.process_time()
        run_checks(scheme, "all", options)
        total = time.process_time() - started
    finally:
        encoding_pass._take, encoding_pass.lanes, encoding_pass.EncodingRows._encoded = saved
        encoding_pass.EncodingRows.__getitem__, registry._run_one = get, run_one
    return parts, properties, total


def print_cpu(scheme, options) -> None:
    parts, properties, total = cpu_by_part(scheme, options)
    print(f"\nCPU seconds, the pass on one thread: {total:.2f} s in all (user + system of the process)\n")
    print("| part | CPU s |\n|---|---:|")
    for name, seconds in sorted(parts.items(), key=lambda item: -item[1]):
        print(f"| pass: {name} | {seconds:.2f} |")
    for name, seconds in properties.items():
        print(f"| after the pass: {name} | {seconds:.2f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=1 << 20)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--cpu-only", action="store_true", help="only the CPU seconds of each part")
    args = parser.parse_args(argv)
    scheme = build_scheme("rope", {"dim": args.dim}, length=args.length)
    options = CheckOptions(length=args.length)
    if args.cpu_only:
        print_cpu(scheme, options)
        return 0
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
    print_cpu(scheme, options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
