"""What ``pecli extend --runtime E`` prints, checked: the flags an engine needs for a candidate, run through
the engine's own rules (:meth:`~pecli.engines.base.Engine.run`) and compared with what transformers makes
of the patched config, so that a patch the engine would compute otherwise is never advised for it."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable, Mapping

from pecli.engines.base import Serving, rope_type
from pecli.errors import ConfigError
from pecli.schemes.scaling.linear import LINEAR
from pecli.schemes.scaling.registry import find_scaling


def nested(keys: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """``keys`` placed at ``path`` (the text model's sub-config)."""
    for key in reversed(path):
        keys = {key: keys}
    return keys


def patch_keys(patch: Mapping[str, Any], path: tuple[str, ...]) -> tuple[dict[str, Any], Any]:
    """The patch's keys at ``path`` (the text model's sub-config; :func:`nested` puts them back) and its rope
    block (``rope_parameters``, else ``rope_scaling``)."""
    from pecli.models.families.keys import at_path

    keys = dict(at_path(patch, path))
    return keys, keys.get("rope_parameters", keys.get("rope_scaling"))


def flag_serving(engine: Any, base: Any, patch: Mapping[str, Any], target: int, config: Mapping[str, Any] | None,
                 derive: Callable[[int, Any], int], allow_long: str,
                 overrides: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> Serving:
    """The flags of an engine that takes the patch through its override flag and ``target`` through its length
    flag (vLLM, SGLang): ``derive`` is the context it derives from a ``max_position_embeddings`` and a rope
    block (shorter than ``target``, it refuses the length unless ``allow_long=1``), ``overrides`` rewrites the
    keys into the form its override flag needs; the serving :func:`checked`."""
    keys, block = patch_keys(patch, base.path)
    keys, warnings = served_at_training(base, keys, block, derive, engine.title)
    derived = derive(int(keys["max_position_embeddings"]), block)
    if derived < target:
        warnings.append(f"{engine.title} derives {derived:,} tokens from these settings and refuses "
                        f"{engine.length_flag} {target:,} unless {allow_long}=1")
    carried = overrides(keys) if overrides is not None else keys
    flags = (engine.override_flag, json.dumps(nested(carried, base.path), separators=(",", ":")),
             engine.length_flag, str(target))
    serving = Serving(engine.name, flags, target if derived >= target else None, tuple(warnings), version=engine.version)
    return checked(engine, serving, patch, config)


def served_at_training(base: Any, keys: dict[str, Any], block: Any, derive: Callable[[int, Any], int],
                       name: str) -> tuple[dict[str, Any], list[str]]:
    """Keys for an engine that multiplies ``max_position_embeddings`` by the factor: for linear, the
    factor already stretches L₀ to N, so ``max_position_embeddings`` L₀ gives N (same frequencies)."""
    warnings = []
    kind = rope_type(block)
    given = int(keys["max_position_embeddings"])
    if derive(given, block) != given and find_scaling(kind) is LINEAR:
        warnings.append(f"{name} multiplies max_position_embeddings by the factor for {kind}: the patch's "
                        f"{given:,} would allow {derive(given, block):,} tokens, so the overrides set it to "
                        f"L₀ = {base.pretraining:,} (same frequencies)")
        keys = {**keys, "max_position_embeddings": base.pretraining}
    return keys, warnings


def patched(config: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with ``patch`` merged in as ``pecli extend`` documents it."""
    from pecli.extend.patches import patched as merge

    return merge(dict(config), dict(patch))


#: The departure an engine run carries for a model file its fixtures did not run (pecli cannot be sure).
UNMEASURED = "model file not measured"


def checked(engine: Any, serving: Serving, patch: Mapping[str, Any],
            config: Mapping[str, Any] | None) -> Serving:
    """``serving`` run through the engine's rules on ``config`` (the model's own): a candidate whose
    numbers the engine computes otherwise than transformers (from the patched config) is refused for it,
    with the engine's departure; without ``config`` the serving as it is."""
    if config is None or serving.unsupported is not None:
        return serving
    from pecli.models.plan_diff import diff_plans
    from pecli.models.sources.config_json import plan_of_config

    model = patched(config, patch)
    args = serving.command_line()
    edited = patched(config, serving.edit_config) if serving.edit_config is not None else model
    try:
        run = engine.run(config, args) if serving.flags else engine.run(edited, "")
        reference = plan_of_config(model, "the patched config")
    except ConfigError:
        return serving
    if not run.accepted:
        return dataclasses.replace(serving, served=None, warnings=(*serving.warnings, f"{engine.title} refuses these "
                                                                    f"flags: {run.refused}"))
    # an edited config.json is the engine's alone (it may hold both forms): its numbers against the candidate's decide
    numbers = [d for d in run.departures if d.what != "served context"] if serving.edit_config is None else []
    unsure = [d for d in numbers if d.what == UNMEASURED]
    numbers = [d for d in numbers if d.what != UNMEASURED]
    # the context is the flags' (max_position_embeddings may be L₀ in the overrides): the numbers are compared
    found = [d for d in diff_plans(run.plan, reference, "runtime", "hf").differences if d.what != "context"]
    if numbers or found:
        why = "; ".join(d.effect for d in numbers) or "its rotary modules compute other numbers"
        return dataclasses.replace(serving, flags=(), served=None, edit_config=None,
                                   unsupported=f"{engine.title} {engine.version} does not compute this candidate as "
                                               f"transformers does: {why}")
    if unsure:
        return dataclasses.replace(serving, warnings=(*serving.warnings, *(d.effect for d in unsure)))
    return serving


__all__ = ["checked", "flag_serving", "nested", "patch_keys", "patched", "served_at_training"]
