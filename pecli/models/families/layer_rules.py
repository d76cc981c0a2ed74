"""The family hooks of RoPE models: how a family's config classes derive their layer types, which layers
apply no RoPE, each layer type's own encoding where legacy keys spell it, and what a class rewrites before
anything is read (its ``normalise``).
"""

from __future__ import annotations

from typing import Any, Callable

from pecli.errors import ConfigError
from pecli.models.sources.class_defaults import declared_default, default_base, default_layer_period, derived_value
from pecli.models.families.keys import Keys
from pecli.models.families.record import GENERIC, Family
from pecli.models.families.rope import NO_ROPE_TYPES, num_layers, read_layer_types, rope_options
from pecli.params import excerpt


# -- family rules -----------------------------------------------------------------------------------------
def gemma4_normalise(keys: Keys) -> None:
    """Gemma 4 (``Gemma4TextConfig.__post_init__``): the last layer attends fully whatever
    ``layer_types`` says, and without ``per_layer_config`` every full-attention layer takes the head size
    ``global_head_dim`` (512 by default) instead of ``head_dim``."""
    data = dict(keys.data)
    types = data.get("layer_types")
    if isinstance(types, list) and types and types[-1] != "full_attention":
        keys.warn(f"layer_types ends with {types[-1]!r} in {keys.source}; Gemma 4 makes its last layer full_attention, as pecli does")
        data["layer_types"] = [*types[:-1], "full_attention"]
    keys.data = data
    if data.get("per_layer_config") is None:
        types = read_layer_types(keys, GENERIC, num_layers(keys)) or []
        size = data.get("global_head_dim", 512)
        data["per_layer_config"] = {str(i): {"head_dim": size} for i, kind in enumerate(types) if kind == "full_attention"}
        keys.from_class = keys.from_class | {"per_layer_config"}
        keys.note_default("global_head_dim", size)


def every_nth_full(pattern_key: str, family_type: str) -> Callable[[Keys, int], list[str]]:
    """Sliding-window layers with every ``pattern``-th one full attention: layer i is full when
    (i + 1) % pattern == 0 (Gemma 3's ``sliding_window_pattern``, Cohere 2); without the key, the period of
    the layer types the config class (``family_type``'s) derives from its defaults (Gemma 3: 6, Cohere 2: 4)."""
    def layer_types(keys: Keys, count: int) -> list[str]:
        pattern = keys.get(pattern_key, "sliding_window_pattern", default=default_layer_period(keys.classes(family_type)))
        return ["full_attention" if (i + 1) % int(pattern) == 0 else "sliding_attention" for i in range(count)]
    return layer_types


def gemma2_layer_types(keys: Keys, count: int) -> list[str]:
    """Gemma 2 alternates: even layers slide, odd layers attend fully (``layer_idx % 2``)."""
    return ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(count)]


def modernbert_layer_types(keys: Keys, count: int) -> list[str]:
    """ModernBERT: layer i attends globally when i % ``global_attn_every_n_layers`` == 0 (without it, the
    period of the layer types ``ModernBertConfig`` derives from its defaults: 3)."""
    every = keys.get("global_attn_every_n_layers", default=default_layer_period(keys.classes("modernbert")))
    return ["full_attention" if i % int(every) == 0 else "sliding_attention" for i in range(count)]


def gemma3_per_type(keys: Keys, family: Family, layer_type: str) -> dict[str, Any] | None:
    """Gemma 3 (legacy keys): sliding layers on ``rope_local_base_freq`` (10,000) unscaled; full
    layers on ``rope_theta`` with the ``rope_scaling`` block."""
    if layer_type == "sliding_attention":
        return rope_options(keys, family, {}, base_key="rope_local_base_freq")
    return rope_options(keys, family)


def modernbert_per_type(keys: Keys, family: Family, layer_type: str) -> dict[str, Any] | None:
    """ModernBERT (legacy keys): ``global_rope_theta`` and ``local_rope_theta``, each else its class's
    ``default_theta`` (160,000 and 10,000)."""
    key, kind = ("global_rope_theta", "global") if layer_type == "full_attention" else ("local_rope_theta", "local")
    return rope_options(keys, family, {}, base_key=key, base_default=default_base(keys.classes("modernbert"), kind))


def sliding_only_per_type(keys: Keys, family: Family, layer_type: str) -> dict[str, Any] | None:
    """Cohere 2, EXAONE 4, AFMoE, Flint, Kolibri: RoPE in the sliding-window layers only, the full-attention
    layers apply none — when the model has a ``sliding_window``; without one every layer rotates
    (their attention applies RoPE where ``sliding_window is not None or is_sliding``)."""
    if layer_type == "sliding_attention" or keys.get("sliding_window") is None:
        return rope_options(keys, family)
    return None


def cross_attention_layers(keys: Keys, count: int) -> set[int]:
    """Mllama: the layers of ``cross_attention_layers`` attend to the image, without RoPE."""
    keys.refuse_underived("cross_attention_layers")
    layers = keys.get("cross_attention_layers") or []
    if not isinstance(layers, list) or not all(isinstance(i, int) and 0 <= i < count for i in layers):
        raise ConfigError("cross_attention_layers", f"must list layer indices below {count}, got {excerpt(layers)}")
    return set(layers)


def outside_attention_layers(keys: Keys, count: int) -> set[int]:
    """Bamba: RoPE in the layers of ``attn_layer_indices`` only (the others are Mamba layers); none
    listed, none rotates."""
    listed = keys.get("attn_layer_indices") or []
    if not isinstance(listed, list) or not all(isinstance(i, int) and 0 <= i < count for i in listed):
        raise ConfigError("attn_layer_indices", f"must list layer indices below {count}, got {excerpt(listed)}")
    keys.get("attn_layer_indices")
    return set(range(count)) - set(listed)


def block_types_cycle(keys: Keys, count: int) -> list[str]:
    """RecurrentGemma: ``block_types`` repeated over the layers (recurrent, recurrent, attention, …)."""
    pattern = keys.get("block_types")
    if not isinstance(pattern, list) or not pattern:
        raise ConfigError("block_types", f"must list the block types of the layers' pattern, got {excerpt(pattern)}")
    return [str(pattern[i % len(pattern)]) for i in range(count)]


def attention_blocks_only(keys: Keys, family: "Family", layer_type: str) -> dict[str, Any] | None:
    """RecurrentGemma: RoPE in the attention blocks; the recurrent blocks have none."""
    if layer_type == "attention":
        return rope_options(keys, family)
    if layer_type == "recurrent":
        return None
    raise ConfigError("block_types", f"names {layer_type!r}; RecurrentGemma's blocks are recurrent or attention")


def scaled_layers(keys: Keys, family: "Family", layer_type: str) -> dict[str, Any] | None:
    """Molmo 2: the scaling applies to the layers of ``rope_scaling_layers``; with no scaling, or every
    layer listed, all layers share one RoPE. A scaling on some layers only is refused: not read yet."""
    options = rope_options(keys, family)
    listed = keys.get("rope_scaling_layers")
    count = num_layers(keys)
    if listed is not None and "rope_scaling" in options and sorted(listed) != list(range(count or 0)):
        raise ConfigError("rope_scaling_layers", "scales some layers only; pecli reads a scaling on every layer or none")
    return options


def no_rope_layers(family_type: str, empty_is_default: bool = False,
                   one_per_layer: bool = False) -> Callable[[Keys, int], set[int]]:
    """Layers whose entry of ``no_rope_layers`` is 0 (1: the layer uses RoPE — Llama 4, SmolLM3); by
    default every ``no_rope_layer_interval``-th layer (its class's default: 4; ``family_type``'s class
    where the config's type has no record). ``empty_is_default``: an empty list means the
    default too (``Llama4TextConfig`` keeps the list only when it is truthy; Llama 4 Scout ships ``[]``).
    ``one_per_layer``: a list longer than the layers is refused (Llama 4's class derives ``layer_types`` from
    it, which ``validate_layer_type`` holds to ``num_hidden_layers``; SmolLM3's reads the first entries)."""
    def layers(keys: Keys, count: int) -> set[int]:
        interval_default = declared_default(keys.classes(family_type), "no_rope_layer_interval")
        flags = keys.get("no_rope_layers")
        if empty_is_default and flags == []:
            keys.warn("no_rope_layers is [], which transformers reads as its default: every "
                      f"{keys.get('no_rope_layer_interval', default=interval_default, record_default=False)}th layer has no RoPE")
            flags = None
        interval = int(keys.get("no_rope_layer_interval", default=interval_default, record_default=flags is None))
        if flags is None:
            return {i for i in range(count) if (i + 1) % interval == 0}
        if not isinstance(flags, list) or len(flags) < count or (one_per_layer and len(flags) != count):
            raise ConfigError("no_rope_layers", f"must list a 0 or 1 for each of the num_hidden_layers {count} layers, got {excerpt(flags)}")
        return {i for i in range(count) if not flags[i]}
    return layers


def zamba2_normalise(keys: Keys) -> None:
    """Zamba2 (``Zamba2Config.__post_init__``): attention heads of 2·hidden_size / num_attention_heads
    (its attention runs on the concatenation of two hidden states), named ``attention_head_dim``."""
    data = dict(keys.data)
    if data.get("attention_head_dim") is None and data.get("head_dim") is None:
        hidden, heads = keys.positive_int("hidden_size"), keys.positive_int("num_attention_heads")
        data["attention_head_dim"] = 2 * hidden // heads
        keys.data = data
        keys.from_class = keys.from_class | {"attention_head_dim"}
    keys.underived.pop("head_dim", None)


def zamba2_layer_types(keys: Keys, count: int) -> list[str]:
    """Zamba2's ``layers_block_type`` (alias ``layer_types``), else the list its class derives."""
    given = keys.get("layers_block_type", "layer_types")
    if given is None:
        given, differ = derived_value(keys.data, "layer_types")
        if given is None or differ:
            raise ConfigError("layers_block_type", f"is not in {keys.source} and its class derives it from "
                              f"{', '.join(differ) or 'its defaults'}: give layers_block_type in the config")
        keys.note_default("layers_block_type", given)
    if not isinstance(given, list) or len(given) != count:  # transformers' validate_layer_type: one per layer
        raise ConfigError("layers_block_type", f"must list a block type for each of the {count} layers, got {excerpt(given)}")
    return [str(kind) for kind in given[:count]]


def zamba2_per_type(keys: Keys, family: Family, layer_type: str) -> dict[str, Any] | None:
    """Zamba2: RoPE in the shared-attention (``hybrid``) blocks when ``use_mem_rope``; the Mamba layers
    (``mamba``, ``linear_attention`` in transformers 5) none."""
    if layer_type == "hybrid" and keys.get("use_mem_rope"):
        return rope_options(keys, family)
    if layer_type in ("hybrid", "mamba", "linear_attention"):  # linear_attention: transformers 5's name for mamba
        return None
    raise ConfigError("layers_block_type", f"names {layer_type!r}; Zamba2's blocks are mamba (linear_attention) or hybrid")


def position_type_per_type(keys: Keys, family: Family, layer_type: str) -> dict[str, Any] | None:
    """GraniteMoeHybrid: RoPE in the attention layers when ``position_embedding_type`` is ``rope``; none in
    the Mamba (``linear_attention``) layers, and none anywhere without it."""
    if layer_type in NO_ROPE_TYPES or keys.get("position_embedding_type") != "rope":
        return None
    return rope_options(keys, family)
