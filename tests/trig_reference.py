"""cos and sin of the exact angle p·θ, for holding float64 encodings to their bound (not pecli's code).

pecli writes cos and sin of p·θ_i (θ_i the float64 frequency) by angle addition; NumPy's ``np.cos`` of the
float64 product ``fl(p·θ)`` is off by the rounding of that product, up to 2^-53·p·θ, so it cannot be the
reference at large p. Here the product is carried in two float64 numbers, ``hi + lo = p·θ`` exactly
(Dekker's product, 1971: θ split into halves of 26 bits, each times p exact for p < 2^26), and cos(hi + lo)
= cos(hi) − sin(hi)·lo to first order (|lo| ≤ 2^-53·p·θ, so the neglected terms are below 1e-17 for
p·θ < 2^25): each value within about half an ulp of 1.0 of cos and sin of p·θ.
"""

from __future__ import annotations

import numpy as np

#: The spacing of float64 at 1.0.
EPS = float(np.finfo(np.float64).eps)


def exact_angles(positions: np.ndarray, inv_freq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(hi, lo), (N, pairs) float64: hi + lo = p·θ_i exactly, hi = fl(p·θ_i)."""
    p = np.asarray(positions, dtype=np.float64)[:, None]
    assert np.all(np.abs(p) < 2.0**26) and np.all(p == np.round(p)), "whole positions below 2^26"
    theta = np.asarray(inv_freq, dtype=np.float64)[None, :]
    split = theta * 134217729.0  # 2^27 + 1
    theta_hi = split - (split - theta)
    theta_lo = theta - theta_hi
    hi = p * theta
    lo = (p * theta_hi - hi) + p * theta_lo
    return hi, lo


def exact_cos_sin(positions: np.ndarray, inv_freq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of p·θ_i for every position (rows) and frequency (columns)."""
    hi, lo = exact_angles(positions, inv_freq)
    cos, sin = np.cos(hi), np.sin(hi)
    return cos - sin * lo, sin + cos * lo


def float64_bound(positions: np.ndarray, inv_freq: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """What pecli's float64 values may be off by, (N, pairs): the bound its docs state,
    2^-53·|p·θ| + 2^-52 (times the scale), plus this reference's own half ulp."""
    angles = np.abs(np.outer(np.asarray(positions, dtype=np.float64), inv_freq))
    return abs(scale) * (2.0**-53 * angles + EPS) + EPS / 2
