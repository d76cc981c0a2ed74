"""One pass over an encoding's rows, block by block, that every property of ``check`` reads from.

The properties of a vector scheme all look at the same rows ``E_0 … E_{L−1}``: uniqueness hashes them,
distinguishability measures the steps between neighbours, extrapolation the value ranges, precision
rounds them, relativity multiplies them into scores. Instead of each property reading (and first
encoding) the whole (L, d) array, each states what it computes from the rows as
:class:`Accumulator` records; :func:`shared_pass` encodes every block once and hands it to all of
them, so that ``check all`` costs one encoding plus each property's own arithmetic, in memory
O(L) numbers plus a block.

Rows are encoded block by block and dropped (:func:`streams`) for the schemes whose distances depend
on ``q − p`` only, the ones whose properties never need every pair of rows at once; other schemes'
rows are the whole remembered encoding (:func:`~pecli.analysis.structure.vectors`) read block by block.
A row needed again later (to verify a collision, to name an example) is encoded again on its own:
``encode`` is per position, so the values are the same, bit for bit.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from typing import Any, Hashable, Iterator, Sequence

import numpy as np

from pecli.analysis.structure import (
    Collisions, builds_a_table, chunked_task, collisions_of, has_vectors, is_shift_isometric_kind,
    one_blas_thread, row_blocks, row_hashes, rows_at, vectors,
)
from pecli.dtypes import cast
from pecli.schemes.base import Scheme


def streams(scheme: Scheme) -> bool:
    """Whether a scheme's rows are encoded block by block and never held whole: a 1-D vector scheme whose
    distances depend on ``q − p`` only (sinusoidal, rotary, integer), so that no property needs all pairs."""
    return has_vectors(scheme) and not scheme.has_cells and is_shift_isometric_kind(scheme) and not builds_a_table(scheme)


@dataclass(frozen=True)
class Block:
    """Rows ``start … start + n − 1`` of an encoding (float64, read-only) and the row before them."""

    start: int
    values: np.ndarray
    #: Row ``start − 1``, or None for the first block.
    before: np.ndarray | None

    @property
    def stop(self) -> int:
        return self.start + self.values.shape[0]


class Accumulator:
    """Something computed from every row of an encoding, one block at a time, in row order.

    ``key`` says what it computes: two accumulators with equal keys compute the same thing, and a pass
    runs one of them. :meth:`add` takes each block; :meth:`result` is read after the last one.
    """

    key: Hashable = None
    #: Rough work per value of a block, against a hash's or a norm's (1): the pass shares the
    #: accumulators between two threads by it (:func:`lanes`).
    cost: float = 1.0

    def add(self, block: Block) -> None:
        raise NotImplementedError

    def result(self) -> Any:
        raise NotImplementedError


class RowHashes(Accumulator):
    """:func:`~pecli.analysis.structure.row_hashes` of every row cast to ``dtype`` (a few of its columns)."""

    def __init__(self, length: int, dtype: str = "float64") -> None:
        self.key = ("hashes", dtype)
        self.dtype = dtype
        self.hashes = np.empty(length, dtype=np.uint64)

    def add(self, block: Block) -> None:
        self.hashes[block.start : block.stop] = sampled_hashes(cast(block.values, self.dtype))

    def result(self) -> np.ndarray:
        return self.hashes


#: Columns of each row that are hashed at most (every k-th one): rows equal in them are compared in full.
HASHED_COLUMNS = 16


def sampled_hashes(rows: np.ndarray) -> np.ndarray:
    """Row hashes of every k-th column, at most :data:`HASHED_COLUMNS` of them: rows whose hashes
    differ are different; rows whose hashes agree are then compared in full
    (:func:`~pecli.analysis.structure.group_rows_of`), so a shared hash costs time, never a wrong count."""
    return row_hashes(rows[:, :: max(1, rows.shape[1] // HASHED_COLUMNS)])


@dataclass(frozen=True)
class Extent:
    """The smallest and largest value of the rows, and whether every value is 0 or 1."""

    low: float
    high: float
    binary: bool

    def norm_bound(self, width: int) -> float:
        """A bound no row's norm exceeds: ``√width · max |value|`` (with room for the rounding of a norm)."""
        return float(np.sqrt(width)) * max(abs(self.low), abs(self.high)) * (1 + 1e-9)


class Extents(Accumulator):
    """:class:`Extent` of the rows."""

    key = ("extent",)
    cost = 0.35  # two reductions (measured against a hash's at 2^22 × 128: 0.12 s to 0.34)

    def __init__(self) -> None:
        self.low, self.high, self.binary = np.inf, -np.inf, True

    def add(self, block: Block) -> None:
        rows = block.values
        if not rows.size:
            return
        self.low = min(self.low, float(rows.min()))
        self.high = max(self.high, float(rows.max()))
        if self.binary:
            self.binary = bool(np.all((rows == 0) | (rows == 1)))

    def result(self) -> Extent:
        return Extent(self.low, self.high, self.binary)


class MaxNorm(Accumulator):
    """The largest row norm ``max_p ||E_p||``, as ``np.linalg.norm`` computes each."""

    key = ("max_norm",)

    def __init__(self) -> None:
        self.squared = 0.0

    def add(self, block: Block) -> None:
        if block.values.size:
            self.squared = max(self.squared, float(squared_norms(block.values).max()))

    def result(self) -> float:
        # sqrt is correctly rounded and monotone: the root of the largest square is the largest norm
        return float(np.sqrt(self.squared))


def squared_norms(rows: np.ndarray, minus: np.ndarray | None = None, scratch: np.ndarray | None = None) -> np.ndarray:
    """``||row − minus||²`` of every row, summed along the row as ``np.linalg.norm`` sums it (so that
    their square roots are its values, bit for bit). ``scratch``: an array of ``rows``' shape to hold
    the differences (a pass reuses one rather than making one per block)."""
    if minus is None:
        return np.add.reduce(np.square(rows, out=scratch), axis=1)
    difference = np.subtract(rows, minus, out=scratch)
    np.square(difference, out=difference)
    return np.add.reduce(difference, axis=1)


def norms(rows: np.ndarray, minus: np.ndarray | None = None, scratch: np.ndarray | None = None) -> np.ndarray:
    """``||row − minus||`` of every row: ``np.linalg.norm(rows − minus, axis=1)``, bit for bit."""
    return np.sqrt(squared_norms(rows, minus, scratch))


class Scratch:
    """A float64 array for an accumulator's temporaries, made at the first block and reused for the
    next ones (views of its first rows): a fresh array of a block's size each time costs about as much
    as the arithmetic on it (the pages written anew)."""

    def __init__(self) -> None:
        self.array: np.ndarray | None = None

    def __call__(self, shape: tuple[int, ...]) -> np.ndarray:
        if self.array is None or self.array.shape[0] < shape[0] or self.array.shape[1:] != tuple(shape[1:]):
            self.array = np.empty(shape)
        return self.array[: shape[0]]


class FromOrigin(Accumulator):
    """``f(Δ) = ||E_Δ − E_0||`` for Δ = 0 … L − 1 (every distance of a shift-isometric scheme)."""

    key = ("from_origin",)
    cost = 1.4  # a difference, its squares and their sums (0.48 s at 2^22 × 128, a hash 0.34)

    def __init__(self, length: int) -> None:
        self.out = np.empty(length)
        self.origin: np.ndarray | None = None
        self.scratch = Scratch()

    def add(self, block: Block) -> None:
        if self.origin is None:
            self.origin = block.values[0].copy()
        self.out[block.start : block.stop] = norms(block.values, self.origin, self.scratch(block.values.shape))

    def result(self) -> np.ndarray:
        self.scratch = Scratch()
        return self.out


class Steps(Accumulator):
    """``||E_{p+1} − E_p||`` for p = 0 … L − 2."""

    key = ("steps",)
    cost = 1.3  # a difference, its squares and their sums (measured against a hash's: 0.43 s to 0.34 at 2^22)

    def __init__(self, length: int) -> None:
        self.out = np.empty(max(length - 1, 0))
        self.scratch = Scratch()

    def add(self, block: Block) -> None:
        rows = block.values
        if block.before is not None:
            self.out[block.start - 1] = norms(rows[:1], block.before)[0]
        if rows.shape[0] > 1:
            self.out[block.start : block.stop - 1] = norms(rows[1:], rows[:-1], self.scratch(rows[1:].shape))

    def result(self) -> np.ndarray:
        self.scratch = Scratch()
        return self.out


class EncodingRows:
    """The float64 rows ``E_0 … E_{L−1}`` of a vector scheme, and what accumulators computed from them.

    Rows are read by index (``rows[slice or indices]``) or measured in one pass
    (:meth:`measure`); results are kept, so that the properties run in one ``check`` share them.
    """

    def __init__(self, scheme: Scheme, length: int, *, stream: bool | None = None) -> None:
        self.scheme, self.length = scheme, int(length)
        stream = streams(scheme) if stream is None else stream
        self.whole = None if stream else vectors(scheme, self.length)
        self.width = int(self[0:1].shape[1]) if self.length else int(scheme.width)
        self._results: dict[Hashable, Any] = {}
        self._collisions: dict[str, Collisions] = {}

    @classmethod
    def of_table(cls, scheme: Scheme, table: np.ndarray) -> EncodingRows:
        """Rows held already (a bias scheme's rows per relative distance), measured like an encoding's."""
        rows = cls.__new__(cls)
        rows.scheme, rows.length, rows.whole = scheme, int(table.shape[0]), table
        rows.width = int(table.shape[1]) if table.ndim == 2 else 1
        rows._results, rows._collisions = {}, {}
        return rows

    @property
    def shape(self) -> tuple[int, int]:
        return self.length, self.width

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: slice | np.ndarray | int) -> np.ndarray:
        if self.whole is not None:
            return self.whole[index]
        if isinstance(index, slice):
            start, stop, step = index.indices(self.length)
            positions = self.scheme.sequence_positions(start, stop)[::step]
        else:
            positions = np.arange(self.length, dtype=np.int64)[index]
        rows = rows_at(self.scheme, np.atleast_1d(positions))
        return rows[0] if np.ndim(index) == 0 and not isinstance(index, slice) else rows

    def blocks(self, label: str = "encode") -> Iterator[Block]:
        """Every row in order, :func:`~pecli.analysis.structure.block_rows` rows at a time."""
        parts = list(row_blocks(self.length, self.width))
        before = None
        with chunked_task(label, len(parts)) as bar:
            for part, values in self._encoded(parts):
                if self.whole is None:
                    values.setflags(write=False)
                yield Block(part.start, values, before)
                before = values[-1]
                bar.advance()

    def _encoded(self, parts: list[slice]) -> Iterator[tuple[slice, np.ndarray]]:
        """The rows of each of ``parts``; encoded rows one block ahead, on a second thread, while the
        accumulators take the block before (NumPy's cos, sin and products let the other thread run):
        the same rows, bit for bit — ``encode`` is per position — at the cost of one block more."""
        if self.whole is not None or len(parts) < 2:
            yield from ((part, self[part]) for part in parts)
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="pecli-encode") as pool:
            pending = pool.submit(self.__getitem__, parts[0])
            for number, part in enumerate(parts):
                values = pending.result()
                if number + 1 < len(parts):
                    pending = pool.submit(self.__getitem__, parts[number + 1])
                yield part, values

    def measure(self, *accumulators: Accumulator, label: str = "encode") -> list[Any]:
        """The results of ``accumulators``: those measured already are kept, the others are measured
        together in one pass over the rows."""
        todo: dict[Hashable, Accumulator] = {}
        for accumulator in accumulators:
            if accumulator.key not in self._results:
                todo.setdefault(accumulator.key, accumulator)
        if todo and self.length:
            shared = lanes(list(todo.values())) if self.whole is None else [list(todo.values())]
            with one_blas_thread():  # the products of a block (relativity's scores) are small and many
                try:
                    if len(shared) == 1:
                        for block in self.blocks(label):
                            _take(shared[0], block)
                    else:
                        self._measure_on_two_threads(shared, label)
                finally:
                    _release_blocks()
        for key, accumulator in todo.items():
            self._results[key] = accumulator.result()
        return [self._results[accumulator.key] for accumulator in accumulators]

    def _measure_on_two_threads(self, shared: list[list[Accumulator]], label: str) -> None:
        """Each block to the accumulators of ``shared[0]`` on this thread and to those of ``shared[1]`` on
        another, at once (NumPy releases the GIL in their arithmetic); each accumulator still takes the
        blocks in order, one at a time, so its result is the same. The other thread may lag behind this
        one by up to :data:`LANE_LAG` blocks, held until it is done with them: an accumulator that works
        in bursts (relativity's scores, a product every few dozen blocks) would otherwise leave the other
        thread idle through each burst and keep this one waiting between them."""
        from collections import deque
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="pecli-measure") as pool:
            pending: deque = deque()
            try:
                for block in self.blocks(label):
                    while len(pending) >= LANE_LAG:
                        pending.popleft().result()
                    pending.append(pool.submit(_take, shared[1], block))
                    _take(shared[0], block)
            finally:
                while pending:
                    pending.popleft().result()

    def collisions(self, dtype: str = "float64") -> Collisions:
        """Exact collisions among the rows cast to ``dtype`` (hashed in the pass, compared in full where
        hashes agree)."""
        if dtype not in self._collisions:
            hashes, = self.measure(RowHashes(self.length, dtype))
            self._collisions[dtype] = collisions_of(self.length, lambda rows: cast(self[rows], dtype), self.width, hashes)
        return self._collisions[dtype]


def _release_blocks() -> None:
    """Free the memory of the blocks the pass's rows were made in (:func:`rows_at` takes them from the
    pool of :mod:`pecli.schemes.encoded`, which keeps them for the next block): once the pass is over
    no block is made again soon."""
    from pecli.schemes.encoded import BLOCKS

    BLOCKS.clear()


def _take(accumulators: list[Accumulator], block: Block) -> None:
    for accumulator in accumulators:
        accumulator.add(block)


def lanes(accumulators: list[Accumulator]) -> list[list[Accumulator]]:
    """The accumulators in one list, or shared between two of about equal :attr:`Accumulator.cost`
    (the costliest first, each to the lighter list) when that leaves neither list light."""
    if len(accumulators) < 2:
        return [accumulators]
    shared: list[list[Accumulator]] = [[], []]
    loads = [0.0, 0.0]
    for accumulator in sorted(accumulators, key=lambda a: -a.cost):
        lighter = 0 if loads[0] <= loads[1] else 1
        shared[lighter].append(accumulator)
        loads[lighter] += accumulator.cost
    if min(loads) < MIN_LANE_COST:  # too little work for a second thread to be worth its hand-offs
        return [accumulators]
    return shared


#: Blocks the second thread of a pass may lag behind the first (:meth:`EncodingRows.measure`), each held
#: until it is done with it. Relativity forms its scores once every 31 or 32 blocks of rope d = 128 (a
#: product of its 130 queries with 64,527 keys, about 45 ms): the first thread gets that far ahead during
#: the blocks between, and the second one works through the product. Check all at 2^22 × 128: 8.9 s →
#: 7.3 s on two idle cores with 24 or 48 (the same). Wider rows have fewer rows a block and a product
#: every more blocks than this lag: there the lanes wait on each other as before.
LANE_LAG = 32

#: The least work (:attr:`Accumulator.cost`) each of two threads must get for :func:`lanes` to share.
MIN_LANE_COST = 2.0


_open: contextvars.ContextVar[EncodingRows | None] = contextvars.ContextVar("pecli_encoding_rows", default=None)


def encoding_rows(scheme: Scheme, length: int, *, stream: bool | None = None) -> EncodingRows:
    """The rows of ``scheme`` over 0 … length − 1: those of the pass :func:`shared_pass` opened when
    they are the same (another scheme object that encodes alike counts), else new ones, encoded block
    by block if ``stream`` (default: :func:`streams`), else remembered whole."""
    shared = _open.get()
    if shared is not None and shared.length == int(length) and same_encoding(shared.scheme, scheme):
        return shared
    return EncodingRows(scheme, length, stream=stream)


def same_encoding(one: Scheme, other: Scheme) -> bool:
    """Whether two schemes encode every position alike (:meth:`~pecli.schemes.base.Scheme.encoding_identity`)."""
    if one is other:
        return True
    try:
        return bool(one.encoding_identity() == other.encoding_identity())
    except (TypeError, ValueError):
        return False


@contextlib.contextmanager
def shared_pass(scheme: Scheme, length: int, accumulators: Sequence[Accumulator], label: str = "") -> Iterator[EncodingRows]:
    """Measure ``accumulators`` over the rows of ``scheme`` in one pass, and let every
    :func:`encoding_rows` of the same encoding and length inside read the results."""
    rows = encoding_rows(scheme, length)
    rows.measure(*accumulators, label=f"{label}encode")
    token = _open.set(rows)
    try:
        yield rows
    finally:
        _open.reset(token)
