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
from typing import Any

import numpy as np

from pecli.errors import ConfigError
from pecli.notebook import Tabular
from pecli.schemes.base import Capability, Scheme, require
from pecli.schemes.scaling.ntk import dynamic_ntk_base
from pecli.schemes.scaling.registry import scaling_type
from pecli.numbers import integer, number
from pecli.wavelengths.base_bound import base_lower_bound
from pecli.wavelengths.bound_search import BaseBound, frequencies_decay, long_term_decay_holds

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
