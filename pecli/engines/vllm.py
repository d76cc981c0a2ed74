"""vLLM 0.33.0, as its own code computes positions (measured: ``tests/fixtures/engines/vllm/``).

Flags: ``--hf-overrides JSON`` and ``--max-model-len N`` (``vllm/engine/arg_utils.py``; N read by
``human_readable_int_or_auto``: ``1k`` is 1,000, ``1K`` 1,024, ``-1``/``auto`` the derived length); the
environment variable ``VLLM_ALLOW_LONG_MAX_MODEL_LEN``.

- ``--hf-overrides``: a value that is not a dict is set on the config before it is standardised; a dict
  replaces the whole attribute after loading (``ModelConfig._apply_dict_overrides``: a sub-config is
  updated key by key, anything else ``setattr``), so ``{"rope_scaling": {…}}`` drops every key of the
  model's own block.
- The length (``vllm/config/model.py``, ``_get_and_verify_max_len``): the smallest of
  ``max_position_embeddings``, ``n_positions``, ``max_seq_len``, ``seq_length``, ``max_target_positions``,
  ``max_sequence_length``, ``max_seq_length``, ``seq_len`` (``model_max_length`` wins when set; 2,048
  when none), times ``factor`` for every rope type but ``su``, ``longrope``, ``llama3``, ``yarn``,
  ``deepseek_yarn`` and ``deepseek_llama_scaling``, and never for Gemma 3. Without ``--max-model-len``,
  a LongRoPE model serves its ``original_max_position_embeddings``. A longer ``--max-model-len`` is refused
  unless ``VLLM_ALLOW_LONG_MAX_MODEL_LEN=1``.
- Rotary modules (``vllm/model_executor/layers/rotary_embedding/``): LongRoPE picks its short or long
  factors once, long when ``max_model_len`` exceeds the original length; dynamic NTK fixes the base at
  base·(s·L/L_t − (s − 1))^(r/(r−2)) with L_t = ``max_trained_positions``, which defaults to L: the plain
  base; DeepSeek V2/V3's model (``deepseek_v2.py``) turns any rope type but ``default`` into its DeepSeek
  YaRN, cos and sin × mscale(s, mscale)/mscale(s, mscale_all_dim) whatever ``attention_factor`` says
  (``deepseek_llama_scaling`` when ``attention_factor`` is 1.0: no mscale(s, mscale_all_dim)² on the softmax).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping

from pecli.engines.architectures import BACKEND_INCOMPATIBLE, architecture
from pecli.engines.vllm_models import NATIVE, TRANSFORMERS_BACKEND
from pecli.engines.base import Departure, Serving, attribute, json_object, rope_dict, rope_type, text_of
from pecli.engines.configured import (
    DEEPSEEK_MODELS, DERIVED_LENGTH_KEYS, ConfigEngine, Context, deepseek_rule, engine_built, gptj_theta, rope_group,
    scaling_of, scaling_record, transformers_refusal,
)
from pecli.engines.vocabulary import Vocabulary, hf_record, looked_up
from pecli.errors import ConfigError
from pecli.models.plan import LayerGroup
from pecli.schemes.scaling.linear import LINEAR
from pecli.schemes.scaling.llama3 import LLAMA3
from pecli.schemes.scaling.longrope import LONGROPE
from pecli.schemes.scaling.ntk import DYNAMIC, NTK
from pecli.schemes.scaling.unscaled import NO_SCALING
from pecli.schemes.scaling.yarn import YARN

VERSION = "0.33.0"
#: vLLM's rope-type words that are not pecli's HF spellings (its vocabulary, one table), and where its code names them.
SU, DEEPSEEK_YARN, DEEPSEEK_LLAMA_SCALING = "su", "deepseek_yarn", "deepseek_llama_scaling"
WORDS = Vocabulary("vLLM", {
    SU: "config/model.py:2614 (the legacy spelling of longrope)",
    DEEPSEEK_YARN: "config/model.py:2618, model_executor/layers/rotary_embedding/__init__.py:284",
    DEEPSEEK_LLAMA_SCALING: "config/model.py:2619, model_executor/layers/rotary_embedding/__init__.py:284",
})
#: Rope types whose factor vLLM does not multiply into the derived length (config/model.py:2613-2620).
UNSCALED_TYPES = WORDS.types(SU, LONGROPE, LLAMA3, YARN, DEEPSEEK_YARN, DEEPSEEK_LLAMA_SCALING)
#: Model types whose factor vLLM never multiplies in ("gemma3" in the model type).
UNSCALED_MODELS = re.compile("gemma3")
#: Architectures vLLM 0.33 no longer implements, and the last version that did (``registry.py``:
#: ``_PREVIOUSLY_SUPPORTED_MODELS``); a config naming one is refused.
PREVIOUSLY_SUPPORTED = {
    "MotifForCausalLM": "0.10.2", "Phi3SmallForCausalLM": "0.9.2", "Phi4FlashForCausalLM": "0.10.2",
    "Phi4MultimodalForCausalLM": "0.12.0", "JAISLMHeadModel": "0.22.0", "ErnieModel": "0.23.0",
    "ErnieForSequenceClassification": "0.23.0", "ErnieForTokenClassification": "0.23.0",
    "InternLM2VEForCausalLM": "0.23.0", "QWenLMHeadModel": "0.23.0", "QwenVLForConditionalGeneration": "0.23.0",
    "InternLMForCausalLM": "0.23.0", "DonutForConditionalGeneration": "0.10.2", "MllamaForConditionalGeneration": "0.10.2",
    "XverseForCausalLM": "0.23.0", "Dots1ForCausalLM": "0.23.0", "BambaForCausalLM": "0.23.0",
    "MiniMaxForCausalLM": "0.23.0", "MiniMaxText01ForCausalLM": "0.23.0", "MiniMaxM1ForCausalLM": "0.23.0",
    "MiniMaxVL01ForConditionalGeneration": "0.23.0", "BaiChuanForCausalLM": "0.23.0", "BaichuanForCausalLM": "0.23.0",
    "AquilaModel": "0.24.0", "AquilaForCausalLM": "0.24.0", "Grok1ModelForCausalLM": "0.24.0",
    "Grok1ForCausalLM": "0.24.0", "TarsierForConditionalGeneration": "0.24.0", "Tarsier2ForConditionalGeneration": "0.23.0",
    "MantisForConditionalGeneration": "0.24.0", "MusicFlamingoForConditionalGeneration": "0.24.0",
    "AyaVisionForConditionalGeneration": "0.24.0", "TeleChatForCausalLM": "0.25.0", "PersimmonForCausalLM": "0.25.0",
    "FuyuForCausalLM": "0.25.0", "Plamo2ForCausalLM": "0.26.0", "OuroForCausalLM": "0.26.0",
    "ArcticForCausalLM": "0.28.0", "ChameleonForConditionalGeneration": "0.28.0", "Cheers": "0.28.0",
    "CheersForConditionalGeneration": "0.28.0", "Fairseq2LlamaForCausalLM": "0.28.0",
    "FireRedLIDForConditionalGeneration": "0.28.0", "GritLM": "0.28.0", "HCXVisionForCausalLM": "0.28.0",
    "MPTForCausalLM": "0.28.0", "MptForCausalLM": "0.28.0", "RWForCausalLM": "0.28.0",
    "StableLMEpochForCausalLM": "0.28.0", "PrithviGeoSpatialMAE": "0.28.0",
}
#: Model types whose vLLM model file permutes q and k at load (llama4.py:800, ``permute_qk_weight_for_rotary``), so
#: its rotate-half layout computes the checkpoint's interleaved pairs.
PERMUTING_MODELS = ("llama4", "llama4_text")
#: The base a model file sets where the rope dict has no ``rope_theta`` (``set_default_rope_theta``); 10,000
#: (``get_rope``'s default) for the others.
DEFAULT_THETA = {"qwen2": 1e6, "qwen3": 1e6, "exaone4": 1e6, "exaone_moe": 1e6, "falcon_h1": 1e11, "ernie4_5_moe": 5e5,
                 "ernie4_5_vl_moe": 5e5, "openpangu": 1e4}
#: The keys ``get_rope`` reads from the rope dict for each type, in its order (``rotary_embedding/__init__.py``:
#: 167, 188, 199, 243, 313; a legacy ``su`` block is read as longrope). (``original_max_position_embeddings`` is
#: not among them: transformers' standardisation fills it in.)
GET_ROPE_KEYS = ((WORDS.types(LINEAR), ("factor",)), (WORDS.types(NTK), ("factor",)), (WORDS.types(YARN), ("factor",)),
                 (WORDS.types(LLAMA3), ("factor", "low_freq_factor", "high_freq_factor")),
                 (WORDS.types(LONGROPE, SU), ("short_factor", "long_factor")))
#: Keys a flat override sets on the config and vLLM's standardisation then ignores where the loaded config
#: already holds them (``standardize_rope_params``: ``setdefault`` into ``rope_parameters``).
SHADOWED_KEYS = ("rope_theta", "partial_rotary_factor")
#: Model files that build their rope with ``is_neox_style`` True and set it False afterwards (ernie45.py:51).
NEOX_AT_BUILD = ("ernie4_5",)
#: Keys a model file indexes in the config's rope dict itself (KeyError without them), and whether it does so
#: without a scaling too: deepseek_v2.py:542-547 turns any type but default into deepseek_yarn, whose get_rope
#: branch reads the factor and the original length (rotary_embedding/__init__.py:284-286); gpt_oss.py:111-123
#: builds yarn from the config's keys whatever its type.
MODEL_ROPE_KEYS = {**{model: (False, ("factor", "original_max_position_embeddings")) for model in DEEPSEEK_MODELS},
                   "gpt_oss": (True, ("factor", "original_max_position_embeddings", "beta_fast", "beta_slow"))}
ALLOW_LONG = "VLLM_ALLOW_LONG_MAX_MODEL_LEN"
#: Marks a rope dict an override replaced, and through which attribute (read by the load and build steps).
REPLACED = "_vllm_replaced"
#: The model types whose model files the fixtures measured (``tests/fixtures/engines/vllm/``, held equal to them by
#: ``tests/test_engines_fixtures.py``): for another, pecli says it cannot be sure.
MEASURED_TYPES = frozenset({'bloom', 'cohere', 'cohere2', 'deepseek_v2', 'deepseek_v3', 'ernie4_5', 'ernie4_5_moe',
                            'exaone4', 'exaone_moe', 'falcon', 'falcon_h1', 'gemma', 'gemma2', 'gemma3_text',
                            'gemma4_text', 'glm4', 'glm4_moe', 'gpt2', 'gpt_oss', 'gptj', 'granite', 'granitemoe',
                            'llama', 'llama4_text', 'minicpm3', 'ministral3', 'mistral', 'mixtral', 'olmoe', 'opt',
                            'phi3', 'qwen2', 'qwen2_5_vl_text', 'qwen2_moe', 'qwen2_vl', 'qwen2_vl_text', 'qwen3',
                            'qwen3_moe', 'stablelm', 'whisper'})


def human_readable_int_or_auto(text: str) -> int:
    """``--max-model-len`` as vLLM reads it (``vllm/utils/argparse_utils.py``)."""
    value = text.strip()
    if value == "-1" or value.lower() == "auto":
        return -1
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgGtT])", value)
    if match:
        number, suffix = match.groups()
        if suffix in "kmgt":
            return int(float(number) * 10 ** (3 * ("kmgt".index(suffix) + 1)))
        try:
            return int(number) * 2 ** (10 * ("KMGT".index(suffix) + 1))
        except ValueError:
            raise ValueError(f"Decimals are not allowed with binary suffixes like {suffix}") from None
    try:
        parsed = int(value)
    except ValueError:
        raise ValueError(f"invalid human_readable_int_or_auto value: {text!r}") from None
    if parsed < 1:
        raise ValueError(f"takes a positive number of tokens (or -1, auto), got {text!r}")
    return parsed


# -- the rules ---------------------------------------------------------------------------------------------
def longrope_once(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """``Phi3LongRoPEScaledRotaryEmbedding``: long factors when max_model_len > original, else short, at
    every position; cos and sin × sqrt(1 + ln(L/L₀)/ln L₀) (L = max_position_embeddings)."""
    from pecli.schemes.scaling.longrope import longrope_attention_factor

    if not rope_group(group) or not scaling_record(group).per_pair_factors:
        return group, None
    block = scaling_of(group)
    original = int(block.get("original_max_position_embeddings") or group.options.get("max_position_embeddings"))
    longest = int(group.options.get("max_position_embeddings") or original)
    served = context.served or original
    long = served > original
    factors = block["long_factor" if long else "short_factor"]
    mscale = longrope_attention_factor(longest / original, original)
    chosen = {k: v for k, v in block.items() if k not in ("short_factor", "long_factor", "attention_factor", "factor")}
    chosen.update(short_factor=list(factors), long_factor=list(factors),
                  attention_factor=block.get("long_mscale" if long else "short_mscale") or mscale)
    which = "long" if long else "short"
    effect = (f"uses the {which} factors at every length (max_model_len {served:,} "
              f"{'>' if long else '≤'} original_max_position_embeddings {original:,}), where transformers switches "
              f"to the long ones past {original:,} tokens")
    remedy = (None if long else f"--max-model-len above {original:,} gives the long factors at every length: no "
              "setting gives transformers' switch")
    return engine_built(group, {"rope_scaling": chosen}, f"vLLM: LongRoPE {which} factors at every length"), \
        Departure("LongRoPE factors", effect, remedy)


def longrope_halves(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """ERNIE 4.5 (dense): its file sets ``is_neox_style`` False on the module ``get_rope`` built (ernie45.py:47-51),
    which ``Phi3LongRoPEScaledRotaryEmbedding.forward`` never reads (it always rotates halves, ``rotate_neox``):
    under a longrope block the checkpoint's adjacent pairs are rotated as pairs (i, i + d/2)."""
    if context.model_type not in NEOX_AT_BUILD or not rope_group(group) or not scaling_record(group).per_pair_factors \
            or group.options.get("layout") != "interleaved":
        return group, None
    return engine_built(group, {"layout": "half"}, "vLLM: LongRoPE rotates halves"), Departure(
        "layout", "its LongRoPE module rotates pairs (i, i + d/2) where the checkpoint's adjacent pairs (2i, 2i + 1) were "
        "trained (ernie45.py:51 sets is_neox_style False, which Phi3LongRoPEScaledRotaryEmbedding's forward does not "
        "read)", "give ERNIE 4.5 a scaling other than longrope on vLLM")


def gpt_oss_yarn(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """gpt_oss.py:111-127: its own rope dict, yarn with rope_theta, factor, original length, β and truncate only:
    no ``attention_factor``, so cos and sin × 0.1 ln s + 1."""
    if context.model_type != "gpt_oss" or not rope_group(group) or scaling_record(group) is not YARN:
        return group, None
    from pecli.schemes.scaling.yarn import yarn_get_mscale

    block = scaling_of(group)
    built = yarn_get_mscale(float(block["factor"]))
    given = block.get("attention_factor")
    if given is None or math.isclose(float(given), built, rel_tol=1e-9):
        return group, None
    return engine_built(group, {"rope_scaling": {**block, "attention_factor": built}},
                        "vLLM: gpt-oss's YaRN without attention_factor"), Departure(
        "attention factor", f"puts {built:.6g} on cos and sin: gpt-oss's model file does not pass attention_factor "
        f"({float(given):g})", None)


def dynamic_fixed(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """``DynamicNTKScalingRotaryEmbedding``: one base, base·(s·L/L_t − (s − 1))^(r/(r−2)), L_t =
    ``max_trained_positions`` (default L): the plain base unless the block says otherwise."""
    if not rope_group(group) or not scaling_record(group).grows_base:
        return group, None
    block = scaling_of(group)
    if "alpha" in block:
        return group, None
    options = dict(group.options)
    dim = int(options["dim"] * options.get("partial_rotary_factor", 1.0))
    if not options.get("max_position_embeddings"):  # the model file's own default then: not measured
        return group, Departure("dynamic NTK", "keeps one base at every length, computed from a max_position the "
                                "config does not give (its model file's default): pecli cannot be sure of it", None)
    longest = int(options["max_position_embeddings"])
    trained = int(block.get("max_trained_positions") or longest)
    factor = float(block["factor"])
    base = float(options["base"]) * (factor * longest / trained - (factor - 1)) ** (dim / (dim - 2))
    effect = (f"keeps one base ({base:g}) at every length, where transformers raises it with the sequence past "
              f"{longest:,} tokens (dynamic NTK ×{factor:g})")
    return engine_built(group, {"rope_scaling": None, "base": base}, "vLLM: dynamic NTK at a fixed base"), \
        Departure("dynamic NTK", effect, None)


def deepseek_yarn_as_yarn(block: Mapping[str, Any]) -> dict[str, Any]:
    """A ``deepseek_yarn`` rope dict as the YaRN ``get_rope`` builds from it on any model
    (``DeepseekScalingRotaryEmbedding``, rotary_embedding/__init__.py:284-310, deepseek_scaling_rope.py:52-55): the
    correction range rounded, cos and sin × mscale(s, ``mscale``)/mscale(s, ``mscale_all_dim``)."""
    from pecli.schemes.scaling.yarn import yarn_get_mscale

    factor = float(block["factor"])
    magnitude = yarn_get_mscale(factor, float(block.get("mscale", 1))) / \
        yarn_get_mscale(factor, float(block.get("mscale_all_dim", 0)))
    return {**{k: v for k, v in block.items() if k not in ("type", "rope_type", "truncate")},
            "rope_type": YARN.hf_name, "attention_factor": magnitude}


#: vLLM's suffix rule for an architecture its registry does not generate with (``config/model.py:2340-2357``,
#: ``_SUFFIX_TO_DEFAULTS``): these suffixes generate; any other ``…Model`` (and a classifier's) is an embedding model.
GENERATING_SUFFIXES = ("ForCausalLM", "ForConditionalGeneration", "ChatModel", "LMHeadModel")
POOLING_SUFFIXES = ("ForTextEncoding", "EmbeddingModel", "ForSequenceClassification", "ForTokenClassification",
                    "ForAudioClassification", "ForImageClassification", "ForVideoClassification", "ClassificationModel",
                    "ForRewardModeling", "RewardModel", "Model")


def runner_departure(config: Mapping[str, Any]) -> Departure | None:
    """What vLLM does with a config naming no ``architectures`` (after ``--hf-overrides``), where it does not
    generate as the model's causal-LM class would (None: it does, or the config names its class).

    ``transformers_utils/config.py:939-949`` names the config by transformers' *base* model class of its model type
    (``MODEL_MAPPING_NAMES``: ``LlamaModel``); ``ModelConfig._get_default_runner_type`` then generates where the
    registry maps that class to a generating model file (``LlamaModel``, ``MistralModel``, ``Qwen2Model``,
    ``Gemma2Model``: their causal-LM files, the same rotary), and otherwise follows the name's suffix: a ``…Model``
    is runner ``pooling``, convert ``embed`` — an embedding model built from the same model file, which generates no
    text (measured on Phi-3, Qwen3, Gemma 3 and GPT-NeoX's default configs: ``tests/fixtures/engines/vllm``).
    """
    from pecli.engines.transformers_archs import ARCHITECTURE_OF
    from pecli.engines.vllm_models import BASE_CLASS_OF, NOT_GENERATING

    if config.get("architectures"):
        return None
    model_type = config.get("model_type")
    model_type = model_type if isinstance(model_type, str) else None
    causal = ARCHITECTURE_OF.get(model_type) if model_type else None
    named = (f"name the model's class: \"architectures\": [\"{causal}\"] in config.json, or --hf-overrides "
             f"'{{\"architectures\": [\"{causal}\"]}}'") if causal else "name the model's class in \"architectures\""
    base = BASE_CLASS_OF.get(model_type) if model_type else None
    if base is None:
        return Departure("architectures", f"the config names none, and transformers has no base class for model type "
                         f"{model_type}: vLLM {VERSION} warns and expects --hf-overrides to name one; pecli has not run "
                         "that path and cannot be sure what it serves", named, beyond_numbers=True)
    if base in NATIVE and base not in NOT_GENERATING:
        return None
    if base.endswith(GENERATING_SUFFIXES) or not base.endswith(POOLING_SUFFIXES):
        return None
    return Departure("architectures", f"the config names none: vLLM names it by transformers' base class {base} "
                     f"(model type {model_type}) and runs it as an embedding model (runner pooling, convert embed), "
                     "which generates no text; its rotary is the same", named, beyond_numbers=True)


@dataclass(frozen=True)
class Vllm(ConfigEngine):
    """vLLM (see the module)."""

    def overridden(self, config: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
        """The config after ``--hf-overrides``: flat values set (a key the loaded config already holds in its rope
        dict is kept: :data:`SHADOWED_KEYS`), then dicts: a sub-config updated key by key, any other attribute
        replaced whole — ``rope_scaling`` through transformers' setter (the rope dict replaced, its type from
        ``type`` else default, ``rope_theta`` from the config's attribute, which a loaded config no longer has),
        ``rope_parameters`` as given."""
        from pecli.engines.base import text_of, with_text

        path, text = text_of(config)
        out = dict(config)
        for key, value in overrides.items():
            if isinstance(value, dict):
                continue
            if key in SHADOWED_KEYS and _held(text, key):
                continue
            out[key] = value
        for key, value in overrides.items():
            if not isinstance(value, dict):
                continue
            current = out.get(key)
            if isinstance(current, dict) and key.endswith("_config"):
                out[key] = _updated(current, value)
            elif key in ("rope_scaling", "rope_parameters"):
                text = dict(text_of(out)[1])
                for old in ("rope_scaling", "rope_parameters"):
                    text.pop(old, None)
                new = dict(value)
                if key == "rope_scaling":
                    new.setdefault("rope_type", rope_type(new))
                    theta = overrides.get("rope_theta") if not isinstance(overrides.get("rope_theta"), dict) else None
                    new.setdefault("rope_theta", theta)
                else:
                    new.setdefault("rope_theta", DEFAULT_THETA.get(text.get("model_type"), 10000.0))
                text.pop("rope_theta", None)
                text["rope_parameters"] = new
                text[REPLACED] = key
                out = with_text(out, path, text)
            else:
                out[key] = value
        return out

    def load_refusal(self, config: dict[str, Any], text: dict[str, Any], model_type: str | None) -> str | None:
        found = transformers_refusal(config, model_type)
        if found is not None:
            return found
        arch = architecture(config)
        if arch in PREVIOUSLY_SUPPORTED and arch in BACKEND_INCOMPATIBLE:
            return (f"ValueError: Model architecture {arch} was supported in vLLM until v{PREVIOUSLY_SUPPORTED[arch]}, "
                    "and is not supported anymore. Please use an older version of vLLM if you want to use this model "
                    "architecture.")
        _, raw = text_of(config)
        replaced = raw.get(REPLACED)
        if replaced == "rope_parameters" and isinstance(raw.get("rope_parameters"), dict) and \
                "rope_type" not in raw["rope_parameters"] and "type" not in raw["rope_parameters"]:
            return "KeyError: 'rope_type'"  # iter_rope_parameters in _get_and_verify_max_len
        return None

    def build_refusal(self, text: Mapping[str, Any]) -> str | None:
        """The model file's error building its rotary module: a key ``get_rope`` reads that the rope dict lacks
        (``KeyError``); a rope dict replaced through the rope_scaling setter gets ``rope_theta`` None from
        transformers' standardisation (no attribute to take it from)."""
        flat = rope_dict(text)
        missing = [key for key in looked_up(GET_ROPE_KEYS, rope_type(flat), ()) if key not in (flat or {})]
        if missing:
            return f"KeyError: '{missing[0]}'"
        model_keys = MODEL_ROPE_KEYS.get(text.get("model_type"))  # keys the model file itself indexes
        if model_keys is not None and (model_keys[0] or hf_record(rope_type(flat)) is not NO_SCALING):
            missing = [key for key in model_keys[1] if key not in (flat or {})]
            if missing:
                return f"KeyError: '{missing[0]}'"
        if looked_up(GET_ROPE_KEYS, rope_type(flat), ()) == GET_ROPE_KEYS[-1][1] and self._interleaved(text):
            return "ValueError: `Phi3LongRoPEScaledRotaryEmbedding` only supports neox_style."
        block = text.get("rope_parameters") if text.get(REPLACED) == "rope_scaling" else None
        if isinstance(block, dict) and block.get("rope_theta") is None and text.get("rope_theta") is None:
            if hf_record(rope_type(block)) is DYNAMIC:  # DynamicNTKScalingRotaryEmbedding multiplies the base
                return "TypeError: unsupported operand type(s) for *: 'NoneType' and 'float'"
            return "TypeError: unsupported operand type(s) for ** or pow(): 'NoneType' and 'Tensor'"
        return None

    def _interleaved(self, text: Mapping[str, Any]) -> bool:
        """Whether the model file builds its rope with ``is_neox_style=False`` (the layout of the model's plan:
        interleaved pairs), for a model vLLM runs with its own file."""
        from pecli.models.sources.config_json import plan_of_config

        if self.transformers_backend(text) or self.permutes_rotary_weights(text) or text.get("model_type") in NEOX_AT_BUILD:
            return False
        try:
            plan = plan_of_config(dict(text), "vLLM")
        except ConfigError:
            return False
        return any(g.options is not None and g.options.get("layout") == "interleaved" for g in plan.groups)

    def loaded(self, config: dict[str, Any]) -> dict[str, Any]:
        from pecli.engines.base import with_text

        path, text = text_of(config)
        # transformers 5 reads a rope_scaling block as rope_parameters, which vLLM's get_rope is given
        key = next((k for k in ("rope_parameters", "rope_scaling") if isinstance(text.get(k), dict) and text[k]), None)
        block = text.get(key) if key else None
        if isinstance(block, dict) and WORDS.types(DEEPSEEK_YARN).holds(rope_type(block)) and \
                isinstance(block.get("factor"), (int, float)):
            text = {**text, key: deepseek_yarn_as_yarn(block)}
        elif REPLACED not in text:
            return config
        return with_text(config, path, {k: v for k, v in text.items() if k != REPLACED})

    def transformers_backend(self, config: Mapping[str, Any]) -> bool:
        """The registry's Transformers-backend architectures (GPT-NeoX, Phi, OLMo, SmolLM3, …), and one vLLM has
        no model file for (or no longer implements) whose transformers class is backend-compatible (Persimmon)."""
        arch = architecture(config)
        return arch is not None and (arch in TRANSFORMERS_BACKEND or arch not in NATIVE)

    def permutes_rotary_weights(self, config: Mapping[str, Any]) -> bool:
        _, text = text_of(config)
        return text.get("model_type") in PERMUTING_MODELS or config.get("model_type") in PERMUTING_MODELS

    def override_departures(self, config: Mapping[str, Any], overrides: Mapping[str, Any]) -> list[Departure]:
        _, text = text_of(config)
        block = text.get("rope_parameters") if isinstance(text.get("rope_parameters"), dict) else {}
        held = [key for key in SHADOWED_KEYS if key in overrides and not isinstance(overrides[key], dict)
                and _held(text, key) and overrides[key] != block.get(key, text.get(key))]
        runner = runner_departure(self.overridden(dict(config), overrides))
        return [Departure("--hf-overrides", f"sets {key} on the config, and vLLM keeps the config's own (transformers' "
                          "standardize_rope_params sets it into rope_parameters only where absent)",
                          f"give it inside the rope dict: --hf-overrides '{{\"rope_parameters\": {{…, \"{key}\": …}}}}'")
                for key in held] + ([runner] if runner is not None else [])

    def cache_rows(self, context: Context, groups: list[LayerGroup]) -> int | None:
        """The rows of the rotary module's cos/sin cache (``_compute_cos_sin_cache``): max_position (the config's
        ``max_position_embeddings``) × factor for linear, original × factor for YaRN, max_position otherwise."""
        rows = []
        for group in groups:
            if not rope_group(group):
                continue
            block = scaling_of(group)
            longest = int(group.options.get("max_position_embeddings") or 0)
            kind = scaling_record(group)
            if kind is LINEAR:
                rows.append(longest * float(block["factor"]))
            elif kind is YARN and block.get("original_max_position_embeddings"):
                rows.append(int(block["original_max_position_embeddings"]) * float(block["factor"]))
            elif kind is not LONGROPE and longest:
                rows.append(longest)
        rows = [int(r) for r in rows if math.isfinite(r)]
        return min(rows) if rows else None

    def context(self, config: dict[str, Any], text: dict[str, Any], flags: Mapping[str, Any],
                env: Mapping[str, str]) -> tuple[int | None, str | None]:
        derived, key = derived_length(text)
        if not math.isfinite(derived):
            return None, "OverflowError: cannot convert float infinity to integer"
        asked = flags.get("--max-model-len")
        blocks = _blocks(text)
        if asked is None or asked == -1:
            if any(hf_record(rope_type(b)) is LONGROPE for b in blocks):  # config/model.py:2645 (not su)
                return int(config.get("original_max_position_embeddings") or derived), None
            return int(derived), None
        if asked > derived:
            if env.get(ALLOW_LONG, "").strip().lower() in ("1", "true"):
                return asked, None
            return None, (f"ValueError: User-specified max_model_len ({asked}) is greater than the derived "
                          f"max_model_len ({key}={_number(derived)} or model_max_length="
                          f"{text.get('model_max_length')} in model's config.json). To allow overriding this "
                          f"maximum, set the env var {ALLOW_LONG}=1.")
        return asked, None

    def serving(self, base: Any, patch: Mapping[str, Any], target: int,
                config: Mapping[str, Any] | None = None) -> Serving:
        from pecli.engines.served import flag_serving

        return flag_serving(self, base, patch, target, config, lambda n, b: vllm_max_len(n, b, base.model_type),
                            ALLOW_LONG, lambda keys: rope_overrides(keys, config, base.path))


def rope_overrides(keys: Mapping[str, Any], config: Mapping[str, Any] | None, path: tuple[str, ...]) -> dict[str, Any]:
    """The patch's keys as ``--hf-overrides`` must carry them for vLLM: one whole ``rope_parameters`` dict (its
    type, ``rope_theta``, the model's rotated fraction and the scaling keys), which vLLM sets as given — a flat
    ``rope_theta`` would be kept at the config's, and a ``rope_scaling`` dict loses ``rope_theta``."""
    from pecli.models.families.keys import at_path

    out = {k: v for k, v in keys.items() if k not in ("rope_scaling", "rope_parameters", "rope_theta", "rotary_emb_base")}
    block = keys.get("rope_parameters") if isinstance(keys.get("rope_parameters"), dict) else \
        dict(keys.get("rope_scaling") or {})
    model = dict(at_path(config, path)) if config is not None else {}
    theta = block.get("rope_theta", keys.get("rope_theta", keys.get("rotary_emb_base", model.get("rope_theta"))))
    rope = {"rope_type": rope_type(block), **{k: v for k, v in block.items() if k not in ("type", "rope_type")}}
    if theta is not None:
        rope["rope_theta"] = theta
    fraction = model.get("partial_rotary_factor", model.get("rotary_pct"))
    if fraction is not None and "partial_rotary_factor" not in rope:
        rope["partial_rotary_factor"] = fraction
    return {**out, "rope_parameters": rope}


def _held(text: Mapping[str, Any], key: str) -> bool:
    """Whether the loaded config's rope dict holds ``key`` (``rope_theta``: always for a RoPE model, its class
    fills it in; ``partial_rotary_factor``: where the file gives it)."""
    from pecli.models.sources.class_defaults import with_class_defaults

    block = text.get("rope_parameters") if isinstance(text.get("rope_parameters"), dict) else {}
    if text.get(key) is not None or key in block:
        return True
    filled = with_class_defaults(dict(text)).get("rope_parameters")
    return key == "rope_theta" and isinstance(filled, dict) and "rope_theta" in filled


def _updated(current: Mapping[str, Any], value: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(current)
    for key, item in value.items():
        out[key] = _updated(out[key], item) if isinstance(item, dict) and isinstance(out.get(key), dict) and \
            key.endswith("_config") else item
    return out


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _blocks(text: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The text model's rope dicts (one per layer type where nested)."""
    flat = rope_dict(text)
    if flat is not None:
        return [flat]
    for key in ("rope_parameters", "rope_scaling"):
        block = text.get(key)
        if isinstance(block, dict) and block:
            return [b for b in block.values() if isinstance(b, dict) and b]
    return []


def derived_length(text: Mapping[str, Any]) -> tuple[float, str | None]:
    """vLLM's derived max_model_len and the key it came from (see the module)."""
    found, key = math.inf, None
    for name in DERIVED_LENGTH_KEYS:  # the smallest present wins, model_max_length over all
        value = attribute(text, name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value < found:
            found, key = value, name
    longest = attribute(text, "model_max_length")
    if isinstance(longest, (int, float)) and not isinstance(longest, bool) and longest:
        found, key = longest, "model_max_length"
    if found == math.inf:
        found = 2048
    blocks = _blocks(text)
    model_type = str(text.get("model_type") or "")
    if blocks and not UNSCALED_MODELS.search(model_type):
        factor = 1.0
        for block in blocks:
            if not UNSCALED_TYPES.holds(rope_type(block)):
                factor = block.get("factor", factor)
        found *= 1.0 if factor is None else float(factor)
    return found, key


def vllm_max_len(max_position_embeddings: int, block: Mapping[str, Any] | None, model_type: Any = None) -> int:
    """The longest context vLLM derives from ``max_position_embeddings`` and one rope block."""
    text = {"max_position_embeddings": max_position_embeddings, "model_type": model_type or ""}
    if block:
        text["rope_scaling"] = dict(block)
    return int(derived_length(text)[0])


ENGINE = Vllm(
    "vllm", "vLLM", VERSION, "vllm/config/model.py (_get_and_verify_max_len), vllm/model_executor/layers/rotary_embedding/",
    flags={"--hf-overrides": json_object, "--max-model-len": human_readable_int_or_auto},
    env=(ALLOW_LONG,), measured=MEASURED_TYPES, rules=(deepseek_rule(llama_scaling=True), longrope_once, longrope_halves, dynamic_fixed, gpt_oss_yarn, gptj_theta), override_flag="--hf-overrides",
    length_flag="--max-model-len",
)
