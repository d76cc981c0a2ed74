"""A GGUF file as a source of position plans: its metadata and position tensors, read as llama.cpp reads them.

:func:`read_gguf_plan` walks the header once, checking it against the file's size and reading the
metadata as ``gguf.GGUFReader`` (llama.cpp's own reader) gives it (:mod:`pecli.models.gguf_header`; the
tests hold the two equal), reads the bytes of the position tensors only (the weights are never read: a
local file is memory-mapped, a remote one fetched by ranges, :mod:`pecli.models.gguf_remote`),
takes the position keys and the small position tensors (``rope_freqs``, ``rope_factors_long``,
``rope_factors_short``) and returns the same :class:`~pecli.models.plan.PositionPlan` a ``config.json``
gives, so that every command, and ``pecli diff``, sees one kind of thing.

The conventions followed, from llama.cpp's sources:

- ``src/llama-model.cpp`` (``load_hparams``): ``{arch}.rope.freq_base`` defaults to 10,000; a missing
  ``rope.scaling.type`` means ``linear``; ``rope.scaling.factor`` (old files: ``rope.scale_linear``) sets
  ``freq_scale = 1/factor``, and a type ``none`` ignores it; ``original_context_length`` defaults to
  ``context_length``; ``rope.dimension_count`` to the head's dimension (``attention.key_length``, else
  width / heads; Llama and Falcon refuse any other); which layers slide (``load_swa_pattern``: the
  ``attention.sliding_window_pattern`` array, or every n-th); their base and scale (Gemma 3: base 10,000
  unscaled, ``rope.freq_base_swa`` when written; Cohere 2 and OLMo 2: what their graphs pass,
  :data:`pecli.models.runtime_flags.SWA_ROPE`); BLOOM's ALiBi maximum
  bias is 8 whatever the file says, MPT's is ``attention.max_alibi_bias``; ``llama_model_rope_type``:
  which architectures rotate adjacent pairs (``LLAMA_ROPE_TYPE_NORM``) and which pairs half a head apart
  (``NEOX``).
- ``src/llama-context.cpp``: YaRN's ``ext_factor`` is 1 for the yarn type and 0 otherwise (the
  ``rope.scaling.yarn_*`` keys are read only by the architectures whose loader reads them,
  :attr:`Arch.yarn_keys`); with a non-zero ``ext_factor`` llama.cpp recomputes the
  attention factor as ``0.1 ln s + 1`` (``yarn_log_multiplier`` m ≠ 0: ``get_mscale(s, 1)/get_mscale(s, m)``,
  DeepSeek 2 with m ≠ 1: 1), which ggml's kernel applies (``ggml-cpu/ops.cpp``, ``rope_yarn``), times
  ``rope.scaling.attn_factor``.
- ggml's ``rope_yarn`` and ``ggml_rope_yarn_corr_dims``: the frequencies ``θ_i = base^(−2i/d) / f_i``
  (``f`` the ``rope_freqs`` or LongRoPE factors tensor), interpolated ``θ_i·freq_scale``, mixed by the
  ramp between ``floor`` and ``ceil`` of the correction dimensions times ``ext_factor``; LongRoPE's long
  factors once the context passes ``original_context_length`` (``get_rope_factors``).
- ``convert_hf_to_gguf.py``: Llama 3.1's scaling is written only as the ``rope_freqs`` tensor (the factor
  by which each frequency is divided); the converter permutes the q/k rows of Llama-family models
  (``LlamaModel.permute``), so llama.cpp's adjacent-pair rotation on the converted weights is HF's
  ``rotate_half`` on the original ones.

The plan is in the frame of the original checkpoint, as a config.json plan is: layout ``half`` where
llama.cpp rotates pairs half a head apart, or adjacent pairs of permuted weights; ``interleaved`` where it
rotates adjacent pairs of weights the converter left as they were (DeepSeek, Command R, GPT-J).

Where llama.cpp's numbers have no HF scaling name (an ``ext_factor`` other than 0 or 1, a
``rope_freqs`` tensor with YaRN), the group carries them as per-pair factors of the base's ladder
(pecli's ``longrope`` with equal short and long factors and the explicit attention factor): the same
frequencies, said in the group's note. Every rule here is measured against llama.cpp built from source
(``tests/fixtures/engines/llama_cpp/``, with each rule's file and line in its ``RULES.md``).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

from pecli.errors import ConfigError, PecliError
from pecli.models.limits import check_layer_count
from pecli.models.logit_scale import SOFTMAX_MSCALE_TYPES, UNSCALED, LogitScale
from pecli.models.plan import NOPE, LayerGroup, PositionPlan
from pecli.models.gguf_metadata import Arch, Metadata, _excerpt
from pecli.models.gguf_sources import gguf_sources
from pecli.models.gguf_rope import _rope_options, deepseek_softmax_factor, llama_cpp_inv_freq

#: The extra that installs the gguf package.
EXTRA = "pecli[gguf]"
#: The position tensors read (their names in the file; a ``.weight`` suffix is accepted).
POSITION_TENSORS = ("rope_freqs", "rope_factors_long", "rope_factors_short")
#: The largest position tensor read (a head's pairs: a few hundred numbers).
MAX_POSITION_TENSOR = 1 << 16
#: The ggml types a position tensor may have (``GGMLQuantizationType.F32``, ``F16``) and their data types.
FLOAT_TYPES = {0: np.dtype("<f4"), 1: np.dtype("<f2")}


#: Architectures by ``general.architecture`` (llama.cpp's ``llama_model_rope_type`` and the converter).
ARCHS: dict[str, Arch] = {
    "llama": Arch("llama", "norm", permuted=True, whole_head=True), "granite": Arch("granite", "norm", permuted=True),
    "internlm2": Arch("internlm2", "norm", permuted=True), "olmo": Arch("olmo", "norm", permuted=True),
    "deepseek2": Arch("deepseek_v3", "norm", yarn_keys=("yarn_log_multiplier",)), "command-r": Arch("cohere", "norm"),
    # Llama 4: set_swa_pattern(4) chunked layers, n_no_rope_layer_step 4 (llama-hparams.h's default;
    # llm_build_llama_iswa: use_rope = (il + 1) % step != 0), the chunked layers keep their trained RoPE
    "llama4": Arch("llama4", "norm", swa_every=4, nope_every=4, window_zero_disables=True, nope_temperature=(0.1, 8192.0)),
    # GLM-4: NORM (llama_model_rope_type, without M-RoPE) on weights Glm4Model leaves in place; it writes
    # rope.dimension_count = head_dim × partial_rotary_factor (0.5): half the head rotates
    "glm4": Arch("glm4", "norm"),
    # SmolLM3Model is a LlamaModel (permuted q/k); llama.cpp skips RoPE on every 4th layer
    "smollm3": Arch("smollm3", "norm", permuted=True, nope_every=4),
    # Command R7B: set_swa_pattern(4), RoPE on the sliding layers only, NORM on unpermuted weights
    "cohere2": Arch("cohere2", "norm", swa_every=4, rope_on_sliding_only=True),
    # gpt-oss (LLM_ARCH_OPENAI_MOE): NEOX, set_swa_pattern(2), one RoPE (YaRN) for both kinds of layer
    "gpt-oss": Arch("gpt_oss", "neox", swa_every=2),
    "qwen2": Arch("qwen2", "neox"), "qwen2moe": Arch("qwen2_moe", "neox"), "qwen3": Arch("qwen3", "neox"),
    "qwen3moe": Arch("qwen3_moe", "neox"), "phi2": Arch("phi", "neox"), "phi3": Arch("phi3", "neox"),
    "gemma": Arch("gemma", "neox"), "gemma2": Arch("gemma2", "neox", swa_every=2),
    "gemma3": Arch("gemma3", "neox", swa_every=6, swa_base=10000.0, swa_unscaled=True, swa_needs_window=True),
    "stablelm": Arch("stablelm", "neox"), "starcoder2": Arch("starcoder2", "neox"), "gptneox": Arch("gpt_neox", "neox"),
    "olmo2": Arch("olmo2", "neox", swa_every=4, swa_unscaled=True, swa_needs_window=True),
    "falcon": Arch("falcon", "neox", whole_head=True),
    "bloom": Arch("bloom", "alibi", fixed_alibi_bias=8.0), "mpt": Arch("mpt", "alibi"),
}


#: Architectures llama.cpp names but does not run, with the reason said to the user.
NOT_RUN = {
    "gptj": "GPT-J is not a llama.cpp architecture: llama.cpp 0c1e57098 names 'gptj' but its loader refuses it "
            "(\"unsupported model architecture: 'gptj'\", measured; no graph for it) and convert_hf_to_gguf.py has no "
            "GPT-J class",
}
#: HF model types of those architectures.
NOT_RUN_MODEL_TYPES = {"gptj": "gptj"}


def read_gguf_plan(path: str, source: str | None = None) -> PositionPlan:
    """The position plan of the GGUF file at ``path`` (``source``: how messages name it).

    Raises
    ------
    PecliError
        The ``gguf`` package is not installed (the message names ``pecli[gguf]``).
    ConfigError
        (key ``gguf``) A truncated or hostile header, an unreadable file; an architecture pecli does
        not map; a position key of the wrong kind; a position tensor of the wrong length.
    """
    values, tensors, types = read_gguf_metadata(path)
    return plan_of_metadata(values, tensors, source or path, types)


def read_gguf_metadata(path: str) -> tuple[dict[str, Any], dict[str, np.ndarray], dict[str, str]]:
    """The metadata, the position tensors and each key's GGUF value type of the GGUF file at ``path`` — a
    local path, or a URL or Hub file (:func:`pecli.models.gguf_remote.is_remote`), of which only the header
    and the position tensors' bytes are fetched — its header checked first (raises as :func:`read_gguf_plan`)."""
    from pecli.models.gguf_header import LocalFile
    from pecli.models.gguf_remote import RemoteFile, check_location, is_remote

    check_location(path)
    try:
        import gguf  # noqa: F401  (the optional extra)
    except ImportError:
        if is_remote(path):  # a URL is read by the remote extra's packages as well
            raise PecliError(f"--gguf {path} needs the gguf package, and a URL the remote extra's: pip install "
                             f"'{EXTRA.removesuffix(']')},remote]'") from None
        raise PecliError(f"--gguf needs the gguf package: pip install '{EXTRA}'") from None
    if is_remote(path):
        with RemoteFile(path) as source:
            return read_source(source)
    with LocalFile(path) as source:
        return read_source(source)


def read_source(source: Any) -> tuple[dict[str, Any], dict[str, np.ndarray], dict[str, str]]:
    """The metadata (arrays of strings and ``tokenizer.`` keys left out), the position tensors as float64,
    and each key's GGUF value type, of the file a :class:`~pecli.models.gguf_header.Source` holds: its header
    walked (:func:`~pecli.models.gguf_header.read_header`), then the bytes of the position tensors read,
    as ``gguf.GGUFReader`` would map them (F32 or F16, little-endian)."""
    from pecli.models.gguf_header import read_header

    header = read_header(source)
    tensors: dict[str, np.ndarray] = {}
    for entry in header.tensors:
        short = entry.name.removesuffix(".weight")
        if short == "position_embd":  # a learned table: only its presence is read (its shape, not its data)
            tensors[short] = np.asarray(entry.dims)
        if short not in POSITION_TENSORS:
            continue
        count = int(np.prod(entry.dims))
        if count > MAX_POSITION_TENSOR or entry.ggml_type not in FLOAT_TYPES:
            raise ConfigError("gguf", f"tensor {entry.name} in {source.name} must be a short F32 or F16 vector, got "
                              f"{'×'.join(map(str, entry.dims))} of ggml type {entry.ggml_type}")
        dtype = FLOAT_TYPES[entry.ggml_type]
        raw = source.read(header.data + entry.offset, count * dtype.itemsize)
        with np.errstate(invalid="ignore"):  # a signalling NaN becomes a quiet one (refused where it is read)
            tensors[short] = np.frombuffer(raw, dtype=dtype, count=count).astype(np.float64)
    return header.values, tensors, header.types


def plan_of_metadata(values: dict[str, Any], tensors: dict[str, np.ndarray], source: str,
                     types: dict[str, str] | None = None) -> PositionPlan:
    """The position plan of a GGUF file's parsed metadata and position tensors (see the module);
    ``types``: each key's GGUF value type, checked as llama.cpp's loader checks it."""
    arch_name = values.get("general.architecture")
    if not isinstance(arch_name, str):
        raise ConfigError("gguf", f"{source} has no general.architecture")
    arch = ARCHS.get(arch_name)
    if arch_name in NOT_RUN:
        raise ConfigError("gguf", f"{source} has architecture {arch_name!r}: {NOT_RUN[arch_name]}")
    if arch is None:
        raise ConfigError("gguf", f"{source} has architecture {arch_name!r}, which pecli does not map to llama.cpp's "
                          f"position settings yet (it reads {', '.join(sorted(ARCHS))})")
    meta = Metadata(values, tensors, source, arch_name, types)
    meta.read.append("general.architecture")
    layers = meta.count("block_count")
    if layers is None:  # llama.cpp's load_hparams requires it too
        raise ConfigError("gguf", f"{source} has no {meta.key('block_count')}: the number of layers is unknown")
    check_layer_count(meta.key("block_count"), layers, source, "gguf")
    if meta.count("context_length") is None:  # load_hparams: get_key(LLM_KV_CONTEXT_LENGTH, n_ctx_train), required
        raise ConfigError("gguf", f"{source} has no {meta.key('context_length')}: llama.cpp's loader requires it")
    if arch.rope == "alibi":
        groups = [_alibi_group(meta, arch, layers)]
    else:
        groups = [dataclasses.replace(group, attention_scale=_softmax_mscale(meta, arch, group))
                  for group in _rope_groups(meta, effective_arch(arch, values, arch_name, layers), layers)]
    groups = [dataclasses.replace(group, sources=gguf_sources(group, arch_name, arch)) for group in groups]
    return PositionPlan(source, arch.model_type, f"GGUF ({arch_name}, as llama.cpp reads it)", layers, tuple(groups))


def _softmax_mscale(meta: Metadata, arch: Arch, group: LayerGroup) -> LogitScale:
    """DeepSeek's factor on its softmax scale, as llama.cpp's deepseek2 graph forms it from the file's keys
    (:func:`pecli.models.gguf_rope.deepseek_softmax_factor`)."""
    if arch.model_type not in SOFTMAX_MSCALE_TYPES or group.options is None:
        return group.attention_scale  # none (UNSCALED), or the NoPE layers' temperature (_nope_temperature)
    from pecli.models.llama_cpp_scaling import UNWRITTEN, of_word, word_of

    entry = of_word(meta.values.get(meta.key("rope.scaling.type"), word_of(UNWRITTEN))) or of_word(word_of(UNWRITTEN))
    factor = meta.values.get(meta.key("rope.scaling.factor")) or meta.values.get(meta.key("rope.scale_linear")) or 0.0
    scale = 1.0 if not entry.scales or not factor else 1.0 / float(factor)
    log_mul = meta.number("rope.scaling.yarn_log_multiplier", 0.0, note_default=False) \
        if "yarn_log_multiplier" in arch.yarn_keys else 0.0
    value = deepseek_softmax_factor(scale, 1.0 if entry.ramps else 0.0, log_multiplier=log_mul,
                                    attn_factor=meta.number("rope.scaling.attn_factor", 1.0, note_default=False))
    return UNSCALED if value == 1.0 else LogitScale(value)


def effective_arch(arch: Arch, values: dict[str, Any], arch_name: str, layers: int) -> Arch:
    """``arch`` as this file makes it: Llama 4 with ``attention.sliding_window`` 0 has no windows and a
    no-RoPE step of its layer count; Gemma 3 and OLMo 2 without a positive window have no sliding layers
    (see :class:`Arch`)."""
    window = values.get(f"{arch_name}.attention.sliding_window", None)
    if arch.window_zero_disables and window == 0:
        return dataclasses.replace(arch, swa_every=0, nope_every=layers)
    if arch.swa_needs_window and not (isinstance(window, (int, float)) and not isinstance(window, bool) and window > 0):
        return dataclasses.replace(arch, swa_every=0)
    return arch


def _alibi_group(meta: Metadata, arch: Arch, layers: int) -> LayerGroup:
    """ALiBi: one slope per head, ggml's ``2^(−max_bias·(h+1)/n)`` ladder (the paper's when max_bias is 8)."""
    heads = meta.count("attention.head_count")
    bias = arch.fixed_alibi_bias if arch.fixed_alibi_bias is not None else meta.number("attention.max_alibi_bias", 0.0)
    if bias == 0.0:
        # llama-model.cpp (load_hparams): use_alibi only when f_max_alibi_bias > 0; without it the KQ mask
        # carries no −|i − j| and ggml's softmax no slopes: no position signal unless a learned table is added
        if meta.tensors.get("position_embd") is not None:
            raise ConfigError("gguf", f"{meta.source} adds a learned position table (position_embd) and no ALiBi; "
                              "pecli does not read learned tables from GGUF files")
        return LayerGroup(NOPE, tuple(range(layers)), None, tuple(meta.read), tuple(meta.defaulted),
                          f"{meta.key('attention.max_alibi_bias')} 0: llama.cpp applies no ALiBi (use_alibi needs a "
                          "positive maximum bias) and the file has no position table: no position signal")
    if bias != 8.0:
        raise ConfigError("gguf", f"{meta.key('attention.max_alibi_bias')} is {bias:g} in {meta.source}; pecli's alibi "
                          "has the paper's slopes (maximum bias 8) only")
    note = ("llama.cpp sets BLOOM's maximum ALiBi bias to 8 whatever the file says" if arch.fixed_alibi_bias
            else "slopes 2^(−8(h+1)/n), ggml's softmax with max_bias 8")
    return LayerGroup("all", tuple(range(layers)), {"scheme": "alibi", "heads": heads}, tuple(meta.read),
                      tuple(meta.defaulted), note)


def _rope_groups(meta: Metadata, arch: Arch, layers: int) -> list[LayerGroup]:
    """One group for every layer, or sliding and full groups where the architecture's sliding layers
    take their own base (Gemma 3); groups on the same encoding merge, as in a config.json's plan."""
    common_read = list(meta.read)
    full, full_read, full_defaulted = _scoped(meta, common_read, lambda: _rope_options(meta, arch, sliding=False))
    if not arch.swa_every:
        groups = [LayerGroup("all", tuple(range(layers)), full, full_read, full_defaulted, _note(arch, full))]
        return _without_rope(groups, arch, layers, common_read)
    pattern = swa_pattern(meta.values, meta.arch, arch, layers, meta.source, meta.types)
    meta.read.append(meta.key("attention.sliding_window_pattern"))
    common_read = list(dict.fromkeys(meta.read))
    slide = [i for i in range(layers) if pattern[i]]
    attend = [i for i in range(layers) if not pattern[i]]
    sliding, slide_read, slide_defaulted = _scoped(meta, common_read, lambda: _rope_options(meta, arch, sliding=True))
    if arch.rope_on_sliding_only:
        parts = [LayerGroup("sliding_attention", tuple(slide), sliding, slide_read, slide_defaulted, _note(arch, sliding)),
                 LayerGroup(NOPE, tuple(attend), None, tuple(common_read), (),
                            "llama.cpp rotates q and k in the sliding-window layers only: no RoPE here")]
        return [g for g in parts if g.layers]
    if sliding == full or not slide or not attend:
        options, read, defaulted = (sliding, slide_read, slide_defaulted) if not attend else (full, full_read, full_defaulted)
        groups = [LayerGroup("sliding_attention+full_attention", tuple(range(layers)), options, read + slide_read,
                             defaulted, _note(arch, options))]
        return _without_rope(groups, arch, layers, common_read)
    groups = [LayerGroup("sliding_attention", tuple(slide), sliding, slide_read, slide_defaulted, _note(arch, sliding)),
              LayerGroup("full_attention", tuple(attend), full, full_read, full_defaulted, _note(arch, full))]
    return _without_rope(sorted(groups, key=lambda g: g.layers[:1]), arch, layers, common_read)


def swa_pattern(values: dict[str, Any], arch_name: str, arch: Arch, layers: int, source: str,
                types: dict[str, str] | None = None) -> tuple[bool, ...]:
    """Which layers attend within a window (``hparams.is_swa``), as ``load_swa_pattern`` sets them
    (``llama-model.cpp``): ``attention.sliding_window_pattern`` as an array says it layer by layer (layers past
    its end: no window); as a number n (or the architecture's default), ``set_swa_pattern(n)``: layer i slides
    when ``i % n < n − 1``, every layer when n is 0."""
    name = f"{arch_name}.attention.sliding_window_pattern"
    given = values.get(name, arch.swa_every)
    # llama-model-loader.cpp: get_arr takes BOOL, UINT32 or INT32 items, at most LLAMA_MAX_LAYERS (512) of them;
    # get_key takes a UINT32 number only. Any other form: the loader refuses the file.
    found = (types or {}).get(f"{name}[]")
    if found is not None and found not in ("BOOL", "UINT32", "INT32") or \
            isinstance(given, (list, tuple)) and len(given) > 512:
        count = f"{len(given):,} " if isinstance(given, (list, tuple)) else ""
        raise ConfigError("gguf", f"{name} in {source} is an array of {count}{found or 'BOOL'} items; llama.cpp's loader "
                          "refuses the file (it takes BOOL, UINT32 or INT32 items, at most 512)")
    if types and name in types and types[name] not in ("ARRAY", "UINT32"):
        raise ConfigError("gguf", f"{name} in {source} has type {types[name]}; llama.cpp's loader refuses the file "
                          "(it reads this key as UINT32 or an array)")
    if isinstance(given, (list, tuple)):
        if not all(isinstance(v, (bool, int)) and not isinstance(v, float) for v in given):
            raise ConfigError("gguf", f"{name} in {source} must be an array of booleans, got {_excerpt(given)}")
        return tuple(bool(given[i]) if i < len(given) else False for i in range(layers))
    if isinstance(given, bool) or not isinstance(given, int) or given < 0:
        raise ConfigError("gguf", f"{name} in {source} must be a whole number or an array of booleans, got {_excerpt(given)}")
    return tuple(given == 0 or i % given < given - 1 for i in range(layers))


#: Why a Llama 4 file without windows has no logit scale on its NoPE layer (measured: RULES.md §20).
TEMPERATURE_ABORTS = ("llama.cpp aborts when it computes this layer: attention.sliding_window 0 leaves Llama 4's "
                      "temperature scale 0, and llm_graph_input_attn_temp::set_input asserts f_attn_temp_scale != 0 "
                      "(llama-graph.cpp:161)")


def _nope_temperature(group: LayerGroup, arch: Arch) -> LayerGroup:
    """A NoPE group of an architecture whose graph scales those layers' queries (:attr:`Arch.nope_temperature`,
    Llama 4): that temperature; where the file turns the windows off (``arch`` as the file makes it: its scale left
    0) llama.cpp aborts when it computes the layer, and the group's logit scale is said unknown with why."""
    if arch.nope_temperature is None or group.options is not None:
        return group
    if arch.window_zero_disables and arch.swa_every == 0:
        return dataclasses.replace(group, logit_scale_unknown=TEMPERATURE_ABORTS)
    return dataclasses.replace(group, attention_scale=LogitScale(1.0, "llama4_temperature", arch.nope_temperature))


def _without_rope(groups: list[LayerGroup], arch: Arch, layers: int, read: list[str]) -> list[LayerGroup]:
    """``groups`` with the layers llama.cpp runs without RoPE (``n_no_rope_layer_step``) in a group of their own."""
    if not arch.nope_every:
        return groups
    nope = {i for i in range(layers) if (i + 1) % arch.nope_every == 0}
    kept = [dataclasses.replace(g, layers=tuple(i for i in g.layers if i not in nope)) for g in groups]
    return [g for g in kept if g.layers] + [_nope_temperature(LayerGroup(
        NOPE, tuple(sorted(nope)), None, tuple(read), (),
        f"llama.cpp's n_no_rope_layer_step {arch.nope_every}: no RoPE on layer i when (i + 1) % {arch.nope_every} == 0"
        + (" (set to the layer count when the file turns windows off: its last layer only)"
           if arch.nope_every == layers else "")), arch)]


def _scoped(meta: Metadata, common: list[str], read: Callable[[], dict[str, Any]]) -> tuple[dict[str, Any], tuple, tuple]:
    meta.read, meta.defaulted = list(common), []
    options = read()
    return options, tuple(dict.fromkeys(meta.read)), tuple(dict.fromkeys(meta.defaulted))


def _note(arch: Arch, options: dict[str, Any]) -> str:
    extra = options.pop("_note", "")
    return arch.note() + (f"; {extra}" if extra else "")


__all__ = ["ARCHS", "EXTRA", "Arch", "llama_cpp_inv_freq", "plan_of_metadata", "read_gguf_metadata", "read_gguf_plan",
           "read_source"]
