"""What a group's attention does besides cos and sin: its window (sliding or chunked layers) and the
factor it puts on the logits (the RoPE block's attention side, Llama 4's temperature, Qwen's log-n).
"""

from __future__ import annotations

import math
from typing import Any

from pecli.errors import ConfigError
from pecli.models.sources.class_defaults import declared_default
from pecli.models.families.keys import WINDOW_KEYS, Keys
from pecli.models.families.record import Family
from pecli.models.logit_scale import UNSCALED, AttentionRule, LogitScale, attention_keys
from pecli.models.plan import LayerGroup
from pecli.params import excerpt
from pecli.schemes.scaling.keys import LONGEST_CONTEXT


def llama4_temperature(keys: Keys, group: LayerGroup) -> LogitScale:
    """Llama 4's NoPE layers scale their queries by 1 + attn_scale·ln(1 + ⌊(p + 1) / floor_scale⌋) when
    ``attn_temperature_tuning`` is on (``Llama4TextAttention``: ``not self.use_rope``)."""
    if group.options is not None or not keys.get("attn_temperature_tuning"):
        return UNSCALED
    classes = keys.classes("llama4_text")
    scale = keys.get("attn_scale", default=declared_default(classes, "attn_scale"))
    floor = keys.get("floor_scale", default=declared_default(classes, "floor_scale"))
    if not isinstance(scale, (int, float)) or not isinstance(floor, (int, float)) or floor <= 0:
        raise ConfigError("floor_scale", f"and attn_scale must be numbers (floor_scale > 0) in {keys.source}, got {excerpt(floor)}, {excerpt(scale)}")
    if not math.isfinite(1.0 + scale * math.log1p(float(LONGEST_CONTEXT) / floor)):  # the factor at the longest context
        raise ConfigError("attn_scale", f"{excerpt(scale)} in {keys.source} overflows float64 in the NoPE layers' query "
                          "scale 1 + attn_scale·ln(1 + ⌊(p + 1) / floor_scale⌋)")
    return LogitScale(1.0, "llama4_temperature", (float(scale), float(floor)))


def group_window(keys: Keys, group: LayerGroup) -> tuple[str, int] | None:
    """The attention window of a group of sliding-window (or chunked) layers, as ``(key, size)``; None for
    full attention, or for a group that mixes windowed and full layers."""
    if group.options is None or not all(name in WINDOW_KEYS for name in group.names):
        return None
    key = WINDOW_KEYS[group.names[0]]
    size = keys.data.get(key)
    if isinstance(size, bool) or not isinstance(size, int) or size < 1 or any(WINDOW_KEYS[n] != key for n in group.names):
        return None
    return key, size


def qwen_logn(keys: Keys, group: LayerGroup) -> LogitScale:
    """Qwen (v1, its remote code ``modeling_qwen.py``): with ``use_logn_attn`` the queries past ``seq_length``
    are multiplied by log_seq_length(p + 1); ``use_dynamic_ntk`` raises the base past ``seq_length`` by its
    own rule, which pecli does not model (said on stderr)."""
    if keys.get("use_dynamic_ntk"):
        keys.warn("use_dynamic_ntk: Qwen's own code raises the base past seq_length (base·α^(d/(d−2)) with "
                  "α = 2^⌈log2(L/seq_length) + 1⌉ − 1 for a sequence of L tokens); pecli's frequencies are those "
                  "up to seq_length")
    if group.options is None or not keys.get("use_logn_attn"):
        return UNSCALED
    length = keys.get("seq_length", "max_position_embeddings")
    if isinstance(length, bool) or not isinstance(length, (int, float)) or length < 2:
        raise ConfigError("seq_length", f"must be a length of at least 2 in {keys.source}, got {excerpt(length)}")
    return LogitScale(1.0, "logn", (float(length),))


def group_attention(keys: Keys, family: Family, model_type: Any, group: LayerGroup) -> AttentionRule:
    """How the model's attention sets ``group``'s factor on the logits beyond cos and sin: the attention-only
    keys of the config's RoPE block and the family's own factor, with the group's scaling (the factor
    itself: :attr:`AttentionRule.model_scale`)."""
    config: dict[str, Any] = {}
    block = None
    if group.rotary:
        # the group's typed scaling in HF's form, with the keys only the attention reads from the config's block
        scaling = getattr(group.encoding, "rope_scaling", None)
        block = scaling.to_hf() if scaling is not None else {}
        raw = keys.data.get("rope_parameters") or keys.data.get("rope_scaling")
        if isinstance(raw, dict) and raw.get("llama_4_scaling_beta") is not None:
            config["original_max_position_embeddings"] = raw.get("original_max_position_embeddings")
            config["llama_4_scaling_beta"] = raw["llama_4_scaling_beta"]
        for key in attention_keys(model_type, raw):  # read under every type (the frequencies' block may not take it)
            config[key] = raw[key]
    extra = family.attention(keys, group) if family.attention is not None else UNSCALED
    return AttentionRule(model_type if group.rotary else None, tuple(config.items()), extra, block)
