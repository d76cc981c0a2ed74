"""The frequencies of sinusoids: ``θ_i = base^(−2i/d)``, the unit phasors ``exp(i p θ_i)`` built from
them, and :class:`FrequencyPairs`, what a scheme with frequency pairs tells the analyses and figures."""

from __future__ import annotations

import functools
import os
import threading
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


#: The base of sinusoids and RoPE when none is given (Vaswani et al. 2017; Su et al. 2021): also HF's
#: ``rope_theta`` where a RoPE config gives none (old Llama 2 files) and llama.cpp's ``rope_freq_base_train``
#: where a GGUF file gives none.
DEFAULT_BASE = 10000.0


def check_given_frequencies(values: tuple[float, ...], counts: tuple[int, ...], what: str) -> None:
    """Refuse frequencies given with ``inv_freq`` (already finite and > 0) whose number is not one of
    ``counts`` (the pairs the scheme has: ``what`` names it, e.g. ``"rope with 128 rotated components"``)."""
    from pecli.errors import ConfigError

    if len(values) not in counts:
        needed = " or ".join(f"{count:,}" for count in counts)
        raise ConfigError("inv_freq", f"gives {len(values):,} frequencies; {what} needs {needed} (one per pair)")


#: float32's smallest normal number and its largest: the range in which transformers' rotary modules hold a base
#: (``numpy.finfo(numpy.float32).tiny`` and ``.max``, written out so that importing this module asks NumPy nothing).
FLOAT32_TINY = 1.1754943508222875e-38
FLOAT32_MAX = 3.4028234663852886e38


def float32_base_problem(base: float) -> str | None:
    """Why transformers' float32 cannot hold the rotary ``base`` (``"under float32's smallest normal number
    …"``), or None when it can.

    transformers builds ``inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))``
    (``LlamaRotaryEmbedding.compute_default_rope_parameters`` and every model's copy): torch raises the
    Python float ``base`` to a float32 tensor, so the base is rounded to float32 first. Below float32's
    smallest normal number it becomes a subnormal or 0 — the frequencies lose their precision or are
    infinite (transformers 5.20.2, torch 2.13: base 1e-40 at d = 128 gives inf from pair 63 on, 1e-46 from
    pair 1); past its largest it becomes inf and every pair but the first gets frequency 0. pecli's float64
    numbers would be neither. Between the two (bases under 1 included) transformers' frequencies are finite
    and within float32's rounding of pecli's.
    """
    with np.errstate(over="ignore"):
        held = np.float32(base)  # torch's rounding of the Python float: to nearest, inf past the largest
    if held < FLOAT32_TINY:
        return (f"under float32's smallest normal number ({FLOAT32_TINY:.3g}): transformers computes the rotary "
                "frequencies 1/base^(2i/d) in float32, where this base rounds to a subnormal or 0 and its "
                "frequencies lose their precision or are infinite")
    if np.isinf(held):
        return (f"past float32's largest number ({FLOAT32_MAX:.3g}): transformers computes the rotary frequencies "
                "1/base^(2i/d) in float32, where this base is infinite and every pair but the first has frequency 0")
    return None


def check_float32_base(base: float, key: str = "base") -> None:
    """Refuse a rotary ``base`` that transformers' float32 cannot hold (:func:`float32_base_problem`)."""
    from pecli.errors import ConfigError

    problem = float32_base_problem(base)
    if problem is not None:
        raise ConfigError(key, f"{base:g} is {problem}")


def geometric_inv_freq(dim: int, base: float) -> np.ndarray:
    """``θ_i = base^(−2i/dim)`` for ``i = 0 … dim/2 − 1``, float64: the frequencies of every sinusoid.

    The one place this formula is written (Vaswani et al. 2017, section 3.5; Su et al. 2021, eq. 15).
    """
    exponents = np.arange(0, dim, 2, dtype=np.float64) / dim
    return 1.0 / np.power(float(base), exponents)


#: Positions per anchor of the angle-addition tables of :func:`unit_phasors` (``exact=False``).
ANCHOR = 256


def unit_phasors(positions: np.ndarray, inv_freq: np.ndarray, *, sin_first: bool = False, exact: bool = True) -> np.ndarray:
    """``exp(i p θ_j)`` for every position p and frequency θ_j, complex128 of shape (N, len(inv_freq)).

    Viewed as float64, each complex number is the pair ``(cos pθ_j, sin pθ_j)`` in adjacent slots, or
    ``(sin pθ_j, cos pθ_j)`` with ``sin_first`` (the number ``i·conj(exp(i pθ_j))``).

    ``exact=True`` evaluates ``cos`` and ``sin`` of the float64 angle ``p·θ_j`` (NumPy's), as the
    schemes' :meth:`encode` and the analyses do. ``exact=False`` uses the angle-addition formula
    ``exp(i(a + k)θ) = exp(i aθ) · exp(i kθ)`` with ``p = a + k``, ``a`` a multiple of :data:`ANCHOR`
    and ``0 <= k < ANCHOR``, so one complex multiply replaces two trigonometric evaluations; both
    factors are direct evaluations at the float64 angles ``fl(aθ)`` and ``fl(kθ)``, re-anchored every
    :data:`ANCHOR` positions: one two-term sum per value, no recurrence, so no error accumulates.
    ``pecli encode`` and :func:`pecli.encode` use it for every dtype (float64 included: a third of the
    CPU seconds of the direct evaluation, NumPy's 10 ns a value; see docs/performance.md).

    Bound: against cos and sin of the exact angle ``p·θ`` (θ the float64 frequency), each value is
    within ``2⁻⁵³·|p·θ| + 2⁻⁵²``: the angles' rounding, ``|fl(aθ) − aθ| + |fl(kθ) − kθ| ≤
    2⁻⁵³·(aθ + kθ)``, the same as that of the direct evaluation's angle ``fl(pθ)``, and a few
    roundings of values below 1 (measured, ``benchmarks/float64_error.py``, over every position below
    2²¹ at d = 128 and below 2¹⁸ at d = 1024 and the last 16,384 below 2²⁴: at most 0.83·2⁻⁵² past
    ``2⁻⁵³·p·θ``). Its bits are not always the direct evaluation's: the two angles round apart, so
    they differ by up to ``2⁻⁵²·p·θ + 2⁻⁵²`` (2.9e-11 at 2¹⁸ with d = 1024, 2.3e-10 at 2²¹, 1.9e-9
    at 2²⁴), both equally close to the exact angle's values. Positions below :data:`ANCHOR` have
    ``a = 0``, whose phasor is exactly 1: their values are the direct evaluation's, bit for bit. The
    value of each position depends on p alone, not on which other positions are computed with it.
    """
    positions = np.asarray(positions)
    positions = positions if positions.dtype.kind == "f" else positions.astype(np.int64, copy=False)
    inv_freq = np.asarray(inv_freq, dtype=np.float64)
    if exact or positions.size == 0 or positions.dtype.kind == "f":  # real positions: always exact
        out = np.empty((positions.size, inv_freq.size), dtype=np.complex128)
        angles = np.outer(positions.astype(np.float64), inv_freq)
        np.cos(angles, out=out.imag if sin_first else out.real)
        np.sin(angles, out=out.real if sin_first else out.imag)
        return out
    steps = _phasor_steps(inv_freq.tobytes(), sin_first)
    anchors_of = positions // ANCHOR
    first, last = int(anchors_of[0]), int(anchors_of[-1])
    consecutive = positions[-1] - positions[0] == positions.size - 1 and bool(np.all(np.diff(positions) == 1))
    anchor_ids = np.arange(first, last + 1) if consecutive else _distinct(anchors_of)
    angles = np.outer((anchor_ids * ANCHOR).astype(np.float64), inv_freq)
    anchors = np.cos(angles) + 1j * np.sin(angles)
    if sin_first:  # i·conj(z_a z_k) = conj(z_a) · (i·conj(z_k)), the steps' factor made once
        anchors = np.conj(anchors)
    if consecutive:
        grid = anchors[:, None, :] * steps[None, :, :]
        start = int(positions[0]) - first * ANCHOR
        return grid.reshape(-1, inv_freq.size)[start : start + positions.size]
    which = np.searchsorted(anchor_ids, anchors_of)
    return anchors[which] * steps[positions - anchors_of * ANCHOR]


def _distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` of integers: sorted, each once (a sort and a comparison of neighbours;
    ``np.unique`` loads ``numpy.ma``, 6–12 ms, which ``encode`` needs nowhere else)."""
    ordered = np.sort(values, axis=None)
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]]


#: Values of a chunk of rows made at once by :func:`fill_rows` (its phasors and cast: 1.5 MiB), about a core's
#: L2 cache (1 MiB here), so that each value goes to memory once, as the output. Larger than that cache
#: since the chunks' products span whole anchors in one call (:func:`phasor_chunks`): with the rows' two
#: threads, the summary and the writer all taking Python's lock between NumPy's calls, rope float32 at 2^21
#: took 1.30–1.41 CPU s and 0.86–1.13 s in chunks of 2^17 values, 1.50–1.76 and 1.04–1.29 s in 2^15.
CHUNK_VALUES = 1 << 17
#: Arrays of at least this many values are filled by two threads (:func:`fill_rows`).
SHARED_VALUES = 1 << 16

#: Bytes a chunk holds per value while :func:`fill_rows` fills it: its float64 angles (one per pair) and
#: complex phasors; two chunks at once, one per thread (:data:`FILL_BYTES`).
CHUNK_BYTES_PER_VALUE = 16
#: Bytes of the chunks :func:`fill_rows` holds at once, beside the array it fills.
FILL_BYTES = 2 * CHUNK_VALUES * CHUNK_BYTES_PER_VALUE

_helper: tuple[int, Any] | None = None  # (the process it was made in, the executor)
_helper_lock = threading.Lock()


def helper_thread() -> Any:
    """The one thread that fills the second half of a :func:`fill_rows` array (made on first use, and
    anew in a process forked after it: a fork copies the executor, not its thread); ``pecli encode``
    also gives it one of a block's copies (:func:`pecli.encoding_files.made_copies`) between blocks."""
    global _helper
    with _helper_lock:
        if _helper is None or _helper[0] != os.getpid():
            from concurrent.futures import ThreadPoolExecutor

            _helper = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="pecli-rows"))
        return _helper[1]


def fill_rows(count: int, width: int, dtype: Any, fill: Callable[[int, int, np.ndarray], None], *,
              chunk_values: int = CHUNK_VALUES) -> np.ndarray:
    """A (count, width) array of ``dtype`` (from the pool of blocks,
    :data:`~pecli.schemes.encoded.BLOCKS`), ``fill(start, stop, out)`` writing rows start … stop − 1
    into ``out`` (their view), a chunk of about ``chunk_values`` values at a time (:data:`CHUNK_VALUES`;
    a ``fill`` that holds no temporary of the chunk's size, as rows made in place, can take more).

    The chunks' temporaries (angles, cos and sin, phasors) stay in the core's cache, so the rows are
    written to memory once, already in ``dtype``; from :data:`SHARED_VALUES` values the second half of
    the rows is filled on a second thread (NumPy's cos, sin and products release the GIL), so a block
    takes both cores. Each row depends on its own position only: the values are those of one call.
    """
    from pecli.schemes.encoded import BLOCKS

    out = BLOCKS.take((count, width), dtype)
    step = max(1, chunk_values // max(1, width))

    def run(low: int, high: int) -> None:
        with np.errstate(over="ignore", invalid="ignore"):  # values past float16's range become ±inf, as a cast makes them
            for start in range(low, high, step):
                stop = min(start + step, high)
                fill(start, stop, out[start:stop])

    if count * width < SHARED_VALUES or count < 2:
        run(0, count)
        return out
    half = count // 2
    other = helper_thread().submit(run, half, count)
    try:
        run(0, half)
    finally:
        other.result()
    return out


def phasor_chunks(positions: np.ndarray, inv_freq: np.ndarray, *, sin_first: bool = False,
                  exact: bool = True) -> Callable[[int, int], np.ndarray]:
    """``chunk(start, stop, out=None)``: :func:`unit_phasors` of ``positions[start:stop]``, the same values,
    with what the chunks share made once — the anchors' phasors of consecutive integer positions
    (``exact=False``).

    ``exact`` evaluates cos and sin of each chunk's float64 angles (as :func:`unit_phasors`); the angle
    addition takes each chunk's products from the anchors of every position, evaluated here once (cos
    and sin of the float64 angles ``a·θ``), and the steps ``exp(i kθ)``: the factors, hence the
    products, are those :func:`unit_phasors` multiplies.

    ``out``: a complex array of shape (stop − start, len(inv_freq)) the values are written into and
    returned — complex128, or complex64, which holds each float64 product rounded once to float32 (the
    product is made in complex128 and cast in NumPy's buffer, a few thousand values at a time: the bits
    of ``unit_phasors(…).astype(np.complex64)``, without a complex128 array of the chunk's size). A
    block's rows whose pairs sit side by side (sinusoidal's interleaved (sin, cos)) are then made in
    place, each value written to memory once. ``chunk.holds_chunk`` says whether a call still holds
    arrays of the chunk's size (the direct evaluation, ids that are not consecutive) or, given ``out``,
    none (the angle addition of consecutive ids), so that its caller may take larger chunks.
    """
    positions = np.asarray(positions)
    positions = positions if positions.dtype.kind == "f" else positions.astype(np.int64, copy=False)
    inv_freq = np.asarray(inv_freq, dtype=np.float64)
    consecutive = (not exact and positions.size > 0 and positions.dtype.kind != "f"
                   and positions[-1] - positions[0] == positions.size - 1 and bool(np.all(np.diff(positions) == 1)))
    if not consecutive:

        def direct(start: int, stop: int, out: np.ndarray | None = None) -> np.ndarray:
            z = unit_phasors(positions[start:stop], inv_freq, sin_first=sin_first, exact=exact)
            if out is None:
                return z
            out[...] = z
            return out

        direct.holds_chunk = True  # unit_phasors' angles and phasors, a chunk's size
        return direct
    steps = _phasor_steps(inv_freq.tobytes(), sin_first)
    first = int(positions[0]) // ANCHOR
    anchor_ids = np.arange(first, int(positions[-1]) // ANCHOR + 1)
    angles = np.outer((anchor_ids * ANCHOR).astype(np.float64), inv_freq)
    anchors = np.cos(angles) + 1j * np.sin(angles)
    if sin_first:
        anchors = np.conj(anchors)
    offset = int(positions[0]) - first * ANCHOR  # positions[i] = (first + (offset + i) // ANCHOR)·ANCHOR + (offset + i) % ANCHOR

    def chunk(start: int, stop: int, out: np.ndarray | None = None) -> np.ndarray:
        low, high = offset + start, offset + stop
        out = np.empty((stop - start, inv_freq.size), dtype=np.complex128) if out is None else out
        row = 0
        while low < high:  # anchor × its steps: whole anchors in one product, a part of one alone
            anchor, k = divmod(low, ANCHOR)
            whole = (high - low) // ANCHOR if k == 0 else 0
            if whole:
                grid = out[row : row + whole * ANCHOR].reshape(whole, ANCHOR, inv_freq.size)
                np.multiply(anchors[anchor : anchor + whole, None, :], steps[None, :, :], out=grid, casting="same_kind")
                take = whole * ANCHOR
            else:
                take = min(ANCHOR - k, high - low)
                np.multiply(anchors[anchor], steps[k : k + take], out=out[row : row + take], casting="same_kind")
            row, low = row + take, low + take
        return out

    chunk.holds_chunk = False  # given ``out``, the products go straight into it
    return chunk


@functools.lru_cache(maxsize=8)
def _phasor_steps(inv_freq: bytes, sin_first: bool) -> np.ndarray:
    """``exp(i kθ_j)`` for k = 0 … ANCHOR − 1 (``i·conj`` of it with ``sin_first``), read-only."""
    offsets = np.outer(np.arange(ANCHOR, dtype=np.float64), np.frombuffer(inv_freq, dtype=np.float64))
    steps = np.cos(offsets) + 1j * np.sin(offsets)
    steps = 1j * np.conj(steps) if sin_first else steps
    steps.setflags(write=False)
    return steps


@dataclass(frozen=True)
class FrequencyPairs:
    """The frequency structure of a scheme with :attr:`Capability.FREQUENCIES`.

    Component ``first[i]`` and ``second[i]`` of the per-position vector hold pair i, which turns at
    ``inv_freq[i]`` radians per position: ``(sin pθ_i, cos pθ_i)`` when ``sin_first`` (the sinusoidal
    encoding), else ``(cos pθ_i, sin pθ_i)`` (rope's rotated reference vector).

    Attributes
    ----------
    inv_freq:
        θ_i in use, float64: scaled by a context extension, 0 for pairs that do not rotate (p-RoPE).
    original_inv_freq:
        ``base^(−2i/dim)`` with the configured base, before any scaling.
    dim:
        The ``d`` of ``θ_i = base^(−2i/d)`` (rope: the rotated dimension).
    base:
        The base in effect (NTK and dynamic scalings change it).
    attention_scaling:
        The factor both cos and sin are multiplied by (1 unless a scaling sets one).
    rotating:
        How many pairs rotate (the rest are p-RoPE's unrotated pairs).
    scaled:
        What a context-extension scaling did (:class:`pecli.schemes.scaling.record.ScaledFrequencies`),
        or None.
    axis:
        For positions of several coordinates: the coordinate each pair turns with (an index into
        ``axis_names``), so pair i turns by ``p[axis[i]] · θ_i``; None for 1-D positions.
    axis_names:
        The names of the coordinates (``t``, ``h``, ``w``).
    magnitudes:
        ``magnitudes(positions)``: the (N, pairs) factor each position's pair is multiplied by besides
        ``attention_scaling`` (xPos: ``ζ_i^((p − L//2)/B)``); None where it is 1.
    """

    inv_freq: np.ndarray
    original_inv_freq: np.ndarray
    first: np.ndarray
    second: np.ndarray
    sin_first: bool
    dim: int
    base: float
    attention_scaling: float = 1.0
    rotating: int | None = None
    scaled: Any = None
    axis: np.ndarray | None = None
    axis_names: tuple[str, ...] = ()
    magnitudes: Any = None

    @property
    def count(self) -> int:
        return int(self.inv_freq.size)

    def coordinates(self, positions: np.ndarray) -> np.ndarray:
        """The coordinate each pair turns with, float64: (N, 1) for ids of shape (N,), broadcasting
        over the pairs; (N, pairs) ``p[axis_i]`` for positions of several coordinates."""
        positions = np.asarray(positions)
        if positions.ndim == 1:
            return positions.astype(np.float64)[:, None]
        return positions[:, self.axis].astype(np.float64)

    def angles(self, positions: np.ndarray) -> np.ndarray:
        """The (N, pairs) float64 angles ``p θ_i`` (``p[axis_i] θ_i`` on a grid)."""
        return self.coordinates(positions) * self.inv_freq
