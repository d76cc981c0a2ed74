"""YaRN: a ramp between θ_i and θ_i / s by rotations in the original length, and an attention factor
0.1 ln s + 1 (Peng et al. 2023; HF ``_compute_yarn_parameters``).

The correction range uses ``original_max_position_embeddings`` (falls back to ``max_position_embeddings``)
and the explicit ``factor`` as is (v4.5x and v5). An intermediate v4.x release replaced ``factor`` by
``max_position_embeddings / original`` whenever ``original`` was given; that rule is not followed.
``factor`` is required (HF's validator requires it). DeepSeek-V2/V3 give ``mscale`` and ``mscale_all_dim``,
from which the attention factor is derived instead.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from pecli.errors import ConfigError
from pecli.numbers import number
from pecli.schemes.scaling.keys import (
    ATTENTION_FACTOR, BETA_FAST, BETA_SLOW, FACTOR, MSCALE, MSCALE_ALL_DIM, ORIGINAL_LENGTH, TRUNCATE,
)
from pecli.schemes.scaling.recipes import ATTENTION_READ_KEYS
from pecli.schemes.scaling.record import (
    Extension, ExtensionStart, RopeModel, ScaledFrequencies, ScalingType, ScalingValue, needs_original_length,
    original_length, scaled_frequencies,
)

YARN_DEFAULTS: dict[str, Any] = {"beta_fast": 32.0, "beta_slow": 1.0, "truncate": True}
"""YaRN defaults (Peng et al. 2023, sec. 3.2; HF ``_compute_yarn_parameters``)."""


def yarn_get_mscale(scale: float, mscale: float = 1.0) -> float:
    """YaRN magnitude factor ``0.1 * mscale * ln(s) + 1`` (1 for ``s <= 1``).

    Parameters
    ----------
    scale : float
        ``s``, the context-extension factor.
    mscale : float
        Multiplier of the log term (1 in the paper; DeepSeek configs set it).

    Returns
    -------
    float

    Notes
    -----
    Source: Peng et al. 2023 (YaRN) eq. 22, ``sqrt(1/t) = 0.1 ln s + 1``; HF ``get_mscale``.
    """
    s = float(scale)
    if s <= 1.0:
        return 1.0
    return 0.1 * float(mscale) * math.log(s) + 1.0


def yarn_attention_factor(
    factor: float,
    *,
    mscale: float | None = None,
    mscale_all_dim: float | None = None,
    attention_factor: float | None = None,
) -> float:
    """YaRN attention scaling applied to cos and sin.

    ``attention_factor`` if given; else ``get_mscale(s, mscale) / get_mscale(s, mscale_all_dim)`` when
    both ``mscale`` and ``mscale_all_dim`` are non-zero (DeepSeek-V2/V3); else ``0.1 ln s + 1``.

    Parameters
    ----------
    factor : float
        ``s``.
    mscale, mscale_all_dim, attention_factor : float, optional

    Returns
    -------
    float

    Notes
    -----
    Source: Peng et al. 2023 (YaRN) sec. 3.4; DeepSeek-V2 ``yarn_get_mscale``; HF ``_compute_yarn_parameters``.
    """
    if attention_factor is not None:
        return float(attention_factor)
    if mscale and mscale_all_dim:
        return float(yarn_get_mscale(factor, mscale) / yarn_get_mscale(factor, mscale_all_dim))
    return yarn_get_mscale(factor)


def yarn_correction_dim(num_rotations: float, rotated_dim: int, base: float, original: int) -> float:
    """Fractional pair index at which a pair turns ``num_rotations`` times over ``original`` positions.

    ``d * ln(L / (2 pi r)) / (2 ln b)``: solves ``L / (2 pi b ** (2 i / d)) = r`` for ``i``.

    Parameters
    ----------
    num_rotations : float
        ``r`` (> 0).
    rotated_dim : int
        ``d``.
    base : float
        ``b`` (> 1).
    original : int
        ``L``, the pre-training context.

    Returns
    -------
    float

    Notes
    -----
    Source: Peng et al. 2023 (YaRN) eq. 17-18; HF ``find_correction_dim``.
    """
    return (rotated_dim * math.log(original / (num_rotations * 2.0 * math.pi))) / (2.0 * math.log(base))


def yarn_correction_range(
    beta_fast: float, beta_slow: float, rotated_dim: int, base: float, original: int, truncate: bool = True
) -> tuple[float, float]:
    """The ramp's pair-index bounds ``(low, high)`` of YaRN.

    ``low = floor(corr(beta_fast))``, ``high = ceil(corr(beta_slow))`` (no rounding if ``truncate`` is
    False), then ``low = max(low, 0)``, ``high = min(high, d - 1)``.

    Parameters
    ----------
    beta_fast, beta_slow : float
        Rotation counts (32 and 1 by default).
    rotated_dim : int
    base : float
    original : int
    truncate : bool

    Returns
    -------
    tuple of float

    Notes
    -----
    Source: HF ``find_correction_range`` (note the clip is to ``d - 1``, not ``d/2 - 1``, as in HF).
    """
    low = yarn_correction_dim(beta_fast, rotated_dim, base, original)
    high = yarn_correction_dim(beta_slow, rotated_dim, base, original)
    if truncate:
        low = math.floor(low)
        high = math.ceil(high)
    return float(max(low, 0)), float(min(high, rotated_dim - 1))


def _validate_yarn(scaling: ScalingValue, rotated_dim: int, max_position_embeddings: int | None) -> None:
    fast, slow = scaling.value("beta_fast"), scaling.value("beta_slow")
    for key, rotations in (("beta_fast", fast), ("beta_slow", slow)):
        if not math.isfinite(rotations * 2.0 * math.pi):  # the correction range takes ln(L / (β · 2π)): ln 0
            raise ConfigError(key, f"{number(rotations)} rotations × 2π overflows float64 (transformers' "
                              "find_correction_dim takes the log of 0); give a number of rotations in the original length")
    for key in ("mscale", "mscale_all_dim"):  # DeepSeek's attention squares get_mscale(s, mscale_all_dim)
        value = scaling.values.get(key)
        if value is not None and scaling.factor is not None and \
                not math.isfinite(yarn_get_mscale(scaling.factor, value) * yarn_get_mscale(scaling.factor, value)):
            raise ConfigError(key, f"{number(value)} gives an attention factor 0.1·{key}·ln(factor) + 1 whose square "
                              "overflows float64")
    if not fast > slow:
        raise ConfigError("beta_fast", f"must be greater than beta_slow (defaults 32 and 1), got beta_fast={fast:g}, "
                          f"beta_slow={slow:g}")
    needs_original_length("yarn")(scaling, rotated_dim, max_position_embeddings)


def _yarn(scaling: ScalingValue, model: RopeModel) -> ScaledFrequencies:
    """``θ'_i = θ_i / s · r_i + θ_i · (1 − r_i)``, ``r_i = clip((i − low) / (high − low), 0, 1)``.

    ``(low, high)`` from :func:`yarn_correction_range`; attention scaling :func:`yarn_attention_factor`
    (Peng et al. 2023; HF ``_compute_yarn_parameters``).
    """
    if model.base <= 1:
        raise ConfigError("base", f"must be > 1 for yarn (its correction range divides by ln base), got {model.base:g}")
    s = scaling.factor
    notes: list[str] = []
    original = original_length(scaling, model, notes)
    if scaling.original_max_position_embeddings is not None and model.max_position_embeddings is not None:
        implicit = model.max_position_embeddings / original
        if implicit not in (1.0, s):
            notes.append(f"factor {s:g} differs from max_position_embeddings/original = {implicit:g}; the explicit "
                         "factor is used (HF v4.5x/v5)")
    low, high = yarn_correction_range(scaling.value("beta_fast"), scaling.value("beta_slow"), model.rotated_dim,
                                      model.base, original, bool(scaling.value("truncate")))
    if low == high:
        high += 0.001  # HF: prevent singularity
    ramp = np.clip((np.arange(model.pairs, dtype=np.float64) - low) / (high - low), 0.0, 1.0)
    extrapolation = 1.0 - ramp
    inv = (1.0 / (s * model.base_powers)) * (1.0 - extrapolation) + model.theta * extrapolation
    regimes = tuple("extrapolated" if r == 0.0 else "interpolated" if r == 1.0 else "blended" for r in ramp)
    attention = yarn_attention_factor(s, mscale=scaling.mscale, mscale_all_dim=scaling.mscale_all_dim,
                                      attention_factor=scaling.attention_factor)
    if scaling.attention_factor is not None:
        notes.append("attention factor given explicitly")
    elif scaling.mscale and scaling.mscale_all_dim:
        notes.append("attention factor get_mscale(s, mscale) / get_mscale(s, mscale_all_dim) (DeepSeek)")
    else:
        notes.append("attention factor 0.1 ln(s) + 1")
    return scaled_frequencies(model, scaling, inv, regimes=regimes, factor=s, original_context=original,
                              attention_scaling=attention, correction_range=(float(low), float(high)), ramp=ramp,
                              notes=tuple(notes))


def _write_yarn(record: ScalingType, start: ExtensionStart) -> dict[str, Any]:
    """YaRN over L₀ with its defaults β_fast, β_slow written out, and its attention factor 0.1 ln s + 1
    (Peng et al. 2023, §3.4) — unless the model carries DeepSeek's ``mscale`` and ``mscale_all_dim``, from
    which transformers derives mscale(s, mscale) / mscale(s, mscale_all_dim) itself."""
    keys: dict[str, Any] = {"rope_type": record.extension.rope_type, "factor": start.factor,
                            "original_max_position_embeddings": start.pretraining,
                            "beta_fast": float(record.defaults["beta_fast"]), "beta_slow": float(record.defaults["beta_slow"])}
    if not (start.carried.get("mscale") and start.carried.get("mscale_all_dim")):
        keys["attention_factor"] = 0.1 * math.log(start.factor) + 1.0
    return {**keys, **start.carried}


YARN = ScalingType(
    "yarn", "YaRN: ramp between θ_i and θ_i / s by rotations in L, attention 0.1 ln s + 1 (Peng et al. 2023)",
    (FACTOR, ORIGINAL_LENGTH, BETA_FAST, BETA_SLOW, MSCALE, MSCALE_ALL_DIM, ATTENTION_FACTOR, TRUNCATE), _yarn,
    required=("factor",), defaults=YARN_DEFAULTS, validate=_validate_yarn, from_original_length=True,
    extension=Extension("yarn", "yarn", "YaRN (Peng et al. 2023): ramp between θ_i and θ_i/s, attention factor "
                        "0.1 ln s + 1", "`rope_type`, `factor`, `original_max_position_embeddings` L₀, "
                        "`beta_fast` 32, `beta_slow` 1, `attention_factor`; `max_position_embeddings` N", _write_yarn,
                        order=0, carries=("mscale", *ATTENTION_READ_KEYS)),
)
