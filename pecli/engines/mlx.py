"""MLX (mlx 0.32.4, mlx-lm 0.32.2), as its own code computes positions (measured on its CPU backend:
``tests/fixtures/engines/mlx/``).

mlx-lm takes no flag that changes positions: it reads the model folder's ``config.json`` into the model
file's ``ModelArgs`` (``mlx_lm/utils.py``: the model type, remapped by ``MODEL_REMAPPING``, names the file;
a type without a file is refused), and has no context cap. Then:

- Most model files read ``rope_theta`` and ``rope_scaling`` as top-level keys only: transformers 5's
  ``rope_parameters`` (flat or per layer type) is not read (:data:`READS_ROPE_PARAMETERS` lists those that
  do), so such a config runs on the file's default base (:data:`pecli.engines.mlx_args.FIELDS`) without its scaling.
- ``initialize_rope`` (``mlx_lm/models/rope_utils.py``) builds ``default``, ``linear``, ``dynamic`` (as
  transformers), ``llama3``, ``yarn``, ``longrope``: its YaRN always rounds the correction range (it has no
  ``truncate``) and puts mscale(s, ``mscale``)/mscale(s, ``mscale_all_dim``) on cos and sin, never
  ``attention_factor``; its LongRoPE (``SuScaledRoPE``) always uses ``long_factor`` and
  ``long_mscale`` or sqrt(1 + ln(L/L₀)/ln L₀).
- GLM-4's model file rotates int(head_dim × ``partial_rotary_factor``) components read as a top-level key.
- ``initialize_rope`` reads the type from ``type`` before ``rope_type``, and builds ``deepseek_yarn`` and
  ``telechat3-yarn`` as ``yarn``; HunYuan's files (``hunyuan``, ``hunyuan_v1_dense``) build one fixed base
  rope_theta·alpha^(d/(d−2)) from the block's ``alpha``, whatever its type (:data:`NTK_ALPHA`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from pecli.engines.base import Departure, Serving, rope_type, text_of
from pecli.engines.configured import ConfigEngine, Context, engine_built, rope_group, scaling_of, scaling_record
from pecli.engines.mlx_args import FIELDS as READ_FIELDS, REQUIRED
from pecli.engines.mlx_words import DEEPSEEK_YARN, MROPE, PROPORTIONAL, TELECHAT3_YARN, WORDS
from pecli.engines.vocabulary import hf_record, looked_up
from pecli.errors import ConfigError
from pecli.models.plan import LayerGroup
from pecli.schemes.scaling.linear import LINEAR
from pecli.schemes.scaling.llama3 import LLAMA3
from pecli.schemes.scaling.longrope import LONGROPE
from pecli.schemes.scaling.ntk import DYNAMIC
from pecli.schemes.scaling.unscaled import NO_SCALING
from pecli.schemes.scaling.yarn import YARN

VERSION = "0.32.4 (mlx-lm 0.32.2)"
#: Model files whose ``ModelArgs`` derive from another file's (``class ModelArgs(llama.ModelArgs)``).
INHERITS = {"smollm3": "llama", "prism_hadamard_qwen35": "qwen3_5"}
#: Each model file's position fields (:data:`pecli.engines.mlx_args.FIELDS`, with the inherited ones).
FIELDS = {**READ_FIELDS, **{child: {**READ_FIELDS[parent], **READ_FIELDS.get(child, {})} for child, parent in INHERITS.items()}}
#: Model files that declare ``rope_scaling`` and build their RoPE without it (``nn.RoPE(head_dim, base)``):
#: qwen2_moe.py:63, qwen3_moe.py:61, mixtral.py:59.
SCALING_NOT_APPLIED = ("qwen2_moe", "qwen3_moe", "mixtral")
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
#: Of those, the files that build their rope from ``rope_parameters`` alone: a config in the older form (top-level
#: ``rope_scaling``) runs unscaled. mistral4.py:118-125 passes ``args.rope_parameters`` to ``initialize_rope``; the
#: others never name ``rope_scaling``.
LEGACY_SCALING_UNREAD = frozenset({
    "gemma4_text", "granitemoehybrid", "laguna", "lfm2", "lfm2_moe", "mellum", "minimax_m3_vl", "ministral3",
    "mistral4", "muse_glimmer", "muse_spark", "olmo_hybrid", "spark2_5"})
#: Model files that pass no block of the config to ``initialize_rope`` (its table of types is not theirs): their
#: own rope, whatever the block's type says.
OWN_ROPE = {"deepseek": "deepseek.py:70-73 (linear, else nn.RoPE)", "deepseek_v2": "deepseek_v2.py:178-195 (its own YaRN)",
            "deepseek_v41": "deepseek_v41.py:520-534 (YarnRoPE)", "minicpm3": "minicpm3.py:86-94 (SuScaledRoPE)",
            "lfm2": "lfm2.py:81 (nn.RoPE)", "muse_glimmer": "muse_glimmer.py:113 (nn.RoPE)",
            "phi3": "phi3.py:66-78 (SuScaledRoPE or nn.RoPE)"}
#: Model files whose sliding layers build ``nn.RoPE(head_dim, rope_theta)`` without the block (olmo3.py:82-90).
SLIDING_UNSCALED = ("olmo3",)
#: Model files that run their text model through another's ``ModelArgs`` (qwen2_vl.py:21-31: qwen2's), whose checks
#: of the config's keys are that file's (its reading of them is transformers', M-RoPE on text positions).
TEXT_FILES = {"qwen2_vl": "qwen2"}
#: Model files that check only the keys of a truthy ``rope_scaling`` (their ``__post_init__``), whatever its type, and
#: build ``DynamicNTKAlphaRoPE`` from its ``alpha`` alone: a fixed base·alpha^(d/(d−2)) over d = the head's width,
#: the block's type and factor unread. {file: (the keys a block must hold, whether ``alpha`` is required, the
#: line)}: hunyuan.py:39-42,51-60,100-104 (``rope_scaling["alpha"]``: null fails, TypeError, a block without it
#: KeyError; its head is hidden_size/heads, :84); hunyuan_v1_dense.py:32-35,38-47,86-93 (alpha 1 without a block).
NTK_ALPHA = {"hunyuan": (("factor", "type"), True, "hunyuan.py:100-104"),
             "hunyuan_v1_dense": (("alpha", "factor", "type"), False, "hunyuan_v1_dense.py:86-93")}
#: The words ``initialize_rope`` builds as ``YarnRoPE`` from the block's keys, as it builds ``yarn``
#: (rope_utils.py:326): pecli reads such a block as a yarn one.
YARN_SPELLINGS = WORDS.types(DEEPSEEK_YARN, TELECHAT3_YARN)
#: The rope types ``initialize_rope`` builds (rope_utils.py:305-373).
BUILT_TYPES = WORDS.types(NO_SCALING, LINEAR, DYNAMIC, LLAMA3, YARN, LONGROPE, DEEPSEEK_YARN, TELECHAT3_YARN, PROPORTIONAL,
                          MROPE)
#: The model types whose model files the fixtures measured (``tests/fixtures/engines/mlx/``, held equal to them by
#: ``tests/test_engines_fixtures.py``): for another, pecli says it cannot be sure.
MEASURED_TYPES = frozenset({'apertus', 'bitnet', 'cohere', 'cohere2', 'deepseek_v2', 'deepseek_v3', 'deepseek_v32',
                            'ernie4_5', 'ernie4_5_moe', 'falcon_h1', 'gemma', 'gemma2', 'gemma3_text', 'gemma4_text',
                            'glm', 'glm4', 'glm4_moe', 'glm4_moe_lite', 'gpt2', 'gpt_neox', 'gpt_oss', 'gptj',
                            'granite', 'granitemoe', 'helium', 'hunyuan', 'hunyuan_v1_dense', 'lfm2', 'llama', 'llama4_text', 'ministral3',
                            'mistral', 'mistral4', 'mixtral', 'nanochat', 'olmo2', 'olmo3', 'olmoe', 'phi', 'phi3',
                            'phimoe', 'qwen2', 'qwen2_moe', 'qwen2_vl', 'qwen2_vl_text', 'qwen3', 'qwen3_next',
                            'nemotron', 'seed_oss', 'smollm3', 'stablelm', 'starcoder2', 'telechat3'})


#: The keys a model file's fields take the place of in the config it is shown as.
MOVED_KEYS = ("rope_parameters", "rope_scaling", "rope_theta", "rotary_emb_base", "partial_rotary_factor", "rotary_pct")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _settings(text: Mapping[str, Any]) -> dict[str, Any]:
    """The base, rope type and rotated fraction a config's keys say (flat rope_parameters over the legacy keys)."""
    block = text.get("rope_parameters") if isinstance(text.get("rope_parameters"), dict) else {}
    if any(isinstance(v, dict) for v in block.values()):
        block = block.get("full_attention") or {}
    legacy = text.get("rope_scaling") if isinstance(text.get("rope_scaling"), dict) else {}
    fraction = block.get("partial_rotary_factor", text.get("partial_rotary_factor", text.get("rotary_pct")))
    return {"base": block.get("rope_theta", text.get("rope_theta", text.get("rotary_emb_base"))),
            "type": rope_type(block or legacy),
            "fraction": 1.0 if fraction is None else float(fraction) if _number(fraction) else fraction}


def _fraction_given(text: Mapping[str, Any]) -> bool:
    block = text.get("rope_parameters")
    inner = isinstance(block, dict) and any(k == "partial_rotary_factor" or isinstance(v, dict) and "partial_rotary_factor" in v
                                            for k, v in block.items())
    return inner or any(text.get(k) is not None for k in ("partial_rotary_factor", "rotary_pct", "rotary_dim"))


def _field(text: Mapping[str, Any], fields: Mapping[str, Any], *names: str) -> Any:
    """The first of ``names`` that is a field of the model file: the config's top-level key, else its default."""
    for name in names:
        if name in fields:
            value = text.get(name)
            return value if value is not None else (None if fields[name] == REQUIRED else fields[name])
    return None


def text_module(config: Mapping[str, Any], text: Mapping[str, Any]) -> str | None:
    """The model file whose ``ModelArgs`` read the text model's keys: the top-level model type's, or, for a
    multimodal wrapper whose own arguments have no position field (Gemma 3), its text model type's."""
    module = module_of(config.get("model_type") or text.get("model_type"))
    if module not in FIELDS and module_of(text.get("model_type")) in FIELDS:
        return module_of(text.get("model_type"))
    return module


def module_of(model_type: Any) -> str | None:
    """The mlx-lm model file that runs ``model_type``."""
    if not isinstance(model_type, str):
        return None
    return MODEL_REMAPPING.get(model_type, model_type)


def mlx_word(block: Mapping[str, Any] | None) -> Any:
    """The rope type ``initialize_rope`` reads from ``block`` (rope_utils.py:299-301): ``type`` before ``rope_type``."""
    if not block:
        return NO_SCALING.hf_name
    return block.get("type") or block.get("rope_type", NO_SCALING.hf_name)


def _as_compared(block: Any) -> Any:
    """``block`` spelt as ``initialize_rope`` reads it: its type as it compares it (``type`` before ``rope_type``),
    and a word it builds as ``yarn`` (:data:`YARN_SPELLINGS`) said ``yarn``; other values as they are."""
    if not isinstance(block, dict) or not block:
        return block
    word = mlx_word(block)
    word = YARN.hf_name if YARN_SPELLINGS.holds(word) else word
    if not isinstance(word, str) or word == rope_type(block):
        return block
    return {**{k: v for k, v in block.items() if k not in ("type", "rope_type")}, "rope_type": word}


def _blocks_as_compared(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with the text model's ``rope_scaling`` and ``rope_parameters`` (flat, or per layer type) spelt as
    mlx-lm compares their types (:func:`_as_compared`)."""
    from pecli.engines.base import with_text

    path, text = text_of(config)
    seen = dict(text)
    for key in ("rope_scaling", "rope_parameters"):
        block = text.get(key)
        nested = isinstance(block, dict) and bool(block) and all(isinstance(v, dict) for v in block.values())
        seen[key] = {name: _as_compared(inner) for name, inner in block.items()} if nested else _as_compared(block)
    if all(seen[key] == text.get(key) for key in ("rope_scaling", "rope_parameters")):
        return config
    return with_text(config, path, {k: v for k, v in seen.items() if k in text})


def _alpha_failure(raw: Mapping[str, Any], block: Any, head_dim_read: bool) -> str | None:
    """What ``DynamicNTKAlphaRoPE.__init__`` raises on the block's ``alpha``, if it raises: ``alpha ** (d/(d−2))``
    in Python numbers (hunyuan_v1_dense.py:47) is a TypeError for a value that is no number, an OverflowError past
    the largest float; d is the head's width (``head_dim`` where the file reads it, ``head_dim_read``, else
    hidden_size/heads: hunyuan.py:84)."""
    if not isinstance(block, dict) or "alpha" not in block:
        return None
    alpha = block["alpha"]
    head = raw.get("head_dim")
    try:
        dims = head if head_dim_read and isinstance(head, int) and head else \
            int(raw["hidden_size"]) // int(raw["num_attention_heads"])
        exponent = dims / (dims - 2)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None  # the model file fails elsewhere first, or pecli's reading names the key
    try:
        alpha ** exponent
    except TypeError as error:
        return f"TypeError: {error}"
    except OverflowError as error:
        return f"OverflowError: {error}"
    return None


def ntk_alpha(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """``DynamicNTKAlphaRoPE`` (:data:`NTK_ALPHA`): one base, rope_theta·alpha^(d/(d−2)) with d the rotated
    width, at every length and whatever the block's type says (its factor is not read)."""
    _, raw = text_of(context.config)
    module = text_module(context.config, raw)
    if module not in NTK_ALPHA or not rope_group(group):
        return group, None
    block = context.text.get("rope_scaling") if isinstance(context.text.get("rope_scaling"), dict) else {}
    alpha = float(block.get("alpha", 1.0))
    dims = int(int(group.options["dim"]) * float(group.options.get("partial_rotary_factor", 1.0)))
    base = float(group.options["base"]) * alpha ** (dims / (dims - 2))
    if not (isinstance(base, float) and math.isfinite(base) and base > 0):
        shown = "a complex number" if isinstance(base, complex) else repr(base)
        raise ConfigError("rope_scaling.alpha", f"{block.get('alpha')!r}: mlx-lm's DynamicNTKAlphaRoPE turns it into the "
                          f"base rope_theta · alpha^(d/(d − 2)) = {shown}, not a finite positive number: its frequencies "
                          "are not numbers pecli can measure")
    built = group if alpha == 1.0 else engine_built(group, {"base": base}, f"MLX: DynamicNTKAlphaRoPE (alpha {alpha:g})")
    kind = mlx_word(block)
    if not block or hf_record(kind) is DYNAMIC and "alpha" in block:
        return built, None  # transformers' HunYuan builds the same fixed base from a dynamic block with alpha
    return built, Departure("rope type", f"its model file ({NTK_ALPHA[module][2]}) builds one fixed base {base:,.6g} "
                            f"(rope_theta × alpha^(d/(d−2)), alpha {alpha:g}) whatever the block's type: not {kind}'s "
                            "frequencies", None)


def yarn_as_built(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """``YarnRoPE``: the correction range always rounded, cos and sin × mscale(s, mscale)/mscale(s, mscale_all_dim)."""
    if not rope_group(group) or scaling_record(group) is not YARN:
        return group, None
    from pecli.schemes.scaling.yarn import yarn_get_mscale

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
    return engine_built(group, {"rope_scaling": built}, "MLX: YaRN as mlx-lm builds it"), Departure(
        "YaRN", "; ".join(changes), None)


def own_deepseek_yarn(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """deepseek_v2.py's ``DeepseekV2YarnRotaryEmbedding`` (:82, built at :178-195): DeepSeek YaRN from any block
    (its factor, the rounded correction range, cos and sin × mscale(s, mscale)/mscale(s, mscale_all_dim)), as
    SGLang's DeepSeek model builds it (:func:`pecli.engines.configured.deepseek_rule`)."""
    if module_of(context.model_type) != "deepseek_v2":
        return group, None
    from dataclasses import replace

    from pecli.engines.configured import sglang_deepseek

    # its original length defaults to 4096 (deepseek_v2.py:89), not max_position_embeddings
    return sglang_deepseek(replace(context, block={"original_max_position_embeddings": DEEPSEEK_V2_ORIGINAL,
                                                   **(context.block or {})}), group)


#: ``DeepseekV2YarnRotaryEmbedding``'s original length without the block's (deepseek_v2.py:89).
DEEPSEEK_V2_ORIGINAL = 4096


#: phi3.py's ``ModelArgs`` defaults (mlx_lm/models/phi3.py:28-29): the lengths its ``SuScaledRoPE`` gets when the
#: config has no top-level key.
PHI3_LONGEST, PHI3_ORIGINAL = 131072, 4096


def _positive(value: Any, default: int | None) -> int | None:
    """A positive whole number of the config, else ``default``."""
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def longrope_long(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """``SuScaledRoPE``: the long factors at every length."""
    from pecli.schemes.scaling.longrope import longrope_attention_factor

    if not rope_group(group) or not scaling_record(group).per_pair_factors:
        return group, None
    block = scaling_of(group)
    # transformers' original length: the block's, else max_position_embeddings (_compute_longrope_parameters)
    model_original = block.get("original_max_position_embeddings") or group.options.get("max_position_embeddings")
    _, raw = text_of(context.config)
    phi3 = text_module(context.config, raw) == "phi3"
    if phi3:  # phi3.py:28-29,66-72: both lengths are top-level keys, 131,072 and 4,096 without them
        original = _positive(raw.get("original_max_position_embeddings"), PHI3_ORIGINAL)
        longest = _positive(raw.get("max_position_embeddings"), PHI3_LONGEST)
    else:  # initialize_rope (rope_utils.py:347-356): the block's original (a block without it is refused), the file's
        original = _positive(block.get("original_max_position_embeddings"), None)
        longest = _positive(group.options.get("max_position_embeddings"), None)
    if not model_original or original is None or longest is None:
        return group, Departure("LongRoPE factors", "uses the long factors at every length; pecli cannot tell the "
                                "lengths its magnitude reads from this config, so cannot be sure of its numbers", None)
    model_original = int(model_original)
    mscale = block.get("long_mscale") or longrope_attention_factor(longest / original, original)
    built = {k: v for k, v in block.items() if k not in ("short_factor", "attention_factor", "factor")}
    built.update(short_factor=list(block["long_factor"]), attention_factor=mscale)
    effect = f"uses the long factors at every length, where transformers uses the short ones up to {model_original:,} tokens"
    if original != model_original:
        effect += (f"; its magnitude takes the original length {original:,} from the top-level "
                   f"original_max_position_embeddings{'' if 'original_max_position_embeddings' in raw else ' (absent: its default)'}, "
                   f"where the model's is {model_original:,}")
    changes: dict[str, Any] = {"rope_scaling": built}
    if group.options.get("layout") != "half":  # SuScaledRoPE rotates halves whatever the file asks (rope_utils.py:52-55)
        changes["layout"] = "half"
        effect += f"; it rotates halves (rotate_half), where the model's {group.options.get('layout')} layout pairs neighbours"
    return engine_built(group, changes, "MLX: LongRoPE long factors at every length"), \
        Departure("LongRoPE factors", effect, None)


#: mlx-lm's prefill step (``generate_step``'s ``prefill_step_size``, generate.py:323; ``--prefill-step-size``).
PREFILL_STEP = 2048


def dynamic_prefill(context: Context, group: LayerGroup) -> tuple[LayerGroup, Departure | None]:
    """``DynamicNTKScalingRoPE`` (rope_utils.py:258-262) in mlx-lm's prefill (generate.py:437-450): the prompt but
    its last token is run in chunks of 2,048, each rotated with base·(s·n/L − (s − 1))^(d/(d−2)) for n = the
    chunk's end (at least L), where transformers rotates the whole prompt with n = its length. The numbers at
    one position (a decoding step) are transformers'; a prompt longer than L is not, which the probed numbers do
    not show: said as a difference of its own."""
    if not rope_group(group) or not scaling_record(group).grows_base:
        return group, None
    block, options = scaling_of(group), group.options
    longest = int(options.get("max_position_embeddings") or 0)
    dims = int(int(options["dim"]) * float(options.get("partial_rotary_factor", 1.0)))
    factor = float(block.get("factor") or 1.0)
    if dims <= 2 or factor <= 1:
        return group, None
    if not longest:  # the model file passes its own default max_position_embeddings then: not measured
        return group, Departure("dynamic NTK", "raises its base past a max_position_embeddings the config does not "
                                "give (its model file's default): pecli cannot be sure of its numbers", None)

    def base_at(tokens: int) -> float:
        return float(options["base"]) * (factor * max(tokens, longest) / longest - (factor - 1)) ** (dims / (dims - 2))

    prompt = 2 * longest
    first = min(PREFILL_STEP, prompt - 1)
    effect = (f"a prompt longer than {longest:,} tokens is prefilled {PREFILL_STEP:,} tokens at a time, each chunk "
              f"rotated with the base of its own end, where transformers rotates the whole prompt with the base of its "
              f"length (a prompt of {prompt:,} tokens: its first chunk at base {base_at(first):,.6g}, transformers' "
              f"{base_at(prompt):,.6g}); one token at a time (decoding) it is transformers' rule")
    return group, Departure("dynamic NTK prefill", effect,
                            "--prefill-step-size at least the prompt's length runs it as one chunk (its last token "
                            "still a step of its own)", beyond_numbers=True)


@dataclass(frozen=True)
class Mlx(ConfigEngine):
    """MLX (see the module)."""

    def loaded(self, config: dict[str, Any]) -> dict[str, Any]:
        """The config as mlx-lm's model file reads it (its ``ModelArgs`` fields, top-level keys and their
        defaults), said in transformers' keys: one flat ``rope_parameters`` (Gemma 3: per layer type), each
        block's type as ``initialize_rope`` compares it (:func:`_blocks_as_compared`)."""
        return _blocks_as_compared(self._fields_read(config))

    def _fields_read(self, config: dict[str, Any]) -> dict[str, Any]:
        """The config's position keys as the model file's ``ModelArgs`` fields read them (see :meth:`loaded`)."""
        from pecli.engines.base import with_text
        from pecli.engines.mlx_load_refusals import CHECKED_BLOCKS, checked_word

        path, text = text_of(config)
        module = text_module(config, text)
        fields = FIELDS.get(module or "", {})
        if module in LEGACY_SCALING_UNREAD and not isinstance(text.get("rope_parameters"), dict) and \
                isinstance(text.get("rope_scaling"), dict):
            return with_text(config, path, {**text, "rope_scaling": None})
        if module in READS_ROPE_PARAMETERS or not ({"rope_theta", "rotary_emb_base"} & set(fields)):
            return config
        seen = {k: v for k, v in text.items() if k not in MOVED_KEYS}
        base = _field(text, fields, "rope_theta", "rotary_emb_base")
        fraction = _field(text, fields, "partial_rotary_factor", "rotary_pct")
        block = _field(text, fields, "rope_scaling") if "rope_scaling" in fields else None
        block = dict(block) if isinstance(block, dict) else {}
        if not _number(base) or (fraction is not None and not _number(fraction)):
            return config  # not a number: the config reader says so (exit 2)
        if module in SCALING_NOT_APPLIED or module in NTK_ALPHA or module in CHECKED_BLOCKS and block and \
                not CHECKED_BLOCKS[module][2].holds(checked_word(block, CHECKED_BLOCKS[module][1])):
            block = {}  # dropped by the model file's __post_init__, or not built as a scaling (ntk_alpha)
        if module == "hunyuan" and _number(text.get("hidden_size")) and _number(text.get("num_attention_heads")):
            seen["head_dim"] = int(text["hidden_size"]) // int(text["num_attention_heads"])  # hunyuan.py:84
        flat = {"rope_type": mlx_word(block), "rope_theta": float(base),
                **{k: v for k, v in block.items() if k not in ("type", "rope_type")}}
        if fraction is not None:
            flat["partial_rotary_factor"] = float(fraction)
        elif _fraction_given(text):  # the file has no such field: its code rotates the whole head
            flat["partial_rotary_factor"] = 1.0
        if "head_dim" not in text and isinstance(fields.get("head_dim"), int):
            seen["head_dim"] = fields["head_dim"]
        if module in SLIDING_UNSCALED and block:  # per layer type: the sliding layers unscaled
            seen.pop("rope_theta", None), seen.pop("rope_scaling", None)
            unscaled = {"rope_type": NO_SCALING.hf_name, **{k: v for k, v in flat.items() if k in ("rope_theta", "partial_rotary_factor")}}
            seen["rope_parameters"] = {"full_attention": flat, "sliding_attention": unscaled}
        elif not isinstance(text.get("rope_parameters"), dict):  # the legacy keys, as the file gives them
            seen.update(rope_theta=flat.pop("rope_theta"), **({"partial_rotary_factor": flat.pop("partial_rotary_factor")}
                                                             if "partial_rotary_factor" in flat else {}))
            seen["rope_scaling"] = flat if block else None
        elif module == "gemma3_text":
            local = float(seen.pop("rope_local_base_freq", 10000.0))
            seen["rope_parameters"] = {"full_attention": flat,
                                       "sliding_attention": {"rope_type": NO_SCALING.hf_name, "rope_theta": local}}
        else:
            seen["rope_parameters"] = flat
        return with_text(config, path, seen)

    def override_departures(self, config: Mapping[str, Any], overrides: Mapping[str, Any]) -> list[Departure]:
        """What the model file's reading of config.json changes (:meth:`loaded`): the base, the scaling, the
        rotated fraction, each said where it differs from the config's own."""
        from pecli.engines.base import text_of

        before, after = _settings(text_of(config)[1]), _settings(text_of(self.loaded(dict(config)))[1])
        module = text_module(config, text_of(config)[1])
        found = []
        top = "write rope_theta and rope_scaling as top-level keys (transformers 4's form) in the model folder's config.json"
        if before["base"] != after["base"] and _number(after["base"]) and _number(before["base"]):
            found.append(Departure("base", f"its model file ({module}.py) does not read this config's rope_parameters: "
                                   f"base {after['base']:g} (the file's default) where the config gives "
                                   f"{before['base']:g}", top))
        if before["type"] != after["type"] and module in LEGACY_SCALING_UNREAD:
            found.append(Departure("scaling", f"its model file ({module}.py) builds {after['type']} where the config "
                                   f"says {before['type']} (it reads the scaling from rope_parameters only)",
                                   "write the rope block as rope_parameters (transformers 5's form) in the model "
                                   "folder's config.json"))
        elif before["type"] != after["type"] and module not in NTK_ALPHA:  # ntk_alpha says what it builds
            found.append(Departure("scaling", f"its model file ({module}.py) builds {after['type']} where the config "
                                   f"says {before['type']} (it reads rope_scaling as a top-level key only, and checks "
                                   "its type)", top if isinstance(config.get("rope_parameters"), dict) else None))
        if before["fraction"] != after["fraction"] and _number(before["fraction"]) and _number(after["fraction"]):
            found.append(Departure("rotated components", f"its model file ({module}.py) rotates {after['fraction']:g} of "
                                   f"each head where the config says {before['fraction']:g}",
                                   "give partial_rotary_factor as a top-level key" if module in FIELDS and
                                   "partial_rotary_factor" in FIELDS[module] else None))
        return found

    def load_refusal(self, config: dict[str, Any], text: dict[str, Any], model_type: str | None) -> str | None:
        from pecli.engines.base import text_of
        from pecli.engines.mlx_load_refusals import (
            BUILD_KEYS, CHECKED_BLOCKS, INITIALIZE_ROPE_KEYS, MODULES, NEEDS_PACKAGE, NO_LENGTH_PASSED, NULL_FIELD_ERRORS,
            checked_word,
        )

        model_type = config.get("model_type") or model_type  # mlx-lm loads the top-level model type's file
        module = module_of(model_type)
        if module is None or module not in MODULES:
            return f"ValueError: Model type {model_type} not supported."
        _, raw = text_of(config)
        module = text_module(config, raw)
        module = TEXT_FILES.get(module or "", module)
        fields = FIELDS.get(module or "", {})
        if module in NEEDS_PACKAGE:
            return NEEDS_PACKAGE[module]
        if module in NULL_FIELD_ERRORS and raw.get(NULL_FIELD_ERRORS[module][0]) is None:
            return NULL_FIELD_ERRORS[module][1]
        block = raw.get("rope_scaling")
        if module in NTK_ALPHA and isinstance(block, dict) and block and not all(k in block for k in NTK_ALPHA[module][0]):
            return f"ValueError: rope_scaling must contain keys {set(NTK_ALPHA[module][0])}"
        if module in CHECKED_BLOCKS and isinstance(raw.get("rope_scaling"), dict) and raw["rope_scaling"]:
            needed, key, types, other = CHECKED_BLOCKS[module]
            if not all(name in raw["rope_scaling"] for name in needed):
                return f"ValueError: rope_scaling must contain keys {set(needed)}"
            word = checked_word(raw["rope_scaling"], key)
            if word is None:
                return "ValueError: rope_scaling must contain either 'type' or 'rope_type'"
            if not types.holds(word) and other != "drop":
                return other
        # BaseModelArgs.from_dict (mlx_lm/models/base.py:14-21) passes every key the config has, null too
        missing = [name for name, default in fields.items() if default == REQUIRED and name not in raw]
        if missing:
            names = " and ".join(", ".join(repr(m) for m in missing[:-1]).split(", ") + [repr(missing[-1])]) \
                if len(missing) > 1 else repr(missing[0])
            plural = "s" if len(missing) > 1 else ""
            return f"TypeError: ModelArgs.__init__() missing {len(missing)} required positional argument{plural}: {names}"
        if module in NTK_ALPHA:  # no initialize_rope: only alpha is read
            if NTK_ALPHA[module][1] and not isinstance(block, dict):
                return "TypeError: 'NoneType' object is not subscriptable"
            if NTK_ALPHA[module][1] and "alpha" not in block:
                return "KeyError: 'alpha'"
            return _alpha_failure(raw, block, head_dim_read=module == "hunyuan_v1_dense")
        missing = [key for key in BUILD_KEYS.get(module, ()) if isinstance(block, dict) and block and key not in block]
        if missing:
            return f"KeyError: '{missing[0]}'"
        if module in LEGACY_SCALING_UNREAD:
            block = raw.get("rope_parameters")
        elif module in READS_ROPE_PARAMETERS:
            block = raw.get("rope_parameters") if isinstance(raw.get("rope_parameters"), dict) else raw.get("rope_scaling")
        else:
            block = raw.get("rope_scaling") if "rope_scaling" in fields else None
        kind = mlx_word(block if isinstance(block, dict) else None)
        if module not in OWN_ROPE and module not in SCALING_NOT_APPLIED:  # the others never call initialize_rope with it
            if not BUILT_TYPES.holds(kind):
                return f"ValueError: Unsupported RoPE type {kind}"
            missing = [key for key in looked_up(INITIALIZE_ROPE_KEYS, kind, ()) if key not in (block or {})]
            if missing:
                return f"KeyError: '{missing[0]}'"
            failing = looked_up(NO_LENGTH_PASSED.get(module, ()), kind)
            if failing is not None:
                return failing
        fraction = _field(raw, fields, "partial_rotary_factor", "rotary_pct")
        if _number(fraction) and module not in READS_ROPE_PARAMETERS:
            from pecli.models.families.keys import Keys
            from pecli.models.families.record import GENERIC
            from pecli.models.families.rope import head_dim

            try:
                size = int(raw["head_dim"]) if isinstance(raw.get("head_dim"), int) else head_dim(Keys(raw, "config"), GENERIC)
            except ConfigError:
                return None
            dims = int(size * float(fraction))
            if dims % 2:
                return f"ValueError: [rope] dims must be even but got {dims}."
        return None

    def serving(self, base: Any, patch: Mapping[str, Any], target: int,
                config: Mapping[str, Any] | None = None) -> Serving:
        from pecli.engines.served import checked, nested, patch_keys

        keys, block = patch_keys(patch, base.path)
        kind = rope_type(block)
        if not BUILT_TYPES.holds(kind):
            return Serving("mlx", (), None, (), f"mlx-lm's initialize_rope refuses rope type {kind} (Unsupported RoPE "
                           "type)", version=self.version)
        warnings = ["mlx-lm takes no RoPE flags: merge the patch into the model folder's config.json"]
        module = module_of(base.model_type)
        if isinstance(keys.get("rope_parameters"), dict) and module not in READS_ROPE_PARAMETERS:
            keys = legacy_keys(keys)
            warnings.append(f"mlx-lm's {module}.py reads rope_theta and rope_scaling as top-level keys, not "
                            "rope_parameters: the patch is written in that form")
        serving = Serving("mlx", (), target, tuple(warnings), None, nested(keys, base.path), version=self.version)
        return checked(self, serving, patch, config)


def legacy_keys(keys: Mapping[str, Any]) -> dict[str, Any]:
    """A patch's ``rope_parameters`` as the top-level keys most mlx-lm files read: ``rope_theta``,
    ``partial_rotary_factor`` and a ``rope_scaling`` block (null without a scaling)."""
    block = dict(keys["rope_parameters"])
    out = {k: v for k, v in keys.items() if k != "rope_parameters"}
    for key in ("rope_theta", "partial_rotary_factor"):
        if key in block:
            out[key] = block.pop(key)
    out["rope_scaling"] = block if hf_record(rope_type(block)) is not NO_SCALING else None
    return out


ENGINE = Mlx("mlx", "MLX", VERSION, "mlx_lm/models/rope_utils.py (initialize_rope), mlx_lm/models/<model>.py, "
             "mlx_lm/utils.py", no_flags="none: it reads the model folder's config.json",
             measured=MEASURED_TYPES, rules=(ntk_alpha, yarn_as_built, longrope_long, own_deepseek_yarn, dynamic_prefill))
