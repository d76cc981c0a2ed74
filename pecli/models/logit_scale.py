"""The second way position settings reach attention: a factor on the logits q·k/√d.

cos and sin are one half of what a model's position settings do to attention; the other is a factor on
the logits. :class:`LogitScale` is that factor for one layer group, as the model's code in transformers
applies it:

- YaRN's and LongRoPE's attention factor multiplies cos and sin (``attention_scaling``), so q and k
  both carry it and the logits carry its square;
- DeepSeek and the other MLA models multiply the softmax scale by ``mscale(s, mscale_all_dim)²`` where
  their scaling block gives ``mscale_all_dim`` (``yarn_apply_mscale`` in ``modeling_deepseek_v3.py``),
  with ``mscale(s, m) = 0.1·m·ln s + 1`` for s > 1;
- Llama 4 scales the queries of its NoPE layers by ``1 + attn_scale·ln(1 + ⌊(p + 1) / floor_scale⌋)``
  (``attn_temperature_tuning``, ``modeling_llama4.py``);
- Ministral 3 and Mistral 4 scale every query by ``1 + β·ln(1 + ⌊p / original_max_position_embeddings⌋)``
  (``llama_4_scaling_beta`` in the RoPE block, ``get_llama_4_attn_scale``);
- Qwen (v1, its own remote code) scales the queries past its training length L by ``log_L(p + 1)``
  (``use_logn_attn``).

A factor on the queries multiplies the logits once; p is the 0-based position of the query.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from pecli.numbers import integer, number
from pecli.schemes.rope_scaling import yarn_get_mscale

#: The positions at which a position-dependent scale is reported (and the context, when one is given).
REPORTED_POSITIONS = (1, 8192, 131072)


@dataclass(frozen=True)
class LogitScale:
    """By how much a layer group's model multiplies q·k/√d beyond cos and sin.

    Attributes
    ----------
    factor : float
        The constant part (1 for most models).
    rule : str
        ``""`` for a constant; else the position rule: ``llama4_temperature`` (params ``attn_scale``,
        ``floor_scale``), ``llama4_beta`` (``beta``, ``original``) or ``logn`` (``length``).
    params : tuple of float
        The rule's parameters, in that order.
    """

    factor: float = 1.0
    rule: str = ""
    params: tuple[float, ...] = ()

    @property
    def constant(self) -> bool:
        return not self.rule

    @property
    def is_unit(self) -> bool:
        """Whether the scale is 1 at every position (nothing worth printing)."""
        return self.constant and self.factor == 1

    def times(self, factor: float) -> LogitScale:
        """The same scale times a constant ``factor``."""
        return LogitScale(self.factor * factor, self.rule, self.params)

    def at(self, positions: Any) -> np.ndarray:
        """The scale at each (0-based) query position, float64."""
        p = np.asarray(positions, dtype=np.float64)
        if self.rule == "llama4_temperature":
            attn_scale, floor_scale = self.params
            values = 1.0 + attn_scale * np.log1p(np.floor((p + 1.0) / floor_scale))
        elif self.rule == "llama4_beta":
            beta, original = self.params
            values = 1.0 + beta * np.log1p(np.floor(p / original))
        elif self.rule == "logn":
            (length,) = self.params
            values = np.where(p + 1.0 > length, np.log(np.maximum(p + 1.0, 1.0)) / math.log(length), 1.0)
        else:
            values = np.ones_like(p)
        return self.factor * values

    def text(self) -> str:
        """The rule in words, with its numbers (``"1.874"`` for a constant)."""
        scale = "" if self.factor == 1 else f"{number(self.factor)} × "
        if self.rule == "llama4_temperature":
            a, f = self.params
            return f"{scale}(1 + {number(a)}·ln(1 + ⌊(p + 1) / {integer(int(f))}⌋)) on the queries (Llama 4 NoPE layers)"
        if self.rule == "llama4_beta":
            b, o = self.params
            return f"{scale}(1 + {number(b)}·ln(1 + ⌊p / {integer(int(o))}⌋)) on the queries (llama_4_scaling_beta)"
        if self.rule == "logn":
            length = integer(int(self.params[0]))
            return f"{scale}log_{int(self.params[0])}(p + 1) on the queries past p + 1 = {length} (log-n)"
        return number(self.factor)

    def to_json(self, context: int | None = None) -> float | dict[str, Any]:
        """A number for a constant scale; else ``{"rule": TEXT, "at": {"POSITION": VALUE, …}}`` at the
        positions 1, 8,192, 131,072 and ``context``."""
        if self.constant:
            return float(self.factor)
        positions = sorted({*REPORTED_POSITIONS, *([int(context)] if context else [])})
        values = self.at(positions)
        return {"rule": self.text(), "at": {str(p): float(v) for p, v in zip(positions, values)}}


#: No factor.
UNSCALED = LogitScale()


#: Model types whose attention multiplies its softmax scale by mscale(factor, mscale_all_dim)² (their
#: modeling modules in transformers 5.24.0 call ``yarn_apply_mscale``).
SOFTMAX_MSCALE_TYPES = frozenset({
    "axk1", "axk2", "bailing_hybrid", "deepseek_v2", "deepseek_v3", "deepseek_v32", "glm4_moe_lite", "glm_moe_dsa",
    "hy_v4", "hy_v4_vl", "hy_v4_vl_text", "longcat_flash", "minicpm3", "mistral4", "mistral_large4", "youtu",
})
#: Model types whose attention applies ``llama_4_scaling_beta`` (``get_llama_4_attn_scale``).
BETA_SCALED_TYPES = frozenset({"ministral3", "mistral4"})


def attention_only_keys(model_type: Any, block: dict[str, Any] | None) -> tuple[str, ...]:
    """The keys of a RoPE block that only the attention of ``model_type`` reads under the block's type:
    ``mscale_all_dim`` in an MLA model's block of any type but yarn (whose frequencies read it too).
    transformers logs them as unrecognised and its attention applies them (``yarn_apply_mscale``), so pecli
    takes them into the logit scale and keeps them out of the frequencies."""
    from pecli.schemes.rope_scaling import SCALINGS, HF_TYPE_ALIASES

    if model_type not in SOFTMAX_MSCALE_TYPES or not isinstance(block, dict) or block.get("mscale_all_dim") is None:
        return ()
    kind = block.get("rope_type") or block.get("type") or "default"
    record = SCALINGS.get(HF_TYPE_ALIASES.get(kind, kind)) if isinstance(kind, str) else None
    return () if record is not None and "mscale_all_dim" in record.key_names else ("mscale_all_dim",)


def attention_side(model_type: Any, block: dict[str, Any] | None) -> LogitScale:
    """The factor a model's attention module applies because of its RoPE block (not cos/sin's)."""
    block = block or {}
    scale = UNSCALED
    kind = block.get("rope_type") or block.get("type") or "default"
    if model_type in SOFTMAX_MSCALE_TYPES and kind != "default" and block.get("mscale_all_dim"):
        scale = scale.times(yarn_get_mscale(float(block["factor"]), float(block["mscale_all_dim"])) ** 2)
    if model_type in BETA_SCALED_TYPES and block.get("llama_4_scaling_beta") is not None:
        original = block.get("original_max_position_embeddings")
        if original:
            scale = LogitScale(scale.factor, "llama4_beta", (float(block["llama_4_scaling_beta"]), float(original)))
    return scale
