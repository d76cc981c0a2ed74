"""An engine's command-line flags over a model's plan: what llama.cpp computes when run with them.

A minimal reader of llama.cpp's RoPE flags (``common/arg.cpp``): ``--rope-scaling {none,linear,yarn}``,
``--rope-scale N`` (``freq_scale = 1/N``), ``--rope-freq-scale F``, ``--rope-freq-base B``,
``--yarn-orig-ctx N``, ``--yarn-ext-factor``, ``--yarn-attn-factor``, ``--yarn-beta-fast``,
``--yarn-beta-slow``. A flag replaces the value the converted file would give (the model's own); the
rest of llama.cpp's computation is :mod:`pecli.models.gguf`'s. Only llama.cpp is read here; models
whose own scaling is not none, linear or yarn are refused.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import replace
from typing import Any

from pecli.errors import ConfigError
from pecli.models.plan import LayerGroup, PositionPlan

#: The flags read, and the type of their value.
FLAGS = {"--rope-scaling": str, "--rope-scale": float, "--rope-freq-scale": float, "--rope-freq-base": float,
         "--yarn-orig-ctx": int, "--yarn-ext-factor": float, "--yarn-attn-factor": float, "--yarn-beta-fast": float,
         "--yarn-beta-slow": float}


def parse_flags(args: str) -> dict[str, Any]:
    """``"--rope-scaling yarn --rope-scale 4"`` → ``{"--rope-scaling": "yarn", "--rope-scale": 4.0}``."""
    words, found = shlex.split(args), {}
    for flag, value in zip(words[::2], words[1::2] + [None] * (len(words) % 2)):
        flag, _, inline = flag.partition("=")
        if flag not in FLAGS:
            raise ConfigError("args", f"{flag!r} is not a llama.cpp RoPE flag pecli reads ({', '.join(FLAGS)})")
        raw = inline or value
        try:
            found[flag] = FLAGS[flag](raw)
        except (TypeError, ValueError):
            raise ConfigError("args", f"{flag} takes a {FLAGS[flag].__name__}, got {raw!r}") from None
    if found.get("--rope-scaling", "none") not in ("none", "linear", "yarn"):
        raise ConfigError("args", f"--rope-scaling is none, linear or yarn in llama.cpp, got {found['--rope-scaling']!r}")
    return found


def runtime_plan(model: PositionPlan, runtime: str, args: str) -> PositionPlan:
    """The plan llama.cpp runs for ``model`` under ``args``."""
    if runtime != "llama.cpp":
        raise ConfigError("runtime", f"pecli reads llama.cpp's flags only so far, got {runtime!r}")
    flags = parse_flags(args)
    groups = tuple(_group(group, flags) for group in model.groups)
    return PositionPlan(f"llama.cpp {args}", model.model_type, "llama.cpp flags", model.num_layers, groups)


def _group(group: LayerGroup, flags: dict[str, Any]) -> LayerGroup:
    from pecli.models.gguf import LlamaCppRope, _scaling_options

    if group.options is None or group.scheme != "rope":
        return group
    options = dict(group.options)
    block = options.get("rope_scaling") or {}
    kind = block.get("rope_type") or block.get("type") or "none"
    if kind not in ("none", "default", "linear", "yarn") or options.get("inv_freq") is not None:
        raise ConfigError("runtime", f"the model's {kind} scaling is not one pecli applies llama.cpp's flags over")
    kind = flags.get("--rope-scaling", "none" if kind == "default" else kind)
    factor = float(block.get("factor") or 1.0)
    scale = 1.0 / flags["--rope-scale"] if "--rope-scale" in flags else flags.get("--rope-freq-scale", 1.0 / factor)
    scale = 1.0 if kind == "none" else scale
    ext = flags.get("--yarn-ext-factor", 1.0 if kind == "yarn" else 0.0)
    s = 1.0 / scale
    attention = (0.1 * math.log(s) + 1.0 if ext and s > 1 else flags.get("--yarn-attn-factor", 1.0))
    dim = int(options["dim"] * options.get("partial_rotary_factor", 1.0))
    rope = LlamaCppRope(dim, flags.get("--rope-freq-base", float(options.get("base", 10000.0))), scale, ext,
                        flags.get("--yarn-orig-ctx", block.get("original_max_position_embeddings")
                                  or options.get("max_position_embeddings") or 4096),
                        flags.get("--yarn-beta-fast", 32.0), flags.get("--yarn-beta-slow", 1.0), attention, None, None, kind)
    new = {k: v for k, v in options.items() if k not in ("rope_scaling", "base")}
    new.update(_scaling_options(rope, None))
    note = new.pop("_note", "")
    read = tuple(flag for flag in FLAGS if flag in flags) + tuple(k for k in group.keys_read if "rope_scaling" not in k)
    return replace(group, options=new, keys_read=read, keys_defaulted=(), note=note or "llama.cpp with these flags")
