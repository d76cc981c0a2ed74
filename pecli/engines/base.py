"""What every engine record says, and the pieces the engines share.

An :class:`Engine` reads its own flags (:meth:`Engine.parse`, as its own argument parser reads them),
says what it computes for a model (:meth:`Engine.run` → :class:`EngineRun`: the layer groups its code
builds, the context it serves, or its refusal with its own reason, and each :class:`Departure` from
transformers), and what it needs to serve an ``extend`` candidate (:meth:`Engine.serving` →
:class:`Serving`). The numbers of each engine module are held against the engine's own code by
``tests/test_engines_fixtures.py`` (the fixtures under ``tests/fixtures/engines/<engine>/``).
"""

from __future__ import annotations

import json
import math
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from pecli.errors import ConfigError
from pecli.flag_words import MAX_FLAG_TEXT
from pecli.models.plan import PositionPlan
from pecli.schemes.scaling.rope_type import hf_rope_type

#: How deeply a JSON flag value may nest (a config nests 3 or 4 levels).
MAX_FLAG_DEPTH = 32
#: An environment variable given in front of the flags (``NAME=VALUE --flag …``), as a shell takes it.
ENV_WORD = re.compile(r"[A-Z_][A-Z0-9_]*=\S*")


@dataclass(frozen=True)
class Departure:
    """Where an engine computes otherwise than transformers, for some layers: what, its effect, and how
    to get the model's numbers on that engine (``remedy``; None: there is no way)."""

    what: str
    effect: str
    remedy: str | None = None
    layers: str = "all"
    #: A departure the numbers at the probe positions do not show (it depends on the prompt, or pecli has not
    #: measured it): ``diff`` reports it as a difference of its own, never "same".
    beyond_numbers: bool = False

    def line(self, engine: "Engine") -> str:
        fix = self.remedy or f"there is no way to get the model's numbers on {engine.title}"
        return f"{engine.title} {engine.version}: {self.what}: {self.effect}; {fix}"

    def to_dict(self) -> dict[str, Any]:
        return {"what": self.what, "effect": self.effect, "remedy": self.remedy, "layers": self.layers,
                "beyond_numbers": self.beyond_numbers}


@dataclass(frozen=True)
class EngineRun:
    """What an engine computes for one model and its flags.

    Attributes
    ----------
    plan : PositionPlan or None
        The layer groups the engine's code builds, in pecli's options (None: refused).
    served : int or None
        The context it serves (vLLM's ``max_model_len``, SGLang's ``context_len``); None where it has no
        cap (MLX) or refused.
    refused : str or None
        The engine's own reason for refusing the model or the flags ("ValueError: …").
    departures : tuple of Departure
        Where its numbers or its context differ from transformers'.
    positions : str
        What its layers do with positions: ``rope``, ``mrope``, ``alibi``, ``learned``, ``relative``,
        ``sinusoidal``, ``none`` or ``mixed``.
    """

    engine: "Engine"
    args: str
    plan: PositionPlan | None
    served: int | None
    refused: str | None = None
    departures: tuple[Departure, ...] = ()
    positions: str = "rope"
    #: The positions the engine's cos/sin cache holds (vLLM builds one of fixed rows): past them its numbers
    #: are not the rotation's (None: computed at every position).
    cache_rows: int | None = None

    @property
    def accepted(self) -> bool:
        return self.refused is None


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
    version: str = ""

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
        return {"engine": self.engine, "version": self.version, "flags": list(self.flags), "served": self.served,
                "warnings": list(self.warnings), "unsupported": self.unsupported, "edit_config": self.edit_config}


#: A flag's reader: its text → its value, or ValueError with the engine's complaint.
FlagReader = Callable[[str], Any]


@dataclass(frozen=True)
class Engine:
    """One engine: its name as ``--runtime`` spells it, the version whose code was measured, where the
    rules come from, and the flags it reads (each with its reader). Subclasses give :meth:`run` and
    :meth:`serving`."""

    name: str
    title: str
    version: str
    source: str
    flags: Mapping[str, FlagReader] = field(default_factory=dict)
    #: Environment variables the engine reads for these rules (given in front of the flags: ``NAME=1 --flag``).
    env: tuple[str, ...] = ()
    #: What to say where the engine takes no flag that changes positions.
    no_flags: str = ""
    #: Whether the context it serves is a limit it enforces (vLLM, SGLang), compared with the config's; llama.cpp's
    #: ``--ctx-size`` is the user's choice, which it does not hold against the model.
    caps_context: bool = True

    # -- flags --------------------------------------------------------------------------------------------
    def parse(self, args: str) -> tuple[dict[str, Any], dict[str, str]]:
        """``args`` → ({flag: value}, {environment variable: value}); a flag the engine does not read for
        positions, or a value its own parser refuses, is a ConfigError (exit 2, before any work)."""
        from pecli.flag_words import flag_pairs, split_words

        words = split_words(args)
        env: dict[str, str] = {}
        at = 0
        while at < len(words) and ENV_WORD.fullmatch(words[at]):
            name, _, value = words[at].partition("=")
            at += 1
            if name not in self.env:
                known = ", ".join(self.env) or "none"
                raise ConfigError("args", f"{name} is not an environment variable {self.title} reads for positions "
                                  f"(pecli reads: {known})")
            env[name] = value

        def refusal(flag: str) -> str | None:
            if flag in self.flags:
                return None
            known = ", ".join(self.flags) or self.no_flags or "none"
            return f"{flag!r} is not a {self.title} flag that changes positions (pecli reads: {known})"

        values: dict[str, Any] = {}
        for flag, text in flag_pairs(words[at:], refusal):
            if flag in values:
                raise ConfigError("args", f"{flag} is given twice")
            try:
                values[flag] = self.flags[flag](text)
            except ValueError as error:
                raise ConfigError("args", f"{flag}: {error}") from None
        return values, env

    # -- what the engine computes -------------------------------------------------------------------------
    def run(self, config: Mapping[str, Any], args: str = "", env: Mapping[str, str] | None = None,
            source: str = "config.json") -> EngineRun:  # pragma: no cover - every engine gives its own
        raise NotImplementedError

    def serving(self, base: Any, patch: Mapping[str, Any], target: int,
                config: Mapping[str, Any] | None = None) -> Serving:  # pragma: no cover
        raise NotImplementedError

    def blamed(self, found: Any, reference: PositionPlan, args: str) -> Any:
        """``found`` (the engine's plan against ``reference``) with each difference put on what causes it;
        as it is here, where the engine's flags are not tried one by one."""
        return found

    def refusal(self, args: str, reason: str, positions: str = "rope") -> EngineRun:
        return EngineRun(self, args, None, None, reason, positions=positions)


# -- flag readers shared by engines ----------------------------------------------------------------------
def python_int(text: str) -> int:
    """A whole number as Python's ``int()`` reads it (argparse's ``type=int``: vLLM, SGLang)."""
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"invalid int value: {text!r}") from None


def json_object(text: str) -> dict[str, Any]:
    """A JSON object flag (``--hf-overrides``) as the engine reads it, refusing a value nested or sized
    absurdly before it is parsed, and a number JSON cannot hold."""
    from pecli.config_files import flow_depth

    if len(text) > MAX_FLAG_TEXT:
        raise ValueError(f"is longer than {MAX_FLAG_TEXT >> 10} KiB")
    if flow_depth(text) > MAX_FLAG_DEPTH:
        raise ValueError(f"is nested more than {MAX_FLAG_DEPTH} levels deep")
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("is nested too deeply") from None
    except ValueError as error:
        raise ValueError(f"is not valid JSON ({error})") from None
    if not isinstance(value, dict):
        raise ValueError(f"must be a JSON object, got {type(value).__name__}")
    _check_numbers(value)
    return value


def _no_constant(word: str) -> Any:
    raise ValueError(f"{word} is not a JSON number")


def _check_numbers(value: Any) -> None:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, float) and not math.isfinite(node):
            raise ValueError("holds a number too large for a float (1e400?)")


# -- configs ------------------------------------------------------------------------------------------------
def text_of(config: Mapping[str, Any]) -> tuple[tuple[str, ...], dict[str, Any]]:
    """Where the text model's keys are in ``config`` and those keys (a multimodal config nests them)."""
    from pecli.models.families.keys import at_path, text_path

    path = text_path(dict(config))
    return path, dict(at_path(config, path))


def with_text(config: Mapping[str, Any], path: tuple[str, ...], text: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with the text model's keys (at ``path``) replaced by ``text``."""
    if not path:
        return dict(text)
    return {**config, path[0]: with_text(config[path[0]], path[1:], text)}


def rope_dict(text: Mapping[str, Any]) -> dict[str, Any] | None:
    """The text model's flat rope dict (``rope_parameters``, else ``rope_scaling``), None if absent or nested."""
    for key in ("rope_parameters", "rope_scaling"):
        block = text.get(key)
        if isinstance(block, dict) and block:
            if all(isinstance(v, dict) or v is None for v in block.values()):
                return None
            return block
    return None


def rope_type(block: Mapping[str, Any] | None) -> str:
    """The block's rope type (``type`` is the older spelling); ``default`` without a block."""
    return str(hf_rope_type(block))


def attribute(text: Mapping[str, Any], name: str) -> Any:
    """``getattr(config, name, None)`` as transformers' config class answers it: the key, else the key its
    ``attribute_map`` names for it (GPT-2's ``max_position_embeddings`` is ``n_positions``), else its default."""
    from pecli.models.sources.class_defaults import record_of

    if text.get(name) is not None:
        return text[name]
    record = record_of(text.get("model_type")) or {}
    alias = (record.get("attribute_map") or {}).get(name)
    if alias is not None and text.get(alias) is not None:
        return text[alias]
    fields = record.get("fields") or {}
    return fields.get(alias or name)


def declared_context(text: Mapping[str, Any]) -> int | None:
    """The context the config declares for the model: ``max_position_embeddings`` (GPT-2's
    ``n_positions``, …), what transformers' model is built for; None where it has none."""
    for key in ("max_position_embeddings", "n_positions", "max_target_positions", "max_seq_len", "seq_length"):
        value = attribute(text, key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def positions_of(plan: PositionPlan | None) -> str:
    """What the plan's layers do with positions, in one word (fixtures' ``positions``)."""
    if plan is None:
        return "none"
    kinds = {group.scheme if group.options is not None else "none" for group in plan.groups}
    kinds = {"relative" if k == "t5" else k for k in kinds}
    if len(kinds - {"none"}) == 1:
        return next(iter(kinds - {"none"}))
    return "none" if kinds == {"none"} else "mixed"


__all__ = ["Departure", "Engine", "EngineRun", "Serving", "declared_context", "json_object", "positions_of",
           "python_int", "rope_dict", "rope_type", "text_of", "with_text"]
