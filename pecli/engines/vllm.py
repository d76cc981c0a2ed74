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
  YaRN (``deepseek_llama_scaling`` when ``attention_factor`` is 1).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping

from pecli.engines.base import Departure, Serving, attribute, json_object, rope_dict, rope_type, text_of
from pecli.engines.configured import (
    ConfigEngine, Context, deepseek_yarn, group_type, rope_group, scaling_of, transformers_refusal, with_options,
)
from pecli.models.plan import LayerGroup

VERSION = "0.33.0"
#: Rope types whose factor vLLM does not multiply into the derived length.
UNSCALED_TYPES = ("su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling")
#: Model types whose factor vLLM never multiplies in ("gemma3" in the model type).
UNSCALED_MODELS = re.compile("gemma3")
#: The keys vLLM's length is derived from (the smallest present wins; ``model_max_length`` over all).
LENGTH_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
               "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len")
#: Model types whose config validation (run by vLLM's ``patch_rope_parameters``) refuses a config whose
#: rope block is null: ``Phi3Config.validate_rope`` reads ``rope_parameters["partial_rotary_factor"]``.
PARTIAL_KEY_REQUIRED = ("phi3",)
ALLOW_LONG = "VLLM_ALLOW_LONG_MAX_MODEL_LEN"


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
    if not rope_group(group) or group_type(group) not in ("longrope", "su"):
        return group, None
    block = scaling_of(group)
    original = int(block.get("original_max_position_embeddings") or group.options.get("max_position_embeddings"))
    longest = int(group.options.get("max_position_embeddings") or original)
    served = context.served or original
    long = served > original
    factors = block["long_factor" if long else "short_factor"]
    scale = longest / original
    mscale = 1.0 if scale <= 1 else math.sqrt(1 + math.log(scale) / math.log(original))
    chosen = {k: v for k, v in block.items() if k not in ("short_factor", "long_factor", "attention_factor", "factor")}
    chosen.update(short_factor=list(factors), long_factor=list(factors),
                  attention_factor=block.get("long_mscale" if long else "short_mscale") or mscale)
    options = {**group.options, "rope_scaling": chosen}
    which = "long" if long else "short"
    effect = (f"uses the {which} factors at every length (max_model_len {served:,} "
              f"{'>' if long else '≤'} original_max_position_embeddings {original:,}), where transformers switches "
              f"to the long ones past {original:,} tokens")
    remedy = (None if long else f"--max-model-len above {original:,} gives the long factors at every length: no "
              "setting gives transformers' switch")
    return with_options(group, options, f"vLLM: LongRoPE {which} factors at every length"), \
        Departure("LongRoPE factors", effect, remedy)


def dynamic_fixed(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """``DynamicNTKScalingRotaryEmbedding``: one base, base·(s·L/L_t − (s − 1))^(r/(r−2)), L_t =
    ``max_trained_positions`` (default L): the plain base unless the block says otherwise."""
    if not rope_group(group) or group_type(group) != "dynamic":
        return group, None
    block = scaling_of(group)
    if "alpha" in block:
        return group, None
    options = dict(group.options)
    dim = int(options["dim"] * options.get("partial_rotary_factor", 1.0))
    longest = int(options.get("max_position_embeddings") or 2048)
    trained = int(block.get("max_trained_positions") or longest)
    factor = float(block["factor"])
    base = float(options["base"]) * (factor * longest / trained - (factor - 1)) ** (dim / (dim - 2))
    options.pop("rope_scaling")
    options["base"] = base
    effect = (f"keeps one base ({base:g}) at every length, where transformers raises it with the sequence past "
              f"{longest:,} tokens (dynamic NTK ×{factor:g})")
    return with_options(group, options, "vLLM: dynamic NTK at a fixed base"), \
        Departure("dynamic NTK", effect, None)


@dataclass(frozen=True)
class Vllm(ConfigEngine):
    """vLLM (see the module)."""

    def overridden(self, config: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(config)
        for key, value in overrides.items():
            current = out.get(key)
            if isinstance(value, dict) and isinstance(current, dict) and key.endswith("_config"):
                out[key] = _updated(current, value)
            elif key in ("rope_scaling", "rope_parameters") and isinstance(value, dict):
                # transformers 5's rope_scaling setter: the whole rope dict replaced, then standardised
                for old in ("rope_scaling", "rope_parameters"):
                    out.pop(old, None)
                out["rope_parameters" if "rope_parameters" in config else "rope_scaling"] = value
            else:
                out[key] = value
        return out

    def load_refusal(self, config: dict[str, Any], text: dict[str, Any], model_type: str | None) -> str | None:
        found = transformers_refusal(config, model_type)
        if found is not None:
            return found
        raw = text_of(config)[1]
        if model_type in PARTIAL_KEY_REQUIRED and "rope_scaling" in raw and raw["rope_scaling"] is None and \
                "partial_rotary_factor" not in raw and not isinstance(raw.get("rope_parameters"), dict):
            return "KeyError: 'partial_rotary_factor'"
        return None

    def context(self, config: dict[str, Any], text: dict[str, Any], flags: Mapping[str, Any],
                env: Mapping[str, str]) -> tuple[int | None, str | None]:
        derived, key = derived_length(text)
        asked = flags.get("--max-model-len")
        blocks = _blocks(text)
        if asked is None or asked == -1:
            if any(rope_type(b) == "longrope" for b in blocks):
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
        from pecli.engines.served import served_at_training, nested, checked

        keys = dict(_at(patch, base.path))
        block = keys.get("rope_parameters", keys.get("rope_scaling"))
        keys, warnings = served_at_training(base, keys, block, lambda n, b: vllm_max_len(n, b, base.model_type), "vLLM")
        derived = vllm_max_len(int(keys["max_position_embeddings"]), block, base.model_type)
        if derived < target:
            warnings.append(f"vLLM derives {derived:,} tokens from these settings and refuses --max-model-len "
                            f"{target:,} unless {ALLOW_LONG}=1")
        import json

        flags = ("--hf-overrides", json.dumps(nested(keys, base.path), separators=(",", ":")), "--max-model-len", str(target))
        serving = Serving("vllm", flags, target if derived >= target else None, tuple(warnings), version=self.version)
        return checked(self, serving, base, patch, config)


def _at(data: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    from pecli.models.families import at_path

    return at_path(data, path)


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
    for name in LENGTH_KEYS:
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
            if rope_type(block) not in UNSCALED_TYPES:
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
    flags={"--hf-overrides": json_object("--hf-overrides"), "--max-model-len": human_readable_int_or_auto},
    env=(ALLOW_LONG,), rules=(deepseek_yarn, longrope_once, dynamic_fixed), override_flag="--hf-overrides",
    length_flag="--max-model-len",
)
