"""Distinguishability: adjacent positions differ noticeably, and nearby positions look nearer than far ones.

[Conditions] ("可区分性: 相邻位置编码差异明显") and its binary example: 7 = 0111 and 8 = 1000 are neighbours
but differ in all four bits (Hamming distance 4), while 7 and 15 = 1111 differ in one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pecli.analysis.result import PropertyResult
from pecli.analysis.encoding_pass import Accumulator, Extents, FromOrigin, MaxNorm, Steps, encoding_rows
from pecli.analysis.structure import (
    bias_domain, has_vectors, is_shift_isometric, is_shift_isometric_kind, local_nearest_shift_isometric, scan_pairs,
    vectors,
)
from pecli.errors import PecliError
from pecli.schemes.base import Scheme
from pecli.numbers import integer, number

#: Largest allowed ratio of the largest to the smallest step between adjacent positions.
MAX_STEP_RATIO = 1.5
#: Smallest share of positions whose nearest other position must be a neighbour p ± 1.
MIN_LOCAL_SHARE = 0.99
#: Smallest step, relative to the largest row norm, that counts as a noticeable difference.
MIN_RELATIVE_STEP = 1e-6


def check_distinguishability(scheme: Scheme, length: int, *, samples: int | None = None) -> PropertyResult:
    """Measure the steps between adjacent positions and how local the nearest neighbours are.

    Parameters
    ----------
    scheme:
        Any registered scheme.
    length:
        Positions 0 … L − 1 (bias schemes: the relative distances of a sequence of that length).
    samples:
        Force a sampled nearest-neighbour scan with this many query positions.

    Returns
    -------
    PropertyResult
        Figures: ``min_step``, ``max_step``, ``step_ratio`` (max/min), ``worst_jump`` (the pair with the
        largest step and how many components differ there), ``local_share`` (share of positions whose
        nearest other position is strictly p − 1 or p + 1). ``pass`` when the smallest step is noticeable
        (at least 1e-6 of the largest row norm), the step ratio is at most 1.5 and the local share at
        least 0.99.

    Notes
    -----
    Steps are ``||E_{p+1} − E_p||`` (Euclidean; for 0/1 rows the square of the step is the Hamming
    distance). For shift-isometric schemes the nearest neighbour of every position follows exactly from
    ``f(Δ) = ||E_Δ − E_0||`` (position p reaches Δ ≤ max(p, L−1−p)); otherwise the all-pairs scan is
    blockwise, and sampled at large L. Bias schemes compare the bias vectors of consecutive distances Δ.
    """
    if length < 3:
        raise PecliError("distinguishability needs at least 3 positions")
    if has_vectors(scheme):
        return _vector_distinguishability(scheme, length, samples)
    return _bias_distinguishability(scheme, length, samples)


def _verdict(min_step: float, max_step: float, scale: float, share: float) -> tuple[bool, bool, bool]:
    noticeable = min_step > MIN_RELATIVE_STEP * scale
    even = noticeable and max_step / min_step <= MAX_STEP_RATIO
    local = share >= MIN_LOCAL_SHARE
    return noticeable, even, local


def distinguishability_rows(scheme: Scheme, length: int, samples: int | None = None) -> list[Accumulator]:
    """What distinguishability measures in the pass over a vector scheme's rows: the steps between
    neighbours, the value range and largest norm and, unless all pairs are scanned, the distances from 0."""
    wanted: list[Accumulator] = [Steps(length), Extents()]
    if samples is None and is_shift_isometric_kind(scheme):
        wanted.append(FromOrigin(length))
    return wanted


def _vector_distinguishability(scheme: Scheme, length: int, samples: int | None) -> PropertyResult:
    encoding = encoding_rows(scheme, length)
    measured = encoding.measure(*distinguishability_rows(scheme, length, samples))
    steps, extent = measured[0], measured[1]
    small, large = int(np.argmin(steps)), int(np.argmax(steps))
    min_step, max_step = float(steps[small]), float(steps[large])
    ratio = max_step / min_step if min_step > 0 else None
    pair = encoding[large : large + 2]
    changed = int(np.count_nonzero(pair[1] != pair[0]))
    binary_rows = extent.binary
    notes: list[str] = []
    sampled = False
    if samples is None and is_shift_isometric(scheme, encoding, (extent.low, extent.high)):
        local, example = local_nearest_shift_isometric(measured[2])
        queries = length
        notes.append("distances depend on q − p only (shift-isometric): nearest neighbours exact in one pass over Δ")
    else:
        local, example, queries, sampled = _scan_nearest(vectors(scheme, length), samples, "positions (seeded)", notes)
    share = local / queries
    # the scale only decides whether the smallest step is noticeable: its bound decides that unless the
    # step is near 1e-6 of it, and then the largest norm itself is measured
    scale = extent.norm_bound(encoding.width)
    if not min_step > MIN_RELATIVE_STEP * scale:
        scale = encoding.measure(MaxNorm())[0] or 1.0
    noticeable, even, is_local = _verdict(min_step, max_step, scale, share)
    unit = "bits" if binary_rows else "components"
    jump = (
        f"positions {integer(large)} and {integer(large + 1)} differ in {changed} of {encoding.shape[1]} {unit}"
        + (f" (Hamming distance {changed})" if binary_rows else "")
        + f": step {number(max_step)} against {number(min_step)} at {integer(small)} → {integer(small + 1)}"
    )
    figures = {
        "positions": length,
        "min_step": min_step,
        "min_step_pair": [small, small + 1],
        "max_step": max_step,
        "step_ratio": ratio,
        "worst_jump": {"pair": [large, large + 1], "components_changed": changed, "of": int(encoding.shape[1])},
        "local_share": share,
        "non_local_example": list(example) if example else None,
    }
    problems = []
    if not noticeable:
        problems.append(f"positions {integer(small)} and {integer(small + 1)} are only {number(min_step, 3)} apart")
    if noticeable and not even or (binary_rows and ratio and ratio > 1):
        problems.append(jump)
    if not is_local:
        problems.append(_locality_words(share, example, encoding))
    passing = lambda: (  # noqa: E731 — formatted only when it passes (ratio may be undefined otherwise)
        f"adjacent steps {number(min_step)} … {number(max_step)} (ratio {number(ratio)}); "
        f"{share:.1%} of positions are nearest to p ± 1"
    )
    return _result(noticeable and even and is_local, passing, problems, figures, sampled, notes)


def _locality_words(share: float, example: tuple[int, int] | None, encoding: Any) -> str:
    words = f"only {share:.1%} of positions have p ± 1 as their strictly nearest position"
    if example is not None:
        p, q = example
        near = min(
            (float(np.linalg.norm(encoding[p] - encoding[r])) for r in (p - 1, p + 1) if 0 <= r < len(encoding)),
        )
        far = float(np.linalg.norm(encoding[p] - encoding[q]))
        words += f" (position {integer(p)} is {number(far, 3)} from {integer(q)}, no farther than from its nearer neighbour, {number(near, 3)})"
    return words


def _local_nearest_1d(values: np.ndarray) -> tuple[int, tuple[int, int] | None]:
    """Rows (in order) whose nearest other row by value is strictly i ± 1: exact, via sorting."""
    n = values.size
    order = np.argsort(values, kind="stable")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    index = np.arange(n)
    adjacent = np.full(n, np.inf)
    adjacent[1:] = np.abs(values[1:] - values[:-1])
    adjacent[:-1] = np.minimum(adjacent[:-1], np.abs(values[1:] - values[:-1]))
    other = np.full(n, np.inf)
    other_at = np.full(n, -1)
    for offset in (-3, -2, -1, 1, 2, 3):  # at most two of the nearest three on a side are i ± 1
        r = rank + offset
        ok = (r >= 0) & (r < n)
        j = np.where(ok, order[np.clip(r, 0, n - 1)], index)
        gap = np.abs(values[j] - values)
        valid = ok & (np.abs(j - index) >= 2) & (gap < other)
        other = np.where(valid, gap, other)
        other_at = np.where(valid, j, other_at)
    good = adjacent < other
    example = None
    if not good.all():
        i = int(np.nonzero(~good)[0][0])
        example = (i, int(other_at[i]))
    return int(np.count_nonzero(good)), example


def _bias_distinguishability(scheme: Scheme, length: int, samples: int | None) -> PropertyResult:
    domain = bias_domain(scheme, length)
    rows, deltas = domain.rows, domain.deltas
    steps = np.linalg.norm(np.diff(rows, axis=0), axis=1)
    nearness = np.minimum(np.abs(deltas[:-1]), np.abs(deltas[1:]))  # ties go to the pair nearest the query
    small = int(np.lexsort((nearness, steps))[0])
    large = int(np.lexsort((nearness, -steps))[0])
    min_step, max_step = float(steps[small]), float(steps[large])
    ratio = max_step / min_step if min_step > 0 else None
    notes = [domain.note] if domain.note else []
    sampled = False
    if rows.shape[1] == 1:
        local, example = _local_nearest_1d(rows[:, 0])
        queries = rows.shape[0]
    else:
        local, example, queries, sampled = _scan_nearest(rows, samples, "distances", notes)
    share = local / queries
    scale = float(np.linalg.norm(rows, axis=1).max()) or 1.0
    noticeable, even, is_local = _verdict(min_step, max_step, scale, share)
    figures = {
        "distances": int(deltas.size),
        "side": domain.side,
        "min_step": min_step,
        "min_step_pair": [int(deltas[small]), int(deltas[small + 1])],
        "max_step": max_step,
        "step_ratio": ratio,
        "worst_jump": {"pair": [int(deltas[large]), int(deltas[large + 1])]},
        "local_share": share,
        "non_local_example": [int(deltas[example[0]]), int(deltas[example[1]])] if example else None,
    }
    problems = []
    if not noticeable:
        problems.append(
            f"distances Δ = {integer(deltas[small])} and {integer(deltas[small + 1])} get biases only {number(min_step, 3)} apart"
        )
    elif not even:
        problems.append(
            f"the step between Δ = {integer(deltas[large])} and {integer(deltas[large + 1])} is {number(max_step)}, "
            f"{number(ratio, 3)} times the smallest ({number(min_step)})"
        )
    if not is_local:
        words = f"only {share:.1%} of distances have Δ ± 1 as their strictly nearest bias"
        if example:
            words += f" (Δ = {integer(deltas[example[0]])} is as near to Δ = {integer(deltas[example[1]])})"
        problems.append(words)
    passing = lambda: (  # noqa: E731
        f"consecutive distances differ by {number(min_step)} … {number(max_step)} (ratio {number(ratio)}); "
        f"{share:.1%} are nearest to Δ ± 1"
    )
    return _result(noticeable and even and is_local, passing, problems, figures, sampled, notes)


def _scan_nearest(rows: np.ndarray, samples: int | None, what: str, notes: list[str]):
    """Nearest neighbours by an all-pairs scan (sampled when large; the note says so)."""
    scan = scan_pairs(rows, samples=samples)
    if scan.sampled:
        notes.append(f"nearest neighbours of {integer(scan.queries)} sampled {what} against all {integer(rows.shape[0])}")
    return scan.local_nearest, scan.example, scan.queries, scan.sampled


def _result(holds: bool, passing, problems: list[str], figures: dict, sampled: bool, notes) -> PropertyResult:
    """Pass with the measured steps (``passing()`` words them), or fail naming every problem."""
    verdict, reason = ("pass", passing()) if holds else ("fail", "; ".join(problems))
    return PropertyResult(
        "distinguishability", verdict, reason, figures, "step_ratio", sampled=sampled, notes=tuple(notes)
    )
