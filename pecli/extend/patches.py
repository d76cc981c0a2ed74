"""Context-extension candidates for a RoPE model, as the ``config.json`` changes transformers reads.

A model trained on L₀ positions (its pre-training length) serves T (``max_position_embeddings``). To
reach a target N, a user picks one of the RoPE changes below and merges its keys into ``config.json``.
:func:`extension_base` reads what a candidate starts from, :func:`candidate_patches` writes each
candidate's keys, and :func:`patched` merges a patch into a config the way ``pecli extend`` documents,
so that pecli's own reader (:func:`pecli.models.families.from_config.plan_of`) reads the candidate back.

Every candidate starts from the pre-training frequencies θ_i = b^(−2i/d) and L₀, with the factor
s = N / L₀ (a model that already has a scaling is re-scaled from its pre-training state, as its own
scaling was). What each candidate writes is its scaling type's record: the ``extension`` of each
:class:`~pecli.schemes.scaling.record.ScalingType` in :data:`~pecli.schemes.scaling.registry.SCALINGS`
(:class:`~pecli.schemes.scaling.record.Extension`: its method name, the rope_type it writes, how its keys
follow from s, L₀ and N, which of the model's keys it carries, which ``max_position_embeddings`` it
writes). The keys follow transformers' ``modeling_rope_utils`` (``_compute_*_parameters``); the
records' docstrings say why each is written so (dynamic NTK keeps ``max_position_embeddings`` at L₀;
YaRN writes its attention factor out; ``base`` is the record of no scaling, a raised ``rope_theta``).

A patch is written in the form the model's config already uses: ``rope_parameters`` (transformers 5),
or ``rope_theta`` (GPT-NeoX: ``rotary_emb_base``) with ``rope_scaling``; inside a multimodal config,
under the text model's sub-config. Keys of the model's own scaling block that the new method still
reads are carried over (:attr:`Extension.carries`): DeepSeek's attention multiplies its logits by
mscale(s, ``mscale_all_dim``)² for every rope type but ``default``, and its YaRN attention factor is
mscale(s, ``mscale``) / mscale(s, ``mscale_all_dim``) — dropping them would change the softmax.
A candidate that drops LongRoPE factors says so (:func:`dropped_keys`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from pecli.errors import ConfigError
from pecli.models.families.keys import WINDOW_KEYS, at_path, text_path
from pecli.models.sources.config_json import plan_of_config
from pecli.params import excerpt
from pecli.schemes import get_scheme_class
from pecli.schemes.base import Capability
from pecli.schemes.scaling.llama3 import LLAMA3
from pecli.schemes.scaling.longrope import LONGROPE
from pecli.schemes.scaling.recipes import ATTENTION_READ_KEYS
from pecli.schemes.scaling.record import Extension, ExtensionStart, ScalingType
from pecli.schemes.scaling.registry import extension_types, find_scaling, scaling_keys
from pecli.schemes.scaling.unscaled import NO_SCALING
from pecli.schemes.scaling.yarn import YARN

def scaling_block_keys() -> frozenset[str]:
    """The keys of a rope dict that belong to a scaling: a candidate drops them and writes its own. They
    follow from the records (every key a scaling type takes, and the type's own key), read at each call."""
    return frozenset({"rope_type", "type", *scaling_keys()})

#: The scaling types a model type's transformers code accepts and applies, where it does not take them all
#: (transformers 5.24; no scaling is what a base increase keeps). Read from each model's ``validate_rope`` and
#: rotary module: GPT-J and CodeGen build their frequencies with a fixed base 10000 and no scaling; Phi-3's
#: config refuses other types and reads ``yarn`` as ``longrope``.
ACCEPTED_TYPES: dict[str, tuple[ScalingType, ...]] = {
    "gptj": (), "codegen": (),
    "phi3": (NO_SCALING, LONGROPE), "phi4_multimodal": (NO_SCALING, LONGROPE), "phimoe": (NO_SCALING, LONGROPE),
}


def methods() -> tuple[str, ...]:
    """The methods in the order they are built (and the last tie-break of the ranking), from the registry."""
    return tuple(extension_types())


def recipe(method: str) -> Extension:
    """The :class:`~pecli.schemes.scaling.record.Extension` of ``method`` (ConfigError naming ``method``)."""
    records = extension_types()
    if method not in records:
        raise ConfigError("method", f"{method!r} is not one of {', '.join(records)}")
    return records[method].extension


@dataclass(frozen=True)
class ExtensionBase:
    """What every candidate starts from.

    Attributes
    ----------
    source:
        How messages name the config.
    path:
        Where the text model's keys are in the config (``()`` top level, ``("text_config",)``, …).
    form:
        ``"rope_parameters"`` or ``"rope_scaling"``: the keys the config uses.
    block:
        The config's rope dict without its scaling keys (``rope_theta``, ``partial_rotary_factor``, …
        stay), as candidates write it back.
    served:
        T, the context the model serves now (``max_position_embeddings``).
    pretraining:
        L₀, the context its frequencies were trained on (a scaling's original length, else T).
    base:
        b, the pre-training base.
    dim:
        The rotated components per head.
    scaling:
        The model's own scaling type (``"none"`` without one).
    accepted:
        The rope types the model's code takes, as a config spells them (the HF names of the records of
        :data:`ACCEPTED_TYPES`), None for all of transformers'.
    own_scaling:
        The model's scaling keys as its config has them (``{}`` without a scaling).
    base_key:
        The key of the base at the level of ``rope_scaling``: ``rope_theta``, or GPT-NeoX's ``rotary_emb_base``.
    model_type:
        The text model's ``model_type`` (what a converter to another runtime reads).
    windowed:
        The layer types whose RoPE layers attend within a window (sliding or chunked); an engine may run
        them otherwise (llama.cpp keeps their trained base and scale whatever its flags).
    unwindowed:
        Whether some RoPE layers attend to the whole context.
    """

    source: str
    path: tuple[str, ...]
    form: str
    block: dict[str, Any]
    served: int
    pretraining: int
    base: float
    dim: int
    scaling: str
    accepted: tuple[str, ...] | None = None
    own_scaling: dict[str, Any] = field(default_factory=dict)
    base_key: str = "rope_theta"
    model_type: Any = None
    windowed: tuple[str, ...] = ()
    unwindowed: bool = True

    def takes(self, method: str) -> bool:
        """Whether the model's code applies ``method``'s rope type."""
        return self.accepted is None or recipe(method).rope_type in self.accepted

    def offers(self, method: str) -> bool:
        """Whether ``method`` is a candidate for this model: its code takes the type, and a recipe made from
        the model's own keys of its type (LongRoPE's factors) has them."""
        return self.takes(method) and (not recipe(method).reuses or find_scaling(self.scaling) is extension_types()[method])

    def factor(self, target: int) -> float:
        """s = N / L₀."""
        return target / self.pretraining


def extension_base(config: dict[str, Any], source: str = "config", train_length: Any = None) -> ExtensionBase:
    """What candidates for ``config`` start from (see :class:`ExtensionBase`).

    ``train_length`` sets L₀ (default: the scaling's original length, else ``max_position_embeddings``):
    Mistral 7B v0.1 serves 32,768 but was trained on 8,192.

    Raises
    ------
    ConfigError
        (key ``hf_config``) The model has no RoPE, RoPE that is not one 1-D ladder (M-RoPE), or layer
        groups with different RoPE settings; its rope parameters are per layer type. (key
        ``train_length``) not a whole number of tokens from 2 up to ``max_position_embeddings``.
    """
    if not isinstance(config, dict):
        raise ConfigError("hf_config", f"expected a config.json mapping, got {type(config).__name__}")
    plan = plan_of_config(config, source)  # its layer counts bounded first
    groups = [group for group in plan.groups if group.options is not None]
    schemes = {group.scheme for group in groups}
    if not schemes or not all(get_scheme_class(name).has(Capability.CONTEXT_EXTENSION) for name in schemes):
        used = ", ".join(sorted(schemes)) or "no position encoding"
        raise ConfigError("hf_config", f"{source}: pecli extend proposes RoPE changes; this model uses {used}")
    settings = {tuple(sorted((k, repr(v)) for k, v in group.options.items())) for group in groups}
    if len(settings) > 1:
        named = "; ".join(f"{g.name} (layers {g.layers_text()})" for g in groups)
        raise ConfigError("hf_config", f"{source}: its layers use different RoPE settings ({named}); pecli extend "
                          "proposes one change for a model whose RoPE layers share one setting")
    scheme = groups[0].encoding
    path = text_path(config)
    text = at_path(config, path)
    form = "rope_parameters" if isinstance(text.get("rope_parameters"), dict) else "rope_scaling"
    own = text.get(form) if isinstance(text.get(form), dict) else {}
    if form == "rope_parameters" and not ({"rope_theta", "rope_type", "type"} & own.keys()):
        raise ConfigError("hf_config", f"{source}: its rope_parameters are per layer type; pecli extend proposes one "
                          "change for a model whose RoPE layers share one setting")
    scaling_block = scaling_block_keys()
    block = {key: value for key, value in own.items() if key not in scaling_block}
    served = scheme.model_length
    if served is None:
        raise ConfigError("hf_config", f"{source} has no max_position_embeddings: the context it serves is unknown")
    pretraining = scheme.training_length or served
    if train_length is not None:
        pretraining = whole_tokens("train_length", train_length)
        if not 2 <= pretraining <= served:
            raise ConfigError("train_length", f"{pretraining:,} is not between 2 and the {int(served):,} tokens "
                              f"{source} serves (max_position_embeddings)")
    pretrained = scheme.without_extension().frequency_pairs()
    kinds = [kind for kind in (text.get("model_type"), config.get("model_type")) if kind in ACCEPTED_TYPES]
    accepted = tuple(record.hf_name for record in ACCEPTED_TYPES[kinds[0]]) if kinds else None
    if accepted == ():
        raise ConfigError("hf_config", f"{source}: transformers' {kinds[0]} code builds its rotary frequencies with a fixed "
                          "base and no scaling: no config change extends its context")
    own_scaling = {key: value for key, value in own.items() if key in scaling_block}
    base_key = "rotary_emb_base" if "rotary_emb_base" in text and "rope_theta" not in text else "rope_theta"
    windowed = tuple(dict.fromkeys(name for group in groups for name in group.names if name in WINDOW_KEYS))
    unwindowed = any(not group.windowed for group in groups)
    return ExtensionBase(source, path, form, block, int(served), int(pretraining), float(pretrained.base),
                         int(scheme.rotated_dim), scheme.scaling, accepted, own_scaling, base_key,
                         text.get("model_type") or config.get("model_type"), windowed, unwindowed)


def whole_tokens(key: str, value: Any) -> int:
    """``value`` as a whole, finite number of tokens (``1e6`` and ``"1048576"`` are), else ConfigError(key)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ConfigError(key, f"expected a number of tokens, got {excerpt(value)}")
    try:
        number = value if isinstance(value, int) else float(str(value).replace("_", ""))
    except ValueError:
        raise ConfigError(key, f"expected a number of tokens, got {excerpt(value)}") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise ConfigError(key, f"expected a whole number of tokens, got {excerpt(value)}")
    if number > 1 << 40:
        raise ConfigError(key, f"{excerpt(value)} is past 2^40 tokens")
    if number != int(number):
        raise ConfigError(key, f"expected a whole number of tokens, got {excerpt(value)}")
    return int(number)


def candidate_patches(base: ExtensionBase, target: int, *, base_for_target: float | None) -> dict[str, dict[str, Any]]:
    """Each method's patch to reach ``target`` (see the module notes), in :func:`methods` order.

    ``base_for_target`` is the base of the candidate that raises the base (``base``: Men et al.'s bound
    for N); None, or a base that is not above the model's, leaves it out.
    """
    s = base.factor(target)
    patches = {}
    for method in methods():
        if not base.offers(method):
            continue
        if not recipe(method).raises_base:
            patches[method] = method_patch(base, method, s, target)
        elif base_for_target is not None and base_for_target > base.base:
            patches[method] = _patch(base, target, None, theta=base_for_target)
    return patches


def method_patch(base: ExtensionBase, method: str, factor: float, target: int) -> dict[str, Any]:
    """The patch of ``method`` with scaling factor ``factor`` over L₀, serving ``target`` tokens.

    The keys are the method's record's (:class:`~pecli.schemes.scaling.record.Extension`); for the one
    that raises the base (``base``) the factor multiplies ``rope_theta`` (Code Llama: 10,000 × 100).
    """
    made = recipe(method)
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not math.isfinite(factor) or factor <= 1:
        raise ConfigError("factor", f"must be a finite number above 1, got {factor!r}")
    if not base.takes(method):
        raise ConfigError("method", f"{base.source}: the model's code in transformers takes rope_type "
                          f"{' or '.join(base.accepted or ())} only, not {made.rope_type}")
    if not base.offers(method):
        raise ConfigError("method", f"{base.source} carries no {extension_types()[method].title} keys "
                          f"({', '.join(made.reuses)})")
    s = float(factor)
    if made.raises_base:
        return _patch(base, target, None, theta=base.base * s)
    carried = {key: base.own_scaling[key] for key in made.carries if base.own_scaling.get(key) is not None}
    start = ExtensionStart(s, base.pretraining, int(target), dict(base.own_scaling), carried)
    keys = made.write(extension_types()[method], start)
    served = base.pretraining if made.served == "pretraining" else target
    return _patch(base, served, keys)


def dropped_keys(base: ExtensionBase, method: str) -> tuple[str, ...]:
    """The keys of the model's scaling that ``method``'s patch does not carry and that the model read:
    the fitted keys a recipe reuses (LongRoPE's factors: the model was fine-tuned with them) and the keys
    its attention reads (:data:`~pecli.schemes.scaling.recipes.ATTENTION_READ_KEYS`: DeepSeek's softmax factor)."""
    made = recipe(method)
    kept = set(made.carries) | set(made.reuses)
    wanted = [*dict.fromkeys(key for record in extension_types().values() for key in record.extension.reuses),
              *ATTENTION_READ_KEYS]
    return tuple(key for key in wanted if base.own_scaling.get(key) is not None and key not in kept)


def _patch(base: ExtensionBase, max_positions: int, scaling: dict[str, Any] | None, *, theta: float | None = None) -> dict[str, Any]:
    """The keys to set, nested where the text model's keys are."""
    theta = base.base if theta is None else theta
    if base.form == "rope_parameters":
        keys: dict[str, Any] = {"rope_parameters": {**base.block, "rope_theta": theta,
                                                    **(scaling or {"rope_type": NO_SCALING.hf_name})}}
    else:
        keys = {base.base_key: theta, "rope_scaling": scaling}
    keys["max_position_embeddings"] = int(max_positions)
    for key in reversed(base.path):
        keys = {key: keys}
    return keys


def patched(config: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """``config`` with ``patch`` merged: a sub-config (a key ending in ``_config``) key by key, every other
    key replaced whole (a rope dict is the candidate's own, with no key left from the old scaling)."""
    out = dict(config)
    for key, value in patch.items():
        if key.endswith("_config") and isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = patched(out[key], value)
        else:
            out[key] = value
    return out


@dataclass(frozen=True)
class ShippedRecipe:
    """A context extension a model family shipped (or documented), to measure beside the candidates.

    It applies to a config of one of ``model_types`` with base ``base`` trained on ``pretraining``
    tokens; the recipe is the candidate of scaling type ``scaling`` (its :attr:`method`; no scaling: a raised
    base) with ``factor`` over ``original`` tokens (its L₀), as published.
    """

    name: str
    published: str
    model_types: tuple[str, ...]
    base: float
    pretraining: int
    scaling: ScalingType
    factor: float
    original: int

    @property
    def method(self) -> str:
        """What ``pecli extend`` calls the recipe's candidate (its record's :attr:`Extension.method`)."""
        return self.scaling.extension.method

    def applies(self, config: dict[str, Any], base: ExtensionBase) -> bool:
        text = at_path(config, base.path)
        kinds = {text.get("model_type"), config.get("model_type")}
        return (bool(kinds & set(self.model_types)) and base.base == self.base
                and base.pretraining in (self.pretraining, self.original))

    def patch(self, base: ExtensionBase, target: int) -> dict[str, Any]:
        """The recipe's patch, serving ``target`` tokens (measured there)."""
        return method_patch(replace(base, pretraining=self.original), self.method, self.factor, target)


#: The recipes pecli knows a family shipped. Sources: Meta, "The Llama 3 Herd of Models" (2024) and
#: Llama 3.1's config.json; Qwen's model cards for Qwen2.5 (YaRN factor 4 over 32,768) and Qwen3
#: (factor 4 over 32,768); Rozière et al., "Code Llama: Open Foundation Models for Code" (2023):
#: base 10,000 → 1,000,000 on Llama 2; Peng et al., "YaRN" (2023), Yarn-Mistral-7b-64k: factor 8 over 8,192.
SHIPPED = (
    ShippedRecipe("Llama 3.1", "Meta 2024: llama3 ×8 over 8,192, fine-tuned to 131,072", ("llama",), 500000.0, 8192,
                  LLAMA3, 8.0, 8192),
    ShippedRecipe("Qwen2.5", "Qwen's model card: yarn ×4 over 32,768", ("qwen2",), 1000000.0, 32768, YARN, 4.0, 32768),
    ShippedRecipe("Qwen3", "Qwen's model card: yarn ×4 over 32,768", ("qwen3", "qwen3_moe"), 1000000.0, 40960, YARN, 4.0,
                  32768),
    ShippedRecipe("Code Llama", "Rozière et al. 2023: Llama 2's base 10,000 raised to 1,000,000, fine-tuned at 16,384",
                  ("llama",), 10000.0, 4096, NO_SCALING, 100.0, 4096),
    ShippedRecipe("YaRN Mistral", "Peng et al. 2023, Yarn-Mistral-7b-64k: yarn ×8 over the 8,192 Mistral 7B was trained on",
                  ("mistral",), 10000.0, 32768, YARN, 8.0, 8192),
)


def shipped_recipes(config: dict[str, Any], base: ExtensionBase) -> list[ShippedRecipe]:
    """The :data:`SHIPPED` recipes of the model's family whose method its code takes."""
    return [r for r in SHIPPED if r.applies(config, base) and base.takes(r.method)]
