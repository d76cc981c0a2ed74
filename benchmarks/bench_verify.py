"""Verify benchmark: ``pecli verify``'s comparison against encoding the same reference, in one run.

Run from the repository root::

    python benchmarks/bench_verify.py                     # Llama 3.1's RoPE, 131,072 × 128, float32
    python benchmarks/bench_verify.py --length 32768 --json

What is measured
----------------
The arrays: transformers' float32 pipeline written out with NumPy (Llama 3.1's frequencies in float32
times float32 positions, cos and sin in float32, the half layout), so that they match. The reference:
``scheme.cos_sin(positions)`` in float64, best of ``--repeat``. Then :func:`pecli.analysis.verify.verify_rope`
on the matching arrays, and on arrays with a planted bug (the layout, named after testing each cause),
each best of ``--repeat``, with the peak traced memory of one run.

How to read the output
----------------------
``x reference`` is the time over the reference's in the same run: the issue's target for matching arrays
is at most 3. The planted bug pays one comparison per cause it tests. Timings on a shared machine are
noisy: compare ratios, not seconds. This file is not collected by pytest.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import tracemalloc

import numpy as np

from pecli.analysis.verify import verify_rope
from pecli.config import build_scheme

LLAMA31 = {"dim": 128, "base": 500000.0, "max_position_embeddings": 131072, "rope_scaling": {
    "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192}}
TARGET_RATIO = 3.0


def best_of(repeat: int, work) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def peak_bytes(work) -> int:
    gc.collect()
    tracemalloc.start()
    work()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=131072)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    scheme = build_scheme("rope", LLAMA31)
    positions = np.arange(args.length)
    angles = positions.astype(np.float32)[:, None] * scheme.inv_freq.astype(np.float32)[None, :]
    angles = np.concatenate([angles, angles], axis=1)
    cos, sin = np.cos(angles), np.sin(angles)
    swapped = np.repeat(angles[:, : angles.shape[1] // 2], 2, axis=1)  # the interleaved layout: a planted bug
    bug_cos, bug_sin = np.cos(swapped), np.sin(swapped)
    reference = best_of(args.repeat, lambda: scheme.cos_sin(positions))
    rows = []
    for name, arrays in (("matching arrays", (cos, sin)), ("planted layout bug", (bug_cos, bug_sin))):
        seconds = best_of(args.repeat, lambda: verify_rope(*arrays, scheme, positions))
        report = verify_rope(*arrays, scheme, positions)
        rows.append({"case": name, "seconds": seconds, "x_reference": seconds / reference,
                     "peak_mib": peak_bytes(lambda: verify_rope(*arrays, scheme, positions)) / 2**20,
                     "match": report.match, "diagnosis": [d.code for d in report.diagnosis]})
    if args.json:
        print(json.dumps({"length": args.length, "reference_seconds": reference, "rows": rows}, indent=2))
        return
    print(f"verify, {args.length:,} x 128 float32 arrays; reference cos_sin: {reference:.3f} s")
    for row in rows:
        flag = "" if row["case"] != "matching arrays" or row["x_reference"] <= TARGET_RATIO else "  (over the target)"
        print(f"  {row['case']:20s} {row['seconds']:.3f} s  {row['x_reference']:.2f} x reference  "
              f"peak {row['peak_mib']:.0f} MiB  match={row['match']} {row['diagnosis']}{flag}")


if __name__ == "__main__":
    main()
