"""Memory benchmark: pecli's memory estimates against what this process holds, on this machine.

Run from the repository root::

    python benchmarks/bench_memory.py           # a table; exit 1 when a target is missed
    python benchmarks/bench_memory.py --json    # one JSON document on stdout

The estimates refuse work over ``--max-memory`` before it starts, so they are only worth what they say
about a real run. The test suite holds them to the arrays a run must hold, counted by hand
(``tests/test_encode_streaming.py``, ``tests/test_analysis_scale.py``); how they compare with the memory
a process holds depends on NumPy's temporaries and the writer thread's timing, which differ between
machines and versions, so that comparison is made here, never in a test.

What is measured
----------------
The peak of :mod:`tracemalloc` (which sees NumPy's buffers) above what was held before, in this process:

1. ``encode``: ``pecli encode`` of nine outputs (the cases of the memory model: sinusoidal, rope and its
   cos/sin copies, a range of ids never made, ids given, alibi's segments, n-D grids, M-RoPE); target:
   the estimate within ±25 % of the peak.
2. ``check``: four properties of rope (d = 64, L = 16,384) and ``check all`` of binary and alibi at
   L = 2,048; target: the estimate at least the peak, and at most 4× it for a single property (fixed
   chunk sizes weigh more at small L).
3. ``quadratic``: every property of rope (d = 64) at L = 16,384, where one (L, L) float64 array would be
   2 GiB; target: the peak under an eighth of that.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MIB = 1 << 20
ENCODE_CASES = [
    ({"scheme": "sinusoidal", "dim": 512, "length": 8192, "dtype": "float32"}, "pe.npy"),
    ({"scheme": "rope", "dim": 128, "length": 65536, "dtype": "float32"}, "rope.npz"),
    ({"scheme": "rope", "dim": 16, "length": 400000, "dtype": "float32"}, "rope-range.npz"),
    ({"scheme": "rope", "dim": 16, "positions": "0:400000", "dtype": "float32"}, "rope-ids.npz"),
    ({"scheme": "rope", "dim": 128, "length": 65536, "parts": "encoding,cos,sin"}, "rope64.npz"),
    ({"scheme": "alibi", "heads": 4, "length": 2000}, "alibi.npy"),
    ({"scheme": "rope-nd", "dim": 64, "grid": [256, 256], "dtype": "float32"}, "rope-nd.npz"),
    ({"scheme": "sinusoidal-nd", "dim": 64, "grid": [256, 256], "dtype": "float32"}, "pe2d.npy"),
    ({"scheme": "mrope", "dim": 64, "sequence": "text:100,video:4x256x256,text:10", "dtype": "float32"}, "mrope.npz"),
]


def traced_peak(function) -> int:
    """Bytes :mod:`tracemalloc` saw held at the peak of ``function()``, above what was held before."""
    from pecli.analysis import structure

    structure._remembered_vectors.cache_clear()  # each run pays for its own encoding, as estimated
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start, _ = tracemalloc.get_traced_memory()
        function()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - start


def encode_rows(folder: Path) -> list[dict]:
    from pecli.cli import encode as encode_module
    from pecli.config import resolve

    rows = []
    for params, out in ENCODE_CASES:
        spec = resolve(params, encode_module.SETTINGS)
        target = folder / out
        estimate = encode_module.encode_run(spec, target.suffix == ".npz").memory
        peak = traced_peak(lambda: encode_module._encode(spec, target, 1 << 40, force=False, quiet=True))
        target.unlink()
        rows.append({"target": "encode", "case": out, "estimate_mib": estimate / MIB, "peak_mib": peak / MIB,
                     "ok": 0.75 * peak <= estimate <= 1.25 * peak})
    return rows


def check_rows() -> list[dict]:
    from pecli.analysis.options import CheckOptions
    from pecli.analysis.registry import ANALYSES, estimate_check_bytes, run_checks
    from pecli.config import build_scheme

    rows = []
    scheme, options = build_scheme("rope", {"dim": 64}, length=16384), CheckOptions(length=16384)
    for prop in ("uniqueness", "distinguishability", "extrapolation", "precision"):
        info = ANALYSES[prop]
        peak = traced_peak(lambda: info.run(scheme, options))
        estimate = info.estimate_bytes(scheme, options)
        rows.append({"target": "check", "case": f"rope {prop}", "estimate_mib": estimate / MIB, "peak_mib": peak / MIB,
                     "ok": peak <= estimate <= 4 * peak})
    for name in ("binary", "alibi"):
        small, few = build_scheme(name, {}, length=2048), CheckOptions(length=2048)
        peak = traced_peak(lambda: run_checks(small, "all", few))
        estimate = estimate_check_bytes(small, "all", few)
        rows.append({"target": "check", "case": f"{name} all", "estimate_mib": estimate / MIB, "peak_mib": peak / MIB,
                     "ok": peak <= estimate})
    return rows


def quadratic_rows() -> list[dict]:
    from pecli.analysis.options import CheckOptions
    from pecli.analysis.registry import all_names, estimate_check_bytes, run_checks
    from pecli.config import build_scheme

    length = 16384
    scheme, options = build_scheme("rope", {"dim": 64}, length=length), CheckOptions(length=length)
    names = list(all_names())
    peak = traced_peak(lambda: run_checks(scheme, names, options))
    square = length * length * 8
    return [{"target": "quadratic", "case": f"rope all at {length:,}", "estimate_mib": estimate_check_bytes(scheme, names, options) / MIB,
             "peak_mib": peak / MIB, "ok": peak < square / 8}]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        rows = encode_rows(Path(folder)) + check_rows() + quadratic_rows()
    if args.json:
        print(json.dumps({"rows": rows}, indent=2))
    else:
        print(f"{'target':<10} {'case':<28} {'estimate MiB':>13} {'peak MiB':>10} {'ratio':>7}  ok")
        for row in rows:
            ratio = row["estimate_mib"] / row["peak_mib"] if row["peak_mib"] else float("inf")
            print(f"{row['target']:<10} {row['case']:<28} {row['estimate_mib']:>13.2f} {row['peak_mib']:>10.2f} "
                  f"{ratio:>7.2f}  {'yes' if row['ok'] else 'NO'}")
    return 0 if all(row["ok"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
