"""LongRoPE: per-pair factors fitted for the model, short ones up to the original length and long ones past
it (Ding et al. 2024; Microsoft Phi-3; HF ``_compute_longrope_parameters``).

``original_max_position_embeddings`` (the caller's top-level value, which wins as in HF) falls back to
``max_position_embeddings``; the attention factor uses the explicit ``factor`` if given, else
``max_position_embeddings / original`` (v5; v4.5x always used the ratio when a top-level original was set
-- identical for shipped Phi-3 configs, which have no ``factor``). HF's legacy name for it is ``su``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from pecli.errors import ConfigError
from pecli.schemes.scaling.keys import ATTENTION_FACTOR, FACTOR, LONG_FACTOR, ORIGINAL_LENGTH, SHORT_FACTOR
from pecli.schemes.scaling.recipes import ATTENTION_READ_KEYS
from pecli.schemes.scaling.record import (
    Extension, ExtensionStart, RopeModel, ScaledFrequencies, ScalingType, ScalingValue, needs_original_length,
    original_length, scaled_frequencies,
)


def longrope_attention_factor(factor: float, original: int) -> float:
    """LongRoPE attention scaling ``sqrt(1 + ln f / ln L)`` (1 when ``f <= 1``).

    Parameters
    ----------
    factor : float
        ``f`` (HF: ``max_position_embeddings / original`` unless ``factor`` is set).
    original : int
        ``L``, the pre-training context.

    Returns
    -------
    float

    Notes
    -----
    Source: Microsoft Phi-3 ``Phi3LongRoPEScaledRotaryEmbedding``; HF ``_compute_longrope_parameters``.
    """
    f = float(factor)
    if f <= 1.0:
        return 1.0
    return math.sqrt(1.0 + math.log(f) / math.log(original))


def _validate_longrope(scaling: ScalingValue, rotated_dim: int, max_position_embeddings: int | None) -> None:
    half = rotated_dim // 2
    for key in ("short_factor", "long_factor"):
        count = len(scaling.values[key])
        if count != half:
            raise ConfigError(key, f"must have rotated_dim/2 = {half} entries, got {count}")
    needs_original_length("longrope")(scaling, rotated_dim, max_position_embeddings)
    if (scaling.attention_factor is None and scaling.factor is None and max_position_embeddings is None):
        raise ConfigError("max_position_embeddings", "longrope needs it (or factor, or attention_factor) for the "
                          "attention factor sqrt(1 + ln f / ln original), f = max_position_embeddings / original")


def _longrope(scaling: ScalingValue, model: RopeModel) -> ScaledFrequencies:
    """``θ'_i = 1 / (e_i · b^(2i/d))``, ``e`` the long factors once the context exceeds ``L`` (strictly),
    else the short ones; attention scaling :func:`longrope_attention_factor` (Phi-3; HF
    ``_compute_longrope_parameters``).
    """
    notes: list[str] = []
    original = original_length(scaling, model, notes)
    if scaling.factor is not None:
        f = scaling.factor
    elif model.max_position_embeddings is not None:
        f = model.max_position_embeddings / original
    else:  # only reachable with an explicit attention_factor (the validation guarantees it)
        f = None
    if scaling.attention_factor is not None:
        attention = scaling.attention_factor
        notes.append("attention factor given explicitly")
    else:
        attention = longrope_attention_factor(f, original)
    use_long = model.context is not None and model.context > original
    which = "long" if use_long else "short"
    if model.context is None:
        notes.append("short factors: no context given")
    else:
        notes.append(f"{which} factors: context {model.context} {'>' if use_long else '<='} original {original}")
    extension = np.asarray(scaling.long_factor if use_long else scaling.short_factor, dtype=np.float64)
    inv = 1.0 / (extension * model.base_powers)
    return scaled_frequencies(model, scaling, inv, regimes=(which,) * model.pairs, factor=f, original_context=original,
                              attention_scaling=attention, longrope_factors=which, short_factor=scaling.short_factor,
                              long_factor=scaling.long_factor, notes=tuple(notes))


def _write_longrope(record: ScalingType, start: ExtensionStart) -> dict[str, Any]:
    """The model's own LongRoPE block (its fitted factors) with ``factor`` s: its attention factor becomes
    √(1 + ln s / ln L₀)."""
    return {**start.own, "factor": start.factor, **start.carried}


LONGROPE = ScalingType(
    "longrope", "LongRoPE: per-pair factors, short up to L and long past it (Ding et al. 2024; Phi-3)",
    (SHORT_FACTOR, LONG_FACTOR, FACTOR, ATTENTION_FACTOR, ORIGINAL_LENGTH), _longrope,
    required=("short_factor", "long_factor"), validate=_validate_longrope, reads_context=True,
    from_original_length=True, per_pair_factors=True,
    extension=Extension("longrope", "longrope", "only for a model that carries LongRoPE factors (Phi-3): its own "
                        "factors", "`factor` s; N", _write_longrope, order=5, carries=ATTENTION_READ_KEYS,
                        reuses=("short_factor", "long_factor")),
)
