"""How far ``encode``'s float64 values (angle addition) are from NumPy's cos and sin of each float64 angle,
and from cos and sin of the exact angle, at every position of the write-speed benchmark's sizes.

Run from the repository root (a few minutes on two shared cores; ``--quick`` for a slice)::

    python benchmarks/float64_error.py

For integer positions p and the float64 frequencies θ_i of sinusoidal d = 1024 (every p < 2^18), rope
d = 128 (every p < 2^21) and both at the last 16,384 positions below 2^24, it compares the phasors
``encode`` writes (:func:`pecli.schemes.frequencies.unit_phasors`, ``exact=False``: cos and sin of the
anchor a·θ and of the step k·θ, p = a + k, multiplied once) with

- NumPy's ``np.cos``/``np.sin`` of the float64 angle ``fl(p·θ)`` (what float64 files held before):
  the largest absolute difference, in units of 2^-52 (the spacing of float64 at 1.0), and what is left
  of it past ``2^-52·p·θ`` (each side's angle may be off by half an ulp of p·θ, in opposite directions);
- cos and sin of the exact angle p·θ (the product carried in two float64 numbers, Dekker's product, and
  cos(hi + lo) = cos(hi) − sin(hi)·lo: within about half an ulp of 1.0), for the angle addition and for
  NumPy's direct evaluation alike: the largest error, and what is left of it past ``2^-53·p·θ`` (the
  rounding any float64 angle of that size carries), in units of 2^-52 — the constant of the bound
  stated in :func:`~pecli.schemes.frequencies.unit_phasors`.

Not collected by pytest (a measurement, not a test); ``tests/trig_reference.py`` holds the tests' copy
of the reference.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from pecli.schemes.frequencies import geometric_inv_freq, unit_phasors

EPS = 2.0 ** -52
ROWS = 1 << 12


def exact_cos_sin(ids: np.ndarray, inv_freq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of p·θ: hi + lo = p·θ exactly (θ split in halves of 26 bits; p < 2^26), first order in lo."""
    p = ids.astype(np.float64)[:, None]
    split = inv_freq * 134217729.0
    theta_hi = split - (split - inv_freq)
    hi = p * inv_freq
    lo = (p * theta_hi - hi) + p * (inv_freq - theta_hi)
    cos, sin = np.cos(hi), np.sin(hi)
    return cos - sin * lo, sin + cos * lo


def measure(dim: int, positions: range) -> dict[str, float]:
    inv_freq = geometric_inv_freq(dim, 10000.0)
    worst = dict.fromkeys(["direct_abs", "direct_excess", "exact_abs", "exact_excess", "numpy_abs", "numpy_excess"], -np.inf)
    for start in range(positions.start, positions.stop, ROWS):
        ids = np.arange(start, min(start + ROWS, positions.stop), dtype=np.int64)
        fast = unit_phasors(ids, inv_freq, exact=False)
        angles = np.outer(ids.astype(np.float64), inv_freq)
        truths = exact_cos_sin(ids, inv_freq)
        for got, direct, truth in ((fast.real, np.cos(angles), truths[0]), (fast.imag, np.sin(angles), truths[1])):
            for key, error, slack in (("direct", got - direct, 2.0 ** -52 * angles), ("exact", got - truth, 2.0 ** -53 * angles),
                                      ("numpy", direct - truth, 2.0 ** -53 * angles)):
                error = np.abs(error)
                worst[f"{key}_abs"] = max(worst[f"{key}_abs"], float(error.max()))
                worst[f"{key}_excess"] = max(worst[f"{key}_excess"], float(((error - slack) / EPS).max()))
    return worst


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a slice of each range (the first and last 2^16 positions)")
    args = parser.parse_args(argv)
    far = range((1 << 24) - (1 << 14), 1 << 24)
    cases = [("sinusoidal d=1024, p < 2^18", 1024, range(1 << 18)), ("rope d=128, p < 2^21", 128, range(1 << 21)),
             ("sinusoidal d=1024, last 2^14 below 2^24", 1024, far), ("rope d=128, last 2^14 below 2^24", 128, far)]
    for name, dim, positions in cases:
        spans = [positions]
        if args.quick and len(positions) > 1 << 17:
            spans = [range(positions.start, positions.start + (1 << 16)), range(positions.stop - (1 << 16), positions.stop)]
        results = [measure(dim, span) for span in spans]
        w = {key: max(r[key] for r in results) for key in results[0]}
        print(f"{name}:\n  vs NumPy's cos/sin of the float64 angle: {w['direct_abs']:.3g} ({w['direct_abs'] / EPS:.3g} × 2^-52), "
              f"past 2^-52·pθ: {w['direct_excess']:.3g} × 2^-52\n"
              f"  vs the exact angle: angle addition {w['exact_abs']:.3g}, past 2^-53·pθ: {w['exact_excess']:.3g} × 2^-52; "
              f"NumPy's direct {w['numpy_abs']:.3g}, past 2^-53·pθ: {w['numpy_excess']:.3g} × 2^-52", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
