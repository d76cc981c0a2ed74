"""What :func:`pecli.encode` returns: a scheme's arrays at some positions, each under its own name.

One small frozen dataclass per kind of result, its fields the names ``pecli encode --out x.npz``
writes: :class:`VectorEncoding` (additive schemes: ``encoding``), :class:`RotaryEncoding` (rope and
the rotary schemes on cells: the ``cos`` and ``sin`` caches, ``encoding`` on demand),
:class:`BiasEncoding` (alibi: ``bias``, ``slopes``), :class:`BucketEncoding` (t5: ``buckets``) and
:class:`RelativeEncoding` (Shaw et al.: ``embeddings``, ``index``, ``table``). Each also holds the
``scheme`` and the ``positions``.

Float arrays come in the dtype asked for (float64 by default), computed in float64 and cast once at
the end. The rotary caches and sinusoidal tables of integer positions take the angle addition of
:func:`~pecli.schemes.frequencies.unit_phasors` in every dtype, as ``pecli encode`` writes them (one
code path: the file and the array hold the same values): its float64 values are within
``2⁻⁵³·|p·θ| + 2⁻⁵²`` of cos and sin of the exact angle ``p·θ`` (θ the float64 frequency) — the
rounding any float64 angle of that size carries, 1e-10 at a million positions, as NumPy's cos of the
float64 product, from which they differ by up to twice that — so each value cast to a narrower dtype
is within half a unit in the last place at 1.0 of that dtype (float32: 2⁻²⁴ ≈ 6e-8, for positions
below 2²⁸; float16: 2⁻¹¹) of the float64 value. Real-valued positions are evaluated directly.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, ClassVar

import numpy as np

from pecli.dtypes import cast, numpy_dtype
from pecli.schemes.parts import Part

#: Rows of positions a block of rotary caches holds while they are filled (a multiple of the phasors'
#: anchor, 256: the angle-addition tables then line up with the blocks).
FILL_ROWS = 4096
#: Values a block of any other part holds (rows of at least one position).
FILL_VALUES = 1 << 20
#: Arrays at least this large come from :data:`BUFFERS` (smaller ones cost little to allocate).
POOLED_BYTES = 32 << 20


class BufferPool:
    """Memory of large result arrays, taken back when the last array on it is gone, and handed out again.

    A fresh array of a GiB costs the kernel a page fault per page the first time each page is
    written (half a second to over two seconds here, see :func:`fresh_buffer`), every call of
    :func:`pecli.encode` in a loop. An array from :meth:`take` lives on a buffer of the pool: NumPy
    makes every view of it — a slice, a reshape, ``torch.from_numpy`` — keep that array alive, so the
    buffer returns to the pool only when nothing can read it any more, and the next result of the
    same size is written into pages already mapped. A buffer the pool has to make anew is mapped in
    one call (:func:`fresh_buffer`): a loop's first two calls (the second runs while the first
    result is kept, so it takes new memory too) then cost a steady 0.3–0.4 s a GiB more, not a
    stall of seconds. The pool keeps at most :attr:`limit` bytes of idle buffers (the oldest are
    freed first); :meth:`clear` frees them all.
    """

    def __init__(self, limit: int, smallest: int | None = None, fresh: Callable[[int], np.ndarray] | None = None) -> None:
        import threading

        self.limit, self._idle, self._lock = limit, [], threading.Lock()
        #: Arrays of fewer bytes are plain ``np.empty`` (None: :data:`POOLED_BYTES`).
        self.smallest = smallest
        #: How a buffer of n bytes is made when none is idle (None: :func:`fresh_buffer`).
        self.fresh = fresh

    def take(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """An uninitialised C-ordered array of ``shape`` and ``dtype`` (from an idle buffer when one fits)."""
        import weakref

        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if nbytes < (POOLED_BYTES if self.smallest is None else self.smallest) or nbytes > self.limit:
            return np.empty(shape, dtype=dtype)
        with self._lock:
            found = next((i for i, raw in enumerate(self._idle) if raw.nbytes == nbytes), None)
            raw = self._idle.pop(found) if found is not None else None
        if raw is None:
            raw = (fresh_buffer if self.fresh is None else self.fresh)(nbytes)
        # Based on a memoryview, not on ``raw``: views of ``array`` keep ``array`` alive, not ``raw``.
        array = np.frombuffer(memoryview(raw), dtype=dtype)
        weakref.finalize(array, self._give_back, raw).atexit = False  # nothing to give back at exit
        return array.reshape(shape)

    def _give_back(self, raw: np.ndarray) -> None:
        with self._lock:
            self._idle.append(raw)
            while sum(idle.nbytes for idle in self._idle) > self.limit:
                self._idle.pop(0)

    def clear(self) -> None:
        """Free every idle buffer."""
        with self._lock:
            self._idle.clear()


#: Bytes between the start of a mapping and a buffer's first byte: arrays starting on a page boundary
#: were filled 40 % slower (0.29 s against 0.20 s for a float32 pair of rope caches at 2^20 positions,
#: every page mapped), as if their stores aliased the loads of the phasors at the same page offsets;
#: malloc's arrays (NumPy's) start 16 bytes in.
BUFFER_OFFSET = 16


def fresh_buffer(nbytes: int) -> np.ndarray:
    """``nbytes`` of new memory, every page mapped before it is returned (Linux: an anonymous
    ``mmap`` with ``MAP_POPULATE``; elsewhere ``np.empty``).

    Why: memory written for the first time costs a page fault per page. NumPy asks for transparent huge
    pages for large arrays, and on a machine whose memory is fragmented (a page cache full of written
    files) the kernel then compacts memory at each fault, synchronously: measured here, the first GiB
    a process writes took 2.0–2.3 s, later ones 0.12–0.75 s; small pages faulted one by one take
    0.55 s a GiB, and mapped in one call (``MAP_POPULATE``) 0.32–0.38 s, the same every time. Once
    mapped, writing a GiB takes 0.04 s whichever the pages.
    """
    import mmap

    populate = getattr(mmap, "MAP_POPULATE", None)
    if populate is not None:
        try:
            mapped = mmap.mmap(-1, nbytes + BUFFER_OFFSET, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | populate)
            return np.frombuffer(mapped, dtype=np.uint8, count=nbytes, offset=BUFFER_OFFSET)
        except (OSError, ValueError):  # not allowed here (a sandbox, a memory limit): NumPy's own memory
            pass
    return np.empty(nbytes, dtype=np.uint8)


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


#: The pool of :func:`pecli.encode`'s large arrays: idle buffers up to an eighth of the machine's memory.
BUFFERS = BufferPool(_physical_memory() // 8)


#: The pool of the blocks ``pecli encode`` computes, summarises and writes (and :func:`pecli.encode` copies
#: into its arrays): a run's blocks come and go in the same few sizes, and memory written for the first
#: time costs a page fault a page (0.3 to 2 s a GiB, see :func:`fresh_buffer`), every block. Idle
#: blocks up to 64 MiB are kept; a run holds at most those it uses at once (memory_needed counts them),
#: and frees them when its blocks are done. Made by NumPy (``np.empty``, seen by ``tracemalloc``): each
#: is written for the first time once a run, not once a block.
BLOCKS = BufferPool(64 << 20, smallest=1 << 20, fresh=lambda nbytes: np.empty(nbytes, dtype=np.uint8))


@dataclass(frozen=True, eq=False)
class Encoded:
    """Base of the results: the arrays by name (:meth:`as_dict`), and, for code written when
    :func:`pecli.encode` returned one array, that array through ``np.asarray(result)``, ``result[i, j]``
    and ``result.shape`` (:attr:`array_field` names it). New code reads the named fields."""

    #: The field ``np.asarray(result)`` gives: what ``pecli.encode`` returned before it named its arrays.
    array_field: ClassVar[str] = "encoding"

    def as_dict(self) -> dict[str, np.ndarray]:
        """The arrays by name, in the order ``pecli encode --out x.npz`` writes them."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "scheme" and getattr(self, f.name) is not None}

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        array = np.asarray(getattr(self, self.array_field))
        return array if dtype is None else array.astype(dtype)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):  # a field is read as it is; only a name made on request is made
            if key in {f.name for f in dataclasses.fields(self)} - {"scheme"} and getattr(self, key) is not None:
                return getattr(self, key)
            return self.as_dict()[key]
        return np.asarray(self)[key]

    def __len__(self) -> int:
        return len(np.asarray(self))

    @property
    def shape(self) -> tuple[int, ...]:
        return np.asarray(self).shape

    @property
    def dtype(self) -> np.dtype:
        return np.asarray(self).dtype


@dataclass(frozen=True, eq=False)
class VectorEncoding(Encoded):
    """An additive scheme's (N, d) vectors, one row per position."""

    scheme: Any
    encoding: np.ndarray
    positions: np.ndarray


@dataclass(frozen=True, eq=False)
class RotaryEncoding(Encoded):
    """A rotary scheme's (N, r) ``cos`` and ``sin`` caches in the layout's convention (``half``:
    ``concat(cos θ, cos θ)`` as HuggingFace's ``LlamaRotaryEmbedding`` returns them; ``interleaved``: each
    value twice adjacently), attention scaling included; the frequencies θ_i (float64, a parameter);
    for schemes on cells, the coordinate each pair turns with (``pair_axis``); with xPos, the queries'
    factors ``xpos_scale`` (N, r) (keys: their inverses).

    :attr:`encoding`, the (N, d) rotated reference vector that ``check`` measures, is made from the
    caches on first use.
    """

    array_field: ClassVar[str] = "encoding"

    scheme: Any
    cos: np.ndarray
    sin: np.ndarray
    inv_freq: np.ndarray
    positions: np.ndarray
    pair_axis: np.ndarray | None = None
    xpos_scale: np.ndarray | None = None

    @cached_property
    def encoding(self) -> np.ndarray:
        """(N, d): each pair's (cos, sin) at its components of the layout, zero past the rotated ones; with
        xPos, the scheme's float64 rows times the queries' factors cast once (``RopeScheme.xpos_rows``), the
        bits ``pecli encode`` writes, not the product of the caches in their dtype."""
        from pecli.schemes.rotary_layout import pair_slices

        if self.xpos_scale is not None:  # the float64 product, cast once: the bits ``pecli encode`` writes
            with np.errstate(over="ignore"):
                return cast(self.scheme.xpos_rows(self.positions), self.cos.dtype.name)
        rotated = self.cos.shape[1]
        first, second = pair_slices(rotated, self.scheme.layout)
        out = np.zeros((self.cos.shape[0], int(self.scheme.dim)), dtype=self.cos.dtype)
        out[:, first], out[:, second] = self.cos[:, first], self.sin[:, first]
        return out

    def as_dict(self) -> dict[str, np.ndarray]:
        return {"encoding": self.encoding, **super().as_dict()}


@dataclass(frozen=True, eq=False)
class BiasEncoding(Encoded):
    """A bias scheme's (H, N, N) logit terms ``bias[h, i, j]`` for query i and key j, and its slopes."""

    array_field: ClassVar[str] = "bias"

    scheme: Any
    bias: np.ndarray
    slopes: np.ndarray
    positions: np.ndarray


@dataclass(frozen=True, eq=False)
class BucketEncoding(Encoded):
    """T5's (N, N) bucket index of every (query, key) pair (int64); the bias is a learned value per bucket."""

    array_field: ClassVar[str] = "buckets"

    scheme: Any
    buckets: np.ndarray
    positions: np.ndarray


@dataclass(frozen=True, eq=False)
class RelativeEncoding(Encoded):
    """Shaw et al.'s (N, N, d) embeddings of every pair's clipped distance, that index, and the table."""

    array_field: ClassVar[str] = "embeddings"

    scheme: Any
    embeddings: np.ndarray
    index: np.ndarray
    table: np.ndarray
    positions: np.ndarray


def output_array(shape: tuple[int, ...], dtype: str | None, sample: np.ndarray, name: str) -> np.ndarray:
    """An empty array for part ``name``: integer values stay int64, ``inv_freq`` float64 (a parameter,
    as ``pecli encode`` keeps it), other floats take ``dtype``."""
    if sample.dtype.kind in "iub" or dtype is None or name == "inv_freq":
        return BUFFERS.take(shape, sample.dtype if sample.dtype.kind in "iub" else np.float64)
    return BUFFERS.take(shape, numpy_dtype(dtype))


def filled(part: Part, dtype: str | None) -> np.ndarray:
    """Part ``part`` as one array, its blocks written in place (cast to ``dtype`` as they come)."""
    out: np.ndarray | None = None
    with np.errstate(over="ignore"):  # values beyond float16's range become ±inf, as pecli encode writes them
        for block in part.blocks(max(1, FILL_VALUES // max(1, part.row_values))):
            values = np.asarray(block.values)
            if out is None:
                out = output_array(part.shape, dtype, values, part.name)
            if values.ndim == out.ndim and block.segment == 0 and values.shape == out.shape:
                out[...] = values
            elif values.ndim == out.ndim:
                out[block.start : block.start + values.shape[0]] = values
            else:  # a segment of a (segments, rows, …) array: alibi's heads
                out[block.segment, block.start : block.start + values.shape[0]] = values
    return out if out is not None else np.empty(part.shape)


def assemble(result: type[Encoded], scheme: Any, positions: np.ndarray, dtype: str | None) -> Encoded:
    """The result of type ``result``: the scheme's :meth:`~pecli.schemes.base.Scheme.parts` its fields
    name, each filled block by block in ``dtype`` (float64 values of narrower outputs may come from the
    scheme's faster ways, within a few ulps)."""
    names = {f.name for f in dataclasses.fields(result)} - {"scheme"}
    parts = scheme.parts(positions, exact=False, dtype=dtype, wanted=sorted(names))
    try:
        arrays = {part.name: filled(part, dtype) for part in parts if part.name in names}
    finally:
        BLOCKS.clear()  # the blocks were copied into the arrays: their memory is not kept
    return result(scheme=scheme, **arrays)


def rotary_caches(
    positions: np.ndarray, phasors: Callable[[np.ndarray], np.ndarray], rotated: int, layout: str, dtype: str | None,
) -> tuple[np.ndarray, np.ndarray]:
    """The (N, r) cos and sin caches in ``dtype`` (default float64), written straight from the (n, r/2)
    phasors ``exp(i·angle)`` of each block of positions: no table of angles, no copy of a cache."""
    from pecli.schemes.rotary_layout import pair_slices

    out_dtype = np.float64 if dtype is None else numpy_dtype(dtype)
    n = len(positions)
    cos, sin = BUFFERS.take((n, rotated), out_dtype), BUFFERS.take((n, rotated), out_dtype)
    first, second = pair_slices(rotated, layout)
    with np.errstate(over="ignore"):
        for start in range(0, n, FILL_ROWS):
            z = phasors(positions[start : start + FILL_ROWS])
            rows = slice(start, start + z.shape[0])
            for cache, values in ((cos, z.real), (sin, z.imag)):
                cache[rows, first] = values
                cache[rows, second] = values
    return cos, sin


def copies_cos_sin(scheme: Any) -> bool:
    """Whether the scheme's ``cos`` and ``sin`` parts are copies of its encoding's values (a rotary scheme
    without xPos, whose encoding carries the queries' factors): see :func:`derived_from_main`."""
    return scheme.kind == "rotary" and getattr(scheme, "xpos", None) is None


def derived_from_main(scheme: Any, parts: list[Part]) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """Parts whose blocks are copies of values of the main part's block of the same rows, by name:
    ``derive(main_rows)`` gives that part's rows.

    A rotary scheme's encoding holds each pair's (cos, sin) on the pair's components (the reference
    vector rotated, see :class:`RotaryEncoding`), so its ``cos`` and ``sin`` caches are those values laid
    out as the layout's caches (``concat(c, c)`` for ``half``, each twice adjacently for
    ``interleaved``): the same values, cast alike, with no second evaluation of cos and sin. Not with
    xPos, whose encoding carries the queries' factors; empty for every other scheme.
    """
    main = parts[0] if parts else None
    if main is None or not copies_cos_sin(scheme) or main.name != "encoding" or len(main.shape) != 2:
        return {}
    from pecli.schemes.rotary_layout import pair_slices

    layout = scheme.layout
    rotated = int(getattr(scheme, "rotated_dim", main.shape[1]))
    first, second = pair_slices(rotated, layout)
    shapes = {part.name: part.shape for part in parts}

    def cache(values: np.ndarray) -> np.ndarray:
        """``layout_cache(values, layout)`` in a block of :data:`BLOCKS`."""
        out = BLOCKS.take((values.shape[0], 2 * values.shape[1]), values.dtype)
        if layout == "half":
            out[:, : values.shape[1]], out[:, values.shape[1] :] = values, values
        else:
            out[:, 0::2], out[:, 1::2] = values, values
        return out

    derive = {"cos": lambda rows: cache(rows[:, first]), "sin": lambda rows: cache(rows[:, second])}
    return {name: f for name, f in derive.items() if shapes.get(name) == (main.shape[0], rotated)}


def made_on_request(scheme: Any) -> frozenset[str]:
    """The arrays :func:`pecli.encode`'s result makes on first use rather than holding, and that
    ``pecli encode --out x.npz`` writes only when ``--parts`` names them: a rotary scheme's
    ``encoding`` (:attr:`RotaryEncoding.encoding`), its ``cos`` and ``sin`` being what a user loads."""
    return frozenset({"encoding"}) if scheme.kind == "rotary" else frozenset()
