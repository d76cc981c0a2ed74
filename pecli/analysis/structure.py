"""Shared machinery of the property checks: the rows an analysis compares, and exact ways to compare them.

Every check works on every scheme through three views:

- *vector* schemes (additive and rotary) have a matrix ``E`` of per-position vectors (``encode``);
- *bias* schemes have a logit term per relative distance, ``bias(Δ)`` of shape (channels, n);
- every scheme has the position-only score ``S(m, n)``.

At long lengths nothing here builds an (L, L) array: distances of schemes whose geometry is invariant
under a shift (sinusoidal, rotary, integer: ``||E_p − E_q||`` depends on ``q − p`` only) are computed
for the L distances from position 0, which is exact; collisions are found by hashing rows; other
all-pairs questions are answered block by block when that is cheap and on a seeded sample of query
positions otherwise, and then say so.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np

from pecli.blas import blas_pinned, one_blas_thread  # noqa: F401 (where the analyses import them)
from pecli.progress import task
from pecli.schemes.base import Capability, Scheme
from pecli.schemes.frequencies import FrequencyPairs
from pecli.schemes.positions import position_label

#: Seed of every sample an analysis draws (sampled query positions, shift-invariance probes).
SAMPLE_SEED = 1234
#: All-pairs work (rows × rows × width multiply-adds) below which pairwise questions are answered exactly.
EXACT_WORK = 4_000_000_000
#: Pairs (rows × rows) up to which an all-pairs scan is exact: a few elementwise passes per pair
#: whatever the width, so this caps the exact work by operations (about a second), not by L alone.
EXACT_PAIRS = 1 << 26
#: Query positions used when the all-pairs work is above :data:`EXACT_WORK` or :data:`EXACT_PAIRS`.
DEFAULT_SAMPLES = 256
#: Rows per block of a blockwise all-pairs scan.
BLOCK_BYTES = 64 << 20
#: Bytes of float64 rows a chunked pass (encoding, hashing, precision) holds at once.
CHUNK_BYTES = 32 << 20


def chunk_rows(width: int) -> int:
    """Rows per chunk of a chunked pass over rows of ``width`` float64 values (:data:`CHUNK_BYTES`)."""
    return max(1024, CHUNK_BYTES // (8 * max(int(width), 1)))


#: A block of a pass over rows holds 1/BLOCK_SHARE of a chunk (:data:`CHUNK_BYTES`) of float64 rows.
BLOCK_SHARE = 16


def block_rows(width: int) -> int:
    """Rows per block of a pass over rows of ``width`` float64 values: a sixteenth of a chunk (2 MiB, so
    that a block stays in cache while several computations read it), at least 1024 rows."""
    return chunk_rows(BLOCK_SHARE * max(int(width), 1))


def row_blocks(n: int, width: int) -> Iterator[slice]:
    """Consecutive slices covering ``range(n)``, each of at most :func:`block_rows` rows."""
    step = block_rows(width)
    for start in range(0, n, step):
        yield slice(start, min(start + step, n))


def chunks(n: int, width: int) -> Iterator[slice]:
    """Consecutive slices covering ``range(n)``, each of at most :func:`chunk_rows` rows."""
    step = chunk_rows(width)
    for start in range(0, n, step):
        yield slice(start, min(start + step, n))


def has_vectors(scheme: Scheme) -> bool:
    """True for schemes with per-position vectors (additive and rotary)."""
    return scheme.has(Capability.VECTORS)


def vectors(scheme: Scheme, length: int) -> np.ndarray:
    """The (length, width) float64 matrix ``E`` of positions 0 … length − 1 (read-only); of the first
    ``length`` cells of an n-D scheme (:meth:`~pecli.schemes.base.Scheme.sequence_positions`).

    The last two are remembered (schemes are frozen, hashable dataclasses), so that ``check all`` encodes
    a long sequence once, not once per property.
    """
    try:
        return _remembered_vectors(scheme, int(length))
    except TypeError:  # an unhashable parameter
        return _encode(scheme, int(length))


def builds_a_table(scheme: Scheme) -> bool:
    """True when every ``encode`` call builds a table beyond its rows (learned: the whole random table),
    as the scheme's :meth:`~pecli.schemes.base.Scheme.estimate_bytes` of one position says: such a
    scheme is encoded in one call, not chunk by chunk."""
    return scheme.estimate_bytes(1) > 8 * max(int(scheme.width), 1) + CHUNK_BYTES // 64


def _encode(scheme: Scheme, length: int) -> np.ndarray:
    """Encode in chunks of positions into one array, so that the scheme's temporaries (angles, cos,
    sin) stay chunk-sized: each row depends on its own position only (:func:`rows_at`), so the rows
    are the same."""
    if builds_a_table(scheme):
        encoding = rows_at(scheme, scheme.sequence_positions(0, length)).reshape(length, -1)
        encoding.setflags(write=False)
        return encoding
    first = rows_at(scheme, scheme.sequence_positions(0, min(length, 1)))
    width = first.shape[1] if first.ndim == 2 else 1
    encoding = np.empty((length, width), dtype=np.float64)
    parts = list(chunks(length, 4 * width))
    with chunked_task("encode", len(parts)) as bar:
        for part in parts:
            encoding[part] = rows_at(scheme, scheme.sequence_positions(part.start, part.stop))
            bar.advance()
    encoding.setflags(write=False)
    return encoding


class _Quiet:
    def advance(self, amount: int = 1) -> None:
        pass


#: Chunks of work from which a chunked pass reports its progress (fewer would only flicker a bar).
PROGRESS_PARTS = 8


@contextlib.contextmanager
def chunked_task(label: str, parts: int) -> Iterator[Any]:
    """A :func:`pecli.progress.task` of ``parts`` chunks, opened only when there are many of them."""
    if parts < PROGRESS_PARTS:
        yield _Quiet()
        return
    with task(label, total=parts) as bar:
        yield bar


def encoded_bytes(scheme: Scheme, length: int) -> int:
    """Bytes of the (length, width) float64 encoding :func:`vectors` holds (0 without vectors)."""
    return 8 * int(length) * int(scheme.width) if has_vectors(scheme) else 0


def row_label(scheme: Scheme, row: int) -> int | list[int]:
    """The position of row ``row`` of :func:`vectors`: the id itself, or an n-D scheme's cell."""
    return position_label(scheme.sequence_positions(int(row), int(row) + 1)[0])


def rows_at(scheme: Scheme, positions: np.ndarray) -> np.ndarray:
    """The float64 rows of ``positions`` (ids, or an n-D scheme's cells (N, rank)), as ``pecli encode``
    writes them and :func:`pecli.encode` returns them: the main part of the scheme's
    :meth:`~pecli.schemes.base.Scheme.parts` (``exact=False``), shape (N, width).

    Every property of ``check`` measures these rows, so that it measures the numbers ``encode`` gives.
    rope (without xPos) and sinusoidal make them by the angle addition of
    :func:`~pecli.schemes.frequencies.unit_phasors`: float64 values within ``2⁻⁵³·|p·θ| + 2⁻⁵²`` of cos
    and sin of the exact angle ``p·θ``, as close as NumPy's cos and sin of the float64 product
    ``fl(p·θ)`` (what :meth:`~pecli.schemes.base.Scheme.encode` evaluates), whose values they are below
    position 256 and differ from by up to twice that above it. Other schemes' rows are their
    ``encode``'s. Each row depends on its own position only, not on the others asked with it: rows
    encoded again on their own (to verify a collision, to name an example) are the same, bit for bit.
    """
    positions = np.asarray(positions)
    if positions.dtype.kind in "iub":
        positions = positions.astype(np.int64, copy=False)
    count = len(positions)
    if not count:
        return np.asarray(scheme.encode(positions), dtype=np.float64).reshape(0, -1)
    main = scheme.parts(positions, exact=False, dtype=None, wanted=[scheme.main_key])[0]
    rows = np.asarray(main.rows_at(np.arange(count)), dtype=np.float64)
    return rows.reshape(count, -1)


@functools.lru_cache(maxsize=2)
def _remembered_vectors(scheme: Scheme, length: int) -> np.ndarray:
    return _encode(scheme, length)


def forget_vectors() -> None:
    """Drop the encodings :func:`vectors` remembers: a process that runs many checks one after the other
    (a sweep's worker) holds each check's encodings while it runs, not those of the checks before."""
    _remembered_vectors.cache_clear()


# -- rows compared exactly ------------------------------------------------------------------------
def normalised_rows(rows: np.ndarray) -> np.ndarray:
    """Rows as 2-D arrays whose bytes are equal exactly when the values are: floats (bfloat16 too)
    widened to float64, exact for every float dtype, with −0.0 folded into 0.0 and one NaN pattern."""
    rows = np.asarray(rows)
    if rows.dtype.kind in "fV" or rows.dtype.name == "bfloat16":
        rows = (rows if rows.dtype == np.float64 else rows.astype(np.float64)) + 0.0  # one copy
        rows[np.isnan(rows)] = np.nan
    return rows.reshape(rows.shape[0], -1)


def _hashable(rows: np.ndarray) -> np.ndarray:
    rows = np.ascontiguousarray(normalised_rows(rows))
    if rows.shape[1] == 0:
        return np.zeros(rows.shape[0], dtype=np.int8)
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()


@dataclass(frozen=True)
class Collisions:
    """Rows that are identical to an earlier row, found by hashing (exact, O(n log n))."""

    #: Number of unordered pairs of rows that are identical.
    pairs: int
    #: Number of rows identical to some earlier row (n minus the number of distinct rows).
    repeated: int
    #: The first colliding pair (i, j), i < j, with the smallest j; None without collisions.
    first: tuple[int, int] | None
    #: Index of the first row equal to the row just before it; None if there is none.
    first_adjacent: int | None


def murmur_finalise(words: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser, elementwise (in place): every input bit reaches every output bit,
    so that rows whose sums in :func:`row_hashes` differ in a few bits get unrelated hashes."""
    words ^= words >> np.uint64(33)
    words *= np.uint64(0xFF51AFD7ED558CCD)
    words ^= words >> np.uint64(33)
    words *= np.uint64(0xC4CEB9FE1A85EC53)
    words ^= words >> np.uint64(33)
    return words


def row_hashes(rows: np.ndarray) -> np.ndarray:
    """A 64-bit hash per row, equal for rows equal in value (−0.0 = 0.0, every NaN alike).

    The rows are hashed in their own dtype, not widened: each value's bit pattern w (zero-extended
    to 64 bits) is folded, w ⊕ (w >> half its width), so that values differing only in their high
    bits (small integers stored as floats) still differ in the low bits, and a row hashes to
    MurmurHash3's finaliser of Σ_c w_c·s_c mod 2^64, with one odd pseudo-random multiplier s_c per column (:func:`splitmix64`).
    Two different rows share a hash rarely (about 2^-32 per pair of float32 rows); they are then
    compared in full, so a shared hash costs time, never a wrong count.
    """
    rows = np.asarray(rows)
    rows = rows.reshape(rows.shape[0], -1)
    if rows.shape[1] == 0:
        return np.zeros(rows.shape[0], dtype=np.uint64)
    if rows.dtype.kind == "f":
        rows = rows + rows.dtype.type(0)  # a copy, with −0.0 read as 0.0
        nan = np.isnan(rows)
        if nan.any():
            rows[nan] = np.nan
    elif rows.dtype.kind not in "iub":
        rows = normalised_rows(rows)
    bits = np.ascontiguousarray(rows).view(f"u{rows.dtype.itemsize}")
    words = bits.astype(np.uint64)
    words ^= words >> np.uint64(4 * rows.dtype.itemsize)
    salts = _odd_salts(rows.shape[1])
    with np.errstate(over="ignore"):
        words *= salts
        return murmur_finalise(words.sum(axis=1, dtype=np.uint64))


def splitmix64(seed: int, count: int) -> np.ndarray:
    """The first ``count`` outputs of SplitMix64 seeded with ``seed`` (uint64, NumPy's wrapping arithmetic).

    SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014;
    Vigna's ``splitmix64.c``): the state advances by γ = 0x9E3779B97F4A7C15 and output i is the mix of
    z = seed + (i + 1)·γ mod 2^64: z ← (z ⊕ (z >> 30))·0xBF58476D1CE4E5B9, z ← (z ⊕ (z >> 27))·0x94D049BB133111EB,
    z ⊕ (z >> 31). Each output depends on its index alone, so all are made at once. Used instead of
    ``numpy.random``, whose import (8–19 ms) ``encode`` would otherwise pay for the summary's salts.
    """
    with np.errstate(over="ignore"):
        z = np.arange(1, count + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        z += np.uint64(seed % 2**64)
        z ^= z >> np.uint64(30)
        z *= np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(27)
        z *= np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return z


@functools.lru_cache(maxsize=8)
def _odd_salts(count: int) -> np.ndarray:
    """The odd multipliers of :func:`row_hashes`: SplitMix64's outputs from :data:`SAMPLE_SEED`, lowest bit set."""
    salts = splitmix64(SAMPLE_SEED, count) | np.uint64(1)
    salts.flags.writeable = False
    return salts


RowSource = Callable[[slice | np.ndarray], np.ndarray]


def _chunked_hashes(n: int, rows_of: RowSource, width: int) -> np.ndarray:
    """:func:`row_hashes` of rows produced chunk by chunk: memory O(chunk)."""
    hashes = np.empty(n, dtype=np.uint64)
    for part in chunks(n, width):
        hashes[part] = row_hashes(rows_of(part))
    return hashes


def group_rows_of(
    n: int, rows_of: RowSource, width: int, hashes: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(rows, axis=0)``-like grouping of the n rows ``rows_of(slice or indices)`` produces:
    (first index, inverse, counts) per distinct row, exact. ``hashes``: the rows' :func:`row_hashes`,
    when a pass over the rows already made them.

    Rows are grouped by a 64-bit hash and each group is verified row by row against its first member.
    The rows are produced chunk by chunk to be hashed, and again only where two rows share a hash (to
    verify them), so a computed encoding never needs to exist whole. ``hashes`` may hash part of each
    row (a few columns): where different rows share one, the rows sharing hashes are grouped again
    by their whole rows (:func:`_regroup`), and only those are ever held together.
    """
    if n == 0:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    if hashes is None:
        hashes = _chunked_hashes(n, rows_of, width)
    first_index, inverse, counts = _group(hashes)
    shared = np.nonzero(counts[inverse] > 1)[0]
    if not shared.size or _same_rows(rows_of, shared, first_index[inverse[shared]], width):
        return first_index, inverse, counts
    sub_first, sub_inverse, sub_counts = _regroup(shared, rows_of, width, hashes[shared])
    # rows alone under their hash keep their group; the others take the groups of their whole rows
    alone = np.nonzero(counts[inverse] == 1)[0]
    groups = np.empty(n, dtype=np.intp)
    groups[alone] = np.arange(alone.size)
    groups[shared] = alone.size + sub_inverse
    return np.concatenate([alone, shared[sub_first]]), groups, np.concatenate([np.ones(alone.size, dtype=np.intp), sub_counts])


def _group(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first index, inverse, counts) of equal values of ``keys`` (one per row)."""
    _, first_index, inverse, counts = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
    return first_index, inverse.ravel(), counts


def _regroup(index: np.ndarray, rows_of: RowSource, width: int, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact grouping of rows ``index`` (sorted) whose ``hashes`` (of part of each row) do not tell them
    apart: by those hashes and the hashes of the whole rows, verified; by the rows' bytes if two different
    whole rows still share both. Returns (first, inverse, counts) over positions in ``index``."""
    whole = np.empty(index.size, dtype=np.uint64)
    step = block_rows(width)
    for start in range(0, index.size, step):
        whole[start : start + step] = row_hashes(rows_of(index[start : start + step]))
    keys = np.empty(index.size, dtype=[("part", np.uint64), ("whole", np.uint64)])
    keys["part"], keys["whole"] = hashes, whole
    first, inverse, counts = _group(keys)
    shared = np.nonzero(counts[inverse] > 1)[0]
    if not shared.size or _same_rows(rows_of, index[shared], index[first[inverse[shared]]], width):
        return first, inverse, counts
    return _group(_hashable(normalised_rows(rows_of(index))))


def _same_rows(rows_of: RowSource, index: np.ndarray, other: np.ndarray, width: int) -> bool:
    """True when row ``index[i]`` equals row ``other[i]`` for every i (NaN equal to NaN), block by block."""
    step = block_rows(width)
    for start in range(0, index.size, step):
        a = normalised_rows(rows_of(index[start : start + step]))
        b = normalised_rows(rows_of(other[start : start + step]))
        if not np.array_equal(a, b, equal_nan=True):
            return False
    return True


def collisions(rows: np.ndarray) -> Collisions:
    """Exact collisions among ``rows`` (any float dtype, bfloat16 included; −0.0 equals 0.0)."""
    rows = np.asarray(rows)
    return collisions_of(rows.shape[0], lambda index: rows[index], int(np.prod(rows.shape[1:], dtype=np.int64)))


def all_distinct(keys: np.ndarray) -> bool:
    """Whether no two of ``keys`` are equal: a sort (NumPy's vectorised one, about 40× faster than the
    index-keeping sort of ``np.unique`` at 2²² keys) and one comparison of neighbours."""
    ordered = np.sort(keys, axis=None)
    return not bool(np.any(ordered[1:] == ordered[:-1]))


def collisions_of(n: int, rows_of: RowSource, width: int, hashes: np.ndarray | None = None) -> Collisions:
    """:func:`collisions` of n rows produced on demand by ``rows_of(slice or indices)`` (see
    :func:`group_rows_of`, and for ``hashes``): memory O(n) hashes plus one chunk of rows."""
    if n == 0:
        return Collisions(0, 0, None, None)
    if hashes is not None and all_distinct(hashes):  # equal rows hash alike: no two rows are equal
        return Collisions(0, 0, None, None)
    first_index, inverse, counts = group_rows_of(n, rows_of, width, hashes)
    inverse = inverse.ravel()
    pairs = int(np.sum(counts.astype(np.int64) * (counts - 1) // 2))
    repeated = int(n - counts.size)
    later = np.nonzero(first_index[inverse] < np.arange(n))[0]
    first = (int(first_index[inverse[later[0]]]), int(later[0])) if later.size else None
    adjacent = np.nonzero(inverse[1:] == inverse[:-1])[0]
    first_adjacent = int(adjacent[0] + 1) if adjacent.size else None
    return Collisions(pairs, repeated, first, first_adjacent)


# -- shift invariance -----------------------------------------------------------------------------------
def is_shift_isometric(scheme: Scheme, encoding: Any, extent: tuple[float, float] | None = None) -> bool:
    """True when ``||E_p − E_q||`` depends on ``q − p`` only, so that one pass over Δ is exact.

    Holds by construction for the schemes that say so (:attr:`Scheme.shift_isometric`: those that rotate
    pairs by ``p θ_i``, ``E_{p+k} = R_k E_p`` with R_k orthogonal, [Fleetwood] and [EulerBlind], and the integer
    encoding ``E_p = c·p·1``). The structural condition is confirmed on a seeded sample of pairs, so a
    variant that breaks it (an axial layout, say) falls back to the general path.

    ``encoding`` is the (L, d) array, or anything indexed like it (the rows of an encoding pass);
    ``extent``, the smallest and largest value of it when they are known already.
    """
    if not has_vectors(scheme) or not scheme.shift_isometric:
        return False
    length = encoding.shape[0]
    if length < 3:
        return True
    rng = np.random.default_rng(SAMPLE_SEED)
    p = rng.integers(0, length, 256)
    q = rng.integers(0, length, 256)
    low, high = np.minimum(p, q), np.maximum(p, q)
    direct = np.linalg.norm(encoding[high] - encoding[low], axis=1)
    from_zero = np.linalg.norm(encoding[high - low] - encoding[0], axis=1)
    low, high = extent if extent is not None else (float(encoding.min()), float(encoding.max()))
    largest = max(abs(high), abs(low))  # max |E| without an |E| copy
    scale = max(largest, 1e-300) * np.sqrt(encoding.shape[1])
    return bool(np.allclose(direct, from_zero, rtol=1e-7, atol=1e-9 * scale))


def is_shift_isometric_kind(scheme: Scheme) -> bool:
    """What :func:`is_shift_isometric` will find, as far as it is known before encoding: the scheme
    says so (the sampled confirmation may still turn it down)."""
    return has_vectors(scheme) and bool(scheme.shift_isometric)


def row_norms(rows: np.ndarray) -> np.ndarray:
    """``||E_p||`` of every row, chunk by chunk."""
    out = np.empty(rows.shape[0])
    for part in chunks(rows.shape[0], rows.shape[1]):
        out[part] = np.linalg.norm(rows[part], axis=1)
    return out


# -- all pairs, blockwise or sampled -------------------------------------------------------------------
@dataclass(frozen=True)
class PairScan:
    """Nearest-neighbour facts over all pairs of rows (exact) or over sampled query rows (``sampled``)."""

    #: Smallest distance between two different rows (indices ``min_pair``).
    min_distance: float
    min_pair: tuple[int, int]
    #: Number of query rows whose nearest other row is strictly one of their two neighbours i ± 1.
    local_nearest: int
    #: Number of query rows examined (all rows, or the sample).
    queries: int
    #: A query whose nearest row is not a neighbour: (query, nearest row), or None.
    example: tuple[int, int] | None
    #: Pairs of different rows within ``tol`` (all pairs when exact; among query×all pairs when sampled).
    within_tol: int
    sampled: bool


def sample_queries(n: int, samples: int) -> np.ndarray:
    """``samples`` query rows, seeded, always including the first and the last row; sorted."""
    rng = np.random.default_rng(SAMPLE_SEED)
    chosen = rng.choice(n, size=min(samples, n), replace=False)
    return np.unique(np.concatenate([[0, n - 1], chosen]))


@blas_pinned
def scan_pairs(rows: np.ndarray, *, tol: float = 0.0, samples: int | None = None) -> PairScan:
    """Nearest neighbours of rows by Euclidean distance, blockwise (memory O(block × n)).

    Exact over all pairs when ``n² · width`` is at most :data:`EXACT_WORK`, ``n²`` at most
    :data:`EXACT_PAIRS` and ``samples`` is None;
    otherwise over ``samples`` (default :data:`DEFAULT_SAMPLES`) seeded query rows against every row.
    Distances use ``||a||² + ||b||² − 2 a·b``, exact for the integer-valued rows of integer and binary.
    """
    rows = np.asarray(rows, dtype=np.float64)
    n, width = rows.shape[0], max(rows.shape[1], 1)
    exact = samples is None and n * n * width <= EXACT_WORK and n * n <= EXACT_PAIRS
    queries = np.arange(n) if exact else sample_queries(n, samples or DEFAULT_SAMPLES)
    squared = np.einsum("ij,ij->i", rows, rows)
    block = max(1, BLOCK_BYTES // (8 * max(n, 1)))
    best, best_pair = np.inf, (0, 0)
    local, within, example = 0, 0, None
    for start in range(0, queries.size, block):
        q = queries[start : start + block]
        r = np.arange(q.size)
        products = rows[q] @ rows.T
        products *= 2.0
        d2 = np.add.outer(squared[q], squared)
        d2 -= products  # (||a||² + ||b||²) − 2 a·b, in that order
        del products
        np.maximum(d2, 0.0, out=d2)
        d2[r, q] = np.inf  # a row is not its own neighbour
        at = np.unravel_index(int(np.argmin(d2)), d2.shape)
        if d2[at] < best:
            best, best_pair = float(d2[at]), (int(q[at[0]]), int(at[1]))
        within += int(np.count_nonzero(d2 <= tol * tol))
        before, after = np.maximum(q - 1, 0), np.minimum(q + 1, n - 1)
        adjacent = np.minimum(np.where(q > 0, d2[r, before], np.inf), np.where(q < n - 1, d2[r, after], np.inf))
        d2[r, before], d2[r, after] = np.inf, np.inf  # what is left: the rows at least two apart
        other_min = d2.min(axis=1)
        good = adjacent < other_min
        local += int(np.count_nonzero(good))
        if example is None and not good.all():
            bad = int(np.nonzero(~good)[0][0])
            example = (int(q[bad]), int(np.argmin(d2[bad])))
    if exact:
        within //= 2
    return PairScan(float(np.sqrt(best)), tuple(sorted(best_pair)), local, int(queries.size), example, within, not exact)


def local_nearest_shift_isometric(from_origin: np.ndarray) -> tuple[int, tuple[int, int] | None]:
    """Positions whose nearest other position is strictly p ± 1, when distances depend on Δ only.

    With ``f(Δ) = ||E_Δ − E_0||`` the positions p can reach are the Δ ≤ D_p = max(p, L − 1 − p), so p's
    nearest is a neighbour iff ``f(1) < min_{2 ≤ Δ ≤ D_p} f(Δ)``: one running minimum, O(L), exact.
    Returns the count and an example (p, nearest position) of a position that fails, or None.
    """
    length = from_origin.size
    if length < 2:
        return length, None
    running = np.full(length, np.inf)
    if length > 2:
        running[2:] = np.minimum.accumulate(from_origin[2:])
    # running[D_p] for every p: the running minimum never grows, so at D_p = max(p, L − 1 − p) it is the
    # smaller of running[p] and running[L − 1 − p] (one of the two values, exactly; no gather by index)
    good = from_origin[1] < np.minimum(running, running[::-1])
    example = None
    if not good.all():
        p = int(np.nonzero(~good)[0][0])
        reach = np.maximum(np.arange(length), length - 1 - np.arange(length))
        delta = 2 + int(np.argmin(from_origin[2 : reach[p] + 1]))
        example = (p, p + delta if p + delta < length else p - delta)
    return int(np.count_nonzero(good)), example


# -- bias schemes: rows per relative distance ---------------------------------------------------------------
@dataclass(frozen=True)
class BiasDomain:
    """The relative distances Δ = key − query a bias scheme tells apart, and their bias rows.

    ``side`` is ``"both"`` (Δ in −(L−1) … L−1) or ``"causal"`` (Δ = 0, −1, … −(L−1)): a scheme whose
    bias is symmetric in Δ (ALiBi's −m·|Δ|) or constant for Δ > 0 (causal T5) is compared on the keys at
    or before the query, as a causal decoder sees them. ``rows`` has shape (n, channels), ordered by
    increasing |Δ| on the causal side and by increasing Δ otherwise.
    """

    deltas: np.ndarray
    rows: np.ndarray
    side: str
    note: str | None


def bias_domain(scheme: Any, length: int) -> BiasDomain:
    """The :class:`BiasDomain` of a bias scheme over sequences of ``length`` positions."""
    all_deltas = np.arange(-(length - 1), length, dtype=np.int64)
    table = np.asarray(scheme.bias(all_deltas), dtype=np.float64).reshape(-1, all_deltas.size)
    after = table[:, length - 1 :]  # Δ = 0 … L − 1
    before = table[:, length - 1 :: -1]  # Δ = 0, −1, … −(L − 1)
    if np.array_equal(after, before):
        note = "bias is symmetric in Δ (direction not encoded); compared on keys at or before the query, as a causal model sees them"
    elif np.all(after == after[:, :1]):
        note = "causal: keys after the query all get the bias of Δ = 0; compared on keys at or before the query"
    else:
        return BiasDomain(all_deltas, table.T.copy(), "both", None)
    return BiasDomain(-np.arange(length, dtype=np.int64), before.T.copy(), "causal", note)


# -- rotation pairs ----------------------------------------------------------------------------------------
def rotation_pairs(scheme: Scheme) -> FrequencyPairs | None:
    """The :class:`~pecli.schemes.frequencies.FrequencyPairs` of a scheme whose vectors rotate pairs by
    ``p θ_i`` (sinusoidal, rotary); None for schemes without that structure."""
    if not (has_vectors(scheme) and scheme.has(Capability.FREQUENCIES)):
        return None
    return scheme.frequency_pairs()


def turning(scheme: Scheme) -> float:
    """+1 or −1: the way a scheme's pairs turn, ``p·θ_i`` or ``−p·θ_i`` (rope's ``direction``: nanochat
    turns by −pθ, its rows holding (cos pθ_i, −sin pθ_i)); :class:`FrequencyPairs` gives θ_i > 0 either way."""
    return float(getattr(scheme, "sign", 1.0))


def rotation_blocks(pairs: FrequencyPairs, shift: int) -> np.ndarray:
    """The (n_pairs, 2, 2) blocks of the shift map ``E_{p+k} = R_k E_p`` ([Fleetwood] and [EulerBlind]).

    For (sin, cos) pairs, ``sin((p+k)ω) = cos(kω) sin(pω) + sin(kω) cos(pω)`` and
    ``cos((p+k)ω) = −sin(kω) sin(pω) + cos(kω) cos(pω)``, so the block is
    ``[[cos kω, sin kω], [−sin kω, cos kω]]`` — [Fleetwood]'s M_k; for (cos, sin) pairs it is the transpose.
    """
    c, s = np.cos(shift * pairs.inv_freq), np.sin(shift * pairs.inv_freq)
    if pairs.sin_first:
        return np.stack([np.stack([c, s], -1), np.stack([-s, c], -1)], -2)
    return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)


# -- scores ---------------------------------------------------------------------------------------------------
def score_factors(scheme: Scheme, length: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Matrices (Q, K) with ``S(m, n) = Q_m · K_n`` over positions 0 … length−1, when the score factorises.

    Additive: ``Q = K = E``; rotary: the rotated reference vectors (:meth:`Scheme.score_factors`).
    None for bias schemes, whose score is evaluated through ``scheme.score``.
    """
    if not has_vectors(scheme):
        return None
    return scheme.score_factors(np.arange(length, dtype=np.int64))
