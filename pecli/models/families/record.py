"""The family record: how the configs of some model types map to layer groups.

The layouts follow each model's code in transformers: ``rotate_half`` over halves (Llama and most
others) is ``half``; GPT-J's ``rotate_every_two``, Cohere's and GLM's interleaved ``rotate_half``,
DeepSeek's ``apply_rotary_pos_emb_interleave`` and Llama 4's complex multiplication rotate adjacent
components ``(2i, 2i+1)``: ``interleaved``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from pecli.models.families.keys import Keys
from pecli.models.logit_scale import LogitScale
from pecli.models.plan import LayerGroup


# -- the record ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Family:
    """How the configs of some model types map to layer groups.

    Attributes
    ----------
    name : str
        The family as the Models page's table shows it.
    model_types : tuple of str
        The ``model_type`` values it covers (a multimodal model's text ``model_type`` too).
    scheme : str
        ``rope`` (``mrope`` where the block carries an ``mrope_section``), ``alibi``, ``t5``,
        ``sinusoidal`` or ``learned``.
    layout : str
        How the model applies cos and sin: ``half`` (``rotate_half``) or ``interleaved``.
    direction : str
        Which way its pairs turn: ``positive`` (+pθ), or ``negative`` (−pθ: nanochat's reversed ``rotate_half``).
    head_dim_keys : tuple of str
        Keys that give the rotary head dimension before the generic ones (DeepSeek: ``qk_rope_head_dim``).
    layer_types : callable or None
        ``(keys, num_layers) -> [type per layer]`` where the config has no ``layer_types`` list.
    per_type : callable or None
        ``(keys, family, layer_type) -> options or None`` (None: no position encoding): a type's own
        encoding, for configs that spell it with legacy keys instead of per-type ``rope_parameters``.
    nope_layers : callable or None
        ``(keys, num_layers) -> set of layers`` that apply no position encoding.
    groups : callable or None
        ``(keys, family) -> [LayerGroup]`` for families that are not per-layer RoPE (ALiBi, T5, …).
    keys_note : str
        The family-specific keys, for the Models page's table.
    note : str
        What every RoPE group of the family says besides its numbers (how the model applies them).
    ignores : tuple of str
        Keys the family's configs carry and its code does not read (MiniMax-M3-VL's ``rotary_dim``):
        pecli does not read them either, and says so.
    fraction_keys : tuple of str
        The top-level keys of the rotated fraction of the head, the first given winning (GPT-NeoX's
        config class reads ``rotary_pct`` only: a top-level ``partial_rotary_factor`` never reaches its
        rotary module).
    fraction_default : float or None
        The fraction when no key gives it (GPT-NeoX: ``rotary_pct=0.25``); None: the whole head.
    """

    name: str
    model_types: tuple[str, ...]
    scheme: str = "rope"
    layout: str = "half"
    direction: str = "positive"
    head_dim_keys: tuple[str, ...] = ()
    layer_types: Callable[[Keys, int], list[str]] | None = None
    per_type: Callable[[Keys, "Family", str], "dict[str, Any] | None"] | None = None
    nope_layers: Callable[[Keys, int], set[int]] | None = None
    groups: Callable[[Keys, "Family"], list[LayerGroup]] | None = None
    keys_note: str = ""
    note: str = ""
    ignores: tuple[str, ...] = ()
    fraction_keys: tuple[str, ...] = ("partial_rotary_factor", "rotary_pct")
    fraction_default: float | None = None
    #: ``(keys) -> None``: the class's own reading of keys its ``__post_init__`` rewrites, applied to
    #: ``keys.data`` before anything is read (Gemma 4's head size on full-attention layers).
    normalise: Callable[[Keys], None] | None = None
    #: ``(keys, group) -> LogitScale``: a factor the family's attention applies to a group's logits beyond
    #: what its RoPE block implies (Llama 4's temperature on NoPE layers, Qwen's log-n).
    attention: Callable[[Keys, LayerGroup], LogitScale] | None = None


#: The family of a model type not in the table: generic keys, the half layout.
GENERIC = Family("generic", ())
