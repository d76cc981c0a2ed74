"""llama.cpp's command-line flags over a GGUF file: the plan it runs for the file under ``--rope-freq-base``,
``--rope-scaling``, ``--yarn-*`` and the rest.

:func:`trained_rope` reads what llama.cpp loads from the file for one kind of layer (its ``hparams``), and
:func:`plan_under_flags` puts the flags on top of it with :func:`pecli.models.runtime_flags.run_rope`, the
rule of llama.cpp's context constructor; :mod:`pecli.models.gguf` reads the file itself, without flags.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

import numpy as np

from pecli.errors import ConfigError
from pecli.models.gguf import ARCHS, effective_arch, plan_of_metadata, swa_pattern
from pecli.models.gguf_metadata import Arch, Metadata
from pecli.models.gguf_rope import _factors, _head_dim, _scaling_options, deepseek_softmax_factor, swa_rule, yarn_key
from pecli.models.llama_cpp_scaling import UNWRITTEN, file_scaling, word_of
from pecli.models.logit_scale import SOFTMAX_MSCALE_TYPES, UNSCALED, LogitScale
from pecli.schemes.frequencies import DEFAULT_BASE
from pecli.models.gguf_sources import gguf_sources
from pecli.models.plan import LayerGroup, Origin, PositionPlan, Source, stamped
from pecli.models.runtime_flags import TrainedRope, given_attn_factor, run_rope


def trained_rope(meta: Metadata, arch: Arch, sliding: bool) -> tuple[TrainedRope, int]:
    """What llama.cpp loads from the file for one kind of layer, before any flag: its ``hparams``
    (``load_hparams``: base, ``rope_freq_scale_train`` = 1/factor whatever the type, the training type, the
    original context, YaRN's keys; a sliding layer's ``rope_freq_base_train_swa``/``_scale_train_swa``), as
    the :class:`~pecli.models.runtime_flags.TrainedRope` that :func:`~pecli.models.runtime_flags.run_rope`
    puts the command line's flags on, and the number of rotated components.

    LongRoPE's factor tensors are both kept: :func:`~pecli.models.runtime_flags.run_rope` picks one by the
    context served (``llama_model::get_rope_factors``).
    """
    rotated = meta.count("rope.dimension_count", _head_dim(meta))
    base = meta.positive("rope.freq_base", DEFAULT_BASE)
    kind = meta.word("rope.scaling.type", word_of(UNWRITTEN))
    file_scaling(kind, meta.key("rope.scaling.type"), meta.source)
    long_factors = _factors(meta, "rope_factors_long", rotated)
    short_factors = _factors(meta, "rope_factors_short", rotated)
    if (long_factors is None) != (short_factors is None):
        raise ConfigError("gguf", f"{meta.source} has one of rope_factors_long and rope_factors_short, not both")
    factor = meta.number("rope.scaling.factor") or meta.number("rope.scale_linear") or 0.0
    scale = 1.0 / factor if factor else 1.0
    if sliding:
        base = meta.positive("rope.freq_base_swa", base if arch.swa_base is None else arch.swa_base)
        scale = 1.0 if arch.swa_unscaled else scale
    context = meta.count("context_length")
    ext = yarn_key(meta, arch, "yarn_ext_factor", None)
    return TrainedRope(
        kind, base, scale, context, meta.count("rope.scaling.original_context_length", context),
        -1.0 if ext is None else ext, yarn_key(meta, arch, "yarn_beta_fast", 32.0),
        yarn_key(meta, arch, "yarn_beta_slow", 1.0), short_factors if short_factors is not None else _factors(meta, "rope_freqs", rotated),
        yarn_key(meta, arch, "yarn_attn_factor", 1.0), yarn_key(meta, arch, "yarn_log_multiplier", 0.0),
        arch.model_type == "deepseek_v3", meta.number("rope.scaling.attn_factor", 1.0, note_default=False),
        long_factors), rotated


def plan_under_flags(values: dict[str, Any], tensors: dict[str, np.ndarray], source: str, types: dict[str, str] | None,
                     flags: dict[str, Any], label: str) -> PositionPlan:
    """The plan llama.cpp runs for a GGUF file's metadata under its command-line ``flags`` (checked by
    :func:`pecli.models.runtime_flags.checked_flags`): each RoPE group's :func:`trained_rope` with the flags on
    top (:func:`~pecli.models.runtime_flags.run_rope`, the context constructor's rule); a sliding layer keeps
    its trained base and scale (``hparams.is_swa``); groups without RoPE as the file has them."""
    label = " ".join(str(label).split())  # the flags as words: "  -c 8192 " and "" name the plan without gaps
    plain = plan_of_metadata(values, tensors, source, types)
    arch_name = values["general.architecture"]
    arch = effective_arch(ARCHS[arch_name], values, arch_name, plain.num_layers)
    groups: list[LayerGroup] = []
    for group in plain.groups:
        if not group.scalable:
            groups.append(group)
            continue
        for name, layers, sliding in _kinds_of_layer(group, arch, plain.num_layers, values, arch_name):
            run = functools.partial(_run_group, group, values, tensors, source, types, arch, arch_name, sliding)
            options, read, defaulted, softmax, note = run(flags)
            made = dataclasses.replace(
                group, name=name, layers=layers, options=options, keys_read=read, keys_defaulted=defaulted,
                attention_scale=softmax,
                note="; ".join(filter(None, (f"llama.cpp {label}".rstrip() + (", a sliding layer keeps its trained base and scale"
                                                                       if sliding else ""), note))))
            groups.append(made.replaced(sources=_sources_under_flags(made, group, arch, arch_name, flags, run)))
    groups.sort(key=lambda g: g.layers[:1])
    return dataclasses.replace(plain, source=f"{source} under llama.cpp {label}".rstrip(), groups=tuple(groups))


def _run_group(group: LayerGroup, values: dict[str, Any], tensors: dict[str, np.ndarray], source: str,
               types: dict[str, str] | None, arch: Arch, arch_name: str, sliding: bool, flags: dict[str, Any]):
    """(options, keys read, keys defaulted, softmax factor, note) of ``group``'s layers of one kind (``sliding``) as
    llama.cpp runs them under ``flags``: the file's :func:`trained_rope` with the flags on top."""
    meta = Metadata(values, tensors, source, arch_name, types)
    rule = swa_rule(arch_name) if sliding else None
    trained, rotated = trained_rope(meta, arch, rule == "trained")
    rope = run_rope(trained, flags, rotated, windowed=rule == "trained", plain=rule == "plain")
    softmax = group.attention_scale
    if arch.model_type in SOFTMAX_MSCALE_TYPES:
        value = deepseek_softmax_factor(
            rope.freq_scale, rope.ext_factor, attn_factor=trained.attn_factor, log_multiplier=trained.log_multiplier,
            yarn_attn_factor=given_attn_factor(flags, trained))
        softmax = UNSCALED if value == 1.0 else LogitScale(value)
    options = {k: v for k, v in group.options.items() if k not in ("rope_scaling", "base", "inv_freq")}
    options.update(_scaling_options(rope, meta))
    note = options.pop("_note", "")
    read = tuple(flag for flag in flags) + tuple(dict.fromkeys(meta.read))
    return options, read, tuple(meta.defaulted), softmax, note


def _sources_under_flags(group: LayerGroup, file_group: LayerGroup, arch: Arch, arch_name: str, flags: dict[str, Any],
                         run: Callable[[dict[str, Any]], tuple]) -> tuple[Source, ...]:
    """Where each setting of ``group`` (``file_group``'s layers as llama.cpp runs them under ``flags``; ``run(flags)``
    the same under other flags) came from: a setting the flags leave as the file gives it keeps the file's keys
    (:func:`pecli.models.gguf_sources.gguf_sources`, over the keys the file's reading and the run read); one they
    change names each flag that, left out, changes it (:attr:`Origin.ENGINE_FLAG`), as
    :func:`pecli.models.runtime_flags.flag_sources` does over a config."""
    options = group.options or {}
    bare = run({})[0] if flags else options
    changed = {setting for setting, value in options.items() if repr(bare.get(setting)) != repr(value)}
    read = dataclasses.replace(group, keys_read=tuple(dict.fromkeys(file_group.keys_read + group.keys_read)),
                               keys_defaulted=tuple(dict.fromkeys(file_group.keys_defaulted + group.keys_defaulted)))
    # a tensor the converter wrote still gives a setting the flags changed (rope_freqs divides any base)
    sources = [s for s in gguf_sources(read, arch_name, arch)
               if s.setting not in changed or s.origin is Origin.CONVERTER and s.key in group.keys_read]
    for flag in flags if changed else ():
        without = run({f: v for f, v in flags.items() if f != flag})[0]
        sources += [Source(setting, flag, Origin.ENGINE_FLAG) for setting in sorted(changed)
                    if repr(without.get(setting)) != repr(options[setting])]
    return stamped(sources, options)


def _kinds_of_layer(group: LayerGroup, arch: Arch, layers: int, values: dict[str, Any], arch_name: str):
    """``(name, layers, sliding)`` of the group's sliding and full layers (llama.cpp's ``hparams.is_swa``,
    :func:`pecli.models.gguf.swa_pattern`)."""
    if not arch.swa_every:
        return [(group.name, group.layers, False)]
    pattern = swa_pattern(values, arch_name, arch, layers, arch_name)
    parts = []
    for name, sliding in (("sliding_attention", True), ("full_attention", False)):
        chosen = tuple(i for i in group.layers if pattern[i] == sliding)
        if chosen and (name in group.name.split("+") or group.name == "all"):
            parts.append((name, chosen, sliding))
    return parts or [(group.name, group.layers, False)]


__all__ = ["plan_under_flags", "trained_rope"]
