"""A GGUF file against the model's config: what differs, blamed on the key whose value differs.

:func:`diff_gguf` compares the file's plan with the model's (:func:`pecli.models.plan_diff.diff_plans`)
and then blames each difference by trial (:mod:`pecli.models.blame`): every position key of the file is
tried alone at the value ``convert_hf_to_gguf.py`` writes for the model (:func:`converted_keys`), and a
difference is put on the key that, so changed, makes it vanish. A Llama 3.1 file written with
``llama.rope.freq_base`` 10,000 beside its correct ``rope_freqs`` tensor is blamed on ``freq_base`` (its
pairs are wrong at every position), a Phi-3.5 file without ``rope.scaling.attn_factor`` on that missing
key — not on whichever scaling key the file happened to hold.

The model's values are those of the converter (``convert_hf_to_gguf.py``, ``TextModel.set_gguf_parameters``
and the model classes): ``rope.freq_base`` the config's base, ``rope.dimension_count`` the rotated
components, ``context_length`` ``max_position_embeddings``; a linear block its type and factor; a yarn
block its type, factor, original context and, where the block gives them, ``extrapolation_factor``,
``attention_factor`` and β (``yarn_ext_factor``, ``yarn_attn_factor``, ``yarn_beta_*``), DeepSeek's
``yarn_log_multiplier`` 0.1 × ``mscale_all_dim`` (``DeepseekV2Model``); llama3 the ``rope_freqs`` tensor
(``LlamaModel.generate_extra_tensors``); LongRoPE the factor tensors, its original context and
``rope.scaling.attn_factor``, the factor transformers puts on cos and sin (``Phi3MiniModel``); Gemma 3's
sliding base ``rope.freq_base_swa``. A key the converter would not write for the model is tried left out;
a key whose model value is not known here (a LongRoPE file's scaling type, the head's width) is not tried.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Sequence

import numpy as np

from pecli.models.blame import ABSENT, Trial, blamed
from pecli.models.differences import BASE_KEYS, DIM_KEYS, HF_BASE_KEYS, HF_SCALING_KEYS, _key, model_key
from pecli.models.group_change import changed
from pecli.models.plan import LayerGroup, Origin, PositionPlan
from pecli.models.llama_cpp_scaling import Converted, of_hf, word_of
from pecli.schemes.scaling.rope_type import hf_rope_type
from pecli.schemes.scaling.unscaled import NO_SCALING

#: The keys (after ``{arch}.``) tried, and whether each acts at every position.
SCALING_SUFFIXES = ("rope.scaling.type", "rope.scaling.factor", "rope.scaling.original_context_length",
                    "rope.scaling.attn_factor", "rope.scaling.yarn_ext_factor", "rope.scaling.yarn_attn_factor",
                    "rope.scaling.yarn_beta_fast", "rope.scaling.yarn_beta_slow", "rope.scaling.yarn_log_multiplier")
POSITIONAL_SUFFIXES = ("rope.freq_base", "rope.freq_base_swa", "rope.dimension_count")
TENSORS = ("rope_freqs", "rope_factors_long", "rope_factors_short")
#: GGUF value types the converter writes for each kind of value.
_TYPES = {float: "FLOAT32", int: "UINT32", str: "STRING"}


def diff_gguf(path: str, reference: PositionPlan, source: str | None = None):
    """The :class:`~pecli.models.plan_diff.PlanDiff` of the GGUF file at ``path`` against ``reference``, each
    difference blamed on the key that explains it (see the module)."""
    from pecli.models.gguf import plan_of_metadata, read_gguf_metadata
    from pecli.models.plan_diff import diff_plans

    values, tensors, types = read_gguf_metadata(path)
    source = source or path
    found = diff_plans(plan_of_metadata(values, tensors, source, types), reference, "gguf", "hf")
    if found.same:
        return found
    arch = values.get("general.architecture")
    trials = gguf_trials(values, tensors, reference, str(arch))

    def plan_with(chosen: Sequence[Trial]) -> PositionPlan:
        new_values, new_tensors, new_types = _with_values(values, tensors, types, chosen)
        return plan_of_metadata(new_values, new_tensors, source, new_types)

    return blamed(found, *with_engine_trials(reference, trials, plan_with))


#: The file's key each llama.cpp flag stands in for (``llama_context``'s constructor: an unset flag takes it).
FLAG_KEYS = {"--rope-scaling": "rope.scaling.type", "--rope-scale": "rope.scaling.factor",
             "--rope-freq-scale": "rope.scaling.factor", "--rope-freq-base": "rope.freq_base",
             "--yarn-orig-ctx": "rope.scaling.original_context_length", "--yarn-ext-factor": "rope.scaling.yarn_ext_factor",
             "--yarn-attn-factor": "rope.scaling.yarn_attn_factor", "--yarn-beta-fast": "rope.scaling.yarn_beta_fast",
             "--yarn-beta-slow": "rope.scaling.yarn_beta_slow", "--ctx-size": "context_length"}


def diff_gguf_flags(path: str, args: str, reference: PositionPlan | None):
    """llama.cpp's ``args`` on top of the GGUF file at ``path`` (:func:`pecli.models.gguf_flags.plan_under_flags`),
    against ``reference`` (the model's config), or against the file as it is without the flags (None);
    each difference blamed on the flag that, left out, explains it, or on llama.cpp's own departures."""
    from pecli.models.gguf import plan_of_metadata, read_gguf_metadata
    from pecli.models.gguf_flags import plan_under_flags
    from pecli.models.plan_diff import diff_plans
    from pecli.models.runtime_flags import parse_flags

    flags = parse_flags(args)
    values, tensors, types = read_gguf_metadata(path)

    def under(given: dict[str, Any]) -> PositionPlan:
        return plan_under_flags(values, tensors, path, types, given, args)

    found = diff_plans(under(flags), reference or plan_of_metadata(values, tensors, path, types), "runtime",
                       "gguf" if reference is None else "hf")
    if reference is None:
        arch = values.get("general.architecture")
        trials = [Trial(flag, value, f"{arch}.{FLAG_KEYS[flag]}", values.get(f"{arch}.{FLAG_KEYS[flag]}", ABSENT),
                        positional=flag == "--rope-freq-base") for flag, value in flags.items()]

        def plan_with(chosen: Sequence[Trial]) -> PositionPlan:
            dropped = {t.key for t in chosen}
            return under({f: v for f, v in flags.items() if f not in dropped})
    else:
        from pecli.models.runtime_flags import flag_trials

        trials, plan_with = flag_trials(reference, flags, under)
    reference = found.reference
    return blamed(found, *with_engine_trials(reference, trials, plan_with))


def diff_two_gguf(first: str, second: str):
    """The GGUF file ``second`` against ``first`` (the reference), group by group; each difference blamed on
    the key of ``second`` that, set alone to ``first``'s value (or left out where ``first`` has none),
    explains it."""
    from pecli.models.gguf import plan_of_metadata, read_gguf_metadata
    from pecli.models.plan_diff import diff_plans

    ref_values, ref_tensors, ref_types = read_gguf_metadata(first)
    values, tensors, types = read_gguf_metadata(second)
    reference = plan_of_metadata(ref_values, ref_tensors, first, ref_types)
    found = diff_plans(plan_of_metadata(values, tensors, second, types), reference, "second", "first")
    if found.same or values.get("general.architecture") != ref_values.get("general.architecture"):
        return found
    arch = str(values["general.architecture"])
    names = sorted({k for k in (*values, *ref_values) if k.startswith(f"{arch}.") and ("rope" in k or k.endswith(
        ("context_length", "key_length", "max_alibi_bias", "sliding_window_pattern")))})
    trials = [Trial(k, values.get(k, ABSENT), k, ref_values.get(k, ABSENT), positional=k.endswith(POSITIONAL_SUFFIXES))
              for k in names if not _same(values.get(k, ABSENT), ref_values.get(k, ABSENT))]
    trials += [Trial(f"{t} (tensor)", _words(tensors.get(t, ABSENT)), f"{t} (tensor)", ref_tensors.get(t, ABSENT))
               for t in TENSORS if not _same(tensors.get(t, ABSENT), ref_tensors.get(t, ABSENT))
               and not (tensors.get(t) is None and ref_tensors.get(t) is None)]

    def plan_with(chosen: Sequence[Trial]) -> PositionPlan:
        new_values, new_tensors, new_types = _with_values(values, tensors, types, chosen)
        return plan_of_metadata(new_values, new_tensors, second, new_types)

    return blamed(found, trials, plan_with)


def _with_values(values: dict, tensors: dict, types: dict, chosen: Sequence[Trial]):
    """The metadata with every chosen trial's key at its model value (or left out); the types as the converter writes."""
    new_values, new_tensors, new_types = dict(values), dict(tensors), dict(types)
    for trial in chosen:
        is_tensor = trial.key.endswith(" (tensor)")
        name = trial.key.removesuffix(" (tensor)")
        target = new_tensors if is_tensor else new_values
        if trial.model_value is ABSENT:
            target.pop(name, None)
        else:
            target[name] = trial.model_value
            if not is_tensor:
                new_types[name] = _TYPES.get(type(trial.model_value), new_types.get(name, "FLOAT32"))
    return new_values, new_tensors, new_types


def with_engine_trials(reference: PositionPlan, trials: list[Trial], plan_with: Callable) -> tuple[list[Trial], Callable]:
    """``trials`` and ``plan_with`` with llama.cpp's own departures from the model added as trials of
    their own (:func:`yarn_rounding_trial`), so that a difference no key or flag explains is put on them."""
    rounding = yarn_rounding_trial(reference)
    if rounding is None:
        return trials, plan_with
    return [*trials, rounding], lambda chosen: unrounded_where_chosen(
        plan_with([t for t in chosen if t is not rounding]), rounding in chosen)


#: How a difference caused by llama.cpp itself, not by a key of the file, is named.
YARN_ROUNDING = "ggml_rope_yarn_corr_dims (llama.cpp always rounds YaRN's correction range: floor, ceil)"


def yarn_rounding_trial(reference: PositionPlan) -> Trial | None:
    """The engine's own departure tried as one more setting: ggml's YaRN correction range is always
    rounded to whole pairs (``ggml_rope_yarn_corr_dims``: ``floor`` of the low end, ``ceil`` of the high),
    where transformers' ``truncate: false`` (gpt-oss) keeps the fractional range. None when the model's
    YaRN rounds too (no ``truncate: false``): then llama.cpp and the model agree."""
    full = _full_group(reference)
    scaling = full.encoding.rope_scaling if full is not None else None
    entry = of_hf(scaling.rope_type) if scaling is not None else None
    if entry is None or not entry.ramps or scaling.value("truncate"):
        return None
    return Trial(YARN_ROUNDING, "rounded", f"{_hf_key(reference, 'rope.scaling.type')}.truncate", False)


def unrounded_where_chosen(plan: PositionPlan, chosen: bool) -> PositionPlan:
    """``plan`` with its YaRN groups' correction range left unrounded (the model's ``truncate: false``) when
    ``chosen``, through :func:`~pecli.models.group_change.changed`."""
    if not chosen:
        return plan
    groups = []
    for group in plan.groups:
        block = (group.options or {}).get("rope_scaling") or {}
        if _ramps(block):
            group = changed(group, {"rope_scaling": {**block, "truncate": False}}, by="rope_scaling.truncate",
                            origin=Origin.CONFIG)
        groups.append(group)
    return dataclasses.replace(plan, groups=tuple(groups))


def _ramps(block: dict[str, Any]) -> bool:
    """Whether llama.cpp runs the HF scaling ``block`` along YaRN's ramp, whose range ggml rounds."""
    entry = of_hf(hf_rope_type(block))
    return entry is not None and entry.ramps


def gguf_trials(values: dict[str, Any], tensors: dict[str, np.ndarray], reference: PositionPlan, arch: str) -> list[Trial]:
    """One :class:`Trial` per position key or tensor whose value in the file is not the model's."""
    keys, factor_tensors = converted_keys(reference)
    full = _full_group(reference)
    trials = []
    for suffix, model in keys.items():
        name = f"{arch}.{suffix}"
        value = values.get(name, ABSENT)
        if not _same(value, model):
            trials.append(Trial(name, value, _hf_key(reference, suffix), model, positional=suffix in POSITIONAL_SUFFIXES))
    from pecli.models.rope_facts import scaling_text

    for name, model in factor_tensors.items():
        value = tensors.get(name, ABSENT)
        if not _same(value, model):
            shown = "absent" if model is ABSENT else f"{scaling_text(full.options)}, written as {model.size} {name} factors"
            trials.append(Trial(f"{name} (tensor)", _words(value), _hf_key(reference, name), model, shown=shown))
    return trials if full is not None else []


def converted_keys(reference: PositionPlan) -> tuple[dict[str, Any], dict[str, Any]]:
    """What ``convert_hf_to_gguf.py`` writes for the model of ``reference`` (see the module): the keys
    (after ``{arch}.``) and the position tensors, each a value or :data:`ABSENT`; a key not known here is
    left out of both."""
    from pecli.models.rope_facts import scheme_of
    from pecli.models.runtime_flags import CONVERTER_NONE, DEEPSEEK_CONVERTED, _llama3_divisors

    full = _full_group(reference)
    if full is None:
        return {}, {}
    options = full.options
    rotated = int(round(options["dim"] * float(options.get("partial_rotary_factor", 1.0))))
    base = float(options.get("base", 10000.0))
    keys: dict[str, Any] = {"rope.freq_base": base, "rope.dimension_count": rotated}
    sliding = next((g for g in reference.groups if g.scalable and g.windowed), None)
    if sliding is not None and float(sliding.options.get("base", base)) != base:
        keys["rope.freq_base_swa"] = float(sliding.options["base"])
    block = dict(options.get("rope_scaling") or {})
    entry = of_hf(hf_rope_type(block))
    keys.update({suffix: ABSENT for suffix in SCALING_SUFFIXES})
    tensors: dict[str, Any] = {name: ABSENT for name in TENSORS}
    if reference.model_type in CONVERTER_NONE:
        keys["rope.scaling.type"] = word_of(NO_SCALING)
    if entry is None:
        return {k: v for k, v in keys.items() if k in POSITIONAL_SUFFIXES}, {}
    if entry.converted is Converted.TYPE and block.get("factor") and not entry.ramps:
        keys.update({"rope.scaling.type": entry.word, "rope.scaling.factor": float(block["factor"])})
    elif entry.converted is Converted.TYPE and block.get("factor"):
        keys.update({"rope.scaling.type": entry.word, "rope.scaling.factor": float(block["factor"]),
                     "rope.scaling.original_context_length": int(block.get("original_max_position_embeddings")
                                                                 or options.get("max_position_embeddings"))})
        for suffix, hf in (("yarn_ext_factor", "extrapolation_factor"), ("yarn_beta_fast", "beta_fast"),
                           ("yarn_beta_slow", "beta_slow")):
            if block.get(hf) is not None:
                keys[f"rope.scaling.{suffix}"] = float(block[hf])
        attention = block.get("attention_factor", block.get("attn_factor"))
        if attention is not None:
            keys["rope.scaling.yarn_attn_factor"] = float(attention)
        if reference.model_type in DEEPSEEK_CONVERTED:
            all_dim = block.get("mscale_all_dim")
            keys["rope.scaling.yarn_log_multiplier"] = 0.1 * float(all_dim) if all_dim else ABSENT
        elif block.get("mscale_all_dim") is not None:
            del keys["rope.scaling.yarn_log_multiplier"]  # Ministral 3 and others: written as is, not modelled here
    elif entry.converted is Converted.DIVISORS:
        tensors["rope_freqs"] = _llama3_divisors(block, base, rotated)
    elif entry.converted is Converted.FACTOR_TENSORS:
        del keys["rope.scaling.type"]  # Phi3MiniModel writes none; TextModel writes longrope: both read alike
        tensors["rope_factors_long"] = np.asarray(block["long_factor"], dtype=np.float64)
        tensors["rope_factors_short"] = np.asarray(block["short_factor"], dtype=np.float64)
        keys["rope.scaling.original_context_length"] = int(block.get("original_max_position_embeddings")
                                                          or options.get("max_position_embeddings"))
        keys["rope.scaling.attn_factor"] = float(scheme_of(full).attention_scaling)
    if options.get("max_position_embeddings"):
        keys["context_length"] = int(options["max_position_embeddings"])
    return keys, tensors


def _full_group(reference: PositionPlan) -> LayerGroup | None:
    groups = [g for g in reference.groups if g.scalable and "inv_freq" not in g.options]
    return next((g for g in groups if not g.windowed), groups[0] if groups else None)


def _hf_key(reference: PositionPlan, suffix: str) -> str:
    full = _full_group(reference)
    if suffix == "rope.freq_base_swa":
        sliding = next((g for g in reference.groups if g.options and g.windowed), full)
        return _key(sliding, BASE_KEYS) or "rope_local_base_freq"
    if suffix == "rope.freq_base":
        return model_key(full, HF_BASE_KEYS)
    if suffix == "rope.dimension_count":
        return _key(full, DIM_KEYS) or "head_dim"
    if suffix == "context_length":
        return model_key(full, ("max_position_embeddings", "n_positions"))
    return model_key(full, HF_SCALING_KEYS)


def _same(value: Any, model: Any) -> bool:
    if value is ABSENT or model is ABSENT:
        return value is model
    if isinstance(model, np.ndarray):
        found = np.asarray(value, dtype=np.float64).reshape(-1)
        return found.shape == model.shape and bool(np.allclose(found, model, rtol=1e-6, atol=0))
    if isinstance(model, str) or isinstance(value, str):
        return str(value) == str(model)
    try:
        return math.isclose(float(value), float(model), rel_tol=1e-6)
    except (TypeError, ValueError):
        return False


def _words(value: Any) -> Any:
    return value if value is ABSENT else f"{np.asarray(value).size} factors"


__all__ = ["YARN_ROUNDING", "converted_keys", "diff_gguf", "diff_gguf_flags", "diff_two_gguf", "gguf_trials",
           "with_engine_trials", "yarn_rounding_trial"]
