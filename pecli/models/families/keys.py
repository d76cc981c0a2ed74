"""The key reader: a config's keys read through one door (:class:`Keys`), which remembers which were
read and which defaulted (:mod:`~pecli.models.families.key_record`) and where each setting came from
(:mod:`~pecli.models.families.setting_trace`); the generic spellings of the keys every family reads, where a
multimodal config keeps its text model's keys, and the refusal of a positional-looking key that no group read.
"""

from __future__ import annotations

import json
import numbers
import re
from typing import Any, Callable, Mapping

from pecli.errors import ConfigError
from pecli.models.sources.class_defaults import FILLED, MOVED, UNDERIVED
from pecli.models.families.setting_trace import SettingTrace
from pecli.models.plan import LayerGroup, Origin
from pecli.numbers import integer, number
from pecli.params import excerpt


#: Keys whose presence says that a config describes RoPE, whatever its model_type.
ROPE_KEYS = ("rope_theta", "rope_scaling", "rope_parameters", "rotary_emb_base", "rotary_pct", "partial_rotary_factor")
#: Generic spellings of the model width and of the number of heads (DBRX: d_model / n_heads).
HIDDEN_KEYS = ("hidden_size", "n_embd", "d_model")
HEADS_KEYS = ("num_attention_heads", "n_head", "n_heads")
#: Generic spellings of the head dimension, in the order they win.
HEAD_DIM_KEYS = ("head_dim", "kv_channels", "attention_head_dim")


class Keys(SettingTrace):
    """A config's keys, read through one door that remembers which were read and which defaulted.

    What it remembers is its bases': the keys read and defaulted, the model's and one group's
    (:class:`~pecli.models.families.key_record.KeyRecord`, its ``scoped``), and the sources of each setting
    (:class:`~pecli.models.families.setting_trace.SettingTrace`, its ``traced``). This class reads: a key and
    whether the file or its class gave it, numbers checked, one layer's keys over the model's.
    """

    def __init__(self, data: Mapping[str, Any], source: str) -> None:
        super().__init__()
        self.data, self.source = data, source
        #: Keys the config class's defaults supplied (:mod:`pecli.models.sources.class_defaults`): read as defaulted.
        self.from_class = frozenset(data.get(FILLED, ()))
        #: The file's legacy keys the class moved into ``rope_parameters``: reported under their own names.
        self.moved: tuple[str, ...] = tuple(data.get(MOVED, ()))
        #: Keys the class derives from fields this config changed, by rules pecli may not have: {key: fields}.
        self.underived: dict[str, list[str]] = dict(data.get(UNDERIVED) or {})
        self.warnings: list[str] = []

    def classes(self, family_type: str) -> tuple[Any, str]:
        """Whose config-class defaults a family's rule takes: this level's model type, else ``family_type``
        (the family's own class), for :mod:`pecli.models.sources.class_defaults`' readers."""
        return self.data.get("model_type"), family_type

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def warn(self, text: str) -> None:
        """A fact worth a line on stderr that does not change pecli's numbers."""
        if text not in self.warnings:
            self.warnings.append(text)

    def get(self, *names: str, default: Any = None, record_default: bool = True) -> Any:
        """The first of ``names`` present (not null); else ``default``, noted as defaulted."""
        read, defaulted = self._here()[:2]
        for name in names:
            if self.data.get(name) is not None:
                if name in self.from_class:
                    self.note_default(name, self.data[name])
                elif name == "rope_parameters" and self.moved:
                    read.extend(key for key in self.moved if key not in read)
                    self.heard(self.moved, Origin.CONFIG)
                else:
                    if name not in read:
                        read.append(name)
                    self.heard((name,), Origin.CONFIG)
                return self.data[name]
        if default is not None and record_default:
            text = f"{names[0]}={default:g}" if isinstance(default, float) else f"{names[0]}={default}"
            if text not in defaulted:
                defaulted.append(text)
            self.heard(names[:1], Origin.DEFAULT)
        return default

    def note_default(self, name: str, value: Any) -> None:
        """Record ``name=value`` among the keys defaulted (in the current scope)."""
        defaulted = self._here()[1]
        shown = number(value) if isinstance(value, float) else integer(value) if isinstance(value, int) and not \
            isinstance(value, bool) else value if isinstance(value, str) else excerpt(value)
        text = f"{name}={shown}"
        if text not in defaulted:
            defaulted.append(text)
        self.heard((name,), Origin.CLASS_DEFAULT)

    def origin(self, name: str) -> Origin:
        """Whether key ``name`` (present) is the file's or its class's default."""
        return Origin.CLASS_DEFAULT if name in self.from_class else Origin.CONFIG

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


#: The key of each windowed layer type's window: its layers attend to at most that many tokens.
WINDOW_KEYS = {"sliding_attention": "sliding_window", "chunked_attention": "attention_chunk_size"}


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
