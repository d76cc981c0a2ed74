"""A model's position plan: which layers use which position encoding, and where each number came from.

A model is not one scheme. Gemma 3 runs its sliding-window layers on one RoPE and its full-attention
layers on another; Llama 4 leaves every fourth layer without any; T5 has buckets in its encoder and
causal buckets in its decoder. :class:`PositionPlan` is that story: a list of :class:`LayerGroup`, each
with its layers, the pecli scheme options that reproduce it (None for a group without position
encoding) and the config keys it was read from. The family table (:mod:`pecli.models.families`) builds
plans; commands only select from them (:meth:`PositionPlan.select`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING, Any, Mapping

from pecli.errors import ConfigError
from pecli.models.logit_scale import UNSCALED, AttentionRule, LogitScale, SoftmaxScale
from pecli.notebook import Tabular
from pecli.numbers import integer, number

if TYPE_CHECKING:
    from pecli.schemes.base import Scheme

#: The name of a group of layers that apply no position encoding.
NOPE = "nope"


class Origin(str, Enum):
    """Where the value of a group's setting came from."""

    #: A key of the config file.
    CONFIG = "config key"
    #: The default of the model type's config class (:mod:`pecli.models.sources.class_defaults`), for a key the file
    #: leaves out.
    CLASS_DEFAULT = "class default"
    #: The reader's default where neither the file nor the class gives one (transformers' base 10000; for a GGUF
    #: file, llama.cpp's loader's: ``rope.freq_base`` 10000).
    DEFAULT = "default"
    #: The model's code, whatever the config says (the family's layout, GPT-J's base).
    MODEL_CODE = "model code"
    #: A key of a GGUF file's metadata.
    GGUF = "GGUF key"
    #: What llama.cpp's converter (``convert_hf_to_gguf.py``) wrote into a GGUF file in a form of its own, from a
    #: setting of the model's (a llama3 block as the ``rope_freqs`` tensor): :attr:`Source.converted_from` names it.
    CONVERTER = "llama.cpp's converter"
    #: A flag of an engine's command line.
    ENGINE_FLAG = "engine flag"
    #: A value the user gave over the model's.
    USER = "user override"


@dataclass(frozen=True)
class Source:
    """One key a group's setting was read from: ``base`` ← ``rope_theta`` (config key)."""

    #: The scheme option it sets (``dim``, ``base``, ``partial_rotary_factor``, ``rope_scaling``, …).
    setting: str
    #: The key, flag or field that gave it, as the group's ``keys_read`` names it.
    key: str
    origin: Origin
    #: The option's value it gave (its ``repr``), so that a group whose options were changed afterwards
    #: (an engine's rule, a trial) claims no source for a value it no longer has (:func:`stamped`).
    value: str = ""
    #: The model's setting a converter turned into :attr:`key` (origin :attr:`Origin.CONVERTER`:
    #: ``rope_scaling llama3``), "" for any other source.
    converted_from: str = ""

    def __str__(self) -> str:
        via = f" from {self.converted_from}" if self.converted_from else ""
        return f"{self.setting} ← {self.key} ({self.origin.value}{via})"


def stamped(sources: tuple[Source, ...] | list[Source], options: Mapping[str, Any] | None) -> tuple[Source, ...]:
    """The sources of the settings ``options`` has, each with the value it gave."""
    if options is None:
        return ()
    return tuple(dict.fromkeys(dataclasses.replace(source, value=repr(options[source.setting]))
                               for source in sources if source.setting in options))


@dataclass(frozen=True)
class LayerGroup:
    """Layers that share one position encoding.

    Attributes
    ----------
    name : str
        The model's own layer type where it has them (``sliding_attention``, ``full_attention``), ``all``
        for a model with one encoding, ``encoder``/``decoder``, or :data:`NOPE`.
    layers : tuple of int
        0-based layer indices, as transformers' ``layer_idx``.
    options : mapping or None
        The pecli scheme options (``scheme`` included) that reproduce the group's encoding; None when the
        layers apply no position encoding.
    keys_read, keys_defaulted : tuple of str
        The config keys the options came from, and those absent whose default applied (``key=value``).
    note : str
        What pecli reports about the group besides its numbers (a rounding the model applies, …).
    attention_scale : LogitScale
        The factor the model's attention module applies to the logits because of its position settings,
        besides cos and sin (DeepSeek's mscale², Llama 4's temperature on NoPE layers); see
        :attr:`logit_scale` for the whole factor.
    window : tuple of (str, int) or None
        The key and size of the attention window of a sliding-window (or chunked) group: its layers see
        at most that many tokens, so it is analysed over them (:attr:`analysis_length`).
    windowed_layers : tuple of int
        Its layers whose attention is windowed (sliding or chunked): every layer of a group with a
        :attr:`window`, the windowed types' layers of a group that also holds full-attention ones (Gemma
        2's ``sliding_attention+full_attention``), which an engine may run on other RoPE settings.
    softmax : SoftmaxScale or None
        The factor the attention module puts on q·kᵀ before the softmax, without the position part
        (None: a plan not read from a config.json, a GGUF file's).
    sources : tuple of Source
        Per setting of :attr:`options`, the keys it was read from and their :class:`Origin` (the family
        table fills them; a plan read otherwise may leave them empty): :meth:`sources_of`.
    attention_rule : AttentionRule or None
        How the model's attention sets :attr:`attention_scale` from the group's scaling (a plan read from
        a config.json), so that the group under a user's settings recomputes it
        (:func:`pecli.models.group_change.user_changed`).
    logit_scale_unknown : str
        Why pecli does not know the group's logit scale ("" when it does): the user changed a scaling whose
        attention factor pecli cannot recompute (a GGUF file's, an engine's).
    """

    name: str
    layers: tuple[int, ...]
    options: Mapping[str, Any] | None
    keys_read: tuple[str, ...] = ()
    keys_defaulted: tuple[str, ...] = ()
    note: str = ""
    attention_scale: LogitScale = UNSCALED
    window: tuple[str, int] | None = None
    windowed_layers: tuple[int, ...] = ()
    softmax: SoftmaxScale | None = None
    sources: tuple[Source, ...] = field(default=(), compare=False)
    attention_rule: AttentionRule | None = field(default=None, compare=False)
    logit_scale_unknown: str = field(default="", compare=False)

    def sources_of(self, setting: str) -> tuple[Source, ...]:
        """Where setting ``setting`` of the group came from: the keys it was read from, with their origin
        (empty: not recorded, or the setting changed since it was read)."""
        if self.options is None or setting not in self.options:
            return ()
        value = repr(self.options[setting])
        return tuple(source for source in self.sources if source.setting == setting and source.value == value)

    @property
    def windowed(self) -> bool:
        """Whether every layer of the group attends within a window (sliding or chunked)."""
        return self.window is not None or (bool(self.windowed_layers) and len(self.windowed_layers) == len(self.layers))

    @property
    def analysis_length(self) -> int | None:
        """The positions an analysis of the group covers by default: its window, else its :attr:`context`."""
        return self.window[1] if self.window else self.context

    @property
    def analysis_note(self) -> str:
        """Where :attr:`analysis_length` comes from, in words ("" for a plain max_position_embeddings)."""
        if self.window:
            return f"analysed over its attention window of {integer(self.window[1])} tokens ({self.window[0]})"
        stretched = self._stretched
        if stretched is not None and self.context != stretched[2]:
            factor, original, _ = stretched
            return (f"analysed over {integer(self.context)} positions, the scaling's factor × original length "
                    f"({number(factor)} × {integer(original)})")
        return ""

    @cached_property
    def encoding(self) -> Scheme | None:
        """The group's scheme, built once from :attr:`options` (a RoPE group's scaling is its
        ``rope_scaling``: the typed value, its type and keys as the scaling records read them); None for
        layers without position encoding. Every reader of a group's numbers takes them from here, and
        the scheme at another length from ``encoding.at_length(T)``.

        Raises
        ------
        ConfigError
            The scheme's refusal of an option (naming its key); the family table raises it, with the
            group named, before any door reads the group (:mod:`pecli.models.group_schemes`).
        """
        if self.options is None:
            return None
        from pecli.schemes.build import build_scheme

        options = dict(self.options)
        return build_scheme(options.pop("scheme"), options)

    def replaced(self, **changes: Any) -> LayerGroup:
        """The group with ``changes`` to its fields; the scheme already built (:attr:`encoding`) is kept
        when its options do not change."""
        changed = dataclasses.replace(self, **changes)
        if "options" not in changes and "encoding" in self.__dict__:
            changed.__dict__["encoding"] = self.__dict__["encoding"]
        return changed

    @cached_property
    def logit_scale(self) -> LogitScale:
        """By how much the model multiplies q·k/√d beyond cos and sin: the rotary attention factor
        squared (it multiplies cos and sin, so q and k both carry it) times :attr:`attention_scale`."""
        if not self.rotary:
            return self.attention_scale
        return self.attention_scale.times(float(getattr(self.encoding, "attention_scaling", 1.0)) ** 2)

    @property
    def context(self) -> int | None:
        """The context the model runs its group at: a scaling's factor × original length where the
        scaling says so, else ``max_position_embeddings`` (None when the config gives neither)."""
        stretched = self._stretched
        if stretched is not None:
            factor, original, longest = stretched
            return max(int(round(factor * original)), longest or 0)
        longest = getattr(self.encoding, "max_position_embeddings", None) if self.rotary else None
        return int(longest) if longest else None

    @property
    def _stretched(self) -> tuple[float, int, int | None] | None:
        """The factor and original length of a scaling that runs the model at their product (one whose
        record says it starts from the original length: llama3, yarn, longrope), as the group's typed
        scaling holds them, with ``max_position_embeddings``; None for any other group.

        Only the keys the config gives count: a llama3 block without ``original_max_position_embeddings``
        is not stretched here (the 8192 pecli's rule falls back on is no fact of the config's), and a
        legacy ``su`` block is longrope (transformers' ``Phi3Config`` renames it).
        """
        scaling = getattr(self.encoding, "rope_scaling", None) if self.rotary else None
        if scaling is None or not scaling.record.from_original_length:
            return None
        factor, original = scaling.values.get("factor"), scaling.values.get("original_max_position_embeddings")
        if not factor or not original:
            return None
        longest = self.encoding.max_position_embeddings
        return float(factor), int(original), None if longest is None else int(longest)

    @property
    def scheme_class(self) -> type | None:
        """The class of the group's scheme, which callers ask what it can do (None without position encoding)."""
        if self.options is None:
            return None
        from pecli.schemes import get_scheme_class

        return get_scheme_class(self.options["scheme"])

    @property
    def rotary(self) -> bool:
        """Whether the group's scheme rotates queries and keys (RoPE, M-RoPE)."""
        from pecli.schemes.base import Capability

        scheme_class = self.scheme_class
        return scheme_class is not None and scheme_class.has(Capability.ROTARY)

    @property
    def scheme(self) -> str:
        """The scheme's name, ``none`` for a group without position encoding."""
        return "none" if self.options is None else str(self.options["scheme"])

    @property
    def names(self) -> tuple[str, ...]:
        """The layer types this group stands for (a merged group ``a+b`` answers to ``a`` and to ``b``)."""
        return tuple(self.name.split("+"))

    def layers_text(self) -> str:
        """The layers as ranges: ``0–4, 6–10, 12``."""
        return ranges_text(self.layers)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "layers": list(self.layers), "scheme": self.scheme,
                "options": None if self.options is None else dict(self.options),
                "keys_read": list(self.keys_read), "keys_defaulted": list(self.keys_defaulted), "note": self.note,
                "logit_scale": self.logit_scale.to_json(self.context),
                "window": None if self.window is None else {"key": self.window[0], "tokens": self.window[1]},
                "softmax_scale": None if self.softmax is None else self.softmax.to_json(self.softmax_position_part)}

    @property
    def softmax_position_part(self) -> float:
        """The constant factor the position settings add to the attention module's scale (DeepSeek's
        mscale²); a rule on the queries (Llama 4's temperature) is not part of it."""
        return self.attention_scale.factor

    @property
    def scalable(self) -> bool:
        """Whether the group's scheme carries a context-extension scaling (1-D RoPE): the groups an engine's
        scaling flags and rules reach."""
        from pecli.schemes.base import Capability

        scheme_class = self.scheme_class
        return scheme_class is not None and scheme_class.has(Capability.CONTEXT_EXTENSION)


@dataclass(frozen=True, repr=False)
class PositionPlan(Tabular):
    """Every layer group of one model, in the order of their first layer."""

    source: str
    model_type: str | None
    family: str
    num_layers: int | None
    groups: tuple[LayerGroup, ...]
    #: Things worth a line on stderr that do not change the numbers (an unknown model type read generically).
    warnings: tuple[str, ...] = field(default=())
    #: Whose defaults the keys the config leaves out took: its config class and the transformers release
    #: they were generated from (empty for a model type pecli reads generically).
    defaults_from: str = ""

    def group_named(self, name: str) -> LayerGroup:
        for group in self.groups:
            if name == group.name or name in group.names:
                return group
        raise ConfigError("layer_group", f"{self.source} has no layer group {name!r}; its groups: {self.groups_text()}")

    def group_of(self, layer: int) -> LayerGroup:
        """The group of layer ``layer``; an encoder–decoder model, whose stacks both count from 0, needs
        ``--layer-group`` instead."""
        holding = [group for group in self.groups if layer in group.layers]
        if len(holding) > 1:
            raise ConfigError("layer", f"{self.source} numbers the layers of each stack from 0 "
                              f"({', '.join(g.name for g in holding)}): choose one with --layer-group NAME")
        if holding:
            return holding[0]
        if not any(group.layers for group in self.groups):  # no layer count: one group for every layer
            return self.groups[0]
        last = max(max(group.layers) for group in self.groups if group.layers)
        raise ConfigError("layer", f"{self.source} has layers 0 to {last} (num_hidden_layers {last + 1}), got {layer}")

    def select(self, layer: int | None = None, group: str | None = None) -> PositionPlan:
        """The plan narrowed to one group: that of ``layer``, or the one named ``group`` (both: they must agree)."""
        if layer is None and group is None:
            return self
        chosen = self.group_of(layer) if layer is not None else self.group_named(group)
        if layer is not None and group is not None and chosen is not self.group_named(group):
            raise ConfigError("layer_group", f"layer {layer} is in group {chosen.name!r}, not {group!r} (--layer and --layer-group disagree)")
        if layer is not None:
            chosen = chosen.replaced(layers=(layer,))
        return PositionPlan(self.source, self.model_type, self.family, self.num_layers, (chosen,), self.warnings,
                            self.defaults_from)

    @property
    def single(self) -> LayerGroup | None:
        """The one group, or None when the model has several."""
        return self.groups[0] if len(self.groups) == 1 else None

    def groups_text(self) -> str:
        return "; ".join(f"{g.name} (layers {g.layers_text()}{', no position encoding' if g.options is None else ''})"
                         for g in self.groups)

    def table_title(self) -> str:
        layers = f", {self.num_layers} layers" if self.num_layers else ""  # an encoder-decoder counts none for both
        return f"{self.source}: {self.family} ({self.model_type or 'unknown model type'}){layers}"

    def table_rows(self) -> list[dict[str, Any]]:
        """A row per layer group: its layers, scheme, options and note."""
        return [{"group": g.name, "layers": g.layers_text(), "scheme": "none" if g.options is None else g.scheme,
                 "options": {k: v for k, v in (g.options or {}).items() if k != "scheme"}, "note": g.note}
                for g in self.groups]

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "model_type": self.model_type, "family": self.family,
                "num_layers": self.num_layers, "groups": [g.to_dict() for g in self.groups],
                "warnings": list(self.warnings), "defaults_from": self.defaults_from}


def ranges_text(values: tuple[int, ...] | list[int]) -> str:
    """``[0, 1, 2, 4, 5, 7]`` → ``0–2, 4–5, 7``; an empty list → ``all``."""
    if not values:
        return "all"
    runs: list[list[int]] = []
    for value in sorted(values):
        if runs and value == runs[-1][1] + 1:
            runs[-1][1] = value
        else:
            runs.append([value, value])
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in runs)


def one_group(plan: PositionPlan) -> LayerGroup:
    """The one group a single-scheme computation needs, or a one-line refusal: the groups to choose
    from, or the layers that apply no position encoding."""
    group = plan.single
    if group is None:
        raise ConfigError("layer", f"{plan.source} has {len(plan.groups)} layer groups: {plan.groups_text()}; "
                          "choose one with --layer N or --layer-group NAME")
    if group.options is None:
        several = len(group.layers) > 1
        raise ConfigError("layer", f"layer{'s' if several else ''} {group.layers_text()} of {plan.source} "
                          f"appl{'y' if several else 'ies'} no position encoding (group {group.name})")
    return group
