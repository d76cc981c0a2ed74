"""The quick facts ``pecli encode`` reports about the array it computed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from pecli.analysis.structure import collisions, row_hashes
from pecli.dtypes import numpy_dtype
from pecli.progress import task
from pecli.schemes.base import Scheme
from pecli.schemes.parts import Block
from pecli.schemes.positions import position_label


@dataclass(frozen=True)
class Adjacency:
    """How far apart adjacent positions are, and how many positions repeat an earlier one.

    Attributes
    ----------
    min_distance, min_pair:
        The smallest Euclidean step ``||E_{p+1} − E_p||`` and its positions; None with one position.
    constant:
        True when every adjacent step is the same (shift-invariant encodings), None with one position.
    colliding_positions:
        Positions whose row equals an earlier one, exactly, in the output dtype.
    """

    min_distance: float | None
    min_pair: tuple[int, int] | None
    constant: bool | None
    colliding_positions: int


@dataclass(frozen=True)
class ArraySummary:
    """Shape, dtype, bytes and value range of an array; the adjacency of an encoding's positions."""

    shape: tuple[int, ...]
    dtype: str
    bytes: int
    min: float | None
    max: float | None
    adjacency: Adjacency | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON keys (``min_adjacent_distance`` … ``colliding_positions`` with an adjacency)."""
        out: dict[str, Any] = {"shape": list(self.shape), "dtype": self.dtype, "bytes": self.bytes, "min": self.min, "max": self.max}
        if self.adjacency is not None:
            out["min_adjacent_distance"] = self.adjacency.min_distance
            out["min_adjacent_pair"] = None if self.adjacency.min_pair is None else list(self.adjacency.min_pair)
            out["adjacent_distance_constant"] = self.adjacency.constant
            out["colliding_positions"] = self.adjacency.colliding_positions
        return out


@dataclass(frozen=True)
class EncodeReport:
    """What ``pecli encode`` reports: the scheme, the positions, the main array's summary, the file."""

    scheme: str
    kind: str
    params: dict[str, Any]
    length: int
    #: (count, first, last) of the position ids.
    positions: tuple[int, int, int]
    #: Name of the main array (``encoding``, ``bias``, … or ``result`` with ``--apply``).
    main: str
    array: ArraySummary
    out: str | None = None
    #: Values that overflowed the output dtype (stored as ±inf).
    non_finite_values: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``pecli encode --json``."""
        count, first, last = self.positions
        facts = self.array.to_dict()
        document: dict[str, Any] = {
            "scheme": self.scheme, "params": self.params, "length": self.length, "dtype": facts.pop("dtype"),
            "kind": self.kind, "positions": {"count": count, "first": first, "last": last}, "main": self.main,
            **facts, "out": self.out,
        }
        if self.non_finite_values:
            document["non_finite_values"] = self.non_finite_values
        return document


def position_rows(scheme: Scheme, main: np.ndarray) -> np.ndarray:
    """One row per position: the encoding of additive/rotary schemes, the bias row of a query otherwise.

    ``main`` is the scheme's main array; alibi's (H, L, L) bias becomes (L, H·L), relative's
    (L, L, d) embeddings become (L, L·d).
    """
    if scheme.main_key == "bias":
        main = np.moveaxis(main, 0, 1)
    return main.reshape(main.shape[0], -1)


def summarize(scheme: Scheme, positions: np.ndarray, main: np.ndarray) -> ArraySummary:
    """Shape, dtype, bytes, value range, smallest step between adjacent positions and collisions.

    ``main`` is the main array already cast to the output dtype, so collisions are those of that dtype.
    """
    rows = position_rows(scheme, main)
    wide = rows.astype(np.float64) + 0.0  # −0.0 reads as 0.0
    lowest = float(wide.min()) if wide.size else None
    highest = float(wide.max()) if wide.size else None
    repeated = collisions(rows).repeated
    if rows.shape[0] > 1:
        steps = np.linalg.norm(np.diff(wide, axis=0), axis=1)
        # Shift-invariant encodings (sinusoidal, rope) step by the same distance everywhere: naming
        # the pair with the smallest one would only name rounding noise (see steps_are_equal).
        equal = steps_are_equal(scheme, positions, str(main.dtype)) and not repeated
        constant = equal or bool(np.ptp(steps) <= 1e-9 * max(float(steps.max()), 1e-300))
        at = 0 if equal else int(np.argmin(steps))
        adjacency = Adjacency(float(steps[at]), (position_label(positions[at]), position_label(positions[at + 1])), constant, repeated)
    else:
        adjacency = Adjacency(None, None, None, repeated)
    return ArraySummary(tuple(main.shape), str(main.dtype), int(main.nbytes), lowest, highest, adjacency)


def array_summary(array: np.ndarray) -> ArraySummary:
    """Shape, dtype, bytes and value range of any array (an ``--apply`` result)."""
    wide = array.astype(np.float64)
    return ArraySummary(tuple(array.shape), str(array.dtype), int(array.nbytes), float(wide.min()), float(wide.max()))


#: Columns of each position row that are hashed to find candidate collisions (at least; every k-th).
HASHED_COLUMNS = 16
#: Values whose adjacent differences are formed at once (about 1 MiB of float64: they stay in cache).
STEP_VALUES = 1 << 15
#: Values of candidate rows compared at once when collisions are verified.
VERIFY_VALUES = 1 << 18


def steps_are_equal(scheme: Scheme, positions: np.ndarray | range, dtype: str) -> bool:
    """Whether every adjacent step ``||E_{p+1} − E_p||`` of the output is the same by construction.

    A shift-isometric scheme (``E_{p+1} = R E_p`` with R orthogonal, or integer's ``E_p = c·p·1``) at
    consecutive positions steps by one distance everywhere; stored in float32 or float64 the steps
    differ only by the rounding of the values (below 1e-7 relative), so measuring each one would only
    measure that rounding. In float16 and bfloat16 the rounding is coarse enough to matter, and each
    step is measured.
    """
    if not (scheme.shift_isometric and scheme.main_key == "encoding" and numpy_dtype(dtype).itemsize >= 4):
        return False
    if isinstance(positions, range):  # ids never made (``pecli encode --length L``)
        return len(positions) > 1 and positions.step == 1
    return (
        positions.ndim == 1 and positions.size > 1 and positions[-1] - positions[0] == positions.size - 1
        and bool(np.all(np.diff(positions) == 1))
    )


class StreamingSummary:
    """The :class:`ArraySummary` of an encoding's main array, from its blocks as they are written.

    Each :class:`~pecli.schemes.base.Block` (rows of one segment, already in the output dtype) updates
    the value range, the adjacent steps ``||E_{p+1} − E_p||`` and a 32-bit key of a few columns of each
    row. Rows whose keys agree are then compared in full (recomputed with ``rows_at``), so the collision
    count is exact. For a main array with one segment every figure equals :func:`summarize`'s, but for
    the one step stated when steps are equal by construction (measured on the first two rows alone: it
    may differ from a step of the whole array in the last digit); with several segments (alibi's heads)
    the squared steps are summed head by head, equal up to rounding.

    Memory, for N positions: the keys, 4 bytes a position (:data:`KEY_BYTES`), plus with several
    segments 8 bytes a position for the summed squared steps (with one segment the smallest and
    largest step are kept as the blocks come); :meth:`finish` adds :func:`finish_bytes` (and more
    where many rows do repeat: float16 outputs).

    Parameters
    ----------
    count:
        Number of positions (rows).
    shape, dtype, nbytes:
        What the summary reports of the main array (``nbytes`` in the output dtype).
    equal_steps:
        Every adjacent step is the same by construction (:func:`steps_are_equal`): the steps are not
        measured block by block; the summary states the first one, unless rows collide, when they are
        all measured after all.
    segments:
        Segments of the main array (alibi's heads; 1 for arrays whose first axis is the positions).
    """

    def __init__(self, count: int, shape: tuple[int, ...], dtype: str, nbytes: int, *, equal_steps: bool = False,
                 segments: int = 1) -> None:
        self.count, self.shape, self.dtype, self.nbytes = count, tuple(shape), dtype, nbytes
        self.equal_steps = equal_steps
        #: Squared steps summed over segments; None with one segment (the steps are folded as they come).
        self.squared_steps = np.zeros(max(count - 1, 0)) if segments > 1 and not equal_steps else None
        self.extremes = StepExtremes()
        self.hashes = np.zeros(count, dtype=np.uint32)  # the rows' 32-bit keys (:func:`row_keys`)
        self.lowest: float | None = None
        self.highest: float | None = None
        self.non_finite = 0
        self._last: tuple[int, int, np.ndarray] | None = None  # (segment, row, values) of the last row seen

    @staticmethod
    def bytes_needed(count: int, segments: int = 1, equal_steps: bool = False) -> int:
        """Bytes held for the whole run (the keys; the summed squared steps with several segments)."""
        return count * KEY_BYTES + (8 * max(count - 1, 0) if segments > 1 and not equal_steps else 0)

    def add(self, block: Block, values: np.ndarray) -> None:
        """Take ``values``, block ``block``'s rows in the output dtype (bfloat16 widened to float32)."""
        rows = values.reshape(values.shape[0], -1)
        if rows.size == 0:
            return
        with np.errstate(invalid="ignore", over="ignore"):
            self._range(rows)
            if not self.equal_steps:
                self._steps(block, rows)
        self.hashes[block.start : block.start + rows.shape[0]] += self._hash(rows)
        self._last = (block.segment, block.start + rows.shape[0] - 1, rows[-1])

    def _range(self, rows: np.ndarray) -> None:
        low, high = np.min(rows), np.max(rows)
        self.lowest = float(low) if self.lowest is None else float(np.minimum(self.lowest, low))
        self.highest = float(high) if self.highest is None else float(np.maximum(self.highest, high))
        if rows.dtype.kind == "f" and not (np.isfinite(low) and np.isfinite(high)):  # else all are finite
            self.non_finite += int(rows.size - np.count_nonzero(np.isfinite(rows)))

    def _steps(self, block: Block, rows: np.ndarray) -> None:
        if self._last is not None and self._last[:2] == (block.segment, block.start - 1):
            boundary = np.subtract(rows[:1], self._last[2][None], dtype=np.float64)
            self._take(block.start - 1, np.add.reduce(np.square(boundary), axis=1))
        # A few rows at a time, so that the float64 differences stay in cache; each row's sum is
        # np.linalg.norm's (a pairwise sum along the row), whatever the number of rows.
        step = max(1, STEP_VALUES // rows.shape[1])
        for first in range(0, rows.shape[0] - 1, step):
            last = min(first + step, rows.shape[0] - 1)
            # widened to float64 by the subtraction itself (exact, as a copy first would be): one pass fewer
            differences = np.subtract(rows[first + 1 : last + 1], rows[first:last], dtype=np.float64)
            np.square(differences, out=differences)
            self._take(block.start + first, np.add.reduce(differences, axis=1))

    def _take(self, start: int, squared: np.ndarray) -> None:
        """Squared steps ``start``, ``start + 1``, … of one segment: summed with the other segments', or
        folded into the extremes at once."""
        if self.squared_steps is not None:
            self.squared_steps[start : start + squared.size] += squared
        else:
            self.extremes.fold(start, np.sqrt(squared))

    def _hash(self, rows: np.ndarray) -> np.ndarray:
        return row_keys(rows[:, :: max(1, rows.shape[1] // HASHED_COLUMNS)])

    def finish(self, positions: Any, rows_at: Callable[[np.ndarray], np.ndarray]) -> ArraySummary:
        """The summary, once every block was added; ``rows_at(index)`` recomputes position rows in the
        output dtype for the rows whose keys collide. ``positions``: the ids (an array, or a ``range``)."""
        repeated = self._repeated(rows_at)
        if self.count > 1 and self.equal_steps and not repeated:
            first = np.asarray(rows_at(np.arange(2)), dtype=np.float64)
            step = float(np.linalg.norm(first[1] - first[0]))
            return ArraySummary(
                self.shape, self.dtype, self.nbytes, *self._extremes(),
                Adjacency(step, (position_label(positions[0]), position_label(positions[1])), True, 0),
            )
        if self.count > 1 and self.equal_steps:  # rows collide: measure every step after all
            self._last = None
            batch = max(2, VERIFY_VALUES // max(1, int(np.prod(self.shape, dtype=np.int64)) // self.count))
            for start in range(0, self.count, batch):
                rows = rows_at(np.arange(start, min(start + batch, self.count)))
                self._steps(Block(0, start, rows), rows)
                self._last = (0, start + rows.shape[0] - 1, rows[-1])
        if self.count > 1:
            if self.squared_steps is not None:
                self.extremes.fold(0, np.sqrt(self.squared_steps))
            if self.extremes.at is None:  # rows of no values: every step is 0
                self.extremes.fold(0, np.zeros(self.count - 1))
            at, low, high = self.extremes.at, float(self.extremes.low), float(self.extremes.high)
            # Shift-invariant encodings (sinusoidal, rope) step by the same distance everywhere: naming
            # the pair with the smallest one would only name rounding noise.
            constant = bool(high - low <= 1e-9 * max(high, 1e-300))
            adjacency = Adjacency(low, (position_label(positions[at]), position_label(positions[at + 1])), constant, repeated)
        else:
            adjacency = Adjacency(None, None, None, repeated)
        return ArraySummary(self.shape, self.dtype, self.nbytes, *self._extremes(), adjacency)

    def _extremes(self) -> tuple[float | None, float | None]:
        lowest = None if self.lowest is None else self.lowest + 0.0  # −0.0 reads as 0.0
        highest = None if self.highest is None else self.highest + 0.0
        return lowest, highest

    def _repeated(self, rows_at: Callable[[np.ndarray], np.ndarray]) -> int:
        """Rows equal to an earlier row: only rows sharing a key can be, and those are compared in full.

        When many rows share the key of their sampled columns (relative's rows, clipped alike far from
        the diagonal), whole rows are keyed first, batch by batch, so that candidates stay few.
        """
        if self.count < 2:
            return 0
        width = max(1, int(np.prod(self.shape, dtype=np.int64)) // self.count)
        batch = max(2, VERIFY_VALUES // width)
        if self.count >= PROGRESS_KEYS:  # a second or more: the shares and the scan are shown
            with task("collisions", total=shares(self.count) + -(-self.count // SCAN_KEYS)) as bar:
                candidates, starts = shared_keys(self.hashes, bar.advance)
        else:
            candidates, starts = shared_keys(self.hashes)
        if candidates.size > max(batch, self.count // 8):
            del candidates, starts
            for begin in range(0, self.count, batch):  # the sampled keys are not needed any more
                self.hashes[begin : begin + batch] = row_keys(rows_at(np.arange(begin, min(begin + batch, self.count))))
            candidates, starts = shared_keys(self.hashes)
        repeated, begin = 0, 0
        while begin < candidates.size:
            # Whole groups of equal keys, about ``batch`` rows at a time.
            cut = int(np.searchsorted(starts, begin + batch, side="left"))
            end = int(starts[cut]) if cut < starts.size else candidates.size
            end = end if end > begin else (int(starts[cut + 1]) if cut + 1 < starts.size else candidates.size)
            repeated += collisions(rows_at(np.sort(candidates[begin:end]))).repeated
            begin = end
        return repeated


class StepExtremes:
    """The smallest adjacent step (the first, where several are smallest) and the largest, folded in
    from steps that come in any order; a NaN step is the smallest and the largest, as ``np.argmin``
    and ``np.max`` over all of them would make it."""

    def __init__(self) -> None:
        self.at: int | None = None
        self.low = self.high = np.float64(np.nan)

    def fold(self, offset: int, steps: np.ndarray) -> None:
        """Steps ``offset``, ``offset + 1``, …"""
        if not steps.size:
            return
        at = int(np.argmin(steps))
        low, index = steps[at], offset + at
        if self.at is None:
            self.at, self.low, self.high = index, low, np.max(steps)
            return
        if _before(low, index, self.low, self.at):
            self.at, self.low = index, low
        self.high = np.maximum(self.high, np.max(steps))


def _before(value: float, index: int, best: float, best_index: int) -> bool:
    """Whether step ``value`` at ``index`` comes before the smallest so far in ``np.argmin``'s order."""
    if np.isnan(best):
        return bool(np.isnan(value)) and index < best_index
    if np.isnan(value):
        return True
    return bool(value < best or (value == best and index < best_index))


#: Bytes per position of the keys the summary keeps (32-bit: see :func:`shared_keys`).
KEY_BYTES = 4
#: Keys read at once when the keys are scanned (a few MiB of temporaries).
SCAN_KEYS = 1 << 20
#: Keys per share of :func:`shared_keys`'s sort: the keys are sorted a share at a time.
SHARE_KEYS = 1 << 21
#: At most this many shares (passes over the keys).
MAX_SHARES = 16
#: From this many keys on, finding the repeating ones may take a second: it shows progress.
PROGRESS_KEYS = 1 << 23
#: Bytes per candidate row while candidates are grouped (ids, keys, order, group starts).
CANDIDATE_BYTES = 40


def row_keys(rows: np.ndarray) -> np.ndarray:
    """A 32-bit key per row: the low half of :func:`~pecli.analysis.structure.row_hashes` (whose last
    step, MurmurHash3's finaliser, mixes every bit into the low ones); equal rows have equal keys."""
    return row_hashes(rows).astype(np.uint32)


def table_bits(count: int) -> int:
    """Top bits of a key that :func:`shared_keys`'s table of repeating keys is indexed by: about four
    entries a key, at most 2^24 (16 MiB)."""
    return min(24, max(10, (max(count, 1) - 1).bit_length() + 2))


def shares(count: int) -> int:
    """Shares (a power of two) :func:`shared_keys` sorts ``count`` keys in: about :data:`SHARE_KEYS` each."""
    wanted = min(MAX_SHARES, -(-count // SHARE_KEYS))
    return 1 << max(0, (wanted - 1).bit_length())


def expected_false_candidates(count: int) -> float:
    """Rows expected to share a 32-bit key with another row although no row repeats: each of the
    N(N − 1)/2 pairs agrees with probability 2^-32, so about N²/2^32 rows (two per pair) — 65,536 at
    N = 2^24 (0.4 %), 1,048,576 at 2^26 (1.6 %)."""
    return count * (count - 1) / 2.0**32


def finish_bytes(count: int) -> int:
    """Bytes :meth:`StreamingSummary.finish` adds for ``count`` positions when few rows repeat: one
    share of the keys gathered, then sorted in one piece, and its equal-neighbour mask (9 bytes a key
    of a share), the scan's temporaries and table (:func:`table_bits`), and the candidates expected by chance (:func:`expected_false_candidates`). Rows that
    do repeat (float16 outputs) add :data:`CANDIDATE_BYTES` each."""
    share = -(-count // shares(count))
    scan = min(count, SCAN_KEYS) * 24 + (1 << table_bits(count))
    return share * (2 * KEY_BYTES + 1) + scan + int(expected_false_candidates(count) * CANDIDATE_BYTES)


def shared_keys(keys: np.ndarray, advance: Callable[[], Any] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the rows whose key another row shares, grouped by key (each group in row order),
    and where each group starts.

    The keys are not copied whole: they are split by their top bits into :func:`shares` shares, each
    gathered and sorted on its own to find the keys that repeat; then one scan over the keys finds the
    rows holding them. With 32-bit keys, rows share a key by chance about N²/2^32 times
    (:func:`expected_false_candidates`); every candidate is then compared in full, so the count stays
    exact and chance costs only the time to recompute those rows. ``advance()`` is called after each
    share and each chunk of the scan (for a progress bar).
    """
    advance = advance or (lambda: None)
    repeating = _repeating_keys(keys, advance)
    if not repeating.size:
        for _ in range(0, keys.size, SCAN_KEYS):  # no scan needed: its share of the progress is done
            advance()
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    # A table of the repeating keys' top bits rules out almost every row at the cost of one lookup;
    # the few left are looked up among the repeating keys themselves.
    bits = table_bits(keys.size)
    shift = np.uint32(32 - bits)
    table = np.zeros(1 << bits, dtype=bool)
    table[repeating >> shift] = True
    found = []
    for start in range(0, keys.size, SCAN_KEYS):
        chunk = keys[start : start + SCAN_KEYS]
        maybe = np.flatnonzero(table[chunk >> shift])
        slot = np.minimum(np.searchsorted(repeating, chunk[maybe]), repeating.size - 1)
        found.append(start + maybe[repeating[slot] == chunk[maybe]])
        advance()
    rows = np.concatenate(found)
    order = rows[np.argsort(keys[rows], kind="stable")]
    grouped = keys[order]
    return order, np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])


def _repeating_keys(keys: np.ndarray, advance: Callable[[], Any]) -> np.ndarray:
    """The keys that occur more than once, sorted, one share of the key space at a time."""
    count = shares(keys.size)
    shift = np.uint32(32 - (count.bit_length() - 1)) if count > 1 else None
    found = []
    for share in range(count):
        if shift is None:
            part = np.sort(keys)
        else:
            part = np.concatenate([chunk[(chunk >> shift) == share]
                                   for chunk in (keys[s : s + SCAN_KEYS] for s in range(0, keys.size, SCAN_KEYS))])
            part.sort()
        same = part[1:] == part[:-1]
        if same.any():
            repeated = part[1:][same]  # sorted: each repeating key once, without np.unique (it loads numpy.ma)
            found.append(repeated[np.r_[True, repeated[1:] != repeated[:-1]]])
        advance()
    return np.concatenate(found) if found else np.zeros(0, dtype=keys.dtype)
