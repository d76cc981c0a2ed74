"""The model-family table: how a ``config.json`` becomes a :class:`~pecli.models.plan.PositionPlan`.

One :class:`Family` record per family says which ``model_type`` values it covers, which scheme its
layers use, in which layout the model applies cos and sin, which keys spell its head dimension, and —
where the layers differ — how its layer types and their encodings are derived. Commands and analyses
never look at ``model_type``: only this table does. A model type that is not in the table is read with
the generic keys and a warning that says so.

The layouts follow each model's code in transformers: ``rotate_half`` over halves (Llama and most
others) is ``half``; GPT-J's ``rotate_every_two``, Cohere's and GLM's interleaved ``rotate_half``,
DeepSeek's ``apply_rotary_pos_emb_interleave`` and Llama 4's complex multiplication rotate adjacent
components ``(2i, 2i+1)``: ``interleaved``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from pecli.errors import ConfigError
from pecli.models.sources.class_defaults import FILLED, MOVED, UNDERIVED, derived_value, record_of, versions, with_class_defaults
from pecli.models.partial import effective_fraction
from pecli.models.logit_scale import (
    BETA_SCALED_TYPES, UNSCALED, LogitScale, attention_only_keys, attention_side, softmax_scale,
)
from pecli.models.plan import NOPE, LayerGroup, PositionPlan
from pecli.schemes.frequencies import DEFAULT_BASE
from pecli.schemes.scaling.recipes import ATTENTION_READ_KEYS
from pecli.numbers import integer, number
from pecli.params import excerpt
from pecli.schemes.scaling.keys import LONGEST_CONTEXT
from pecli.schemes.scaling.registry import find_scaling, scales
from pecli.schemes.scaling.unscaled import NO_SCALING

#: Keys whose presence says that a config describes RoPE, whatever its model_type.
ROPE_KEYS = ("rope_theta", "rope_scaling", "rope_parameters", "rotary_emb_base", "rotary_pct", "partial_rotary_factor")
#: Generic spellings of the model width and of the number of heads (DBRX: d_model / n_heads).
HIDDEN_KEYS = ("hidden_size", "n_embd", "d_model")
HEADS_KEYS = ("num_attention_heads", "n_head", "n_heads")
#: Generic spellings of the head dimension, in the order they win.
HEAD_DIM_KEYS = ("head_dim", "kv_channels", "attention_head_dim")


class Keys:
    """A config's keys, read through one door that remembers which were read and which defaulted.

    Reads inside :meth:`scoped` belong to that scope (one layer type's encoding); reads outside it are
    the model's and belong to every group.
    """

    def __init__(self, data: Mapping[str, Any], source: str) -> None:
        self.data, self.source = data, source
        #: Keys the config class's defaults supplied (:mod:`pecli.models.sources.class_defaults`): read as defaulted.
        self.from_class = frozenset(data.get(FILLED, ()))
        #: The file's legacy keys the class moved into ``rope_parameters``: reported under their own names.
        self.moved: tuple[str, ...] = tuple(data.get(MOVED, ()))
        #: Keys the class derives from fields this config changed, by rules pecli may not have: {key: fields}.
        self.underived: dict[str, list[str]] = dict(data.get(UNDERIVED) or {})
        self.read: list[str] = []
        self.defaulted: list[str] = []
        self.warnings: list[str] = []
        #: Every key any scope read, whether or not its group kept it (a scheme drafted for layers that
        #: turned out to have none).
        self.consulted: set[str] = set()
        self._scope: tuple[list[str], list[str]] | None = None

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def warn(self, text: str) -> None:
        """A fact worth a line on stderr that does not change pecli's numbers."""
        if text not in self.warnings:
            self.warnings.append(text)

    def get(self, *names: str, default: Any = None, record_default: bool = True) -> Any:
        """The first of ``names`` present (not null); else ``default``, noted as defaulted."""
        read, defaulted = self._scope or (self.read, self.defaulted)
        for name in names:
            if self.data.get(name) is not None:
                if name in self.from_class:
                    self.note_default(name, self.data[name])
                elif name == "rope_parameters" and self.moved:
                    read.extend(key for key in self.moved if key not in read)
                elif name not in read:
                    read.append(name)
                return self.data[name]
        if default is not None and record_default:
            text = f"{names[0]}={default:g}" if isinstance(default, float) else f"{names[0]}={default}"
            if text not in defaulted:
                defaulted.append(text)
        return default

    def note_default(self, name: str, value: Any) -> None:
        """Record ``name=value`` among the keys defaulted (in the current scope)."""
        defaulted = (self._scope or (self.read, self.defaulted))[1]
        shown = number(value) if isinstance(value, float) else integer(value) if isinstance(value, int) and not \
            isinstance(value, bool) else value if isinstance(value, str) else excerpt(value)
        text = f"{name}={shown}"
        if text not in defaulted:
            defaulted.append(text)

    def refuse_underived(self, name: str) -> None:
        """Exit 2 when the config lacks ``name`` and its class derives it from keys this config changed."""
        if name in self.underived and not self.has(name):
            raise ConfigError(name, f"is not in {self.source}; its config class derives it from "
                              f"{', '.join(self.underived[name])}, which differ from the class's defaults, by a rule "
                              f"pecli does not have: give {name} in the config")

    def positive_int(self, name: str) -> int:
        value = self.get(name)
        integral = isinstance(value, numbers.Integral) or (isinstance(value, float) and value.is_integer())
        if isinstance(value, bool) or not integral or value < 1:
            raise ConfigError("hf_config", f"{name} in {self.source} must be a positive integer, got {excerpt(value)}")
        return int(value)

    def first_int(self, *names: str) -> int | None:
        for name in names:
            if self.has(name):
                return self.positive_int(name)
        return None

    def scoped(self, read: Callable[[], Any]) -> tuple[Any, tuple[str, ...], tuple[str, ...]]:
        """``read()``'s result, with the keys it read and defaulted besides the model's (for one group)."""
        outer, self._scope = self._scope, ([], [])
        try:
            result = read()
            scope = self._scope
        finally:
            self._scope = outer
        self.consulted.update(scope[0])
        return result, self.keys(scope[0]), tuple(dict.fromkeys(self.defaulted + scope[1]))

    def overlaid(self, overrides: str, read: Callable[[], Any]) -> Any:
        """``read()`` with the keys of one layer's ``per_layer_config`` entry (JSON text) over the model's."""
        if not overrides:
            return read()
        data, changes = self.data, json.loads(overrides)
        layer = {**data, **changes}
        # A layer's base or fraction overrides the block's too, which would otherwise win (flat or per type).
        moved = {k: changes[k] for k in ("rope_theta", "partial_rotary_factor") if k in changes}
        block = layer.get("rope_parameters")
        if moved and isinstance(block, dict):
            nested = all(isinstance(v, dict) or v is None for v in block.values()) and any(isinstance(v, dict) for v in block.values())
            layer["rope_parameters"] = ({t: v if v is None else {**v, **moved} for t, v in block.items()} if nested
                                        else {**block, **moved})
        self.data = layer
        try:
            return read()
        finally:
            self.data = data

    def keys(self, extra: list[str] | tuple[str, ...] = ()) -> tuple[str, ...]:
        """The model's keys read so far, then ``extra``."""
        return tuple(dict.fromkeys(self.read + list(extra)))


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
    base_default: float = DEFAULT_BASE,
) -> dict[str, Any]:
    """The ``rope`` options of the model, or of one layer type when ``block`` is that type's own block
    (``{}``: unscaled) and ``base_key`` its own base key.

    ``rope_theta`` (GPT-NeoX: ``rotary_emb_base``; v5: inside ``rope_parameters``; 10000, HF's default,
    when none is given), ``partial_rotary_factor`` (``rotary_pct``; GPT-J: ``rotary_dim`` per head; both
    given must agree), ``max_position_embeddings`` (``n_positions``) and the scaling block, with a
    top-level ``original_max_position_embeddings`` moved into it for the types where HF moves it.
    """
    dim = head_dim(keys, family)
    ignored = block is None and "rope_theta" in family.ignores  # the model's code hard-codes its frequencies
    own_block = (None if ignored else rope_block(keys)) if block is None else dict(block)
    in_block = own_block or {}
    options: dict[str, Any] = {"scheme": "rope", "dim": dim, "layout": family.layout}
    interleave = keys.get("rope_interleave")  # DeepSeek-V3 lets a config turn it off (its attention tests its truth)
    if family.layout == "interleaved" and interleave is not None and not interleave:
        options["layout"] = "half"
    options["base"] = (keys.get(base_key, default=base_default) if base_key is not None  # Gemma 3's rope_local_base_freq
                       else DEFAULT_BASE if ignored else rope_base(keys, in_block))
    warn_small_base(keys, options["base"])
    top_fraction = keys.get(*family.fraction_keys, default=family.fraction_default)
    fraction = in_block["partial_rotary_factor"] if in_block.get("partial_rotary_factor") is not None else top_fraction
    fraction, warning = effective_fraction(fraction, keys.data.get("model_type"),
                                           in_block.get("rope_type") or in_block.get("type"), keys.source)
    if warning:
        keys.warn(warning)
    rotary_dim = None if "rotary_dim" in family.ignores else keys.first_int("rotary_dim")
    if fraction is not None and rotary_dim is not None and abs(float(fraction) * dim - rotary_dim) > 1e-9:
        raise ConfigError("partial_rotary_factor", f"{fraction} × head_dim {dim} disagrees with rotary_dim {rotary_dim} in {keys.source}")
    valid = isinstance(fraction, (int, float)) and not isinstance(fraction, bool) and 0 < fraction <= 1
    if valid and any(keys.has(k) for k in family.head_dim_keys):  # else the scheme refuses it, naming it
        # MLA: HF's rotary module turns int(head_dim × factor) components, all of them in q_pe, whose
        # width the family key gives (dots.llm3: head_dim 256 × 0.25 = qk_rope_head_dim 64).
        rotary = int(head_dim(keys, GENERIC) * float(fraction))
        if rotary > dim:
            raise ConfigError("partial_rotary_factor", f"{fraction} × head_dim gives {rotary} rotated components, more than "
                              f"the {dim} of {family.head_dim_keys[0]} in {keys.source}")
        fraction = None if rotary == dim else rotary / dim
    if fraction is not None:
        options["partial_rotary_factor"] = fraction
    elif rotary_dim is not None:
        options["partial_rotary_factor"] = rotary_dim / dim
    longest = keys.get("max_position_embeddings", "n_positions")
    if longest is not None:
        options["max_position_embeddings"] = longest
    block_type = in_block.get("rope_type") or in_block.get("type")
    if block_type == "proportional":
        # Gemma 4: the first floor(p · head_dim / 2) pairs of base^(−2i/head_dim) turn, the others stay still —
        # pecli's p-RoPE with rope_fraction p over the whole head; a factor divides them (linear).
        fraction = in_block.get("partial_rotary_factor")
        options["rope_fraction"] = 1.0 if fraction is None else fraction
        options.pop("partial_rotary_factor", None)
        factor = in_block.get("factor")
        own_block = {"rope_type": "linear", "factor": factor} if factor not in (None, 1, 1.0) else {}
    record = find_scaling(block_type)  # HF moves a top-level original length into the block of a type that starts from it
    if keys.has("original_max_position_embeddings") and record is not None and record.from_original_length:
        own_block = {**in_block, "original_max_position_embeddings": keys.get("original_max_position_embeddings")}
    if in_block.get("llama_4_scaling_beta") is not None and keys.data.get("model_type") not in BETA_SCALED_TYPES:
        keys.warn(f"llama_4_scaling_beta {in_block['llama_4_scaling_beta']}: transformers scales the queries by "
                  "1 + β·ln(1 + ⌊p / original_max_position_embeddings⌋) in its attention, not in cos and sin; "
                  "pecli's numbers are those of the rotary module and leave that scale out")
    # The block's rope_theta and partial_rotary_factor were read above, into the options themselves; a
    # max_position_embeddings there is the model's (transformers 5 copies it in).
    if "max_position_embeddings" not in options and in_block.get("max_position_embeddings") is not None:
        options["max_position_embeddings"] = in_block["max_position_embeddings"]
    # DeepSeek's mscale_all_dim under llama3, dynamic, linear, …: its attention's, not its frequencies'
    attention_only = attention_only_keys(keys.data.get("model_type"), own_block)
    scaling = {k: v for k, v in (own_block or {}).items()
               if k not in ("rope_theta", "partial_rotary_factor", "llama_4_scaling_beta", "max_position_embeddings",
                            *attention_only)}
    if scaling and scaling != {k: NO_SCALING.hf_name for k in scaling}:  # a block that only says "default" scales nothing
        options["rope_scaling"] = scaling
    return options


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
            return rope_options(keys, family, nested[layer_type])
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
        options, read, defaulted = drafts[name]
        windowed = tuple(layer for layer in layers if kinds.get(layer, ("",))[0] in WINDOW_KEYS)
        same = next((g for g in groups if g.options == options), None)
        if same is None:
            groups.append(LayerGroup(name, tuple(layers), options, read, defaulted, family.note, windowed_layers=windowed))
        else:  # two layer types on the same encoding: one group answering to both names
            groups[groups.index(same)] = LayerGroup(
                f"{same.name}+{name}", tuple(sorted(same.layers + tuple(layers))), options,
                tuple(dict.fromkeys(same.keys_read + read)), tuple(dict.fromkeys(same.keys_defaulted + defaulted)), family.note,
                windowed_layers=tuple(sorted(same.windowed_layers + windowed)))
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


def every_nth_full(pattern_key: str, default: int) -> Callable[[Keys, int], list[str]]:
    """Sliding-window layers with every ``pattern``-th one full attention: layer i is full when
    (i + 1) % pattern == 0 (Gemma 3's ``sliding_window_pattern``, Cohere 2)."""
    def layer_types(keys: Keys, count: int) -> list[str]:
        pattern = keys.get(pattern_key, "sliding_window_pattern", default=default)
        return ["full_attention" if (i + 1) % int(pattern) == 0 else "sliding_attention" for i in range(count)]
    return layer_types


def gemma2_layer_types(keys: Keys, count: int) -> list[str]:
    """Gemma 2 alternates: even layers slide, odd layers attend fully (``layer_idx % 2``)."""
    return ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(count)]


def modernbert_layer_types(keys: Keys, count: int) -> list[str]:
    """ModernBERT: layer i attends globally when i % ``global_attn_every_n_layers`` == 0."""
    every = keys.get("global_attn_every_n_layers", default=3)
    return ["full_attention" if i % int(every) == 0 else "sliding_attention" for i in range(count)]


def gemma3_per_type(keys: Keys, family: Family, layer_type: str) -> dict[str, Any] | None:
    """Gemma 3 (legacy keys): sliding layers on ``rope_local_base_freq`` (10,000) unscaled; full
    layers on ``rope_theta`` with the ``rope_scaling`` block."""
    if layer_type == "sliding_attention":
        return rope_options(keys, family, {}, base_key="rope_local_base_freq")
    return rope_options(keys, family)


def modernbert_per_type(keys: Keys, family: Family, layer_type: str) -> dict[str, Any] | None:
    """ModernBERT (legacy keys): ``global_rope_theta`` (160,000) and ``local_rope_theta`` (10,000)."""
    key, default = ("global_rope_theta", 160000.0) if layer_type == "full_attention" else ("local_rope_theta", 10000.0)
    return rope_options(keys, family, {}, base_key=key, base_default=default)


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


def no_rope_layers(interval_default: int, empty_is_default: bool = False,
                   one_per_layer: bool = False) -> Callable[[Keys, int], set[int]]:
    """Layers whose entry of ``no_rope_layers`` is 0 (1: the layer uses RoPE — Llama 4, SmolLM3); by
    default every ``no_rope_layer_interval``-th layer (4). ``empty_is_default``: an empty list means the
    default too (``Llama4TextConfig`` keeps the list only when it is truthy; Llama 4 Scout ships ``[]``).
    ``one_per_layer``: a list longer than the layers is refused (Llama 4's class derives ``layer_types`` from
    it, which ``validate_layer_type`` holds to ``num_hidden_layers``; SmolLM3's reads the first entries)."""
    def layers(keys: Keys, count: int) -> set[int]:
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


def llama4_temperature(keys: Keys, group: LayerGroup) -> LogitScale:
    """Llama 4's NoPE layers scale their queries by 1 + attn_scale·ln(1 + ⌊(p + 1) / floor_scale⌋) when
    ``attn_temperature_tuning`` is on (``Llama4TextAttention``: ``not self.use_rope``)."""
    if group.options is not None or not keys.get("attn_temperature_tuning"):
        return UNSCALED
    scale, floor = keys.get("attn_scale", default=0.1), keys.get("floor_scale", default=8192)
    if not isinstance(scale, (int, float)) or not isinstance(floor, (int, float)) or floor <= 0:
        raise ConfigError("floor_scale", f"and attn_scale must be numbers (floor_scale > 0) in {keys.source}, got {excerpt(floor)}, {excerpt(scale)}")
    if not math.isfinite(1.0 + scale * math.log1p(float(LONGEST_CONTEXT) / floor)):  # the factor at the longest context
        raise ConfigError("attn_scale", f"{excerpt(scale)} in {keys.source} overflows float64 in the NoPE layers' query "
                          "scale 1 + attn_scale·ln(1 + ⌊(p + 1) / floor_scale⌋)")
    return LogitScale(1.0, "llama4_temperature", (float(scale), float(floor)))


#: The key of each windowed layer type's window: its layers attend to at most that many tokens.
WINDOW_KEYS = {"sliding_attention": "sliding_window", "chunked_attention": "attention_chunk_size"}


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


def group_attention(keys: Keys, family: Family, model_type: Any, group: LayerGroup) -> LogitScale:
    """The factor the model's attention applies to ``group``'s logits beyond cos and sin."""
    scale = UNSCALED
    if group.rotary:
        block = dict(group.options.get("rope_scaling") or {})
        raw = keys.data.get("rope_parameters") or keys.data.get("rope_scaling")
        if isinstance(raw, dict) and raw.get("llama_4_scaling_beta") is not None:
            block.setdefault("original_max_position_embeddings", raw.get("original_max_position_embeddings"))
            block["llama_4_scaling_beta"] = raw["llama_4_scaling_beta"]
        for key in attention_only_keys(model_type, raw):  # left out of the frequencies' block
            block[key] = raw[key]
        scale = attention_side(model_type, block)
    if family.attention is not None:
        extra = family.attention(keys, group)
        scale = LogitScale(scale.factor * extra.factor, extra.rule or scale.rule, extra.params or scale.params)
    return scale


# -- families of other schemes ---------------------------------------------------------------------------
def whole_model(name: str, options: dict[str, Any], keys: Keys, note: str = "") -> LayerGroup:
    count = num_layers(keys)
    return LayerGroup(name, tuple(range(count)) if count else (), options, tuple(keys.read), tuple(keys.defaulted), note)


def alibi_groups(keys: Keys, family: Family) -> list[LayerGroup]:
    """ALiBi in every layer, one slope per head (BLOOM, MPT: the paper's slopes). MPT's
    ``attn_config.alibi_bias_max`` is not passed on by transformers' ``MptModel``, which always uses 8."""
    bias_max = (keys.data.get("attn_config") or {}).get("alibi_bias_max")
    if bias_max is not None and bias_max != 8:
        keys.warn(f"attn_config.alibi_bias_max {bias_max}: transformers' MPT does not pass it to its ALiBi, which "
                  "keeps 8 (the paper's slopes); so does pecli")
    return [whole_model("all", {"scheme": "alibi", "heads": alibi_heads(keys)}, keys, note="slopes as the paper's reference code")]


def falcon_alibi_groups(keys: Keys, family: Family) -> list[LayerGroup]:
    """Falcon-RW: ALiBi with its slopes rounded to bfloat16 (``build_alibi_tensor`` forms them so)."""
    options = {"scheme": "alibi", "heads": alibi_heads(keys), "slope_dtype": "bfloat16"}
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
    common = {"scheme": "t5", "buckets": keys.get("relative_attention_num_buckets", default=32),
              "max_distance": keys.get("relative_attention_max_distance", default=128)}
    encoder = keys.first_int("num_layers") or 0
    decoder = keys.first_int("num_decoder_layers") or encoder
    read, defaulted = tuple(keys.read), tuple(keys.defaulted)
    return [LayerGroup("encoder", tuple(range(encoder)), {**common, "bidirectional": True}, read, defaulted,
                       "encoder stack: keys on both sides"),
            LayerGroup("decoder", tuple(range(decoder)), {**common, "bidirectional": False}, read, defaulted,
                       "decoder stack: causal buckets")]


def sinusoidal_groups(spacing: str, note: str = "") -> Callable[[Keys, "Family"], list[LayerGroup]]:
    """A fixed sinusoidal table, sines then cosines, added to the embeddings of both stacks (Marian,
    Pegasus: ``spacing`` vaswani; fairseq's models: tensor2tensor)."""
    def groups(keys: Keys, family: Family) -> list[LayerGroup]:
        options = {"scheme": "sinusoidal", "dim": keys.first_int("d_model", "hidden_size"), "layout": "half", "spacing": spacing}
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
                                      tuple(f"{key}.{k}" for k in group.keys_defaulted), group.note))
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
    read, defaulted = keys.keys(), tuple(keys.defaulted)
    encoder = keys.first_int("encoder_num_hidden_layers") or 0
    decoder = keys.first_int("decoder_num_hidden_layers") or 0
    return [LayerGroup("encoder", tuple(range(encoder)), options, read, defaulted, family.note),
            LayerGroup("decoder", tuple(range(decoder)), options, read, defaulted, family.note)]


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


def whisper_groups(keys: Keys, family: Family) -> list[LayerGroup]:
    """Whisper: a fixed table in the encoder (sines then cosines, tensor2tensor spacing), learned
    positions in the decoder."""
    dim = keys.first_int("d_model")
    encoder = keys.first_int("encoder_layers") or 0
    decoder = keys.first_int("decoder_layers") or 0
    return [LayerGroup("encoder", tuple(range(encoder)), {"scheme": "sinusoidal", "dim": dim, "layout": "half", "spacing": "tensor2tensor"},
                       keys.keys(), tuple(keys.defaulted), "encoder: the sinusoids table (timescale increment ln(10000)/(d/2 − 1))"),
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


# -- the table ---------------------------------------------------------------------------------------------
FAMILIES: tuple[Family, ...] = (
    Family("Llama and its kin", ("llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma",
                                 "phi", "phi3", "phimoe", "stablelm", "olmo", "olmo2", "starcoder2", "internlm2",
                                 "granite", "granitemoe", "ministral", "qwen2_vl", "qwen2_5_vl", "qwen2_vl_text",
                                 "qwen2_5_vl_text", "qwen3_vl", "qwen3_vl_text"),
           keys_note="rope_theta, rope_scaling / rope_parameters, partial_rotary_factor, head_dim"),
    Family("GPT-NeoX", ("gpt_neox",), keys_note="rotary_pct, rotary_emb_base", ignores=("partial_rotary_factor",),
           fraction_keys=("rotary_pct",), fraction_default=0.25),
    Family("GPT-J", ("gptj", "codegen"), layout="interleaved", ignores=("rope_theta", "rope_parameters", "rope_scaling"),
           keys_note="rotary_dim (rotate_every_two); base 10,000 whatever rope_theta says (create_sinusoidal_positions)"),
    Family("Gemma 2", ("gemma2",), layer_types=gemma2_layer_types, keys_note="even layers slide, odd attend fully"),
    Family("Gemma 3", ("gemma3", "gemma3_text"), layer_types=every_nth_full("sliding_window_pattern", 6),
           per_type=gemma3_per_type,
           keys_note="rope_local_base_freq (sliding layers), rope_theta + rope_scaling (full), sliding_window_pattern"),
    Family("Cohere (Command R)", ("cohere",), layout="interleaved", keys_note="interleaved rotate_half"),
    Family("Cohere 2 (Command R7B, A)", ("cohere2", "cohere2_moe"), layout="interleaved",
           layer_types=every_nth_full("sliding_window_pattern", 4), per_type=sliding_only_per_type,
           keys_note="RoPE in sliding layers only; full-attention layers NoPE"),
    Family("EXAONE 4, AFMoE, Flint, Kolibri, Muse", ("exaone4", "exaone_moe", "afmoe", "flint", "kolibri1", "muse_glimmer",
                                                     "muse_glimmer_text", "muse_spark", "muse_spark_text"),
           per_type=sliding_only_per_type,
           keys_note="layer_types, sliding_window: full-attention layers NoPE when the model slides"),
    Family("GLM", ("glm", "glm4", "glm_ocr", "glm_ocr_text"), layout="interleaved",
           keys_note="partial_rotary_factor, interleaved rotate_half"),
    Family("ERNIE 4.5, Helium, HunYuan V4 VL, BLT, OpenAI privacy filter",
           ("ernie4_5", "ernie4_5_moe", "helium", "hy_v4_vl", "hy_v4_vl_text", "blt_global_transformer", "blt_local_encoder",
            "blt_local_decoder", "blt_patcher", "openai_privacy_filter"),
           layout="interleaved", keys_note="interleaved rotate_half"),
    Family("DeepSeek and other MLA / interleave models", ("deepseek_v2", "deepseek_v3", "deepseek_v32", "glm_moe_dsa", "glm4_moe_lite", "axk1",
                                                          "axk2", "dots3_note", "dots3_note_text", "bailing_hybrid",
                                                          "longcat_flash", "mistral4", "youtu"),
           layout="interleaved", head_dim_keys=("qk_rope_head_dim",),
           keys_note="qk_rope_head_dim, rope_interleave, yarn mscale; apply_rotary_pos_emb_interleave",
           note="pairs (2i, 2i+1) of q_pe and k_pe; transformers de-interleaves them first and applies half-layout "
                "cos/sin to the result: the same rotation, its output components in the order (0, 2, …, 1, 3, …)"),
    Family("Llama 4", ("llama4", "llama4_text"), layout="interleaved", nope_layers=no_rope_layers(4, empty_is_default=True, one_per_layer=True),
           attention=llama4_temperature,
           keys_note="no_rope_layers (0: NoPE layer), complex rotation"),
    Family("SmolLM3", ("smollm3",), nope_layers=no_rope_layers(4), keys_note="no_rope_layers (0: NoPE layer)"),
    Family("Mllama (Llama 3.2 Vision)", ("mllama", "mllama_text_model"), nope_layers=cross_attention_layers,
           keys_note="cross_attention_layers: no RoPE"),
    Family("Bamba", ("bamba",), nope_layers=outside_attention_layers, keys_note="attn_layer_indices: RoPE there only"),
    Family("RecurrentGemma", ("recurrent_gemma",), layer_types=block_types_cycle, per_type=attention_blocks_only,
           keys_note="block_types: RoPE in the attention blocks, partial_rotary_factor"),
    Family("Molmo 2", ("molmo2", "molmo2_text"), layer_types=lambda keys, count: ["all"] * count, per_type=scaled_layers,
           keys_note="rope_scaling_layers"),
    Family("MiniMax-M3-VL", ("minimax_m3_vl", "minimax_m3_vl_text"), ignores=("rotary_dim",),
           keys_note="rotary_dim is not read by its code: the whole head rotates"),
    Family("ModernBERT", ("modernbert",), layer_types=modernbert_layer_types, per_type=modernbert_per_type,
           keys_note="global_rope_theta, local_rope_theta, global_attn_every_n_layers"),
    Family("Falcon", ("falcon",), keys_note="alibi: true reads as ALiBi"),
    Family("Qwen (v1, remote code)", ("qwen",), head_dim_keys=("kv_channels",), attention=qwen_logn,
           keys_note="kv_channels, rotary_emb_base, rotary_pct; use_logn_attn: log-n query scale past seq_length"),
    Family("BLT", ("blt",), layout="interleaved", ignores=("rope_parameters", "rope_scaling", "rope_theta"),
           groups=sub_config_stacks(("encoder_config", "encoder"), ("global_config", "global"), ("decoder_config", "decoder"),
                                    layout="interleaved"),
           keys_note="encoder_config, global_config, decoder_config: three RoPE stacks, interleaved pairs (repeat_interleave)"),
    Family("Dia", ("dia",), groups=sub_config_stacks(("encoder_config", "encoder"), ("decoder_config", "decoder")),
           keys_note="encoder_config, decoder_config: each a RoPE stack"),
    Family("Moonshine", ("moonshine",), layout="interleaved", groups=moonshine_groups,
           keys_note="encoder and decoder on one rotary module: hidden_size / decoder heads, partial_rotary_factor 0.9"),
    Family("Moonshine Streaming", ("moonshine_streaming",), layout="interleaved",
           note="the decoder's layers; its encoder applies no RoPE (the decoder adds a learned table to its output)",
           keys_note="the decoder's RoPE, interleaved pairs, partial_rotary_factor"),
    Family("Zamba2", ("zamba2",), per_type=zamba2_per_type, normalise=zamba2_normalise,
           layer_types=zamba2_layer_types,
           keys_note="use_mem_rope: RoPE in the hybrid blocks; attention_head_dim = 2·hidden_size / heads"),
    Family("GraniteMoeHybrid", ("granitemoehybrid",), per_type=position_type_per_type,
           keys_note="position_embedding_type rope: RoPE in the attention layers only"),
    Family("Gemma 4", ("gemma4_text", "gemma4_unified_text", "embedding_gemma2_text", "diffusion_gemma_text"),
           normalise=gemma4_normalise,
           keys_note="global_head_dim (512) on full-attention layers without per_layer_config; last layer full"),
    # GptOssConfig.__post_init__: without layer_types, layer i slides when (i + 1) % 2, else attends fully
    Family("gpt-oss", ("gpt_oss",), layer_types=gemma2_layer_types,
           keys_note="without layer_types: even layers slide, odd attend fully"),
    # Read with the common keys (rope_theta, rope_parameters flat or per layer type, layer_types,
    # per_layer_config, partial_rotary_factor, head_dim) in the half layout: each checked against
    # transformers' own forward pass (tests/fixtures/models/rope), so none of them is "unknown".
    Family("Common keys, checked against transformers", (
      "apertus", "apertus1p5_text", "arcee", "aria_text", "beam", "bitnet", "cosmos3_edge_text", "csm", "cwm",
      "dia_encoder", "diffllama", "doge", "emu3_text_model", "esmc", "eurobert",
      "evolla", "falcon_h1", "flex_olmo", "gemma3n_text", 
      "gpt_neox_japanese", "gradium_phonon_tts", "granite_docling_text", "granite_swa",
      "granitemoe_swa", "granitemoeshared", "gte", "hrm_text", "hy_v3", "hy_v4", "hyperclovax", "jais2",
      "jina_embeddings_v3", "laguna", "lara_mini", "lfm2", "lfm3", "mellum", "mimo_v2_flash", "minicpm3",
      "minimax", "minimax_m2", "ministral3", "modernbert-decoder", "moshi", "neomme", "nomic_bert", "olmo3",
      "olmo_hybrid", "olmoe", "paddleocr_vl_text", "persimmon", "phi4_multimodal", "pocket_tts",
      "qwen2_5_omni_talker", "qwen2_5_omni_text", "qwen3_5_moe_text", "qwen3_5_text", "qwen3_next",
      "qwen3_omni_moe_talker_code_predictor", "qwen3_vl_moe_text", "seed_oss", "solar_open", "step3p5",
      "ultrabert", "unlimited_ocr_text", "vaultgemma", "voxtral_realtime_encoder", "zaya",
    ), keys_note="layer_types, rope_parameters (flat or per layer type), per_layer_config, partial_rotary_factor"),
    Family("BLOOM, MPT (ALiBi)", ("bloom", "mpt"), scheme="alibi", groups=alibi_groups, keys_note="n_head / n_heads"),
    Family("T5", ("t5", "mt5", "umt5", "longt5", "switch_transformers", "pop2piano"), scheme="t5", groups=t5_groups,
           keys_note="relative_attention_num_buckets, relative_attention_max_distance, num_layers, num_decoder_layers"),
    Family("T5Gemma", ("t5gemma", "t5gemma2"), groups=stack_groups,
           keys_note="encoder and decoder sub-configs, each read as a RoPE model"),
    Family("Marian, Pegasus", ("marian", "pegasus"), scheme="sinusoidal", groups=sinusoidal_groups("vaswani"),
           keys_note="d_model: sines, then cosines"),
    Family("fairseq sinusoidal (M2M-100, Speech2Text, FSMT, XGLM)", ("m2m_100", "speech_to_text", "fsmt", "xglm"),
           scheme="sinusoidal", groups=sinusoidal_groups("tensor2tensor", "the model's token t uses row t + 2 (fairseq's "
                                                          "offset; row 1, the padding row, is zero)"),
           keys_note="d_model: sines, then cosines, tensor2tensor spacing; offset 2"),
    Family("Whisper", ("whisper",), scheme="sinusoidal", groups=whisper_groups,
           keys_note="encoder: sinusoids (tensor2tensor spacing); decoder: learned"),
    Family("Learned tables", ("gpt2", "opt", "bert", "roberta", "gpt_neo", "bart", "biogpt"), scheme="learned",
           groups=learned_groups, keys_note="needs the checkpoint: --weights"),
)

#: Families by model_type.
BY_MODEL_TYPE: dict[str, Family] = {t: family for family in FAMILIES for t in family.model_types}
#: The family of a model type not in the table: generic keys, the half layout.
GENERIC = Family("generic", ())
#: Model types read, but refused: the reason, said in one line.
REFUSED: dict[str, str] = {
    "deepseek_v4": "DeepSeek V4's compressed attention picks its RoPE ('main' or 'compress') per attention module, "
                   "not per layer type, which pecli does not read yet",
    "nanochat": "nanochat's rotate_half is reversed, so its pairs turn by −pθ where every other model turns by +pθ, "
                "which pecli's rope does not express",
    "musicgen": "MusicGen's decoder table puts the cosines before the sines, a layout pecli's sinusoidal scheme does not have",
    "mistral_large4": "Mistral Large 4 multiplies its frequencies by exp(alpha), a learned tensor of the checkpoint, and its "
                      "queries by a learned per-head log-position scale: neither is in the config",
    "mistral_large4_text": "Mistral Large 4 multiplies its frequencies by exp(alpha), a learned tensor of the checkpoint, and "
                           "its queries by a learned per-head log-position scale: neither is in the config",
    "ernie4_5_vl_moe": "ERNIE 4.5 VL's 3-D RoPE deals its frequency pairs to time, height and width in its own pattern, "
                       "which pecli's mrope does not express",
    "ernie4_5_vl_moe_text": "ERNIE 4.5 VL's 3-D RoPE deals its frequency pairs to time, height and width in its own pattern, "
                            "which pecli's mrope does not express",
}


FALCON_ALIBI = Family("Falcon-RW (ALiBi)", ("falcon",), scheme="alibi", groups=falcon_alibi_groups,
                      keys_note="alibi: true; slopes in bfloat16")


def falcon_family(keys: Keys) -> Family | None:
    """Falcon-RW (``alibi: true``) is an ALiBi model; the other Falcons use RoPE."""
    if keys.data.get("alibi"):
        keys.get("alibi")
        # FalconModel builds no rotary module when alibi is true: its config class writes rope_theta and a
        # default block anyway, and the model reads neither.
        block = keys.get("rope_parameters", "rope_scaling") or {}
        scaled = isinstance(block, dict) and scales(block.get("rope_type") or block.get("type"), aliases=False)
        given = [key for key in ("rope_theta", "rope_scaling", "rope_parameters")
                 if keys.has(key) and key not in keys.from_class and (key == "rope_theta" or scaled)]
        keys.get("rope_theta")
        if given:
            keys.warn(f"alibi is true in {keys.source}: the model applies ALiBi and ignores {' and '.join(given)}, as pecli does")
        return FALCON_ALIBI
    return None


def family_of(model_type: str | None, keys: Keys) -> Family | None:
    """The family record of ``model_type`` (None: not in the table)."""
    if model_type == "falcon":
        return falcon_family(keys) or BY_MODEL_TYPE["falcon"]
    if model_type == "mpt" and not (keys.data.get("attn_config") or {}).get("alibi", True):
        return Family("MPT (learned)", ("mpt",), scheme="learned", groups=learned_groups)
    return BY_MODEL_TYPE.get(model_type) if model_type is not None else None


# -- reading ---------------------------------------------------------------------------------------------
def text_part(data: dict[str, Any]) -> dict[str, Any]:
    """The keys of the text model: a multimodal config nests them in ``text_config`` (RoPE keys at the
    top level count where the text has none of its own)."""
    path = text_path(data)
    if not path:
        return data
    text = data
    for key in path:
        text = text[key]
    # the text's own keys win: a top-level block may be another tower's (MusicFlamingo's audio RoPE)
    return {**{k: v for k, v in data.items() if k.startswith("rope")}, **text}


def text_path(data: dict[str, Any]) -> tuple[str, ...]:
    """Where the text model's keys are: the top level (``()``), or the first of :data:`TEXT_PATHS` present."""
    if "num_attention_heads" in data:
        return ()
    for path in TEXT_PATHS:
        node: Any = data
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict):
            return path
    return ()


def at_path(data: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """The node of ``data`` at ``path`` (:func:`text_path`'s answer: the text model's keys)."""
    node: Any = data
    for key in path:
        node = node[key]
    return node


#: Where a multimodal config nests its text model's keys (Qwen2.5-Omni: inside its thinker).
TEXT_PATHS = (("text_config",), ("thinker_config", "text_config"))


def plan_of(data: dict[str, Any], source: str, scheme: str | None = None) -> PositionPlan:
    """The position plan of a parsed ``config.json`` (``source`` names it in messages).

    ``scheme`` ``"rope"`` reads a Qwen-VL model (whose block has an ``mrope_section``) as the 1-D RoPE
    of its text, which has the same frequencies; otherwise such a model reads as ``mrope``.
    """
    from pecli.models.key_types import check_config_types
    from pecli.models.group_schemes import check_group_schemes

    check_config_types(data, source)  # each key of the kind transformers' classes hold it to, before it is read
    data = with_class_defaults(data)
    vision = data.get("vision_config") if isinstance(data.get("vision_config"), dict) else {}
    top_type = data.get("model_type")
    text = text_part(data)
    keys = Keys(text, source)
    text_type = text.get("model_type")
    family = family_of(text_type, keys) or family_of(top_type, keys)
    if family is not None and family.normalise is not None:
        family.normalise(keys)
    model_type = top_type if isinstance(top_type, str) else text_type
    warnings: list[str] = []
    if family is None:
        for kind in (text_type, top_type):
            if kind in REFUSED:
                raise ConfigError("hf_config", f"{source} (model_type {kind}): {REFUSED[kind]}")
        if not any(keys.has(key) for key in ROPE_KEYS):
            raise ConfigError("hf_config", f"{source} (model_type {model_type or 'unknown'}) is not in pecli's model "
                              "table and has no RoPE settings: no rope_theta, rope_scaling or rope_parameters")
        family = GENERIC
    if family.groups is not None:
        groups = family.groups(keys, family)
    else:
        block = keys.data.get("rope_parameters") or keys.data.get("rope_scaling")
        if isinstance(block, dict) and block.get("mrope_section") is not None and scheme != "rope":
            keys.get("rope_parameters", "rope_scaling")
            groups = [whole_model("all", mrope_options(keys, family, block, vision, model_type), keys)]
        else:
            groups = per_layer_rope(keys, family)
    for key in family.ignores:
        if keys.has(key) and key not in keys.from_class:
            keys.get(key)
            keys.warn(f"{key} {excerpt(keys.data[key])} is in the config, and the model's code in transformers does not "
                      "read it: neither does pecli")
    check_group_schemes(groups, source)  # the options each scheme refuses, before anything reads them
    softmax = softmax_scale(keys.data, text_type or model_type)
    groups = [dataclasses.replace(group, attention_scale=group_attention(keys, family, text_type or model_type, group),
                                  window=group_window(keys, group), softmax=softmax) for group in groups]
    refuse_unread(keys, groups, model_type)
    if family is GENERIC:
        used = ", ".join(dict.fromkeys(k for g in groups for k in g.keys_read)) or "none"
        warnings.append(f"model_type {model_type or 'unknown'} is not in pecli's model table; read the generic keys: {used}")
    stacks = sum(len(group.layers) for group in groups) > len({layer for group in groups for layer in group.layers})
    count = None if stacks else num_layers(keys)  # an encoder and a decoder: no one count of layers
    record = record_of(text.get("model_type")) or record_of(model_type)
    defaults = f"{record['class']} ({versions()})" if record is not None else ""
    return PositionPlan(source, model_type, family.name, count, tuple(groups), tuple(warnings + keys.warnings), defaults)


#: Keys that look positional (a name with rope, rotary, theta, alibi, …).
POSITIONAL_KEY = re.compile(r"rope|rotary|nope|alibi|theta|relative_attention|position_embedding_type|pos_emb")
#: Positional-looking keys that cannot change the numbers, and why.
HARMLESS_KEYS = {
    "qk_nope_head_dim": "the part of an MLA head that does not rotate",
    "learned_pos_emb": "MPT builds no position table, whatever this flag says",
}


def refuse_unread(keys: Keys, groups: list[LayerGroup], model_type: Any) -> None:
    """A positional-looking key that no group read is exit 2 naming it: pecli will not answer while
    ignoring a key that may change the numbers (``qk_rope_head_dim`` equal to the rotary head is fine)."""
    read = set(keys.read) | keys.consulted | {k.split("=")[0] for k in keys.defaulted} | keys.from_class
    for group in groups:
        read |= set(group.keys_read) | {k.split("=")[0] for k in group.keys_defaulted}
    dims = {group.options.get("dim") for group in groups if group.options}
    rotary = any(group.options for group in groups)
    for key, value in keys.data.items():
        if not POSITIONAL_KEY.search(key) or key in read or key in HARMLESS_KEYS or value is None or value is False:
            continue
        if not rotary and key in ROPE_KEYS:  # no layer applies a position encoding (Bamba without attention layers)
            continue
        if key == "rope_parameters" and set(keys.moved) & read:  # built from the file's legacy keys, read as such
            continue
        if key == "qk_rope_head_dim" and value in dims:
            continue
        raise ConfigError(key, f"is set in {keys.source} ({excerpt(value)}), and pecli does not know what it does for "
                          f"model_type {model_type or 'unknown'}: it may change the positions, so pecli will not guess")


#: model_type values whose videos number frame groups by time (``second_per_grid_t × tokens_per_second``).
TIMED_VIDEO_MODELS = ("qwen2_5_vl",)


def mrope_options(keys: Keys, family: Family, block: dict[str, Any], vision: dict[str, Any], model_type: Any) -> dict[str, Any]:
    """The ``mrope`` keys of a Qwen-VL config: head dim, ``rope_theta``, the block's ``mrope_section``
    and ``mrope_interleaved`` (Qwen3-VL), and from ``vision_config`` the ``spatial_merge_size`` and
    ``tokens_per_second``; Qwen2.5-VL numbers a video's frame groups by time."""
    base = keys.get("rope_theta", default=block.get("rope_theta"), record_default=False)
    options: dict[str, Any] = {"scheme": "mrope", "dim": head_dim(keys, family),
                               "base": DEFAULT_BASE if base is None else base, "mrope_section": block["mrope_section"]}
    warn_small_base(keys, options["base"])
    if block.get("mrope_interleaved") is not None:
        options["mrope_interleaved"] = block["mrope_interleaved"]
    if vision.get("spatial_merge_size") is not None:
        options["spatial_merge_size"] = vision["spatial_merge_size"]
    if model_type in TIMED_VIDEO_MODELS:
        options["temporal"] = "time"
    if vision.get("tokens_per_second") is not None:
        options["tokens_per_second"] = vision["tokens_per_second"]
    return options


def models_table() -> str:
    """The Models page's table (Markdown, docs/models.md), from :data:`FAMILIES` and :data:`REFUSED`: a test keeps the two equal."""
    lines = ["| family | model_type | scheme | layout | keys read besides the usual |", "|---|---|---|---|---|"]
    for family in FAMILIES:
        layout = family.layout if family.scheme == "rope" else "—"
        lines.append(f"| {family.name} | {', '.join(family.model_types)} | {family.scheme} | {layout} | {family.keys_note} |")
    lines.append(f"| {FALCON_ALIBI.name} | falcon (alibi: true) | alibi | — | {FALCON_ALIBI.keys_note} |")
    for model_type, reason in REFUSED.items():
        lines.append(f"| refused | {model_type} | — | — | {reason} |")
    return "\n".join(lines)
