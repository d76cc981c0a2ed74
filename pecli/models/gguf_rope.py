"""One layer's RoPE as llama.cpp computes it from a GGUF file: the hparams its loader reads, the factor ggml
puts on cos and sin, and the frequencies of ggml's ``rope_yarn``, said in pecli's options (an HF scaling where
one says it, per-pair factors of the base's ladder otherwise). The file's metadata and its layers are
:mod:`pecli.models.gguf`'s; the sources of each rule are named there and in
``tests/fixtures/engines/llama_cpp/RULES.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pecli.errors import ConfigError
from pecli.models.llama_cpp_scaling import UNWRITTEN, file_scaling, word_of
from pecli.schemes.scaling.linear import LINEAR
from pecli.schemes.scaling.longrope import LONGROPE
from pecli.schemes.scaling.yarn import YARN
from pecli.schemes.frequencies import DEFAULT_BASE

if TYPE_CHECKING:
    from pecli.models.gguf_metadata import Arch, Metadata


@dataclass(frozen=True)
class LlamaCppRope:
    """What llama.cpp computes for one layer's RoPE, before it is said in pecli's options."""

    rotated: int
    base: float
    freq_scale: float
    ext_factor: float
    original: int
    beta_fast: float
    beta_slow: float
    attention: float
    factors: np.ndarray | None
    long_factors: np.ndarray | None
    scaling_type: str


#: How an architecture's graph ropes its sliding-window layers where that is not ``trained`` (the trained base and
#: scale, ``llama_model::get_rope_freq_base``/``_scale``: Gemma 2 and 3, gpt-oss, Llama 4), by GGUF architecture and
#: HF model type: ``context`` — the context's base and scale, as the full layers (``build_cohere2`` passes
#: ``freq_base``/``freq_scale``; its calls to get_rope_freq_* are commented out, ``src/models/cohere2.cpp:72-98``);
#: ``plain`` — the context's base, scale 1, ext_factor 0, attention factor 1 (OLMo 2/3, ``src/models/olmo2.cpp:115-130``).
SWA_ROPE = {"cohere2": "context", "olmo2": "plain", "olmo3": "plain"}


def swa_rule(name: Any) -> str:
    """``trained``, ``context`` or ``plain``: how the sliding layers of ``name`` rotate (:data:`SWA_ROPE`)."""
    return SWA_ROPE.get(str(name), "trained")


def _rope_options(meta: Metadata, arch: Arch, *, sliding: bool) -> dict[str, Any]:
    """The pecli ``rope`` options of the full (or sliding) layers."""
    rope = _llama_cpp_rope(meta, arch, sliding)
    head = _head_dim(meta)
    context = meta.count("context_length")
    options: dict[str, Any] = {"scheme": "rope", "dim": head, "layout": arch.layout}
    if rope.rotated != head:
        if arch.whole_head:
            raise ConfigError("gguf", f"{meta.key('rope.dimension_count')} is {rope.rotated} in {meta.source}, not the head "
                              f"dimension {head}: llama.cpp's loader refuses the file (\"invalid n_rot: {rope.rotated}, "
                              f"expected {head}\", llama-model.cpp load_hparams)")
        if rope.rotated > head or rope.rotated % 2:
            raise ConfigError("gguf", f"{meta.key('rope.dimension_count')} {rope.rotated} in {meta.source} must be even "
                              f"and at most the head dimension {head}")
        options["partial_rotary_factor"] = rope.rotated / head
    options["max_position_embeddings"] = context
    return {**options, **_scaling_options(rope, meta)}


def _head_dim(meta: Metadata) -> int:
    found = meta.count("attention.key_length")
    if found is not None:
        return found
    width, heads = meta.count("embedding_length"), meta.count("attention.head_count")
    if width is None or heads is None or width % heads:
        raise ConfigError("gguf", f"{meta.source} gives neither attention.key_length nor embedding_length divisible "
                          "by attention.head_count")
    return width // heads


def _llama_cpp_rope(meta: Metadata, arch: Arch, sliding: bool) -> LlamaCppRope:
    """llama.cpp's hparams and cparams for one kind of layer (``load_hparams``, the context's constructor)."""
    head = _head_dim(meta)
    rotated = meta.count("rope.dimension_count", head)
    base = meta.positive("rope.freq_base", DEFAULT_BASE)
    kind = meta.word("rope.scaling.type", word_of(UNWRITTEN))
    entry = file_scaling(kind, meta.key("rope.scaling.type"), meta.source)
    factor = meta.number("rope.scaling.factor") or meta.number("rope.scale_linear") or 0.0
    if not factor:
        meta.defaulted.append(f"{meta.key('rope.scaling.factor')}=absent")
    scale = 1.0 if not entry.scales or factor == 0.0 else 1.0 / factor
    rule = swa_rule(meta.arch) if sliding else None
    if rule == "trained":
        base = meta.positive("rope.freq_base_swa", base if arch.swa_base is None else arch.swa_base)
        scale = 1.0 if arch.swa_unscaled else scale
    ext = yarn_key(meta, arch, "yarn_ext_factor", None)
    ext = (1.0 if entry.ramps else 0.0) if ext is None or ext < 0 else ext
    context = meta.count("context_length")
    original = meta.count("rope.scaling.original_context_length", context) if scale != 1.0 or ext or \
        meta.tensors.get("rope_factors_long") is not None else context
    attention = _attention_factor(meta, arch, scale, ext)
    factors = _factors(meta, "rope_freqs", rotated)
    long_factors = _factors(meta, "rope_factors_long", rotated)
    short = _factors(meta, "rope_factors_short", rotated)
    if (long_factors is None) != (short is None):
        raise ConfigError("gguf", f"{meta.source} has one of rope_factors_long and rope_factors_short, not both")
    if long_factors is not None and factors is not None:
        raise ConfigError("gguf", f"{meta.source} has rope_freqs and LongRoPE factors both")
    betas = (yarn_key(meta, arch, "yarn_beta_fast", 32.0), yarn_key(meta, arch, "yarn_beta_slow", 1.0)) \
        if ext else (32.0, 1.0)
    if rule == "plain":  # the graph passes scale 1, ext_factor 0, attention 1 and no factors (SWA_ROPE)
        return LlamaCppRope(rotated, base, 1.0, 0.0, original, *betas, 1.0, None, None, kind)
    return LlamaCppRope(rotated, base, scale, ext, original, *betas, attention,
                        short if short is not None else factors, long_factors, kind)


def _attention_factor(meta: Metadata, arch: Arch, scale: float, ext: float) -> float:
    """The factor on cos and sin of a GGUF file's model (:func:`cos_sin_factor` of its keys)."""
    return cos_sin_factor(
        scale, ext, attn_factor=meta.number("rope.scaling.attn_factor", 1.0, note_default=False),
        yarn_attn_factor=yarn_key(meta, arch, "yarn_attn_factor", 1.0),
        log_multiplier=yarn_key(meta, arch, "yarn_log_multiplier", 0.0), deepseek=arch.model_type == "deepseek_v3")


def yarn_key(meta: Metadata, arch: Arch, name: str, default: float | None) -> float | None:
    """The file's ``rope.scaling.<name>`` where the architecture's loader reads it (:attr:`Arch.yarn_keys`),
    else ``default`` (llama-hparams.h's: the key is not read)."""
    if name not in arch.yarn_keys:
        return default
    return meta.number(f"rope.scaling.{name}", default, note_default=False)


def cos_sin_factor(scale: float, ext: float, *, attn_factor: float = 1.0, yarn_attn_factor: float = 1.0,
                   log_multiplier: float = 0.0, deepseek: bool = False) -> float:
    """The factor llama.cpp puts on cos and sin (``llama_context``'s constructor): with ext_factor 0,
    ``yarn_attn_factor``; otherwise YaRN's mscale(s) = 0.1·m·ln s + 1 for s = 1/``scale`` recomputed —
    mscale(1), or with a YaRN log multiplier mscale(m₁)/mscale(log multiplier), m₁ the multiplier itself
    on DeepSeek's architecture (its ``[TAG_DEEPSEEK2_YARN_LOG_MUL_FIX]``; the softmax then takes the rest)
    and 1 elsewhere — each times the file's ``attn_factor``."""
    from pecli.schemes.scaling.yarn import yarn_get_mscale

    if ext == 0:
        return yarn_attn_factor * attn_factor
    factor = 1.0 / scale
    if log_multiplier:
        first = log_multiplier if deepseek and log_multiplier != 1.0 else 1.0
        return yarn_get_mscale(factor, first) / yarn_get_mscale(factor, log_multiplier) * attn_factor
    return yarn_get_mscale(factor) * attn_factor


def deepseek_softmax_factor(freq_scale: float, ext: float, *, attn_factor: float = 1.0, yarn_attn_factor: float = 1.0,
                            log_multiplier: float = 0.0) -> float:
    """The factor DeepSeek 2's graph puts on its ``kq_scale`` (``src/models/deepseek2.cpp:432-438``): mscale² with
    mscale = a₀·(1 + 0.1·m·ln s), s = 1/``freq_scale`` (the context's), m the file's log multiplier ÷ 0.1 (its
    loader's), and a₀ the context's attention factor with ggml's 1 + 0.1 ln s put back — the file's
    ``attn_factor`` when YaRN's extrapolation is on (times mscale(s) without a log multiplier), else
    ``yarn_attn_factor`` × ``attn_factor`` × (1 + 0.1 ln s), so a linear scale still scales the softmax."""
    from pecli.schemes.scaling.yarn import yarn_get_mscale

    s = 1.0 / freq_scale
    if ext != 0:
        original = attn_factor * (1.0 if log_multiplier else yarn_get_mscale(s))
    else:
        original = yarn_attn_factor * attn_factor * (1.0 + 0.1 * math.log(s))
    return (original * (1.0 + log_multiplier * math.log(s))) ** 2


def _factors(meta: Metadata, name: str, rotated: int) -> np.ndarray | None:
    found = meta.tensor(name)
    if found is None:
        if name == "rope_freqs":
            meta.defaulted.append("rope_freqs (tensor)=absent")
        return None
    wrong = np.flatnonzero(~(found > 0) | ~np.isfinite(found))  # NaN is not > 0
    if found.size != rotated // 2 or wrong.size:
        got = f"{found.size}" if found.size != rotated // 2 else f"factor {wrong[0]} = {found[wrong[0]]:g}"
        raise ConfigError("gguf", f"tensor {name} in {meta.source} must hold {rotated // 2} positive factors "
                          f"(rope.dimension_count / 2), got {got}")
    return found


def _scaling_options(rope: LlamaCppRope, meta: Metadata) -> dict[str, Any]:
    """llama.cpp's computation said in pecli's options: an HF scaling where one says it, else per-pair factors."""
    if rope.long_factors is not None:
        if rope.freq_scale != 1.0 or rope.ext_factor != 0:
            raise ConfigError("gguf", f"{meta.source} has LongRoPE factors and a {rope.scaling_type} scale: pecli does "
                              "not read the two together")
        return {"base": rope.base, "rope_scaling": {
            "rope_type": LONGROPE.hf_name, "short_factor": rope.factors.tolist(), "long_factor": rope.long_factors.tolist(),
            "original_max_position_embeddings": rope.original, "attention_factor": rope.attention}}
    named = _named_scaling(rope)
    if named is not None:
        return named
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratios = _ladder(rope) / llama_cpp_inv_freq(rope, rope.factors)
    if not (np.all(np.isfinite(ratios)) and np.all(ratios > 0)):  # ext_factor 1e19: frequencies of 0 or below
        raise ConfigError("args", f"llama.cpp's frequencies under these flags ({_words(rope)}) reach 0 or below, or "
                          "overflow: pecli compares positive finite frequencies only")
    per_pair = ratios.tolist()
    return {"base": rope.base, "_note": f"llama.cpp's frequencies ({_words(rope)}) as per-pair factors of the base's ladder",
            "rope_scaling": {"rope_type": LONGROPE.hf_name, "short_factor": per_pair, "long_factor": per_pair,
                             "original_max_position_embeddings": rope.original, "attention_factor": rope.attention}}


def _ladder(rope: LlamaCppRope) -> np.ndarray:
    return np.power(rope.base, -np.arange(0, rope.rotated, 2, dtype=np.float64) / rope.rotated)


def _named_scaling(rope: LlamaCppRope) -> dict[str, Any] | None:
    """No scaling, linear or yarn as HF names them (``rope_freqs``: the divided ladder, with a linear
    scale on top); None where llama.cpp's numbers have no such name."""
    s = 1.0 / rope.freq_scale
    if s < 1.0:  # a frequency scale above 1 (--rope-scale 0.5) speeds the pairs up: no HF type says that
        return None
    options: dict[str, Any] = {"base": rope.base}
    if rope.factors is not None:
        if rope.ext_factor != 0:
            return None
        options = {"inv_freq": (_ladder(rope) / rope.factors).tolist(), "_note": "frequencies base^(−2i/d) / rope_freqs[i]"}
    if rope.ext_factor == 0 or s == 1.0:
        if rope.attention != 1.0:
            return None
        return options if s == 1.0 else {**options, "rope_scaling": {"rope_type": LINEAR.hf_name, "factor": s}}
    if rope.ext_factor != 1.0:
        return None
    note = "ggml rounds YaRN's correction range to whole pairs (ggml_rope_yarn_corr_dims: floor, ceil), as transformers' truncate: true"
    return {**options, "_note": "; ".join(filter(None, (options.get("_note"), note))), "rope_scaling": {
        "rope_type": YARN.hf_name, "factor": s, "original_max_position_embeddings": rope.original,
        "beta_fast": rope.beta_fast, "beta_slow": rope.beta_slow, "attention_factor": rope.attention}}


def _words(rope: LlamaCppRope) -> str:
    return (f"{rope.scaling_type}, factor {1 / rope.freq_scale:g}, ext_factor {rope.ext_factor:g}"
            + (", rope_freqs" if rope.factors is not None else ""))


def llama_cpp_inv_freq(rope: LlamaCppRope, factors: np.ndarray | None) -> np.ndarray:
    """ggml's ``rope_yarn`` frequencies, float64: ``θ_i = base^(−2i/d)/f_i``, ``θ_i·freq_scale`` mixed back
    toward ``θ_i`` by ``ext_factor`` times the ramp between the correction dimensions (``ggml_rope_yarn_corr_dims``)."""
    from pecli.schemes.scaling.yarn import yarn_correction_range

    theta = _ladder(rope)
    if factors is not None:
        theta = theta / factors
    interpolated = theta * rope.freq_scale
    if rope.ext_factor == 0:
        return interpolated
    # ggml_rope_yarn_corr_dims is transformers' find_correction_range; the ramp's 0.001 floor is ggml's
    try:
        low, high = yarn_correction_range(rope.beta_fast, rope.beta_slow, rope.rotated, rope.base, rope.original)
    except (ZeroDivisionError, ValueError):  # a β of 0 or below, a base of 1: ggml's float logs give ±inf or NaN
        raise ConfigError("args", f"YaRN's correction range is undefined for β {rope.beta_fast:g} and {rope.beta_slow:g}, "
                          f"base {rope.base:g}, original context {rope.original:,}: give βs above 0 and a base above 1 "
                          "(pecli does not follow ggml's infinities)") from None
    ramp = 1.0 - np.clip((np.arange(rope.rotated // 2) - low) / max(0.001, high - low), 0.0, 1.0)
    mix = ramp * rope.ext_factor
    return interpolated * (1 - mix) + theta * mix


__all__ = ["LlamaCppRope", "cos_sin_factor", "llama_cpp_inv_freq"]
