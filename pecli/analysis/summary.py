"""The quick facts ``pecli encode`` reports about the array it computed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from pecli.analysis.structure import collisions, row_hashes
from pecli.dtypes import numpy_dtype
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


def steps_are_equal(scheme: Scheme, positions: np.ndarray, dtype: str) -> bool:
    """Whether every adjacent step ``||E_{p+1} − E_p||`` of the output is the same by construction.

    A shift-isometric scheme (``E_{p+1} = R E_p`` with R orthogonal, or integer's ``E_p = c·p·1``) at
    consecutive positions steps by one distance everywhere; stored in float32 or float64 the steps
    differ only by the rounding of the values (below 1e-7 relative), so measuring each one would only
    measure that rounding. In float16 and bfloat16 the rounding is coarse enough to matter, and each
    step is measured.
    """
    return (
        positions.ndim == 1 and positions.size > 1 and scheme.shift_isometric and scheme.main_key == "encoding"
        and numpy_dtype(dtype).itemsize >= 4 and positions[-1] - positions[0] == positions.size - 1
        and bool(np.all(np.diff(positions) == 1))
    )


class StreamingSummary:
    """The :class:`ArraySummary` of an encoding's main array, from its blocks as they are written.

    Each :class:`~pecli.schemes.base.Block` (rows of one segment, already in the output dtype) updates
    the value range, the squared steps ``||E_{p+1} − E_p||²`` between adjacent position rows and a
    64-bit hash of a few columns of each row; nothing holds more than a block plus O(L) numbers.
    Rows whose hashes agree are then compared in full (recomputed with ``rows_at``), so the collision
    count is exact. For a main array with one segment every figure equals :func:`summarize`'s;
    with several (alibi's heads) the steps are summed head by head, equal up to rounding.

    Parameters
    ----------
    count:
        Number of positions (rows).
    shape, dtype, nbytes:
        What the summary reports of the main array (``nbytes`` in the output dtype).
    equal_steps:
        Every adjacent step is the same by construction (:func:`steps_are_equal`): the steps are not
        summed block by block; the summary states the first one, unless rows collide, when they are
        all measured after all.
    """

    def __init__(self, count: int, shape: tuple[int, ...], dtype: str, nbytes: int, *, equal_steps: bool = False) -> None:
        self.count, self.shape, self.dtype, self.nbytes = count, tuple(shape), dtype, nbytes
        self.equal_steps = equal_steps
        self.squared_steps = np.zeros(max(count - 1, 0))
        self.hashes = np.zeros(count, dtype=np.uint64)
        self.lowest: float | None = None
        self.highest: float | None = None
        self.non_finite = 0
        self._last: tuple[int, int, np.ndarray] | None = None  # (segment, row, values) of the last row seen

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
            self.squared_steps[block.start - 1] += np.add.reduce(np.square(boundary), axis=1)[0]
        # A few rows at a time, so that the float64 differences stay in cache; each row's sum is
        # np.linalg.norm's (a pairwise sum along the row), whatever the number of rows.
        step = max(1, STEP_VALUES // rows.shape[1])
        for first in range(0, rows.shape[0] - 1, step):
            last = min(first + step, rows.shape[0] - 1)
            # widened to float64 by the subtraction itself (exact, as a copy first would be): one pass fewer
            differences = np.subtract(rows[first + 1 : last + 1], rows[first:last], dtype=np.float64)
            np.square(differences, out=differences)
            self.squared_steps[block.start + first : block.start + last] += np.add.reduce(differences, axis=1)

    def _hash(self, rows: np.ndarray) -> np.ndarray:
        return row_hashes(rows[:, :: max(1, rows.shape[1] // HASHED_COLUMNS)])

    def finish(self, positions: np.ndarray, rows_at: Callable[[np.ndarray], np.ndarray]) -> ArraySummary:
        """The summary, once every block was added; ``rows_at(index)`` recomputes position rows in the
        output dtype for the rows whose hashes collide."""
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
            steps = np.sqrt(self.squared_steps)
            at = int(np.argmin(steps))
            # Shift-invariant encodings (sinusoidal, rope) step by the same distance everywhere: naming
            # the pair with the smallest one would only name rounding noise.
            constant = bool(np.ptp(steps) <= 1e-9 * max(float(steps.max()), 1e-300))
            adjacency = Adjacency(float(steps[at]), (position_label(positions[at]), position_label(positions[at + 1])), constant, repeated)
        else:
            adjacency = Adjacency(None, None, None, repeated)
        return ArraySummary(self.shape, self.dtype, self.nbytes, *self._extremes(), adjacency)

    def _extremes(self) -> tuple[float | None, float | None]:
        lowest = None if self.lowest is None else self.lowest + 0.0  # −0.0 reads as 0.0
        highest = None if self.highest is None else self.highest + 0.0
        return lowest, highest

    def _repeated(self, rows_at: Callable[[np.ndarray], np.ndarray]) -> int:
        """Rows equal to an earlier row: only rows sharing a hash can be, and those are compared in full.

        When many rows share the hash of their sampled columns (relative's rows, clipped alike far from
        the diagonal), whole rows are hashed first, batch by batch, so that candidates stay few.
        """
        if self.count < 2:
            return 0
        width = max(1, int(np.prod(self.shape, dtype=np.int64)) // self.count)
        batch = max(2, VERIFY_VALUES // width)
        candidates, starts = _shared_hashes(self.hashes)
        if candidates.size > max(batch, self.count // 8):
            whole = np.concatenate([
                row_hashes(rows_at(np.arange(begin, min(begin + batch, self.count))))
                for begin in range(0, self.count, batch)
            ])
            candidates, starts = _shared_hashes(whole)
        repeated, begin = 0, 0
        while begin < candidates.size:
            # Whole groups of equal hashes, about ``batch`` rows at a time.
            cut = int(np.searchsorted(starts, begin + batch, side="left"))
            end = int(starts[cut]) if cut < starts.size else candidates.size
            end = end if end > begin else (int(starts[cut + 1]) if cut + 1 < starts.size else candidates.size)
            repeated += collisions(rows_at(np.sort(candidates[begin:end]))).repeated
            begin = end
        return repeated


def _shared_hashes(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the rows whose hash another row shares, grouped by hash (each group in row order),
    and where each group starts. The hashes are sorted, not their indices: the rows are only looked
    up when some hash repeats, which it seldom does."""
    ordered = np.sort(hashes)
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    rows = np.flatnonzero(np.isin(hashes, ordered[1:][same]))
    order = rows[np.argsort(hashes[rows], kind="stable")]
    grouped = hashes[order]
    return order, np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
