"""A ``config.json`` as its transformers config class reads it: every missing key takes the class's default.

A config on the Hub holds what its author wrote, or what ``save_pretrained`` kept: often only what differs
from the class's defaults. Gemma 3 27B's ``text_config`` has no ``rope_theta``, because 1,000,000 is
``Gemma3TextConfig``'s default; Gemma 3 4B's has no ``head_dim``. Reading such a file with generic
defaults (10,000) gives a silently wrong plan. :func:`with_class_defaults` fills each missing key from the
defaults of the config's own ``model_type`` — at the top level and in every sub-config (``text_config``,
``encoder``/``decoder``, ``thinker_config`` …), each with its own model type — before the family table
reads the config, and marks what it filled so that every group can say which values were defaulted.

The defaults are data, ``type_defaults.json`` beside this module, generated from transformers' config
classes by ``tools/type_defaults.py`` (``python tools/regenerate.py type-defaults``; its versions are in the
file), cut to the fields pecli reads: the dataclass
fields each class declares with their defaults (its *inputs*; what ``__post_init__`` derives from them,
such as ``layer_types``, is derived by the family table as the class derives it), the class's
``default_theta``, its ``attribute_map`` (old spellings) and its sub-configs.

The base a RoPE block gets when the config names none follows ``RotaryEmbeddingConfigMixin``: a single
``default_theta`` becomes ``rope_theta``. A class with one default base per attention kind (Gemma 3,
Gemma 3n, T5Gemma 2, ModernBERT: ``{"global": …, "local": …}``) builds ``rope_parameters`` per layer type
from its legacy keys, as their ``convert_rope_params_to_dict`` do: the full-attention layers take
``rope_theta`` (ModernBERT: ``global_rope_theta``) and the ``rope_scaling`` block, the sliding layers
``rope_local_base_freq`` (``local_rope_theta``), each else its default.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from pecli.errors import ConfigError
from pecli.models.limits import MAX_LAYERS
from pecli.schemes.scaling.rope_type import hf_rope_type

#: The key under which a level of a filled config lists the keys its class's defaults supplied.
FILLED = "_pecli_class_defaults"
#: The key under which a level lists the legacy keys moved into ``rope_parameters``, as the class moves them
#: (read as the config's own, under their own names).
MOVED = "_pecli_moved"
#: The key under which a level lists the keys its class derives from fields the config changed:
#: ``{key: [those fields]}``, for a reader without the class's rule to refuse rather than guess.
UNDERIVED = "_pecli_underived"
#: The layer type each key of a per-kind ``default_theta`` stands for.
THETA_KINDS = {"global": "full_attention", "local": "sliding_attention"}
#: The legacy keys that give each layer type's base, in the order the config classes read them.
LEGACY_THETA = {"full_attention": ("rope_theta", "global_rope_theta"),
                "sliding_attention": ("rope_local_base_freq", "local_rope_theta")}


@lru_cache(maxsize=1)
def table() -> dict[str, Any]:
    """The generated table: ``{"transformers_version": …, "types": {model_type: record}}``."""
    return json.loads((Path(__file__).with_name("type_defaults.json")).read_text())


def versions() -> str:
    """The transformers release the defaults come from."""
    return f"transformers {table()['transformers_version']}"


def record_of(model_type: Any) -> dict[str, Any] | None:
    """The class record of ``model_type``, None for a type the table does not know."""
    return table()["types"].get(model_type) if isinstance(model_type, str) else None


def declared_default(model_types: tuple[Any, ...], name: str) -> Any:
    """The default that the config class of the first of ``model_types`` whose record has field ``name``
    declares for it (None when none does): a family's rule reads its class's numbers here, not from its code."""
    return next((record["fields"][name] for record in map(record_of, model_types)
                 if record is not None and name in record["fields"]), None)


def default_base(model_types: tuple[Any, ...], kind: str) -> float | None:
    """The class's ``default_theta`` for attention kind ``kind`` (``global``, ``local``) of the first of
    ``model_types`` whose record has one; a single ``default_theta`` serves both kinds."""
    for record in map(record_of, model_types):
        theta = (record or {}).get("default_theta")
        if isinstance(theta, dict) and kind in theta:
            return theta[kind]
        if isinstance(theta, (int, float)):
            return theta
    return None


def default_layer_period(model_types: tuple[Any, ...]) -> int | None:
    """After how many layers the ``layer_types`` that the class of the first of ``model_types`` derives
    from its defaults repeat (Gemma 3: a full-attention layer every 6; ModernBERT: a global one every 3);
    None when no record derives the list."""
    for record in map(record_of, model_types):
        derived = ((record or {}).get("derived") or {}).get("layer_types")
        if derived is None:
            continue
        if derived.get("period"):
            return int(derived["period"])
        value = derived["value"]
        return next(p for p in range(1, len(value) + 1) if all(t == value[i % p] for i, t in enumerate(value)))
    return None


def with_class_defaults(data: dict[str, Any], model_type: Any = None) -> dict[str, Any]:
    """``data`` with each missing key set to its config class's default, level by level.

    ``model_type`` is the type to read a level as when the level does not say (a sub-config's type comes
    from its parent's class). The keys filled at a level are listed under :data:`FILLED` there. A level
    whose type the table does not know is returned as it is (read with the generic keys).
    """
    own = data.get("model_type")
    record = record_of(own) or (record_of(model_type) if own is None else None)
    if record is None:
        return data
    out = dict(data)
    filled = [key for key in record["fields"] if _missing(out, key, record)]
    for key in filled:
        out[key] = _own(record["fields"][key])
    filled = _derived_values(out, record, filled)
    underived = {key: differ for key in DERIVED_HERE if key not in out and not _generic_rule(record, key)
                 for value, differ in [derived_value(out, key, record)] if value is not None and differ}
    if underived:
        out[UNDERIVED] = underived
    if own is None:
        out["model_type"] = model_type
        filled.append("model_type")
    for key, spec in record.get("sub_configs", {}).items():
        sub = out.get(key)
        if sub is None and spec["optional"]:
            continue
        if sub is None or isinstance(sub, dict):
            if sub is None:
                filled.append(key)
            given = {**spec["init_kwargs"], **(sub or {})}
            out[key] = with_class_defaults(given, spec["model_type"])
    filled += _default_rope_block(out, record)
    filled += _default_bases(out, record)
    if filled:
        out[FILLED] = filled
    return out


def _own(value: Any) -> Any:
    """A table value for a config to hold: a copy of a list or a dict (its reader may change it, the table must
    not), the value itself otherwise (the table's other values are numbers, strings, booleans and None)."""
    return copy.deepcopy(value) if isinstance(value, (list, dict)) else value


def _missing(data: dict[str, Any], key: str, record: dict[str, Any]) -> bool:
    """Whether ``key`` is absent, under its own name and under every old spelling of it."""
    if key in data:
        return False
    aliases = [alias for alias, target in record.get("attribute_map", {}).items() if target == key]
    return not any(alias in data for alias in aliases)


#: Keys a class derives in ``__post_init__`` that the filler sets itself (``layer_types`` is the family
#: table's, whose rules come first; ``rope_parameters`` is :func:`_default_rope_block`'s).
DERIVED_HERE = ("head_dim", "no_rope_layers", "cross_attention_layers", "attn_layer_indices")


def _derived_values(data: dict[str, Any], record: dict[str, Any], filled: list[str]) -> list[str]:
    """Replace the declared default of a key the class derives by the derived value, where the fields it
    derives it from are the class's own; where they are not, leave the key out (the family table's rule,
    or the generic reading, applies) rather than keep a declared default the class never uses."""
    for key in DERIVED_HERE:
        if key in data and key not in filled:
            continue
        value, differ = derived_value(data, key, record)
        if value is None:
            continue
        if key in filled:
            filled.remove(key)
            data.pop(key)
        if not differ:
            data[key] = value
            filled.append(key)
    return filled


def _generic_rule(record: dict[str, Any], key: str) -> bool:
    """Whether the class derives ``key`` as every reader does anyway: ``head_dim`` = width / heads."""
    fields, derived = record["fields"], record.get("derived", {}).get(key)
    if key != "head_dim" or derived is None or not fields.get("num_attention_heads"):
        return False
    return derived["value"] == fields.get("hidden_size", 0) // fields["num_attention_heads"]


#: Keys that say something about a config's RoPE; a config with none of them takes its class's whole block.
ROPE_INPUTS = ("rope_parameters", "rope_scaling", "rope_theta", "rotary_emb_base", "partial_rotary_factor", "rotary_pct",
               "rotary_dim", "rope_local_base_freq", "global_rope_theta", "local_rope_theta")


def _default_rope_block(data: dict[str, Any], record: dict[str, Any]) -> list[str]:
    """The RoPE block the class derives when the config leaves it out (``__post_init__``'s defaults: Apertus's
    llama3 scaling, GPT-NeoX's ``rotary_pct`` 0.25, Phi's 0.5, a block per layer type).

    A config with no RoPE key at all takes the whole derived block. A config that gives some takes, of the
    derived block, what it does not give: the scaling keys where it has no block, and the rotated fraction
    where it names none. A scaling's ``original_max_position_embeddings`` the class copied from
    ``max_position_embeddings`` follows the config's own length (left out, so that the reader copies it).
    """
    derived = record.get("derived", {}).get("rope_parameters")
    if derived is None or not isinstance(derived["value"], dict):
        return []
    block = _own(derived["value"])
    nested = all(isinstance(v, dict) or v is None for v in block.values())
    longest = record["fields"].get("max_position_embeddings")
    if "max_position_embeddings" in derived["depends_on"]:
        for part in (block.values() if nested else [block]):
            if isinstance(part, dict) and part.get("original_max_position_embeddings") == longest:
                part.pop("original_max_position_embeddings")
    if not any(data.get(key) is not None for key in ROPE_INPUTS) and "rope_parameters" not in data:
        data["rope_parameters"] = block
        return ["rope_parameters"]
    if nested:
        return []
    from pecli.schemes.scaling.registry import scales

    filled = []
    scaling = {k: v for k, v in block.items() if k not in ("rope_theta", "partial_rotary_factor")}
    if "rope_parameters" not in data and "rope_scaling" not in data and scales(hf_rope_type(scaling, None), aliases=False):
        data["rope_parameters"] = scaling
        filled.append("rope_parameters")
    given_block = data.get("rope_parameters") or data.get("rope_scaling") or {}
    fraction_given = any(data.get(k) is not None for k in ("partial_rotary_factor", "rotary_pct", "rotary_dim")) or \
        (isinstance(given_block, dict) and given_block.get("partial_rotary_factor") is not None)
    if block.get("partial_rotary_factor") is not None and not fraction_given:
        data["partial_rotary_factor"] = block["partial_rotary_factor"]
        filled.append("partial_rotary_factor")
    return filled


def derived_value(data: dict[str, Any], key: str, record: dict[str, Any] | None = None) -> tuple[Any, list[str]]:
    """What the class of ``data`` derives for ``key`` with its defaults, and the fields it derives it from
    that ``data`` sets to other values (empty: the derived value holds for ``data``); ``(None, [])``
    when the class derives nothing for it.

    A list the class was seen to derive periodically (``period`` in the table; a list of one repeated
    value has period 1) that differs only by the number of layers is extended to the config's layers."""
    record = record or record_of(data.get("model_type"))
    derived = (record or {}).get("derived", {}).get(key)
    if derived is None:
        return None, []
    fields = record["fields"]
    value = _own(derived["value"])
    differ = [name for name in derived["depends_on"] if name in data and data[name] != fields.get(name)]
    count = data.get("num_hidden_layers")
    period = derived.get("period") or (1 if isinstance(value, list) and value and len(set(map(str, value))) == 1 else None)
    if differ == ["num_hidden_layers"] and period and isinstance(count, int) and not isinstance(count, bool) \
            and 0 < count <= MAX_LAYERS:
        return [value[i % period] for i in range(count)], []
    return value, differ


def _default_bases(data: dict[str, Any], record: dict[str, Any]) -> list[str]:
    """Set the base of each RoPE block the config leaves without one; the keys set, as dotted paths."""
    theta = record.get("default_theta")
    if isinstance(theta, dict) and set(theta) == set(THETA_KINDS):
        return _per_kind_bases(data, {THETA_KINDS[kind]: value for kind, value in theta.items()})
    if not isinstance(theta, (int, float)) or any(data.get(k) is not None for k in ("rope_theta", "rotary_emb_base")):
        return []
    block = data.get("rope_parameters") or data.get("rope_scaling")
    if isinstance(block, dict) and block.get("rope_theta") is not None:
        return []
    data["rope_theta"] = float(theta)
    return ["rope_theta"]


def _per_kind_bases(data: dict[str, Any], defaults: dict[str, float]) -> list[str]:
    """Gemma 3's reading: ``rope_parameters`` per layer type, from the legacy keys or the defaults."""
    given = data.get("rope_parameters")
    nested = isinstance(given, dict) and any(kind in given for kind in defaults)
    blocks = {kind: dict(given[kind]) for kind in defaults if isinstance(given.get(kind), dict)} if nested else {}
    scaling = data.get("rope_scaling") if isinstance(data.get("rope_scaling"), dict) else None
    if not nested and isinstance(given, dict) and given:
        # The class keeps a flat block beside the per-type ones it adds, and reads only those: the flat
        # keys would be ignored by the model, so the config is refused rather than read either way.
        raise ConfigError("rope_parameters", f"is one block ({', '.join(map(str, given))}) for model_type "
                          f"{data.get('model_type')}, whose config class reads it per layer type only "
                          f"({', '.join(defaults)}) and ignores flat keys: give it per layer type")
    if scaling:
        blocks["full_attention"] = {**blocks.get("full_attention", {"rope_type": "default"}), **scaling}
    filled = []
    for kind, default in defaults.items():
        block = blocks.setdefault(kind, {"rope_type": "default"})
        if block.get("rope_theta") is not None:
            continue
        legacy = next((data[k] for k in LEGACY_THETA[kind] if data.get(k) is not None), None)
        if legacy is not None:
            block["rope_theta"] = legacy
        else:
            block["rope_theta"] = float(default)
            filled.append(f"rope_parameters.{kind}.rope_theta")
    data["rope_parameters"] = blocks
    moved = [key for key in ("rope_scaling", *(k for keys in LEGACY_THETA.values() for k in keys)) if key in data]
    for key in moved:
        data.pop(key)  # now inside rope_parameters, where the class moves them
    if moved and given is None:
        data[MOVED] = moved
    return filled
