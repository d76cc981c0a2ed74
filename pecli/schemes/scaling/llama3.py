"""Llama 3.1's scaling: keep the short wavelengths, divide the long ones by s, blend between (Meta 2024;
HF ``_compute_llama3_parameters``).

HF requires ``low_freq_factor``, ``high_freq_factor`` and ``original_max_position_embeddings``; pecli
supplies Llama 3.1's values 1 and 4 when absent. Without an original length the rule takes
``max_position_embeddings``, as transformers 5's ``standardize_rope_params`` sets it, and Llama 3.1's
8192 only when the model's length is unknown too. An original length not below
``max_position_embeddings`` is computed as given, with a note: transformers warns and computes.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from pecli.errors import ConfigError
from pecli.schemes.scaling.keys import FACTOR, HIGH_FREQ_FACTOR, LOW_FREQ_FACTOR, ORIGINAL_LENGTH
from pecli.schemes.scaling.recipes import ATTENTION_READ_KEYS
from pecli.schemes.scaling.record import (
    Extension, ExtensionStart, RopeModel, ScaledFrequencies, ScalingType, ScalingValue, original_length,
    scaled_frequencies,
)

LLAMA3_DEFAULTS: dict[str, Any] = {
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}
"""Llama 3.1's values (Meta ``apply_scaling``), supplied by pecli when a llama3 block omits them."""


def _validate_llama3(scaling: ScalingValue, rotated_dim: int, max_position_embeddings: int | None) -> None:
    low, high = scaling.value("low_freq_factor"), scaling.value("high_freq_factor")
    if high < low:  # equal factors are accepted, as HF does (Llama 4 Scout): the band edges coincide
        raise ConfigError("high_freq_factor", f"must be at least low_freq_factor, got high_freq_factor={high:g}, "
                          f"low_freq_factor={low:g}")


def _llama3(scaling: ScalingValue, model: RopeModel) -> ScaledFrequencies:
    """By wavelength ``w_i = 2π / θ_i``: ``w_i < L / high`` keeps ``θ_i``, ``w_i > L / low`` gives ``θ_i / s``,
    between them ``(1 − g) θ_i / s + g θ_i`` with ``g = (L / w_i − low) / (high − low)`` (Meta ``apply_scaling``).
    ``low == high`` (Llama 4 Scout) leaves no band between the edges: a sharp cut at ``L / low``.
    """
    s = scaling.factor
    low, high = float(scaling.value("low_freq_factor")), float(scaling.value("high_freq_factor"))
    notes = [f"{key} defaulted to {default}" for key, default in LLAMA3_DEFAULTS.items()
             if scaling.values.get(key) is None and (key != ORIGINAL_LENGTH.name or not model.max_position_embeddings)]
    if model.max_position_embeddings:  # transformers 5's standardize_rope_params: the model's length if none given
        original = original_length(scaling, model, notes)
    else:
        original = scaling.value(ORIGINAL_LENGTH.name)
    if model.max_position_embeddings is not None and original >= model.max_position_embeddings:
        notes.append(f"original_max_position_embeddings {original} is not below max_position_embeddings "
                     f"{model.max_position_embeddings}: transformers warns and computes, as here")
    theta = model.theta
    wavelength = 2.0 * math.pi / theta
    divided = wavelength > original / low
    unchanged = wavelength < original / high
    medium = ~divided & ~unchanged
    if high == low and medium.any():  # HF divides 0 by 0 there: NaN frequencies
        raise ConfigError("high_freq_factor", f"equals low_freq_factor ({low:g}) and a wavelength falls exactly on the "
                          "band edge original / low: the smoothing divides by zero (transformers gives NaN)")
    with np.errstate(divide="ignore", invalid="ignore"):
        smooth = (original / wavelength - low) / (high - low) if high != low else np.zeros_like(wavelength)
    inv = np.where(divided, theta / s, theta)
    inv = np.where(medium, (1.0 - smooth) * inv / s + smooth * inv, inv)
    regimes = tuple("divided" if dv else "unchanged" if un else "smoothed" for dv, un in zip(divided, unchanged))
    ramp = np.where(divided, 1.0, np.where(unchanged, 0.0, 1.0 - smooth))
    return scaled_frequencies(model, scaling, inv, regimes=regimes, factor=s, original_context=int(original), ramp=ramp,
                              notes=tuple(notes))


def _write_llama3(record: ScalingType, start: ExtensionStart) -> dict[str, Any]:
    """Llama 3.1's blend as it ships (low_freq_factor 1, high_freq_factor 4) over L₀."""
    return {"rope_type": record.extension.rope_type, "factor": start.factor,
            "low_freq_factor": float(record.defaults["low_freq_factor"]),
            "high_freq_factor": float(record.defaults["high_freq_factor"]),
            "original_max_position_embeddings": start.pretraining, **start.carried}


LLAMA3 = ScalingType(
    "llama3", "Llama 3.1: keep short wavelengths, divide long ones by s, blend between (Meta 2024)",
    (FACTOR, ORIGINAL_LENGTH, LOW_FREQ_FACTOR, HIGH_FREQ_FACTOR), _llama3, required=("factor",),
    defaults=LLAMA3_DEFAULTS, validate=_validate_llama3, from_original_length=True,
    extension=Extension("llama3", "llama3", "Llama 3.1's scaling (Meta 2024)", "`factor`, `low_freq_factor` 1, "
                        "`high_freq_factor` 4, `original_max_position_embeddings` L₀; N", _write_llama3, order=1,
                        carries=ATTENTION_READ_KEYS),
)
