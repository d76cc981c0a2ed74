"""The frequency/wavelength table of sinusoidal and rotary encodings (``pecli wavelengths``).

Pair i of a sinusoidal or rotary encoding turns at the angular frequency ``θ_i`` radians per token;
its wavelength is ``λ_i = 2π/θ_i`` tokens ([Fleetwood] and [EulerBlind]: from 2π up to about 2π·base). This
module lays out, per pair, the frequency, the wavelength, how many turns fit in a context, whether
the training positions completed a turn, and what a context-extension scaling did to the pair; and
two bounds from the literature that relate the base to the context length.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np

from pecli.errors import ConfigError, PecliError
from pecli.notebook import Tabular
from pecli.schemes.base import Capability, Scheme, require
from pecli.schemes.frequencies import geometric_inv_freq
from pecli.schemes.scaling.ntk import dynamic_ntk_base
from pecli.schemes.scaling.registry import scaling_type
from pecli.numbers import integer, number

TWO_PI = 2.0 * math.pi


@dataclass(frozen=True)
class PairRow:
    """One frequency pair of the table."""

    index: int
    inv_freq: float
    wavelength: float
    rotations: float
    completed_in_training: bool | None
    original_inv_freq: float
    ratio: float
    regime: str
    short_factor: float | None = None
    long_factor: float | None = None
    #: The coordinate the pair turns with (positions on a grid, multimodal ids), else None.
    axis: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fields by name (``dataclasses.asdict``'s dict, without its deep copies: every field is a
        number, a string or None)."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}


@dataclass(frozen=True)
class AxisShare:
    """The frequency pairs one coordinate of an n-D scheme turns (rope-nd's axes, M-RoPE's t, h, w)."""

    axis: str
    pairs: tuple[int, ...]
    largest_wavelength: float | None
    smallest_wavelength: float | None
    #: Positions the coordinate spans in the scheme's cells (largest id + 1).
    span: int

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self) | {"pairs": list(self.pairs)}


@dataclass(frozen=True)
class LengthBase:
    """Dynamic NTK's base at one sequence length."""

    length: int
    base: float


@dataclass(frozen=True)
class SpectrumSummary:
    """The facts below the per-pair table; a fact that does not apply to the scheme is None.

    Attributes
    ----------
    pairs:
        Number of frequency pairs.
    largest_wavelength, smallest_wavelength:
        Over the pairs that rotate, tokens; None when none does.
    attention_scaling:
        The factor a scaling multiplies cos and sin by (1 without one).
    critical_dimension, pairs_not_completed_in_training:
        Liu et al.'s critical dimension and the pairs that never turned fully in training (given T).
    theoretical_context_limit:
        The longest wavelength of an additive sinusoid, past which its slowest pair repeats ([Fleetwood] and [EulerBlind]).
    scaling, effective_base:
        The context-extension scaling (``"none"`` without one) and the base it leaves in effect.
    yarn_correction_range, longrope_factors_in_use, longrope_switch, dynamic_base_by_length:
        What yarn, longrope and dynamic NTK did.
    notes:
        The scaling's notes.
    base_lower_bound, base_meets_bound:
        Men et al.'s bound for the context (rotary schemes) and whether the base in effect meets it.
    axes:
        For positions with several coordinates: which pairs each coordinate turns (:class:`AxisShare`).
    """

    pairs: int
    largest_wavelength: float | None
    smallest_wavelength: float | None
    attention_scaling: float
    critical_dimension: int | None = None
    pairs_not_completed_in_training: int | None = None
    theoretical_context_limit: float | None = None
    scaling: str | None = None
    effective_base: float | None = None
    yarn_correction_range: tuple[float, float] | None = None
    longrope_factors_in_use: str | None = None
    longrope_switch: str | None = None
    dynamic_base_by_length: tuple[LengthBase, ...] | None = None
    notes: tuple[str, ...] = ()
    base_lower_bound: BaseBound | None = None
    base_meets_bound: bool | None = None
    axes: tuple[AxisShare, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the first four facts always, the others only where they apply."""
        out: dict[str, Any] = {
            "pairs": self.pairs,
            "largest_wavelength": self.largest_wavelength,
            "smallest_wavelength": self.smallest_wavelength,
            "attention_scaling": self.attention_scaling,
        }
        optional: dict[str, Any] = {
            "critical_dimension": self.critical_dimension,
            "pairs_not_completed_in_training": self.pairs_not_completed_in_training,
            "theoretical_context_limit": self.theoretical_context_limit,
            "scaling": self.scaling,
            "effective_base": self.effective_base,
            "yarn_correction_range": None if self.yarn_correction_range is None else list(self.yarn_correction_range),
            "longrope_factors_in_use": self.longrope_factors_in_use,
            "longrope_switch": self.longrope_switch,
            "dynamic_base_by_length": None if self.dynamic_base_by_length is None else [
                {"length": row.length, "base": row.base} for row in self.dynamic_base_by_length
            ],
            "notes": list(self.notes) or None,
            "base_lower_bound": None if self.base_lower_bound is None else self.base_lower_bound.as_dict(),
            "base_meets_bound": self.base_meets_bound,
            "axes": None if self.axes is None else [share.as_dict() for share in self.axes],
        }
        out.update({key: value for key, value in optional.items() if value is not None})
        return out


@dataclass(frozen=True, repr=False)
class Spectrum(Tabular):
    """The per-pair table and its summary for one scheme at one context length."""

    scheme: str
    dim: int
    base: float
    context: int
    train_length: int | None
    pairs: list[PairRow]
    summary: SpectrumSummary

    def table_title(self) -> str:
        return f"{self.scheme}: dim {self.dim}, base {number(self.base, 6)}, context {integer(self.context)}"

    def table_rows(self) -> list[dict[str, Any]]:
        """A row per frequency pair (the fields of :class:`PairRow`)."""
        return [dataclasses.asdict(row) for row in self.pairs]


@dataclass(frozen=True, repr=False)
class WavelengthReport(Tabular):
    """What ``pecli wavelengths`` reports: the spectrum of a scheme at a context, with the base bounds.

    Attributes
    ----------
    scheme:
        The scheme as configured at the context (dynamic NTK and LongRoPE depend on it).
    spectrum:
        Its table and summary, Men et al.'s bound included for rotary schemes.
    suggested_base:
        Men et al.'s bound for the target context, when one was asked for.
    out:
        Where the inverse frequencies were written, if anywhere (set by the caller that writes them).
    """

    scheme: Scheme
    spectrum: Spectrum
    suggested_base: BaseBound | None = None
    out: str | None = None
    #: Where T comes from: the key that gives it (``max_position_embeddings``, ``original_max_position_embeddings``)
    #: or ``given``; None without T.
    train_length_from: str | None = None

    def table_title(self) -> str:
        return self.spectrum.table_title()

    def table_rows(self) -> list[dict[str, Any]]:
        return self.spectrum.table_rows()

    @property
    def inv_freq(self) -> np.ndarray:
        """The final inverse frequencies, float64 (0 for pairs that do not rotate)."""
        return np.asarray(self.scheme.frequency_pairs().inv_freq, dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``pecli wavelengths --json``."""
        document: dict[str, Any] = {
            "scheme": self.spectrum.scheme,
            "params": self.scheme.params(),
            "context": self.spectrum.context,
            "train_length": self.spectrum.train_length,
            "train_length_from": self.train_length_from,
            "pairs": [row.to_dict() for row in self.spectrum.pairs],
            "summary": self.spectrum.summary.to_dict(),
            "out": self.out,
        }
        if self.suggested_base is not None:
            document["suggested_base"] = self.suggested_base.as_dict()
        return document


def wavelengths_of(inv_freq: Any) -> np.ndarray:
    """``λ_i = 2π/θ_i`` in tokens, float64; ∞ for a pair that does not rotate (θ_i = 0, p-RoPE)."""
    inv_freq = np.asarray(inv_freq, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.where(inv_freq > 0, TWO_PI / np.where(inv_freq > 0, inv_freq, 1.0), np.inf)


def critical_dimension(inv_freq: np.ndarray, train_length: int) -> int:
    """Liu et al.'s critical dimension: twice the number of pairs whose wavelength fits in training.

    Notes
    -----
    A pair whose wavelength ``2π/θ_i`` is at most the training length T has been seen through a full
    turn during training; the dimensions beyond the critical one have not, and their angles at longer
    contexts are out of distribution. For ``θ_i = b^(−2i/d)`` this is
    ``d_extra = 2 ⌈(d/2) · log_b(T/2π)⌉``: 92 for Llama 2 (b = 10000, d = 128, T = 4096).

    References
    ----------
    Liu et al., "Scaling Laws of RoPE-based Extrapolation", ICLR 2024, section 3.2.
    """
    return int(2 * np.count_nonzero(wavelengths_of(inv_freq) <= train_length))


def long_term_decay(base: float, dim: int, context: int, *, stop_at_negative: bool = False) -> np.ndarray:
    """``B(m) = Σ_{i<d/2} cos(m θ_i)`` for m = 0 … context, with ``θ_i = base^(−2i/d)``, float64.

    Men et al. 2024 show that the model's ability to prefer similar tokens over random ones at
    relative distance m is proportional to ``B(m)``. Computed in blocks of k offsets through
    ``cos((m₀+k)θ) = cos(m₀θ)cos(kθ) − sin(m₀θ)sin(kθ)``: matrix products instead of
    ``context · d/2`` cosines, exact up to float64 rounding. With ``stop_at_negative`` the values
    end with the first group of blocks that holds a negative one.
    """
    return frequencies_decay(geometric_inv_freq(dim, base), context, stop_at_negative=stop_at_negative)


def frequencies_decay(theta: np.ndarray, context: int, *, stop_at_negative: bool = False) -> np.ndarray:
    """:func:`long_term_decay` of any frequencies ``theta`` (given with ``--inv-freq``, not a base's ladder)."""
    theta = np.asarray(theta, dtype=np.float64)
    block = max(16, int(math.isqrt(context + 1)))
    offsets = np.arange(block, dtype=np.float64)[:, None] * theta
    cos_offsets, sin_offsets = np.cos(offsets), np.sin(offsets)
    starts = np.arange(0, context + 1, block, dtype=np.float64)
    pieces = []
    for group in np.array_split(starts, max(1, starts.size // 16)):
        angles = group[:, None] * theta
        values = (cos_offsets @ np.cos(angles).T - sin_offsets @ np.sin(angles).T).T.reshape(-1)
        pieces.append(values)
        if stop_at_negative and values.min() < 0:
            break
    return np.concatenate(pieces)[: context + 1]


def long_term_decay_holds(base: float, dim: int, context: int) -> bool:
    """Whether ``B(m) ≥ 0`` for every integer m in [0, context] (see :class:`DecayScan` for the rounding)."""
    return DecayScan(dim, context).holds(base)


class DecayScan:
    """Whether ``B(m) = Σ_{i<d/2} cos(m θ_i) ≥ 0`` for every integer ``m ≤ L``, for many bases of one (d, L).

    Notes
    -----
    A base *passes* when every ``B(m)``, m = 0 … L, evaluated in float64 with ``θ_i = base^(−2i/d)``
    (:func:`pecli.schemes.base.geometric_inv_freq`), is ``≥ 0``; one negative value is a certificate of
    failure, so a failing base is settled by the first negative value found, and a passing one needs
    all of them.

    ``B`` is evaluated by blocks of ``s ≈ √L`` offsets through the angle addition
    ``cos((m₀+k)θ) = cos(m₀θ)cos(kθ) − sin(m₀θ)sin(kθ)``: one (s × d) by (d × L/s) matrix product
    per base, its two factors' cos and sin themselves by angle addition (:func:`multiple_phasors`). The product is first taken in float32; any block whose float32 minimum is below
    ``screen_margin`` — four times the float32 error bound of a length-d dot product whose terms sum
    to at most d/2 in absolute value, ``(d + 2) · d/2 · 2⁻²⁴`` (5e-4 for d = 128) — is evaluated again
    in float64, and only float64 values decide. The float64 values themselves carry an absolute error
    of order ``d/2 · m · 2⁻⁵³`` (from the angles ``m θ_i``): below 1e-8 for d = 128 and m ≤ 2²⁰, so
    only bases within about 1e-9 (relative) of the edge of a window of passing bases can be classified
    by rounding rather than by the sign of the exact sum; no tolerance is applied.

    The m's that made recent bases fail are tried first: neighbouring bases tend to fail at the same
    offsets, which settles many failing bases with a few thousand cosines. The blocks are then scanned
    from the far end (m = L) down, in chunks that double in size: bases near the bound fail at large m.
    Where most bases pass (the verification above the bound), which takes every block of each,
    :meth:`holds_many` screens many bases in one stacked product.
    """

    WITNESSES = 64
    #: Most float32 values of B (bases × offsets) one stacked screen of :meth:`holds_many` holds (16 MiB).
    BATCH_VALUES = 1 << 22

    def __init__(self, dim: int, context: int) -> None:
        self.dim, self.context = int(dim), int(context)
        self.block = min(1024, max(16, math.isqrt(self.context + 1)))
        self.screen_margin = 4.0 * (self.dim + 2) * (self.dim // 2) * 2.0**-24
        self.starts = np.arange(0, self.context + 1, self.block, dtype=np.float64)
        self.witnesses: list[int] = []
        self._verdicts: dict[float, bool] = {}

    def holds(self, base: float) -> bool:
        """Whether ``B(m) ≥ 0`` for every m in [0, L] with this base."""
        base = float(base)
        if base not in self._verdicts:
            self._verdicts[base] = self.first_negative(base) < 0
        return self._verdicts[base]

    def holds_many(self, bases: Iterable[float]) -> list[bool]:
        """:meth:`holds` for each of ``bases``, settled together where the context is short.

        Up to :attr:`BATCH_VALUES` float32 values of ``B`` (bases × offsets) are screened in one stacked
        matrix product, with the same float32 screen and float64 decision as one base at a time (so the
        same verdicts); only the witness kept for a failing base may differ. At long contexts, where a
        single base's values exceed that, each base is scanned alone and stops at its first negative.
        """
        bases = [float(base) for base in bases]
        todo = [base for base in dict.fromkeys(bases) if base not in self._verdicts]
        size = self.BATCH_VALUES // (self.block * self.starts.size)
        for start in range(0, len(todo), max(size, 1)):
            if size < 2:
                self.holds(todo[start])
            else:
                self._settle(todo[start : start + size])
        return [self._verdicts[base] for base in bases]

    def _settle(self, bases: list[float]) -> None:
        """The verdicts of ``bases``: the remembered witnesses first, then every block of every base left."""
        theta = np.stack([geometric_inv_freq(self.dim, base) for base in bases])  # (n, d/2)
        left_open = np.ones(len(bases), dtype=bool)
        if self.witnesses:
            offsets = np.asarray(self.witnesses, dtype=np.float64)
            first = np.full(len(bases), -1)  # each base's first negative witness, in the witnesses' order
            for part in _witness_parts(offsets.size):  # the recent witnesses settle most bases
                rows = np.flatnonzero(first < 0)
                negative = np.cos(offsets[None, part, None] * theta[rows, None, :]).sum(axis=2) < 0  # (rows, part)
                hit = negative.any(axis=1)
                first[rows[hit]] = part.start + np.argmax(negative[hit], axis=1)
            for row in np.flatnonzero(first >= 0):
                self._verdicts[bases[row]] = False
                self._remember(int(offsets[first[row]]))
            left_open &= first < 0
        rows = np.flatnonzero(left_open)
        if not rows.size:
            return
        n, half = rows.size, theta.shape[1]
        flat = theta[rows].reshape(-1)  # the phasors are elementwise: all bases in one call
        steps = multiple_phasors(self.block, 1, flat).reshape(self.block, n, half).transpose(1, 0, 2)
        left = np.concatenate([steps.real, -steps.imag], axis=2)  # (n, block, d)
        z = multiple_phasors(self.starts.size, self.block, flat).reshape(self.starts.size, n, half).transpose(1, 2, 0)
        right = np.concatenate([z.real, z.imag], axis=1)  # (n, d, starts)
        screened = np.matmul(left.astype(np.float32), right.astype(np.float32)).min(axis=1)  # (n, starts)
        for row, index in enumerate(rows):
            found = self._decide(left[row], right[row], self.starts, np.flatnonzero(screened[row] < self.screen_margin))
            self._verdicts[bases[index]] = found < 0
            if found >= 0:
                self._remember(found)

    def _decide(self, left: np.ndarray, right: np.ndarray, starts: np.ndarray, suspects: np.ndarray) -> int:
        """The most negative offset in the blocks ``suspects`` (columns of ``right``, which start at
        ``starts``), evaluated in float64, or −1 when none is negative."""
        if not suspects.size:
            return -1
        values = left @ right[:, suspects]
        offsets = starts[suspects][None, :] + np.arange(self.block)[:, None]
        negative = (values < 0) & (offsets <= self.context)
        return int(offsets[negative][np.argmin(values[negative])]) if negative.any() else -1

    def first_negative(self, base: float) -> int:
        """An offset m ≤ L where ``B(m) < 0`` (a witness of failure), or −1 when the base passes."""
        theta = geometric_inv_freq(self.dim, base)
        if self.witnesses:
            offsets = np.asarray(self.witnesses, dtype=np.float64)
            for part in _witness_parts(offsets.size):  # the recent witnesses settle most failing bases
                values = np.cos(offsets[part, None] * theta).sum(axis=1)
                negative = np.flatnonzero(values < 0)
                if negative.size:
                    return self._remember(int(offsets[part][negative[0]]))
        found = self._scan(theta)
        return found if found < 0 else self._remember(found)

    def _remember(self, offset: int) -> int:
        if offset in self.witnesses:
            self.witnesses.remove(offset)
        self.witnesses.insert(0, offset)
        del self.witnesses[self.WITNESSES:]
        return offset

    def _scan(self, theta: np.ndarray) -> int:
        """A negative offset of ``B`` or −1, scanning blocks from the far end down (failures near the
        bound happen at large m) in chunks that double in size."""
        steps = multiple_phasors(self.block, 1, theta)
        left = np.concatenate([steps.real, -steps.imag], axis=1)
        left32 = left.astype(np.float32)
        phasors = multiple_phasors(self.starts.size, self.block, theta)
        end, chunk = self.starts.size, 4
        while end > 0:
            starts = self.starts[max(0, end - chunk): end]
            z = phasors[max(0, end - chunk): end]
            right = np.concatenate([z.real, z.imag], axis=1).T
            screened = left32 @ right.astype(np.float32)
            suspects = np.flatnonzero(screened.min(axis=0) < self.screen_margin)
            found = self._decide(left, right, starts, suspects)
            if found >= 0:
                return found
            end -= chunk
            chunk *= 2
        return -1


#: Witnesses tried first (the most recent): a failing base's first negative is most often among them.
RECENT_WITNESSES = 4


def _witness_parts(count: int) -> tuple[slice, ...]:
    """The witnesses in two parts, the recent ones first: trying them in order finds the same first
    negative witness as trying all at once, with a sixteenth of the cosines when the recent ones suffice."""
    return (slice(0, min(count, RECENT_WITNESSES)),) + ((slice(RECENT_WITNESSES, count),) if count > RECENT_WITNESSES else ())


def multiple_phasors(count: int, spacing: int, theta: np.ndarray) -> np.ndarray:
    """``exp(i·p·θ_j)`` for the positions ``p = k·spacing``, k = 0 … count − 1: (count, len(θ)) complex.

    Each ``p = (q·r + j)·spacing`` with ``r ≈ √count`` and ``j < r``; ``exp(i pθ)`` is the product of the
    exact float64 evaluations at ``q·r·spacing`` and ``j·spacing`` (angle addition), so ``2√count``
    rows of cos and sin are evaluated instead of ``count``. Each angle is an integer times θ rounded once,
    as the direct evaluation's; the product adds a few ulps (≈ 1e-15) to values whose angles already
    carry an error of order ``p · 2⁻⁵³`` (see :class:`DecayScan`).
    """
    r = max(1, math.isqrt(max(count, 1)))
    coarse = np.arange(0, count, r, dtype=np.float64)[:, None] * spacing * theta
    fine = np.arange(r, dtype=np.float64)[:, None] * spacing * theta
    grid = _phasors(coarse)[:, None, :] * _phasors(fine)[None, :, :]
    return grid.reshape(-1, theta.size)[:count]


def _phasors(angles: np.ndarray) -> np.ndarray:
    """``cos + i·sin`` of ``angles``, written into the complex array's parts (no complex arithmetic)."""
    out = np.empty(angles.shape, dtype=np.complex128)
    np.cos(angles, out=out.real)
    np.sin(angles, out=out.imag)
    return out


@dataclass(frozen=True)
class BaseBound:
    """Men et al.'s bound on the base for one context length.

    ``every_base_above`` is the robust figure: every base above it passed, on a grid of
    ``verified_steps_per_decade`` bases per decade up to ``checked_up_to``. ``smallest_base`` is the
    smallest passing base found on the fine grid of ``steps_per_decade`` (rounded up to a short number
    that itself passes); it sits in a window of passing bases, ``smallest_window = (low, high)``
    (``high`` None when every base above ``low`` passed), with failing bases above it as well as below —
    and passing ones again further up: ``failing_above_window`` and ``next_passing`` name one of each,
    checked.
    """

    context: int
    dim: int
    smallest_base: float | None
    every_base_above: float | None
    steps_per_decade: int
    checked_up_to: float
    smallest_window: tuple[float, float | None] | None = None
    verified_steps_per_decade: int | None = None
    #: Above the smallest window: a whole base just past its top that fails, and the lowest base found
    #: above that which passes again (the fine grid, then bisected) — each checked, or None.
    failing_above_window: float | None = None
    next_passing: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "context": self.context, "dim": self.dim, "smallest_base": self.smallest_base,
            "smallest_window": None if self.smallest_window is None else list(self.smallest_window),
            "failing_above_window": self.failing_above_window, "next_passing": self.next_passing,
            "every_base_above": self.every_base_above, "steps_per_decade": self.steps_per_decade,
            "checked_up_to": self.checked_up_to, "verified_steps_per_decade": self.verified_steps_per_decade,
        }


#: The coarse log grid (bases per decade) that finds the first passing base.
COARSE_STEPS_PER_DECADE = 50
#: The verification grid above the first pass has about ``VERIFY_WORK / context`` bases per decade
#: (clipped to 50 … 500): failing islands narrow as the context grows while each check costs more.
VERIFY_WORK = 1 << 23
#: How far below the first coarse pass the fine grid looks for a narrower, lower window (decades).
LOOKBACK_DECADES = 0.3
#: Relative precision of the edges found by bisection.
EDGE_PRECISION = 1e-6
_LOWEST_BASE, _HIGHEST_BASE = 2.0, 1e30


def base_lower_bound(context: int, dim: int, *, steps_per_decade: int = 4000, decades_past: float = 0.5) -> BaseBound:
    """The base above which every RoPE base keeps ``B(m) ≥ 0`` up to ``context``, and the smallest base that does.

    Parameters
    ----------
    context : int
        Context length L: ``B(m) ≥ 0`` is required for every integer ``m ≤ L``.
    dim : int
        The rotated head dimension d.
    steps_per_decade : int
        Resolution of the fine log grid that finds the lowest window of passing bases and the top
        edge of the last failing one.
    decades_past : float
        How far above the last failing base the verification grid keeps looking for another failure.

    Notes
    -----
    ``B(m) = Σ_{i=0}^{d/2−1} cos(m θ_i)`` with ``θ_i = b^(−2i/d)`` (Men et al. 2024, eq. 9); their
    bound for L is the smallest base with ``B(m) ≥ 0`` for all ``m ≤ L`` (their Table 1 for d = 128:
    4.3e3 for 1K tokens, 2.7e4 for 4K, 8.4e4 for 8K, 6.4e5 for 32K). The condition is not monotone
    in the base: below the point above which every base passes there are narrow windows of passing
    bases between failing ones (4K: 26,952–26,973 passes, 27,000 fails; 32K: 629,979–630,983 passes,
    640,000 fails), so both figures are reported. What "passes" means, and how rounding near 0 is
    treated, is in :class:`DecayScan`.

    Search: (1) a coarse log grid (50 per decade) from 2 up to the first passing base; (2) the fine
    grid from ``LOOKBACK_DECADES`` below it up to the first passing fine base, whose lower edge is
    bisected; (3) a verification grid (:func:`verify_steps_per_decade`) from there up to
    ``decades_past`` decades past its last failure; (4) the fine grid, by bisection, between that last
    failure and the next verified pass, checked at eight fine bases above the edge, and the upper edge
    of the lowest window. Edges are bisected to a relative ``EDGE_PRECISION``. A window narrower than a
    fine step, or lower than the look-back, and a failing island narrower than a verification step
    can be missed: failing islands above the lowest window get narrower as L grows (for 32K some are
    under 0.1 % wide), so the verification grid is what bounds the trust in ``every_base_above``.
    None when no base up to 1e30 passes, as for d = 2 where ``B(m) = cos m``. Results are kept per
    (L, d, resolution) in :data:`KNOWN_BOUNDS` for the process (:mod:`pecli.bound_cache` also keeps them
    on disk between runs: :func:`remember_bounds`).

    References
    ----------
    Men et al., "Base of RoPE Bounds Context Length", NeurIPS 2024.
    """
    if context < 1 or dim < 2 or dim % 2:
        raise PecliError(f"base bound needs a positive context and an even dim >= 2, got {context}, {dim}")
    key = (int(context), int(dim), int(steps_per_decade), float(decades_past))
    if key not in KNOWN_BOUNDS:
        from pecli.analysis.blas import one_blas_thread

        with one_blas_thread():  # thousands of (s × d)·(d × n) products: threads only contend
            KNOWN_BOUNDS[key] = _cached_bound(*key)
    return KNOWN_BOUNDS[key]


#: Every bound this process knows, by (context, dim, steps_per_decade, decades_past): those it computed,
#: and those :func:`remember_bounds` was given.
KNOWN_BOUNDS: dict[tuple[int, int, int, float], BaseBound] = {}


def remember_bounds(bounds: Mapping[tuple[int, int, int, float], BaseBound]) -> None:
    """Bounds an earlier run of the same code computed (kept on disk by :mod:`pecli.bound_cache`), by
    (context, dim, steps_per_decade, decades_past): :func:`base_lower_bound` answers them without a search."""
    for key, bound in bounds.items():
        KNOWN_BOUNDS.setdefault(key, bound)


def known_bounds() -> dict[tuple[int, int, int, float], BaseBound]:
    """A copy of every bound this process knows (computed, or given to :func:`remember_bounds`)."""
    return dict(KNOWN_BOUNDS)


def _cached_bound(context: int, dim: int, steps_per_decade: int, decades_past: float) -> BaseBound:
    scan = DecayScan(dim, context)
    coarse = _LogGrid(COARSE_STEPS_PER_DECADE)
    first_pass = _first_pass(scan, coarse)
    if first_pass is None:  # d = 2: B(m) = cos m turns negative at m = 2 whatever the base
        return BaseBound(context, dim, None, None, steps_per_decade, _HIGHEST_BASE)
    fine = _LogGrid(steps_per_decade)
    low, low_index = _lowest_pass(scan, fine, coarse.base(first_pass))
    verify = _LogGrid(verify_steps_per_decade(context))
    last_fail, checked_up_to = _last_failure(scan, verify, verify.index_at_or_below(low) + 1, decades_past)
    if last_fail is None:
        high, every_above = None, low
    else:
        high = _window_top(scan, fine, low_index, verify.base(last_fail))
        every_above = _top_edge(scan, fine, verify.base(last_fail), verify.base(last_fail + 1))
    smallest = _short_passing(scan, low, math.inf if high is None else high)
    window = (_round(low, 6, math.ceil), None if high is None else _round(high, 6, math.floor))
    every_above = max(smallest, _round(every_above, 3, math.ceil))
    failing, again = (None, None) if high is None else _above_window(scan, fine, high, every_above)
    return BaseBound(context, dim, smallest, every_above, steps_per_decade, checked_up_to, window, verify.steps,
                     failing, again)


def _above_window(scan: DecayScan, grid: _LogGrid, top: float, limit: float) -> tuple[float | None, float | None]:
    """What lies just above the lowest window, whose upper edge is ``top``: the first whole base above it,
    if it fails, and the lowest base found passing again below ``limit`` — the fine grid's first pass,
    its lower edge bisected and rounded up to a whole base that passes. A claim is made only where the
    base named was checked: None otherwise."""
    failing = float(math.floor(top) + 1)
    if scan.holds(failing):
        return None, None
    index = grid.index_at_or_below(failing) + 1
    below = failing
    while grid.base(index) < limit:
        if scan.holds(grid.base(index)):
            again = float(math.ceil(_bisect_edge(scan, below, grid.base(index))))
            return failing, again if scan.holds(again) else None
        below, index = grid.base(index), index + 1
    return failing, None


def verify_steps_per_decade(context: int) -> int:
    """Bases per decade of the grid that checks the bases above the first pass (see ``VERIFY_WORK``)."""
    return int(min(500, max(50, VERIFY_WORK // max(context, 1))))


@dataclass(frozen=True)
class _LogGrid:
    """Bases ``2 · 10^(j / steps)``: index j ↔ base."""

    steps: int

    def base(self, index: float) -> float:
        return _LOWEST_BASE * 10.0 ** (index / self.steps)

    def index_at_or_below(self, base: float) -> int:
        return math.floor(self.steps * math.log10(base / _LOWEST_BASE) + 1e-9)


def _first_pass(scan: DecayScan, grid: _LogGrid) -> int | None:
    """Index of the first passing base of ``grid`` (None when none passes up to 1e30)."""
    index = 0
    while grid.base(index) < _HIGHEST_BASE:
        if scan.holds(grid.base(index)):
            return index
        index += 1
    return None


#: Bases of the verification grid settled together.
BATCH_BASES = 32


def _last_failure(scan: DecayScan, grid: _LogGrid, start: int, decades_past: float) -> tuple[int | None, float]:
    """Index of the last failing base of ``grid`` from ``start`` upwards, scanning until
    ``decades_past`` decades past it have passed, and the last base checked.

    Most of these bases pass, which only a scan of every block shows: they are settled
    :data:`BATCH_BASES` at a time (:meth:`DecayScan.holds_many`).
    """
    last_fail, index, beyond = None, start, max(1, round(decades_past * grid.steps))
    while (due := (start - 1 if last_fail is None else last_fail) + beyond - index + 1) > 0:
        batch = range(index, index + min(due, BATCH_BASES))
        failing = [i for i, holds in zip(batch, scan.holds_many(map(grid.base, batch))) if not holds]
        last_fail = failing[-1] if failing else last_fail
        index = batch.stop
    return last_fail, grid.base(index - 1)


def _lowest_pass(scan: DecayScan, grid: _LogGrid, coarse_pass: float) -> tuple[float, int]:
    """The lower edge of the lowest window of passing bases on the fine grid, looking down to
    ``LOOKBACK_DECADES`` below the first coarse pass, and the fine index of its first base."""
    index = max(grid.index_at_or_below(coarse_pass / 10.0**LOOKBACK_DECADES), 0)
    if scan.holds(grid.base(index)):  # the look-back starts inside a window: find its lower end
        while index > 0 and scan.holds(grid.base(index - 1)):
            index -= 1
    else:
        while not scan.holds(grid.base(index)):
            index += 1
    low = grid.base(index) if index == 0 else _bisect_edge(scan, grid.base(index - 1), grid.base(index))
    return low, index


def _window_top(scan: DecayScan, grid: _LogGrid, index: int, failing: float) -> float:
    """The upper edge of the window of passing bases that starts at fine index ``index``, below the
    failing base ``failing``: fine steps one at a time, then doubling strides for a wide window."""
    top, stride = index, 1
    while grid.base(top + stride) < failing and scan.holds(grid.base(top + stride)):
        top += stride
        stride = stride * 2 if top - index >= 32 else 1
    return _bisect_edge(scan, min(failing, grid.base(top + stride)), grid.base(top))


def _top_edge(scan: DecayScan, grid: _LogGrid, failing: float, passing: float) -> float:
    """The lowest base above which the fine-grid bases between ``failing`` and ``passing`` pass:
    bisection on the fine grid, checked at eight fine bases above the edge found (a failure there
    restarts the bisection above it)."""
    low, end = grid.index_at_or_below(failing), grid.index_at_or_below(passing) + 1
    while True:
        high = end
        while high - low > 1:
            middle = (low + high) // 2
            if scan.holds(grid.base(middle)):
                high = middle
            else:
                low = middle
        probes = sorted({int(i) for i in np.linspace(high + 1, end, 8)} - {high, end})
        failures = [index for index, holds in zip(probes, scan.holds_many(map(grid.base, probes))) if not holds]
        if not failures:
            return _bisect_edge(scan, grid.base(low), grid.base(high))
        low = failures[-1]


def _bisect_edge(scan: DecayScan, failing: float, passing: float) -> float:
    """The edge between a failing and a passing base (in either order), to ``EDGE_PRECISION``:
    the passing side of it."""
    while abs(passing / failing - 1.0) > EDGE_PRECISION:
        middle = math.sqrt(failing * passing)
        if scan.holds(middle):
            passing = middle
        else:
            failing = middle
    return passing


def _round(value: float, digits: int, direction: Any) -> float:
    unit = 10.0 ** (math.floor(math.log10(value)) - digits + 1)
    scaled = value / unit - 1e-6 if direction is math.ceil else value / unit  # 4300.0000001 is 4300
    return float(f"{direction(scaled) * unit:.{digits}g}")


def _short_passing(scan: DecayScan, low: float, high: float) -> float:
    """``low`` rounded up to the fewest significant digits (3 to 7) whose value is inside the window and
    itself passes, so that the number printed is one a user can take as it is."""
    for digits in range(3, 8):
        candidate = _round(low, digits, math.ceil)
        if candidate <= high and scan.holds(candidate):
            return candidate
    return low


def _check_length(name: str, value: Any) -> None:
    """A count of positions: an integer from 1 to 2^32 (a negative or zero length made an empty or
    meaningless table; one past float64's range stopped the table with an OverflowError)."""
    from pecli.params import excerpt
    from pecli.schemes.base import MAX_LENGTH

    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= MAX_LENGTH:
        raise ConfigError(name, f"must be an integer from 1 to {MAX_LENGTH:,}, got {excerpt(value)}")


def spectrum(scheme: Scheme, *, context: int, train_length: int | None = None) -> Spectrum:
    """The per-pair frequency table of a scheme with frequency pairs, with its summary.

    Parameters
    ----------
    scheme : Scheme
        A scheme with :attr:`~pecli.schemes.base.Capability.FREQUENCIES` (sinusoidal; rope with any
        scaling and p-RoPE).
    context : int
        The context length C: rotations within it are ``C θ_i / 2π``.
    train_length : int, optional
        The training length T: a pair completed a full rotation in training when its wavelength under
        the pre-training frequencies (before any scaling) is at most T; the critical dimension likewise.
    """
    require(scheme, Capability.FREQUENCIES, "wavelengths")
    _check_length("context", context)
    if train_length is not None:
        _check_length("train_length", train_length)
    pairs = scheme.frequency_pairs()
    scaled = pairs.scaled
    inv_freq = np.asarray(pairs.inv_freq, dtype=np.float64)
    original = np.asarray(pairs.original_inv_freq, dtype=np.float64)
    regimes = list(scaled.regimes) if scaled is not None else ["unchanged"] * inv_freq.size
    rotating = pairs.count if pairs.rotating is None else pairs.rotating
    longrope = scaled is not None and scaling_type(scaled.rope_type).per_pair_factors
    short = scaled.short_factor if longrope else None
    long = scaled.long_factor if longrope else None
    # Training (T) ran on the frequencies before any context-extension scaling; p-RoPE is architecture.
    pretraining_inv_freq = scheme.without_extension().frequency_pairs().inv_freq
    pretraining_wavelengths = wavelengths_of(pretraining_inv_freq)
    # On a grid each pair turns with one coordinate, over the positions that coordinate spans.
    spans = scheme.axis_spans()
    reach = np.full(inv_freq.size, float(context)) if spans is None else spans[pairs.axis].astype(np.float64)
    rows = []
    for i, (theta, theta0, wavelength) in enumerate(zip(inv_freq, original, wavelengths_of(inv_freq))):
        regime = regimes[i] if i < rotating else "not rotated (p-RoPE)"
        rows.append(PairRow(
            index=i,
            inv_freq=float(theta),
            wavelength=float(wavelength),
            rotations=float(reach[i] * theta / TWO_PI),
            completed_in_training=None if train_length is None or i >= rotating else bool(pretraining_wavelengths[i] <= train_length),
            original_inv_freq=float(theta0),
            ratio=float(theta / theta0),
            regime=regime,
            short_factor=None if short is None else float(short[i]),
            long_factor=None if long is None else float(long[i]),
            axis=None if pairs.axis is None else pairs.axis_names[int(pairs.axis[i])],
        ))
    summary = _summary(scheme, rows, context, train_length, pretraining_inv_freq)
    if spans is not None:
        summary = dataclasses.replace(summary, axes=axis_shares(pairs, rows, spans))
    configured_base = scaled.original_base if scaled is not None and scaled.original_base is not None else pairs.base
    return Spectrum(
        scheme=scheme.name,
        dim=int(pairs.dim),
        base=float(configured_base),
        context=int(context),
        train_length=train_length,
        pairs=rows,
        summary=summary,
    )


def axis_shares(pairs: Any, rows: list[PairRow], spans: np.ndarray) -> tuple[AxisShare, ...]:
    """Which pairs each coordinate turns, with their wavelengths (M-RoPE: h and w take the middle ones)."""
    shares = []
    for number, name in enumerate(pairs.axis_names):
        own = [row for row in rows if row.axis == name]
        finite = [row.wavelength for row in own if math.isfinite(row.wavelength)]
        shares.append(AxisShare(
            name, tuple(row.index for row in own), max(finite, default=None), min(finite, default=None), int(spans[number]),
        ))
    return tuple(shares)


def _summary(
    scheme: Scheme, rows: list[PairRow], context: int, train_length: int | None, pretraining_inv_freq: np.ndarray
) -> SpectrumSummary:
    """The :class:`SpectrumSummary` of the rows of :func:`spectrum` (without Men et al.'s bound)."""
    pairs = scheme.frequency_pairs()
    finite = np.array([r.wavelength for r in rows if math.isfinite(r.wavelength)])
    facts: dict[str, Any] = {
        "pairs": len(rows),
        "largest_wavelength": float(finite.max()) if finite.size else None,
        "smallest_wavelength": float(finite.min()) if finite.size else None,
        "attention_scaling": float(pairs.attention_scaling),
    }
    if train_length is not None:
        facts["critical_dimension"] = critical_dimension(pretraining_inv_freq, train_length)
        facts["pairs_not_completed_in_training"] = sum(1 for r in rows if r.completed_in_training is False)
    if not scheme.has(Capability.ROTARY):
        # [Fleetwood] and [EulerBlind]: the longest wavelength, 2π·base^((d−2)/d) ≈ 2π·base, is the theoretical limit
        # beyond which the encoding's slowest pair, and with it the position, starts to repeat.
        facts["theoretical_context_limit"] = float(finite.max())
    if scheme.has(Capability.CONTEXT_EXTENSION):
        facts.update(_scaling_facts(scheme, context))
    return SpectrumSummary(**facts)


def _scaling_facts(scheme: Scheme, context: int) -> dict[str, Any]:
    """What the context-extension scaling did, as :class:`SpectrumSummary` fields."""
    pairs = scheme.frequency_pairs()
    scaled = pairs.scaled
    base = None if math.isnan(pairs.base) else float(pairs.base)  # given frequencies have no base
    facts: dict[str, Any] = {"scaling": "none" if scaled is None else scaled.rope_type, "effective_base": base}
    if scaled is None:
        return facts
    if scaled.correction_range is not None:
        facts["yarn_correction_range"] = tuple(float(x) for x in scaled.correction_range)
    if scaled.longrope_factors is not None:
        facts["longrope_factors_in_use"] = scaled.longrope_factors
        facts["longrope_switch"] = f"long factors when the context exceeds {scaled.original_context} tokens, short ones up to it"
    if scaling_type(scaled.rope_type).grows_base:
        facts["dynamic_base_by_length"] = tuple(dynamic_bases(scheme, context))
    facts["notes"] = tuple(scaled.notes)
    return facts


def dynamic_bases(scheme: Scheme, context: int) -> list[LengthBase]:
    """Dynamic NTK's base at doubling sequence lengths from the original length up to ``context``.

    Keys cached at one length were rotated with that length's base: the table shows how far apart
    the bases of a prefill and of a later decoding step can be. ``b' = b·(s·L'/L − (s − 1))^(d/(d−2))``
    (:func:`pecli.schemes.scaling.ntk.dynamic_ntk_base`), with the configured base b, the factor s and
    the original length L of the scheme's scaling.
    """
    pairs = scheme.frequency_pairs()
    scaled = pairs.scaled
    if scaled is None or scaled.original_context is None:
        return []
    original = int(scaled.original_context)
    base = scaled.original_base if scaled.original_base is not None else pairs.base
    lengths, length = [], original
    while length < context:
        lengths.append(length)
        length *= 2
    lengths.append(max(int(context), original))
    return [
        LengthBase(int(n), float(dynamic_ntk_base(base, scaled.factor, pairs.dim, n, original)))
        for n in sorted(set(lengths))
    ]


#: Contexts beyond this make Men et al.'s bound slow (about 7 s at 2^21, 20–30 s at 2^22 on two cores): it is
#: skipped for the context and refused for --target-context.
BOUND_CONTEXT_LIMIT = 1 << 21


def wavelength_report(
    scheme: Scheme, context: int, train_length: int | None = None, target_context: int | None = None
) -> WavelengthReport:
    """Everything ``pecli wavelengths`` reports about ``scheme`` at context C.

    Parameters
    ----------
    scheme : Scheme
        A scheme with frequency pairs; it is taken as configured at ``context`` (:meth:`Scheme.at_length`).
    context : int
        C.
    train_length : int, optional
        T; default the pre-training length of a context-extension scaling, if any.
    target_context : int, optional
        Suggest a base for this context (Men et al. 2024, :func:`base_lower_bound`).

    Notes
    -----
    For rotary schemes up to :data:`BOUND_CONTEXT_LIMIT` tokens, the summary carries Men et al.'s
    bound for C and whether the base in effect (ntk and dynamic change it) meets it.
    """
    require(scheme, Capability.FREQUENCIES, "wavelengths")
    scheme = scheme.at_length(context)
    train = train_length or scheme.training_length
    table = spectrum(scheme, context=context, train_length=train)
    pairs = scheme.frequency_pairs()
    # Men et al.'s bound is about one ladder θ_i = base^(−2i/d) over a 1-D context.
    if scheme.has(Capability.ROTARY) and not scheme.has_cells and context <= BOUND_CONTEXT_LIMIT:
        bound = base_lower_bound(context, pairs.dim)
        if math.isnan(pairs.base):  # given frequencies: whether their own B(m) stays >= 0 up to C
            meets = bool(frequencies_decay(pairs.inv_freq, context, stop_at_negative=True).min() >= 0)
        else:
            meets = long_term_decay_holds(pairs.base, pairs.dim, context)
        table = dataclasses.replace(table, summary=dataclasses.replace(table.summary, base_lower_bound=bound, base_meets_bound=meets))
    if target_context and scheme.has_cells:
        raise ConfigError(
            "target_context", f"Men et al.'s bound is for one ladder of frequencies over a line of positions; "
            f"{scheme.name} turns its pairs over {scheme.position_rank} axes",
        )
    suggested = base_lower_bound(target_context, pairs.dim) if target_context else None
    source = "given" if train_length else scheme.training_length_key if train is not None else None
    return WavelengthReport(scheme, table, suggested, train_length_from=source)
