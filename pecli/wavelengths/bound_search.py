"""Men et al.'s bound on the RoPE base, searched: the bases for which ``B(m) = Σ cos(m θ_i)`` stays ≥ 0.

``B(m)`` is computed for many bases of one (d, L) at once (:class:`DecayScan`: float32 screening, float64
decisions, the witnesses of recent failures tried first); :func:`search_bound` walks log grids of bases
to the smallest passing window and the base above which every base passes (:class:`BaseBound`).
:func:`pecli.wavelengths.base_bound.base_lower_bound` is the door, and keeps what was found.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from pecli.schemes.frequencies import geometric_inv_freq

def long_term_decay(base: float, dim: int, context: int, *, stop_at_negative: bool = False) -> np.ndarray:
    """``B(m) = Σ_{i<d/2} cos(m θ_i)`` for m = 0 … context, with ``θ_i = base^(−2i/d)``, float64.

    Men et al. 2024 show that the model's ability to prefer similar tokens over random ones at
    relative distance m is proportional to ``B(m)``. Computed in blocks of k offsets through
    ``cos((m₀+k)θ) = cos(m₀θ)cos(kθ) − sin(m₀θ)sin(kθ)``: matrix products instead of
    ``context · d/2`` cosines, exact up to float64 rounding. With ``stop_at_negative`` the values
    end with the first group of blocks that holds a negative one.
    """
    return frequencies_decay(geometric_inv_freq(dim, base), context, stop_at_negative=stop_at_negative)


def frequencies_decay(theta: np.ndarray, context: int, *, stop_at_negative: bool = False) -> np.ndarray:
    """:func:`long_term_decay` of any frequencies ``theta`` (given with ``--inv-freq``, not a base's ladder)."""
    theta = np.asarray(theta, dtype=np.float64)
    block = max(16, int(math.isqrt(context + 1)))
    offsets = np.arange(block, dtype=np.float64)[:, None] * theta
    cos_offsets, sin_offsets = np.cos(offsets), np.sin(offsets)
    starts = np.arange(0, context + 1, block, dtype=np.float64)
    pieces = []
    for group in np.array_split(starts, max(1, starts.size // 16)):
        angles = group[:, None] * theta
        values = (cos_offsets @ np.cos(angles).T - sin_offsets @ np.sin(angles).T).T.reshape(-1)
        pieces.append(values)
        if stop_at_negative and values.min() < 0:
            break
    return np.concatenate(pieces)[: context + 1]


def long_term_decay_holds(base: float, dim: int, context: int) -> bool:
    """Whether ``B(m) ≥ 0`` for every integer m in [0, context] (see :class:`DecayScan` for the rounding)."""
    return DecayScan(dim, context).holds(base)


class DecayScan:
    """Whether ``B(m) = Σ_{i<d/2} cos(m θ_i) ≥ 0`` for every integer ``m ≤ L``, for many bases of one (d, L).

    Notes
    -----
    A base *passes* when every ``B(m)``, m = 0 … L, evaluated in float64 with ``θ_i = base^(−2i/d)``
    (:func:`pecli.schemes.base.geometric_inv_freq`), is ``≥ 0``; one negative value is a certificate of
    failure, so a failing base is settled by the first negative value found, and a passing one needs
    all of them.

    ``B`` is evaluated by blocks of ``s ≈ √L`` offsets through the angle addition
    ``cos((m₀+k)θ) = cos(m₀θ)cos(kθ) − sin(m₀θ)sin(kθ)``: one (s × d) by (d × L/s) matrix product
    per base, its two factors' cos and sin themselves by angle addition (:func:`multiple_phasors`). The product is first taken in float32; any block whose float32 minimum is below
    ``screen_margin`` — four times the float32 error bound of a length-d dot product whose terms sum
    to at most d/2 in absolute value, ``(d + 2) · d/2 · 2⁻²⁴`` (5e-4 for d = 128) — is evaluated again
    in float64, and only float64 values decide. The float64 values themselves carry an absolute error
    of order ``d/2 · m · 2⁻⁵³`` (from the angles ``m θ_i``): below 1e-8 for d = 128 and m ≤ 2²⁰, so
    only bases within about 1e-9 (relative) of the edge of a window of passing bases can be classified
    by rounding rather than by the sign of the exact sum; no tolerance is applied.

    The m's that made recent bases fail are tried first: neighbouring bases tend to fail at the same
    offsets, which settles many failing bases with a few thousand cosines. The blocks are then scanned
    from the far end (m = L) down, in chunks that double in size: bases near the bound fail at large m.
    Where most bases pass (the verification above the bound), which takes every block of each,
    :meth:`holds_many` screens many bases in one stacked product.
    """

    WITNESSES = 64
    #: Most float32 values of B (bases × offsets) one stacked screen of :meth:`holds_many` holds (16 MiB).
    BATCH_VALUES = 1 << 22

    def __init__(self, dim: int, context: int) -> None:
        self.dim, self.context = int(dim), int(context)
        self.block = min(1024, max(16, math.isqrt(self.context + 1)))
        self.screen_margin = 4.0 * (self.dim + 2) * (self.dim // 2) * 2.0**-24
        self.starts = np.arange(0, self.context + 1, self.block, dtype=np.float64)
        self.witnesses: list[int] = []
        self._verdicts: dict[float, bool] = {}

    def holds(self, base: float) -> bool:
        """Whether ``B(m) ≥ 0`` for every m in [0, L] with this base."""
        base = float(base)
        if base not in self._verdicts:
            self._verdicts[base] = self.first_negative(base) < 0
        return self._verdicts[base]

    def holds_many(self, bases: Iterable[float]) -> list[bool]:
        """:meth:`holds` for each of ``bases``, settled together where the context is short.

        Up to :attr:`BATCH_VALUES` float32 values of ``B`` (bases × offsets) are screened in one stacked
        matrix product, with the same float32 screen and float64 decision as one base at a time (so the
        same verdicts); only the witness kept for a failing base may differ. At long contexts, where a
        single base's values exceed that, each base is scanned alone and stops at its first negative.
        """
        bases = [float(base) for base in bases]
        todo = [base for base in dict.fromkeys(bases) if base not in self._verdicts]
        size = self.BATCH_VALUES // (self.block * self.starts.size)
        for start in range(0, len(todo), max(size, 1)):
            if size < 2:
                self.holds(todo[start])
            else:
                self._settle(todo[start : start + size])
        return [self._verdicts[base] for base in bases]

    def _settle(self, bases: list[float]) -> None:
        """The verdicts of ``bases``: the remembered witnesses first, then every block of every base left."""
        theta = np.stack([geometric_inv_freq(self.dim, base) for base in bases])  # (n, d/2)
        left_open = np.ones(len(bases), dtype=bool)
        if self.witnesses:
            offsets = np.asarray(self.witnesses, dtype=np.float64)
            first = np.full(len(bases), -1)  # each base's first negative witness, in the witnesses' order
            for part in _witness_parts(offsets.size):  # the recent witnesses settle most bases
                rows = np.flatnonzero(first < 0)
                negative = np.cos(offsets[None, part, None] * theta[rows, None, :]).sum(axis=2) < 0  # (rows, part)
                hit = negative.any(axis=1)
                first[rows[hit]] = part.start + np.argmax(negative[hit], axis=1)
            for row in np.flatnonzero(first >= 0):
                self._verdicts[bases[row]] = False
                self._remember(int(offsets[first[row]]))
            left_open &= first < 0
        rows = np.flatnonzero(left_open)
        if not rows.size:
            return
        n, half = rows.size, theta.shape[1]
        flat = theta[rows].reshape(-1)  # the phasors are elementwise: all bases in one call
        steps = multiple_phasors(self.block, 1, flat).reshape(self.block, n, half).transpose(1, 0, 2)
        left = np.concatenate([steps.real, -steps.imag], axis=2)  # (n, block, d)
        z = multiple_phasors(self.starts.size, self.block, flat).reshape(self.starts.size, n, half).transpose(1, 2, 0)
        right = np.concatenate([z.real, z.imag], axis=1)  # (n, d, starts)
        screened = np.matmul(left.astype(np.float32), right.astype(np.float32)).min(axis=1)  # (n, starts)
        for row, index in enumerate(rows):
            found = self._decide(left[row], right[row], self.starts, np.flatnonzero(screened[row] < self.screen_margin))
            self._verdicts[bases[index]] = found < 0
            if found >= 0:
                self._remember(found)

    def _decide(self, left: np.ndarray, right: np.ndarray, starts: np.ndarray, suspects: np.ndarray) -> int:
        """The most negative offset in the blocks ``suspects`` (columns of ``right``, which start at
        ``starts``), evaluated in float64, or −1 when none is negative."""
        if not suspects.size:
            return -1
        values = left @ right[:, suspects]
        offsets = starts[suspects][None, :] + np.arange(self.block)[:, None]
        negative = (values < 0) & (offsets <= self.context)
        return int(offsets[negative][np.argmin(values[negative])]) if negative.any() else -1

    def first_negative(self, base: float) -> int:
        """An offset m ≤ L where ``B(m) < 0`` (a witness of failure), or −1 when the base passes."""
        theta = geometric_inv_freq(self.dim, base)
        if self.witnesses:
            offsets = np.asarray(self.witnesses, dtype=np.float64)
            for part in _witness_parts(offsets.size):  # the recent witnesses settle most failing bases
                values = np.cos(offsets[part, None] * theta).sum(axis=1)
                negative = np.flatnonzero(values < 0)
                if negative.size:
                    return self._remember(int(offsets[part][negative[0]]))
        found = self._scan(theta)
        return found if found < 0 else self._remember(found)

    def _remember(self, offset: int) -> int:
        if offset in self.witnesses:
            self.witnesses.remove(offset)
        self.witnesses.insert(0, offset)
        del self.witnesses[self.WITNESSES:]
        return offset

    def _scan(self, theta: np.ndarray) -> int:
        """A negative offset of ``B`` or −1, scanning blocks from the far end down (failures near the
        bound happen at large m) in chunks that double in size."""
        steps = multiple_phasors(self.block, 1, theta)
        left = np.concatenate([steps.real, -steps.imag], axis=1)
        left32 = left.astype(np.float32)
        phasors = multiple_phasors(self.starts.size, self.block, theta)
        end, chunk = self.starts.size, 4
        while end > 0:
            starts = self.starts[max(0, end - chunk): end]
            z = phasors[max(0, end - chunk): end]
            right = np.concatenate([z.real, z.imag], axis=1).T
            screened = left32 @ right.astype(np.float32)
            suspects = np.flatnonzero(screened.min(axis=0) < self.screen_margin)
            found = self._decide(left, right, starts, suspects)
            if found >= 0:
                return found
            end -= chunk
            chunk *= 2
        return -1


#: Witnesses tried first (the most recent): a failing base's first negative is most often among them.
RECENT_WITNESSES = 4


def _witness_parts(count: int) -> tuple[slice, ...]:
    """The witnesses in two parts, the recent ones first: trying them in order finds the same first
    negative witness as trying all at once, with a sixteenth of the cosines when the recent ones suffice."""
    return (slice(0, min(count, RECENT_WITNESSES)),) + ((slice(RECENT_WITNESSES, count),) if count > RECENT_WITNESSES else ())


def multiple_phasors(count: int, spacing: int, theta: np.ndarray) -> np.ndarray:
    """``exp(i·p·θ_j)`` for the positions ``p = k·spacing``, k = 0 … count − 1: (count, len(θ)) complex.

    Each ``p = (q·r + j)·spacing`` with ``r ≈ √count`` and ``j < r``; ``exp(i pθ)`` is the product of the
    exact float64 evaluations at ``q·r·spacing`` and ``j·spacing`` (angle addition), so ``2√count``
    rows of cos and sin are evaluated instead of ``count``. Each angle is an integer times θ rounded once,
    as the direct evaluation's; the product adds a few ulps (≈ 1e-15) to values whose angles already
    carry an error of order ``p · 2⁻⁵³`` (see :class:`DecayScan`).
    """
    r = max(1, math.isqrt(max(count, 1)))
    coarse = np.arange(0, count, r, dtype=np.float64)[:, None] * spacing * theta
    fine = np.arange(r, dtype=np.float64)[:, None] * spacing * theta
    grid = _phasors(coarse)[:, None, :] * _phasors(fine)[None, :, :]
    return grid.reshape(-1, theta.size)[:count]


def _phasors(angles: np.ndarray) -> np.ndarray:
    """``cos + i·sin`` of ``angles``, written into the complex array's parts (no complex arithmetic)."""
    out = np.empty(angles.shape, dtype=np.complex128)
    np.cos(angles, out=out.real)
    np.sin(angles, out=out.imag)
    return out


@dataclass(frozen=True)
class BaseBound:
    """Men et al.'s bound on the base for one context length.

    ``every_base_above`` is the robust figure: every base above it passed, on a grid of
    ``verified_steps_per_decade`` bases per decade up to ``checked_up_to``. ``smallest_base`` is the
    smallest passing base found on the fine grid of ``steps_per_decade`` (rounded up to a short number
    that itself passes); it sits in a window of passing bases, ``smallest_window = (low, high)``
    (``high`` None when every base above ``low`` passed), with failing bases above it as well as below —
    and passing ones again further up: ``failing_above_window`` and ``next_passing`` name one of each,
    checked.
    """

    context: int
    dim: int
    smallest_base: float | None
    every_base_above: float | None
    steps_per_decade: int
    checked_up_to: float
    smallest_window: tuple[float, float | None] | None = None
    verified_steps_per_decade: int | None = None
    #: Above the smallest window: a whole base just past its top that fails, and the lowest base found
    #: above that which passes again (the fine grid, then bisected) — each checked, or None.
    failing_above_window: float | None = None
    next_passing: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "context": self.context, "dim": self.dim, "smallest_base": self.smallest_base,
            "smallest_window": None if self.smallest_window is None else list(self.smallest_window),
            "failing_above_window": self.failing_above_window, "next_passing": self.next_passing,
            "every_base_above": self.every_base_above, "steps_per_decade": self.steps_per_decade,
            "checked_up_to": self.checked_up_to, "verified_steps_per_decade": self.verified_steps_per_decade,
        }


#: The coarse log grid (bases per decade) that finds the first passing base.
COARSE_STEPS_PER_DECADE = 50
#: The verification grid above the first pass has about ``VERIFY_WORK / context`` bases per decade
#: (clipped to 50 … 500): failing islands narrow as the context grows while each check costs more.
VERIFY_WORK = 1 << 23
#: How far below the first coarse pass the fine grid looks for a narrower, lower window (decades).
LOOKBACK_DECADES = 0.3
#: Relative precision of the edges found by bisection.
EDGE_PRECISION = 1e-6
_LOWEST_BASE, _HIGHEST_BASE = 2.0, 1e30


def search_bound(context: int, dim: int, steps_per_decade: int, decades_past: float) -> BaseBound:
    """The bound for (L, d), searched on log grids of bases: the steps are
    :func:`pecli.wavelengths.base_bound.base_lower_bound`'s Notes (which validates the arguments and keeps
    the answer)."""
    scan = DecayScan(dim, context)
    coarse = _LogGrid(COARSE_STEPS_PER_DECADE)
    first_pass = _first_pass(scan, coarse)
    if first_pass is None:  # d = 2: B(m) = cos m turns negative at m = 2 whatever the base
        return BaseBound(context, dim, None, None, steps_per_decade, _HIGHEST_BASE)
    fine = _LogGrid(steps_per_decade)
    low, low_index = _lowest_pass(scan, fine, coarse.base(first_pass))
    verify = _LogGrid(verify_steps_per_decade(context))
    last_fail, checked_up_to = _last_failure(scan, verify, verify.index_at_or_below(low) + 1, decades_past)
    if last_fail is None:
        high, every_above = None, low
    else:
        high = _window_top(scan, fine, low_index, verify.base(last_fail))
        every_above = _top_edge(scan, fine, verify.base(last_fail), verify.base(last_fail + 1))
    smallest = _short_passing(scan, low, math.inf if high is None else high)
    window = (_round(low, 6, math.ceil), None if high is None else _round(high, 6, math.floor))
    every_above = max(smallest, _round(every_above, 3, math.ceil))
    failing, again = (None, None) if high is None else _above_window(scan, fine, high, every_above)
    return BaseBound(context, dim, smallest, every_above, steps_per_decade, checked_up_to, window, verify.steps,
                     failing, again)


def _above_window(scan: DecayScan, grid: _LogGrid, top: float, limit: float) -> tuple[float | None, float | None]:
    """What lies just above the lowest window, whose upper edge is ``top``: the first whole base above it,
    if it fails, and the lowest base found passing again below ``limit`` — the fine grid's first pass,
    its lower edge bisected and rounded up to a whole base that passes. A claim is made only where the
    base named was checked: None otherwise."""
    failing = float(math.floor(top) + 1)
    if scan.holds(failing):
        return None, None
    index = grid.index_at_or_below(failing) + 1
    below = failing
    while grid.base(index) < limit:
        if scan.holds(grid.base(index)):
            again = float(math.ceil(_bisect_edge(scan, below, grid.base(index))))
            return failing, again if scan.holds(again) else None
        below, index = grid.base(index), index + 1
    return failing, None


def verify_steps_per_decade(context: int) -> int:
    """Bases per decade of the grid that checks the bases above the first pass (see ``VERIFY_WORK``)."""
    return int(min(500, max(50, VERIFY_WORK // max(context, 1))))


@dataclass(frozen=True)
class _LogGrid:
    """Bases ``2 · 10^(j / steps)``: index j ↔ base."""

    steps: int

    def base(self, index: float) -> float:
        return _LOWEST_BASE * 10.0 ** (index / self.steps)

    def index_at_or_below(self, base: float) -> int:
        return math.floor(self.steps * math.log10(base / _LOWEST_BASE) + 1e-9)


def _first_pass(scan: DecayScan, grid: _LogGrid) -> int | None:
    """Index of the first passing base of ``grid`` (None when none passes up to 1e30)."""
    index = 0
    while grid.base(index) < _HIGHEST_BASE:
        if scan.holds(grid.base(index)):
            return index
        index += 1
    return None


#: Bases of the verification grid settled together.
BATCH_BASES = 32


def _last_failure(scan: DecayScan, grid: _LogGrid, start: int, decades_past: float) -> tuple[int | None, float]:
    """Index of the last failing base of ``grid`` from ``start`` upwards, scanning until
    ``decades_past`` decades past it have passed, and the last base checked.

    Most of these bases pass, which only a scan of every block shows: they are settled
    :data:`BATCH_BASES` at a time (:meth:`DecayScan.holds_many`).
    """
    last_fail, index, beyond = None, start, max(1, round(decades_past * grid.steps))
    while (due := (start - 1 if last_fail is None else last_fail) + beyond - index + 1) > 0:
        batch = range(index, index + min(due, BATCH_BASES))
        failing = [i for i, holds in zip(batch, scan.holds_many(map(grid.base, batch))) if not holds]
        last_fail = failing[-1] if failing else last_fail
        index = batch.stop
    return last_fail, grid.base(index - 1)


def _lowest_pass(scan: DecayScan, grid: _LogGrid, coarse_pass: float) -> tuple[float, int]:
    """The lower edge of the lowest window of passing bases on the fine grid, looking down to
    ``LOOKBACK_DECADES`` below the first coarse pass, and the fine index of its first base."""
    index = max(grid.index_at_or_below(coarse_pass / 10.0**LOOKBACK_DECADES), 0)
    if scan.holds(grid.base(index)):  # the look-back starts inside a window: find its lower end
        while index > 0 and scan.holds(grid.base(index - 1)):
            index -= 1
    else:
        while not scan.holds(grid.base(index)):
            index += 1
    low = grid.base(index) if index == 0 else _bisect_edge(scan, grid.base(index - 1), grid.base(index))
    return low, index


def _window_top(scan: DecayScan, grid: _LogGrid, index: int, failing: float) -> float:
    """The upper edge of the window of passing bases that starts at fine index ``index``, below the
    failing base ``failing``: fine steps one at a time, then doubling strides for a wide window."""
    top, stride = index, 1
    while grid.base(top + stride) < failing and scan.holds(grid.base(top + stride)):
        top += stride
        stride = stride * 2 if top - index >= 32 else 1
    return _bisect_edge(scan, min(failing, grid.base(top + stride)), grid.base(top))


def _top_edge(scan: DecayScan, grid: _LogGrid, failing: float, passing: float) -> float:
    """The lowest base above which the fine-grid bases between ``failing`` and ``passing`` pass:
    bisection on the fine grid, checked at eight fine bases above the edge found (a failure there
    restarts the bisection above it)."""
    low, end = grid.index_at_or_below(failing), grid.index_at_or_below(passing) + 1
    while True:
        high = end
        while high - low > 1:
            middle = (low + high) // 2
            if scan.holds(grid.base(middle)):
                high = middle
            else:
                low = middle
        probes = sorted({int(i) for i in np.linspace(high + 1, end, 8)} - {high, end})
        failures = [index for index, holds in zip(probes, scan.holds_many(map(grid.base, probes))) if not holds]
        if not failures:
            return _bisect_edge(scan, grid.base(low), grid.base(high))
        low = failures[-1]


def _bisect_edge(scan: DecayScan, failing: float, passing: float) -> float:
    """The edge between a failing and a passing base (in either order), to ``EDGE_PRECISION``:
    the passing side of it."""
    while abs(passing / failing - 1.0) > EDGE_PRECISION:
        middle = math.sqrt(failing * passing)
        if scan.holds(middle):
            passing = middle
        else:
            failing = middle
    return passing


def _round(value: float, digits: int, direction: Any) -> float:
    unit = 10.0 ** (math.floor(math.log10(value)) - digits + 1)
    scaled = value / unit - 1e-6 if direction is math.ceil else value / unit  # 4300.0000001 is 4300
    return float(f"{direction(scaled) * unit:.{digits}g}")


def _short_passing(scan: DecayScan, low: float, high: float) -> float:
    """``low`` rounded up to the fewest significant digits (3 to 7) whose value is inside the window and
    itself passes, so that the number printed is one a user can take as it is."""
    for digits in range(3, 8):
        candidate = _round(low, digits, math.ceil)
        if candidate <= high and scan.holds(candidate):
            return candidate
    return low
