"""The frequency/wavelength table of sinusoidal and rotary encodings (``pecli wavelengths``).

Pair i of a sinusoidal or rotary encoding turns at the angular frequency ``θ_i`` radians per token;
its wavelength is ``λ_i = 2π/θ_i`` tokens (seeds 001 and 003: from 2π up to about 2π·base). This
module lays out, per pair, the frequency, the wavelength, how many turns fit in a context, whether
the training positions completed a turn, and what a context-extension scaling did to the pair; and
two bounds from the literature that relate the base to the context length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pecli.errors import PecliError
from pecli.schemes.base import Scheme
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
class Spectrum:
    """The per-pair table and its summary for one scheme at one context length."""

    scheme: str
    dim: int
    base: float
    context: int
    train_length: int | None
    pairs: list[PairRow]
    summary: dict[str, Any] = field(default_factory=dict)


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
    """The per-pair frequency table of a sinusoidal or rotary scheme, with its summary.

    Parameters
    ----------
    scheme : Scheme
        A ``sinusoidal`` or ``rope`` scheme (rope with any scaling and p-RoPE).
    context : int
        The context length C: rotations within it are ``C θ_i / 2π``.
    train_length : int, optional
        The training length T: a pair completed a full rotation in training when its wavelength under
        the pre-training frequencies (before any scaling) is at most T; the critical dimension likewise.
    """
    inv_freq = getattr(scheme, "inv_freq", None)
    if inv_freq is None:
        raise PecliError(f"scheme {scheme.name!r} has no frequencies; wavelengths works with sinusoidal and rope")
    inv_freq = np.asarray(inv_freq, dtype=np.float64)
    original = np.asarray(getattr(scheme, "original_inv_freq", inv_freq), dtype=np.float64)
    frequencies = getattr(scheme, "frequencies", None)
    regimes = list(frequencies.regimes) if frequencies is not None else ["unchanged"] * inv_freq.size
    rotating = getattr(scheme, "rotating_pairs", inv_freq.size)
    short = getattr(scheme, "short_factor", None) if frequencies is not None and frequencies.rope_type == "longrope" else None
    long = getattr(scheme, "long_factor", None) if short is not None else None
    # Training (T) ran on the frequencies before any context-extension scaling; p-RoPE is architecture.
    pretraining_wavelengths = wavelengths_of(scheme.without_extension().inv_freq)
    rows = []
    for i, (theta, theta0, wavelength) in enumerate(zip(inv_freq, original, wavelengths_of(inv_freq))):
        trained_wavelength = pretraining_wavelengths[i]
        regime = regimes[i] if i < rotating else "not rotated (p-RoPE)"
        rows.append(PairRow(
            index=i,
            inv_freq=float(theta),
            wavelength=float(wavelength),
            rotations=float(context * theta / TWO_PI),
            completed_in_training=None if train_length is None or i >= rotating else bool(trained_wavelength <= train_length),
            original_inv_freq=float(theta0),
            ratio=float(theta / theta0),
            regime=regime,
            short_factor=None if short is None else float(short[i]),
            long_factor=None if long is None else float(long[i]),
        ))
    finite = np.array([r.wavelength for r in rows if math.isfinite(r.wavelength)])
    dim = int(getattr(scheme, "rotated_dim", getattr(scheme, "dim")))
    summary: dict[str, Any] = {
        "pairs": len(rows),
        "largest_wavelength": float(finite.max()) if finite.size else None,
        "smallest_wavelength": float(finite.min()) if finite.size else None,
        "attention_scaling": float(getattr(scheme, "attention_scaling", 1.0)),
    }
    if train_length is not None:
        summary["critical_dimension"] = critical_dimension(scheme.without_extension().inv_freq, train_length)
        summary["pairs_not_completed_in_training"] = sum(1 for r in rows if r.completed_in_training is False)
    if scheme.name == "sinusoidal":
        # Seeds 001/003: the longest wavelength, 2π·base^((d−2)/d) ≈ 2π·base, is the theoretical limit
        # beyond which positions start to repeat on the slowest pair.
        summary["theoretical_context_limit"] = float(finite.max())
    if frequencies is not None:
        summary["scaling"] = frequencies.rope_type
        summary["effective_base"] = float(frequencies.base)
        if frequencies.correction_range is not None:
            summary["yarn_correction_range"] = [float(x) for x in frequencies.correction_range]
        if frequencies.longrope_factors is not None:
            summary["longrope_factors_in_use"] = frequencies.longrope_factors
            summary["longrope_switch"] = (
                f"long factors when the context exceeds {frequencies.original_context} tokens, short ones up to it"
            )
        if frequencies.rope_type == "dynamic":
            summary["dynamic_base_by_length"] = dynamic_bases(scheme, context)
        if frequencies.notes:
            summary["notes"] = list(frequencies.notes)
    return Spectrum(
        scheme=scheme.name,
        dim=dim,
        base=float(getattr(scheme, "base")),
        context=int(context),
        train_length=train_length,
        pairs=rows,
        summary=summary,
    )


def dynamic_bases(scheme: Scheme, context: int) -> list[dict[str, float]]:
    """Dynamic NTK's base at doubling sequence lengths from the original length up to ``context``.

    Keys cached at one length were rotated with that length's base: the table shows how far apart
    the bases of a prefill and of a later decoding step can be.
    """
    original = scheme.max_position_embeddings or scheme.original_max_position
    if original is None:
        return []
    lengths, length = [], int(original)
    while length < context:
        lengths.append(length)
        length *= 2
    lengths.append(max(int(context), int(original)))
    rows = []
    for n in sorted(set(lengths)):
        base = dynamic_ntk_base(scheme.base, scheme.factor, scheme.rotated_dim, n, int(original))
        rows.append({"length": int(n), "base": float(base)})
    return rows
