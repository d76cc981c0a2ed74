"""Scale benchmark: the analyses at L = 65,536 positions and d = 128, in seconds, without O(L²) memory.

Run from the repository root::

    python benchmarks/bench_scale.py                  # L = 65536, d = 128, best of 3
    python benchmarks/bench_scale.py --length 8192    # quicker
    python benchmarks/bench_scale.py --json           # one JSON document on stdout

What is measured
----------------
For each scheme (integer, binary, sinusoidal, learned, relative, t5, alibi, rope; ``--dim`` for the
schemes that have a ``dim``, their own defaults for binary, t5 and alibi):

- every property check of :data:`pecli.analysis.ANALYSES`, run once under :mod:`tracemalloc`: its wall
  time (``time.perf_counter``) and its peak traced memory;
- the whole ``run_checks(scheme, "all", CheckOptions(length=L))``: wall time, best of
  ``--repeat`` runs without tracing, and its peak memory from one further traced run.

Then Men et al.'s ``base_lower_bound(C, d)`` for C = 8192, 131072 and 1,048,576, and
``pecli.wavelengths.spectrum.spectrum`` of rope at C = 131072.

The reference
-------------
Building the (L, d) float64 sinusoid matrix directly with NumPy in the same run —
``angles = np.outer(np.arange(L), inv_freq)``, ``np.sin(angles)`` and ``np.cos(angles)`` written into
an (L, d) array — best of ``--repeat``. It is the least work any analysis of an (L, d) encoding can
do (one pass producing every component once), and it runs on the same machine, NumPy and BLAS at the
same moment as everything else, so the ratios compare across machines where absolute seconds do not.

How to read the output
----------------------
- ``seconds``: absolute wall time. ``x ref``: that time divided by the reference time. A check at
  ``x ref`` ≈ 10 costs about ten passes over the encoding; a ratio that grows faster than L when L
  doubles (compare ``--length 8192`` with the default) points to super-linear work.
- ``peak MiB``: the largest amount of memory traced while the step ran, above what was allocated
  before it (NumPy reports its array buffers to tracemalloc). ``peak/L2``: that peak divided by the
  size of one (L, L) float64 array, L²·8 bytes (32 GiB at L = 65536) — the memory an all-pairs
  implementation would need at the least. Rows whose peak exceeds 1/8 of it are marked ``!`` (in JSON:
  ``"flag": true``). For the base-bound and spectrum rows the length is their context C.
  At small L the (L, d) arrays weigh more against L², so the flag is stricter there.
- Not traced: memory that BLAS/LAPACK allocate themselves (work buffers), and the interpreter. The
  footer gives the process's maximum resident set size as a coarse upper bound on everything.
- Per-property times come from the traced run (tracemalloc slows Python-level allocations; NumPy
  work is barely affected). The ``all`` row's time is untraced; its sum over the properties shows the
  tracing overhead and the noise of single runs.

Performance is measured here, as ratios against a reference from the same run, never in timed unit
tests; this file is not collected by pytest.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
import tracemalloc
from typing import Any, Callable

import numpy as np

from pecli.analysis.options import CheckOptions
from pecli.analysis.registry import ANALYSES, all_names, run_checks
from pecli.wavelengths.base_bound import base_lower_bound
from pecli.wavelengths.spectrum import spectrum
from pecli.config import build_scheme

SCHEMES = ("integer", "binary", "sinusoidal", "learned", "relative", "t5", "alibi", "rope")
#: Schemes without a ``dim`` parameter: built with their own defaults.
NO_DIM = ("binary", "t5", "alibi")
BOUND_CONTEXTS = (8192, 131072, 1_048_576)
SPECTRUM_CONTEXT = 131072
FLAG_FRACTION = 1 / 8
MIB = float(1 << 20)


def traced(fn: Callable[[], Any]) -> tuple[Any, float, int]:
    """Run ``fn`` once under tracemalloc: (its result, wall seconds, peak bytes allocated during it)."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start_bytes, _ = tracemalloc.get_traced_memory()
        t0 = time.perf_counter()
        result = fn()
        seconds = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, seconds, max(0, peak - start_bytes)


def best_time(fn: Callable[[], Any], repeat: int) -> tuple[Any, float]:
    """Best wall time of ``repeat`` untraced runs, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return result, best


def reference_matrix(length: int, dim: int) -> np.ndarray:
    """The (L, d) float64 sinusoid matrix, built directly: PE[p, 2i] = sin(p ω_i), PE[p, 2i+1] = cos(p ω_i)."""
    inv_freq = 1.0 / np.power(10000.0, np.arange(0, dim, 2, dtype=np.float64) / dim)
    angles = np.outer(np.arange(length, dtype=np.float64), inv_freq)
    out = np.empty((length, dim), dtype=np.float64)
    out[:, 0::2] = np.sin(angles)
    out[:, 1::2] = np.cos(angles)
    return out


def scheme_params(name: str, dim: int) -> dict[str, Any]:
    return {} if name in NO_DIM else {"dim": dim}


def verdict_of(result: Any) -> str | None:
    if isinstance(result, list):
        return ",".join(sorted({str(getattr(r, "verdict", "?")) for r in result}))
    return getattr(result, "verdict", None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--length", type=int, default=65536, help="positions L (default 65536)")
    parser.add_argument("--dim", type=int, default=128, help="d for schemes with a dim, and for the base bound (default 128)")
    parser.add_argument("--repeat", type=int, default=3, help="runs for the best-of timings (default 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of the table")
    args = parser.parse_args(argv)
    if args.length < 2 or args.dim < 2 or args.dim % 2 or args.repeat < 1:
        parser.error("need --length >= 2, an even --dim >= 2 and --repeat >= 1")
    L, d = args.length, args.dim

    def progress(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    started = time.perf_counter()
    rows: list[dict[str, Any]] = []

    def add(scheme: str, prop: str, seconds: float, peak: int | None, n: int, **extra: Any) -> None:
        row: dict[str, Any] = {"scheme": scheme, "property": prop, "n": n, "seconds": seconds, "peak_bytes": peak}
        row.update(extra)
        rows.append(row)

    # -- the reference -----------------------------------------------------------------------------
    progress(f"reference: ({L}, {d}) sinusoid matrix, best of {args.repeat}")
    matrix, ref_seconds = best_time(lambda: reference_matrix(L, d), args.repeat)
    check_n = min(L, 1024)  # the reference is the same array pecli's sinusoidal scheme encodes
    encoded = build_scheme("sinusoidal", {"dim": d}, length=L).encode(np.arange(check_n))
    if not np.allclose(matrix[:check_n], encoded, rtol=0, atol=1e-9):
        raise SystemExit("reference matrix does not match pecli's sinusoidal encoding")
    del matrix, encoded
    _, _, ref_peak = traced(lambda: reference_matrix(L, d))
    add("reference", "np sin/cos (L, d)", ref_seconds, ref_peak, L)

    # -- the analyses --------------------------------------------------------------------------------
    for name in SCHEMES:
        params = scheme_params(name, d)
        scheme = build_scheme(name, params, length=L)
        options = CheckOptions(length=L)
        progress(f"{name}: {', '.join(all_names())} (traced), then all x{args.repeat} + 1 traced")
        for prop, info in ((name, ANALYSES[name]) for name in all_names()):
            result, seconds, peak = traced(lambda: info.run(scheme, options))
            add(name, prop, seconds, peak, L, verdict=verdict_of(result))
        _, total_seconds = best_time(lambda: run_checks(scheme, "all", options), args.repeat)
        results, _, total_peak = traced(lambda: run_checks(scheme, "all", options))
        add(name, "all", total_seconds, total_peak, L, verdict=verdict_of(results))

    # -- wavelengths: Men et al.'s bound and the rope spectrum ---------------------------------------
    for context in BOUND_CONTEXTS:
        progress(f"base_lower_bound({context}, {d})")
        bound, seconds, peak = traced(lambda: base_lower_bound(context, d))
        add("rope", f"base_bound C={context}", seconds, peak, context,
            smallest_base=bound.smallest_base, every_base_above=bound.every_base_above)
    rope = build_scheme("rope", {"dim": d}, length=SPECTRUM_CONTEXT)
    _, seconds, peak = traced(lambda: spectrum(rope, context=SPECTRUM_CONTEXT))
    add("rope", f"spectrum C={SPECTRUM_CONTEXT}", seconds, peak, SPECTRUM_CONTEXT)

    for row in rows:
        square = row["n"] ** 2 * 8
        row["ratio_to_reference"] = row["seconds"] / ref_seconds
        row["peak_fraction_of_LxL"] = row["peak_bytes"] / square
        row["flag"] = row["peak_bytes"] > FLAG_FRACTION * square

    wall = time.perf_counter() - started
    max_rss = _max_rss_bytes()
    flagged = [f"{r['scheme']}/{r['property']}" for r in rows if r["flag"]]

    if args.json:
        document = {
            "length": L, "dim": d, "repeat": args.repeat,
            "reference": {"workload": f"np.sin/np.cos of np.outer(arange({L}), inv_freq) into ({L}, {d}) float64",
                          "seconds": ref_seconds, "peak_bytes": ref_peak},
            "LxL_float64_bytes": L * L * 8, "flag_fraction": FLAG_FRACTION,
            "rows": rows, "flagged": flagged,
            "wall_seconds": wall, "max_rss_bytes": max_rss,
            "environment": {"python": platform.python_version(), "numpy": np.__version__,
                            "cpu_count": os.cpu_count(), "platform": platform.platform()},
        }
        print(json.dumps(document, indent=2))
        return 0

    print(f"L = {L}, d = {d}; reference {ref_seconds * 1e3:.1f} ms (best of {args.repeat}); "
          f"one (L, L) float64 array = {L * L * 8 / MIB:,.0f} MiB; ! = peak > 1/8 of it")
    header = f"{'scheme':<10} {'property':<22} {'seconds':>8} {'x ref':>8} {'peak MiB':>9} {'peak/L2':>9}"
    print(header)
    print("-" * len(header))
    for row in rows:
        mark = " !" if row["flag"] else ""
        print(f"{row['scheme']:<10} {row['property']:<22} {row['seconds']:>8.3f} {row['ratio_to_reference']:>8.1f} "
              f"{row['peak_bytes'] / MIB:>9.1f} {row['peak_fraction_of_LxL']:>9.2e}{mark}")
    print("-" * len(header))
    rss = f"{max_rss / MIB:,.0f} MiB" if max_rss is not None else "n/a"
    print(f"wall {wall:.1f} s; process max RSS {rss}; flagged: {', '.join(flagged) or 'none'}")
    return 0


def _max_rss_bytes() -> int | None:
    try:
        import resource
    except ImportError:  # Windows
        return None
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024)


if __name__ == "__main__":
    sys.exit(main())
