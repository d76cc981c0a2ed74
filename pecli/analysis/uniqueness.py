"""Uniqueness: does every position (every relative distance, for bias schemes) get its own encoding?

[Conditions] ("唯一性: 每个位置有唯一表示") and [Fleetwood] list it first among the conditions a positional
encoding must meet.
"""

from __future__ import annotations

import numpy as np

from pecli.analysis.result import PropertyResult
from pecli.analysis.encoding_pass import Accumulator, Extent, Extents, FromOrigin, RowHashes, encoding_rows
from pecli.analysis.structure import (
    bias_domain, collisions, has_vectors, is_shift_isometric, is_shift_isometric_kind, row_label, scan_pairs, vectors,
)
from pecli.dtypes import cast
from pecli.errors import PecliError
from pecli.schemes.base import Scheme

from pecli.numbers import integer, number, position


def check_uniqueness(
    scheme: Scheme, length: int, *, dtype: str = "float64", tol: float = 0.0, samples: int | None = None
) -> PropertyResult:
    """Count the pairs of positions in [0, L) whose encodings coincide.

    Parameters
    ----------
    scheme:
        Any registered scheme.
    length:
        Positions 0 … L − 1.
    dtype:
        Encodings are compared exactly (bit for bit, −0.0 = 0.0) after casting to this dtype.
    tol:
        When positive, pairs whose float64 encodings are within this Euclidean distance also collide.
    samples:
        Force a sampled all-pairs scan with this many query positions (the minimum distance of schemes
        that are not shift-isometric at large L is always estimated that way, and says so).

    Returns
    -------
    PropertyResult
        ``fail`` when any two positions collide. Figures: ``colliding_pairs``, ``first_collision``,
        ``min_distance`` and ``min_distance_pair`` (the closest two different positions).

    Notes
    -----
    Collisions are found by hashing the rows of ``E`` (``np.unique`` of their bytes): exact, O(L log L).
    The minimum distance is exact in O(L·d) for shift-isometric schemes (sinusoidal, rotary, integer),
    where ``min_{p≠q} ||E_p − E_q|| = min_{Δ≥1} ||E_Δ − E_0||``; otherwise it comes from a blockwise
    all-pairs scan, sampled at large L. Bias schemes: the rows are the bias vectors of the relative
    distances Δ = key − query (see :func:`pecli.analysis.structure.bias_domain`); distinct distances
    with the same bias, bucket or clipped index are collisions.
    """
    if length < 1:
        raise PecliError("uniqueness needs at least one position")
    if has_vectors(scheme):
        return _vector_uniqueness(scheme, length, dtype, tol, samples)
    return _bias_uniqueness(scheme, length, dtype, tol, samples)


def uniqueness_rows(scheme: Scheme, length: int, dtype: str = "float64", samples: int | None = None) -> list[Accumulator]:
    """What uniqueness measures in the pass over a vector scheme's rows: their hashes in ``dtype``, the
    value range and, unless all pairs are scanned, the distances from position 0."""
    wanted: list[Accumulator] = [RowHashes(length, dtype), Extents()]
    if samples is None and is_shift_isometric_kind(scheme):
        wanted.append(FromOrigin(length))
    return wanted


def _vector_uniqueness(scheme: Scheme, length: int, dtype: str, tol: float, samples: int | None) -> PropertyResult:
    encoding = encoding_rows(scheme, length)
    measured = encoding.measure(*uniqueness_rows(scheme, length, dtype, samples))
    extent: Extent = measured[1]
    found = encoding.collisions(dtype)
    notes: list[str] = []
    sampled = False
    pairs, first = found.pairs, found.first
    if length < 2:
        min_distance, min_pair, within = None, None, 0
    elif samples is None and is_shift_isometric(scheme, encoding, (extent.low, extent.high)):
        from_origin = measured[2]
        delta = 1 + int(np.argmin(from_origin[1:]))
        min_distance, min_pair = float(from_origin[delta]), [0, delta]
        near = np.nonzero(from_origin[1:] <= tol)[0] + 1 if tol > 0 else np.array([], dtype=np.int64)
        within = int(np.sum(length - near))
        notes.append("distances depend on q − p only (shift-isometric): exact over all pairs in one pass over Δ")
    else:
        scan = scan_pairs(vectors(scheme, length), tol=tol, samples=samples)
        min_distance, min_pair, within = scan.min_distance, list(scan.min_pair), scan.within_tol
        sampled = scan.sampled
        if sampled:
            notes.append(f"minimum distance over {integer(scan.queries)} sampled query positions against all {integer(length)} (an upper bound)")
    if tol > 0 and within > pairs:
        pairs = within
        if first is None and min_pair is not None:
            first = tuple(min_pair)
    first = [row_label(scheme, row) for row in first] if first else None
    min_pair = [row_label(scheme, row) for row in min_pair] if min_pair else None
    figures = {
        "positions": length,
        "dtype": dtype,
        "tol": tol,
        "colliding_pairs": pairs,
        "repeated_positions": found.repeated,
        "first_collision": first,
        "min_distance": min_distance,
        "min_distance_pair": min_pair,
    }
    if pairs:
        how = f"within {number(tol, 6)}" if tol > 0 and found.pairs == 0 else f"identical in {dtype}"
        reason = f"{integer(pairs)} pairs of positions collide ({how}); first: positions {position(first[0])} and {position(first[1])}"
        verdict = "fail"
    else:
        reason = f"all {integer(length)} positions are distinct in {dtype}"
        if min_distance is not None:
            reason += f"; the closest two, {position(min_pair[0])} and {position(min_pair[1])}, are {number(min_distance)} apart"
        verdict = "pass"
    return PropertyResult("uniqueness", verdict, reason, figures, "colliding_pairs", sampled=sampled, notes=tuple(notes))


def _bias_uniqueness(scheme: Scheme, length: int, dtype: str, tol: float, samples: int | None) -> PropertyResult:
    domain = bias_domain(scheme, length)
    # report collisions in order of increasing |Δ|, so that the first one is the nearest to the query
    order = np.lexsort((domain.deltas, np.abs(domain.deltas)))
    deltas, rows = domain.deltas[order], domain.rows[order]
    found = collisions(cast(rows, dtype))
    distinct = int(deltas.size - found.repeated)
    notes = [domain.note] if domain.note else []
    sampled = False
    if deltas.size < 2:
        min_distance = None
    elif rows.shape[1] == 1:
        values = np.sort(rows[:, 0])
        min_distance = float(np.min(np.diff(values)))
    else:
        scan = scan_pairs(rows, samples=samples)
        min_distance, sampled = scan.min_distance, scan.sampled
        if sampled:
            notes.append(f"minimum bias distance over {integer(scan.queries)} sampled distances (an upper bound)")
    first = found.first
    first_deltas = [int(deltas[first[0]]), int(deltas[first[1]])] if first else None
    figures = {
        "distances": int(deltas.size),
        "side": domain.side,
        "dtype": dtype,
        "distinct_biases": distinct,
        "colliding_pairs": found.pairs,
        "first_collision": first_deltas,
        "min_distance": min_distance,
    }
    if tol > 0 and min_distance is not None and min_distance <= tol and not found.pairs:
        figures["colliding_pairs"] = None
        return PropertyResult(
            "uniqueness", "fail", f"two distances get biases within {number(tol, 6)} of each other ({number(min_distance)})",
            figures, "colliding_pairs", sampled=sampled, notes=tuple(notes),
        )
    if found.pairs:
        reason = (
            f"{integer(deltas.size)} relative distances get only {integer(distinct)} distinct biases; first collision: "
            f"Δ = {integer(first_deltas[0])} and Δ = {integer(first_deltas[1])} (key − query) share one bias"
        )
        return PropertyResult("uniqueness", "fail", reason, figures, "colliding_pairs", sampled=sampled, notes=tuple(notes))
    reason = f"all {integer(deltas.size)} relative distances get distinct biases in {dtype}"
    return PropertyResult("uniqueness", "pass", reason, figures, "colliding_pairs", sampled=sampled, notes=tuple(notes))
