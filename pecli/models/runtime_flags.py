"""llama.cpp's RoPE flags over a model: what llama.cpp computes when run with them. The one reader of
those flags: ``pecli diff --runtime llama.cpp --args "…"`` reads them here, and ``pecli extend --runtime
llama.cpp`` checks the flags it prints here (:mod:`pecli.engines.llama_cpp`).

The flags (llama.cpp ``common/arg.cpp``): ``--rope-scaling {none,linear,yarn}`` the scaling type;
``--rope-scale N`` the frequency scale 1/N ("expands context by a factor of N"); ``--rope-freq-scale F``
the frequency scale F; ``--rope-freq-base B``; ``--yarn-orig-ctx N``; ``--yarn-ext-factor``,
``--yarn-attn-factor``, ``--yarn-beta-fast``, ``--yarn-beta-slow``; ``-c/--ctx-size N``. A flag not given
is unset (type ``UNSPECIFIED``, scales and base 0, YaRN values negative), and the context's constructor
(``src/llama-context.cpp``, ``llama_context::llama_context``) then takes the model's, in this order:

1. type unset → the type the model was trained with (``hparams.rope_scaling_type_train``);
2. base 0 → the model's base; frequency scale 0 → the model's (``rope_freq_scale_train``); original
   context 0 → the model's ``n_ctx_orig_yarn``, else its training context; context 0 → its training context;
3. type ``none`` → the frequency scale is forced to 1 ("never scale if scaling type is none");
4. ext_factor unset → 1 for ``yarn``, else 0;
5. ext_factor ≠ 0 → the attention factor is recomputed as YaRN's mscale 0.1 ln(1/scale) + 1, or from the
   file's YaRN log multiplier (DeepSeek's, Ministral 3's) as :func:`pecli.models.gguf_rope.cos_sin_factor`
   says; a given ``--yarn-attn-factor`` is then not used.

A layer that attends within a window (sliding or chunked: ``hparams.is_swa(il)``) runs the model's
trained base and scale whatever the flags (``llama_model::get_rope_freq_base``/``get_rope_freq_scale``:
``rope_freq_base_train_swa``, ``rope_freq_scale_train_swa``); the type, ext_factor and attention factor
of the context still reach it, and its YaRN factor is its own scale's. So ``--rope-freq-base`` or
``--rope-scale`` change Gemma 2's and Gemma 3's full-attention layers only, and none of Llama 4's RoPE
layers (all chunked). Two graphs do otherwise (:data:`~pecli.models.gguf_rope.SWA_ROPE`): Command R7B's sliding layers take the
context's base and scale, OLMo 2/3's the context's base alone. The context run is ``-c`` (else the file's
``context_length``) rounded up to a multiple of 256. Every rule is measured against llama.cpp built from
source (``tests/fixtures/engines/llama_cpp/RULES.md``).

The model's values are what its GGUF file holds (``src/llama-model.cpp``, ``load_hparams``): no
``rope.scaling.type`` key reads as **linear**; no ``rope.scaling.factor`` as scale 1; no
``rope.scaling.original_context_length`` as the training context. For a model read from a HF
``config.json`` (not a GGUF file), the file is what ``convert_hf_to_gguf.py`` writes from it
(``TextModel.set_gguf_parameters``): a ``linear`` or ``yarn`` block with a factor gives that type and
factor (yarn: its original length, β_fast, β_slow, extrapolation factor); ``longrope`` the longrope type
and its factor tensors; no block, ``default``, ``dynamic`` or ``llama3`` no type at all — llama.cpp reads
**linear** with scale 1, and llama3's per-pair divisors become the ``rope_freqs`` tensor. So
``--rope-scale 4`` alone on a converted Llama without scaling interpolates linearly by 4 (scale 0.25).
A few model classes of the converter write ``none`` themselves (:data:`CONVERTER_NONE`); on those,
``--rope-scale`` alone changes nothing. dynamic NTK has no llama.cpp counterpart: its model runs the
plain frequencies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

import numpy as np

from pecli.errors import ConfigError
from pecli.flag_words import flag_pairs, split_words
from pecli.schemes.frequencies import DEFAULT_BASE
from pecli.models.llama_cpp_scaling import FLAG_WORDS, Converted, of_hf, of_word, word_of
from pecli.models.plan import LayerGroup, Origin, PositionPlan, Source, stamped
from pecli.schemes.scaling.rope_type import hf_rope_type
from pecli.schemes.scaling.linear import LINEAR
from pecli.schemes.scaling.unscaled import NO_SCALING

#: The flags read, and the type of their value.
FLAGS = {"--rope-scaling": str, "--rope-scale": float, "--rope-freq-scale": float, "--rope-freq-base": float,
         "--yarn-orig-ctx": int, "--yarn-ext-factor": float, "--yarn-attn-factor": float, "--yarn-beta-fast": float,
         "--yarn-beta-slow": float, "--ctx-size": int}
#: How a message names the value each type of flag takes.
KIND_WORDS = {str: "a word", int: "a whole number", float: "a number"}
#: llama.cpp keeps its lengths in 32-bit signed integers (``common_params.n_ctx``, ``yarn_orig_ctx``).
INT32_MAX = (1 << 31) - 1
#: Other spellings llama.cpp takes for the same flags.
ALIASES = {"-c": "--ctx-size"}
#: The types ``--rope-scaling`` takes (:data:`pecli.models.llama_cpp_scaling.FLAG_WORDS`).
TYPES = FLAG_WORDS
#: HF model types whose converter class writes ``rope.scaling.type`` none (``convert_hf_to_gguf.py``:
#: ``CommandR2Model``, ``Cohere2Model``, ``DeepseekModel`` call ``add_rope_scaling_type(NONE)``).
#: ``NemotronModel`` writes none without a factor and linear with one (:func:`converted_rope`).
CONVERTER_NONE = ("cohere", "cohere2", "deepseek")


@dataclass(frozen=True)
class TrainedRope:
    """What llama.cpp loads from a model's GGUF file for its RoPE (``hparams``), before any flag.

    ``ext_factor`` is negative when the file does not set it; ``factors`` are the ``rope_freqs`` divisors;
    ``yarn_attn_factor`` and ``log_multiplier`` are YaRN's keys of the file (``rope.scaling.yarn_attn_factor``,
    ``rope.scaling.yarn_log_multiplier``), ``deepseek`` whether it is of DeepSeek's architecture, ``attn_factor``
    the file's ``rope.scaling.attn_factor`` (``hparams.rope_attn_factor``, on cos and sin whatever the flags).
    LongRoPE: ``factors`` the short factors, ``long_factors`` the long ones, ``original`` the file's
    ``original_context_length`` (``hparams.n_ctx_orig_yarn``, which the choice between them reads).
    """

    scaling_type: str
    base: float
    freq_scale: float
    context: int
    original: int
    ext_factor: float = -1.0
    beta_fast: float = 32.0
    beta_slow: float = 1.0
    factors: np.ndarray | None = None
    yarn_attn_factor: float = 1.0
    log_multiplier: float = 0.0
    deepseek: bool = False
    attn_factor: float = 1.0
    long_factors: np.ndarray | None = None


def parse_flags(args: str) -> dict[str, Any]:
    """``"--rope-scale 4 -c 8192"`` → ``{"--rope-scale": 4.0, "--ctx-size": 8192}``, read as
    llama.cpp's parser reads a command line (``common/arg.cpp``, ``common_params_parse_ex``): ``--flag value``
    only (``--rope-scale=4`` is not a flag it knows: "invalid argument"), ``_`` read as ``-`` in a word starting
    with ``--``, a flag given again takes its last value; an unknown flag or a bad value is a ConfigError."""
    def refusal(flag: str) -> str | None:
        if ALIASES.get(flag, flag) in FLAGS:
            return None
        if "=" in flag and flag.partition("=")[0] in FLAGS:
            return (f"{flag!r}: llama.cpp's parser takes a flag and its value as two words (--flag value), not "
                    "--flag=value (it refuses the line: invalid argument)")
        return f"{flag!r} is not a llama.cpp RoPE flag pecli reads ({', '.join(FLAGS)})"

    flags: dict[str, Any] = {}
    for flag, value in flag_pairs(split_words(args), refusal, equals=False, spelling=_llama_cpp_spelling):
        flag = ALIASES.get(flag, flag)
        flags.pop(flag, None)  # a flag given again: its last value, in the place of its last appearance
        flags[flag] = value
    return checked_flags(flags)


def _llama_cpp_spelling(word: str) -> str:
    """A word as llama.cpp's parser looks it up: ``_`` replaced by ``-`` in a word starting with ``--``."""
    return word.replace("_", "-") if word.startswith("--") else word


def checked_flags(flags: Mapping[str, Any]) -> dict[str, Any]:
    """``flags`` ({flag: value}, values as given or typed) typed and checked as llama.cpp would take them."""
    out: dict[str, Any] = {}
    for flag, value in flags.items():
        flag = ALIASES.get(flag, flag)
        if flag not in FLAGS:
            raise ConfigError("args", f"{flag!r} is not a llama.cpp RoPE flag pecli reads ({', '.join(FLAGS)})")
        out[flag] = number = _flag_value(flag, value)
        # llama.cpp keeps these as float32 and int32: a value that does not survive is refused, not reinterpreted
        # (a scale that rounds to 0 would read as "not given")
        if isinstance(number, float) and not _float32_holds(number):
            raise ConfigError("args", f"{flag} takes a number a float32 holds, got {value!r}")
        if isinstance(number, int) and abs(number) > INT32_MAX:
            raise ConfigError("args", f"{flag} takes a whole number up to {INT32_MAX:,}, got {value!r}")
    if out.get("--rope-scaling", "none") not in TYPES:
        raise ConfigError("args", f"--rope-scaling is {', '.join(TYPES)} in llama.cpp, got {out['--rope-scaling']!r}")
    if "--rope-scale" in out and "--rope-freq-scale" in out:
        # both set common_params.rope_freq_scale (common/arg.cpp): the one given last wins
        first = next(flag for flag in out if flag in ("--rope-scale", "--rope-freq-scale"))
        out.pop(first)
    for flag in ("--rope-scale", "--rope-freq-scale", "--rope-freq-base", "--yarn-orig-ctx", "--ctx-size"):
        if out.get(flag, 1) < 0 or (flag == "--rope-scale" and out.get(flag) == 0):
            raise ConfigError("args", f"{flag} takes a positive number, got {out[flag]!r}")
    return out


def _flag_value(flag: str, value: Any) -> Any:
    """A flag's value as llama.cpp reads it: a word as given; a number by ``std::stof``/``std::stoi``
    (:mod:`pecli.models.c_numbers`), not Python's ``float``/``int``. A value llama.cpp reads no number
    from is refused as llama.cpp refuses it; one it reads only in part (``1_000``: ``1``) is refused too,
    naming what llama.cpp would take — pecli does not compare a setting the user did not mean."""
    from pecli.models.c_numbers import c_prefix

    kind = FLAGS[flag]
    if kind is str or isinstance(value, bool):
        if kind is not str:
            raise ConfigError("args", f"{flag} takes {KIND_WORDS[kind]}, got {value!r}")
        return str(value)
    if isinstance(value, (int, float)):
        if kind is int and not float(value).is_integer():
            raise ConfigError("args", f"{flag} takes {KIND_WORDS[kind]}, got {value!r}")
        return kind(value)
    reader = "std::stof" if kind is float else "std::stoi"
    number, rest = c_prefix(str(value), kind)
    if number is None:
        raise ConfigError("args", f"{flag} takes {KIND_WORDS[kind]}, got {value!r}: llama.cpp's {reader} reads no "
                          "number from it (ASCII digits only) and llama.cpp stops")
    if rest:
        read = str(value).lstrip(" \t\n\v\f\r")[:len(str(value).lstrip(" \t\n\v\f\r")) - len(rest)]
        raise ConfigError("args", f"{flag} {value!r}: llama.cpp's {reader} would read only {read!r} ({number:g}) and "
                          f"ignore {rest!r}; write the number in plain ASCII digits")
    return number


def _float32_holds(number: float) -> bool:
    """Whether ``number`` stays a finite number, and not 0 unless it was, as a float32 (``std::stof`` throws
    ``out_of_range`` where ``strtof`` overflows or underflows: past FLT_MAX, or under FLT_MIN but not 0)."""
    with np.errstate(over="ignore", under="ignore"):
        single = np.float32(number)
    tiny = float(np.finfo(np.float32).tiny)
    return bool(np.isfinite(single)) and (number == 0 or abs(number) >= tiny)


def converted_rope(block: Mapping[str, Any] | None, *, model_type: Any, base: float, context: int,
                   rotated_dim: int) -> TrainedRope:
    """What llama.cpp loads from the GGUF file ``convert_hf_to_gguf.py`` writes for a HF model with the
    scaling ``block`` (see the module notes): the training type llama.cpp sees, its scale and lengths.

    Raises
    ------
    ConfigError
        (key ``runtime``) A longrope block (its short and long factor tensors are not read with flags
        here) or a type the converter does not know.
    """
    block = block or {}
    kind = str(hf_rope_type(block))
    factor = block.get("factor")
    linear, none = word_of(LINEAR), word_of(NO_SCALING)
    if model_type == "nemotron":  # NemotronModel: linear by its factor whatever the type, else none
        return TrainedRope(linear, base, 1.0 / float(factor), context, context) if factor else \
            TrainedRope(none, base, 1.0, context, context)
    default = none if model_type in CONVERTER_NONE else linear
    entry = of_hf(kind)
    if entry is None:
        raise ConfigError("runtime", f"the model's {kind} scaling is not one pecli applies llama.cpp's flags over")
    if entry.converted is Converted.TYPE and factor and not entry.ramps:
        return TrainedRope(entry.word, base, 1.0 / float(factor), context, context)
    if entry.converted is Converted.TYPE and factor:
        # the converter writes the block's extrapolation_factor, attention_factor and β (conversion/base.py), but
        # the loader reads them for a few architectures only (YARN_KEYS_READ); the others keep llama-hparams.h's
        read = YARN_KEYS_READ.get(str(model_type), ())
        ext = block.get("extrapolation_factor") if "extrapolation_factor" in read else None
        attention = block.get("attention_factor", block.get("attn_factor")) if "attention_factor" in read else None
        fast = block.get("beta_fast") if "beta_fast" in read else None
        slow = block.get("beta_slow") if "beta_slow" in read else None
        return TrainedRope(entry.word, base, 1.0 / float(factor), context,
                           int(block.get("original_max_position_embeddings") or context),
                           -1.0 if ext is None else float(ext), float(fast or 32.0), float(slow or 1.0),
                           yarn_attn_factor=1.0 if attention is None else float(attention),
                           **_log_multiplier(block, model_type))
    if entry.converted is Converted.DIVISORS:
        return TrainedRope(default, base, 1.0, context, context, factors=_llama3_divisors(block, base, rotated_dim))
    if entry.converted is Converted.FACTOR_TENSORS:
        return _longrope_converted(block, base, context, rotated_dim)
    return TrainedRope(default, base, 1.0, context, context)


def _longrope_converted(block: Mapping[str, Any], base: float, context: int, rotated_dim: int) -> TrainedRope:
    """What ``Phi3MiniModel`` (``conversion/phi.py``) writes for a LongRoPE block: no scaling type (llama.cpp
    reads linear, scale 1), ``original_context_length``, the two factor tensors, and ``rope.scaling.attn_factor``
    √(1 + ln(L/L₀)/ln L₀) (1 when L ≤ L₀) computed from the lengths — a block's own ``attention_factor`` is not
    written."""
    original = block.get("original_max_position_embeddings")
    short, long = block.get("short_factor"), block.get("long_factor")
    if not original or not short or not long or len(short) != len(long) or 2 * len(long) != rotated_dim:
        raise ConfigError("runtime", "convert_hf_to_gguf.py converts a LongRoPE block with original_max_position_embeddings "
                          f"and {rotated_dim // 2} short and long factors; this one does not have them")
    scale = context / float(original)
    attention = math.sqrt(1 + math.log(scale) / math.log(float(original))) if scale > 1.0 else 1.0
    as_float32 = lambda values: np.asarray(values, dtype=np.float32).astype(np.float64)  # noqa: E731  (F32 tensors)
    return TrainedRope(word_of(LINEAR), base, 1.0, context, int(original), factors=as_float32(short),
                       long_factors=as_float32(long), attn_factor=attention)


#: The yarn block's keys llama.cpp's loader reads back from the converted file, by HF model type: Grok's
#: ``load_arch_hparams`` reads ext_factor, attn_factor and β; Mistral 3's β (``src/models/grok.cpp``,
#: ``mistral3.cpp``). Every other architecture keeps llama-hparams.h's defaults whatever the file holds.
YARN_KEYS_READ = {"grok-1": ("extrapolation_factor", "attention_factor", "beta_fast", "beta_slow"),
                  "ministral3": ("beta_fast", "beta_slow"), "mistral3": ("beta_fast", "beta_slow")}

#: HF model types ``convert_hf_to_gguf.py`` writes as DeepSeek's architecture (``DeepseekV2Model``), whose
#: YaRN log multiplier is 0.1 × ``mscale_all_dim``; Ministral 3 (``Ministral3Model``) writes ``mscale_all_dim``.
DEEPSEEK_CONVERTED = ("deepseek_v2", "deepseek_v3", "kimi_k2")


def _log_multiplier(block: Mapping[str, Any], model_type: Any) -> dict[str, Any]:
    """The YaRN log multiplier the converter writes for a yarn ``block`` of ``model_type``, and the architecture."""
    all_dim = block.get("mscale_all_dim")
    if model_type in DEEPSEEK_CONVERTED:
        return {"log_multiplier": 0.1 * float(all_dim) if all_dim else 0.0, "deepseek": True}
    if model_type == "ministral3" and all_dim is not None:
        return {"log_multiplier": float(all_dim)}
    return {}


def _llama3_divisors(block: Mapping[str, Any], base: float, rotated_dim: int) -> np.ndarray:
    """llama3's per-pair divisors θ_i / θ'_i, as the converter writes them to ``rope_freqs``."""
    from pecli.schemes.scaling.compute import compute_inv_freq
    from pecli.schemes.scaling.value import RopeScaling

    scaled = compute_inv_freq(base=base, rotated_dim=rotated_dim, scaling=RopeScaling.from_hf(dict(block)))
    return scaled.original_inv_freq / scaled.inv_freq


def converted_context(options: Mapping[str, Any]) -> int:
    """The ``context_length`` ``convert_hf_to_gguf.py`` writes for a model whose rope options are ``options``
    (``TextModel.set_gguf_parameters``: ``max_position_embeddings``, ``n_ctx``, ``n_positions``, …, which the
    family reads into ``max_position_embeddings``). ConfigError without one: llama.cpp's loader requires
    ``context_length`` (``load_hparams``: ``get_key(LLM_KV_CONTEXT_LENGTH, …)``, required)."""
    context = options.get("max_position_embeddings")
    if not context:
        raise ConfigError("runtime", "llama.cpp's loader requires the GGUF key context_length, which "
                          "convert_hf_to_gguf.py writes from max_position_embeddings (or n_ctx, n_positions); this "
                          "config gives none")
    return int(context)


def run_rope(trained: TrainedRope, flags: Mapping[str, Any], rotated_dim: int, *, windowed: bool = False,
             plain: bool = False):
    """The :class:`~pecli.models.gguf_rope.LlamaCppRope` llama.cpp computes from the model's ``trained`` values
    and its command-line ``flags`` (the rule of the module notes, in its order); ``windowed``: for a layer
    that attends within a window, which keeps the trained base and scale; ``plain``: a sliding layer of an
    architecture whose graph rotates it with the context's base and nothing else (:data:`~pecli.models.gguf_rope.SWA_ROPE`)."""
    from pecli.models.gguf_rope import LlamaCppRope, cos_sin_factor

    flags = checked_flags(flags)
    kind = flags.get("--rope-scaling") or trained.scaling_type
    # the context's scale (cparams.rope_freq_scale): the last of --rope-scale and --rope-freq-scale, as
    # common/arg.cpp sets the one field in the order given (checked_flags keeps that one)
    context_scale = 1.0 / flags["--rope-scale"] if "--rope-scale" in flags else \
        (flags.get("--rope-freq-scale") or trained.freq_scale)
    entry = of_word(kind)
    context_scale = context_scale if entry.scales else 1.0
    if windowed:
        base, scale = trained.base, trained.freq_scale
    else:
        base, scale = flags.get("--rope-freq-base") or trained.base, context_scale
    original = flags.get("--yarn-orig-ctx") or trained.original or trained.context
    ext = flags.get("--yarn-ext-factor", trained.ext_factor)
    ext = ext if ext >= 0 else (1.0 if entry.ramps else 0.0)
    factors = trained.factors
    if trained.long_factors is not None:
        # llama_model::get_rope_factors: the long factors when the served context (n_ctx_seq) passes the file's
        # original context (hparams.n_ctx_orig_yarn, which --yarn-orig-ctx does not change)
        factors = trained.long_factors if served_context(trained, flags) > trained.original else trained.factors
    beta_fast = flags.get("--yarn-beta-fast", -1.0)
    beta_slow = flags.get("--yarn-beta-slow", -1.0)
    attention = cos_sin_factor(context_scale, ext, attn_factor=trained.attn_factor,
                               yarn_attn_factor=given_attn_factor(flags, trained),
                               log_multiplier=trained.log_multiplier, deepseek=trained.deepseek)
    if ext != 0 and scale != context_scale:
        # the context's factor cancels 1 + 0.1 ln(1/s) of the context's scale; ggml's rope_yarn multiplies by that
        # of the layer's own scale (ggml-cpu/ops.cpp, rope_yarn): a windowed layer keeps the difference
        attention *= (1.0 + 0.1 * math.log(1.0 / scale)) / (1.0 + 0.1 * math.log(1.0 / context_scale))
    if plain:
        return LlamaCppRope(int(rotated_dim), float(base), 1.0, 0.0, int(original), trained.beta_fast, trained.beta_slow,
                            1.0, None, None, kind)
    return LlamaCppRope(int(rotated_dim), float(base), float(scale), float(ext), int(original),
                        beta_fast if beta_fast >= 0 else trained.beta_fast, beta_slow if beta_slow >= 0 else trained.beta_slow,
                        float(attention), factors, None, kind)


#: llama.cpp rounds the context up to a multiple of this (``llama_context``'s constructor: ``GGML_PAD(n_ctx, 256)``).
CONTEXT_PAD = 256


def padded_context(n_ctx: int) -> int:
    """The context llama.cpp runs for a requested ``n_ctx``: rounded up to a multiple of :data:`CONTEXT_PAD`."""
    return -(-int(n_ctx) // CONTEXT_PAD) * CONTEXT_PAD


def given_attn_factor(flags: Mapping[str, Any], trained: TrainedRope) -> float:
    """The context's YaRN attention factor before its recomputation: ``--yarn-attn-factor`` when given and not
    negative (negative is "not set"), else the file's (``llama_context``'s constructor, llama-context.cpp:115)."""
    given = flags.get("--yarn-attn-factor")
    return float(given) if given is not None and given >= 0 else trained.yarn_attn_factor


def served_context(trained: TrainedRope, flags: Mapping[str, Any]) -> int:
    """The context llama.cpp runs: ``--ctx-size``, else (0 or not given) the model's training context, rounded up
    to a multiple of 256 (:func:`padded_context`)."""
    return padded_context(int(checked_flags(flags).get("--ctx-size") or trained.context))


def served_context_of_file(values: Mapping[str, Any], flags: Mapping[str, Any]) -> int:
    """:func:`served_context` of a GGUF file's metadata (its ``context_length``, which the loader requires)."""
    arch = values.get("general.architecture")
    return padded_context(int(checked_flags(flags).get("--ctx-size") or values[f"{arch}.context_length"]))


def hf_settings(rope) -> dict[str, Any]:
    """What llama.cpp computes under ``rope`` (a :class:`~pecli.models.gguf_rope.LlamaCppRope`), said in
    transformers' keys: ``rope_theta`` and a ``rope_scaling`` block (None: no scaling). ConfigError where
    transformers has no type for it (an ext_factor other than 0 or 1, per-pair divisors)."""
    from pecli.models.gguf_rope import _named_scaling

    named = _named_scaling(rope) if rope.factors is None else None
    if named is None or "inv_freq" in named:
        raise ConfigError("args", f"what llama.cpp computes under these flags ({rope.scaling_type}, frequency scale "
                          f"{rope.freq_scale:g}, ext_factor {rope.ext_factor:g}) has no transformers rope type")
    return {"rope_theta": named["base"], "rope_scaling": named.get("rope_scaling")}


def runtime_plan(model: PositionPlan, runtime: str, args: str) -> PositionPlan:
    """The plan llama.cpp runs for ``model`` (read from a HF config) under ``args``, each difference from
    the model blamed (:func:`flag_trials`) on the flag that, left out, gives the model's numbers."""
    if runtime != "llama.cpp":
        raise ConfigError("runtime", f"pecli reads llama.cpp's flags only so far, got {runtime!r}")
    return flags_plan(model, parse_flags(args), args)


def flags_plan(model: PositionPlan, flags: Mapping[str, Any], label: str) -> PositionPlan:
    """The plan llama.cpp runs for ``model`` under ``flags`` (checked, typed), its source named by ``label``."""
    from pecli.models.gguf import NOT_RUN, NOT_RUN_MODEL_TYPES

    if model.model_type in NOT_RUN_MODEL_TYPES:
        raise ConfigError("runtime", NOT_RUN[NOT_RUN_MODEL_TYPES[model.model_type]])
    args = label
    parts = [part for group in model.groups for part in _by_window(group)]
    made = [_group(part, dict(flags), model.model_type) for part in parts]
    groups = tuple(group.replaced(sources=flag_sources(part, group, flags, model.model_type))
                   for part, (group, _) in zip(parts, made))
    trained = sorted({kind for _, kind in made if kind})
    seen = f" (its GGUF read as trained with {' and '.join(trained)} scaling)" if trained else ""
    return PositionPlan(f"llama.cpp {args}{seen}", model.model_type, "llama.cpp flags", model.num_layers, groups)


def flag_sources(model: LayerGroup, run: LayerGroup, flags: Mapping[str, Any], model_type: Any) -> tuple[Source, ...]:
    """Where each setting of ``run`` (the ``model`` group as llama.cpp runs it under ``flags``) came from: a setting
    the model has keeps the model's sources; one it does not names each flag that, left out, changes it
    (:attr:`Origin.ENGINE_FLAG`: ``--rope-scaling yarn``, but not ``-c`` unless it picks LongRoPE's factors). A
    setting changed that the converter writes as a tensor of its own names that tensor too (:attr:`Origin.CONVERTER`,
    from the model's block: a llama3 block's divisors in ``rope_freqs``, which divide the frequencies whatever the
    flags). One the conversion changed otherwise (dynamic NTK dropped) has none recorded."""
    if run.options is None or run is model:
        return run.sources
    own = model.options or {}
    changed = [setting for setting, value in run.options.items() if setting not in own or repr(own[setting]) != repr(value)]
    sources = [source for source in model.sources if source.setting not in changed]
    sources += _converter_sources(own.get("rope_scaling"), changed)
    for flag in flags if changed else ():
        without = _run_options(model, {f: v for f, v in flags.items() if f != flag}, model_type)
        sources += [Source(setting, flag, Origin.ENGINE_FLAG) for setting in changed
                    if repr(without.get(setting)) != repr(run.options[setting])]
    return stamped([s for s in sources if s.origin in (Origin.ENGINE_FLAG, Origin.CONVERTER)
                    or s.value == repr(own.get(s.setting))], run.options)


#: The setting each kind of tensor the converter writes gives a run: the frequencies it divides (llama3's
#: ``rope_freqs``), the per-pair factors of the scaling (LongRoPE's two tensors).
CONVERTED_SETTING = {Converted.DIVISORS: "inv_freq", Converted.FACTOR_TENSORS: "rope_scaling"}


def _converter_sources(block: Any, changed: list[str]) -> list[Source]:
    """The converter's sources of the ``changed`` settings: each tensor ``convert_hf_to_gguf.py`` writes from the
    model's scaling ``block`` (its options' form), for the setting it gives (:data:`CONVERTED_SETTING`), named
    as a GGUF file's group names it (``rope_freqs (tensor)``, from ``rope_scaling llama3``)."""
    entry = of_hf(hf_rope_type(block, None)) if isinstance(block, Mapping) and block else None
    setting = CONVERTED_SETTING.get(entry.converted) if entry is not None else None
    if setting is None or setting not in changed:
        return []
    return [Source(setting, f"{tensor} (tensor)", Origin.CONVERTER, converted_from=f"rope_scaling {entry.record.hf_name}")
            for tensor in entry.converted.tensors]


def flag_trials(model: PositionPlan, flags: Mapping[str, Any], run: Callable[[dict], PositionPlan] | None = None
                ) -> tuple[list, Callable]:
    """The trials of :func:`pecli.models.blame.blamed` for llama.cpp's ``flags`` over ``model``: each flag set
    to the model's own value (:func:`model_flag_values`), or left out where the model has none to give
    (llama.cpp then takes the file's value, which for a faithful conversion is the model's). ``run(flags)``
    is the plan llama.cpp runs under other flags (default: over the model's converted file)."""
    from pecli.models.blame import Trial
    from pecli.models.differences import HF_BASE_KEYS, HF_SCALING_KEYS, model_key
    from pecli.models.rope_facts import scaling_text

    group = next((g for g in model.groups if g.scalable and not g.windowed), None)
    if group is None:
        return [], lambda chosen: model
    own = model_flag_values(group)
    trials = []
    for flag, value in flags.items():
        if flag == "--ctx-size":
            said = "max_position_embeddings"
        else:
            said = model_key(group, HF_BASE_KEYS if flag == "--rope-freq-base" else HF_SCALING_KEYS)
        shown = own.get(flag)
        trials.append(Trial(flag, value, said, scaling_text(group.options) if shown is None else shown,
                            positional=flag == "--rope-freq-base"))
    run = run or (lambda given: flags_plan(model, given, ""))

    def plan_with(chosen) -> PositionPlan:
        given = dict(flags)
        for trial in chosen:
            if own.get(trial.key) is None:
                given.pop(trial.key, None)
            else:
                given[trial.key] = own[trial.key]
        return run(given)

    return trials, plan_with


def model_flag_values(group: LayerGroup) -> dict[str, Any]:
    """The value each flag would have to say what the model's config says (its base, its linear or yarn
    factor and original context, its context); a flag the model has no value for is left out."""
    options = group.options or {}
    scaling = group.encoding.rope_scaling
    entry = of_hf(scaling.rope_type)
    own: dict[str, Any] = {"--rope-freq-base": float(options.get("base", DEFAULT_BASE))}
    if options.get("max_position_embeddings"):
        own["--ctx-size"] = int(options["max_position_embeddings"])
    if entry is not None and not entry.scales:
        own.update({"--rope-scaling": entry.word, "--rope-scale": 1.0, "--rope-freq-scale": 1.0})
    elif entry is not None and entry.flag and scaling.factor:
        factor = float(scaling.factor)
        own.update({"--rope-scaling": entry.word, "--rope-scale": factor, "--rope-freq-scale": 1.0 / factor})
        if entry.ramps:
            own["--yarn-orig-ctx"] = int(scaling.original_max_position_embeddings or own.get("--ctx-size") or 0) or None
            for flag, key in (("--yarn-beta-fast", "beta_fast"), ("--yarn-beta-slow", "beta_slow"),
                              ("--yarn-ext-factor", "extrapolation_factor")):
                if scaling.values.get(key) is not None:
                    own[flag] = float(scaling.values[key])
    return {flag: value for flag, value in own.items() if value is not None}


def _by_window(group: LayerGroup) -> tuple[LayerGroup, ...]:
    """``group``, or its windowed layers and its others apart where it holds both (Gemma 2's one group for
    its sliding and full layers): llama.cpp's flags reach the full-attention layers only."""
    if not group.windowed_layers or group.windowed:
        return (group,)
    from pecli.models.families.keys import WINDOW_KEYS

    windowed = set(group.windowed_layers)
    slide = "+".join(name for name in group.names if name in WINDOW_KEYS) or group.name
    full = "+".join(name for name in group.names if name not in WINDOW_KEYS) or group.name
    return (replace(group, name=slide, layers=group.windowed_layers),
            replace(group, name=full, layers=tuple(layer for layer in group.layers if layer not in windowed), windowed_layers=()))


def _group(group: LayerGroup, flags: dict[str, Any], model_type: Any) -> tuple[LayerGroup, str | None]:
    """The group as llama.cpp runs it, and the training type llama.cpp sees (None: no RoPE): what it runs said as
    changes over the group's settings, applied through its scheme (:func:`pecli.models.group_change.changed`)."""
    from pecli.models.group_change import changed

    if not group.scalable:
        return group, None
    changes, note, trained, rope = _run(group, flags, model_type)
    read = tuple(flag for flag in FLAGS if flag in flags) + tuple(k for k in group.keys_read if "rope_scaling" not in k)
    run = changed(group, changes, dropped=RUN_KEYS, by=" ".join(flag for flag in FLAGS if flag in flags) or "llama.cpp",
                  origin=Origin.ENGINE_FLAG, note=note).replaced(keys_read=read, keys_defaulted=())
    if model_type in DEEPSEEK_CONVERTED:  # its graph's softmax factor follows the context's scale (deepseek2.cpp)
        from pecli.models.gguf_rope import deepseek_softmax_factor
        from pecli.models.logit_scale import UNSCALED, LogitScale

        value = deepseek_softmax_factor(rope.freq_scale, rope.ext_factor, attn_factor=trained.attn_factor,
                                        yarn_attn_factor=given_attn_factor(flags, trained),
                                        log_multiplier=trained.log_multiplier)
        run = run.replaced(attention_scale=UNSCALED if value == 1.0 else LogitScale(value))
    return run, trained.scaling_type


#: The group's settings llama.cpp's run says anew (after the model's other keys): its base and its scaling.
RUN_KEYS = ("rope_scaling", "base")


def _run_options(group: LayerGroup, flags: Mapping[str, Any], model_type: Any) -> dict[str, Any]:
    """The options :func:`_group` gives ``group`` under ``flags``, without building its scheme (the trials of
    :func:`flag_sources` compare them)."""
    from pecli.models.group_change import changed_options

    if not group.scalable:
        return dict(group.options or {})
    return changed_options(group, _run(group, dict(flags), model_type)[0], RUN_KEYS)


def _run(group: LayerGroup, flags: dict[str, Any], model_type: Any) -> tuple[dict[str, Any], str, TrainedRope, Any]:
    """What llama.cpp runs for a RoPE group under ``flags``: its base and scaling as changes over the group's
    settings (:data:`RUN_KEYS` said anew), the group's note, the rope its file was trained with and the one run."""
    from pecli.models.gguf_rope import _scaling_options, swa_rule

    options = dict(group.options)
    if options.get("inv_freq") is not None:
        raise ConfigError("runtime", "the model's frequencies are given one by one (inv_freq): pecli does not apply "
                          "llama.cpp's flags over them")
    dim = int(options["dim"] * options.get("partial_rotary_factor", 1.0))
    context = converted_context(options)
    trained = converted_rope(options.get("rope_scaling"), model_type=model_type,
                             base=float(options.get("base", DEFAULT_BASE)), context=context, rotated_dim=dim)
    rule = swa_rule(model_type) if group.windowed else None  # llama.cpp's hparams.is_swa
    rope = run_rope(trained, flags, dim, windowed=rule == "trained", plain=rule == "plain")
    changes = _scaling_options(rope, None)
    note = changes.pop("_note", "")
    note = note or ("llama.cpp with these flags; a windowed layer keeps the trained base and scale" if group.windowed
                    else "llama.cpp with these flags")
    return changes, note, trained, rope
