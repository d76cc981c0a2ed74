"""The engine of ``pecli encode``: a scheme's arrays computed block by block, summarised, and streamed into
an ``.npy`` file or the members of an ``.npz`` archive, with the memory that takes known beforehand.

Library code (no command line): :class:`EncodeRun` is one scheme at some positions; :func:`write_npy`,
:func:`write_npz` and :meth:`EncodeRun.summarise` drive it; :func:`memory_needed` is its memory model.
Memory stays flat in the length up to 4 bytes per position (the summary's 32-bit row keys, and 40
bytes for each row that shares its key by chance: N²/2³² rows, 2.5 MiB at 2^24 positions, 640 MiB at
2^28, so the bound grows past about 2^26), plus 8 bytes a position for the ids when they are given
(``--positions``) rather than a range
(:func:`range_parts`), and 8 more for the steps of a main array in several segments (alibi's heads);
the summary's last step (:func:`~pecli.analysis.summary.finish_bytes`: one share of the keys, about
a byte a position at 2^24 positions and less beyond, a scan of fixed size) comes once the blocks are
gone. Blocks of about :data:`BLOCK_VALUES` values are computed, summarised and handed to a writer
thread (:mod:`pecli.io_stream`), and no output array is ever whole. Sinusoidal and rope rows are made
in the output dtype on both cores, the next block while one is summarised (:func:`ahead`), in blocks
from a pool (:data:`~pecli.schemes.encoded.BLOCKS`) emptied once the blocks are done.

A rotary scheme's ``cos`` and ``sin`` members are copied from the rows of its encoding as each block
is computed (:func:`~pecli.schemes.encoded.derived_from_main`), and written beside each other in the
archive, so cos and sin of every angle are evaluated once whatever the members asked for.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np

from pecli.dtypes import cast, numpy_dtype, storable
from pecli.io import sync_wanted, write_atomic
from pecli.progress import task
from pecli.schemes.base import Scheme
from pecli.schemes.frequencies import ANCHOR, FILL_BYTES, SHARED_VALUES
from pecli.schemes.parts import Block, Part
from pecli.schemes.positions import position_range

if TYPE_CHECKING:  # the summary (and the analyses it imports) loads when an encoding runs, the writer when it writes
    from pecli.analysis.summary import EncodeReport
    from pecli.io_stream import BlockWriter, ZipLayout

#: Peak memory over the main array when a scheme builds its arrays whole (--apply, schemes without
#: :meth:`~pecli.schemes.base.Scheme.parts` of their own): the float64 result, its cast copy, the other parts.
WORKING_COPIES = 4
#: Values computed at once: the rows of a block (at least one row) hold about this many values.
BLOCK_VALUES = 1 << 20
#: Bytes of a position id (int64), per coordinate, when the ids are made (see :func:`range_parts`).
ID_BYTES = 8
#: Bytes per value of the candidate rows the summary compares at once (recomputed, cast, widened, sorted).
VERIFY_BYTES_PER_VALUE = 48
#: Blocks of each member copied from the main array that are alive at once: the one being made and
#: the one being written; with the next block computed ahead (:func:`ahead`, which makes the copies
#: too), one more (:data:`AHEAD_BLOCKS`: made ahead, handed to the writer, written).
DERIVED_COPIES = 2
#: Progress of a written file is counted in MiB.
MIB = 1 << 20


def block_rows(row_values: int) -> int:
    """Rows per block: about :data:`BLOCK_VALUES` values, a multiple of the phasors' anchor when that many."""
    rows = max(1, BLOCK_VALUES // max(1, row_values))
    return rows - rows % ANCHOR if rows >= ANCHOR else rows


def rows_ahead(scheme: Scheme) -> bool:
    """Whether the scheme's next block is computed while the previous one is summarised and written (a
    scheme that makes its rows in the output dtype, a chunk at a time: ``rows_ahead``). Its blocks are
    then counted in the output dtype (:data:`AHEAD_BLOCKS` of them), with the chunks being filled
    (:data:`~pecli.schemes.frequencies.FILL_BYTES`) and the summary's keying of a block
    (:func:`key_bytes_per_row`)."""
    return bool(getattr(scheme, "rows_ahead", False))


#: Blocks of the main array alive at once when the next is computed ahead (:func:`ahead`): the one being
#: made, the one being summarised, the one being written (or whose last row the summary keeps).
AHEAD_BLOCKS = 3


def key_bytes_per_row(row_values: int, itemsize: int) -> int:
    """Bytes per row of a block while the summary keys it (:func:`~pecli.analysis.summary.row_keys` of
    its sampled columns): each column copied (``itemsize``), masked (1) and widened to a 64-bit word
    with a shifted temporary (16); the row's sum and key (16)."""
    from pecli.analysis.summary import HASHED_COLUMNS

    columns = len(range(0, row_values, max(1, row_values // HASHED_COLUMNS)))
    return columns * (itemsize + 17) + 16


def made_copies(values: np.ndarray, copies: dict[str, Callable[[np.ndarray], np.ndarray]]) -> dict[str, np.ndarray]:
    """``copy(values)`` for each copy by name; from two copies on, the first on the thread that fills the
    second half of a block's rows (idle between blocks: :func:`~pecli.schemes.frequencies.fill_rows`),
    so that a block's copies (rope's cos and sin: two writes of the block's size) take both cores."""
    if len(copies) < 2 or values.size < SHARED_VALUES:
        return {name: copy(values) for name, copy in copies.items()}
    from pecli.schemes.frequencies import helper_thread

    (first, copy), *rest = copies.items()
    elsewhere = helper_thread().submit(copy, values)
    try:
        out = {name: copy(values) for name, copy in rest}
    finally:
        out[first] = elsewhere.result()
    return out


def ahead(blocks: Iterator[Block]) -> Iterator[Block]:
    """The blocks of ``blocks``, each computed on a thread while the caller takes the one before (the
    blocks' cos, sin and products release the GIL): one block more alive, the same values."""
    from concurrent.futures import ThreadPoolExecutor

    end = object()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="pecli-ahead") as pool:
        pending = pool.submit(next, blocks, end)
        while True:
            block = pending.result()
            if block is end:
                return
            pending = pool.submit(next, blocks, end)
            yield block


@contextlib.contextmanager
def released_blocks() -> Iterator[None]:
    """Free the pool's idle blocks (:data:`~pecli.schemes.encoded.BLOCKS`) when the blocks are done:
    the summary's last step, which comes after them, must not find them still held."""
    from pecli.schemes.encoded import BLOCKS

    try:
        yield
    finally:
        BLOCKS.clear()


def streamed(scheme: Scheme) -> bool:
    """Whether the scheme produces its arrays block by block (its own :meth:`Scheme.parts`)."""
    return type(scheme).parts is not Scheme.parts


def memory_needed(scheme: Scheme, count: int, dtype: str = "float64", wanted: list[str] | None = None, *,
                  ids_made: bool = True) -> int:
    """Bytes an :class:`EncodeRun` holds at its peak for ``count`` positions, writing the parts ``wanted``
    (None: the default members); ``ids_made``: the position ids are an array (not a ``range``).

    Streamed: what is held per position for the whole run (:func:`position_bytes`), the tables a
    scheme draws whole (learned's), plus the larger of a block — the scheme's
    ``block_bytes_per_value`` per value of the main array, and :data:`DERIVED_COPIES` blocks of each
    member copied from it (rope's cos and sin) — and the summary's last step
    (:func:`~pecli.analysis.summary.finish_bytes` and a batch of candidate rows), which never coincide;
    otherwise the whole arrays (:data:`WORKING_COPIES`).
    """
    if not streamed(scheme):
        return scheme.estimate_bytes(count) * WORKING_COPIES
    shape = scheme.main_shape(count)
    main_bytes = int(np.prod(shape, dtype=np.float64)) * 8
    # A block's rows: a query row of one head for a (heads, L, L) bias, else the array past its first axis.
    row_values = shape[-1] if scheme.main_key == "bias" else int(np.prod(shape[1:], dtype=np.float64))
    rows = min(block_rows(row_values), max(count, 1))
    derived = 0
    from pecli.schemes.encoded import copies_cos_sin

    if copies_cos_sin(scheme) and wanted != [scheme.main_key]:
        rotated = int(getattr(scheme, "rotated_dim", row_values))
        members = 2 if wanted is None else len({"cos", "sin"} & set(wanted))
        copies = AHEAD_BLOCKS if rows_ahead(scheme) else DERIVED_COPIES
        derived = members * copies * rows * rotated * storable_itemsize(dtype)
    tables = scheme.estimate_bytes(count) - main_bytes
    from pecli.analysis.summary import CANDIDATE_BYTES, VERIFY_VALUES, finish_bytes

    finish = finish_bytes(count) + VERIFY_VALUES * VERIFY_BYTES_PER_VALUE
    if storable_itemsize(dtype) < 4:  # float16 rows do repeat: any of them may be a candidate
        finish += count * CANDIDATE_BYTES
    if rows_ahead(scheme):  # rows made in the output dtype: three blocks, the chunks being filled, the summary's keys
        itemsize = storable_itemsize(dtype)
        block = AHEAD_BLOCKS * rows * row_values * itemsize + FILL_BYTES + rows * key_bytes_per_row(row_values, itemsize)
        block += ANCHOR * row_values * 8  # angle addition's steps exp(ikθ), k < ANCHOR: 16 B a pair, kept
    else:
        block = rows * row_values * scheme.block_bytes_per_value
    working = max(block + derived, finish)
    segments = shape[0] if scheme.main_key == "bias" else 1
    # An n-D scheme's cells are among its tables (estimate_bytes); 1-D ids are made unless a range.
    ids = 1 if ids_made and not scheme.has_cells else 0
    return working + position_bytes(count, segments, ids) + tables


def position_bytes(count: int, segments: int = 1, rank: int = 1) -> int:
    """Bytes held per position for the whole run: the summary's keys (and its summed squared steps
    with several ``segments``), and ``rank`` int64 ids (0: the ids are a range, never made)."""
    from pecli.analysis.summary import StreamingSummary

    return StreamingSummary.bytes_needed(count, segments) + count * ID_BYTES * rank


#: Positions made at once when the ids are a range (:func:`range_parts`).
RANGE_CHUNK = 1 << 18


def ranged(scheme: Scheme) -> bool:
    """Whether the scheme's parts can be made a stretch of positions at a time (:func:`range_parts`):
    streamed, one row per position of rank 1, no prefix rows, each row depending on its own position
    alone (the encodings of vector schemes; not the (L, L) arrays of relative schemes)."""
    return (streamed(scheme) and scheme.position_rank == 1 and not scheme.has_cells and scheme.main_key == "encoding"
            and not scheme.prefix_rows)


def range_parts(ids: range, make: Callable[[np.ndarray], list[Part]]) -> list[Part]:
    """The parts ``make(positions)`` gives at the positions ``ids``, made :data:`RANGE_CHUNK` positions
    at a time, so that no array of ids (8 bytes a position) is ever whole.

    The parts whose first axis is the positions (those whose length follows the number of positions)
    come chunk after chunk in blocks of the rows asked for (chunks are whole blocks, so the blocks are
    those the whole ids give, value for value: a row depends on its own position only, see
    :func:`ranged`); the other parts (rope's inv_freq) are the first chunk's. The first and last ids
    are made first, so that a scheme refuses its positions (learned's table) before any work.
    """
    ends, first = make(np.array([ids[0], ids[-1]], dtype=np.int64)), make(np.array([ids[0]], dtype=np.int64))
    count = len(ids)

    def at(index: np.ndarray) -> np.ndarray:
        return ids.start + np.asarray(index, dtype=np.int64) * ids.step

    def chunked(i: int, template: Part) -> Part:
        def blocks(rows: int) -> Iterator[Block]:
            chunk = max(rows, RANGE_CHUNK // rows * rows)
            for start in range(0, count, chunk):
                for block in make(at(np.arange(start, min(start + chunk, count))))[i].blocks(rows):
                    yield Block(block.segment, start + block.start, block.values)

        def rows_at(index: np.ndarray) -> np.ndarray:
            return make(at(index))[i].rows_at(np.arange(len(index)))

        shape = (count, *template.shape[1:])
        return Part(template.name, shape, blocks, max(1, int(np.prod(shape[1:], dtype=np.int64))),
                    rows_at if template.rows_at is not None else None)

    return [chunked(i, part) if part.shape[:1] != one.shape[:1] else one
            for i, (part, one) in enumerate(zip(ends, first))]


def _ids(positions: Any) -> np.ndarray:
    """Position ids as an array (a ``range`` made)."""
    if isinstance(positions, range):
        return np.arange(positions.start, positions.stop, positions.step, dtype=np.int64)
    return np.asarray(positions)


def storable_itemsize(dtype: str) -> int:
    """Bytes per value as written (bfloat16 is stored as float32)."""
    return 4 if dtype == "bfloat16" else numpy_dtype(dtype).itemsize


def default_members(scheme: Scheme, names: list[str]) -> list[str]:
    """The members an archive holds when none are named: every part, except those
    :func:`pecli.encode`'s result makes on request (:func:`~pecli.schemes.encoded.made_on_request`:
    rope's interleaved ``encoding``; its ``cos`` and ``sin`` are what HuggingFace's rotary modules
    return and a user loads)."""
    from pecli.schemes.encoded import made_on_request

    later = made_on_request(scheme)
    return [name for name in names if name not in later]


def chosen_parts(scheme: Scheme, parts: list[Part], names: str | None) -> list[Part]:
    """The parts ``names`` (comma-separated) names, in the scheme's order; the default members without it."""
    from pecli.errors import ConfigError

    known = [part.name for part in parts]
    if names is None:
        keep = default_members(scheme, known)
        return [part for part in parts if part.name in keep]
    wanted = [name.strip() for name in names.split(",") if name.strip()]
    if not wanted:
        raise ConfigError("parts", "is empty: name the parts (rope: cos,sin), or leave it out for the default members")
    twice = sorted({name for name in wanted if wanted.count(name) > 1})
    if twice:
        raise ConfigError("parts", f"names {', '.join(twice)} twice: an archive holds each part once")
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise ConfigError("parts", f"{', '.join(unknown)!r} not among this scheme's parts: {', '.join(known)}")
    return [part for part in parts if part.name in wanted]


class EncodeRun:
    """One scheme's arrays at some positions, streamed block by block into a file (or only summarised),
    then its report — several runs (a model's layer groups) can stream into one archive.

    Parameters
    ----------
    scheme, count, positions:
        The scheme, the number of positions, and the position ids (or a function giving them: they are
        allocated by :meth:`prepare`, after the memory check).
    dtype:
        The output dtype's name; angles are float64 whatever it is.
    archive, parts:
        Whether the run writes archive members, and which (comma-separated names; None: the default
        members, :func:`default_members`).
    """

    def __init__(self, scheme: Scheme, count: int, positions: Any, dtype: str, *, length: int | None = None,
                 archive: bool = False, parts: str | None = None) -> None:
        self.scheme, self.count, self._positions, self.dtype = scheme, count, positions, dtype
        self.length, self.archive, self.parts_text = count if length is None else length, archive, parts
        wanted = None if parts is None else [scheme.main_key, *(n.strip() for n in parts.split(",") if n.strip())]
        #: Whether the ids are made (an array); a long ``range`` of a :func:`ranged` scheme never is.
        self.ids_made = not (isinstance(positions, range) and count > RANGE_CHUNK and ranged(scheme))
        #: Bytes held at the peak, known from the sizes alone: check it before :meth:`prepare`.
        self.memory = memory_needed(scheme, count, dtype, wanted if archive else [scheme.main_key], ids_made=self.ids_made)

    def prepare(self) -> None:
        """Set up the parts and the summary (after the memory check: positions and tables are allocated)."""
        from pecli.analysis.summary import StreamingSummary, steps_are_equal

        scheme, dtype = self.scheme, self.dtype
        ids = self._positions() if callable(self._positions) else self._positions

        def make(positions: Any) -> list[Part]:
            # Each part its own blocks (no table shared between parts): members copied from the main
            # array take its rows instead. Every dtype by angle addition (a complex multiply per pair,
            # :func:`~pecli.schemes.frequencies.unit_phasors`), as :func:`pecli.encode` computes them.
            return scheme.parts(positions, exact=False, dtype=dtype, wanted=[scheme.main_key])

        if self.ids_made:
            self.positions = positions = _ids(ids)
            parts = make(positions)
        else:
            self.positions = positions = ids
            parts = range_parts(ids, make)
        self.main = main = parts[0]
        self.chosen = chosen_parts(scheme, parts, self.parts_text) if self.archive else [main]
        self.derive = derived_from_main_names(scheme, parts, self.chosen)
        self.main_dtype = _stored_dtype(main, dtype)
        itemsize = 8 if _dtype_name(main, dtype) == "int64" else numpy_dtype(dtype).itemsize  # in the dtype asked for
        nbytes = int(np.prod(main.shape, dtype=np.int64)) * itemsize
        self.rows = block_rows(main.row_values)
        rows = len(positions) + main.prefix  # prefix tokens' rows come first, in a block of their own
        segments = int(np.prod(main.shape, dtype=np.int64)) // max(1, rows * main.row_values)
        self.summary = StreamingSummary(len(positions), main.shape, _dtype_name(main, dtype), nbytes,
                                        equal_steps=steps_are_equal(scheme, positions, dtype), segments=segments)
        self.steps = segments * (-(-len(positions) // self.rows) + (1 if main.prefix else 0))

    @property
    def disk_bytes(self) -> int:
        """Bytes of the values the file will hold."""
        return sum(int(np.prod(p.shape, dtype=np.int64)) * _itemsize(p, self.dtype) for p in self.chosen)

    def main_blocks(self) -> Iterator[np.ndarray]:
        """The main array's blocks in the output dtype (bfloat16 widened), each summarised as it comes."""
        for values, _ in self.main_blocks_with({}):
            yield values

    def main_blocks_with(self, copies: dict[str, Callable[[np.ndarray], np.ndarray]]) -> Iterator[tuple[np.ndarray, dict]]:
        """:meth:`main_blocks`, each with the blocks ``copies`` makes from it by name (rope's cos and sin):
        made with the block, on the thread that computes it ahead (:func:`ahead`), while the caller
        summarises the block before it.

        A block is summarised after the caller took it (the caller hands it to the writer first): the
        writer, whose copy into the page cache no other thread can share, starts on the first block
        without waiting for its summary, and the last
        block's summary runs beside its write. Neither the caller nor the summary changes a block."""
        prefix, dtype = self.main.prefix, self.dtype

        def made(blocks: Iterator[Block]) -> Iterator[tuple[Block, np.ndarray, dict]]:
            for block in blocks:
                with np.errstate(over="ignore"):  # values beyond float16's range become ±inf, reported below
                    values = storable(cast(block.values, dtype))
                yield block, values, made_copies(values, copies)

        blocks = made(self.main.blocks(self.rows))
        with released_blocks():  # what follows the blocks (other members, the summary's last step) finds them freed
            for block, values, copied in ahead(blocks) if rows_ahead(self.scheme) else blocks:
                yield values, copied
                if block.start >= prefix:  # the summary is about the positions' rows, not the prefix tokens'
                    self.summary.add(dataclasses.replace(block, start=block.start - prefix), values)

    def summarise(self) -> None:
        """Summarise the main array without writing it (progress: the blocks)."""
        with task("encode", total=self.steps) as bar:
            for _ in self.main_blocks():
                bar.advance()

    def _cast_blocks(self, part: Part) -> Iterator[np.ndarray]:
        for block in part.blocks(block_rows(part.row_values)):
            with np.errstate(over="ignore"):  # inv_freq keeps float64: it is a parameter, not an output
                yield block.values if part.name == "inv_freq" else cast(block.values, self.dtype)

    def write_members(self, layout: ZipLayout, writer: BlockWriter, prefix: str = "") -> None:
        """Stream the chosen parts into ``layout`` as ``prefix + name``: the main array and the members
        copied from it side by side, block after block; then every other part, one after another."""
        together = [p for p in self.chosen if p is self.main or p.name in self.derive]
        regions = [(layout.reserve(prefix + p.name, p.shape, self.main_dtype), p.name) for p in together]
        copies = {name: self.derive[name] for _, name in regions if name in self.derive}
        for values, copied in self.main_blocks_with(copies):
            if regions:
                writer.put([(region, copied.get(name, values)) for region, name in regions])
        for part in self.chosen:
            if part not in together:
                blocks = self._cast_blocks(part)
                first = next(blocks, None)  # its dtype is the member's (integer ids, float64 inv_freq)
                dtype = _stored_dtype(part, self.dtype) if first is None else storable(np.asarray(first)).dtype
                region = layout.reserve(prefix + part.name, part.shape, dtype)
                if first is not None:
                    writer.put([(region, first)])
                for values in blocks:
                    writer.put([(region, values)])

    @property
    def metadata(self) -> dict[str, Any]:
        scheme = self.scheme
        return {"scheme": scheme.name, "kind": scheme.kind, "params": scheme.params(), "length": self.length,
                "dtype": self.summary.dtype}

    def report(self, out: str | os.PathLike | None = None) -> EncodeReport:
        """The summary of the main array (after every block went through), ``out`` the file written."""
        from pecli.analysis.summary import EncodeReport

        scheme, dtype, main = self.scheme, self.dtype, self.main

        def cast_rows(index: np.ndarray) -> np.ndarray:
            with np.errstate(over="ignore"):
                return storable(cast(main.rows_at(index), dtype))

        with np.errstate(invalid="ignore", over="ignore"):
            facts = self.summary.finish(self.positions, cast_rows)
        return EncodeReport(
            scheme.name, scheme.kind, scheme.params(), self.length, position_range(self.positions), main.name, facts,
            out=None if out is None else str(out), non_finite_values=self.summary.non_finite,
        )


def derived_from_main_names(scheme: Scheme, parts: list[Part], chosen: list[Part]) -> dict[str, Callable]:
    """:func:`~pecli.schemes.encoded.derived_from_main` for the chosen parts."""
    from pecli.schemes.encoded import derived_from_main

    names = {part.name for part in chosen}
    return {name: f for name, f in derived_from_main(scheme, parts).items() if name in names}


class _Progress:
    """Advances a task by the whole MiB written."""

    def __init__(self, bar) -> None:
        self.bar, self.bytes, self.shown = bar, 0, 0

    def __call__(self, nbytes: int) -> None:
        self.bytes += nbytes
        whole = -(-self.bytes // MIB)  # the last MiB counts when the file is whole
        if whole > self.shown:
            self.bar.advance(whole - self.shown)
            self.shown = whole


def _syncer(fd: int) -> Callable[[], None] | None:
    return (lambda: os.fdatasync(fd)) if sync_wanted() else None


def write_npy(path: str | os.PathLike, run: EncodeRun, *, force: bool) -> Path:
    """The main array of a prepared run as an ``.npy`` file (atomic), the one ``np.save`` writes;
    progress in MiB written."""
    from pecli.io_stream import BlockWriter, Region, npy_header

    main = run.main

    def write(stream) -> None:
        fd = stream.fileno()
        nbytes = int(np.prod(main.shape, dtype=np.int64)) * run.main_dtype.itemsize
        region = Region(fd, 0, npy_header(main.shape, run.main_dtype), nbytes, run.main_dtype, checksum=False)
        with task("encode MiB", total=-(-region.size // MIB)) as bar, BlockWriter(_Progress(bar), _syncer(fd)) as writer:
            for values in run.main_blocks():
                writer.put([(region, values)])
        region.check_complete()

    with released_blocks():  # the writer's last blocks, given back after main_blocks emptied the pool
        return write_atomic(path, write, force=force)


def write_npz(path: str | os.PathLike, runs: list[tuple[str, EncodeRun]], metadata: dict[str, Any], *, force: bool) -> Path:
    """The chosen parts of prepared runs (each under its name prefix) and ``metadata`` as a JSON string
    under ``metadata``, as an ``.npz`` archive (atomic) that ``np.load`` reads; progress in MiB written."""
    from pecli.io_stream import BlockWriter, ZipLayout

    document = np.array(json.dumps(metadata, sort_keys=True))
    total = sum(run.disk_bytes for _, run in runs)

    def write(stream) -> None:
        fd = stream.fileno()
        layout = ZipLayout(fd)
        with task("encode MiB", total=-(-total // MIB)) as bar, BlockWriter(_Progress(bar), _syncer(fd)) as writer:
            for prefix, run in runs:
                run.write_members(layout, writer, prefix)
            writer.put([(layout.reserve("metadata", (), document.dtype), document)])
        layout.close()

    with released_blocks():  # the writer's last blocks, given back after main_blocks emptied the pool
        return write_atomic(path, write, force=force)


def _dtype_name(part: Part, dtype: str) -> str:
    """The dtype the report names: the output dtype, or int64 for integer arrays (t5's buckets)."""
    sample = part.rows_at(np.zeros(1, dtype=np.int64)) if part.rows_at is not None else None
    return "int64" if sample is not None and sample.dtype.kind in "iu" else dtype


def _stored_dtype(part: Part, dtype: str) -> np.dtype:
    """The dtype a part's values are stored in: int64, or the output dtype (bfloat16 as float32)."""
    name = _dtype_name(part, dtype)
    return np.dtype(np.int64) if name == "int64" else np.dtype(np.float32) if name == "bfloat16" else numpy_dtype(name)


def _itemsize(part: Part, dtype: str) -> int:
    return _stored_dtype(part, dtype).itemsize


__all__ = ["EncodeRun", "block_rows", "chosen_parts", "default_members", "memory_needed", "position_bytes", "range_parts",
           "ranged", "streamed", "write_npy", "write_npz"]
