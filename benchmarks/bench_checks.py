"""Check benchmark: each property of ``pecli check`` against encoding the same array, at L and L/2.

Run from the repository root::

    python benchmarks/bench_checks.py                       # rope and sinusoidal, d = 128, L = 2**20
    python benchmarks/bench_checks.py --length 262144       # quicker
    python benchmarks/bench_checks.py --schemes rope --json

What is measured
----------------
For each scheme and for L and L/2: the reference, ``scheme.encode(np.arange(L))`` in float64 (best of
``--repeat``), then each property of :data:`pecli.analysis.ANALYSES` run on its own — the remembered
encoding dropped first, so the property pays for any encoding it needs — once under
:mod:`tracemalloc`: wall seconds, peak traced bytes, and the footprint
:meth:`~pecli.analysis.AnalysisInfo.estimate_bytes` gave before the run.

How to read the output
----------------------
``x encode`` is the property's time over the reference's at the same L, in the same run: the issue's
target is at most 4. ``x L/2`` is the property's time at L over its time at L/2: at most 2.3 (linear
work, with some slack for noise). ``peak MiB`` should stay under 2 GiB at L = 2**20, d = 128, and under
``est MiB``. Timings on a shared machine are noisy: compare ratios, not seconds. This file is not
collected by pytest.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import tracemalloc
from typing import Any

import numpy as np

from pecli.analysis.options import CheckOptions
from pecli.analysis.registry import ANALYSES, all_names
from pecli.analysis import structure
from pecli.config import build_scheme

MIB = float(1 << 20)
TARGET_ENCODE_RATIO = 4.0
TARGET_DOUBLING_RATIO = 2.3
TARGET_PEAK_BYTES = 2 << 30


def encode_seconds(scheme: Any, length: int, repeat: int) -> float:
    """Best of ``repeat`` runs of ``scheme.encode`` over 0 … L − 1 into float64."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        np.asarray(scheme.encode(np.arange(length)), dtype=np.float64)
        best = min(best, time.perf_counter() - start)
    return best


def run_property(name: str, scheme: Any, length: int) -> dict[str, Any]:
    """One traced run of property ``name``, from a cold cache."""
    structure._remembered_vectors.cache_clear()
    gc.collect()
    options = CheckOptions(length=length)
    info = ANALYSES[name]
    estimate = info.estimate_bytes(scheme, options)
    tracemalloc.start()
    try:
        start_bytes, _ = tracemalloc.get_traced_memory()
        start = time.perf_counter()
        result = info.run(scheme, options)
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return {"seconds": seconds, "peak_bytes": peak - start_bytes, "estimate_bytes": estimate,
            "verdict": result.verdict, "sampled": result.sampled}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--length", type=int, default=1 << 20, help="L (default 2**20); L/2 is measured too")
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--schemes", default="rope,sinusoidal", help="comma-separated (default rope,sinusoidal)")
    parser.add_argument("--repeat", type=int, default=2, help="runs for the reference's best time (default 2)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    for name in args.schemes.split(","):
        times: dict[tuple[str, int], float] = {}
        for length in (args.length // 2, args.length):
            scheme = build_scheme(name, {"dim": args.dim}, length=length)
            reference = encode_seconds(scheme, length, args.repeat)
            print(f"{name} L={length}: encode {reference:.2f} s", file=sys.stderr, flush=True)
            for prop in all_names():
                row = {"scheme": name, "length": length, "property": prop, **run_property(prop, scheme, length)}
                row["encode_seconds"] = reference
                row["x_encode"] = row["seconds"] / reference
                half = times.get((prop, length // 2))
                row["x_half"] = row["seconds"] / half if half else None
                times[(prop, length)] = row["seconds"]
                rows.append(row)
    if args.json:
        print(json.dumps({"dim": args.dim, "rows": rows}, indent=2))
        return 0
    header = f"{'scheme':<11}{'L':>9} {'property':<19}{'seconds':>8}{'x encode':>9}{'x L/2':>7}{'peak MiB':>10}{'est MiB':>9}  verdict"
    print(header)
    print("-" * len(header))
    for row in rows:
        half = f"{row['x_half']:.2f}" if row["x_half"] else "-"
        marks = "".join([
            " !time" if row["x_encode"] > TARGET_ENCODE_RATIO else "",
            " !doubling" if row["x_half"] and row["x_half"] > TARGET_DOUBLING_RATIO else "",
            " !memory" if row["peak_bytes"] > TARGET_PEAK_BYTES else "",
            " !estimate" if row["peak_bytes"] > row["estimate_bytes"] else "",
        ])
        print(f"{row['scheme']:<11}{row['length']:>9} {row['property']:<19}{row['seconds']:>8.2f}{row['x_encode']:>9.2f}"
              f"{half:>7}{row['peak_bytes'] / MIB:>10.0f}{row['estimate_bytes'] / MIB:>9.0f}  "
              f"{row['verdict']}{' (sampled)' if row['sampled'] else ''}{marks}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
