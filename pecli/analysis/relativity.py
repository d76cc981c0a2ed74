"""Relativity: the position-only attention score depends on the distance n − m only.

[Conditions] and [Common-PE]: for the sinusoidal encoding ``PE_p · PE_q = Σ_i cos(ω_i (p − q))``; RoPE builds the
same property into the logits (``R_mᵀ R_n = R_{n−m}``); bias schemes are functions of j − i by design.
"""

from __future__ import annotations

from dataclasses import dataclass

from typing import Callable

import numpy as np

from pecli.analysis.result import PropertyResult
from pecli.analysis.encoding_pass import Accumulator, Block, encoding_rows
from pecli.analysis.structure import (
    BLOCK_BYTES, EXACT_WORK, blas_pinned, chunked_task, chunks, has_vectors, rotation_pairs, rows_at, sample_queries,
)
from pecli.errors import PecliError
from pecli.schemes.base import Capability, Scheme
from pecli.numbers import integer, number

#: Relative spread (largest spread of S(m, m+Δ) over m, over the score scale) counted as "Δ only".
SPREAD_TOL = 1e-9
#: Query positions sampled when the exact computation is too large (each costs a full row of scores).
RELATIVITY_SAMPLES = 128
#: Work (pairs × channels) of score evaluations through ``scheme.score`` done exactly.
EXACT_SCORE_CALLS = 1 << 24
#: Cells (queries × (keys + distances) × channels) of the aligned score table reduced exactly. Aligning
#: a score by Δ costs a few elementwise passes per cell whatever the width, so this caps the exact
#: work by operations: without it the exact path grew as L² up to a length where it took 20 s.
EXACT_PROFILE_CELLS = 1 << 25


@dataclass(frozen=True)
class DistanceProfile:
    """Statistics of ``S(m, m + Δ)`` over query positions m, for each distance Δ.

    Attributes
    ----------
    distance:
        (n,) int64, Δ = key − query from −D to D (both signs: rotary and bias scores need not be
        symmetric; for additive schemes S(m, m+Δ) = S(m+Δ, m), so the two halves mirror each other).
    mean, spread, minimum, maximum:
        (channels, n) float64 over the query positions m with 0 ≤ m, m + Δ < L; spread = max − min.
    count:
        (n,) number of query positions measured at each Δ.
    sampled:
        True when only a seeded sample of query positions was measured (``queries`` of them, always
        including 0 and L − 1, so every Δ has at least one).
    """

    distance: np.ndarray
    mean: np.ndarray
    spread: np.ndarray
    minimum: np.ndarray
    maximum: np.ndarray
    count: np.ndarray
    sampled: bool
    queries: int
    length: int

    def at(self, delta: int) -> int:
        """Column index of distance ``delta``."""
        return int(delta - self.distance[0])


@blas_pinned
def score_by_distance(
    scheme: Scheme, length: int, *, max_distance: int | None = None, samples: int | None = None,
    query_scale: Callable[[np.ndarray], np.ndarray] | None = None,
) -> DistanceProfile:
    """``S(m, m + Δ)`` statistics over m for every Δ in [−D, D], without an (L, L) array.

    Parameters
    ----------
    scheme:
        Any registered scheme; the score is ``scheme.score`` (additive ``E_m · E_n``, rotary
        ``(R_m u)·(R_n v)``, bias the bias itself).
    length:
        Positions 0 … L − 1.
    max_distance:
        D (default L − 1).
    query_scale:
        The factor a model's attention applies to the query at each position besides cos and sin (its
        logit scale): ``S(m, n)`` is multiplied by ``query_scale(m)``. None: 1.
    samples:
        Measure only this many seeded query positions. By default every query position is measured
        when ``L² × width`` is at most 4·10⁹ (score-call schemes: ``L² × channels`` at most 2²⁴) and the
        aligned table, ``L × (L + 2D + 1) × channels`` cells, at most 2²⁵; 128 sampled queries otherwise.

    Notes
    -----
    Keys are processed in chunks: the scores of every query against a chunk of consecutive keys, then
    for each query the slice of distances those keys fall on is added to the statistics. Memory is
    O(queries × chunk + D), whatever L; the keys' score factors are computed chunk by chunk.
    """
    if length < 1:
        raise PecliError("the distance profile needs at least one position")
    scores = DistanceScores(scheme, length, max_distance, samples, query_scale)
    if scores.factored and has_vectors(scheme) and not scheme.has_cells:
        profile, = encoding_rows(scheme, length).measure(scores, label="relativity")
        return profile
    positions = range(0, length, scores.key_step)
    with chunked_task("relativity", len(positions)) as bar:
        for start in positions:
            keys = np.arange(start, min(start + scores.key_step, length), dtype=np.int64)
            scores.add_keys(keys, None)
            bar.advance()
    return scores.result()


class DistanceScores(Accumulator):
    """The :class:`DistanceProfile` of :func:`score_by_distance`, from the scores of the query positions
    against keys in order, a chunk of keys at a time; in a pass over a vector scheme's rows, the keys'
    score factors come from the rows (:meth:`~pecli.schemes.base.Scheme.score_factors_of_rows`)."""

    def __init__(self, scheme: Scheme, length: int, max_distance: int | None = None, samples: int | None = None,
                 query_scale: Callable[[np.ndarray], np.ndarray] | None = None) -> None:
        reach = length - 1 if max_distance is None else min(int(max_distance), length - 1)
        if reach < 0:
            raise PecliError(f"max_distance must be >= 0, got {max_distance}")
        self.key = ("distance-profile", length, reach, samples, query_scale)
        self.query_scale = query_scale
        self.scheme, self.length, self.reach = scheme, length, reach
        self.factored = scheme.score_factors(np.zeros(1, dtype=np.int64)) is not None
        width = int(scheme.width) if self.factored else scheme.channels
        budget = EXACT_WORK if self.factored else EXACT_SCORE_CALLS
        self.channels = channels = 1 if self.factored else scheme.channels
        n = 2 * reach + 1
        cells = length * (length + n) * channels
        self.exact = samples is None and length * length * max(width, 1) <= budget and cells <= EXACT_PROFILE_CELLS
        self.queries = np.arange(length) if self.exact else sample_queries(length, samples or RELATIVITY_SAMPLES)
        self._stats: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None  # made at the first keys
        self._query_factors: np.ndarray | None = None
        self.key_step = max(1, BLOCK_BYTES // (8 * channels * max(self.queries.size, 1)))
        # a product of every query's factors with the keys', then their statistics: at 130 queries about
        # eleven times a hash's work (measured at 2^22 × 128: 3.9 CPU seconds against 0.34)
        self.cost = 1.0 + self.queries.size / 12.4
        self._buffer: np.ndarray | None = None  # keys' factors from the pass, until key_step of them
        self._scores: np.ndarray | None = None  # their scores, chunk after chunk (:meth:`_scores_for`)
        self._filled = self._next_key = 0
        self._rows_given = False  # keys' factors from the rows of a pass: the queries' then too
        self._keys_added = 0

    def add(self, block: Block) -> None:
        """Take the keys' factors from the rows; the scores are formed :attr:`key_step` keys at a time,
        as without a pass (a matrix product's last bits depend on its shape)."""
        self._rows_given = True
        positions = np.arange(block.start, block.stop, dtype=np.int64)
        room = None if self._buffer is None else self._buffer[self._filled : self._filled + positions.size]
        if room is not None and room.shape[0] == positions.size:  # the block's factors fit: made in place
            factors = self.scheme.score_factors_of_rows(positions, block.values, out=room)[1]
            if factors is not room:
                room[...] = factors
            self._filled += positions.size
            if self._filled == self._buffer.shape[0]:
                self._flush()
            return
        factors = self.scheme.score_factors_of_rows(positions, block.values)[1]
        if self._buffer is None:
            self._buffer = np.empty((min(self.key_step, self.length), factors.shape[1]))
        taken = 0
        while taken < factors.shape[0]:
            room = min(self._buffer.shape[0] - self._filled, factors.shape[0] - taken)
            self._buffer[self._filled : self._filled + room] = factors[taken : taken + room]
            self._filled, taken = self._filled + room, taken + room
            if self._filled == self._buffer.shape[0]:
                self._flush()

    def _flush(self) -> None:
        if self._filled:
            keys = np.arange(self._next_key, self._next_key + self._filled, dtype=np.int64)
            self.add_keys(keys, self._buffer[: self._filled])
            self._next_key, self._filled = self._next_key + self._filled, 0

    def add_keys(self, keys: np.ndarray, factors: np.ndarray | None) -> None:
        """Add the scores of every query against ``keys`` (consecutive, after those added before), whose
        score factors are ``factors`` (None: the scheme computes them, or its scores)."""
        if self.factored:
            factors = self.scheme.score_factors(keys)[1] if factors is None else factors
            with np.errstate(over="ignore", invalid="ignore"):  # scores past float64 (xPos): reported as such
                scores = np.matmul(self.query_factors, factors.T, out=self._scores_for(keys.size))[None]
        else:
            scores = np.asarray(self.scheme.score(self.queries[:, None], keys[None, :]), dtype=np.float64)
            scores = scores.reshape(self.channels, self.queries.size, keys.size)
            if self.query_scale is not None:
                scores = scores * np.asarray(self.query_scale(self.queries), dtype=np.float64)[None, :, None]
        _accumulate(scores, self.queries, keys, self.reach, *self.stats)
        self._keys_added += keys.size

    def _scores_for(self, keys: int) -> np.ndarray | None:
        """Where the scores of every query against ``keys`` keys go: one (queries, key_step) array made at
        the first full chunk and reused (the same product, written in place: a new array of up to
        64 MiB per chunk costs the kernel a fresh zeroed page for each of its pages, about 1.5 s of
        system time at 2^22). None, a new array, for a shorter chunk."""
        if keys != self.key_step:
            return None
        if self._scores is None:
            self._scores = np.empty((self.queries.size, self.key_step))
        return self._scores

    @property
    def stats(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(total, low, high) of shape (channels, 2D + 1), so far."""
        if self._stats is None:
            shape = (self.channels, 2 * self.reach + 1)
            self._stats = (np.zeros(shape), np.full(shape, np.inf), np.full(shape, -np.inf))
        return self._stats

    @property
    def query_factors(self) -> np.ndarray:
        if self._query_factors is None:
            if self._rows_given:  # the queries' factors from their rows, as the keys' (the same numbers)
                factors = self.scheme.score_factors_of_rows(self.queries, rows_at(self.scheme, self.queries))[0]
            else:
                factors = self.scheme.score_factors(self.queries)[0]
            if self.query_scale is not None:  # the model's attention scales each query (its logit scale)
                factors = factors * np.asarray(self.query_scale(self.queries), dtype=np.float64)[:, None]
            self._query_factors = factors
        return self._query_factors

    def result(self) -> DistanceProfile:
        self._flush()
        self._buffer = self._scores = None  # the chunks' factors and scores: not needed past the pass
        total, low, high = self.stats
        if self._keys_added != self.length:  # every key is added once, in order (the counts below need it)
            raise RuntimeError(f"relativity: scores of {self._keys_added:,} keys added, not of {self.length:,}")
        count = distance_counts(self.queries, self.length, self.reach)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = total / count
        low[:, count == 0] = np.nan
        high[:, count == 0] = np.nan
        return DistanceProfile(
            np.arange(-self.reach, self.reach + 1, dtype=np.int64), mean, high - low, low, high, count, not self.exact,
            int(self.queries.size), self.length,
        )


def distance_counts(queries: np.ndarray, length: int, reach: int) -> np.ndarray:
    """How many of ``queries`` have a key at each distance Δ = −D … D: ``#{m : 0 ≤ m + Δ ≤ L − 1}``, the
    number of scores :func:`_accumulate` adds to Δ's statistics once every key 0 … L − 1 is added.

    Query m reaches the distances −m … L − 1 − m: each adds 1 over that run, a +1 where it starts and
    a −1 after it ends in a table of differences whose running sum is the count (exact integers).
    """
    n = 2 * reach + 1
    steps = np.zeros(n + 1, dtype=np.int64)
    queries = np.asarray(queries, dtype=np.int64)
    first = np.clip(-queries + reach, 0, n)  # column of Δ = −m, within the table
    after = np.clip(length - queries + reach, 0, n)  # column after Δ = L − 1 − m
    np.add.at(steps, first, 1)
    np.add.at(steps, after, -1)
    return np.cumsum(steps[:n], out=steps[:n])  # in place: one array of 2D + 1 integers


def _accumulate(
    scores: np.ndarray, queries: np.ndarray, keys: np.ndarray, reach: int,
    total: np.ndarray, low: np.ndarray, high: np.ndarray,
) -> None:
    """Add the scores of each query m against consecutive keys to the statistics of Δ = key − m (their
    number at each Δ: :func:`distance_counts`).

    The keys k0 … k1 − 1 of query m fall on the consecutive columns k − m + D, so each query's row is
    one slice of the (channels, 2D + 1) statistics: no (queries, 2D + 1) aligned array.
    """
    n = total.shape[1]
    for row, m in enumerate(queries):
        first = keys[0] - m + reach
        lo, hi = max(first, 0), min(first + keys.size, n)
        if lo >= hi:
            continue
        values = scores[:, row, lo - first : hi - first]
        total[:, lo:hi] += values
        np.minimum(low[:, lo:hi], values, out=low[:, lo:hi])
        np.maximum(high[:, lo:hi], values, out=high[:, lo:hi])


def sinusoid_identity(inv_freq: np.ndarray, distance: np.ndarray) -> np.ndarray:
    """[Conditions]'s ``PE_p · PE_q = Σ_i cos(ω_i (p − q))`` for each distance, from the frequencies alone."""
    distance = np.asarray(distance, dtype=np.float64).ravel()
    out = np.empty(distance.size)
    for part in chunks(distance.size, 4 * np.size(inv_freq)):  # no (distances, pairs) array at once
        out[part] = np.cos(np.outer(distance[part], inv_freq)).sum(axis=1)
    return out


def table_distances(reach: int, symmetric: bool) -> list[int]:
    """Distances shown in the dot-product-vs-distance table: 0 … 8, then powers of two, then D."""
    chosen = [d for d in range(0, 9) if d <= reach]
    power = 16
    while power < reach:
        chosen.append(power)
        power *= 2
    if reach not in chosen:
        chosen.append(reach)
    if not symmetric:
        chosen = sorted({-d for d in chosen} | set(chosen))
    return chosen


class QueryVectors:
    """A scheme seen through its query vectors only: ``score(m, n) = Q_m · Q_n``, for the relativity of the
    vectors themselves when queries and keys carry different position factors (xPos)."""

    has_cells = False

    def __init__(self, scheme: Scheme) -> None:
        self.scheme, self.width, self.channels = scheme, scheme.width, 1

    def has(self, capability: object) -> bool:
        """No capability of its own: its scores come from :meth:`score_factors`, not from a pass over rows."""
        return False

    def score_factors(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        queries = self.scheme.score_factors(positions)[0]
        return queries, queries


def score_scale(profile: DistanceProfile) -> float:
    """The largest |S| measured (NaN ignored), as ``nanmax(|[minimum, maximum]|)``, from four reductions
    and no copy of the (channels, 2D + 1) statistics: ``max |x| = max(max x, −min x)``, exactly."""
    with np.errstate(invalid="ignore"):
        return float(np.nanmax([np.nanmax(profile.maximum), -np.nanmin(profile.maximum),
                                np.nanmax(profile.minimum), -np.nanmin(profile.minimum)]))


def _mirrored(mean: np.ndarray, atol: float) -> bool:
    """``np.allclose(mean[:, ::-1], mean, rtol=1e-9, atol=atol, equal_nan=True)``, a slice of columns at
    a time (the same test of each value; its temporaries stay in cache)."""
    mirror = mean[:, ::-1]
    for part in chunks(mean.shape[1], 64 * mean.shape[0]):  # 65,536 columns of one channel
        if not np.allclose(mirror[:, part], mean[:, part], rtol=1e-9, atol=atol, equal_nan=True):
            return False
    return True


def _spread_of(profile: DistanceProfile) -> tuple[float, int, int]:
    """(spread over the score scale, its channel, its column) of a :class:`DistanceProfile`."""
    scale = score_scale(profile) or 1.0
    spread = np.nan_to_num(profile.spread, nan=0.0)
    channel, column = np.unravel_index(int(np.argmax(spread)), spread.shape)
    return float(spread[channel, column]) / scale, int(channel), int(column)


def _overflow(profile: DistanceProfile, length: int) -> PropertyResult | None:
    """A failure when some measured score is not finite (xPos factors past float64's range), else None."""
    measured = profile.count > 0
    every = bool(measured.all())  # then no copy of the measured columns
    low, high = (profile.minimum, profile.maximum) if every else (profile.minimum[:, measured], profile.maximum[:, measured])
    if np.isfinite(low).all() and np.isfinite(high).all():
        return None
    finite = np.isfinite(low) & np.isfinite(high)
    delta = int(profile.distance[measured][np.flatnonzero(~finite.all(axis=0))[0]])
    return PropertyResult(
        "relativity", "fail", f"some scores S(m, m+Δ) are not finite (from Δ = {integer(delta)}): the vectors overflow or "
        f"underflow float64 over {length:,} positions", {"positions": length, "non_finite_distance": delta},
        "non_finite_distance",
    )


def _vector_warning(scheme: Scheme, length: int, samples: int | None) -> tuple[str, dict] | None:
    """For a scheme whose queries and keys carry different position factors (xPos): how far the query
    vectors' own dot products ``E_m · E_{m+Δ}`` are from depending on Δ only, as a warning and figures."""
    if not scheme.keys_differ:
        return None
    vectors = score_by_distance(QueryVectors(scheme), length, samples=samples)  # type: ignore[arg-type]
    spread, _, column = _spread_of(vectors)
    if spread <= SPREAD_TOL:
        return None
    delta = int(vectors.distance[column])
    text = (f"the vectors themselves are not relative: each carries a factor of its own position (xPos scales q "
            f"by ζ^((p − L//2)/B), k by its inverse), so E_m·E_(m+Δ) of two queries spreads by {number(spread, 3)} of its "
            f"scale (at Δ = {integer(delta)}) and their norms grow or shrink with p")
    return text, {"vector_relative_spread": spread, "vector_worst_distance": delta}


def _profile_notes(profile: DistanceProfile, query_scale: Callable[[np.ndarray], np.ndarray] | None) -> list[str]:
    """What a reader of the distance table should know: sampled queries, the channel shown, a query scale."""
    notes = []
    if profile.sampled:
        notes.append(f"S(m, m+Δ) measured for {integer(profile.queries)} sampled query positions m (seeded, 0 and L−1 included)")
    if profile.mean.shape[0] > 1:
        notes.append("the table shows channel 0 (head 0); the spread figure is the largest over all channels")
    if query_scale is not None:
        notes.append("the scores carry the model's factor on each query besides cos and sin (its logit scale)")
    return notes


def check_relativity(scheme: Scheme, length: int, *, samples: int | None = None,
                     query_scale: Callable[[np.ndarray], np.ndarray] | None = None) -> PropertyResult:
    """Does ``S(m, m + Δ)`` depend on Δ only? Report the largest spread over m and the distance table.

    ``query_scale``: the model's factor on the query at each position besides cos and sin (its logit
    scale, see :func:`score_by_distance`): a factor that grows with m (Qwen's log-n, Ministral's β)
    makes the scores depend on m too, and the check says so.

    Returns
    -------
    PropertyResult
        ``pass`` when the largest spread of S(m, m + Δ) over m, divided by the score scale (the largest
        |S|), is at most 1e-9. ``table`` holds the dot-product-vs-distance table (Δ, mean score, spread and,
        for the sinusoidal encoding, [Conditions]'s Σ_i cos(ω_i Δ) next to it).
    """
    if length < 2:
        raise PecliError("relativity needs at least 2 positions")
    profile = score_by_distance(scheme, length, samples=samples, query_scale=query_scale)
    overflow = _overflow(profile, length)
    if overflow is not None:
        return overflow
    scale = score_scale(profile) or 1.0
    relative, channel, column = _spread_of(profile)
    worst_delta = int(profile.distance[column])
    symmetric = _mirrored(profile.mean, 1e-12 * scale)
    # [Conditions]'s identity is about the vectors themselves; a rotary score also carries the scaling.
    pairs = None if scheme.has(Capability.ROTARY) else rotation_pairs(scheme)
    # A table multiplied by s (x-transformers' scaled sinusoid) has scores s² Σ_i cos(ω_i Δ).
    squared_scale = 1.0 if pairs is None else float(pairs.attention_scaling) ** 2
    identity = None
    table = []
    for delta in table_distances(length - 1, symmetric):
        at = profile.at(delta)
        row = {
            "distance": delta,
            "mean": float(profile.mean[0, at]),
            "spread": float(profile.spread[0, at]),
            "min": float(profile.minimum[0, at]),
            "max": float(profile.maximum[0, at]),
        }
        if pairs is not None:
            row["sum_cos"] = float(sinusoid_identity(pairs.inv_freq, np.array([delta]))[0]) * squared_scale
        table.append(row)
    figures = {
        "positions": length,
        "channels": int(profile.mean.shape[0]),
        "max_spread": relative * scale,
        "relative_spread": relative,
        "worst_distance": worst_delta,
        "score_scale": scale,
        "queries": profile.queries,
    }
    if pairs is not None:
        expected = sinusoid_identity(pairs.inv_freq, profile.distance) * squared_scale
        identity = float(np.nanmax(np.abs(profile.mean[0] - expected)))
        figures["identity_max_error"] = identity
    notes = _profile_notes(profile, query_scale)
    vectors = _vector_warning(scheme, length, samples) if relative <= SPREAD_TOL else None
    if relative <= SPREAD_TOL:
        what = "q_m·k_(m+Δ)" if scheme.keys_differ else "S(m, m+Δ)"
        reason = f"{what} depends on Δ only: largest spread over m is {number(relative, 2)} of the score scale"
        if identity is not None:
            scaled = "" if squared_scale == 1.0 else f"{number(squared_scale)} × "
            reason += f"; the mean equals [Conditions]'s {scaled}Σ_i cos(ω_i Δ) within {number(identity, 2)}"
        verdict = "pass"
        if vectors is not None:
            reason, verdict = f"{reason}; but {vectors[0]}", "warn"
            figures.update(vectors[1])
    else:
        at = profile.at(worst_delta)
        reason = (
            f"S(m, m+Δ) changes with m: at Δ = {integer(worst_delta)} it ranges over "
            f"[{number(profile.minimum[channel, at])}, {number(profile.maximum[channel, at])}] "
            f"(spread {number(relative, 3)} of the score scale)"
        )
        verdict = "fail"
    return PropertyResult(
        "relativity", verdict, reason, figures, "relative_spread", table=table, sampled=profile.sampled, notes=tuple(notes),
        warnings=(vectors[0],) if vectors is not None else (),
    )
