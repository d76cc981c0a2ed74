"""Linear scaling (position interpolation): ``θ_i / s`` (kaiokendev 2023; Chen et al. 2023).

Every position is divided by the factor s, so a model trained on L positions sees N = s·L positions
inside the range it was trained on. HF ``_compute_linear_scaling_rope_parameters``.
"""
from __future__ import annotations

from pecli.schemes.scaling.keys import FACTOR
from pecli.schemes.scaling.recipes import ATTENTION_READ_KEYS, write_factor
from pecli.schemes.scaling.record import (
    Extension, RopeModel, ScaledFrequencies, ScalingType, ScalingValue, scaled_frequencies, scaled_or_unchanged,
)


def _linear(scaling: ScalingValue, model: RopeModel) -> ScaledFrequencies:
    """``θ_i / s`` (kaiokendev; Chen et al. 2023, position interpolation)."""
    s = scaling.factor
    inv = model.theta / s
    return scaled_frequencies(model, scaling, inv, regimes=scaled_or_unchanged(inv, model.theta), factor=s)


LINEAR = ScalingType(
    "linear", "position interpolation: θ_i / s (kaiokendev; Chen et al. 2023)", (FACTOR,), _linear,
    required=("factor",), on_ladder=True,
    extension=Extension("linear", "linear", "position interpolation (Chen et al. 2023): θ_i / s", "`factor`; N",
                        write_factor, order=4, carries=ATTENTION_READ_KEYS),
)
