"""The JSON kind of each key pecli reads from a ``config.json``, checked before the family table reads it.

transformers' config classes are strict dataclasses (``huggingface_hub.dataclasses.strict``):
``from_pretrained`` refuses a field of the wrong type — ``max_position_embeddings: "8192"``, ``[8192]`` or
``true``, ``sliding_window: true``, ``alibi: "false"``, ``text_config: [1]``, a list of ints holding a bool
— and ``AutoConfig`` refuses a ``model_type`` it cannot look up (``123``, ``true``; ``[1]`` fails on
hashing it). A key the classes keep untyped, inside ``rope_parameters`` (``rope_theta``,
``partial_rotary_factor``), passes the class and then fails the model: its rotary module computes
``"500000" ** tensor`` (a TypeError), or ``int(head_dim * "0.5")`` (a string repeated, then a ValueError).
Either way transformers gives no numbers, so pecli gives none either: :func:`check_config_types` refuses
each such value with one line naming the key, before the reader's own ``int()``, ``%`` and truth tests
could read ``"false"`` as true or ``true`` as 1.

Only the *kind* is checked here (a number, an integer, true or false, a string, a mapping, a list of
one kind); ranges (a base above 0, a fraction in (0, 1], a finite length) are the scheme's, which names
its own parameter. The counts and dimensions the family table reads itself, and the layer patterns it
divides by (:data:`POSITIVE_KEYS`), must also be at least 1. ``null`` is always allowed: pecli reads it as a key not given.

The levels checked are those pecli reads: the top, the sub-configs of :data:`SUB_CONFIGS`, the RoPE blocks
and their per-layer-type blocks (a block under a layer type's name must be a mapping or null, as
transformers' ``standardize_rope_params`` needs), and each layer's ``per_layer_config`` entry. A key
whose name starts with :data:`RESERVED_PREFIX` is pecli's own bookkeeping
(:mod:`pecli.models.sources.class_defaults`) and is refused at every level.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable

from pecli.config_files import is_number_text
from pecli.errors import ConfigError
from pecli.models.limits import LAYER_COUNT_KEYS, MAX_SEARCH_DEPTH
from pecli.params import excerpt
from pecli.schemes.scaling.keys import LONGEST_CONTEXT  # the longest window and size too

#: The prefix of the keys pecli adds to a config while reading it (``_pecli_class_defaults`` …).
RESERVED_PREFIX = "_pecli_"

#: Lengths and sizes whose range the scheme checks (and names): an integer here.
INTEGER_KEYS = ("max_position_embeddings", "n_positions", "original_max_position_embeddings", "seq_length",
                "relative_attention_num_buckets", "relative_attention_max_distance", "spatial_merge_size")
#: Attention windows, read by the family table itself: 0 to 2^40 tokens (0 and null: no window).
WINDOW_KEYS = ("sliding_window", "attention_chunk_size")
#: Numbers the family table reads into a logit scale itself, which no scheme checks: finite.
FINITE_KEYS = ("llama_4_scaling_beta", "attn_scale", "floor_scale")
#: Factors the attention module puts on q·kᵀ (Gemma's query_pre_attn_scalar^-0.5, Granite's multiplier),
#: read by the family table itself: a finite number above 0 (a string was passed over for 1/√d).
SCALE_KEYS = ("query_pre_attn_scalar", "attention_multiplier")
#: The longest model_type read (the longest in transformers is under 40 characters).
LONGEST_NAME = 100
#: Counts and dimensions the family table reads itself, and layer patterns it divides by (layer i is full
#: when (i + 1) % pattern == 0): an integer of at least 1.
POSITIVE_KEYS = (
    *LAYER_COUNT_KEYS, "encoder_num_hidden_layers", "decoder_num_hidden_layers",
    "head_dim", "kv_channels", "attention_head_dim", "qk_rope_head_dim", "qk_nope_head_dim", "rotary_dim",
    "global_head_dim", "hidden_size", "n_embd", "d_model", "num_attention_heads", "n_head", "n_heads",
    "decoder_num_attention_heads", "decoder_attention_heads", "attention_heads", "num_heads",
    "sliding_window_pattern", "global_attn_every_n_layers", "no_rope_layer_interval",
)
NUMBER_KEYS = ("rope_theta", "rotary_emb_base", "rope_local_base_freq", "global_rope_theta", "local_rope_theta",
               "partial_rotary_factor", "rotary_pct", "tokens_per_second")
BOOLEAN_KEYS = ("alibi", "rope_interleave", "use_logn_attn", "use_dynamic_ntk", "attn_temperature_tuning",
                "use_mem_rope", "mrope_interleaved")
STRING_KEYS = ("position_embedding_type",)
STRING_LIST_KEYS = ("layer_types", "layers_block_type", "block_types")
INTEGER_LIST_KEYS = ("no_rope_layers", "cross_attention_layers", "attn_layer_indices", "rope_scaling_layers")
NUMBER_LIST_KEYS = ("layer_rope_theta",)
#: Sub-configs pecli reads keys from (a multimodal model's text, its vision tower's merge size, MPT's
#: attention settings, the stacks of an encoder–decoder): each a mapping or null, and checked in turn.
SUB_CONFIGS = ("text_config", "thinker_config", "vision_config", "attn_config", "encoder_config", "decoder_config",
               "global_config")
#: Sub-configs read where they are mappings (T5Gemma's ``encoder`` and ``decoder``); other models may use
#: these names for other things.
MAYBE_SUB_CONFIGS = ("encoder", "decoder")
RULE_BLOCKS = ("rope_parameters", "rope_scaling")
#: A RoPE block's numbers (a scaling's keys, whose ranges its type checks): numbers, inside a block only
#: (the family table reads factor and mscale_all_dim into a logit scale before the scaling is built).
BLOCK_NUMBER_KEYS = ("factor", "attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim",
                     "low_freq_factor", "high_freq_factor")
#: Layer type names that key a per-layer-type RoPE block even where the config lists no ``layer_types``
#: (a config class that derives them: Gemma 3's ``full_attention`` and ``sliding_attention``).
LAYER_TYPE_NAMES = ("full_attention", "sliding_attention", "chunked_attention", "indexed_attention",
                    "reference_sliding_attention", "linear_attention", "conv", "hybrid", "attention")


# Each test answers for JSON's own types (int, float, bool, str, list, dict) by their exact type first, and
# asks the numbers' ABCs (NumPy's scalars, Fraction, a library caller's own) only for other types: a config
# read holds hundreds of values, and an ABC's isinstance is several times a type comparison.


def _is_number(value: Any) -> bool:
    kind = type(value)
    if kind is float or kind is int:
        return True
    if kind is bool or kind is str:
        return False
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _is_finite(value: Any) -> bool:
    """A number a float64 holds: not NaN or infinite, nor an integer past 1.8e308."""
    if type(value) is float:
        return math.isfinite(value)
    try:
        return _is_number(value) and math.isfinite(float(value))
    except OverflowError:
        return False


def _is_integer(value: Any) -> bool:
    kind = type(value)
    if kind is int:
        return True
    if kind is float:
        return math.isfinite(value) and value.is_integer()
    if kind is bool or kind is str:
        return False
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    return isinstance(value, numbers.Integral) or (math.isfinite(value) and float(value).is_integer())


#: Types that are never :class:`numbers.Integral` (bool is, and is no integer here).
_NOT_INTEGRAL = frozenset({float, bool, str, list, dict, type(None)})


def _past_float64(items: Any) -> bool:
    """Whether one of ``items`` is an integer (not a bool) that no float64 holds (10**400)."""
    for item in items:
        kind = type(item)
        if kind is int:
            if item.bit_length() > 1023 and not _is_finite(item):  # below 2^1023 every int is a finite float
                return True
        elif kind not in _NOT_INTEGRAL and isinstance(item, numbers.Integral) and not isinstance(item, bool) \
                and not _is_finite(item):
            return True
    return False


#: Each kind: (test, how a message names it).
KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "integer": (_is_integer, "an integer"),
    # a size past 2^40 is no model's, and past 2^1024 no float's (rotary_dim / head_dim would overflow)
    "positive integer": (lambda v: _is_integer(v) and 1 <= v <= LONGEST_CONTEXT, "a positive integer"),
    "number": (_is_number, "a number"),
    "finite number": (_is_finite, "a finite number"),
    "positive number": (lambda v: _is_finite(v) and v > 0, "a finite number above 0"),
    "window": (lambda v: _is_integer(v) and 0 <= v <= LONGEST_CONTEXT, "an integer from 0 to 2^40 (a number of tokens)"),
    "name": (lambda v: isinstance(v, str) and len(v) <= LONGEST_NAME,
             f"a string naming the model's config class (at most {LONGEST_NAME} characters)"),
    # an integer reads as its truth, as Python and transformers 4 read it (Llama 4 Scout ships
    # attn_temperature_tuning 4); a string does not ("false" would read as true)
    "boolean": (lambda v: isinstance(v, bool) or _is_integer(v), "true or false"),
    "string": (lambda v: isinstance(v, str), "a string"),
    "string list": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "a list of strings"),
    "integer list": (lambda v: isinstance(v, list) and all(_is_integer(x) for x in v), "a list of integers"),
    "number list": (lambda v: isinstance(v, list) and all(_is_number(x) for x in v), "a list of numbers"),
    "mapping": (lambda v: isinstance(v, dict), "a mapping (dict)"),
}
#: The kind of each key.
KIND_OF: dict[str, str] = {
    **{k: "integer" for k in INTEGER_KEYS}, **{k: "positive integer" for k in POSITIVE_KEYS},
    **{k: "number" for k in NUMBER_KEYS}, **{k: "finite number" for k in FINITE_KEYS},
    **{k: "positive number" for k in SCALE_KEYS}, **{k: "window" for k in WINDOW_KEYS}, "model_type": "name", **{k: "boolean" for k in BOOLEAN_KEYS},
    **{k: "string" for k in STRING_KEYS}, **{k: "string list" for k in STRING_LIST_KEYS},
    **{k: "integer list" for k in INTEGER_LIST_KEYS}, **{k: "number list" for k in NUMBER_LIST_KEYS},
    **{k: "mapping" for k in (*SUB_CONFIGS, *RULE_BLOCKS, "per_layer_config")},
}


def _shown(value: Any) -> str:
    """The value as a message quotes it, with what it is when the quotes alone would not say."""
    if isinstance(value, bool):
        return f"{excerpt(value)} (a boolean)"
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return f"{excerpt(value)} (a string: write true or false without quotes)"
    if isinstance(value, str) and is_number_text(value):
        return f"{excerpt(value)} (a string: write the number without quotes)"
    return excerpt(value)


def _where(path: tuple[str, ...], source: str) -> str:
    return f"{'.'.join(path)} of {source}" if path else source


def _refuse(name: str, path: tuple[str, ...], source: str, expected: str, value: Any, why: str = "") -> ConfigError:
    return ConfigError("hf_config", f"{name} in {_where(path, source)} must be {expected}, got {_shown(value)}{why}")


def check_value(name: str, value: Any, path: tuple[str, ...], source: str) -> None:
    """Refuse ``value`` of key ``name`` (at ``path`` in ``source``) when it is not of the key's kind."""
    kind = KIND_OF.get(name)
    if kind is None or value is None:
        return
    test, expected = KINDS[kind]
    if name == "model_type" and not test(value):
        raise _refuse(name, path, source, expected, value, "; transformers' AutoConfig refuses it too")
    items = value if isinstance(value, list) and kind.endswith("list") else [value]
    if _past_float64(items):
        raise _refuse(name, path, source, f"{expected} a float64 holds", value)  # 10**400: no float, no length
    if not test(value):
        big = kind == "positive integer" and _is_integer(value) and value > LONGEST_CONTEXT
        raise _refuse(name, path, source, f"{expected} of at most 2^40" if big else expected, value)


def check_config_types(data: Any, source: str) -> None:
    """Refuse, before a plan is read from it, a parsed ``config.json`` holding a key of the wrong kind
    (see the module notes) or a key of pecli's own (:data:`RESERVED_PREFIX`).

    Raises
    ------
    ConfigError
        (key ``hf_config``) naming the key, where it is (its sub-config) and what it must be.
    """
    if isinstance(data, dict):
        _check_level(data, (), source, 0)


def _check_level(level: dict[str, Any], path: tuple[str, ...], source: str, depth: int) -> None:
    if depth > MAX_SEARCH_DEPTH:
        return
    types = level.get("layer_types")
    type_names = set(types) if isinstance(types, list) and all(isinstance(t, str) for t in types) else set()
    for name, value in level.items():
        if not isinstance(name, str):  # a mapping from the library: JSON's keys are strings, the reader's too
            raise ConfigError("hf_config", f"{excerpt(name)} in {_where(path, source)} is not a string; a config's "
                                           "keys are names")
        if name.startswith(RESERVED_PREFIX):
            raise ConfigError("hf_config", f"{name} in {_where(path, source)}: keys named {RESERVED_PREFIX}… are pecli's "
                                           "own bookkeeping, not config keys; remove it")
        check_value(name, value, path, source)
        if name in RULE_BLOCKS and isinstance(value, dict):
            _check_rope_block(value, (*path, name), source, depth + 1, type_names)
        elif name == "per_layer_config" and isinstance(value, dict):
            for index, entry in value.items():
                if not isinstance(index, str):  # JSON's keys are strings: "05" names layer 5
                    raise ConfigError("hf_config", f"per_layer_config in {_where(path, source)} has the key "
                                                   f"{excerpt(index)}; its keys are layer indices, as strings")
                if isinstance(entry, dict):
                    shown = index if isinstance(index, str) and len(index) <= 12 else excerpt(index)[:12] + "…"
                    _check_level(entry, (*path, name, shown), source, depth + 2)
        elif (name in SUB_CONFIGS or name in MAYBE_SUB_CONFIGS) and isinstance(value, dict):
            _check_level(value, (*path, name), source, depth + 1)


def _check_rope_block(block: dict[str, Any], path: tuple[str, ...], source: str, depth: int, type_names: set[str]) -> None:
    """A RoPE block: flat, or per layer type (a block, or null for a layer type without RoPE, under each
    layer type's name: transformers' ``standardize_rope_params`` reads each with ``.setdefault``)."""
    for name, value in block.items():
        if not isinstance(name, str):
            raise ConfigError("hf_config", f"{excerpt(name)} in {_where(path, source)} is not a string; a config's "
                                           "keys are names")
        if name in type_names or name in LAYER_TYPE_NAMES:
            if value is not None and not isinstance(value, dict):
                raise _refuse(f"{path[-1]}.{name}", path[:-1], source, f"a mapping (the RoPE block of layer type "
                              f"{name}) or null", value)
            if isinstance(value, dict):
                _check_level(value, (*path, name), source, depth + 1)
        elif name in BLOCK_NUMBER_KEYS and value is not None and not (_is_number(value) and
                                                                       (isinstance(value, float) or _is_finite(value))):
            raise _refuse(name, path, source, "a number (a float64 holds)", value)
        else:
            check_value(name, value, path, source)


__all__ = ["KIND_OF", "RESERVED_PREFIX", "check_config_types", "check_value"]
