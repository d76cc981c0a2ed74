"""Generic RoPE reading: the head dimension, the base, the rotated fraction and the scaling block of the
model or of one layer type (:func:`rope_options`), a RoPE model's groups layer by layer
(:func:`per_layer_rope`), and a Qwen-VL model's multimodal RoPE (:func:`mrope_options`).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping

from pecli.errors import ConfigError
from pecli.models.sources.class_defaults import FILLED, LEGACY_THETA, derived_value
from pecli.models.families.keys import HEAD_DIM_KEYS, HEADS_KEYS, HIDDEN_KEYS, POSITIONAL_KEY, WINDOW_KEYS, Keys
from pecli.models.families.record import GENERIC, Family
from pecli.models.logit_scale import BETA_SCALED_TYPES, attention_only_keys
from pecli.models.partial import effective_fraction
from pecli.models.plan import NOPE, LayerGroup, Origin, stamped
from pecli.params import excerpt
from pecli.schemes.frequencies import DEFAULT_BASE
from pecli.schemes.scaling.recipes import ATTENTION_READ_KEYS
from pecli.schemes.scaling.registry import find_scaling
from pecli.schemes.scaling.rope_type import hf_rope_type
from pecli.schemes.scaling.unscaled import NO_SCALING




def keys_of_type(kind: Any) -> tuple[str, ...]:
    """The keys a ``rope_scaling`` block of rope type ``kind`` takes (all of them for a type pecli does not know)."""
    record = find_scaling(kind, aliases=False)
    return tuple(key.name for key in record.keys) if record is not None else ATTENTION_READ_KEYS


# -- RoPE: the model-wide options ------------------------------------------------------------------------
def head_dim(keys: Keys, family: Family) -> int:
    """The rotary head dimension: the family's keys, ``head_dim`` (or an alias), else width / heads."""
    found = keys.first_int(*family.head_dim_keys, *HEAD_DIM_KEYS)
    if found is not None:
        return found
    keys.refuse_underived("head_dim")
    hidden_key = next((k for k in HIDDEN_KEYS if keys.has(k)), None)
    heads_key = next((k for k in HEADS_KEYS if keys.has(k)), None)
    if hidden_key is None or heads_key is None:
        raise ConfigError("hf_config", f"{keys.source} gives neither head_dim nor hidden_size and num_attention_heads")
    hidden, heads = keys.positive_int(hidden_key), keys.positive_int(heads_key)
    if hidden % heads:
        raise ConfigError("hf_config", f"{hidden_key} {hidden} is not a multiple of {heads_key} {heads}; give head_dim")
    return hidden // heads


def rope_block(keys: Keys) -> dict[str, Any] | None:
    """The model-wide ``rope_parameters`` (v5) or ``rope_scaling`` block, None when absent."""
    key = "rope_parameters" if keys.has("rope_parameters") else "rope_scaling"
    block = keys.get(key)
    if block is not None and not isinstance(block, dict):
        raise ConfigError(key, f"must be a mapping (dict) or null, got {type(block).__name__}")
    return block


def per_type_blocks(keys: Keys) -> dict[str, dict[str, Any]] | None:
    """transformers 5's ``rope_parameters`` nested per layer type (``{"full_attention": {...}, …}``), or None."""
    block = keys.data.get("rope_parameters")
    if isinstance(block, dict) and block and all(isinstance(value, dict) or value is None for value in block.values()) \
            and any(isinstance(value, dict) for value in block.values()):
        keys.get("rope_parameters")
        return block
    return None


def rope_base(keys: Keys, in_block: Mapping[str, Any]) -> Any:
    """The model's RoPE base: a block's own ``rope_theta`` wins over the top-level key (GPT-NeoX:
    ``rotary_emb_base``), as transformers' ``standardize_rope_params`` (``setdefault``) has it, so with
    per-type blocks each type keeps its own base; 10000, HF's default, when none is given. A family whose
    code hard-codes the base (GPT-J, CodeGen: ``create_sinusoidal_positions``) ignores both."""
    top = keys.get("rope_theta", "rotary_emb_base", default=DEFAULT_BASE if in_block.get("rope_theta") is None else None)
    return in_block["rope_theta"] if in_block.get("rope_theta") is not None else top


def rope_options(
    keys: Keys, family: Family, block: Mapping[str, Any] | None = None, *, base_key: str | None = None,
    base_default: float = DEFAULT_BASE, block_source: Callable[[str], tuple[str, Origin]] | None = None,
) -> dict[str, Any]:
    """The ``rope`` options of the model, or of one layer type when ``block`` is that type's own block
    (``{}``: unscaled) and ``base_key`` its own base key; ``block_source(field)`` says which key gave a
    field of that block, and its origin (by default the model-wide block's key). Each option's sources
    are recorded (:meth:`Keys.traced`).

    ``rope_theta`` (GPT-NeoX: ``rotary_emb_base``; v5: inside ``rope_parameters``; 10000, HF's default,
    when none is given), ``partial_rotary_factor`` (``rotary_pct``; GPT-J: ``rotary_dim`` per head; both
    given must agree), ``max_position_embeddings`` (``n_positions``) and the scaling block, with a
    top-level ``original_max_position_embeddings`` moved into it for the types where HF moves it.
    """
    dim = keys.traced("dim", lambda: head_dim(keys, family))
    ignored = block is None and "rope_theta" in family.ignores  # the model's code hard-codes its frequencies
    own_block = (None if ignored else rope_block(keys)) if block is None else dict(block)
    in_block = own_block or {}
    block_source = block_source or model_block_source(keys)
    options: dict[str, Any] = {"scheme": "rope", "dim": dim, "layout": rope_layout(keys, family)}
    if family.direction != "positive":  # nanochat's reversed rotate_half
        options["direction"] = family.direction
        keys.attribute("direction", [("model_type", Origin.MODEL_CODE)])
    if base_key is not None:  # Gemma 3's rope_local_base_freq
        options["base"] = keys.traced("base", lambda: keys.get(base_key, default=base_default))
    elif ignored:
        options["base"] = DEFAULT_BASE
        keys.attribute("base", [("model_type", Origin.MODEL_CODE)])
    elif in_block.get("rope_theta") is not None:  # the block's own base wins over a top-level key
        options["base"] = rope_base(keys, in_block)
        keys.attribute("base", [block_source("rope_theta")])
    else:
        options["base"] = keys.traced("base", lambda: rope_base(keys, in_block))
    warn_small_base(keys, options["base"])
    fraction = rotated_fraction(keys, family, dim, in_block, block_source)
    if fraction is not None:
        options["partial_rotary_factor"] = fraction
    longest, heard = keys.listened(lambda: keys.get("max_position_embeddings", "n_positions"))
    if longest is not None:
        options["max_position_embeddings"] = longest
        keys.attribute("max_position_embeddings", heard)
    block_type = hf_rope_type(in_block, None)
    if block_type == "proportional":
        # Gemma 4: the first floor(p · head_dim / 2) pairs of base^(−2i/head_dim) turn, the others stay still —
        # pecli's p-RoPE with rope_fraction p over the whole head; a factor divides them (linear).
        fraction = in_block.get("partial_rotary_factor")
        options["rope_fraction"] = 1.0 if fraction is None else fraction
        keys.attribute("rope_fraction", [block_source("partial_rotary_factor" if fraction is not None else "rope_type")])
        options.pop("partial_rotary_factor", None)
        factor = in_block.get("factor")
        own_block = {"rope_type": "linear", "factor": factor} if factor not in (None, 1, 1.0) else {}
    original_heard: list[tuple[str, Origin]] = []
    record = find_scaling(block_type)  # HF moves a top-level original length into the block of a type that starts from it
    if keys.has("original_max_position_embeddings") and record is not None and record.from_original_length:
        original, original_heard = keys.listened(lambda: keys.get("original_max_position_embeddings"))
        own_block = {**in_block, "original_max_position_embeddings": original}
    if in_block.get("llama_4_scaling_beta") is not None and keys.data.get("model_type") not in BETA_SCALED_TYPES:
        keys.warn(f"llama_4_scaling_beta {in_block['llama_4_scaling_beta']}: transformers scales the queries by "
                  "1 + β·ln(1 + ⌊p / original_max_position_embeddings⌋) in its attention, not in cos and sin; "
                  "pecli's numbers are those of the rotary module and leave that scale out")
    # The block's rope_theta and partial_rotary_factor were read above, into the options themselves; a
    # max_position_embeddings there is the model's (transformers 5 copies it in).
    if "max_position_embeddings" not in options and in_block.get("max_position_embeddings") is not None:
        options["max_position_embeddings"] = in_block["max_position_embeddings"]
        keys.attribute("max_position_embeddings", [block_source("max_position_embeddings")])
    # DeepSeek's mscale_all_dim under llama3, dynamic, linear, …: its attention's, not its frequencies'
    attention_only = attention_only_keys(keys.data.get("model_type"), own_block)
    scaling = {k: v for k, v in (own_block or {}).items()
               if k not in ("rope_theta", "partial_rotary_factor", "llama_4_scaling_beta", "max_position_embeddings",
                            *attention_only)}
    if scaling and scaling != {k: NO_SCALING.hf_name for k in scaling}:  # a block that only says "default" scales nothing
        options["rope_scaling"] = scaling
        keys.attribute("rope_scaling", [block_source("rope_scaling"), *original_heard])
    return options


def rope_layout(keys: Keys, family: Family) -> str:
    """The family's layout, ``half`` where the config turns DeepSeek's interleaving off (``rope_interleave``:
    its attention tests the key's truth)."""
    interleave = keys.get("rope_interleave")
    if family.layout == "interleaved" and interleave is not None:
        keys.attribute("layout", [("rope_interleave", keys.origin("rope_interleave"))])
        if not interleave:
            return "half"
    # the model's code (a model type pecli does not know: its reading's default, half)
    keys.attribute("layout", [("model_type", Origin.DEFAULT if family is GENERIC else Origin.MODEL_CODE)])
    return family.layout


def rotated_fraction(keys: Keys, family: Family, dim: int, in_block: Mapping[str, Any],
                     block_source: Callable[[str], tuple[str, Origin]]) -> Any:
    """The ``partial_rotary_factor`` option (None: the whole head): the block's, else the family's keys
    (``rotary_pct``; GPT-J: ``rotary_dim`` per head; both given must agree); an MLA head's, as its rotary
    module turns it, relative to the family's head-dimension key."""
    top_fraction, heard = keys.listened(lambda: keys.get(*family.fraction_keys, default=family.fraction_default))
    if in_block.get("partial_rotary_factor") is not None:
        heard = [block_source("partial_rotary_factor")]
    fraction = in_block["partial_rotary_factor"] if in_block.get("partial_rotary_factor") is not None else top_fraction
    fraction, warning = effective_fraction(fraction, keys.data.get("model_type"), hf_rope_type(in_block, None), keys.source)
    if warning:
        keys.warn(warning)
    rotary_dim, rotary_heard = keys.listened(lambda: None if "rotary_dim" in family.ignores else keys.first_int("rotary_dim"))
    if fraction is not None and rotary_dim is not None and abs(float(fraction) * dim - rotary_dim) > 1e-9:
        raise ConfigError("partial_rotary_factor", f"{fraction} × head_dim {dim} disagrees with rotary_dim {rotary_dim} in {keys.source}")
    valid = isinstance(fraction, (int, float)) and not isinstance(fraction, bool) and 0 < fraction <= 1
    if valid and any(keys.has(k) for k in family.head_dim_keys):  # else the scheme refuses it, naming it
        # MLA: HF's rotary module turns int(head_dim × factor) components, all of them in q_pe, whose
        # width the family key gives (dots.llm3: head_dim 256 × 0.25 = qk_rope_head_dim 64).
        whole, whole_heard = keys.listened(lambda: head_dim(keys, GENERIC))
        heard = [*heard, *whole_heard]
        rotary = int(whole * float(fraction))
        if rotary > dim:
            raise ConfigError("partial_rotary_factor", f"{fraction} × head_dim gives {rotary} rotated components, more than "
                              f"the {dim} of {family.head_dim_keys[0]} in {keys.source}")
        fraction = None if rotary == dim else rotary / dim
    if fraction is None and rotary_dim is not None:
        fraction, heard = rotary_dim / dim, rotary_heard
    if fraction is not None:
        keys.attribute("partial_rotary_factor", heard)
    return fraction


def model_block_source(keys: Keys) -> Callable[[str], tuple[str, Origin]]:
    """Which key gave a field of the model-wide RoPE block, and its origin: the block's key
    (``rope_parameters``, else ``rope_scaling``), the file's or its class's."""
    key = "rope_parameters" if keys.has("rope_parameters") else "rope_scaling"
    return lambda field: (key, keys.origin(key))


def type_block_source(keys: Keys, layer_type: str) -> Callable[[str], tuple[str, Origin]]:
    """Which key gave a field of layer type ``layer_type``'s own ``rope_parameters`` entry: its base the
    class's default where the class filled it in, a legacy key the class moved into it (Gemma 3's
    ``rope_local_base_freq``, ``rope_scaling``) under its own name, else ``rope_parameters``."""
    def source(field: str) -> tuple[str, Origin]:
        if field == "rope_theta" and f"rope_parameters.{layer_type}.rope_theta" in keys.from_class:
            return "rope_theta", Origin.CLASS_DEFAULT
        legacy = LEGACY_THETA.get(layer_type, ()) if field == "rope_theta" else ("rope_scaling",) if field == "rope_scaling" else ()
        moved = next((key for key in legacy if key in keys.moved), None)
        if moved is not None:
            return moved, Origin.CONFIG
        return "rope_parameters", keys.origin("rope_parameters")
    return source


def warn_small_base(keys: Keys, base: Any) -> None:
    """A base of 1 or less, said on stderr: θ_i = base^(−2i/d) is then 1 for every pair (base 1: every
    pair turns alike, one radian a token) or grows with i (below 1), so no pair has a wavelength longer than
    2π tokens. transformers' RoPE validation reads no bound on ``rope_theta`` (its rotary module computes
    1 / base^(2i/d) from any number), so pecli computes the model's numbers, and says what they are."""
    if isinstance(base, (int, float)) and not isinstance(base, bool) and 0 < base <= 1:
        alike = "every pair turns at frequency 1, all alike" if base == 1 else "the frequencies grow with the pair"
        keys.warn(f"a RoPE base of {base:g} in {keys.source}: {alike}, so no pair's wavelength exceeds 2π tokens "
                  "(transformers accepts it; so does pecli)")


# -- RoPE: per layer ---------------------------------------------------------------------------------------
def num_layers(keys: Keys) -> int | None:
    """The number of layers: its key, else the length of a per-layer list (``layer_types``, …)."""
    found = keys.first_int("num_hidden_layers", "n_layer", "num_layers", "n_layers")
    if found is not None:
        return found
    for key in ("layer_types", "layer_rope_theta", "no_rope_layers"):
        if isinstance(keys.data.get(key), list) and keys.data[key]:
            return len(keys.data[key])
    return None


def read_layer_types(keys: Keys, family: Family, count: int | None) -> list[str] | None:
    """The type of every layer: the config's ``layer_types``, else the family's rule, else None."""
    given = keys.get("layer_types")
    if given is not None:
        if not isinstance(given, list) or not all(isinstance(t, str) for t in given):
            raise ConfigError("layer_types", f"must be a list of layer type names, got {excerpt(given)}")
        if count is not None and len(given) != count:  # transformers' validate_layer_type: one entry per layer
            raise ConfigError("layer_types", f"lists {len(given):,} layers but num_hidden_layers is {count} in {keys.source}; "
                              "it must give one type per layer (transformers refuses it too)")
        return given
    if family.layer_types is not None and count is not None:
        return family.layer_types(keys, count)
    derived, differ = derived_value(keys.data, "layer_types")
    if derived is None or (not differ and set(derived) == {"full_attention"} and per_type_blocks(keys) is None):
        return None  # every layer full attention: one group, "all", as for a class that derives nothing
    if differ:
        raise ConfigError("layer_types", f"is not in {keys.source}; its config class derives it from "
                          f"{', '.join(differ)}, which differ from the class's defaults, by a rule pecli does not have: "
                          "give layer_types in the config")
    keys.note_default("layer_types", derived)
    return derived[:count] if count is not None else derived


def per_layer_rope(keys: Keys, family: Family) -> list[LayerGroup]:
    """The groups of a RoPE model: one per layer type whose encoding differs (layer types on the same
    encoding share a group named ``a+b``), and :data:`NOPE` for the layers without one."""
    count = num_layers(keys)
    types = read_layer_types(keys, family, count)
    nested = per_type_blocks(keys)
    if nested is not None and types is None:
        raise ConfigError("rope_parameters", f"is given per layer type ({', '.join(nested)}) but {keys.source} has no layer_types")
    nope = family.nope_layers(keys, count) if family.nope_layers is not None and count is not None else set()
    # Granite SWA: a base of 0 in layer_rope_theta is a layer without RoPE.
    nope |= {i for i, theta in enumerate(keys.data.get("layer_rope_theta") or []) if isinstance(theta, (int, float)) and not theta}

    def encoding_of(layer_type: str) -> dict[str, Any] | None:
        if nested is not None:
            if layer_type in NO_ROPE_TYPES:
                return None
            if layer_type not in nested:
                raise ConfigError("rope_parameters", f"has no entry for layer type {layer_type!r} of layer_types "
                                  f"(its entries: {', '.join(nested)})")
            if nested[layer_type] is None:  # transformers 5 writes null for a layer type without RoPE (Beam)
                return None
            if f"rope_parameters.{layer_type}.rope_theta" in keys.from_class:
                keys.note_default("rope_theta", nested[layer_type]["rope_theta"])
            return rope_options(keys, family, nested[layer_type], block_source=type_block_source(keys, layer_type))
        if types is not None and family.per_type is not None:
            return family.per_type(keys, family, layer_type)
        if types is not None and layer_type in NO_ROPE_TYPES:
            return None
        if types is not None and layer_type not in SAME_ROPE_TYPES:
            raise ConfigError("layer_types", f"names layer type {layer_type!r}, which pecli cannot map to a position "
                              f"encoding for model family {family.name} (known: {', '.join(SAME_ROPE_TYPES)})")
        return rope_options(keys, family)

    overrides = layer_overrides(keys, count)
    kinds = {layer: (types[layer] if types is not None else "all", overrides.get(layer, "")) for layer in range(count or 0)}
    if count is None:  # no layer count: one group for every layer
        kinds = {-1: ("all", "")}
    drafts = {kind: keys.scoped(lambda t=kind[0], o=kind[1]: keys.overlaid(o, lambda: encoding_of(t)))
              for kind in dict.fromkeys(kinds.values())}
    # A layer type whose layers differ by their per-layer keys is split, its parts numbered from 1; layers
    # whose overrides change nothing stay in the type's one group.
    variants: dict[str, list[Any]] = {}
    for (layer_type, _), draft in drafts.items():
        if draft[0] not in variants.setdefault(layer_type, []):
            variants[layer_type].append(draft[0])
    names = {kind: kind[0] if len(variants[kind[0]]) == 1 else f"{kind[0]}-{variants[kind[0]].index(draft[0]) + 1}"
             for kind, draft in drafts.items()}
    by_layer: dict[str, list[int]] = {}
    for layer, kind in kinds.items():
        name = NOPE if layer in nope or drafts[kind][0] is None else names[kind]
        by_layer.setdefault(name, []).append(layer)
    drafts = {names[kind]: draft for kind, draft in drafts.items()}
    if count is None:
        by_layer = {"all": []}
    groups: list[LayerGroup] = []
    for name, layers in by_layer.items():
        if name == NOPE:
            groups.append(LayerGroup(NOPE, tuple(layers), None, keys.keys(), tuple(keys.defaulted)))
            continue
        options, read, defaulted, sources = drafts[name]
        windowed = tuple(layer for layer in layers if kinds.get(layer, ("",))[0] in WINDOW_KEYS)
        same = next((g for g in groups if g.options == options), None)
        if same is None:
            groups.append(LayerGroup(name, tuple(layers), options, read, defaulted, family.note, windowed_layers=windowed,
                                     sources=stamped(sources, options)))
        else:  # two layer types on the same encoding: one group answering to both names
            groups[groups.index(same)] = LayerGroup(
                f"{same.name}+{name}", tuple(sorted(same.layers + tuple(layers))), options,
                tuple(dict.fromkeys(same.keys_read + read)), tuple(dict.fromkeys(same.keys_defaulted + defaulted)), family.note,
                windowed_layers=tuple(sorted(same.windowed_layers + windowed)), sources=stamped(same.sources + sources, options))
    return sorted(groups, key=lambda g: g.layers[:1])


#: Positional keys a layer's ``per_layer_config`` entry may set: read as the layer's own.
LAYER_OVERRIDABLE = ("rope_theta", "partial_rotary_factor", "rope_parameters", "rope_scaling", "qk_rope_head_dim", "qk_nope_head_dim")


def layer_overrides(keys: Keys, count: int | None) -> dict[int, str]:
    """transformers 5's ``per_layer_config`` (``{"05": {"head_dim": 512}, …}``: keys that layer overrides),
    as JSON text per layer index, so that layers with equal overrides share a draft."""
    thetas = keys.get("layer_rope_theta")  # Granite SWA: one base per layer
    if thetas is not None:
        if not isinstance(thetas, list) or (count is not None and len(thetas) < count):
            raise ConfigError("layer_rope_theta", f"must list a base for each of the {count} layers, got {excerpt(thetas)}")
        if keys.has("per_layer_config"):
            raise ConfigError("layer_rope_theta", "and per_layer_config both set per-layer keys: keep one")
        return {layer: json.dumps({"rope_theta": theta}) for layer, theta in enumerate(thetas) if theta}
    given = keys.get("per_layer_config")
    if given is None:
        return {}
    if not isinstance(given, dict) or not all(isinstance(v, dict) for v in given.values()):
        raise ConfigError("per_layer_config", f"must map layer indices to mappings of keys, got {excerpt(given)}")
    if count is None:
        raise ConfigError("per_layer_config", f"sets keys per layer, and {keys.source} does not say how many layers there are")
    for values in given.values():
        unknown = [key for key in values if POSITIONAL_KEY.search(key) and key not in LAYER_OVERRIDABLE]
        if unknown:
            raise ConfigError("per_layer_config", f"sets {unknown[0]} for a layer, which pecli does not read per layer: "
                              "it may change the positions, so pecli will not guess")
    out = {}
    for index, values in given.items():
        try:
            layer = int(index)
        except ValueError:
            raise ConfigError("per_layer_config", f"has {excerpt(index)}, not a layer index") from None
        if count is not None and not 0 <= layer < count:
            raise ConfigError("per_layer_config", f"names layer {excerpt(layer)}, past num_hidden_layers {count}")
        out[layer] = json.dumps(values, sort_keys=True)
    return out


#: Layer types that differ in their attention window or sparsity only: the model-wide RoPE applies to each.
SAME_ROPE_TYPES = ("full_attention", "sliding_attention", "chunked_attention", "indexed_attention",
                   "reference_sliding_attention", "attention", "hybrid", "all")
#: Layer types without softmax attention over positions, so without RoPE (Bailing's linear attention,
#: LFM's short convolutions).
NO_ROPE_TYPES = ("linear_attention", "conv")


#: model_type values whose videos number frame groups by time (``second_per_grid_t × tokens_per_second``).
TIMED_VIDEO_MODELS = ("qwen2_5_vl",)


def mrope_options(keys: Keys, family: Family, block: dict[str, Any], vision: dict[str, Any], model_type: Any) -> dict[str, Any]:
    """The ``mrope`` keys of a Qwen-VL config: head dim, ``rope_theta``, the block's ``mrope_section``
    and ``mrope_interleaved`` (Qwen3-VL), and from ``vision_config`` the ``spatial_merge_size`` and
    ``tokens_per_second``; Qwen2.5-VL numbers a video's frame groups by time."""
    block_source = model_block_source(keys)
    base, heard = keys.listened(lambda: keys.get("rope_theta", default=block.get("rope_theta"), record_default=False))
    options: dict[str, Any] = {"scheme": "mrope", "dim": keys.traced("dim", lambda: head_dim(keys, family)),
                               "base": DEFAULT_BASE if base is None else base, "mrope_section": block["mrope_section"]}
    keys.attribute("base", heard or [block_source("rope_theta") if block.get("rope_theta") is not None
                                     else ("rope_theta", Origin.DEFAULT)])
    keys.attribute("mrope_section", [block_source("mrope_section")])
    warn_small_base(keys, options["base"])
    if block.get("mrope_interleaved") is not None:
        options["mrope_interleaved"] = block["mrope_interleaved"]
        keys.attribute("mrope_interleaved", [block_source("mrope_interleaved")])

    def from_vision(key: str) -> None:
        if vision.get(key) is not None:
            options[key] = vision[key]
            origin = Origin.CLASS_DEFAULT if key in vision.get(FILLED, ()) else Origin.CONFIG
            keys.attribute(key, [(f"vision_config.{key}", origin)])

    from_vision("spatial_merge_size")
    if model_type in TIMED_VIDEO_MODELS:
        options["temporal"] = "time"
        keys.attribute("temporal", [("model_type", Origin.MODEL_CODE)])
    from_vision("tokens_per_second")
    return options
