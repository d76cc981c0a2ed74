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
llama.cpp (``common/arg.cpp``, the ``llama-server``/``llama-cli`` help)
    ``--rope-scaling {none,linear,yarn}``; ``--rope-scale N`` "expands context by a factor of N" (it sets
    the frequency scale to 1/N); ``--rope-freq-scale F`` expands it by 1/F; ``--rope-freq-base B``;
    ``--yarn-orig-ctx N`` (0: the model's training context); ``-c/--ctx-size N``. YaRN's attention factor
    is 0.1 ln(1/F) + 1 by default, as transformers'. llama3's per-pair factors and LongRoPE's factors are
    tensors of the GGUF file (written by ``convert_hf_to_gguf.py``), and there is no dynamic NTK: those
    cannot be set by flags.
MLX (``mlx_lm/models/rope_utils.py``, ``initialize_rope``)
    No flags: it reads the model folder's ``config.json`` (merge the patch there); it builds ``default``,
    ``linear`` (scale 1/factor), ``llama3``, ``yarn`` (with ``mscale``, ``mscale_all_dim``,
    ``attention_factor``), ``longrope`` and refuses any other type ("Unsupported RoPE type").
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any, Mapping

from pecli.errors import ConfigError

#: The engines pecli knows, as ``--runtime`` spells them.
ENGINES = ("vllm", "sglang", "llama.cpp", "mlx")
#: Rope types whose ``max_position_embeddings`` vLLM does not multiply by the factor.
VLLM_UNSCALED_TYPES = ("su", "longrope", "llama3")
#: The rope types mlx-lm's ``initialize_rope`` builds.
MLX_TYPES = ("default", "linear", "llama3", "yarn", "longrope")
#: The rope types llama.cpp's ``--rope-scaling`` takes ("none" is no scaling).
LLAMA_CPP_TYPES = ("none", "linear", "yarn")


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


def llama_cpp_rope(flags: Mapping[str, Any], training_context: int, base: float) -> dict[str, Any]:
    """The HF-style rope settings llama.cpp computes from its flags (``--rope-scale`` etc., keys as
    spelled on the command line), for a model trained on ``training_context`` with base ``base``.

    Both ``--rope-scale`` and ``--rope-freq-scale`` set the one frequency scale (the last given wins in
    llama.cpp), so giving both is refused here. ``--rope-scaling`` defaults to linear, as llama.cpp's
    help says, "unless specified by the model".
    """
    if "--rope-scale" in flags and "--rope-freq-scale" in flags:
        raise ConfigError("runtime", "give --rope-scale or --rope-freq-scale, not both")
    factor = 1.0
    if "--rope-scale" in flags:
        factor = float(flags["--rope-scale"])
    elif "--rope-freq-scale" in flags:
        factor = 1.0 / float(flags["--rope-freq-scale"])
    kind = str(flags.get("--rope-scaling", "linear" if factor != 1.0 else "none"))
    if kind not in LLAMA_CPP_TYPES:
        raise ConfigError("runtime", f"--rope-scaling {kind}: llama.cpp takes {', '.join(LLAMA_CPP_TYPES)}")
    settings: dict[str, Any] = {"rope_theta": float(flags.get("--rope-freq-base", base))}
    if kind == "none" or factor == 1.0:
        settings["rope_type"] = "default"
    elif kind == "linear":
        settings.update(rope_type="linear", factor=factor)
    else:
        original = int(flags.get("--yarn-orig-ctx", 0)) or training_context
        settings.update(rope_type="yarn", factor=factor, original_max_position_embeddings=original)
    if "--ctx-size" in flags:
        settings["max_position_embeddings"] = int(flags["--ctx-size"])
    return settings


def _text_keys(patch: Mapping[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    node: Any = patch
    for key in path:
        node = node[key]
    return dict(node)


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
    keys = _text_keys(patch, base.path)
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
        flags += ["--rope-scaling", "none", "--rope-freq-base", f"{float(theta):g}"]
    elif kind == "linear":
        flags += ["--rope-scaling", "linear", "--rope-scale", f"{float(block['factor']):g}"]
    elif kind == "yarn":
        flags += ["--rope-scaling", "yarn", "--rope-scale", f"{float(block['factor']):g}", "--yarn-orig-ctx",
                  str(int(block["original_max_position_embeddings"]))]
        if block.get("mscale_all_dim"):
            warnings.append("llama.cpp's DeepSeek attention takes mscale from the GGUF's yarn log multiplier, not from flags")
    if base.scaling not in ("none", "default"):
        warnings.append(f"a GGUF converted from this model keeps its {base.scaling} scaling; these flags replace "
                        "the scaling type and factor but not per-pair factors stored in the file")
    return Serving("llama.cpp", tuple(flags), target, tuple(warnings))


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
        text = _text_keys(merged, path)
        block = text.get("rope_parameters", text.get("rope_scaling"))
        longest = int(text["max_position_embeddings"])
        if engine == "vllm":
            derived, asked = vllm_max_len(longest, block), flags.get("--max-model-len")
            return merged, derived if asked is None else (int(asked) if int(asked) <= derived else None)
        asked = flags.get("--context-length")
        return merged, sglang_context_length(longest, block) if asked is None else int(asked)
    text = _text_keys(config, path)
    if engine == "mlx":
        return dict(config), int(text["max_position_embeddings"])
    base = text.get("rope_theta", text.get("rotary_emb_base", 10000.0))
    rope = llama_cpp_rope(flags, int(training_context or text["max_position_embeddings"]), float(base))
    served = rope.pop("max_position_embeddings", None)
    text = {**text, "rope_theta": rope.pop("rope_theta"), "rope_scaling": None if rope["rope_type"] == "default" else rope}
    return _merged(config, _nested(text, path)), served


#: Flags of each engine that change what it computes for positions (the others are ignored by name).
ENGINE_FLAGS = {"vllm": ("--hf-overrides", "--max-model-len"), "sglang": ("--json-model-override-args", "--context-length"),
                "mlx": ()}


def parse_engine_flags(engine: str, args: str) -> dict[str, str]:
    """``"--hf-overrides '{…}' --max-model-len 32768"`` → ``{flag: value}`` for the flags of ``engine``
    that change positions (``--flag=value`` and ``--flag value`` alike); any other flag is an error."""
    try:
        words = shlex.split(args)
    except ValueError as error:
        raise ConfigError("args", f"cannot be split as a shell splits it: {error}") from None
    found: dict[str, str] = {}
    while words:
        flag, _, inline = words.pop(0).partition("=")
        if flag not in ENGINE_FLAGS[engine]:
            known = ", ".join(ENGINE_FLAGS[engine]) or "none: it reads the model folder's config.json"
            raise ConfigError("args", f"{flag!r} is not a {engine} flag that changes positions (pecli reads: {known})")
        if not inline and not words:
            raise ConfigError("args", f"{flag} needs a value")
        found[flag] = inline or words.pop(0)
    return found


def engine_config(engine: str, args: str, config: Mapping[str, Any], path: tuple[str, ...] = ()) -> tuple[dict[str, Any], int]:
    """The config ``engine`` runs under ``args`` and the context it serves; exit 2 where it would refuse."""
    merged, served = settings_from_flags(engine, parse_engine_flags(engine, args), config, path=path)
    if served is None:
        raise ConfigError("args", f"{engine} would refuse these flags: the context asked for is above the one it "
                          "derives from the config")
    return merged, served
