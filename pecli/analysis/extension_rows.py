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

from pecli.dtypes import cast

#: Offsets (or positions) handled per block: bounds the working memory to a few tens of MiB.
BLOCK = 1 << 20
#: Angle within which two pairs can round to one bfloat16 (cos, sin): 2 arcsin(√2 · 2^−7 / 2).
BFLOAT16_ANGLE = 2 * math.asin(math.sqrt(2) * 2.0**-7 / 2) * (1 + 1e-9)
#: Offsets checked over every position; further ones are checked on a sample.
MAX_EXACT_OFFSETS = 64
#: Positions each further offset is checked on.
SAMPLED_POSITIONS = 1 << 16
#: Smallest step, relative to the row norm, that counts as noticeable (as ``pecli check distinguishability``).
MIN_RELATIVE_STEP = 1e-6
#: Smallest share of positions whose nearest other position must be p ± 1.
MIN_LOCAL_SHARE = 0.99


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


def rope_distinguishability(inv_freq: np.ndarray, scale: float, length: int, progress=None) -> Distinguishability:
    """Distinguishability of RoPE rows at positions 0 … N − 1 (see the module notes), exact."""
    theta = np.asarray(inv_freq, dtype=np.float64)
    one = float(4 * np.sum(np.sin(theta / 2) ** 2))  # f(1)² / a²
    step, norm = scale * math.sqrt(one), scale * math.sqrt(theta.size)
    first = None
    for start in range(2, length, BLOCK):
        offsets = np.arange(start, min(start + BLOCK, length), dtype=np.float64)

        def keep(state, angles):
            state += 4 * np.sin(angles / 2) ** 2
            return state <= one

        found = _screen(offsets, theta, keep)
        if progress is not None:
            progress(offsets.size)
        if found.size:
            first = int(found[0])
            break
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
    for start in range(1, length, BLOCK):
        offsets = np.arange(start, min(start + BLOCK, length), dtype=np.float64)
        found.append(_screen(offsets, theta, lambda state, angles: _turn_distance(angles) <= BFLOAT16_ANGLE))
        if progress is not None:
            progress(offsets.size)
    return np.concatenate(found).astype(np.int64) if found else np.zeros(0, dtype=np.int64)


def _equal_rows(positions: np.ndarray, delta: int, theta: np.ndarray, scale: float) -> np.ndarray:
    """The positions p among ``positions`` whose rows p and p + Δ are equal in bfloat16, not in float64."""
    order = np.argsort(-_turn_distance(delta * theta), kind="stable")  # the pair most apart first
    differ = np.zeros(positions.size, dtype=bool)
    for i in order:
        if not positions.size:
            break
        here = positions.astype(np.float64) * theta[i]
        there = (positions + delta).astype(np.float64) * theta[i]
        values = [scale * np.cos(here), scale * np.cos(there), scale * np.sin(here), scale * np.sin(there)]
        c0, c1, s0, s1 = (cast(v, "bfloat16") for v in values)
        same = (c0 == c1) & (s0 == s1)
        differ = (differ | (values[0] != values[1]) | (values[2] != values[3]))[same]
        positions = positions[same]
    return positions[differ]


def rope_bfloat16_collisions(inv_freq: np.ndarray, scale: float, length: int, progress=None) -> Collisions:
    """New collisions of the N RoPE rows cast to bfloat16 (see the module notes)."""
    theta = np.asarray(inv_freq, dtype=np.float64)
    offsets = candidate_offsets(theta, length, progress)
    repeated = np.zeros(length, dtype=bool)
    first_adjacent = None
    for number, delta in enumerate(offsets.tolist()):
        count = length - delta
        if number < MAX_EXACT_OFFSETS:
            blocks = [np.arange(s, min(s + BLOCK, count), dtype=np.int64) for s in range(0, count, BLOCK)]
        else:
            blocks = [np.unique(np.linspace(0, count - 1, min(count, SAMPLED_POSITIONS)).astype(np.int64))]
        for positions in blocks:
            equal = _equal_rows(positions, delta, theta, scale)
            repeated[equal + delta] = True
            if delta == 1 and equal.size and first_adjacent is None:
                first_adjacent = int(equal[0]) + 1
    return Collisions(int(np.count_nonzero(repeated)), first_adjacent, int(offsets.size), offsets.size <= MAX_EXACT_OFFSETS)
