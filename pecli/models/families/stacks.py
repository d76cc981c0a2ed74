"""The groups of families that are not one per-layer RoPE stack: ALiBi, T5 buckets, sinusoidal and
learned tables, and models of several stacks (an encoder and a decoder, each read as a RoPE model).
"""

from __future__ import annotations

from typing import Any, Callable

from pecli.errors import ConfigError
from pecli.models.sources.class_defaults import declared_default
from pecli.models.families.keys import HEADS_KEYS, Keys, refuse_unread, text_part
from pecli.models.families.record import Family
from pecli.models.families.rope import num_layers, per_layer_rope, rope_options
from pecli.models.plan import LayerGroup, Origin, Source, stamped


# -- families of other schemes ---------------------------------------------------------------------------
def whole_model(name: str, options: dict[str, Any], keys: Keys, note: str = "") -> LayerGroup:
    count = num_layers(keys)
    return LayerGroup(name, tuple(range(count)) if count else (), options, tuple(keys.read), tuple(keys.defaulted), note,
                      sources=stamped(keys.sources, options))


def alibi_groups(keys: Keys, family: Family) -> list[LayerGroup]:
    """ALiBi in every layer, one slope per head (BLOOM, MPT: the paper's slopes). MPT's
    ``attn_config.alibi_bias_max`` is not passed on by transformers' ``MptModel``, which always uses 8."""
    bias_max = (keys.data.get("attn_config") or {}).get("alibi_bias_max")
    if bias_max is not None and bias_max != 8:
        keys.warn(f"attn_config.alibi_bias_max {bias_max}: transformers' MPT does not pass it to its ALiBi, which "
                  "keeps 8 (the paper's slopes); so does pecli")
    heads = keys.traced("heads", lambda: alibi_heads(keys))
    return [whole_model("all", {"scheme": "alibi", "heads": heads}, keys, note="slopes as the paper's reference code")]


def falcon_alibi_groups(keys: Keys, family: Family) -> list[LayerGroup]:
    """Falcon-RW: ALiBi with its slopes rounded to bfloat16 (``build_alibi_tensor`` forms them so)."""
    options = {"scheme": "alibi", "heads": keys.traced("heads", lambda: alibi_heads(keys)), "slope_dtype": "bfloat16"}
    keys.attribute("slope_dtype", [("model_type", Origin.MODEL_CODE)])
    note = ("Falcon rounds its slopes to bfloat16 (so do these), and multiplies them by positions in bfloat16: "
            "past a distance of 256 its bias is coarser than pecli's")
    keys.warn(note)
    return [whole_model("all", options, keys, note=note)]


def alibi_heads(keys: Keys) -> int:
    heads = keys.first_int(*HEADS_KEYS)
    if heads is None:
        raise ConfigError("hf_config", f"{keys.source} gives no number of attention heads (n_head, num_attention_heads)")
    return heads


def t5_groups(keys: Keys, family: Family) -> list[LayerGroup]:
    """T5 buckets: bidirectional in the encoder, causal in the decoder (the first layer of each stack
    computes the bias; the others reuse it)."""
    classes = keys.classes("t5")
    common = {"scheme": "t5",
              "buckets": keys.traced("buckets", lambda: keys.get(
                  "relative_attention_num_buckets", default=declared_default(classes, "relative_attention_num_buckets"))),
              "max_distance": keys.traced("max_distance", lambda: keys.get(
                  "relative_attention_max_distance", default=declared_default(classes, "relative_attention_max_distance")))}
    keys.attribute("bidirectional", [("model_type", Origin.MODEL_CODE)])  # the encoder's, not the decoder's
    encoder = keys.first_int("num_layers") or 0
    decoder = keys.first_int("num_decoder_layers") or encoder
    read, defaulted, sources = tuple(keys.read), tuple(keys.defaulted), tuple(keys.sources)
    return [LayerGroup("encoder", tuple(range(encoder)), {**common, "bidirectional": True}, read, defaulted,
                       "encoder stack: keys on both sides", sources=stamped(sources, {**common, "bidirectional": True})),
            LayerGroup("decoder", tuple(range(decoder)), {**common, "bidirectional": False}, read, defaulted,
                       "decoder stack: causal buckets", sources=stamped(sources, {**common, "bidirectional": False}))]


def sinusoidal_groups(spacing: str, note: str = "") -> Callable[[Keys, "Family"], list[LayerGroup]]:
    """A fixed sinusoidal table, sines then cosines, added to the embeddings of both stacks (Marian,
    Pegasus: ``spacing`` vaswani; fairseq's models: tensor2tensor)."""
    def groups(keys: Keys, family: Family) -> list[LayerGroup]:
        options = {"scheme": "sinusoidal", "dim": keys.traced("dim", lambda: keys.first_int("d_model", "hidden_size")),
                   "layout": "half", "spacing": spacing}
        keys.attribute("layout", [("model_type", Origin.MODEL_CODE)])
        keys.attribute("spacing", [("model_type", Origin.MODEL_CODE)])
        return [whole_model("all", options, keys, note=note)]
    return groups


def sub_config_stacks(*stacks: tuple[str, str], layout: str = "half") -> Callable[[Keys, "Family"], list[LayerGroup]]:
    """An encoder–decoder (or several-stack) model whose stacks are sub-configs, each read as a RoPE model
    in ``layout``: ``stacks`` are ``(sub-config key, group name)`` (Dia: ``encoder_config`` → ``encoder``);
    a stack's groups are named ``NAME/…`` when it has several."""
    def groups(keys: Keys, family: Family) -> list[LayerGroup]:
        out = []
        for key, stack in stacks:
            sub = keys.get(key)
            if not isinstance(sub, dict):
                raise ConfigError(key, f"{keys.source} has no {key} sub-config")
            stack_keys = Keys(text_part(sub), f"{keys.source} ({key})")  # T5Gemma 2: the encoder's text_config
            found = per_layer_rope(stack_keys, Family(family.name, (), layout=layout, note=family.note))
            refuse_unread(stack_keys, found, sub.get("model_type"))
            keys.warnings.extend(stack_keys.warnings)
            for group in found:
                name = stack if len(found) == 1 else f"{stack}/{group.name}"
                out.append(LayerGroup(name, group.layers, group.options, tuple(f"{key}.{k}" for k in group.keys_read),
                                      tuple(f"{key}.{k}" for k in group.keys_defaulted), group.note,
                                      sources=tuple(Source(s.setting, f"{key}.{s.key}", s.origin, s.value) for s in group.sources)))
        return out
    return groups


#: T5Gemma: an encoder and a decoder, each a RoPE model of its own (T5Gemma 2's encoder nests its text).
stack_groups = sub_config_stacks(("encoder", "encoder"), ("decoder", "decoder"))


def moonshine_groups(keys: Keys, family: Family) -> list[LayerGroup]:
    """Moonshine: an encoder and a decoder, both on one rotary module built from the top-level config, whose
    head size is ``hidden_size`` over ``num_attention_heads`` (``attribute_map``: the decoder's heads), with
    ``partial_rotary_factor`` (0.9 by default) of it rotated, in interleaved pairs."""
    heads = keys.first_int("decoder_num_attention_heads", "num_attention_heads")
    hidden = keys.positive_int("hidden_size")
    if heads is None or hidden % heads:
        raise ConfigError("decoder_num_attention_heads", f"must divide hidden_size {hidden} in {keys.source}")
    data = dict(keys.data)
    keys.data = {**data, "head_dim": hidden // heads}
    try:
        options = rope_options(keys, family)
    finally:
        keys.data = data
    read, defaulted, sources = keys.keys(), tuple(keys.defaulted), tuple(keys.sources)
    encoder = keys.first_int("encoder_num_hidden_layers") or 0
    decoder = keys.first_int("decoder_num_hidden_layers") or 0
    return [LayerGroup("encoder", tuple(range(encoder)), options, read, defaulted, family.note, sources=stamped(sources, options)),
            LayerGroup("decoder", tuple(range(decoder)), options, read, defaulted, family.note, sources=stamped(sources, options))]


def whisper_groups(keys: Keys, family: Family) -> list[LayerGroup]:
    """Whisper: a fixed table in the encoder (sines then cosines, tensor2tensor spacing), learned
    positions in the decoder."""
    dim = keys.traced("dim", lambda: keys.first_int("d_model"))
    keys.attribute("layout", [("model_type", Origin.MODEL_CODE)])
    keys.attribute("spacing", [("model_type", Origin.MODEL_CODE)])
    encoder = keys.first_int("encoder_layers") or 0
    decoder = keys.first_int("decoder_layers") or 0
    return [LayerGroup("encoder", tuple(range(encoder)), {"scheme": "sinusoidal", "dim": dim, "layout": "half", "spacing": "tensor2tensor"},
                       keys.keys(), tuple(keys.defaulted), "encoder: the sinusoids table (timescale increment ln(10000)/(d/2 − 1))",
                       sources=stamped(keys.sources, {"dim": dim, "layout": "half", "spacing": "tensor2tensor"})),
            LayerGroup("decoder", tuple(range(decoder)), {"scheme": "learned"}, keys.keys(), tuple(keys.defaulted),
                       "decoder: a learned table, from the checkpoint (--weights)")]


def learned_groups(keys: Keys, family: Family) -> list[LayerGroup]:
    """A learned position table: its values are in the checkpoint (``--weights``), not in the config.
    BERT-like ``position_embedding_type`` must be ``absolute`` (the table); Shaw-style relative keys
    (``relative_key``, ``relative_key_query``) are refused."""
    kind = keys.get("position_embedding_type")
    if kind is not None and kind != "absolute":
        raise ConfigError("position_embedding_type", f"is {kind!r} in {keys.source}: relative position embeddings in "
                          "the attention, which pecli does not read from a config (only 'absolute' tables)")
    keys.get("n_positions", "max_position_embeddings")
    return [whole_model("all", {"scheme": "learned"}, keys, note="a learned table: its values come from the checkpoint (--weights)")]
