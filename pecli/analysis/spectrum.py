"""The frequency/wavelength table of sinusoidal and rotary encodings (``pecli wavelengths``).

Pair i of a sinusoidal or rotary encoding turns at the angular frequency ``θ_i`` radians per token;
its wavelength is ``λ_i = 2π/θ_i`` tokens (seeds 001 and 003: from 2π up to about 2π·base). This
module lays out, per pair, the frequency, the wavelength, how many turns fit in a context, whether
the training positions completed a turn, and what a context-extension scaling did to the pair; and
two bounds from the literature that relate the base to the context length.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from pecli.errors import PecliError
from pecli.schemes.base import Capability, Scheme, require
from pecli.schemes.rope_scaling import dynamic_ntk_base

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
        The longest wavelength of an additive sinusoid, past which its slowest pair repeats (seeds 001/003).
    scaling, effective_base:
        The context-extension scaling (``"none"`` without one) and the base it leaves in effect.
    yarn_correction_range, longrope_factors_in_use, longrope_switch, dynamic_base_by_length:
        What yarn, longrope and dynamic NTK did.
    notes:
        The scaling's notes.
    base_lower_bound, base_meets_bound:
        Men et al.'s bound for the context (rotary schemes) and whether the base in effect meets it.
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
        }
        out.update({key: value for key, value in optional.items() if value is not None})
        return out


@dataclass(frozen=True)
class Spectrum:
    """The per-pair table and its summary for one scheme at one context length."""

    scheme: str
    dim: int
    base: float
    context: int
    train_length: int | None
    pairs: list[PairRow]
    summary: SpectrumSummary


@dataclass(frozen=True)
class WavelengthReport:
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
            "pairs": [dataclasses.asdict(row) for row in self.spectrum.pairs],
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
    theta = np.power(float(base), -np.arange(0, dim, 2, dtype=np.float64) / dim)
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
    """Whether ``B(m) ≥ 0`` for every m in [0, context] (see :func:`long_term_decay`)."""
    return bool(long_term_decay(base, dim, context, stop_at_negative=True).min() >= 0.0)


@dataclass(frozen=True)
class BaseBound:
    """Men et al.'s bound on the base for one context length."""

    context: int
    dim: int
    smallest_base: float | None
    every_base_above: float | None
    steps_per_decade: int
    checked_up_to: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "context": self.context, "dim": self.dim, "smallest_base": self.smallest_base,
            "every_base_above": self.every_base_above, "steps_per_decade": self.steps_per_decade,
            "checked_up_to": self.checked_up_to,
        }


def base_lower_bound(context: int, dim: int, *, steps_per_decade: int = 200, decades_past: float = 1.0) -> BaseBound:
    """The smallest RoPE base whose long-term decay holds up to ``context``, and the base above which every base does.

    Parameters
    ----------
    context : int
        Context length L: ``B(m) ≥ 0`` is required for every ``m ≤ L``.
    dim : int
        The rotated head dimension d.
    steps_per_decade : int
        Resolution of the scan over bases (log-spaced); each boundary found is then refined by
        bisection to 0.1 % and rounded up to a short number that itself passes. Passing islands
        narrower than a grid step below the smallest base found can be missed: it is the smallest
        base found on the grid.
    decades_past : float
        How far above the last failing base the scan continues to look for another failure.

    Notes
    -----
    ``B(m) = Σ_{i=0}^{d/2−1} cos(m θ_i)`` with ``θ_i = b^(−2i/d)`` (Men et al. 2024, eq. 9 and
    Table 1: the bound is about 4.3e3 for 1K tokens and 8.4e4 for 8K with d = 128; None when no base
    up to 1e30 satisfies it, as for d = 2 where B(m) = cos m). The condition is
    not monotone in the base: some bases above the smallest one fail again, so both the smallest base
    that satisfies it and the base above which every scanned base does are reported. The scan covers
    bases from 2 upwards on a log grid; a failing island narrower than one grid step could be missed.

    References
    ----------
    Men et al., "Base of RoPE Bounds Context Length", NeurIPS 2024.
    """
    if context < 1 or dim < 2 or dim % 2:
        raise PecliError(f"base bound needs a positive context and an even dim >= 2, got {context}, {dim}")
    step = 10.0 ** (1.0 / steps_per_decade)
    base, smallest, last_fail, limit = 2.0, None, 2.0, math.inf
    previous = base / step
    while base <= limit and base < 1e30:
        if long_term_decay_holds(base, dim, context):
            if smallest is None:
                smallest = _refine(previous, base, dim, context, want_first_pass=True)
                limit = base * 10.0**decades_past
        else:
            last_fail = base
            if smallest is not None:
                limit = base * 10.0**decades_past
        previous, base = base, base * step
    if smallest is None:  # d = 2: B(m) = cos m turns negative at m = 2 whatever the base
        return BaseBound(context, dim, None, None, steps_per_decade, previous)
    every_above = smallest if last_fail < smallest else _refine(last_fail, last_fail * step, dim, context, want_first_pass=True)
    smallest = _round_passing(smallest, dim, context)
    return BaseBound(context, dim, smallest, max(smallest, _round_up(every_above, 3)), steps_per_decade, previous)


def _round_up(value: float, digits: int) -> float:
    unit = 10.0 ** (math.floor(math.log10(value)) - digits + 1)
    return math.ceil(value / unit - 1e-9) * unit


def _round_passing(base: float, dim: int, context: int) -> float:
    """``base`` rounded up to the fewest significant digits (3 to 6) whose value itself passes, so that
    the number printed is one a user can take as it is."""
    for digits in range(3, 7):
        candidate = _round_up(base, digits)
        if long_term_decay_holds(candidate, dim, context):
            return candidate
    return base


def _refine(failing: float, passing: float, dim: int, context: int, *, want_first_pass: bool) -> float:
    """Bisect (in log space) between a failing and a passing base down to 0.1 %."""
    low, high = failing, passing
    while high / low > 1.001:
        middle = math.sqrt(low * high)
        if long_term_decay_holds(middle, dim, context):
            high = middle
        else:
            low = middle
    return high


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
    pairs = scheme.frequency_pairs()
    scaled = pairs.scaled
    inv_freq = np.asarray(pairs.inv_freq, dtype=np.float64)
    original = np.asarray(pairs.original_inv_freq, dtype=np.float64)
    regimes = list(scaled.regimes) if scaled is not None else ["unchanged"] * inv_freq.size
    rotating = pairs.count if pairs.rotating is None else pairs.rotating
    longrope = scaled is not None and scaled.rope_type == "longrope"
    short = scaled.short_factor if longrope else None
    long = scaled.long_factor if longrope else None
    # Training (T) ran on the frequencies before any context-extension scaling; p-RoPE is architecture.
    pretraining_inv_freq = scheme.without_extension().frequency_pairs().inv_freq
    pretraining_wavelengths = wavelengths_of(pretraining_inv_freq)
    rows = []
    for i, (theta, theta0, wavelength) in enumerate(zip(inv_freq, original, wavelengths_of(inv_freq))):
        regime = regimes[i] if i < rotating else "not rotated (p-RoPE)"
        rows.append(PairRow(
            index=i,
            inv_freq=float(theta),
            wavelength=float(wavelength),
            rotations=float(context * theta / TWO_PI),
            completed_in_training=None if train_length is None or i >= rotating else bool(pretraining_wavelengths[i] <= train_length),
            original_inv_freq=float(theta0),
            ratio=float(theta / theta0),
            regime=regime,
            short_factor=None if short is None else float(short[i]),
            long_factor=None if long is None else float(long[i]),
        ))
    summary = _summary(scheme, rows, context, train_length, pretraining_inv_freq)
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
        # Seeds 001/003: the longest wavelength, 2π·base^((d−2)/d) ≈ 2π·base, is the theoretical limit
        # beyond which the encoding's slowest pair, and with it the position, starts to repeat.
        facts["theoretical_context_limit"] = float(finite.max())
    if scheme.has(Capability.CONTEXT_EXTENSION):
        facts.update(_scaling_facts(scheme, context))
    return SpectrumSummary(**facts)


def _scaling_facts(scheme: Scheme, context: int) -> dict[str, Any]:
    """What the context-extension scaling did, as :class:`SpectrumSummary` fields."""
    pairs = scheme.frequency_pairs()
    scaled = pairs.scaled
    facts: dict[str, Any] = {"scaling": "none" if scaled is None else scaled.rope_type, "effective_base": float(pairs.base)}
    if scaled is None:
        return facts
    if scaled.correction_range is not None:
        facts["yarn_correction_range"] = tuple(float(x) for x in scaled.correction_range)
    if scaled.longrope_factors is not None:
        facts["longrope_factors_in_use"] = scaled.longrope_factors
        facts["longrope_switch"] = f"long factors when the context exceeds {scaled.original_context} tokens, short ones up to it"
    if scaled.rope_type == "dynamic":
        facts["dynamic_base_by_length"] = tuple(dynamic_bases(scheme, context))
    facts["notes"] = tuple(scaled.notes)
    return facts


def dynamic_bases(scheme: Scheme, context: int) -> list[LengthBase]:
    """Dynamic NTK's base at doubling sequence lengths from the original length up to ``context``.

    Keys cached at one length were rotated with that length's base: the table shows how far apart
    the bases of a prefill and of a later decoding step can be. ``b' = b·(s·L'/L − (s − 1))^(d/(d−2))``
    (:func:`pecli.schemes.rope_scaling.dynamic_ntk_base`), with the configured base b, the factor s and
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


#: Contexts beyond this make Men et al.'s bound slow (seconds per million tokens); it is then skipped.
BOUND_CONTEXT_LIMIT = 1 << 22


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
    train = train_length or scheme.pretraining_length
    table = spectrum(scheme, context=context, train_length=train)
    pairs = scheme.frequency_pairs()
    if scheme.has(Capability.ROTARY) and context <= BOUND_CONTEXT_LIMIT:
        bound = base_lower_bound(context, pairs.dim)
        meets = long_term_decay_holds(pairs.base, pairs.dim, context)
        table = dataclasses.replace(table, summary=dataclasses.replace(table.summary, base_lower_bound=bound, base_meets_bound=meets))
    suggested = base_lower_bound(target_context, pairs.dim) if target_context else None
    return WavelengthReport(scheme, table, suggested)
