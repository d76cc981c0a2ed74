"""HunYuan v1 (dense and MoE): the ``alpha`` of its RoPE block, read as its rotary module reads it.

``HunYuanDenseV1RotaryEmbedding`` and ``HunYuanMoEV1RotaryEmbedding`` (transformers 5.24,
``modeling_hunyuan_v1_dense.py:298-305``, ``modeling_hunyuan_v1_moe.py:381-388``) turn a ``dynamic`` block whose
``alpha`` is truthy into their own type ``ntk_alpha``, whose frequencies are those of plain RoPE over a larger base
(``compute_ntk_alpha_rope_parameters``, ``modeling_hunyuan_v1_dense.py:342-358``)::

    base' = rope_theta · alpha^(d / (d − 2)),   d = config.head_dim,   attention factor 1

with the block's other keys (its ``factor``, ``mscale``, …) unread, and, the type no longer holding
``dynamic``, no recomputation past the original length (``dynamic_rope_update``). Any other type, or a falsy
``alpha``, goes through transformers' own functions, which do not read ``alpha``.
"""

from __future__ import annotations

import math
from typing import Any

from pecli.errors import ConfigError
from pecli.models.families.keys import Keys
from pecli.models.families.record import Family
from pecli.models.families.rope import per_layer_rope
from pecli.models.group_change import changed
from pecli.models.plan import LayerGroup, Origin
from pecli.params import excerpt
from pecli.schemes.frequencies import float32_base_problem
from pecli.schemes.scaling.ntk import DYNAMIC
from pecli.schemes.scaling.rope_type import hf_rope_type

#: What each group read under ``ntk_alpha`` says besides its numbers.
NTK_ALPHA_NOTE = ("HunYuan's ntk_alpha (its rotary module's reading of a dynamic block with alpha): base = rope_theta · "
                  "alpha^(head_dim / (head_dim − 2)), the same at every length; the block's factor is not applied")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def ntk_alpha_base(base: float, alpha: float, dim: int, key: str) -> float:
    """HunYuan's ntk_alpha base, ``base · alpha^(d / (d − 2))``, as a finite positive float, else a ConfigError
    naming ``{key}.alpha``.

    transformers computes it in Python floats: an ``alpha`` that takes it past the largest float raises
    ``OverflowError`` there, and one that takes it under the smallest gives a base of 0, whose inverse
    frequencies ``1 / base^(2i/d)`` are infinite; neither is a model pecli can measure. Nor is a float base that
    transformers' float32 frequencies cannot hold (:func:`~pecli.schemes.frequencies.float32_base_problem`).
    """
    exponent = dim / (dim - 2)
    try:
        grown = base * alpha ** exponent
    except OverflowError:
        grown = math.inf
    if math.isfinite(grown) and grown > 0:
        problem = float32_base_problem(grown)  # a float64 base transformers' float32 frequencies cannot hold
        if problem is None:
            return grown
        raise ConfigError(f"{key}.alpha", f"{excerpt(alpha)} takes HunYuan's base rope_theta · alpha^(d/(d − 2)) "
                          f"= {base:g} · alpha^{exponent:.4g} to {grown:g}, {problem}")
    where = "past the largest float" if grown != 0 else "to 0, under the smallest float"
    raise ConfigError(f"{key}.alpha", f"{excerpt(alpha)} takes HunYuan's base rope_theta · alpha^(d/(d − 2)) "
                      f"= {base:g} · alpha^{exponent:.4g} {where}")


def hunyuan_groups(keys: Keys, family: Family) -> list[LayerGroup]:
    """The groups of a HunYuan v1 config: the generic RoPE reading, with a ``dynamic`` block's truthy ``alpha``
    read as the model's ``ntk_alpha`` (see the module), and an ``alpha`` its code does not read said and left out."""
    key = "rope_parameters" if keys.has("rope_parameters") else "rope_scaling"
    block = keys.data.get(key)
    if not isinstance(block, dict) or "alpha" not in block:
        return per_layer_rope(keys, family)
    alpha = block["alpha"]
    if hf_rope_type(block, None) != DYNAMIC.hf_name or not alpha:
        if alpha:
            keys.warn(f"{key} alpha {excerpt(alpha)}: HunYuan's rotary module reads alpha only under rope_type dynamic, "
                      "and ignores it here; so does pecli")
        keys.data = {**keys.data, key: {k: v for k, v in block.items() if k != "alpha"}}
        return per_layer_rope(keys, family)
    if not _number(alpha) or not 0 < alpha < math.inf:
        raise ConfigError(key, f"alpha must be a finite positive number (HunYuan raises the base to it), got {excerpt(alpha)}")
    if block.get("factor") is None:  # transformers' validation of a dynamic block, before the model's code drops it
        raise ConfigError(key, "rope_type dynamic needs a factor (transformers refuses the block without one, "
                          "although HunYuan's alpha then leaves it unused)")
    dim = keys.first_int("head_dim")
    if dim is None:
        raise ConfigError("head_dim", f"is not in {keys.source}: HunYuan's ntk_alpha reads config.head_dim for alpha's "
                          "exponent d / (d − 2), and transformers fails without it")
    if dim <= 2:
        raise ConfigError("head_dim", f"{dim}: HunYuan's ntk_alpha exponent head_dim / (head_dim − 2) needs more than 2")
    # The model's code reads the block's rope_theta and alpha, nothing else of it.
    keys.data = {**keys.data, key: {k: v for k, v in block.items() if k == "rope_theta"}}
    groups = per_layer_rope(keys, family)
    out = []
    for group in groups:
        base = group.options.get("base") if group.options else None
        if not _number(base):  # no RoPE here, or a base its scheme refuses, naming it
            out.append(group)
            continue
        out.append(changed(group, {"base": ntk_alpha_base(base, alpha, dim, key)}, by=f"{key}.alpha",
                           origin=Origin.MODEL_CODE, note=NTK_ALPHA_NOTE))
    return out
