"""Engines that read the model's ``config.json`` themselves (vLLM, SGLang, MLX): one way of running them.

:class:`ConfigEngine.run` does what such an engine does, in its order: its override flag changes the
config (each engine merges it its own way), its config loading may refuse the model, it derives the
context it serves (and refuses a longer one asked for), then each model file builds its rotary
modules. pecli reads the resulting config as transformers does (:func:`pecli.models.reading.plan_of_config`,
exact against transformers) and each engine module's rules — data keyed by the model types its model
files cover — turn that reading into what the engine builds, with a :class:`~pecli.engines.base.Departure`
wherever the numbers change.
"""

from __future__ import annotations

import sys

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

from pecli.engines.base import (
    Departure, Engine, EngineRun, declared_context, positions_of, rope_dict, rope_type, text_of,
)
from pecli.errors import ConfigError
from pecli.models.plan import LayerGroup, Origin, PositionPlan, Source
from pecli.params import excerpt
from pecli.schemes.scaling.record import ScalingType
from pecli.schemes.scaling.unscaled import NO_SCALING
from pecli.schemes.scaling.yarn import YARN


@dataclass(frozen=True)
class Context:
    """What a rule sees: the config the engine runs (after its overrides), the text model's keys, its rope
    dict, its model type, the flags and environment, the context served, and transformers' plan of it."""

    config: dict[str, Any]
    text: dict[str, Any]
    block: dict[str, Any] | None
    model_type: str | None
    flags: Mapping[str, Any]
    env: Mapping[str, str]
    served: int | None
    plan: PositionPlan


#: A rule: (context, group) → the group as the engine builds it and the departure (None: no change).
Rule = Callable[[Context, LayerGroup], "tuple[LayerGroup, Departure | None]"]


@dataclass(frozen=True)
class ConfigEngine(Engine):
    """An engine that loads ``config.json``: its rules, its override flag, its length flag."""

    rules: tuple[Rule, ...] = ()
    override_flag: str | None = None
    length_flag: str | None = None
    #: The model types whose model files the fixtures measured (``tests/fixtures/engines/<engine>/``): for any
    #: other the engine's own code was not run, and pecli says it cannot be sure (empty: no such check).
    measured: frozenset = frozenset()
    #: What happens at positions past its cos/sin cache (:meth:`cache_rows`).
    past_cache: str = "read past it (an IndexError on a CPU, unchecked on a GPU)"

    # -- steps an engine module gives ----------------------------------------------------------------------
    def overridden(self, config: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
        """The config after the engine's override flag (each engine merges it its own way)."""
        return config

    def load_refusal(self, config: dict[str, Any], text: dict[str, Any], model_type: str | None) -> str | None:
        """The engine's own error loading the config, None where it loads (default: transformers' config class's)."""
        return transformers_refusal(config, model_type)

    def permutes_rotary_weights(self, config: Mapping[str, Any]) -> bool:
        """Whether the engine permutes q and k at load so that its rotate-half layout computes the checkpoint's
        interleaved pairs (its numbers then are the checkpoint's, in another frame)."""
        return False

    def override_departures(self, config: Mapping[str, Any], overrides: Mapping[str, Any]) -> list[Departure]:
        """Overrides the engine takes and does not apply (default: none)."""
        return []

    def cache_rows(self, context: "Context", groups: list[LayerGroup]) -> int | None:
        """The rows of the engine's cos/sin cache (default: none, computed at every position)."""
        return None

    def transformers_backend(self, config: Mapping[str, Any]) -> bool:
        """Whether the engine runs the model through transformers' own code (its numbers: transformers')."""
        return False

    def build_refusal(self, text: Mapping[str, Any]) -> str | None:
        """The model file's error building its modules from the loaded config (default: none)."""
        return None

    def loaded(self, config: dict[str, Any]) -> dict[str, Any]:
        """The config as the engine's model file reads it, said in transformers' keys (default: as it is)."""
        return config

    def context(self, config: dict[str, Any], text: dict[str, Any], flags: Mapping[str, Any],
                env: Mapping[str, str]) -> tuple[int | None, str | None]:
        """(the context served, the engine's refusal of the length asked for)."""
        return None, None

    # -- the run ---------------------------------------------------------------------------------------------
    def run(self, config: Mapping[str, Any], args: str = "", env: Mapping[str, str] | None = None,
            source: str = "config.json") -> EngineRun:
        """What the engine computes for ``config`` under ``args`` (see the module)."""
        from pecli.models.sources.class_defaults import with_class_defaults
        from pecli.models.sources.config_json import plan_of_config

        flags, given_env = self.parse(args)
        env = {**given_env, **(env or {})}
        if not isinstance(config, Mapping):
            raise ConfigError("hf_config", "must hold a JSON object")
        overrides = flags.get(self.override_flag, {}) if self.override_flag else {}
        check_overrides(self.override_flag, overrides)
        check_overrides(None, text_of(config)[1])
        merged = self.overridden(dict(config), overrides)
        _, text = text_of(merged)
        model_type = text.get("model_type") if isinstance(text.get("model_type"), str) else merged.get("model_type")
        filled = with_class_defaults(dict(text))
        refused = self.load_refusal(merged, filled, model_type if isinstance(model_type, str) else None)
        if refused is not None:
            return self.refusal(args, refused)
        served, refused = self.context(merged, filled, flags, env)
        refused = refused or self.build_refusal(text_of(merged)[1])
        merged = self.loaded(merged)
        if refused is not None:
            return EngineRun(self, args, None, None, refused)
        plan = plan_of_config(merged, f"{self.title} {args}".strip())
        if overrides:
            plan = replace(plan, groups=tuple(g.replaced(sources=overridden_sources(g.sources, self.override_flag, overrides))
                                              for g in plan.groups))
        context = Context(merged, filled, rope_dict(filled), model_type, flags, env, served, plan)
        groups, departures = [], list(self.override_departures(config, overrides))
        rules = () if self.transformers_backend(merged) else self.rules
        for group in plan.groups:
            for rule in rules:
                group, departure = rule(context, group)
                if departure is not None and departure not in departures:
                    departures.append(replace(departure, layers=group.layers_text()) if departure.layers == "all"
                                      and len(plan.groups) > 1 else departure)
            groups.append(group)
        built = replace(plan, groups=tuple(groups), source=f"{self.title} {self.version}" + (f" {args}" if args else ""))
        if self.measured and rules and model_type not in self.measured:
            from pecli.engines.served import UNMEASURED

            departures.append(Departure(
                UNMEASURED, f"pecli has not run {self.title} {self.version}'s model file for model type "
                f"{model_type} against its fixtures: it assumes that file computes positions as transformers does, and "
                "cannot be sure", beyond_numbers=True))
        declared = declared_context(filled)
        if served is not None and declared is not None and served != declared:
            departures.append(self.served_departure(context, served, declared))
        rows = self.cache_rows(context, groups)
        if rows is not None and served is not None and served > rows:
            departures.append(Departure("cos/sin cache", f"holds {rows:,} positions and serves {served:,}: positions from "
                                        f"{rows:,} on {self.past_cache}",
                                        f"give {self.length_flag} {rows:,}" if self.length_flag else None))
        return EngineRun(self, args, built, served, None, tuple(departures), positions_of(built), cache_rows=rows)

    def served_departure(self, context: Context, served: int, declared: int) -> Departure:
        asked = context.flags.get(self.length_flag) if self.length_flag else None
        if asked is not None and asked > 0:
            return Departure("served context", f"serves {served:,} tokens ({self.length_flag} {asked:,}) where the "
                             f"config declares {declared:,}", f"give {self.length_flag} {declared:,}")
        return Departure("served context", f"serves {served:,} tokens by default where the config declares {declared:,}",
                         f"give {self.length_flag} {declared:,}" if self.length_flag else None)


#: Fields transformers 5's strict config dataclasses type-check at load (an engine loading the config through
#: them fails): {model types: {field: type}}. Llama 4 Scout's published text_config has attn_temperature_tuning 4.
STRICT_FIELDS = {("llama4", "llama4_text"): {"attn_temperature_tuning": bool}}


def transformers_refusal(config: Mapping[str, Any], model_type: str | None) -> str | None:
    """The error transformers' config class raises loading ``config``, for the fields of :data:`STRICT_FIELDS`."""
    _, text = text_of(config)
    for types, fields in STRICT_FIELDS.items():
        if model_type in types or config.get("model_type") in types:
            for name, kind in fields.items():
                value = text.get(name)
                if value is not None and type(value) is not kind:
                    return (f"StrictDataclassFieldValidationError: Validation error for field '{name}': Field '{name}' "
                            f"expected {kind.__name__}, got {type(value).__name__} (value: {value!r})")
    return None


#: The keys an engine derives its context from (vLLM reads them all: the smallest present wins,
#: ``model_max_length`` over all; SGLang the first present of a few of them).
DERIVED_LENGTH_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                       "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len")
#: Keys an override may set only to a positive whole number: those lengths and the scaling's original one.
LENGTH_KEYS = (*DERIVED_LENGTH_KEYS, "original_max_position_embeddings")
#: Keys an override may set only to a mapping (or null: no scaling).
BLOCK_KEYS = ("rope_scaling", "rope_parameters")
#: Keys of a rope dict (or the config) an override may set only to a number.
NUMBER_KEYS = ("factor", "rope_theta", "attention_factor", "attn_factor", "beta_fast", "beta_slow", "mscale",
               "mscale_all_dim", "low_freq_factor", "high_freq_factor", "partial_rotary_factor", "rotary_emb_base",
               "rotary_pct")
#: Keys an override may set only to a string.
WORD_KEYS = ("model_type", "rope_type", "type")


def check_overrides(flag: str | None, overrides: Mapping[str, Any], where: str = "") -> None:
    """An override of a length that is not a positive whole number, of a rope block that is not a mapping, of a
    number or a name by something else is refused naming the flag (the engine would fail on it, or read it
    otherwise than transformers); ``flag`` None: the config's own keys (a config the engines' rules read)."""
    said = (lambda name, value: f"{flag} sets {name} to {excerpt(value)}") if flag else \
        (lambda name, value: f"{name} is {excerpt(value)} in the config")
    key_name = "args" if flag else "hf_config"
    for key, value in overrides.items():
        name = f"{where}{key}"
        if value is None and not flag:
            continue
        if key in LENGTH_KEYS and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ConfigError(key_name, f"{said(name, value)}: give a positive whole number")
        if key in BLOCK_KEYS and value is not None and not isinstance(value, dict):
            raise ConfigError(key_name, f"{said(name, value)}: give a mapping (a JSON object) or null")
        if key in NUMBER_KEYS and value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ConfigError(key_name, f"{said(name, value)}: give a number")
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > sys.float_info.max:
            raise ConfigError(key_name, f"{said(name, value)}: give a number a float64 holds")
        if key in WORD_KEYS and not isinstance(value, str):
            raise ConfigError(key_name, f"{said(name, value)}: give a name (a JSON string)")
        if isinstance(value, dict) and (key.endswith("_config") or key in BLOCK_KEYS):
            check_overrides(flag, value, f"{name}.")


#: Model types built by vLLM's and SGLang's ``deepseek_v2.py``, which turn any rope type into DeepSeek YaRN.
DEEPSEEK_MODELS = ("deepseek_v2", "deepseek_v3", "kimi_k2", "deepseek_v32")


def _deepseek_number(block: Mapping[str, Any], key: str, default: Any) -> float:
    """``block[key]`` as DeepSeek's model file reads it, ``float(value)``: a null or a word fails there (TypeError)."""
    value = block.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError("hf_config", f"rope_scaling.{key} is {excerpt(value)}: DeepSeek's model file reads it as a "
                          "number (float() fails on it, and the engine with it)")
    return float(value)


def deepseek_rule(llama_scaling: bool, factor_default: float | None = None) -> Rule:
    """The rule of vLLM's (``llama_scaling``) and SGLang's ``deepseek_v2.py``: any rope type but default
    becomes DeepSeek YaRN (``DeepseekScalingRotaryEmbedding``: YaRN's ramp between the rounded correction
    dimensions, cos and sin × mscale(s, mscale)/mscale(s, mscale_all_dim), whatever ``attention_factor``
    says; the softmax × mscale(s, mscale_all_dim)², as transformers'). vLLM 0.33 (deepseek_v2.py:542-563)
    calls a block with ``attention_factor`` 1.0 ``deepseek_llama_scaling``: the same rotary module, and no
    mscale² on the softmax. ``factor_default``: the factor a block without ``factor`` gets (SGLang: 1.0, with the
    model's ``max_position_embeddings`` as the original length, factory.py:371-378, and 1.0 in its softmax's
    mscale, model_config.py:2642-2648); None: such a block fails as vLLM's ``rope_scaling["factor"]`` does."""

    def rule(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
        if context.model_type not in DEEPSEEK_MODELS or not rope_group(group) or not scaling_record(group).scales:
            return group, None
        from pecli.models.logit_scale import UNSCALED
        from pecli.models.rope_facts import scheme_of
        from pecli.schemes.scaling.yarn import yarn_get_mscale

        block = {**(context.block or {}), **scaling_of(group)}  # the attention's keys (mscale_all_dim) too
        kind = scaling_word(group)
        is_yarn = scaling_record(group) is YARN
        unfactored = factor_default is not None and "factor" not in (context.block or {})
        factor = float(factor_default) if unfactored else _deepseek_number(block, "factor", None)
        original = int(block.get("original_max_position_embeddings") or group.options.get("max_position_embeddings"))
        magnitude = yarn_get_mscale(factor, _deepseek_number(block, "mscale", 1)) / \
            yarn_get_mscale(factor, _deepseek_number(block, "mscale_all_dim", 0))
        yarn = {"rope_type": YARN.hf_name, "factor": factor, "original_max_position_embeddings": original,
                "beta_fast": _deepseek_number(block, "beta_fast", 32), "beta_slow": _deepseek_number(block, "beta_slow", 1),
                "attention_factor": magnitude}
        llama = llama_scaling and block.get("attention_factor") == 1.0
        built = engine_built(group, {"rope_scaling": yarn}, f"DeepSeek YaRN in place of {kind}" if not is_yarn else None,
                             by="DeepSeek's model file (deepseek_v2.py): DeepSeek YaRN").replaced(
            attention_scale=UNSCALED if llama or unfactored else group.attention_scale)
        if unfactored:
            return built, Departure(
                "rope type", f"DeepSeek's model builds its DeepSeek YaRN from the {kind} block, which gives no factor: "
                f"factor {factor:g} (plain RoPE at the base, no mscale on the softmax), not {kind}'s frequencies",
                "give DeepSeek a yarn block with its factor")
        if not is_yarn:
            return built, Departure(
                "rope type", f"DeepSeek's model builds its DeepSeek YaRN (×{factor:g} from {original:,}) from the "
                f"{kind} block, not {kind}'s frequencies", "give DeepSeek a yarn block (rope_type yarn): its DeepSeek "
                "model builds no other scaling")
        said = float(scheme_of(group).attention_scaling)
        effects = []
        if abs(said - magnitude) > 1e-9 * max(1.0, abs(said)):
            effects.append(f"puts mscale(s, mscale)/mscale(s, mscale_all_dim) = {magnitude:.6g} on cos and sin, where "
                           f"the model's attention_factor gives {said:.6g} (its DeepSeek model does not read "
                           "attention_factor)")
        if llama and not group.attention_scale.is_unit:
            effects.append("builds deepseek_llama_scaling (attention_factor 1.0): no mscale(s, mscale_all_dim)² on "
                           f"the softmax, where transformers' attention applies {group.attention_scale.text()}")
        if not effects:
            return group, None
        return built, Departure("DeepSeek YaRN", "; ".join(effects), None)

    return rule


#: SGLang's DeepSeek rule (its ``deepseek_v2.py`` has no ``deepseek_llama_scaling``).
sglang_deepseek = deepseek_rule(llama_scaling=False, factor_default=1.0)


def gptj_theta(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """vLLM's and SGLang's ``gpt_j.py`` rotate at the config's ``rope_theta`` where it has one (vLLM through its
    ``rope_parameters``, SGLang ``getattr(config, "rope_theta", 10000)``); transformers' GPT-J always uses
    10,000 (``create_sinusoidal_positions``)."""
    theta = context.text.get("rope_theta") if isinstance(context.text.get("rope_theta"), (int, float)) else None
    if context.model_type != "gptj" or theta is None or isinstance(theta, bool) or not rope_group(group):
        return group, None
    built = engine_built(group, {"base": float(theta)}, "GPT-J at the config's rope_theta")
    if float(group.options.get("base", 10000.0)) == float(theta):
        return built, None
    return built, Departure("base", f"its GPT-J model file rotates at the config's rope_theta {float(theta):g}, where "
                            f"transformers' GPT-J uses {float(group.options.get('base', 10000.0)):g}",
                            "remove rope_theta from config.json")


def overridden_sources(sources: tuple[Source, ...], flag: str, overrides: Mapping[str, Any]) -> tuple[Source, ...]:
    """``sources`` of a group read from a config the engine's override ``flag`` changed: a config key the flag
    gives (at any depth of ``overrides``) came from the flag (:attr:`Origin.ENGINE_FLAG`, ``--hf-overrides rope_theta``)."""
    given: set[str] = set()
    pending = [overrides]
    while pending:
        level = pending.pop()
        given.update(str(key) for key in level)
        pending += [value for value in level.values() if isinstance(value, Mapping)]
    return tuple(replace(source, key=f"{flag} {source.key}", origin=Origin.ENGINE_FLAG)
                 if source.origin is Origin.CONFIG and source.key.rpartition(".")[2] in given else source
                 for source in sources)


# -- rule helpers ---------------------------------------------------------------------------------------------
def rope_group(group: LayerGroup) -> bool:
    """Whether the group's layers apply 1-D RoPE (the rules act on those)."""
    return group.scalable


def engine_built(group: LayerGroup, changes: Mapping[str, Any], note: str | None, by: str | None = None) -> LayerGroup:
    """``group`` as the engine's model file builds it: ``changes`` over its settings, through its scheme, each
    changed setting recorded as the engine's code's (:func:`pecli.models.group_change.changed`; ``by``: what
    its sources name, default the note)."""
    from pecli.models.group_change import changed

    return changed(group, changes, by=by or note or group.note, origin=Origin.MODEL_CODE, note=note)


def scaling_of(group: LayerGroup) -> dict[str, Any]:
    """The group's scaling block as its options hold it (``{}``: none), for the values of its keys."""
    return dict((group.options or {}).get("rope_scaling") or {})


def scaling_record(group: LayerGroup) -> ScalingType:
    """The record of the group's scaling as its scheme holds it (typed: a legacy ``su`` is longrope), which the
    rules ask what the type is (:data:`~pecli.schemes.scaling.unscaled.NO_SCALING` without one)."""
    scaling = getattr(group.encoding, "rope_scaling", None) if rope_group(group) else None
    return NO_SCALING if scaling is None else scaling.record


def scaling_word(group: LayerGroup) -> str:
    """The rope type the group's block names as written (``default`` without one), for messages."""
    return rope_type(scaling_of(group))


__all__ = ["ConfigEngine", "Context", "Rule", "deepseek_rule", "engine_built", "gptj_theta", "rope_group", "scaling_of",
           "scaling_record", "scaling_word", "sglang_deepseek"]
