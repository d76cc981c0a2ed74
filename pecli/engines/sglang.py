"""SGLang 0.5.23, as its own code computes positions, run on transformers 5 (measured:
``tests/fixtures/engines/sglang/``).

Flags: ``--json-model-override-args JSON`` and ``--context-length N`` (argparse ``type=int``); the
environment variable ``SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN``.

- The overrides (``sglang/srt/utils/hf_transformers/config.py``): a sub-config is updated key by key, a
  ``rope_scaling``/``rope_parameters`` dict merged into the model's (``{**current, **value}``), any other
  key set.
- The context (``get_context_length``, ``sglang/srt/utils/hf_transformers/common.py``): the first of
  ``max_sequence_length``, ``seq_length``, ``max_seq_len``, ``model_max_length``,
  ``max_position_embeddings`` (2,048 when none) times the block's ``factor``, except when the block holds
  ``original_max_position_embeddings`` (which transformers 5 writes into every llama3, yarn and longrope
  block) or is llama3. ``--context-length`` above it is refused (``ModelConfig._derive_context_length``)
  unless ``SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1``.
- A config that names no ``architectures`` is refused (``ModelConfig`` reads ``hf_config.architectures[0]``,
  model_config.py:699: a TypeError for none, an IndexError for ``[]``).
- Rotary modules (``sglang/srt/layers/rotary_embedding/``): dynamic NTK fixes the base once for
  L·s tokens, base·(s² − s + 1)^(r/(r−2)); StableLM's model file reads the rotary fraction as an attribute
  (``rope_pct``, ``partial_rotary_factor``) that transformers 5 keeps only inside ``rope_parameters``, so
  it rotates the whole head; Phi-2's and Persimmon's read it the same way without a default and fail.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from pecli.engines.base import Departure, Serving, attribute, json_object, python_int, rope_dict, rope_type
from pecli.engines.configured import (
    DEEPSEEK_MODELS, ConfigEngine, Context, engine_built, gptj_theta, rope_group, scaling_of, scaling_record, scaling_word,
    sglang_deepseek, transformers_refusal,
)
from pecli.engines.architectures import BACKEND_INCOMPATIBLE, architecture
from pecli.engines.sglang_models import NATIVE
from pecli.engines.vocabulary import hf_record
from pecli.errors import ConfigError
from pecli.models.plan import LayerGroup
from pecli.schemes.scaling.linear import LINEAR
from pecli.schemes.scaling.unscaled import NO_SCALING
from pecli.schemes.scaling.yarn import YARN

VERSION = "0.5.23"
ALLOW_LONG = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"
#: ``is_in_ci()`` (sglang/utils.py:424) lifts the same check.
IN_CI = "SGLANG_IS_IN_CI"
#: Values its environment reads as true (srt/environ.py:143-147).
TRUE = ("1", "true", "yes", "y")
#: Model types whose SGLang model file never passes the rope dict's scaling to ``get_rope`` (mixtral.py:174,
#: starcoder2.py:103, gemma.py:130, gemma2.py:154, olmo.py:87, stablelm.py:146): plain RoPE at the base.
SCALING_NOT_PASSED = ("mixtral", "starcoder2", "gemma", "gemma2", "olmo", "stablelm")
#: Model types whose file passes ``base=int(rope_theta)`` (mixtral.py:216, starcoder2.py:108, llama4.py:218).
INTEGER_BASE = ("mixtral", "starcoder2", "llama4", "llama4_text")
#: The keys of the context, the first present winning.
CONTEXT_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length", "max_position_embeddings")
#: Model types whose SGLang model file looks for the rotary fraction as a config attribute with a default of
#: 1 (StableLM: ``getattr(config, "rope_pct", getattr(config, "partial_rotary_factor", 1))``).
WHOLE_HEAD_MODELS = ("stablelm",)
#: Model types whose SGLang model file reads ``config.partial_rotary_factor`` without a default: an
#: AttributeError under transformers 5, which keeps it inside ``rope_parameters``.
ATTRIBUTE_CRASH = {"phi": "PhiConfig", "persimmon": "PersimmonConfig"}
#: Keys of the rope dict a model file reads itself, besides ``get_rope``: Ministral 3's query scaling
#: (ministral3.py:61, ``config.rope_parameters.get("llama_4_scaling_beta")``).
ROPE_DICT_READ_BY_FILE = {"ministral3": {"llama_4_scaling_beta"}}
#: The model types whose model files the fixtures measured (``tests/fixtures/engines/sglang/``, held equal to them by
#: ``tests/test_engines_fixtures.py``): for another, pecli says it cannot be sure.
MEASURED_TYPES = frozenset({'apertus', 'arcee', 'cohere', 'cohere2', 'deepseek_v2', 'deepseek_v3', 'ernie4_5_moe',
                            'exaone4', 'gemma', 'gemma2', 'gemma3_text', 'glm4', 'glm4_moe', 'gpt2', 'gpt_oss',
                            'gptj', 'granite', 'llama', 'llama4_text', 'minicpm3', 'minimax_m2', 'ministral3',
                            'mistral', 'mixtral', 'olmo', 'olmo2', 'olmoe', 'opt', 'phi3', 'qwen2', 'qwen2_moe',
                            'qwen2_vl', 'qwen2_vl_text', 'qwen3', 'qwen3_moe', 'stablelm', 'starcoder2', 'whisper'})


#: Model types whose SGLang model file rotates halves (``is_neox_style=True``, llama4.py:284) where the
#: checkpoint's pairs are adjacent; the multimodal model permutes q and k at load (mllama4.py:606,
#: ``permute_qk_weight_for_rotary``), the text-only one does not.
NEOX_MODELS = ("llama4", "llama4_text")
PERMUTING_ARCHITECTURES = ("Llama4ForConditionalGeneration",)


def native(context: Context) -> bool:
    """Whether SGLang runs the model with its own model file (else transformers' code: transformers' numbers)."""
    return architecture(context.config) in NATIVE


def context_length(text: str) -> int:
    """``--context-length`` as argparse's ``type=int`` reads it, a positive number of tokens."""
    value = python_int(text)
    if value < 1:
        raise ValueError(f"takes a positive number of tokens, got {text!r}")
    return value


def neox_layout(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """Llama 4's SGLang file rotates halves; its text-only architecture does not permute q and k to match."""
    if context.model_type not in NEOX_MODELS or not native(context) or not rope_group(group) or \
            group.options.get("layout") != "interleaved" or architecture(context.config) in PERMUTING_ARCHITECTURES:
        return group, None
    return engine_built(group, {"layout": "half"}, "SGLang: rotate_half pairs"), Departure(
        "layout", "rotates pairs (i, i + d/2) where the checkpoint's adjacent pairs (2i, 2i + 1) were trained, and "
        "this architecture does not permute q and k at load", f"load it as {PERMUTING_ARCHITECTURES[0]}")


def scaling_not_passed(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """Mixtral, Starcoder2, Gemma, Gemma 2, OLMo, StableLM: the file builds plain RoPE at the base."""
    if context.model_type not in SCALING_NOT_PASSED or not native(context) or not rope_group(group) or \
            not scaling_record(group).scales:
        return group, None
    kind = scaling_word(group)
    return engine_built(group, {"rope_scaling": None}, "SGLang: no scaling"), Departure(
        "scaling", f"its model file never passes the {kind} scaling to its rotary module: plain RoPE at the base", None)


def integer_base(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """Mixtral, Starcoder2, Llama 4: ``base=int(rope_theta)``."""
    if context.model_type not in INTEGER_BASE or not native(context) or not rope_group(group):
        return group, None
    base = float(group.options["base"])
    if base.is_integer():
        return group, None
    return engine_built(group, {"base": float(int(base))}, "SGLang: the base truncated"), Departure(
        "base", f"truncates the base {base:g} to {int(base)} (base=int(rope_theta))", "give an integer rope_theta")


def yarn_attention(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """``YaRNScalingRotaryEmbedding`` (yarn.py:122-131): cos and sin × mscale(s, mscale)/mscale(s, mscale_all_dim)
    when both keys are given, else 0.1 ln s + 1, times ``attn_factor``; transformers 5's ``attention_factor`` is
    not read (factory.py:320-331)."""
    if not rope_group(group) or scaling_record(group) is not YARN or not native(context) or context.model_type in DEEPSEEK_MODELS:
        return group, None
    from pecli.schemes.scaling.yarn import yarn_get_mscale

    block = scaling_of(group)
    given = block.get("attention_factor")
    if given is None:
        return group, None
    factor = float(block["factor"])
    if block.get("mscale") is not None and block.get("mscale_all_dim") is not None:
        built = yarn_get_mscale(factor, float(block["mscale"])) / yarn_get_mscale(factor, float(block["mscale_all_dim"]))
    else:
        built = yarn_get_mscale(factor)
    built *= float(block.get("attn_factor", 1.0))
    if math.isclose(built, float(given), rel_tol=1e-9):
        return group, None
    return engine_built(group, {"rope_scaling": {**block, "attention_factor": built}},
                        "SGLang: YaRN's magnitude without attention_factor"), Departure(
        "attention factor", f"puts {built:.6g} on cos and sin: it does not read attention_factor ({float(given):g}), "
        "only attn_factor", "give attn_factor (the ratio you want to 0.1 ln s + 1) in the rope dict")


def dynamic_at_scaled_length(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """``DynamicNTKScalingRotaryEmbedding``: the base computed once for L·s tokens, base·(s² − s + 1)^(r/(r−2))."""
    if not rope_group(group) or not scaling_record(group).grows_base or not native(context):
        return group, None
    options = dict(group.options)
    factor = float(options["rope_scaling"]["factor"])
    dim = int(options["dim"] * options.get("partial_rotary_factor", 1.0))
    if not options.get("max_position_embeddings"):  # the model file's own default then: not measured
        return group, Departure("dynamic NTK", "computes the base once, for a max_position the config does not give "
                                "(its model file's default): pecli cannot be sure of it", None)
    longest = int(options["max_position_embeddings"])
    base = float(options["base"]) * (factor * factor - (factor - 1)) ** (dim / (dim - 2))
    return engine_built(group, {"rope_scaling": None, "base": base}, "SGLang: dynamic NTK at a fixed base"), Departure(
        "dynamic NTK", f"computes the base once for {int(longest * factor):,} tokens ({base:g}) and uses it at every "
        f"length, where transformers keeps the plain base up to {longest:,} tokens and raises it with the sequence past them",
        None)


def whole_head(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """StableLM under transformers 5: SGLang's model rotates the whole head."""
    if context.model_type not in WHOLE_HEAD_MODELS or not rope_group(group) or not native(context):
        return group, None
    fraction = float(group.options.get("partial_rotary_factor", 1.0))
    if fraction == 1.0:
        return group, None
    dim = int(group.options["dim"])
    return engine_built(group, {"partial_rotary_factor": None}, "SGLang: the whole head rotates"), Departure(
        "rotated components", f"rotates all {dim} components of each head where the model rotates "
        f"{int(dim * fraction)} (its model file reads the fraction as a config attribute that transformers 5 keeps "
        "only inside rope_parameters)", None)


#: Model files that pass ``get_rope`` a length of their own rather than ``max_position_embeddings``: (the config
#: attribute, its default). ministral3.py:113-130: ``getattr(config, "original_max_position_embeddings", 16384)``.
MAX_POSITION_PASSED = {"ministral3": ("original_max_position_embeddings", 16384)}


def max_position_passed(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """The length :data:`MAX_POSITION_PASSED` files give their rotary module, which a scaling reads (LongRoPE's
    magnitude, dynamic NTK's base, linear's cos/sin cache rows)."""
    passed = MAX_POSITION_PASSED.get(context.model_type)
    record = scaling_record(group)
    if passed is None or not rope_group(group) or not (record.per_pair_factors or record.grows_base or record is LINEAR):
        return group, None  # YaRN and llama3 read their original length from the block
    key, default = passed
    value = context.text.get(key)
    value = value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default
    longest = group.options.get("max_position_embeddings")
    if value == longest:
        return group, None
    return engine_built(group, {"max_position_embeddings": value}, f"SGLang: {context.model_type}'s own max_position"), \
        Departure("max position", f"its model file builds the rotary module for {value:,} positions (the config's "
                  f"top-level {key}, else {default:,}), not max_position_embeddings {longest}: the scaling's numbers that "
                  "read it (LongRoPE's magnitude, dynamic NTK's base, the cos/sin cache) follow", None)


def olmo2_sliding_default(config: Mapping[str, Any], text: Mapping[str, Any]) -> bool:
    """Whether SGLang's ``olmo2.py`` builds plain RoPE on some layers of this OLMo 2 config: its layers that
    ``layer_types`` calls ``sliding_attention`` (with a ``sliding_window``) get a rope dict of no scaling
    (olmo2.py:125-137), where transformers' OLMo 2 reads no ``layer_types``."""
    kinds = text.get("layer_types")
    block = rope_dict(text)
    return text.get("model_type") == "olmo2" and architecture(config) in NATIVE and isinstance(kinds, list) and \
        "sliding_attention" in kinds and text.get("sliding_window") is not None and hf_record(rope_type(block)) is not NO_SCALING


def olmo2_per_type(text: Mapping[str, Any]) -> dict[str, Any]:
    """The OLMo 2 text keys with its rope dict per layer type, as SGLang's olmo2.py builds it."""
    block = dict(rope_dict(text) or {})
    # get_rope_config's default base, 10,000 (utils/hf_transformers/common.py:515-517)
    theta = block.pop("rope_theta", None) or text.get("rope_theta") or 10000.0
    out = {k: v for k, v in text.items() if k not in ("rope_scaling", "rope_parameters", "rope_theta")}
    out["rope_parameters"] = {"full_attention": {**block, "rope_theta": theta},
                              "sliding_attention": {"rope_type": NO_SCALING.hf_name, "rope_theta": theta}}
    return out


@dataclass(frozen=True)
class Sglang(ConfigEngine):
    """SGLang (see the module)."""

    def overridden(self, config: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(config)
        for key, value in overrides.items():
            current = out.get(key)
            if isinstance(value, dict) and isinstance(current, dict) and key.endswith("_config"):
                out[key] = {**current, **value}
            elif key in ("rope_scaling", "rope_parameters") and isinstance(value, dict):
                held = next((k for k in ("rope_parameters", "rope_scaling") if isinstance(out.get(k), dict)), None)
                if held is None:
                    out[key] = value
                else:
                    out[held] = {**out[held], **value}
            else:
                out[key] = value
        return out

    def build_refusal(self, text: Mapping[str, Any]) -> str | None:
        """``Phi3LongRoPEScaledRotaryEmbedding`` refuses ``is_neox_style=False``: a longrope block on a model whose
        own file rotates interleaved pairs (the model's layout; Llama 4's file rotates halves, DeepSeek's builds
        its own YaRN, and the files of :data:`SCALING_NOT_PASSED` never build the block)."""
        from pecli.models.sources.config_json import plan_of_config
        from pecli.schemes.scaling.longrope import LONGROPE

        model_type = text.get("model_type")
        if hf_record(rope_type(rope_dict(text))) is not LONGROPE or model_type in NEOX_MODELS + SCALING_NOT_PASSED + DEEPSEEK_MODELS or \
                architecture(text) not in NATIVE:
            return None
        try:
            plan = plan_of_config(dict(text), "SGLang")
        except ConfigError:
            return None
        if any(g.options is not None and g.options.get("layout") == "interleaved" for g in plan.groups):
            return "ValueError: `Phi3LongRoPEScaledRotaryEmbedding` only supports neox_style."
        return None

    def load_refusal(self, config: dict[str, Any], text: dict[str, Any], model_type: str | None) -> str | None:
        found = transformers_refusal(config, model_type)
        if found is not None:
            return found
        named = config.get("architectures")
        if named is None:  # ModelConfig indexes hf_config.architectures[0] (model_config.py:699)
            return "TypeError: 'NoneType' object is not subscriptable"
        if isinstance(named, list) and not named:
            return "IndexError: list index out of range"
        arch = architecture(config)
        if arch is not None and arch not in NATIVE and arch in BACKEND_INCOMPATIBLE:
            return (f"ValueError: {arch} has no SGlang implementation and the Transformers implementation is not "
                    "compatible with SGLang.")
        if arch is not None and arch not in NATIVE:
            return None  # its Transformers backend: transformers' code
        if model_type in ATTRIBUTE_CRASH:
            return f"AttributeError: '{ATTRIBUTE_CRASH[model_type]}' object has no attribute 'partial_rotary_factor'"
        return None

    def permutes_rotary_weights(self, config: Mapping[str, Any]) -> bool:
        return architecture(config) in PERMUTING_ARCHITECTURES

    def loaded(self, config: dict[str, Any]) -> dict[str, Any]:
        """The rope dict as ``get_rope`` reads it: the keys of its type (a merged override leaves the model's
        other keys in the dict, which it does not read); Llama 4's file (llama4.py:384-396) fixes its NoPE
        layers, ``(layer_id + 1) % 4 == 0``, whatever ``no_rope_layers`` says."""
        from pecli.engines.base import text_of, with_text
        from pecli.models.families.rope import keys_of_type

        path, text = text_of(config)
        for key in ("rope_scaling", "rope_parameters"):
            block = text.get(key)
            if isinstance(block, dict) and rope_type(block) == DEEPSEEK_YARN:
                block = deepseek_yarn_as_yarn(block, text.get("max_position_embeddings"))
                text = {**text, key: block}
            if isinstance(block, dict) and block and not any(isinstance(v, dict) for v in block.values()):
                taken = set(keys_of_type(rope_type(block))) | {
                    "rope_type", "type", "rope_theta", "partial_rotary_factor", "mrope_section", "mrope_interleaved"}
                if text.get("model_type") in DEEPSEEK_MODELS:  # its attention reads them (compute_mla_mscale_scaling)
                    taken |= {"mscale", "mscale_all_dim"}
                taken |= ROPE_DICT_READ_BY_FILE.get(text.get("model_type"), set())
                text = {**text, key: {k: v for k, v in block.items() if k in taken}}
        config = with_text(config, path, text)
        if olmo2_sliding_default(config, text):
            return with_text(config, path, olmo2_per_type(text))
        if text.get("model_type") not in NEOX_MODELS or architecture(config) not in NATIVE:
            return config
        count = text.get("num_hidden_layers")
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            return config
        return with_text(config, path, {**text, "no_rope_layers": [int((i + 1) % 4 != 0) for i in range(count)]})

    def transformers_backend(self, config: Mapping[str, Any]) -> bool:
        """An architecture without an SGLang model file runs on its Transformers backend (transformers' numbers)."""
        arch = architecture(config)
        return arch is not None and arch not in NATIVE

    def override_departures(self, config: Mapping[str, Any], overrides: Mapping[str, Any]) -> list[Departure]:
        from pecli.engines.base import text_of

        merged = self.overridden(dict(config), overrides)
        if olmo2_sliding_default(merged, text_of(merged)[1]):
            kind = rope_type(rope_dict(text_of(merged)[1]))
            return [Departure("scaling on sliding layers", f"its OLMo 2 model file (olmo2.py:125-137) builds plain RoPE "
                              f"on the layers layer_types calls sliding_attention and {kind} on the others, where "
                              f"transformers' OLMo 2 reads no layer_types and applies {kind} on every layer",
                              "remove layer_types (or sliding_window) from config.json")]
        text = text_of(config)[1]
        given, count = text.get("no_rope_layers"), text.get("num_hidden_layers")
        if text.get("model_type") in NEOX_MODELS and isinstance(given, list) and given and isinstance(count, int) and \
                architecture(config) in NATIVE and given[:count] != [int((i + 1) % 4 != 0) for i in range(count)]:
            return [Departure("NoPE layers", "its Llama 4 model file skips RoPE on every 4th layer whatever "
                              "no_rope_layers says (llama4.py: (layer_id + 1) % 4)", None)]
        return []

    def cache_rows(self, context: Context, groups: list[LayerGroup]) -> int | None:
        """Linear and dynamic: ``reserve_rope_cache_for_long_sequences`` extends the cache past mpe × factor with
        the base class's rows (unscaled base, undivided positions: plain RoPE), base.py:281-291."""
        rows = [int(g.options.get("max_position_embeddings") or 0) * float(scaling_of(g)["factor"])
                for g in groups if rope_group(g) and scaling_record(g) is LINEAR]
        # dynamic_at_scaled_length left the group unscaled (the config's block grows its base)
        grown = context.block and native(context) and getattr(hf_record(rope_type(context.block)), "grows_base", False)
        rows += [int(g.options.get("max_position_embeddings") or 0) * float(context.block["factor"])
                 for g in groups if rope_group(g) and grown and not scaling_record(g).scales]
        rows = [int(r) for r in rows if math.isfinite(r)]
        return min(rows) if rows else None

    def context(self, config: dict[str, Any], text: dict[str, Any], flags: Mapping[str, Any],
                env: Mapping[str, str]) -> tuple[int | None, str | None]:
        try:
            derived = sglang_context_length(text)
        except OverflowError as error:
            return None, f"OverflowError: {error}"
        asked = flags.get("--context-length")
        if asked is None:
            return derived, None
        if asked > derived and not any(env.get(name, "").strip().lower() in TRUE for name in (ALLOW_LONG, IN_CI)):
            return None, (f"ValueError: Warning: User-specified context_length ({asked}) is greater than the derived "
                          f"context_length ({derived}). This may lead to incorrect model outputs or CUDA errors. Note "
                          "that the derived context_length may differ from max_position_embeddings in the model's "
                          f"config. To allow overriding this maximum, set the env var {ALLOW_LONG}=1")
        return asked, None

    def serving(self, base: Any, patch: Mapping[str, Any], target: int,
                config: Mapping[str, Any] | None = None) -> Serving:
        from pecli.engines.served import flag_serving

        return flag_serving(self, base, patch, target, config, _derived, ALLOW_LONG)


#: ``get_rope``'s word for DeepSeek's YaRN, which it builds for any model (factory.py:371).
DEEPSEEK_YARN = "deepseek_yarn"


def deepseek_yarn_as_yarn(block: Mapping[str, Any], max_position: Any) -> dict[str, Any]:
    """A ``deepseek_yarn`` rope dict as ``DeepseekScalingRotaryEmbedding`` builds it (factory.py:371-401,
    rope_variant.py:335-370): YaRN with the correction range rounded, ``factor`` 1.0 and the model's max_position as
    the original length where the dict leaves them out (``_get_rope_param``), cos and sin × mscale(s, ``mscale``)/
    mscale(s, ``mscale_all_dim``) × ``attn_factor``. A dict with an ``extrapolation_factor`` is left as it is (pecli's
    YaRN has none: the config is refused as pecli cannot say what SGLang builds)."""
    from pecli.schemes.scaling.yarn import yarn_get_mscale

    numbers = [block.get(k) for k in ("factor", "mscale", "mscale_all_dim", "attn_factor", "beta_fast", "beta_slow")]
    if "extrapolation_factor" in block or any(v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)))
                                              for v in numbers):
        return dict(block)
    factor = float(block.get("factor", 1.0))
    original = block.get("original_max_position_embeddings", max_position)
    magnitude = yarn_get_mscale(factor, float(block.get("mscale", 1))) / \
        yarn_get_mscale(factor, float(block.get("mscale_all_dim", 0))) * float(block.get("attn_factor", 1))
    built = {"rope_type": YARN.hf_name, "factor": factor, "beta_fast": float(block.get("beta_fast", 32)),
             "beta_slow": float(block.get("beta_slow", 1)), "attention_factor": magnitude}
    if original is not None:
        built["original_max_position_embeddings"] = original
    if block.get("rope_theta") is not None:
        built["rope_theta"] = block["rope_theta"]
    return built


def sglang_context_length(text: Mapping[str, Any]) -> int:
    """SGLang's derived context (see the module)."""
    block = rope_dict(text)
    factor = 1.0
    if block:
        factor = block.get("factor", 1) or 1
        # SGLang itself checks llama3 (common.py:685); transformers 5 writes the original length into the block
        # of every type that starts from it
        if "original_max_position_embeddings" in block or getattr(hf_record(rope_type(block)), "from_original_length", False):
            factor = 1
    for key in CONTEXT_KEYS:
        value = attribute(text, key)
        if value is not None and not isinstance(value, bool) and isinstance(value, (int, float)):
            length = float(factor) * value
            if not math.isfinite(length):
                raise OverflowError("cannot convert float infinity to integer")
            return int(length)
    return 2048


def _derived(max_position_embeddings: int, block: Any) -> int:
    text: dict[str, Any] = {"max_position_embeddings": max_position_embeddings}
    if block:
        text["rope_scaling"] = dict(block)
    return sglang_context_length(text)


ENGINE = Sglang(
    "sglang", "SGLang", VERSION, "sglang/srt/utils/hf_transformers/common.py (get_context_length), "
    "sglang/srt/configs/model_config.py, sglang/srt/layers/rotary_embedding/",
    flags={"--json-model-override-args": json_object, "--context-length": context_length},
    env=(ALLOW_LONG, IN_CI), measured=MEASURED_TYPES, rules=(sglang_deepseek, gptj_theta, max_position_passed, scaling_not_passed, integer_base, neox_layout, yarn_attention,
                                    dynamic_at_scaled_length, whole_head),
    past_cache="get plain RoPE (its cache extension uses the unscaled base and undivided positions)", override_flag="--json-model-override-args",
    length_flag="--context-length",
)
