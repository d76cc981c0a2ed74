"""What ``pecli extend`` measures on the rows of a RoPE encoding at N, from the frequencies.

A RoPE row is the reference vector rotated: ``E_p = a·(cos pθ_i, sin pθ_i)`` on each rotated pair
(``a`` the attention factor), zeros past them. ``pecli check distinguishability`` and ``precision
--dtype bfloat16`` build those N rows (N × d float64 values, twice); for the questions extend asks,
the answers follow from θ and a, with the rows needed only where an offset can matter:

Distinguishability (:func:`rope_distinguishability`)
    The step ``‖E_{p+1} − E_p‖ = a·√(Σ_i 4 sin²(θ_i / 2))`` is the same for every p (ratio 1), the row
    norm is ``a·√(pairs)``, and ``‖E_{p+Δ} − E_p‖² = f(Δ)² = 4a² Σ_i sin²(Δθ_i / 2)`` depends on Δ only.
    Position p's nearest other position is strictly p ± 1 iff ``f(1) < f(Δ)`` for every
    ``2 ≤ Δ ≤ max(p, N − 1 − p)`` (as :func:`pecli.analysis.structure.local_nearest_shift_isometric`),
    so the whole answer is the first Δ* ≥ 2 with ``f(Δ*) ≤ f(1)``. It is found exactly, screening the
    offsets pair by pair from the highest frequency (a partial sum of the non-negative terms that is
    already above ``f(1)²`` rules the offset out).
bfloat16 collisions (:func:`rope_bfloat16_collisions`)
    Two values that round to one bfloat16 value differ by at most its spacing, ``2^(e−7) ≤ 2^−7·a``
    for values below ``a`` in magnitude; so rows p and p + Δ can be equal in bfloat16 only if, on every
    pair, ``|e^{iΔθ_i} − 1| ≤ √2·2^−7``, i.e. Δθ_i lies within δ = 2 arcsin(2^−7.5) ≈ 0.01105 rad of a
    whole turn. The offsets that pass on every pair are found as above (exactly, over all Δ < N); for
    each, the positions whose rows are equal in bfloat16 (and not in float64) are found pair by pair
    over every p, the most discriminating pair first. The count and the first adjacent collision are
    exact when at most :data:`MAX_EXACT_OFFSETS` offsets pass the screen; past that, the first ones are
    checked over every p and the rest on :data:`SAMPLED_POSITIONS` evenly spaced positions each (the
    count then is a lower bound, said in ``bfloat16_collisions_exact``).

The angles are formed as the encoding forms them (float64 p times float64 θ_i, then cos and sin).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pecli.analysis.distinguishability import MIN_LOCAL_SHARE, MIN_RELATIVE_STEP
from pecli.dtypes import cast

#: Offsets (or positions) handled per block: bounds the working memory to a few tens of MiB.
BLOCK = 1 << 20
#: Angle within which two pairs can round to one bfloat16 (cos, sin): 2 arcsin(√2 · 2^−7 / 2).
BFLOAT16_ANGLE = 2 * math.asin(math.sqrt(2) * 2.0**-7 / 2) * (1 + 1e-9)
#: Offsets checked over every position; further ones are checked on a sample.
MAX_EXACT_OFFSETS = 64
#: Pairs whose codes at every position are kept at once (4 bytes per position each).
CACHED_PAIRS = 3
#: Positions each further offset is checked on.
SAMPLED_POSITIONS = 1 << 16


@dataclass(frozen=True)
class Distinguishability:
    """Adjacent step, row norm, the first offset as near as a neighbour, the local share and verdict."""

    step: float
    norm: float
    first_as_near: int | None
    local_share: float
    verdict: str


def _turn_distance(angles: np.ndarray) -> np.ndarray:
    """|angle − nearest multiple of 2π|."""
    wrapped = np.remainder(angles, 2 * math.pi)
    return np.minimum(wrapped, 2 * math.pi - wrapped)


def _screen(offsets: np.ndarray, inv_freq: np.ndarray, keep) -> np.ndarray:
    """The ``offsets`` that ``keep(partial, i, angles)`` keeps at every pair, highest frequency first."""
    state = np.zeros(offsets.size)
    for i in np.argsort(-inv_freq, kind="stable"):
        if not offsets.size:
            break
        angles = offsets * inv_freq[i]
        ok = keep(state, angles)
        offsets, state = offsets[ok], state[ok]
    return offsets


def _near_turns(theta0: float, window: float, length: int, first: int):
    """Blocks, ascending, of the offsets Δ in ``first`` … N − 1 whose angle Δθ₀ is within ``window`` of a
    whole turn (every offset when the window covers the circle or Δθ₀ never leaves it)."""
    if window >= math.pi or theta0 * (length - 1) <= window:
        for start in range(first, length, BLOCK):
            yield np.arange(start, min(start + BLOCK, length), dtype=np.float64)
        return
    turns = int(((length - 1) * theta0 + window) // (2 * math.pi)) + 1
    per_turn = max(1, BLOCK // (int(2 * window / theta0) + 2))
    for k0 in range(0, turns, per_turn):
        k = np.arange(k0, min(k0 + per_turn, turns), dtype=np.float64)
        low = np.maximum(first, np.ceil((2 * math.pi * k - window) / theta0 * (1 - 1e-12)))
        high = np.minimum(length - 1, np.floor((2 * math.pi * k + window) / theta0 * (1 + 1e-12)))
        count = np.maximum(high - low + 1, 0).astype(np.int64)
        if not count.sum():
            continue
        starts = np.repeat(low - np.cumsum(count) + count, count)
        yield starts + np.arange(int(count.sum()), dtype=np.float64)


def rope_distinguishability(inv_freq: np.ndarray, scale: float, length: int, progress=None) -> Distinguishability:
    """Distinguishability of RoPE rows at positions 0 … N − 1 (see the module notes), exact."""
    theta = np.asarray(inv_freq, dtype=np.float64)
    one = float(4 * np.sum(np.sin(theta / 2) ** 2))  # f(1)² / a²
    step, norm = scale * math.sqrt(one), scale * math.sqrt(theta.size)
    first = None

    def keep(state, angles):
        state += 4 * np.sin(angles / 2) ** 2
        return state <= one

    # one pair's term alone above f(1)² rules an offset out: Δθ₀ must be within 2 arcsin(f(1)/2) of a turn
    top = int(np.argmax(theta))
    window = 2 * math.asin(min(1.0, math.sqrt(one) / 2)) * (1 + 1e-9) if one < 4 else math.pi
    covered = 1
    for offsets in _near_turns(float(theta[top]), window, length, 2):
        found = _screen(offsets, theta, keep)
        if progress is not None:
            progress(int(offsets[-1]) - covered)
            covered = int(offsets[-1])
        if found.size:
            first = int(found[0])
            break
    if progress is not None:
        progress(length - 1 - covered)
    if first is None:
        local = length
    else:  # p is local iff max(p, N − 1 − p) < Δ*
        local = max(0, min(length - 1, first - 1) - max(0, length - first) + 1)
    share = local / length
    noticeable = step > MIN_RELATIVE_STEP * norm
    verdict = "pass" if noticeable and share >= MIN_LOCAL_SHARE else "fail"
    return Distinguishability(step, norm, first, share, verdict)


@dataclass(frozen=True)
class Collisions:
    """New bfloat16 collisions among the rows: count, first adjacent one, and whether the count is exact."""

    count: int
    first_adjacent: int | None
    offsets: int
    exact: bool

    @property
    def verdict(self) -> str:
        return "fail" if self.count or self.first_adjacent is not None else "pass"


def candidate_offsets(inv_freq: np.ndarray, length: int, progress=None) -> np.ndarray:
    """Every Δ in 1 … N − 1 at which two rows can be equal in bfloat16 (see the module notes)."""
    theta = np.asarray(inv_freq, dtype=np.float64)
    found = []
    top = float(theta.max()) if theta.size else 0.0
    covered = 0
    for offsets in _near_turns(top, BFLOAT16_ANGLE, length, 1):
        found.append(_screen(offsets, theta, lambda state, angles: _turn_distance(angles) <= BFLOAT16_ANGLE))
        if progress is not None:
            progress(int(offsets[-1]) - covered)
            covered = int(offsets[-1])
    if progress is not None:
        progress(length - 1 - covered)
    return np.concatenate(found).astype(np.int64) if found else np.zeros(0, dtype=np.int64)


class _Cells:
    """Each position's bfloat16 (cos, sin) of a pair as one 32-bit code; a pair's codes for every position
    are kept (the last :data:`CACHED_PAIRS` pairs) while many positions are still in question."""

    def __init__(self, theta: np.ndarray, scale: float, length: int) -> None:
        self.theta, self.scale, self.length = theta, scale, length
        self.cache: dict[int, np.ndarray] = {}

    def at(self, i: int, positions: np.ndarray) -> np.ndarray:
        """The codes of pair ``i`` at ``positions`` (int64), computed as the encoding computes them."""
        angles = positions.astype(np.float64) * self.theta[i]
        cos = cast(self.scale * np.cos(angles) if self.scale != 1.0 else np.cos(angles), "bfloat16").view(np.uint16)
        sin = cast(self.scale * np.sin(angles) if self.scale != 1.0 else np.sin(angles), "bfloat16").view(np.uint16)
        return (cos.astype(np.uint32) << 16) | sin

    def every(self, i: int) -> np.ndarray:
        """The codes of pair ``i`` at every position 0 … N − 1."""
        if i not in self.cache:
            if len(self.cache) >= CACHED_PAIRS:
                self.cache.pop(next(iter(self.cache)))
            out = np.empty(self.length, dtype=np.uint32)
            for start in range(0, self.length, BLOCK):
                out[start : start + BLOCK] = self.at(i, np.arange(start, min(start + BLOCK, self.length)))
            self.cache[i] = out
        return self.cache[i]


def _equal_rows(positions: np.ndarray | None, delta: int, cells: _Cells) -> np.ndarray:
    """The positions p among ``positions`` (None: every p < N − Δ) whose rows p and p + Δ are equal in
    bfloat16, not in float64."""
    theta = cells.theta
    for i in np.argsort(-_turn_distance(delta * theta), kind="stable"):  # the pair most apart first
        if positions is None:
            codes = cells.every(int(i))
            positions = np.flatnonzero(codes[: cells.length - delta] == codes[delta:])
            continue
        if not positions.size:
            break
        if positions.size * 8 > cells.length:
            codes = cells.every(int(i))
            same = codes[positions] == codes[positions + delta]
        else:
            same = cells.at(int(i), positions) == cells.at(int(i), positions + delta)
        positions = positions[same]
    if positions.size:  # equal in float64 too only when every angle is (then it is no new collision)
        here = positions.astype(np.float64)[:, None] * theta
        there = (positions + delta).astype(np.float64)[:, None] * theta
        differ = np.any((np.cos(here) != np.cos(there)) | (np.sin(here) != np.sin(there)), axis=1)
        positions = positions[differ]
    return positions


def rope_bfloat16_collisions(inv_freq: np.ndarray, scale: float, length: int, progress=None) -> Collisions:
    """New collisions of the N RoPE rows cast to bfloat16 (see the module notes)."""
    theta = np.asarray(inv_freq, dtype=np.float64)
    offsets = candidate_offsets(theta, length, progress)
    cells = _Cells(theta, float(scale), length)
    repeated = np.zeros(length, dtype=bool)
    first_adjacent = None
    for number, delta in enumerate(offsets.tolist()):
        count = length - delta
        positions = None
        if number >= MAX_EXACT_OFFSETS:
            positions = np.unique(np.linspace(0, count - 1, min(count, SAMPLED_POSITIONS)).astype(np.int64))
        equal = _equal_rows(positions, delta, cells)
        repeated[equal + delta] = True
        if delta == 1 and equal.size:
            first_adjacent = int(equal[0]) + 1
    return Collisions(int(np.count_nonzero(repeated)), first_adjacent, int(offsets.size), offsets.size <= MAX_EXACT_OFFSETS)
