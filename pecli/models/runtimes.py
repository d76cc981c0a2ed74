"""What serving engines make of RoPE settings: their flags → the HF-style settings they compute, and back.

Pure data and functions, no engine imported. Each rule is the engine's documented behaviour, read in
its source (the functions cite it); where an engine reads a ``config.json`` patch differently from
transformers, :func:`serving_flags` says so in a warning.

vLLM (``vllm/config/model.py``, ``_get_and_verify_max_len``)
    Reads ``config.json`` with ``--hf-overrides JSON`` merged into it; the longest context it allows is
    derived from ``max_position_embeddings``: times ``factor`` for every rope type but ``llama3`` and
    ``longrope`` (``su``), from ``original_max_position_embeddings`` times ``factor`` for ``yarn``.
    ``--max-model-len`` above that is refused (unless ``VLLM_ALLOW_LONG_MAX_MODEL_LEN=1``). Its dynamic
    NTK rotary embedding computes the base once, for ``max_position_embeddings × factor`` tokens.
SGLang (``sglang/srt/utils/hf_transformers_utils.py``, ``get_context_length``)
    ``--json-model-override-args JSON`` merged into the config, ``--context-length N``; the derived
    length is ``max_position_embeddings × factor``, except when the scaling block has
    ``original_max_position_embeddings`` or is ``llama3`` (then ×1).
llama.cpp (``common/arg.cpp``, ``src/llama-context.cpp``)
    ``--rope-scaling {none,linear,yarn}``, ``--rope-scale N`` (frequency scale 1/N), ``--rope-freq-base
    B``, ``--yarn-orig-ctx N``, ``-c/--ctx-size N``, read by :mod:`pecli.models.runtime_flags` (the one
    reader of llama.cpp's flags, with llama.cpp's rule for a flag not given: the model's training type,
    linear when its GGUF file has none). llama3's per-pair factors and LongRoPE's factors are tensors of
    the GGUF file (written by ``convert_hf_to_gguf.py``), and there is no dynamic NTK: those cannot be
    set by flags.
MLX (``mlx_lm/models/rope_utils.py``, ``initialize_rope``)
    No flags: it reads the model folder's ``config.json`` (merge the patch there); it builds ``default``,
    ``linear`` (scale 1/factor), ``llama3``, ``yarn`` (with ``mscale``, ``mscale_all_dim``,
    ``attention_factor``), ``longrope`` and refuses any other type ("Unsupported RoPE type").
"""

from __future__ import annotations

import json
import math
import shlex
from dataclasses import dataclass
from typing import Any, Mapping

from pecli.errors import ConfigError
from pecli.models.families import at_path, plan_of

#: The engines pecli knows, as ``--runtime`` spells them.
ENGINES = ("vllm", "sglang", "llama.cpp", "mlx")
#: Rope types whose ``max_position_embeddings`` vLLM does not multiply by the factor.
VLLM_UNSCALED_TYPES = ("su", "longrope", "llama3")
#: The rope types mlx-lm's ``initialize_rope`` builds.
MLX_TYPES = ("default", "linear", "llama3", "yarn", "longrope")


@dataclass(frozen=True)
class Serving:
    """What one engine needs to serve a candidate: command-line flags (or the config.json edit), the
    context it would then serve, and where it reads the patch differently from transformers."""

    engine: str
    flags: tuple[str, ...]
    served: int | None
    warnings: tuple[str, ...] = ()
    unsupported: str | None = None
    edit_config: dict[str, Any] | None = None

    def command_line(self) -> str:
        """The flags as one shell-quoted line."""
        return " ".join(shlex.quote(flag) for flag in self.flags)

    def command_lines(self) -> list[str]:
        """The flags for a shell, one flag and its value per line (continued with a backslash), a JSON value
        spread over lines inside its quotes, so that the command fits a narrow terminal and pastes as is."""
        lines: list[str] = []
        for flag in self.flags:
            if flag.startswith("{"):
                lines[-1] += " '" + json.dumps(json.loads(flag), indent=2) + "'"
            elif flag.startswith("-") or not lines:
                lines.append(flag)
            else:
                lines[-1] += " " + shlex.quote(flag)
        return [line + (" \\" if number < len(lines) - 1 else "") for number, line in enumerate(lines)]

    def to_dict(self) -> dict[str, Any]:
        return {"engine": self.engine, "flags": list(self.flags), "served": self.served,
                "warnings": list(self.warnings), "unsupported": self.unsupported, "edit_config": self.edit_config}


def rope_type(block: Mapping[str, Any] | None) -> str:
    """The block's rope type (``type`` is the older spelling); ``default`` without a block."""
    if not block:
        return "default"
    return str(block.get("rope_type") or block.get("type") or "default")


def vllm_max_len(max_position_embeddings: int, block: Mapping[str, Any] | None) -> int:
    """The longest context vLLM derives from the config (see the module notes)."""
    length = float(max_position_embeddings)
    kind = rope_type(block)
    if block and kind not in VLLM_UNSCALED_TYPES:
        factor = float(block.get("factor", 1.0) or 1.0)
        if kind == "yarn" and block.get("original_max_position_embeddings") is not None:
            length = float(block["original_max_position_embeddings"])
        length *= factor
    return int(length)


def sglang_context_length(max_position_embeddings: int, block: Mapping[str, Any] | None) -> int:
    """The context SGLang derives from the config (see the module notes)."""
    factor = 1.0
    if block:
        factor = float(block.get("factor", 1) or 1)
        if "original_max_position_embeddings" in block or block.get("rope_type") == "llama3":
            factor = 1.0
    return int(factor * max_position_embeddings)


def _nested(keys: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    for key in reversed(path):
        keys = {key: keys}
    return keys


def serving_flags(engine: str, base: Any, patch: Mapping[str, Any], target: int) -> Serving:
    """What ``engine`` needs to serve the candidate ``patch`` at ``target`` tokens.

    ``base`` is the :class:`~pecli.models.extension.ExtensionBase` the patch was made from (its path,
    form, training length and base).
    """
    if engine not in ENGINES:
        raise ConfigError("runtime", f"{engine!r} is not one of {', '.join(ENGINES)}")
    keys = dict(at_path(patch, base.path))
    block = keys.get("rope_parameters", keys.get("rope_scaling"))
    return {"vllm": _vllm, "sglang": _sglang, "llama.cpp": _llama_cpp, "mlx": _mlx}[engine](base, keys, block, target)


def _served_at_training(base: Any, keys: dict[str, Any], block: Any, derive, name: str) -> tuple[dict[str, Any], list[str]]:
    """Keys for an engine that multiplies ``max_position_embeddings`` by the factor: for linear, the
    factor already stretches L₀ to N, so ``max_position_embeddings`` L₀ gives N (same frequencies)."""
    warnings = []
    kind = rope_type(block)
    given = int(keys["max_position_embeddings"])
    if derive(given, block) != given and kind == "linear":
        warnings.append(f"{name} multiplies max_position_embeddings by the factor for {kind}: the patch's "
                        f"{given:,} would allow {derive(given, block):,} tokens, so the overrides set it to "
                        f"L₀ = {base.pretraining:,} (same frequencies)")
        keys = {**keys, "max_position_embeddings": base.pretraining}
    return keys, warnings


def _vllm(base: Any, keys: dict[str, Any], block: Any, target: int) -> Serving:
    keys, warnings = _served_at_training(base, keys, block, vllm_max_len, "vLLM")
    derived = vllm_max_len(int(keys["max_position_embeddings"]), block)
    if rope_type(block) == "dynamic":
        warnings.append(f"vLLM's dynamic NTK computes the base once, for {derived:,} tokens, and uses it at every "
                        "length (transformers grows it with the sequence)")
    if derived < target:
        warnings.append(f"vLLM derives {derived:,} tokens from these settings and refuses --max-model-len {target:,} "
                        "unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1")
    flags = ("--hf-overrides", json.dumps(_nested(keys, base.path), separators=(",", ":")), "--max-model-len", str(target))
    return Serving("vllm", flags, target if derived >= target else None, tuple(warnings))


def _sglang(base: Any, keys: dict[str, Any], block: Any, target: int) -> Serving:
    keys, warnings = _served_at_training(base, keys, block, sglang_context_length, "SGLang")
    derived = sglang_context_length(int(keys["max_position_embeddings"]), block)
    if derived != target and rope_type(block) != "linear":
        warnings.append(f"SGLang derives {derived:,} tokens from these settings (max_position_embeddings × factor "
                        f"without original_max_position_embeddings in the block); --context-length {target:,} sets it")
    flags = ("--json-model-override-args", json.dumps(_nested(keys, base.path), separators=(",", ":")),
             "--context-length", str(target))
    return Serving("sglang", flags, target, tuple(warnings))


def _llama_cpp(base: Any, keys: dict[str, Any], block: Any, target: int) -> Serving:
    kind = rope_type(block)
    theta = keys.get("rope_theta", keys.get("rotary_emb_base", (block or {}).get("rope_theta", base.base)))
    if kind in ("llama3", "longrope"):
        return Serving("llama.cpp", (), None, (), f"llama.cpp reads {kind}'s per-pair factors from the GGUF file: merge "
                       "the patch into config.json and convert the model again (convert_hf_to_gguf.py)")
    if kind == "dynamic":
        return Serving("llama.cpp", (), None, (), "llama.cpp has no dynamic NTK scaling (its closest is a fixed "
                       "--rope-freq-base, the base candidate)")
    flags = ["--ctx-size", str(target)]
    warnings = []
    if kind == "default":
        flags += ["--rope-scaling", "none", "--rope-freq-base", _flag_number(theta)]
    elif kind == "linear":
        flags += ["--rope-scaling", "linear", "--rope-scale", _flag_number(block["factor"])]
    elif kind == "yarn":
        flags += ["--rope-scaling", "yarn", "--rope-scale", _flag_number(block["factor"]), "--yarn-orig-ctx",
                  str(int(block["original_max_position_embeddings"]))]
        if block.get("mscale_all_dim"):
            warnings.append("llama.cpp's DeepSeek attention takes mscale from the GGUF's yarn log multiplier, not from flags")
    if base.windowed and not base.unwindowed:
        warnings.append(f"every RoPE layer of this model attends within a window ({', '.join(base.windowed)}), and "
                        "llama.cpp keeps the trained base and scale there whatever its flags: they change no frequency")
        return Serving("llama.cpp", tuple(flags), None, tuple(warnings))
    if base.windowed and base.unwindowed:
        warnings.append("llama.cpp applies these flags to the full-attention layers only: its sliding-window "
                        f"layers ({', '.join(base.windowed)}) keep the trained base and scale")
    if base.scaling not in ("none", "default"):
        warnings.append(f"a GGUF converted from this model keeps its {base.scaling} scaling; these flags replace "
                        "the scaling type and factor but not per-pair factors stored in the file")
    found = _llama_cpp_reads(base, flags)
    if found is not None and not _same_scaling(found, block, theta):
        warnings.append(f"llama.cpp computes {found['rope_scaling'] or 'no scaling'} under these flags, not the "
                        "candidate's keys")
        return Serving("llama.cpp", tuple(flags), None, tuple(warnings))
    return Serving("llama.cpp", tuple(flags), target, tuple(warnings))


def _flag_number(value: Any) -> str:
    """A number as a flag: short (``4``, ``1e+06``) where that is the same number, else every digit."""
    short = f"{float(value):g}"
    return short if float(short) == float(value) else repr(float(value))


def _llama_cpp_reads(base: Any, flags: list[str]) -> dict[str, Any] | None:
    """What llama.cpp computes, read back from ``flags`` over the model's converted file by the one reader
    (:mod:`pecli.models.runtime_flags`); None where the file holds per-pair factors flags do not reach."""
    from pecli.models import runtime_flags as reader

    try:
        trained = reader.converted_rope(base.own_scaling, model_type=base.model_type, base=base.base,
                                        context=base.served, rotated_dim=base.dim)
        flagged = dict(zip(flags[::2], flags[1::2]))
        return reader.hf_settings(reader.run_rope(trained, flagged, base.dim, windowed=not base.unwindowed))
    except ConfigError:
        return None


def _same_scaling(found: dict[str, Any], block: Any, theta: Any) -> bool:
    """Whether llama.cpp's settings are the candidate's: base, rope type, factor, original length."""
    keys = ("factor", "original_max_position_embeddings")
    mine = found["rope_scaling"] or {"rope_type": "default"}
    theirs = {"rope_type": rope_type(block), **{k: (block or {}).get(k) for k in keys if (block or {}).get(k) is not None}}
    return (math.isclose(found["rope_theta"], float(theta), rel_tol=1e-12) and mine["rope_type"] == theirs["rope_type"]
            and all(math.isclose(float(mine[k]), float(theirs[k]), rel_tol=1e-12) for k in keys if k in theirs))


def _mlx(base: Any, keys: dict[str, Any], block: Any, target: int) -> Serving:
    kind = rope_type(block)
    if kind not in MLX_TYPES:
        return Serving("mlx", (), None, (), f"mlx-lm's initialize_rope refuses rope type {kind} (Unsupported RoPE type)")
    return Serving("mlx", (), target, ("mlx-lm takes no RoPE flags: merge the patch into the model folder's "
                                       "config.json",), None, _nested(keys, base.path))


def _merged(config: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with ``overrides`` merged key by key into nested mappings (as vLLM's and SGLang's
    override arguments update the loaded config)."""
    out = dict(config)
    for key, value in overrides.items():
        out[key] = _merged(out[key], value) if isinstance(value, Mapping) and isinstance(out.get(key), Mapping) else value
    return out


def _json_flag(flags: Mapping[str, Any], name: str) -> dict[str, Any]:
    raw = flags.get(name)
    if raw is None:
        return {}
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        raise ConfigError("runtime", f"{name} is not valid JSON") from None
    if not isinstance(value, dict):
        raise ConfigError("runtime", f"{name} must be a JSON object")
    return value


def settings_from_flags(engine: str, flags: Mapping[str, Any], config: Mapping[str, Any], *,
                        path: tuple[str, ...] = (), training_context: int | None = None) -> tuple[dict[str, Any], int | None]:
    """The config an engine runs with, given its command-line ``flags`` ({flag: value}) and the model's
    ``config``, and the context it serves (None where it would refuse). ``path`` is where the text model's
    keys are; ``training_context`` and the config's base are llama.cpp's defaults for its flags."""
    if engine not in ENGINES:
        raise ConfigError("runtime", f"{engine!r} is not one of {', '.join(ENGINES)}")
    if engine in ("vllm", "sglang"):
        name = "--hf-overrides" if engine == "vllm" else "--json-model-override-args"
        merged = _merged(config, _json_flag(flags, name))
        text = dict(at_path(merged, path))
        block = text.get("rope_parameters", text.get("rope_scaling"))
        longest = int(text["max_position_embeddings"])
        if engine == "vllm":
            derived, asked = vllm_max_len(longest, block), flags.get("--max-model-len")
            return merged, derived if asked is None else (int(asked) if int(asked) <= derived else None)
        asked = flags.get("--context-length")
        return merged, sglang_context_length(longest, block) if asked is None else int(asked)
    text = dict(at_path(config, path))
    if engine == "mlx":
        return dict(config), int(text["max_position_embeddings"])
    keys, served = llama_cpp_settings(flags, config, training_context=training_context)
    if isinstance(text.get("rope_parameters"), dict):
        kept = {k: v for k, v in text["rope_parameters"].items() if k == "partial_rotary_factor"}
        text = {**text, "rope_parameters": {**kept, "rope_theta": keys["rope_theta"],
                                            **(keys["rope_scaling"] or {"rope_type": "default"})}}
    else:
        text = {**text, "rope_theta": keys["rope_theta"], "rope_scaling": keys["rope_scaling"]}
    return _replaced(config, path, text), served


def _replaced(config: Mapping[str, Any], path: tuple[str, ...], text: dict[str, Any]) -> dict[str, Any]:
    """``config`` with the text model's keys (at ``path``) replaced by ``text``."""
    if not path:
        return text
    return {**config, path[0]: _replaced(config[path[0]], path[1:], text)}


def llama_cpp_settings(flags: Mapping[str, Any], config: Mapping[str, Any], *,
                       training_context: int | None = None) -> tuple[dict[str, Any], int]:
    """What llama.cpp computes for the model of ``config`` run with ``flags`` ({flag: value}), in
    transformers' keys (``rope_theta``, ``rope_scaling``), and the context it runs; read by
    :mod:`pecli.models.runtime_flags` from the GGUF file ``convert_hf_to_gguf.py`` would write
    (``training_context``: its context length, default ``max_position_embeddings``)."""
    from pecli.models import runtime_flags as reader

    plan = plan_of(dict(config), "config")
    groups = [g for g in plan.groups if g.options is not None and g.scheme == "rope"]
    if not groups:
        raise ConfigError("runtime", "llama.cpp's RoPE flags apply to a model with RoPE; this one has none")
    # the flags reach the full-attention layers (a group of only windowed layers keeps its trained settings)
    group = next((g for g in groups if not g.windowed), groups[0])
    options = group.options
    dim = int(options["dim"] * options.get("partial_rotary_factor", 1.0))
    context = int(training_context or options.get("max_position_embeddings") or 4096)
    trained = reader.converted_rope(options.get("rope_scaling"), model_type=plan.model_type,
                                    base=float(options.get("base", 10000.0)), context=context, rotated_dim=dim)
    rope = reader.run_rope(trained, flags, dim, windowed=group.windowed)
    return reader.hf_settings(rope), reader.served_context(trained, flags)


#: Flags of each engine that change what it computes for positions (the others are ignored by name).
ENGINE_FLAGS = {"vllm": ("--hf-overrides", "--max-model-len"), "sglang": ("--json-model-override-args", "--context-length"),
                "mlx": ()}


def parse_engine_flags(engine: str, args: str) -> dict[str, str]:
    """``"--hf-overrides '{…}' --max-model-len 32768"`` → ``{flag: value}`` for the flags of ``engine``
    that change positions (``--flag=value`` and ``--flag value`` alike); any other flag is an error."""
    from pecli.models.runtime_flags import flag_pairs

    def refusal(flag: str) -> str | None:
        if flag in ENGINE_FLAGS[engine]:
            return None
        known = ", ".join(ENGINE_FLAGS[engine]) or "none: it reads the model folder's config.json"
        return f"{flag!r} is not a {engine} flag that changes positions (pecli reads: {known})"

    return dict(flag_pairs(args, refusal))


def engine_config(engine: str, args: str, config: Mapping[str, Any], path: tuple[str, ...] = ()) -> tuple[dict[str, Any], int]:
    """The config ``engine`` runs under ``args`` and the context it serves; exit 2 where it would refuse."""
    merged, served = settings_from_flags(engine, parse_engine_flags(engine, args), config, path=path)
    if served is None:
        raise ConfigError("args", f"{engine} would refuse these flags: the context asked for is above the one it "
                          "derives from the config")
    return merged, served
