"""NTK-aware scalings: a larger base, fixed (``ntk``) or growing with the context (``dynamic``).

* ``ntk`` is pecli's static NTK-aware scaling (bloc97, Reddit r/LocalLLaMA 2023):
  ``b' = b * factor ** (d / (d - 2))``. Current HF has no static ntk type (a short-lived v4.4x
  ``_compute_ntk_parameters`` used this same rule), so transformers does not read it.
* ``dynamic`` (emozilla 2023; HF ``_compute_dynamic_ntk_parameters``): the original length is
  ``max_position_embeddings`` (as in every HF version; HF v4.4x accepted but ignored
  ``original_max_position_embeddings``). pecli uses the block's ``original_max_position_embeddings``
  only when ``max_position_embeddings`` is not given.
"""
from __future__ import annotations

from pecli.errors import ConfigError
from pecli.schemes.frequencies import geometric_inv_freq
from pecli.schemes.scaling.keys import BASE, CONTEXT, FACTOR, MODEL_LENGTH, ORIGINAL_LENGTH, check_rotated_dim
from pecli.schemes.scaling.recipes import ATTENTION_READ_KEYS, write_factor
from pecli.schemes.scaling.record import (
    Extension, RopeModel, ScaledFrequencies, ScalingType, ScalingValue, scaled_frequencies, scaled_or_unchanged,
)


def ntk_base(base: float, factor: float, rotated_dim: int) -> float:
    """Static NTK-aware base ``b' = b * s ** (d / (d - 2))``.

    Chosen so that the lowest frequency ``theta_{d/2-1}`` is divided by ``s`` exactly while
    ``theta_0 = 1`` is untouched.

    Parameters
    ----------
    base, factor : float
        ``b`` and ``s`` (>= 1).
    rotated_dim : int
        ``d`` (even, >= 4).

    Returns
    -------
    float

    Notes
    -----
    Source: bloc97, "NTK-Aware Scaled RoPE", r/LocalLLaMA (2023); HF v4.4x ``_compute_ntk_parameters``.
    """
    d = check_rotated_dim(rotated_dim, minimum=4)
    return BASE.coerce(base) * FACTOR.coerce(factor) ** (d / (d - 2))


def dynamic_ntk_base(base: float, factor: float, rotated_dim: int, seq_len: int, original: int) -> float:
    """Dynamic NTK base: ``b' = b * (s * L' / L - (s - 1)) ** (d / (d - 2))`` for ``L' > L``, else ``b``.

    Parameters
    ----------
    base, factor : float
        ``b`` and ``s`` (>= 1).
    rotated_dim : int
        ``d`` (even, >= 4).
    seq_len : int
        Current sequence length ``L'``; HF uses ``max(L', L)`` so nothing changes up to ``L``.
    original : int
        Original length ``L`` (HF: ``max_position_embeddings``).

    Returns
    -------
    float

    Notes
    -----
    Source: emozilla, "Dynamically Scaled RoPE", r/LocalLLaMA (2023); HF ``_compute_dynamic_ntk_parameters``.
    """
    d = check_rotated_dim(rotated_dim, minimum=4)
    b = BASE.coerce(base)
    s = FACTOR.coerce(factor)
    seq = CONTEXT.coerce(seq_len)
    orig = MODEL_LENGTH.coerce(original)
    if seq <= orig:
        return b
    return b * ((s * seq / orig) - (s - 1.0)) ** (d / (d - 2))


def _ntk_needs_d_above_2(scaling: ScalingValue, rotated_dim: int, max_position_embeddings: int | None) -> None:
    check_rotated_dim(rotated_dim, minimum=4)  # the exponent d / (d - 2)


def _ntk(scaling: ScalingValue, model: RopeModel) -> ScaledFrequencies:
    """``θ'_i = b'^(−2i/d)`` with ``b' = b · s^(d/(d−2))`` (bloc97 2023)."""
    s = scaling.factor
    new_base = ntk_base(model.base, s, model.rotated_dim)
    inv = geometric_inv_freq(model.rotated_dim, new_base)
    return scaled_frequencies(model, scaling, inv, regimes=scaled_or_unchanged(inv, model.theta), factor=s,
                              base=new_base)


def _dynamic(scaling: ScalingValue, model: RopeModel) -> ScaledFrequencies:
    """ntk's rule with ``b' = b · (s C / L − (s − 1))^(d/(d−2))`` once the context ``C`` exceeds ``L``.

    ``L`` is ``max_position_embeddings`` (HF), or ``original_max_position_embeddings`` without it.
    """
    s = scaling.factor
    given_original = scaling.original_max_position_embeddings
    original = model.max_position_embeddings
    notes: list[str] = []
    if original is None and given_original is not None:
        original = given_original
        notes.append("original length from original_max_position_embeddings (max_position_embeddings not given)")
    elif given_original is not None and given_original != model.max_position_embeddings:
        notes.append("original_max_position_embeddings ignored: HF's dynamic NTK uses max_position_embeddings as "
                     "the original length")
    context = model.context
    if context is None or (original is not None and context <= original):
        notes.append("no growth: context not above the original length" if context else "no growth: no context")
        return scaled_frequencies(model, scaling, model.theta.copy(), regimes=("unchanged",) * model.pairs, factor=s,
                                  original_context=original, notes=tuple(notes))
    if original is None:
        raise ConfigError("max_position_embeddings", "dynamic scaling with a context needs the original length "
                          "(or original_max_position_embeddings)")
    new_base = dynamic_ntk_base(model.base, s, model.rotated_dim, context, original)
    inv = geometric_inv_freq(model.rotated_dim, new_base)
    notes.append(f"context {context} > original {original}: base grown")
    return scaled_frequencies(model, scaling, inv, regimes=scaled_or_unchanged(inv, model.theta), factor=s,
                              base=new_base, original_context=original, notes=tuple(notes))


NTK = ScalingType("ntk", "NTK-aware: base · s^(d/(d−2)) (bloc97 2023)", (FACTOR,), _ntk, required=("factor",),
                  validate=_ntk_needs_d_above_2, in_transformers=False)

DYNAMIC = ScalingType(
    "dynamic", "dynamic NTK: the base grows with the context past L (emozilla 2023)", (FACTOR, ORIGINAL_LENGTH),
    _dynamic, required=("factor",), validate=_ntk_needs_d_above_2, reads_context=True, grows_base=True,
    original_from_model=True,
    extension=Extension("dynamic", "dynamic", "dynamic NTK (emozilla 2023): the base grows with the sequence past "
                        "`max_position_embeddings`", "`factor`; `max_position_embeddings` stays L₀ (at N the base "
                        "would not grow)", write_factor, order=2, carries=ATTENTION_READ_KEYS, served="pretraining"),
)
