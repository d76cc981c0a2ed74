"""Context-extension candidates for a RoPE model, as the ``config.json`` changes transformers reads.

A model trained on L₀ positions (its pre-training length) serves T (``max_position_embeddings``). To
reach a target N, a user picks one of the RoPE changes below and merges its keys into ``config.json``.
:func:`extension_base` reads what a candidate starts from, :func:`candidate_patches` writes each
candidate's keys, and :func:`patched` merges a patch into a config the way ``pecli extend`` documents,
so that pecli's own reader (:func:`pecli.models.families.plan_of`) reads the candidate back.

Every scaling starts from the pre-training frequencies θ_i = b^(−2i/d) and L₀, with the factor
s = N / L₀ (a model that already has a scaling is re-scaled from its pre-training state, as its own
scaling was). The keys follow transformers' ``modeling_rope_utils`` (``_compute_*_parameters``):

- ``linear``: position interpolation (Chen et al. 2023), θ_i / s; ``max_position_embeddings`` N.
- ``dynamic``: dynamic NTK (emozilla 2023). transformers takes ``max_position_embeddings`` as the
  length the base starts growing past, ``b·(s·n/L − (s − 1))^(d/(d−2))`` at a sequence of n tokens, so
  the patch keeps it at L₀ (set to N, the base would not change up to N).
- ``yarn``: YaRN (Peng et al. 2023) with β_fast 32, β_slow 1 and its attention factor 0.1 ln s + 1
  written out; ``original_max_position_embeddings`` L₀, ``max_position_embeddings`` N.
- ``llama3``: Llama 3.1's scaling (Meta 2024), low_freq_factor 1, high_freq_factor 4 as Llama 3.1 ships.
- ``base``: no scaling; ``rope_theta`` raised to the smallest base for N of Men et al. 2024's bound
  (:func:`pecli.analysis.spectrum.base_lower_bound`).
- ``longrope``: only for a model that carries LongRoPE factors (Phi-3): its own factors, with
  ``factor`` s (its attention factor √(1 + ln s / ln L₀)) and ``max_position_embeddings`` N.

A patch is written in the form the model's config already uses: ``rope_parameters`` (transformers 5),
or ``rope_theta`` with ``rope_scaling``; inside a multimodal config, under the text model's sub-config.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pecli.errors import ConfigError
from pecli.models.families import plan_of, text_path

#: The methods in the order they are built (and the last tie-break of the ranking).
METHODS = ("yarn", "llama3", "dynamic", "base", "linear", "longrope")

#: The keys of a rope dict that belong to a scaling: a candidate drops them and writes its own.
SCALING_KEYS = frozenset({
    "rope_type", "type", "factor", "original_max_position_embeddings", "attention_factor", "beta_fast",
    "beta_slow", "mscale", "mscale_all_dim", "low_freq_factor", "high_freq_factor", "short_factor",
    "long_factor", "truncate",
})

#: The rope types a model type's transformers code accepts and applies, where it does not take them all
#: (transformers 5.24; "default" is no scaling, which a base increase keeps). Read from each model's
#: ``validate_rope`` and rotary module: GPT-J and CodeGen build their frequencies with a fixed base 10000
#: and no scaling; Phi-3's config refuses other types and reads ``yarn`` as ``longrope``.
ACCEPTED_TYPES: dict[str, tuple[str, ...]] = {
    "gptj": (), "codegen": (),
    "phi3": ("default", "longrope"), "phi4_multimodal": ("default", "longrope"), "phimoe": ("default", "longrope"),
}
#: The rope_type each method writes.
METHOD_TYPES = {"yarn": "yarn", "llama3": "llama3", "dynamic": "dynamic", "base": "default", "linear": "linear",
                "longrope": "longrope"}

#: YaRN's defaults in transformers, written out in the patch.
YARN_BETA_FAST, YARN_BETA_SLOW = 32.0, 1.0
#: Llama 3.1's blend, as its config ships it.
LLAMA3_LOW_FREQ_FACTOR, LLAMA3_HIGH_FREQ_FACTOR = 1.0, 4.0


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
    longrope:
        The model's LongRoPE keys, when it has them.
    accepted:
        The rope types the model's code takes (:data:`ACCEPTED_TYPES`), None for all of transformers'.
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
    longrope: dict[str, Any] | None
    accepted: tuple[str, ...] | None = None

    def takes(self, method: str) -> bool:
        """Whether the model's code applies ``method``'s rope type."""
        return self.accepted is None or METHOD_TYPES[method] in self.accepted

    def factor(self, target: int) -> float:
        """s = N / L₀."""
        return target / self.pretraining


def _at(config: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    node = config
    for key in path:
        node = node[key]
    return node


def extension_base(config: dict[str, Any], source: str = "config") -> ExtensionBase:
    """What candidates for ``config`` start from (see :class:`ExtensionBase`).

    Raises
    ------
    ConfigError
        (key ``hf_config``) The model has no RoPE, RoPE that is not one 1-D ladder (M-RoPE), or layer
        groups with different RoPE settings; its rope parameters are per layer type.
    """
    from pecli.config import build_scheme

    plan = plan_of(config, source)
    groups = [group for group in plan.groups if group.options is not None]
    schemes = {group.scheme for group in groups}
    if schemes != {"rope"}:
        used = ", ".join(sorted(schemes)) or "no position encoding"
        raise ConfigError("hf_config", f"{source}: pecli extend proposes RoPE changes; this model uses {used}")
    settings = {tuple(sorted((k, repr(v)) for k, v in group.options.items())) for group in groups}
    if len(settings) > 1:
        named = "; ".join(f"{g.name} (layers {g.layers_text()})" for g in groups)
        raise ConfigError("hf_config", f"{source}: its layers use different RoPE settings ({named}); pecli extend "
                          "proposes one change for a model whose RoPE layers share one setting")
    options = dict(groups[0].options)
    scheme = build_scheme(options.pop("scheme"), options)
    path = text_path(config)
    text = _at(config, path)
    form = "rope_parameters" if isinstance(text.get("rope_parameters"), dict) else "rope_scaling"
    own = text.get(form) if isinstance(text.get(form), dict) else {}
    if form == "rope_parameters" and not ({"rope_theta", "rope_type", "type"} & own.keys()):
        raise ConfigError("hf_config", f"{source}: its rope_parameters are per layer type; pecli extend proposes one "
                          "change for a model whose RoPE layers share one setting")
    block = {key: value for key, value in own.items() if key not in SCALING_KEYS}
    served = scheme.model_length
    if served is None:
        raise ConfigError("hf_config", f"{source} has no max_position_embeddings: the context it serves is unknown")
    pretraining = scheme.training_length or served
    longrope = None
    if scheme.scaling == "longrope":
        longrope = {key: value for key, value in own.items() if key in SCALING_KEYS}
    pretrained = scheme.without_extension().frequency_pairs()
    kinds = [kind for kind in (text.get("model_type"), config.get("model_type")) if kind in ACCEPTED_TYPES]
    accepted = ACCEPTED_TYPES[kinds[0]] if kinds else None
    if accepted == ():
        raise ConfigError("hf_config", f"{source}: transformers' {kinds[0]} code builds its rotary frequencies with a fixed "
                          "base and no scaling: no config change extends its context")
    return ExtensionBase(source, path, form, block, int(served), int(pretraining), float(pretrained.base),
                         int(scheme.rotated_dim), scheme.scaling, longrope, accepted)


def candidate_patches(base: ExtensionBase, target: int, *, base_for_target: float | None) -> dict[str, dict[str, Any]]:
    """Each method's patch to reach ``target`` (see the module notes), in :data:`METHODS` order.

    ``base_for_target`` is the base of the ``base`` candidate (Men et al.'s smallest base for N); None,
    or a base that is not above the model's, leaves the candidate out.
    """
    s = base.factor(target)
    patches = {
        "yarn": _patch(base, target, {"rope_type": "yarn", "factor": s, "original_max_position_embeddings": base.pretraining,
                                      "beta_fast": YARN_BETA_FAST, "beta_slow": YARN_BETA_SLOW,
                                      "attention_factor": 0.1 * math.log(s) + 1.0}),
        "llama3": _patch(base, target, {"rope_type": "llama3", "factor": s, "low_freq_factor": LLAMA3_LOW_FREQ_FACTOR,
                                        "high_freq_factor": LLAMA3_HIGH_FREQ_FACTOR,
                                        "original_max_position_embeddings": base.pretraining}),
        "dynamic": _patch(base, base.pretraining, {"rope_type": "dynamic", "factor": s}),
    }
    if base_for_target is not None and base_for_target > base.base:
        patches["base"] = _patch(base, target, None, theta=base_for_target)
    patches["linear"] = _patch(base, target, {"rope_type": "linear", "factor": s})
    if base.longrope is not None:
        patches["longrope"] = _patch(base, target, {**base.longrope, "factor": s})
    return {method: patch for method, patch in patches.items() if base.takes(method)}


def _patch(base: ExtensionBase, max_positions: int, scaling: dict[str, Any] | None, *, theta: float | None = None) -> dict[str, Any]:
    """The keys to set, nested where the text model's keys are."""
    theta = base.base if theta is None else theta
    if base.form == "rope_parameters":
        keys: dict[str, Any] = {"rope_parameters": {**base.block, "rope_theta": theta, **(scaling or {"rope_type": "default"})}}
    else:
        keys = {"rope_theta": theta, "rope_scaling": scaling}
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
