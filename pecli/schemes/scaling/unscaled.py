"""No scaling: RoPE's own frequencies ``θ_i = b^(−2i/d)`` (HF's ``rope_type`` ``default``, pecli's ``none``).

Its record is also what ``pecli extend`` proposes as a base increase (method ``base``): a larger
``rope_theta`` is not a scaling, but it is what reaching a longer context without one means.
"""
from __future__ import annotations

import numpy as np

from pecli.schemes.frequencies import geometric_inv_freq
from pecli.schemes.scaling.keys import BASE, check_rotated_dim
from pecli.schemes.scaling.recipes import write_nothing
from pecli.schemes.scaling.record import (
    Extension, RopeModel, ScaledFrequencies, ScalingType, ScalingValue, scaled_frequencies,
)


def default_inv_freq(base: float, rotated_dim: int) -> np.ndarray:
    """Unscaled RoPE inverse frequencies ``theta_i = base ** (-2 i / d)``, ``i = 0 .. d/2 - 1``.

    Parameters
    ----------
    base : float
        RoPE base ``b`` (``rope_theta``), > 0.
    rotated_dim : int
        ``d``, the rotated channels (even). Partial rotary: pass ``int(head_dim * partial_rotary_factor)``;
        the exponent runs over ``d``, not over ``head_dim``.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(d/2,)``, computed as ``1 / b ** (2 i / d)`` like HF.

    Notes
    -----
    Source: Su et al. 2021 (RoFormer) eq. 15; HF ``_compute_default_rope_parameters``.
    """
    return geometric_inv_freq(check_rotated_dim(rotated_dim), BASE.coerce(base))


def _no_scaling(scaling: ScalingValue, model: RopeModel) -> ScaledFrequencies:
    """``θ_i`` (HF ``_compute_default_rope_parameters``)."""
    return scaled_frequencies(model, scaling, model.theta.copy(), regimes=("unchanged",) * model.pairs)


NO_SCALING = ScalingType(
    "none", "no scaling: θ_i = base^(−2i/d)", (), _no_scaling, hf_name="default", scales=False, on_ladder=True,
    extension=Extension("base", "default", "a larger base: every base above it meets Men et al. 2024's bound for N "
                        "(up to 2^21 tokens)", "`rope_theta`, no scaling; N", write_nothing, order=3, raises_base=True),
)
"""The record of no scaling: what a model without a ``rope_scaling`` block, or with ``rope_type: default``, has."""
