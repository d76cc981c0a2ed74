"""What each property check holds in memory at its peak, known from the sizes alone, before any work.

A :data:`Footprint` is ``(held, work)``: ``held``, what the check reads that the checks of one run share
(the remembered (L, d) encoding, or the results of the one pass over the rows of a streamed scheme,
:mod:`pecli.analysis.encoding_pass`); ``work``, the arrays of its own work. :func:`run_footprint`
adds up the checks of a run.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

from pecli.analysis.composability_grid import grid_composability_footprint
from pecli.analysis.distinguishability_grid import grid_distinguishability_footprint
from pecli.analysis.encoding_pass import LANE_LAG, streams
from pecli.analysis.structure import BLOCK_BYTES, CHUNK_BYTES, block_rows, encoded_bytes, has_vectors, is_shift_isometric_kind
from pecli.schemes.base import Scheme

if TYPE_CHECKING:
    from pecli.analysis.options import CheckOptions

#: What a check holds in memory: (bytes of what it reads that a run's checks share, bytes of its own work).
Footprint = tuple[int, int]

#: Bytes per row of exact grouping by hash: the hash, np.unique's sort order, index, inverse and counts.
GROUPING_BYTES_PER_ROW = 64
#: Chunks of rows (CHUNK_BYTES each) a chunked pass holds at once: the rows, their normalised copy,
#: the hash words, and the scheme's own temporaries while it encodes a chunk.
CHUNKS_HELD = 6
#: Blocks (BLOCK_BYTES each) an all-pairs scan holds at once: distances, gaps and their masked copies.
BLOCKS_HELD = 8
#: Bytes per row of the exact grouping of hashes a pass made (:data:`GROUPING_BYTES_PER_ROW`), and of
#: the per-row temporaries :func:`~pecli.analysis.structure.collisions_of` makes from it.
PASS_GROUPING_BYTES_PER_ROW = GROUPING_BYTES_PER_ROW + 16
#: Blocks of a pass over the rows held at once: the block, its cast, rounded, widened and difference
#: forms, a block's worth of hash words or norms, and the next block, encoded meanwhile on another
#: thread; or the two blocks of rows compared where hashes agree; and two more for the work of the
#: accumulators measured at the same time on a second thread (relativity's keys' factors and scores);
#: and the blocks that second thread may lag behind (:data:`~pecli.analysis.encoding_pass.LANE_LAG`),
#: counted by :func:`_pass_blocks`.
PASS_BLOCKS_HELD = 9
#: Bytes per relative distance (2L − 1 of them) relativity holds for a run over a streamed scheme: the
#: statistics (total, min, max as float64, count as int64) and the profile's Δ, mean and spread.
RELATIVITY_HELD_PER_DISTANCE = 7 * 8
#: Bytes per relative distance of relativity's own work on the profile once the pass is done.
RELATIVITY_WORK_PER_DISTANCE = 4 * 8


def run_footprint(scheme: Scheme, footprints: Sequence[Footprint]) -> int:
    """Peak bytes of a run of checks with these footprints: what they share, plus the largest work.

    The remembered encoding is one array every check reads (the largest ``held`` counts); the results
    of a pass over a streamed scheme's rows differ from check to check and all stay until the run
    ends (they add up).
    """
    if not footprints:
        return 0
    held = [held for held, _ in footprints]
    return (sum(held) if streams(scheme) else max(held)) + max(work for _, work in footprints)


def _rows(scheme: Scheme, length: int) -> int:
    """Rows a check compares: positions (vector schemes) or relative distances (bias schemes, both signs)."""
    return length if has_vectors(scheme) else 2 * length - 1


def _bias_table(scheme: Scheme, length: int) -> int:
    """The bias rows of every relative distance, with the transposed copy :func:`bias_domain` keeps."""
    return 0 if has_vectors(scheme) else 3 * 8 * _rows(scheme, length) * int(scheme.channels)


def _width(scheme: Scheme) -> int:
    return max(int(scheme.width) if has_vectors(scheme) else int(scheme.channels), 1)


def _chunk(scheme: Scheme, rows: int) -> int:
    """Bytes of one chunk of a chunked pass: CHUNK_BYTES, or the whole (rows, width) array if smaller."""
    width = _width(scheme)
    return min(max(CHUNK_BYTES, 8 * 1024 * width), 8 * rows * width)


def _pass_blocks(scheme: Scheme, length: int) -> int:
    """Bytes of the blocks a pass over a streamed scheme's rows holds at once."""
    width = _width(scheme)
    rows = block_rows(width)
    lagging = min(LANE_LAG, -(-length // rows) - 1)
    return (PASS_BLOCKS_HELD + lagging) * 8 * width * min(length, rows)


def _grouping(scheme: Scheme, rows: int) -> int:
    return GROUPING_BYTES_PER_ROW * rows + CHUNKS_HELD * _chunk(scheme, rows)


def _scan(scheme: Scheme, o: CheckOptions) -> int:
    """An all-pairs scan's blocks, unless distances depend on Δ only (then one pass over Δ)."""
    if has_vectors(scheme) and is_shift_isometric_kind(scheme) and o.samples is None:
        return 4 * 8 * o.length
    rows = _rows(scheme, o.length)
    return BLOCKS_HELD * min(BLOCK_BYTES, 8 * rows * rows) + 8 * rows * _width(scheme)


def _streamed_scan(scheme: Scheme, o: CheckOptions) -> int:
    """A streamed scheme scans all pairs only when asked to sample them: its encoding, held for the scan."""
    return 0 if o.samples is None else encoded_bytes(scheme, o.length) + _scan(scheme, o)


def generic_footprint(scheme: Scheme, o: CheckOptions) -> Footprint:
    """A check registered without a footprint: the encoding, two more copies of it and a scan's blocks."""
    encoding = encoded_bytes(scheme, o.length)
    return encoding, 2 * encoding + _bias_table(scheme, o.length) + BLOCKS_HELD * BLOCK_BYTES


def uniqueness_footprint(scheme: Scheme, o: CheckOptions) -> Footprint:
    rows = _rows(scheme, o.length)
    if streams(scheme):  # the rows' hashes and distances from 0; their grouping; the pass's blocks
        return 16 * rows, PASS_GROUPING_BYTES_PER_ROW * rows + _pass_blocks(scheme, rows) + _streamed_scan(scheme, o)
    return encoded_bytes(scheme, o.length), _bias_table(scheme, o.length) + _grouping(scheme, rows) + _scan(scheme, o)


def distinguishability_footprint(scheme: Scheme, o: CheckOptions) -> Footprint:
    if scheme.has_cells:
        return grid_distinguishability_footprint(scheme, o.length)
    rows = _rows(scheme, o.length)
    if streams(scheme):  # the steps and distances from 0; the running minimum's arrays; the pass's blocks
        return 16 * rows, 4 * 8 * rows + _pass_blocks(scheme, rows) + _streamed_scan(scheme, o)
    return encoded_bytes(scheme, o.length), _bias_table(scheme, o.length) + 8 * 8 * rows + CHUNKS_HELD * _chunk(scheme, rows) + _scan(scheme, o)


def composability_footprint(scheme: Scheme, o: CheckOptions) -> Footprint:
    from pecli.analysis.composability import EXACT_FIT_WORK, FIT_SAMPLES

    if scheme.has_cells:
        return grid_composability_footprint(scheme, o.length)
    if not has_vectors(scheme):  # the score of every distance before and after each shift, and its changes
        return 0, 16 * 8 * (2 * o.length) * int(scheme.channels) + (1 << 20)
    width = int(scheme.width)
    # exact: the fitted rows at most EXACT_FIT_WORK / width² of them, or 2·width + 65 extended; Q, Y, the
    # pair columns; sampled: 2·n rows per shift and their products.
    rows = max(min(o.length, EXACT_FIT_WORK // max(width * width, 1) + 64), 2 * width + 65)
    sampled = 2 * max(FIT_SAMPLES, 2 * width) * 4
    held = 8 * rows * width
    if streams(scheme):  # its own remembered rows, not the run's
        return 0, held + 8 * 8 * max(rows, sampled) * width
    return held, 8 * 8 * max(rows, sampled) * width


def relativity_footprint(scheme: Scheme, o: CheckOptions) -> Footprint:
    from pecli.analysis.relativity import EXACT_PROFILE_CELLS, RELATIVITY_SAMPLES
    from pecli.analysis.relativity_grid import EXACT_PAIRS, GRID_SAMPLES

    if scheme.has_cells:
        # the scores and offset codes of the pairs measured, sorted; the queries' factors (at most
        # √EXACT_PAIRS queries exactly, else the sample) and a block of keys' factors and scores
        queries = min(o.length, max(GRID_SAMPLES, math.isqrt(EXACT_PAIRS) + 1))
        return 0, (16 * scheme.position_rank + 40) * EXACT_PAIRS + 2 * 8 * queries * int(scheme.width) + 4 * BLOCK_BYTES

    exact_queries = int((EXACT_PROFILE_CELLS / 3) ** 0.5) + 1  # the most queries of an exact profile

    # the queries' score factors; per chunk of keys their factors (with the temporaries of computing
    # them) and the scores of every query against them; the (channels, 2L − 1) statistics
    vectors_ = has_vectors(scheme)
    channels = 1 if vectors_ else int(scheme.channels)
    width = int(scheme.width) if vectors_ else 0
    fewest_queries = min(o.length, o.samples or RELATIVITY_SAMPLES)
    keys = min(o.length, BLOCK_BYTES // (8 * channels * max(fewest_queries, 1)))
    queries = 8 * min(o.length, max(fewest_queries + 2, exact_queries)) * width

    stats = 4 * 8 * (2 * o.length) * channels
    # a score-calling scheme builds its scores from (queries, keys) arrays of distances
    scores = min(BLOCK_BYTES, 8 * o.length * o.length * channels) * (2 if vectors_ else 4)
    if streams(scheme):
        # Held for the run: the accumulator's statistics (total, min, max, count per Δ) and the profile
        # it made (Δ, mean, spread), and its buffer of key_step keys' factors gathered from the pass's
        # blocks. Work: one chunk's scores of every query while the pass runs; the check's own arrays
        # over the 2L − 1 distances afterwards (measured: resident and traced memory agree here).
        profile = RELATIVITY_HELD_PER_DISTANCE * (2 * o.length) + 8 * keys * width
        work = queries + 8 * fewest_queries * keys * channels + RELATIVITY_WORK_PER_DISTANCE * (2 * o.length)
        return profile, work + _pass_blocks(scheme, o.length)
    return 0, queries + 6 * 8 * keys * width + scores + stats


def extrapolation_footprint(scheme: Scheme, o: CheckOptions) -> Footprint:
    # the scheme's remembered encoding when training did not change it, else chunks encoded on demand;
    # the rows' hashes and their grouping; a chunk in a few forms (encoded, hashed, its magnitudes), or
    # two pairs of chunks where rows sharing a hash are compared
    from pecli.analysis.encoding_pass import same_encoding
    from pecli.analysis.extrapolation import default_train_length

    rows = _rows(scheme, o.length)
    if scheme.has_cells:  # a grid's encoding, the grouping of its rows, the training mask
        return encoded_bytes(scheme, o.length), _grouping(scheme, rows) + 8 * rows
    if streams(scheme):  # the rows' hashes; their grouping; the pass's blocks
        return 8 * rows, PASS_GROUPING_BYTES_PER_ROW * rows + _pass_blocks(scheme, rows)
    held = 0
    if has_vectors(scheme) and 1 <= (o.train_length or default_train_length(o.length, scheme)) < o.length:
        trained = scheme.at_length(o.train_length or default_train_length(o.length, scheme))
        held = encoded_bytes(scheme, o.length) if same_encoding(trained, scheme) else 0
    return held, _bias_table(scheme, o.length) + (8 + GROUPING_BYTES_PER_ROW) * rows + 4 * _chunk(scheme, rows)


def precision_footprint(scheme: Scheme, o: CheckOptions) -> Footprint:
    rows = _rows(scheme, o.length)
    if streams(scheme):  # per row: its float64 and low-precision hashes, its error, its position; a grouping
        # (resident: 73 bytes a row measured at 2^21 rows of rope, d = 128; tracemalloc counts 104, some
        # of the grouping's arrays being allocated before all their pages are written)
        return 32 * rows, PASS_GROUPING_BYTES_PER_ROW * rows + _pass_blocks(scheme, rows)
    # two groupings (low precision and float64) one after the other, the per-row errors and both rows'
    # hashes, and a chunk in its exact, low, widened and difference forms
    return encoded_bytes(scheme, o.length), _bias_table(scheme, o.length) + _grouping(scheme, rows) + 3 * 8 * rows + 4 * _chunk(scheme, rows)
