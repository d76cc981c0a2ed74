"""llama.cpp, as its own code computes positions from its flags: the record of the engine, over
:mod:`pecli.models.runtime_flags` (the one reader of its flags, with llama.cpp's rules and their sources)
and :mod:`pecli.models.gguf` (its GGUF loader and ``ggml_rope_ext``'s frequencies). Measured: llama.cpp
0c1e57098 built from source runs every case of ``tests/fixtures/engines/llama_cpp/gguf_cases.json`` (its
parser, loader, context, graph and ``ggml_rope_ext``), and ``tests/test_engines_llama_cpp.py`` holds this
module to it; the rules, with llama.cpp's file and line, are in that folder's ``RULES.md``.

A model read from ``config.json`` runs as the GGUF file ``convert_hf_to_gguf.py`` writes from it; the
flags ``--rope-scaling``, ``--rope-scale``, ``--rope-freq-scale``, ``--rope-freq-base``, ``--yarn-*`` and
``-c/--ctx-size`` then apply by llama.cpp's rules (``common/arg.cpp``, ``src/llama-context.cpp``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from pecli.engines.base import Engine, EngineRun, Serving, positions_of, rope_type
from pecli.errors import ConfigError
from pecli.models.families.from_config import plan_of
from pecli.models.llama_cpp_scaling import Converted, of_hf
from pecli.schemes.scaling.registry import find_scaling, scales
from pecli.schemes.scaling.unscaled import NO_SCALING

VERSION = "0c1e57098"

#: The GGUF architectures whose files the fixtures ran through llama.cpp's own loader, context and graph
#: (``tests/fixtures/engines/llama_cpp/gguf_cases.json``; the test holds this set to them).
MEASURED_ARCHS = frozenset({
    "bloom", "cohere2", "command-r", "deepseek2", "falcon", "gemma", "gemma2", "gemma3", "glm4", "gpt-oss", "gptneox",
    "granite", "internlm2", "llama", "llama4", "mpt", "olmo", "olmo2", "phi2", "phi3", "qwen2", "qwen2moe", "qwen3",
    "qwen3moe", "smollm3", "stablelm", "starcoder2"})
#: HF model types ``convert_hf_to_gguf.py`` writes as another architecture than :data:`pecli.models.gguf.ARCHS` names.
CONVERTED_AS = {"mistral": "llama", "gemma3_text": "gemma3", "deepseek_v2": "deepseek2", "kimi_k2": "deepseek2",
                "olmo3": "olmo2", "mixtral": "llama"}


def _nope_temperature(groups: tuple, model_type: Any, config: Mapping[str, Any]) -> tuple:
    """The NoPE groups under the temperature llama.cpp's graph sets in code for the architecture the converter
    writes (Llama 4: 0.1 and 8,192 whatever the config's ``attn_temperature_tuning``, ``attn_scale`` and
    ``floor_scale`` say, which the converter does not write; :attr:`pecli.models.gguf_metadata.Arch.nope_temperature`).
    A config whose ``layer_types`` are all full attention converts with ``sliding_window`` 0 (``Llama4Model``,
    conversion/llama.py:396-399), on which llama.cpp aborts: that layer's scale is unknown."""
    from dataclasses import replace

    from pecli.engines.base import text_of
    from pecli.models.gguf import ARCHS, TEMPERATURE_ABORTS
    from pecli.models.logit_scale import LogitScale

    arch = ARCHS.get(converted_arch(model_type) or "")
    if arch is None or arch.nope_temperature is None:
        return groups
    kinds = text_of(config)[1].get("layer_types")
    if isinstance(kinds, list) and kinds and all(kind == "full_attention" for kind in kinds):
        return tuple(replace(group, logit_scale_unknown=TEMPERATURE_ABORTS) if group.options is None else group
                     for group in groups)
    scale = LogitScale(1.0, "llama4_temperature", arch.nope_temperature)
    return tuple(replace(group, attention_scale=scale) if group.options is None else group for group in groups)


def _windowless(model_type: Any, config: Mapping[str, Any]) -> tuple:
    """Llama 4 with every layer full attention converts with ``sliding_window`` 0 (conversion/llama.py:396-399):
    llama.cpp then rotates every layer but the last and aborts on that one (RULES.md §6, §20); no fixture converts
    such a config, so pecli says it cannot be sure (its plan keeps the config's NoPE layers)."""
    from pecli.engines.base import Departure, text_of
    from pecli.engines.served import UNMEASURED

    kinds = text_of(config)[1].get("layer_types")
    if converted_arch(model_type) != "llama4" or not isinstance(kinds, list) or not kinds or \
            any(kind != "full_attention" for kind in kinds):
        return ()
    return (Departure(UNMEASURED, "every layer_types entry is full_attention: the converter writes sliding_window 0, "
                      "on which llama.cpp rotates every layer but the last and aborts when it computes that one "
                      "(Llama 4's temperature scale is left 0); pecli has not run such a file and cannot be sure",
                      beyond_numbers=True),)


def converted_arch(model_type: Any) -> str | None:
    """The GGUF architecture the converter writes for HF ``model_type`` (None: none pecli maps)."""
    from pecli.models.gguf import ARCHS

    if model_type in CONVERTED_AS:
        return CONVERTED_AS[model_type]
    return next((name for name, arch in ARCHS.items() if arch.model_type == model_type), None)


@dataclass(frozen=True)
class LlamaCpp(Engine):
    """llama.cpp (see the module)."""

    def parse(self, args: str) -> tuple[dict[str, Any], dict[str, str]]:
        from pecli.models.runtime_flags import parse_flags

        return parse_flags(args), {}

    def run(self, config: Mapping[str, Any], args: str = "", env: Mapping[str, str] | None = None,
            source: str = "config.json") -> EngineRun:
        """What llama.cpp computes for the model of ``config`` under ``args``."""
        from dataclasses import replace

        from pecli.models.gguf import NOT_RUN, NOT_RUN_MODEL_TYPES
        from pecli.models.runtime_flags import runtime_plan

        flags, _ = self.parse(args)
        model = plan_of(dict(config), source)
        if model.model_type in NOT_RUN_MODEL_TYPES:
            return self.refusal(args, NOT_RUN[NOT_RUN_MODEL_TYPES[model.model_type]], positions_of(model))
        if model.model_type == "falcon":
            model = _falcon_converted(model, config)
        plan = runtime_plan(model, "llama.cpp", args)
        plan = replace(plan, source=" ".join(plan.source.split()),
                       groups=_nope_temperature(plan.groups, model.model_type, config))
        served = _served(plan, flags)
        departures = _longrope_departures(model, served) + _windowless(model.model_type, config)
        if converted_arch(model.model_type) not in MEASURED_ARCHS:
            from pecli.engines.base import Departure
            from pecli.engines.served import UNMEASURED

            departures += (Departure(
                UNMEASURED, f"pecli has not run llama.cpp {self.version} on the GGUF architecture convert_hf_to_gguf.py "
                f"writes for model type {model.model_type} (its fixtures hold {len(MEASURED_ARCHS)} architectures): it "
                "assumes llama.cpp computes it as the rules it measured say, and cannot be sure", beyond_numbers=True),)
        return EngineRun(self, args, plan, served, departures=departures, positions=positions_of(plan))

    def run_gguf(self, path: str, args: str = "") -> EngineRun:
        """What llama.cpp computes for the GGUF file at ``path`` under ``args``: the plan its loader, context and
        graph give (:func:`pecli.models.gguf_flags.plan_under_flags`) and the context it serves."""
        from pecli.models.gguf import read_gguf_metadata
        from pecli.models.gguf_flags import plan_under_flags
        from pecli.models.runtime_flags import served_context_of_file

        flags, _ = self.parse(args)
        values, tensors, types = read_gguf_metadata(path)
        plan = plan_under_flags(values, tensors, path, types, flags, args)
        return EngineRun(self, args, plan, served_context_of_file(values, flags), positions=positions_of(plan))

    def blamed(self, found: Any, reference: Any, args: str) -> Any:
        """Each difference put on the flag that, set to the model's value or left out, gives the model's
        numbers (:func:`pecli.models.runtime_flags.flag_trials`, :func:`pecli.models.blame.blamed`)."""
        from pecli.models.blame import blamed
        from pecli.models.gguf_blame import with_engine_trials
        from pecli.models.runtime_flags import flag_trials, parse_flags

        return blamed(found, *with_engine_trials(reference, *flag_trials(reference, parse_flags(args))))

    def serving(self, base: Any, patch: Mapping[str, Any], target: int,
                config: Mapping[str, Any] | None = None) -> Serving:
        """The flags llama.cpp needs for the candidate ``patch``, read back by :mod:`pecli.models.runtime_flags`."""
        from pecli.engines.served import patch_keys

        keys, block = patch_keys(patch, base.path)
        kind = rope_type(block)
        entry = of_hf(kind)
        theta = keys.get("rope_theta", keys.get("rotary_emb_base", (block or {}).get("rope_theta", base.base)))
        if entry is not None and entry.converted in (Converted.DIVISORS, Converted.FACTOR_TENSORS):
            return self._unsupported(f"llama.cpp reads {kind}'s per-pair factors from the GGUF file: merge the patch into "
                                     "config.json and convert the model again (convert_hf_to_gguf.py)")
        if entry is not None and entry.record.grows_base:
            return self._unsupported("llama.cpp has no dynamic NTK scaling (its closest is a fixed --rope-freq-base, the "
                                     "base candidate)")
        flags = ["--ctx-size", str(target)]
        warnings = []
        if entry is not None and not entry.scales:
            flags += ["--rope-scaling", entry.word, "--rope-freq-base", flag_number(theta)]
        elif entry is not None and entry.flag:
            flags += ["--rope-scaling", entry.word, "--rope-scale", flag_number(block["factor"])]
            if entry.ramps:
                flags += ["--yarn-orig-ctx", str(int(block["original_max_position_embeddings"]))]
            if block.get("mscale_all_dim"):
                warnings.append("llama.cpp's DeepSeek attention takes mscale from the GGUF's yarn log multiplier, not from flags")
        from pecli.models.gguf_rope import swa_rule

        rule = swa_rule(base.model_type)
        if base.windowed and rule == "context":
            warnings.append(f"llama.cpp's {base.model_type} graph rotates its sliding-window layers "
                            f"({', '.join(base.windowed)}) with these flags too")
        elif base.windowed and not base.unwindowed and rule == "trained":
            warnings.append(f"every RoPE layer of this model attends within a window ({', '.join(base.windowed)}), and "
                            "llama.cpp keeps the trained base and scale there whatever its flags: they change no frequency")
            return Serving("llama.cpp", tuple(flags), None, tuple(warnings), version=self.version)
        if base.windowed and base.unwindowed and rule == "plain":
            warnings.append(f"llama.cpp's {base.model_type} graph rotates its sliding-window layers "
                            f"({', '.join(base.windowed)}) with the base alone: scale 1, no YaRN")
        elif base.windowed and base.unwindowed and rule == "trained":
            warnings.append("llama.cpp applies these flags to the full-attention layers only: its sliding-window "
                            f"layers ({', '.join(base.windowed)}) keep the trained base and scale")
        if scales(base.scaling):
            warnings.append(f"a GGUF converted from this model keeps its {base.scaling} scaling; these flags replace "
                            "the scaling type and factor but not per-pair factors stored in the file")
        found = _reads(base, flags)
        if found is not None and not _same_scaling(found, block, theta):
            warnings.append(f"llama.cpp computes {found['rope_scaling'] or 'no scaling'} under these flags, not the "
                            "candidate's keys")
            return Serving("llama.cpp", tuple(flags), None, tuple(warnings), version=self.version)
        from pecli.models.runtime_flags import padded_context

        # llama.cpp runs -c rounded up to a multiple of 256 (llama-context.cpp: GGML_PAD(n_ctx, 256))
        return Serving("llama.cpp", tuple(flags), padded_context(target), tuple(warnings), version=self.version)

    def _unsupported(self, why: str) -> Serving:
        return Serving("llama.cpp", (), None, (), why, version=self.version)


def _falcon_converted(model: Any, config: Mapping[str, Any]) -> Any:
    """Falcon as ``FalconModel`` (``conversion/falcon.py``) converts it and llama.cpp's falcon graph runs it: no
    ``rope.freq_base`` (10,000) and ``context_length`` 2,048 written whatever the config says, and RoPE on the
    whole head in pairs half a head apart in every layer (``src/models/falcon.cpp``) — an ALiBi Falcon (Falcon-RW,
    ``alibi: true``) included: the converter does not read ``alibi``."""
    from dataclasses import replace

    heads = int(config.get("num_attention_heads") or config.get("n_head"))
    head = int(config["hidden_size"]) // heads
    rope = {"scheme": "rope", "dim": head, "base": 10000.0, "layout": "half", "max_position_embeddings": 2048}
    note = ("llama.cpp's falcon graph: RoPE on the whole head, base 10,000 (conversion/falcon.py writes no base and "
            "context 2,048; it does not read alibi)")
    groups = tuple(replace(g, options=dict(rope), note=note) for g in model.groups)
    return replace(model, groups=groups)


def _longrope_departures(model: Any, served: int | None) -> tuple:
    """LongRoPE under llama.cpp: the short or the long factors picked once, from the context it runs
    (``llama_model::get_rope_factors``: long when ``n_ctx`` passes ``original_context_length``)."""
    from pecli.engines.base import Departure

    for group in model.groups:
        block = (group.options or {}).get("rope_scaling") or {}
        record = find_scaling(rope_type(block))
        if record is not None and record.per_pair_factors and block.get("original_max_position_embeddings"):
            original = int(block["original_max_position_embeddings"])
            which = "long" if served is not None and served > original else "short"
            return (Departure(
                "LongRoPE factors chosen once", f"llama.cpp uses the {which} factors at every position, picked from the "
                f"context it runs ({served:,} tokens: long past {original:,}), where transformers switches from the "
                f"short to the long ones when the sequence passes {original:,}",
                f"-c {original} gives the model's numbers up to {original:,} tokens (the short factors); past it there "
                "is no way"),)
    return ()


def _served(plan: Any, flags: Mapping[str, Any]) -> int | None:
    """The context llama.cpp runs the converted file with: ``--ctx-size``, else the file's ``context_length``,
    rounded up to a multiple of 256 (:func:`pecli.models.runtime_flags.padded_context`); None for a model
    without a RoPE group (no context the flags read)."""
    from pecli.models.runtime_flags import padded_context

    if flags.get("--ctx-size"):
        return padded_context(flags["--ctx-size"])
    found = [g.options.get("max_position_embeddings") for g in plan.groups if g.options]
    found = [n for n in found if n]
    return padded_context(found[0]) if found else None


def flag_number(value: Any) -> str:
    """A number as a flag: short (``4``, ``1e+06``) where that is the same number, else every digit."""
    short = f"{float(value):g}"
    return short if float(short) == float(value) else repr(float(value))


def _reads(base: Any, flags: list[str]) -> dict[str, Any] | None:
    """What llama.cpp computes, read back from ``flags`` over the model's converted file by the one reader
    (:mod:`pecli.models.runtime_flags`); None where the file holds per-pair factors flags do not reach."""
    from pecli.models import runtime_flags as reader
    from pecli.models.gguf_rope import swa_rule

    try:
        trained = reader.converted_rope(base.own_scaling, model_type=base.model_type, base=base.base,
                                        context=base.served, rotated_dim=base.dim)
        flagged = dict(zip(flags[::2], flags[1::2]))
        only_windowed = not base.unwindowed and swa_rule(base.model_type) != "context"
        return reader.hf_settings(reader.run_rope(trained, flagged, base.dim, windowed=only_windowed
                                                  and swa_rule(base.model_type) == "trained",
                                                  plain=only_windowed and swa_rule(base.model_type) == "plain"))
    except ConfigError:
        return None


def _same_scaling(found: dict[str, Any], block: Any, theta: Any) -> bool:
    """Whether llama.cpp's settings are the candidate's: base, rope type, factor, original length."""
    keys = ("factor", "original_max_position_embeddings")
    mine = found["rope_scaling"] or {"rope_type": NO_SCALING.hf_name}
    theirs = {"rope_type": rope_type(block), **{k: (block or {}).get(k) for k in keys if (block or {}).get(k) is not None}}
    return (math.isclose(found["rope_theta"], float(theta), rel_tol=1e-12) and mine["rope_type"] == theirs["rope_type"]
            and all(math.isclose(float(mine[k]), float(theirs[k]), rel_tol=1e-12) for k in keys if k in theirs))


def llama_cpp_settings(flags: Mapping[str, Any], config: Mapping[str, Any], *,
                       training_context: int | None = None) -> tuple[dict[str, Any], int]:
    """What llama.cpp computes for the model of ``config`` run with ``flags`` ({flag: value}), in
    transformers' keys (``rope_theta``, ``rope_scaling``), and the context it runs; read by
    :mod:`pecli.models.runtime_flags` from the GGUF file ``convert_hf_to_gguf.py`` would write
    (``training_context``: its context length, default ``max_position_embeddings``)."""
    from pecli.models import runtime_flags as reader
    from pecli.models.gguf_rope import swa_rule

    plan = plan_of(dict(config), "config")
    groups = [g for g in plan.groups if g.scalable]
    if not groups:
        raise ConfigError("runtime", "llama.cpp's RoPE flags apply to a model with RoPE; this one has none")
    # the flags reach the full-attention layers (a group of only windowed layers keeps its trained settings)
    group = next((g for g in groups if not g.windowed), groups[0])
    options = group.options
    dim = int(options["dim"] * options.get("partial_rotary_factor", 1.0))
    context = int(training_context or reader.converted_context(options))
    trained = reader.converted_rope(options.get("rope_scaling"), model_type=plan.model_type,
                                    base=float(options.get("base", 10000.0)), context=context, rotated_dim=dim)
    rope = reader.run_rope(trained, flags, dim, windowed=group.windowed)
    return reader.hf_settings(rope), reader.served_context(trained, flags)


ENGINE = LlamaCpp("llama.cpp", "llama.cpp", VERSION, "llama.cpp 0c1e57098 as llama-cpp-python 0.3.36 vendors it, built from "
                  "source and run by tests/fixtures/engines/llama_cpp/probe.cpp: common/arg.cpp, src/llama-context.cpp, "
                  "src/llama-model.cpp, src/models/*.cpp, ggml-cpu/ops.cpp (rope_yarn), convert_hf_to_gguf.py "
                  "(conversion/*.py); rules in tests/fixtures/engines/llama_cpp/RULES.md", caps_context=False)
