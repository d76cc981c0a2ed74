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
from pecli.schemes.scaling.rope_type import hf_rope_type
from pecli.schemes.scaling.yarn import yarn_get_mscale

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
    from pecli.schemes.scaling.registry import find_scaling

    if not attention_keys(model_type, block):
        return ()
    record = find_scaling(hf_rope_type(block, None))
    return () if record is not None and "mscale_all_dim" in record.key_names else ("mscale_all_dim",)


def attention_only_changes(model_type: Any, scheme_class: Any, model: dict[str, Any],
                           changes: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A user's scheme keys ``changes`` over a model's ``model`` options, split as a config's block is read
    (:func:`attention_only_keys`): (the changes without the keys only the attention of ``model_type`` reads under
    the scaling type they end with, those keys with their values).

    DeepSeek-V3 at ``--scaling linear --factor 4 --mscale-all-dim 0.5`` stands for the block ``{"rope_type":
    "linear", "factor": 4, "mscale_all_dim": 0.5}``: linear's frequencies take no ``mscale_all_dim``, and
    ``yarn_apply_mscale`` (``modeling_deepseek_v3.py``, transformers 5.24.0) puts mscale(4, 0.5)² on the softmax.
    The key is taken out of the changes (an option, or a key of a block given whole) and returned for the
    attention's factor (:func:`pecli.models.group_change.user_changed`). Nothing is split for a model type whose
    attention reads no such key, nor under a type whose frequencies take it (yarn).
    """
    from pecli.schemes.build import VARIANT, layered, normalize_key

    if model_type not in SOFTMAX_MSCALE_TYPES:
        return changes, {}
    kept: dict[str, Any] = {}
    in_block = None  # a block's own mscale_all_dim, which its type's frequencies do not take
    for key, given in changes.items():
        if normalize_key(str(key)) in scheme_class.block_keys and isinstance(given, dict) \
                and attention_only_keys(model_type, given):
            in_block = given["mscale_all_dim"]
            given = {k: v for k, v in given.items() if k != "mscale_all_dim"}
        kept[key] = given
    explicit = next((v for k, v in kept.items() if normalize_key(str(k)) == "mscale_all_dim"), None)
    value = explicit if explicit is not None else in_block
    after = layered(scheme_class, model, kept)
    if value is None:
        return changes, {}
    if not attention_only_keys(model_type, {"rope_type": after.get(VARIANT), "mscale_all_dim": value}):
        # the type the changes end with takes it (yarn named beside the block): its frequencies read it
        return {**kept, "mscale_all_dim": value} if explicit is None else kept, {}
    return {k: v for k, v in kept.items() if normalize_key(str(k)) != "mscale_all_dim"}, {"mscale_all_dim": value}


def attention_keys(model_type: Any, block: dict[str, Any] | None) -> tuple[str, ...]:
    """The keys of a RoPE block that the attention of ``model_type`` reads under every type but default,
    whichever type the block names: ``mscale_all_dim`` in an MLA model's block (``yarn_apply_mscale`` in
    ``modeling_deepseek_v3.py`` and ``modeling_deepseek_v2.py`` of transformers 5.24.0 tests only
    ``rope_type != "default"``). Under another type asked for alone (``--scaling linear``) they stay the
    model's, as a type keeps the model's keys it takes (:meth:`AttentionRule.scale`)."""
    if model_type not in SOFTMAX_MSCALE_TYPES or not isinstance(block, dict) or block.get("mscale_all_dim") is None:
        return ()
    return ("mscale_all_dim",)


def attention_side(model_type: Any, block: dict[str, Any] | None) -> LogitScale:
    """The factor a model's attention module applies because of its RoPE block (not cos/sin's)."""
    from pecli.schemes.scaling.registry import scales

    block = block or {}
    scale = UNSCALED
    kind = hf_rope_type(block, None)
    if model_type in SOFTMAX_MSCALE_TYPES and scales(kind, aliases=False) and block.get("mscale_all_dim"):
        if block.get("factor") is None:  # yarn_apply_mscale reads rope_parameters["factor"]
            from pecli.errors import ConfigError

            raise ConfigError("rope_scaling", f"gives mscale_all_dim without factor: model_type {model_type}'s attention "
                              "in transformers reads the factor beside it (KeyError: 'factor'); give factor")
        scale = scale.times(yarn_get_mscale(float(block["factor"]), float(block["mscale_all_dim"])) ** 2)
    if model_type in BETA_SCALED_TYPES and block.get("llama_4_scaling_beta") is not None:
        original = block.get("original_max_position_embeddings")
        if original:
            scale = LogitScale(scale.factor, "llama4_beta", (float(block["llama_4_scaling_beta"]), float(original)))
    return scale


@dataclass(frozen=True)
class AttentionRule:
    """What a layer group's attention reads to set its :attr:`~pecli.models.plan.LayerGroup.attention_scale`
    besides the group's scaling, so that the group under other RoPE settings (a user's ``--factor`` over a
    model's) gets the factor the model's code computes for them (:meth:`scale`).

    Attributes
    ----------
    model_type : str or None
        The model type whose attention applies :func:`attention_side`.
    config_keys : tuple of (str, object)
        The keys of the config's RoPE block only the attention reads (:func:`attention_only_keys`,
        ``llama_4_scaling_beta`` with the block's ``original_max_position_embeddings``).
    extra : LogitScale
        The family's factor, which the RoPE settings do not touch (Llama 4's temperature, Qwen's log-n).
    block : dict or None
        The scaling block (HF's form) :attr:`model_scale` was computed from: the rule stands for a group
        whose scaling is still that one (not one an engine's flags rewrote).
    """

    model_type: Any
    config_keys: tuple[tuple[str, Any], ...] = ()
    extra: LogitScale = UNSCALED
    block: dict[str, Any] | None = None

    def scale(self, block: dict[str, Any] | None, whole: bool = False) -> LogitScale:
        """The factor the attention applies under the scaling ``block`` (HF's form; None or {}: none).

        The block's own keys win; the model's attention-only keys (:attr:`config_keys`) fill in the ones
        it leaves out, as a type asked for alone keeps the model's keys it takes (DeepSeek-V3 at
        ``--scaling linear --factor 4``: ``{"rope_type": "linear", "factor": 4, "mscale_all_dim": 1.0}``,
        softmax × (0.1·ln 4 + 1)²). ``whole``: the user gave the block itself, which is the whole scaling
        as in a config file, so none of the model's block's keys carry over.
        """
        block = dict(block or {})
        keys = {} if whole else dict(self.config_keys)
        if keys.get("llama_4_scaling_beta") is not None:
            block.setdefault("original_max_position_embeddings", keys.get("original_max_position_embeddings"))
            block["llama_4_scaling_beta"] = keys["llama_4_scaling_beta"]
        for key, value in keys.items():
            if key not in ("llama_4_scaling_beta", "original_max_position_embeddings") and block.get(key) is None:
                block[key] = value
        scale, extra = attention_side(self.model_type, block), self.extra
        return LogitScale(scale.factor * extra.factor, extra.rule or scale.rule, extra.params or scale.params)

    def unsure(self, block: dict[str, Any] | None, whole: bool = False) -> str:
        """Why pecli cannot give the factor under ``block`` (``""``: it can): the model's ``mscale_all_dim``
        carried over into a yarn block with ``mscale`` would enter yarn's attention factor on cos and sin
        too (``mscale(s, mscale) / mscale(s, mscale_all_dim)``), which pecli's yarn built without it does not."""
        from pecli.schemes.scaling.registry import find_scaling

        block = block or {}
        carried = dict(self.config_keys).get("mscale_all_dim")
        record = find_scaling(hf_rope_type(block, None))
        if whole or carried is None or block.get("mscale_all_dim") is not None or record is None:
            return ""
        if "mscale_all_dim" in record.key_names and block.get("mscale") and block.get("attention_factor") is None:
            return (f"the model's mscale_all_dim {number(carried)} would enter yarn's attention factor beside the "
                    "mscale given; give --mscale-all-dim")
        return ""

    @property
    def model_scale(self) -> LogitScale:
        """The factor under the model's own scaling."""
        return self.scale(self.block)


@dataclass(frozen=True)
class SoftmaxScale:
    """The factor a layer group's attention module in transformers puts on q·kᵀ before the softmax (its
    ``self.scaling``), without the position part (:func:`attention_side`, which multiplies it).

    Attributes
    ----------
    value : float or None
        The factor; None where pecli does not know how the model's attention sets it.
    source : str
        Where it comes from, by key (``query_pre_attn_scalar^-0.5``, ``head_dim^-0.5``, …), or why unknown.
    head_dim : int or None
        The head dimension d of q and k, for the comparison with 1/√d.
    """

    value: float | None
    source: str
    head_dim: int | None = None

    @property
    def of_inverse_sqrt(self) -> float | None:
        """The factor over 1/√head_dim (Gemma 3 27B: 168^-0.5 / 128^-0.5 = 0.873)."""
        return None if self.value is None or not self.head_dim else self.value * math.sqrt(self.head_dim)

    def text(self, position: float = 1.0) -> str:
        """``0.07715 = query_pre_attn_scalar 168^-0.5 (0.873 × 1/√128)``, times a constant position part."""
        if self.value is None:
            return f"not known to pecli ({self.source})"
        whole = self.value * position
        words = f"{number(whole)} = {self.source}"
        if position != 1:
            words += f" × {number(position)} (the position part)"
        ratio = self.of_inverse_sqrt
        if ratio is not None and abs(ratio - 1) > 1e-12:
            words += f" ({number(ratio * position)} × 1/√{self.head_dim})"
        return words

    def to_json(self, position: float = 1.0) -> dict[str, Any]:
        return {"value": None if self.value is None else self.value * position, "from": self.source,
                "head_dim": self.head_dim, "position_part": position}


#: Model types whose attention modules set ``self.scaling = 1.0``: q and k normalised per head (Gemma 3n,
#: Gemma 4, EmbeddingGemma 2) or T5's unscaled logits (``modeling_t5.py``, ``modeling_longt5.py``).
UNIT_SOFTMAX_TYPES = frozenset({
    "embedding_gemma2", "embedding_gemma2_text", "gemma3n", "gemma3n_text", "gemma4", "gemma4_text", "gemma4_unified",
    "gemma4_unified_text", "t5", "mt5", "umt5", "longt5",
})
#: Model types whose layers' attention modules set different scales (dots3_note: MLA layers with
#: qk_head_dim^-0.5 beside grouped-query layers with head_dim^-0.5), which pecli does not tell apart.
UNKNOWN_SOFTMAX_TYPES = frozenset({"dots3_note", "dots3_note_text"})
#: Where the width and the heads of an attention layer are, in the order a config's keys are tried.
_WIDTH_KEYS = ("hidden_size", "n_embd", "d_model")
_HEADS_KEYS = ("num_attention_heads", "n_head", "decoder_attention_heads", "attention_heads", "num_heads")


def softmax_scale(text: dict[str, Any], model_type: Any) -> SoftmaxScale:
    """The attention module's ``self.scaling`` for the text model of a config (its keys after the
    config class's defaults), as transformers 5.24.0 sets it (``tests/fixtures/models/logit/softmax.json``
    holds every module's own): MLA's (qk_nope_head_dim + qk_rope_head_dim)^-0.5; Gemma 2/3's
    query_pre_attn_scalar^-0.5; Granite's attention_multiplier; 1 for :data:`UNIT_SOFTMAX_TYPES`; else
    head_dim^-0.5 (``head_dim``, or the width over the heads)."""
    def whole(key: str) -> int | None:
        value = text.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None

    width = next((whole(k) for k in _WIDTH_KEYS if whole(k)), None)
    heads = next((whole(k) for k in _HEADS_KEYS if whole(k)), None)
    head = whole("head_dim") or (width // heads if width and heads and width % heads == 0 else None)
    if model_type in UNKNOWN_SOFTMAX_TYPES:
        return SoftmaxScale(None, f"model_type {model_type}'s layers set different scales", head)
    if model_type in UNIT_SOFTMAX_TYPES:
        return SoftmaxScale(1.0, f"1 (model_type {model_type}'s attention does not divide by √d)", head)
    nope, rope = whole("qk_nope_head_dim"), whole("qk_rope_head_dim")
    if nope and rope:
        return SoftmaxScale((nope + rope) ** -0.5, f"(qk_nope_head_dim {nope} + qk_rope_head_dim {rope})^-0.5",
                            nope + rope)
    scalar = text.get("query_pre_attn_scalar")
    if isinstance(scalar, (int, float)) and not isinstance(scalar, bool) and scalar > 0:
        return SoftmaxScale(float(scalar) ** -0.5, f"query_pre_attn_scalar {number(scalar)}^-0.5", head)
    multiplier = text.get("attention_multiplier")
    if isinstance(multiplier, (int, float)) and not isinstance(multiplier, bool) and multiplier > 0:
        return SoftmaxScale(float(multiplier), f"attention_multiplier {number(multiplier)}", head)
    if head is None:
        return SoftmaxScale(None, "the config gives no head dimension", None)
    return SoftmaxScale(head ** -0.5, f"head_dim {head}^-0.5" if whole("head_dim") else f"(width / heads = {head})^-0.5", head)
