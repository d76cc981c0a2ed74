"""The entry point: a scaling's inverse frequencies for a model, :func:`compute_inv_freq`.

It validates the scaling (:meth:`~pecli.schemes.scaling.value.RopeScaling.validated`) and applies the
rule of its type's record (each documented with its formula in its own module).
"""
from __future__ import annotations

from pecli.errors import ConfigError
from pecli.schemes.scaling.keys import BASE, CONTEXT, MODEL_LENGTH
from pecli.schemes.scaling.record import RopeModel, ScaledFrequencies
from pecli.schemes.scaling.registry import SCALINGS
from pecli.schemes.scaling.value import RopeScaling


def compute_inv_freq(
    *,
    base: float,
    rotated_dim: int,
    scaling: RopeScaling | None = None,
    max_position_embeddings: int | None = None,
    context: int | None = None,
    ladder: tuple[float, ...] | None = None,
) -> ScaledFrequencies:
    """Inverse frequencies of RoPE under a scaling, as HF transformers computes them, in float64.

    Validates ``scaling`` (:meth:`RopeScaling.validate`) and applies its type's rule (the ``compute``
    of its record in :data:`SCALINGS`, each documented with its formula).

    Parameters
    ----------
    base : float
        RoPE base (``rope_theta``).
    rotated_dim : int
        ``d = int(head_dim * partial_rotary_factor)``, even.
    scaling : RopeScaling, optional
        None means no scaling.
    max_position_embeddings : int, optional
        The model's ``max_position_embeddings`` (dynamic's ``L``; yarn/longrope fallback for ``L``;
        longrope's ``f``).
    context : int, optional
        Current sequence length (dynamic, longrope). None: dynamic does not grow, longrope uses the short
        factors (HF's ``seq_len=None`` at init).
    ladder : tuple of float, optional
        The unscaled frequencies, given instead of ``base^(−2i/d)`` (``--inv-freq``); only the scalings
        that act on the frequencies themselves take them (none, linear): the others derive theirs from
        the base.

    Returns
    -------
    ScaledFrequencies

    Raises
    ------
    ConfigError
        Bad input; see :meth:`RopeScaling.validate`.

    Notes
    -----
    Source: HF transformers ``modeling_rope_utils.py`` (``_compute_*_parameters``); each type's module
    says where versions differ.
    """
    scaling = RopeScaling() if scaling is None else scaling
    if not isinstance(scaling, RopeScaling):
        raise ConfigError("rope_scaling", f"must be a RopeScaling, got {type(scaling).__name__}")
    scaling = scaling.validated(rotated_dim=rotated_dim, max_position_embeddings=max_position_embeddings)
    if ladder is not None and not scaling.record.on_ladder:
        on_ladder = " or ".join(name for name, record in SCALINGS.items() if record.on_ladder)
        raise ConfigError("inv_freq", f"replaces the base^(-2i/d) ladder, from which scaling {scaling.rope_type} "
                          f"computes its frequencies; with --inv-freq use scaling {on_ladder}")
    model = RopeModel(
        base=BASE.coerce(base),
        rotated_dim=int(rotated_dim),
        max_position_embeddings=None if max_position_embeddings is None else MODEL_LENGTH.coerce(max_position_embeddings),
        context=None if context is None else CONTEXT.coerce(context),
        ladder=None if ladder is None else tuple(float(v) for v in ladder),
    )
    return scaling.record.compute(scaling, model)
