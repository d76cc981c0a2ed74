"""MLX (mlx 0.32.4, mlx-lm 0.32.2), as its own code computes positions (measured on its CPU backend:
``tests/fixtures/engines/mlx/``).

mlx-lm takes no flag that changes positions: it reads the model folder's ``config.json`` into the model
file's ``ModelArgs`` (``mlx_lm/utils.py``: the model type, remapped by ``MODEL_REMAPPING``, names the file;
a type without a file is refused), and has no context cap. Then:

- Most model files read ``rope_theta`` and ``rope_scaling`` as top-level keys only: transformers 5's
  ``rope_parameters`` (flat or per layer type) is not read (:data:`READS_ROPE_PARAMETERS` lists those that
  do), so such a config runs on the file's default base (:data:`DEFAULT_BASE`) without its scaling.
- ``initialize_rope`` (``mlx_lm/models/rope_utils.py``) builds ``default``, ``linear``, ``dynamic`` (as
  transformers), ``llama3``, ``yarn``, ``longrope``: its YaRN always rounds the correction range (it has no
  ``truncate``) and puts mscale(s, ``mscale``)/mscale(s, ``mscale_all_dim``) on cos and sin, never
  ``attention_factor``; its LongRoPE (``SuScaledRoPE``) always uses ``long_factor`` and
  ``long_mscale`` or sqrt(1 + ln(L/L₀)/ln L₀).
- GLM-4's model file rotates int(head_dim × ``partial_rotary_factor``) components read as a top-level key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from pecli.engines.base import Departure, Serving, rope_type
from pecli.engines.configured import ConfigEngine, Context, group_type, rope_group, scaling_of, with_options
from pecli.models.plan import LayerGroup

VERSION = "0.32.4 (mlx-lm 0.32.2)"
#: ``mlx_lm/utils.py``: model types run by another type's file.
MODEL_REMAPPING = {"mistral": "llama", "llava": "mistral3", "phi-msft": "phixtral", "falcon_mamba": "mamba",
                   "joyai_llm_flash": "deepseek_v3", "kimi_k2": "deepseek_v3", "qwen2_5_vl": "qwen2_vl",
                   "minimax_m2": "minimax", "iquestcoder": "llama", "xverse": "llama", "gemma4_unified": "gemma4",
                   "deepseek_v41_text": "deepseek_v41"}
#: Model files that read transformers 5's ``rope_parameters`` (the others read top-level keys only).
READS_ROPE_PARAMETERS = frozenset({
    "exaone_moe", "gemma4_text", "glm_moe_dsa", "granitemoehybrid", "laguna", "lfm2", "lfm2_moe", "mellum",
    "minimax_m3_vl", "ministral3", "mistral4", "muse_glimmer", "muse_spark", "olmo_hybrid", "qwen3", "qwen3_5",
    "spark2_5"})
#: Each model file's default ``rope_theta`` (``ModelArgs``; None: a required field), read from mlx-lm 0.32.2.
DEFAULT_BASE: dict[str, float | None] = {
    "afm7": 50000.0, "afmoe": 10000.0, "apertus": None, "bailing_moe_v3": 6e6, "bitnet": 10000.0, "cohere": 8e6,
    "cohere2": 50000.0, "deepseek": 10000.0, "deepseek_v2": 10000.0, "deepseek_v3": 10000.0, "deepseek_v32": 10000.0,
    "dots1": None, "ernie4_5": None, "ernie4_5_moe": None, "exaone": None, "exaone4": None, "exaone_moe": 1e6,
    "falcon_h1": 1e11, "gemma": 10000.0, "gemma2": 10000.0, "gemma3_text": 1e6, "gemma3n": None, "glm": 10000.0,
    "glm4": None, "glm4_moe": None, "glm4_moe_lite": 1e6, "gpt_oss": 150000.0, "granite": None, "granitemoe": None,
    "granitemoehybrid": 10000.0, "helium": None, "hunyuan": None, "hunyuan_v1_dense": 10000.0, "internlm2": 10000.0,
    "internlm3": 10000.0, "kimi_vl": 10000.0, "lfm2": 1e6, "lfm2_moe": 1e6, "llama": 10000.0, "llama4": None,
    "llama4_text": None, "mimo": 10000.0, "mimo_v2_flash": None, "minicpm": 1e6, "minicpm3": 1e6, "minimax": None,
    "mistral4": 10000.0, "mixtral": 1e6, "nemotron": 10000.0, "olmo": 10000.0, "olmo2": 10000.0, "olmo3": None,
    "olmoe": 10000.0, "phi": 10000.0, "phi3": 10000.0, "phimoe": 10000.0, "plamo": 10000.0, "qwen2": 1e6,
    "qwen2_moe": 1e6, "qwen3_5": 100000.0, "qwen3_moe": None, "qwen3_next": None, "seed_oss": 10000.0,
    "solar_open": None, "stablelm": None, "starcoder2": 100000.0, "step3p5": 10000.0,
}
#: The model files of mlx-lm 0.32.2 (``mlx_lm/models/``): a model type without one is refused.
MODULES = frozenset("""
Klear afm7 afmoe apertus baichuan_m1 bailing_hybrid bailing_moe bailing_moe_linear bailing_moe_v3 bitnet cohere cohere2
dbrx deepseek deepseek_v2 deepseek_v3 deepseek_v32 deepseek_v41 dots1 ernie4_5 ernie4_5_moe exaone exaone4 exaone_moe
falcon_h1 gear gemma gemma2 gemma3 gemma3_text gemma3n gemma4 gemma4_text glm glm4 glm4_moe glm4_moe_lite glm_moe_dsa
gpt2 gpt_bigcode gpt_neox gpt_oss gptj granite granitemoe granitemoehybrid helium hunyuan hunyuan_v1_dense internlm2
internlm3 iquestloopcoder jamba kimi_k25 kimi_k3 kimi_linear kimi_vl laguna lfm2-vl lfm2 lfm2_moe lille-130m llama
llama4 llama4_text longcat_flash longcat_flash_ngram mamba mamba2 mellum mimo mimo_v2_flash minicpm minicpm3 minimax
minimax_m3_vl ministral3 mistral3 mistral4 mixtral muse_glimmer muse_spark nanbeige nanochat nemotron-nas nemotron
nemotron_h olmo olmo2 olmo3 olmo_hybrid olmoe openelm phi phi3 phi3small phimoe phixtral pixtral plamo plamo2 plamo3
prism_hadamard_qwen35 qwen qwen2 qwen2_moe qwen2_vl qwen3 qwen3_5 qwen3_5_moe qwen3_moe qwen3_next qwen3_vl qwen3_vl_moe
recurrent_gemma rwkv7 seed_oss smollm3 solar_open spark2_5 stablelm starcoder2 step3p5 talkie telechat3 youtu_llm
""".split())
#: Model files whose rotated components are int(head_dim × ``partial_rotary_factor``), the factor read as a
#: top-level key (transformers 5 keeps it inside ``rope_parameters``): absent, the whole head rotates.
TOP_LEVEL_FRACTION = ("glm4",)
#: The rope types ``initialize_rope`` builds.
BUILT_TYPES = ("default", "linear", "dynamic", "llama3", "yarn", "longrope", "deepseek_yarn", "proportional", "mrope")


def module_of(model_type: Any) -> str | None:
    """The mlx-lm model file that runs ``model_type``."""
    if not isinstance(model_type, str):
        return None
    return MODEL_REMAPPING.get(model_type, model_type)


def yarn_as_built(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """``YarnRoPE``: the correction range always rounded, cos and sin × mscale(s, mscale)/mscale(s, mscale_all_dim)."""
    if not rope_group(group) or group_type(group) != "yarn":
        return group, None
    from pecli.schemes.rope_scaling import yarn_get_mscale

    block = scaling_of(group)
    factor = float(block["factor"])
    attention = yarn_get_mscale(factor, float(block.get("mscale", 1))) / yarn_get_mscale(factor, float(block.get("mscale_all_dim", 0)))
    built = {k: v for k, v in block.items() if k not in ("truncate", "attention_factor", "mscale", "mscale_all_dim")}
    built["attention_factor"] = attention
    changes = []
    if block.get("truncate") is False:
        changes.append("rounds YaRN's correction range (the model's truncate: false does not)")
    given = block.get("attention_factor")
    if given is not None and not math.isclose(float(given), attention, rel_tol=1e-9):
        changes.append(f"puts {attention:.6g} on cos and sin, not the block's attention_factor {float(given):g}")
    if not changes:
        return group, None
    return with_options(group, {**group.options, "rope_scaling": built}, "MLX: YaRN as mlx-lm builds it"), Departure(
        "YaRN", "; ".join(changes), None)


def longrope_long(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """``SuScaledRoPE``: the long factors at every length."""
    if not rope_group(group) or group_type(group) not in ("longrope", "su"):
        return group, None
    block = scaling_of(group)
    original = int(block.get("original_max_position_embeddings") or 4096)
    longest = int(group.options.get("max_position_embeddings") or 131072)
    scale = longest / original
    mscale = block.get("long_mscale") or (1.0 if scale <= 1 else math.sqrt(1 + math.log(scale) / math.log(original)))
    built = {k: v for k, v in block.items() if k not in ("short_factor", "attention_factor", "factor")}
    built.update(short_factor=list(block["long_factor"]), attention_factor=mscale)
    return with_options(group, {**group.options, "rope_scaling": built}, "MLX: LongRoPE long factors at every length"), \
        Departure("LongRoPE factors", f"uses the long factors at every length, where transformers uses the short ones "
                  f"up to {original:,} tokens", None)


@dataclass(frozen=True)
class Mlx(ConfigEngine):
    """MLX (see the module)."""

    def loaded(self, config: dict[str, Any]) -> dict[str, Any]:
        """The config as mlx-lm's model file reads it, said in transformers' keys."""
        from pecli.engines.base import text_of, with_text

        path, text = text_of(config)
        module = module_of(text.get("model_type") or config.get("model_type"))
        if module is None or module in READS_ROPE_PARAMETERS or not isinstance(text.get("rope_parameters"), dict):
            return config
        seen = dict(text)
        seen.pop("rope_parameters")
        base = seen.get("rope_theta", DEFAULT_BASE.get(module, 10000.0))
        if base is None:
            return config  # refused at load (:meth:`load_refusal`)
        block = dict(seen.pop("rope_scaling", None) or {})
        flat = {"rope_type": rope_type(block), "rope_theta": float(base),
                **{k: v for k, v in block.items() if k not in ("type", "rope_type")}}
        seen.pop("rope_theta", None)
        if module == "gemma3_text":
            local = float(seen.pop("rope_local_base_freq", 10000.0))
            seen["rope_parameters"] = {"full_attention": flat, "sliding_attention": {"rope_type": "default", "rope_theta": local}}
        else:
            seen["rope_parameters"] = flat
        if module in TOP_LEVEL_FRACTION and "partial_rotary_factor" not in text:
            seen["partial_rotary_factor"] = 1.0
        return with_text(config, path, seen)

    def load_refusal(self, config: dict[str, Any], text: dict[str, Any], model_type: str | None) -> str | None:
        from pecli.engines.base import text_of

        module = module_of(model_type)
        if module is None or module not in MODULES:
            return f"ValueError: Model type {model_type} not supported."
        _, raw = text_of(config)
        if module in READS_ROPE_PARAMETERS:
            kind = rope_type(raw.get("rope_parameters") if isinstance(raw.get("rope_parameters"), dict) else raw.get("rope_scaling"))
        else:
            if DEFAULT_BASE.get(module, 0) is None and raw.get("rope_theta") is None:
                return "TypeError: ModelArgs.__init__() missing 1 required positional argument: 'rope_theta'"
            kind = rope_type(raw.get("rope_scaling") if isinstance(raw.get("rope_scaling"), dict) else None)
        if kind not in BUILT_TYPES:
            return f"ValueError: Unsupported RoPE type {kind}"
        return None

    def serving(self, base: Any, patch: Mapping[str, Any], target: int,
                config: Mapping[str, Any] | None = None) -> Serving:
        from pecli.engines.served import checked, nested

        keys = dict(_at(patch, base.path))
        block = keys.get("rope_parameters", keys.get("rope_scaling"))
        kind = rope_type(block)
        if kind not in BUILT_TYPES:
            return Serving("mlx", (), None, (), f"mlx-lm's initialize_rope refuses rope type {kind} (Unsupported RoPE "
                           "type)", version=self.version)
        serving = Serving("mlx", (), target, ("mlx-lm takes no RoPE flags: merge the patch into the model folder's "
                                              "config.json",), None, nested(keys, base.path), version=self.version)
        return checked(self, serving, base, patch, config)


def _at(data: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    from pecli.models.families import at_path

    return at_path(data, path)


ENGINE = Mlx("mlx", "MLX", VERSION, "mlx_lm/models/rope_utils.py (initialize_rope), mlx_lm/models/<model>.py, "
             "mlx_lm/utils.py", no_flags="none: it reads the model folder's config.json",
             rules=(yarn_as_built, longrope_long))
