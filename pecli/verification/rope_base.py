"""The base a user's cos and sin were made with, measured from the arrays at whatever positions they hold.

Each pair's frequency is read off the arrays' own angles ``a_p = atan2(sin, cos)``: from the first
position p₀ and rows at gaps that roughly double (the nearest position at or past p₀ + 1, 2, 4, …),
the angle difference ``a_p − a_p₀ = (p − p₀)·θ_i (mod 2π)`` gives θ_i at the smallest gap where it has
not wrapped, and each larger gap refines it (the whole turns predicted by the estimate so far are added
back), so that slow pairs are measured over the longest span the arrays cover. The base is then the one
whose frequencies — with the model's scaling applied, or without it — are nearest the measured ones in
the median of ``|ln θ̂_i − ln θ_i(b)|`` (a scaling that moves some pairs does not move the median): a
search over a log grid of bases, refined, then the round numbers near it (bases people set are short
numbers), each tested on the arrays as a candidate.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from pecli.verification.stream import EPS, candidate, pair_columns, widened
from pecli.schemes.rope import RopeScheme

#: Rows read at most to measure the frequencies.
SAMPLE_ROWS = 48
#: The bases searched: a log grid over this range, then refined around the best.
BASE_RANGE = (2.0, 1e12)


def measured_theta(cos, sin, positions: np.ndarray, layout: str, pairs: int, precision: str) -> np.ndarray | None:
    """|θ̂_i| per pair measured from the arrays (NaN where it cannot be), or None."""
    columns = pair_columns(cos.shape[1], pairs, layout)
    if columns is None or len(positions) < 2:
        return None
    increasing = bool(np.all(np.diff(positions) > 0))
    order = np.arange(len(positions)) if increasing else np.argsort(positions, kind="stable")
    ordered = positions[order]
    start = int(ordered[0])
    picks, gap = [0], 1
    while len(picks) < SAMPLE_ROWS:
        j = int(np.searchsorted(ordered, start + gap))
        if j >= len(ordered):
            break
        if ordered[j] > ordered[picks[-1]]:
            picks.append(j)
        gap = 2 * int(ordered[j] - start)
    if len(picks) < 2:
        return None
    rows = order[picks]
    spans = (ordered[picks] - start).astype(np.float64)
    cosines, sines = [], []
    for row in rows:
        cosines.append(widened(np.asarray(cos.read(int(row), int(row) + 1))).astype(np.float64)[0, columns[0]])
        sines.append(widened(np.asarray(sin.read(int(row), int(row) + 1))).astype(np.float64)[0, columns[0]])
    c, s = np.array(cosines), np.array(sines)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        angle = np.arctan2(s, c)
        amplitude = np.hypot(c, s)
        noise = 4.0 * EPS[precision] / np.maximum(amplitude.min(axis=0), 1e-300)
        turned = angle - angle[0]
        theta = (turned[1] + math.pi) % (2 * math.pi) - math.pi
        theta /= spans[1]
        active = np.isfinite(theta)
        for k in range(2, len(rows)):
            active &= spans[k] * noise <= spans[k - 1] * 0.25  # near enough to carry the whole turns over
            whole = np.round((theta * spans[k] - turned[k]) / (2 * math.pi))
            theta = np.where(active, (turned[k] + 2 * math.pi * whole) / spans[k], theta)
        usable = np.isfinite(theta) & (np.abs(theta) * spans[1] < math.pi / 2) & (amplitude.min(axis=0) > 0.05)
    return np.where(usable, np.abs(theta), np.nan)


def _frequencies(scheme: RopeScheme, base: float, keep: bool) -> np.ndarray | None:
    """The scheme's inverse frequencies with ``base`` (its scaling kept or dropped), or None."""
    try:
        changed = dataclasses.replace(scheme if keep else scheme.without_extension(), base=float(base))
        return changed.inv_freq
    except Exception:  # a base the scaling cannot take (it overflows): not a candidate
        return None


def _distance(theta: np.ndarray, inv_freq: np.ndarray | None) -> float:
    if inv_freq is None:
        return math.inf
    ok = np.isfinite(theta) & (theta > 0) & (inv_freq > 0)
    if ok.sum() < 2:
        return math.inf
    return float(np.median(np.abs(np.log(theta[ok]) - np.log(inv_freq[ok]))))


def fitted_bases(theta: np.ndarray, scheme: RopeScheme, keep: bool, limit: int = 3) -> list[float]:
    """The bases nearest the measured frequencies (see the module), best first."""
    cost = lambda b: _distance(theta, _frequencies(scheme, b, keep))  # noqa: E731
    grid = np.geomspace(*BASE_RANGE, 121)
    costs = [cost(b) for b in grid]
    best = int(np.argmin(costs))
    if not math.isfinite(costs[best]):
        return []
    fine = np.geomspace(grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)], 41)
    fine_costs = [cost(b) for b in fine]
    at = int(np.argmin(fine_costs))
    found = _golden(cost, float(fine[max(at - 1, 0)]), float(fine[min(at + 1, len(fine) - 1)]))
    options = {found} | {float(f"{found:.{digits}g}") for digits in (1, 2, 3, 4)}
    scored = sorted((cost(b), b) for b in options)
    floor = scored[0][0]
    return [b for c, b in scored if c <= 2.0 * floor + 1e-3][:limit]


def _golden(cost, low: float, high: float, steps: int = 40) -> float:
    """The base between ``low`` and ``high`` of least ``cost``, by golden-section search on ln b (to
    about 1e-9 relative: a base no round number gives, such as an effective dynamic-NTK base)."""
    a, b = math.log(low), math.log(high)
    ratio = (math.sqrt(5) - 1) / 2
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = cost(math.exp(c)), cost(math.exp(d))
    for _ in range(steps):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = cost(math.exp(c))
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = cost(math.exp(d))
    return math.exp((a + b) / 2)


def base_hypotheses(cos, sin, scheme: RopeScheme, positions: np.ndarray, precision: str):
    """``("base", message, candidate)`` for each base that could explain the arrays, with the model's
    scaling kept and without it."""

    if scheme.given_inv_freq is not None:
        return
    theta = measured_theta(cos, sin, positions, scheme.layout, scheme.rotated_dim // 2, precision)
    if theta is None or np.isfinite(theta).sum() < 2:
        return
    scaled = scheme.rope_scaling.record.scales
    effective = float(scheme.frequencies.base)
    for keep in (True, False) if scaled else (False,):
        for base in fitted_bases(theta, scheme, keep):
            if math.isclose(base, scheme.base, rel_tol=1e-6) or (not keep and math.isclose(base, effective, rel_tol=1e-6)):
                continue
            reference = scheme if keep else scheme.without_extension()
            yield "base", _message(scheme, base, keep, effective), candidate(dataclasses.replace(reference, base=base), positions)


def _message(scheme: RopeScheme, base: float, keep: bool, effective: float) -> str:
    """What the fitted base says, against the base the model uses at this context."""
    if scheme.rope_scaling.record.grows_base and not math.isclose(effective, scheme.base, rel_tol=1e-9):
        model = (f"the model's effective base at {scheme.context:,} positions is {effective:,.6g} (dynamic NTK from "
                 f"base {scheme.base:,.6g})")
        return f"the arrays fit base {base:,.6g}{' under the same scaling' if keep else ''}; {model}"
    if not scheme.rope_scaling.record.scales:
        return f"the arrays fit base {base:,.6g}; the model's is {scheme.base:,.6g}"
    if keep:
        return f"the arrays fit base {base:,.6g} with the model's {scheme.scaling} scaling kept; the model's base is {scheme.base:,.6g}"
    return f"the arrays fit base {base:,.6g} without the {scheme.scaling} scaling; the model's is base {scheme.base:,.6g} with it"
