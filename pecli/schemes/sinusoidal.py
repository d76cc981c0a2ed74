"""The sinusoidal encoding of "Attention Is All You Need" (Vaswani et al. 2017; all seeds)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar

import numpy as np

from pecli.dtypes import numpy_dtype
from pecli.errors import ConfigError
from pecli.params import param
from pecli.schemes.base import MAX_SCALE, MAX_WIDTH, AdditiveScheme, Capability
from pecli.schemes.frequencies import (
    CHUNK_VALUES, DEFAULT_BASE, FrequencyPairs, check_given_frequencies, fill_rows, geometric_inv_freq, phasor_chunks,
)
from pecli.schemes.parts import Part, prefixed, row_part, whole_part
from pecli.schemes.positions import stored_positions

#: Values of rows made in place at once (:meth:`SinusoidalScheme.row_encoder`) where the products hold no
#: chunk (consecutive ids: ``phasor_chunks``' ``holds_chunk`` is False): a whole block's half is one
#: product, one call per thread instead of four (each takes Python's lock): 0.157–0.160 CPU s against
#: 0.167–0.190 (medians of five, 1 GiB of float32 rows, in process, three runs each).
IN_PLACE_VALUES = 1 << 19


@dataclass(frozen=True)
class SinusoidalScheme(AdditiveScheme):
    """Fixed sines and cosines of geometrically spaced frequencies.

    Notes
    -----
    With ``ω_i = base^(−2i/d)``:

    - ``layout="interleaved"`` (the paper; DistilBERT, [Conditions]):
      ``PE[p, 2i] = sin(p ω_i)``, ``PE[p, 2i+1] = cos(p ω_i)``;
    - ``layout="half"`` (Marian): ``PE[p] = [sin(p ω_0) … sin(p ω_{d/2−1}), cos(p ω_0) … cos(p ω_{d/2−1})]``.

    ``inv_freq`` gives the d/2 frequencies ω_i instead (radians per unit of position); ``scale``
    multiplies the whole table (x-transformers' ``ScaledSinusoidalEmbedding``: ``dim^−0.5``), so that
    ``PE_p · PE_q = scale² Σ_i cos(ω_i (p − q))``. Positions may be any real numbers.

    ``spacing="tensor2tensor"`` spaces the frequencies as Tensor2Tensor's ``get_timing_signal_1d``:
    ``ω_i = base^(−i/(d/2 − 1))``, from 1 to exactly 1/base (the timescale increment
    ``ln(base)/(d/2 − 1)``) — the table of Whisper's encoder and of fairseq's models (M2M-100,
    Speech2Text, FSMT, XGLM), which HF computes so; Marian and Pegasus use the paper's ``base^(−2i/d)``.

    The two layouts are the same vectors with their components permuted, so every dot product
    ``PE_p · PE_q = Σ_i cos(ω_i (p − q))`` ([Conditions] and [Common-PE]) is the same. Angles ``p ω_i`` are formed
    in float64.

    References
    ----------
    Vaswani et al., "Attention Is All You Need", 2017, section 3.5.
    """

    name: ClassVar[str] = "sinusoidal"
    summary: ClassVar[str] = "sin/cos of p·base^(-2i/d) (Vaswani et al. 2017)"
    extra_capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.FREQUENCIES})
    real_positions: ClassVar[bool] = True

    dim: int = param(512, "model dimension d (even)", minimum=2, maximum=MAX_WIDTH)
    base: float = param(10000.0, "base of the geometric frequencies", exclusive_minimum=0)
    layout: str = param(
        "interleaved", "interleaved: sin, cos pairs (the paper); half: all sines then all cosines (Marian)",
        choices=("interleaved", "half"),
    )
    spacing: str = param(
        "vaswani", "vaswani: ω_i = base^(-2i/d), the paper's; tensor2tensor: ω_i = base^(-i/(d/2-1)) (Whisper, fairseq)",
        choices=("vaswani", "tensor2tensor"),
    )
    given_inv_freq: tuple[float, ...] | None = param(
        None, "the frequency ω_i of each sin/cos pair (radians per position) in place of base^(-2i/d): d/2 numbers, "
        "or an .npy or text file of them", exclusive_minimum=0, from_file=True, key="inv_freq", default_text="base^(-2i/d)",
    )
    scale: float = param(1.0, "multiply the table by this (x-transformers' scaled sinusoid: dim^-0.5)", exclusive_minimum=0,
                         maximum=MAX_SCALE)

    def __post_init__(self) -> None:
        self._require_even("dim", self.dim)
        if self.spacing == "tensor2tensor" and self.dim < 4:
            raise ConfigError("dim", f"spacing tensor2tensor divides by d/2 − 1: dim must be at least 4, got {self.dim}")
        if self.given_inv_freq is not None:
            check_given_frequencies(self.given_inv_freq, (self.dim // 2,), f"sinusoidal with dim {self.dim}")
            if self.base != DEFAULT_BASE or self.spacing != "vaswani":
                given = f"base {self.base:g}" if self.base != DEFAULT_BASE else f"spacing {self.spacing}"
                raise ConfigError("inv_freq", f"replaces the ladder of {given}; give the frequencies or the ladder, not both")

    @property
    def width(self) -> int:
        return self.dim

    @property
    def inv_freq(self) -> np.ndarray:
        """``ω_i = base^(−2i/d)`` (vaswani) or ``base^(−i/(d/2 − 1))`` (tensor2tensor), or the given ones, float64."""
        if self.given_inv_freq is not None:
            return np.array(self.given_inv_freq, dtype=np.float64)
        if self.spacing == "tensor2tensor":
            return np.exp(-np.log(float(self.base)) * np.arange(self.dim // 2, dtype=np.float64) / (self.dim // 2 - 1))
        return geometric_inv_freq(self.dim, self.base)

    def frequency_pairs(self) -> FrequencyPairs:
        half = self.dim // 2
        if self.layout == "half":
            first, second = np.arange(half), np.arange(half) + half
        else:
            first, second = np.arange(0, self.dim, 2), np.arange(1, self.dim, 2)
        inv_freq = self.inv_freq
        base = float(self.base) if self.given_inv_freq is None else float("nan")  # given frequencies have no base
        return FrequencyPairs(inv_freq, inv_freq, first, second, True, self.dim, base, self.scale)

    def angles(self, positions: Any) -> np.ndarray:
        """The (L, d/2) angles ``p ω_i`` in float64."""
        return np.outer(self.positions_of(positions).astype(np.float64), self.inv_freq)

    def encode(self, positions: Any) -> np.ndarray:
        angles = self.angles(positions)
        if self.layout == "half":
            out = np.concatenate([np.sin(angles), np.cos(angles)], axis=1)
        else:
            out = np.empty((angles.shape[0], self.dim), dtype=np.float64)
            out[:, 0::2] = np.sin(angles)
            out[:, 1::2] = np.cos(angles)
        if self.scale != 1.0:
            out *= self.scale
        return out

    #: ``pecli encode`` computes this scheme's next block while it summarises and writes one: its rows are
    #: made in the output dtype (:meth:`row_encoder`), so the three blocks alive hold at most 8 bytes a value.
    rows_ahead: ClassVar[bool] = True

    def row_encoder(self, positions: np.ndarray, *, exact: bool = True, dtype: str | None = None) -> Callable[[np.ndarray], np.ndarray]:
        """Rows of :meth:`encode` in ``dtype`` (default float64), from the phasors of
        :func:`~pecli.schemes.frequencies.phasor_chunks` (``exact=False``: angle addition), a chunk of
        rows at a time in cache and on both cores (:func:`~pecli.schemes.frequencies.fill_rows`): each
        value is computed in float64 (scaled there) and rounded once to ``dtype``."""
        inv_freq, pairs, scale, half = self.inv_freq, self.dim // 2, self.scale, self.layout == "half"
        out_dtype = np.dtype(np.float64) if dtype is None else numpy_dtype(dtype)

        sines, cosines = (slice(0, pairs), slice(pairs, self.dim)) if half else (slice(0, self.dim, 2), slice(1, self.dim, 2))
        # The interleaved rows are the phasors' float64 view: in float64 or float32 they are made in the
        # block itself (one product per value, cast in NumPy's buffer; bits as the chunk's cast), unless a
        # scale must be applied in float64 before a cast to float32.
        complex_dtype = {np.dtype(np.float64): np.complex128, np.dtype(np.float32): np.complex64}.get(out_dtype)
        in_place = not half and complex_dtype is not None and (scale == 1.0 or out_dtype == np.float64)

        def rows(ids: np.ndarray) -> np.ndarray:
            if exact and out_dtype == np.float64:  # sin and cos of each chunk's angles straight into their columns

                def direct(start: int, stop: int, out: np.ndarray) -> None:
                    angles = np.outer(np.asarray(ids[start:stop]).astype(np.float64), inv_freq)
                    np.sin(angles, out=out[:, sines])
                    np.cos(angles, out=out[:, cosines])
                    if scale != 1.0:
                        out *= scale

                return fill_rows(len(ids), self.dim, out_dtype, direct)
            chunk = phasor_chunks(ids, inv_freq, sin_first=not half, exact=exact)
            if in_place:  # (sin, cos) pairs side by side: each row is its phasors' view, made where it lies

                def pairs_in_place(start: int, stop: int, out: np.ndarray) -> None:
                    chunk(start, stop, out.view(complex_dtype))
                    if scale != 1.0:
                        out *= scale

                values = CHUNK_VALUES if chunk.holds_chunk else IN_PLACE_VALUES
                return fill_rows(len(ids), self.dim, out_dtype, pairs_in_place, chunk_values=values)

            def fill(start: int, stop: int, out: np.ndarray) -> None:
                z = chunk(start, stop)
                if scale != 1.0:
                    z.view(np.float64)[...] *= scale
                if half:
                    out[:, :pairs], out[:, pairs:] = z.imag, z.real
                else:
                    # (sin pω_i, cos pω_i) side by side: the interleaved layout is the phasors' float64 view.
                    out[...] = z.view(np.float64)

            return fill_rows(len(ids), self.dim, out_dtype, fill)

        return rows

    def parts(self, positions: Any, *, exact: bool = True, dtype: str | None = None, wanted: Any = None) -> list[Part]:
        """``encoding`` row by row in ``dtype`` (:meth:`row_encoder`), then ``positions``."""
        positions = self.positions_of(positions)
        self.check_positions(positions)
        encoding = row_part("encoding", positions, self.row_encoder(positions, exact=exact, dtype=dtype), (self.width,), main=True)
        return [prefixed(encoding, np.zeros((self.prefix_rows, self.width))), whole_part("positions", stored_positions(positions))]
