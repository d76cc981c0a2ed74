"""What every subcommand shares: the scheme options, the config layers, errors and output.

The scheme options are declared once, in :data:`SCHEME_OPTIONS`, and :func:`scheme_command` adds them
to a command's signature, merges them with ``--config`` and ``--set``, validates everything into a
:class:`~pecli.config.Spec` and hands the command that spec. Errors of the core become one line on
stderr and exit code 2 in :func:`errors_to_exit`.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import math
import os
import sys
import typing
from pathlib import Path
from typing import Annotated, Any, Callable, Iterator, Optional

import typer

from pecli.config import Setting, Spec, load_yaml, merge, parse_sets, resolve
from pecli.errors import PecliError

SCHEME_PANEL = "Scheme"
CONFIG_PANEL = "Configuration"
SCALING_PANEL = "RoPE scaling"
OUTPUT_PANEL = "Output"


def _option(*names: str, help: str, panel: str = SCHEME_PANEL, **kwargs: Any) -> Any:
    return typer.Option(*names, help=help, rich_help_panel=panel, show_default=False, **kwargs)


#: The options that choose and parameterise a scheme, shared by every scheme-building command.
SCHEME_OPTIONS: dict[str, Any] = {
    "scheme": Annotated[Optional[str], _option("--scheme", "-s", help="integer, binary, sinusoidal, learned, relative, t5, alibi, rope [default: sinusoidal]")],
    "dim": Annotated[Optional[int], _option("--dim", "-d", help="vector size (model dim; head dim for rope)")],
    "length": Annotated[Optional[int], _option("--length", "-L", help="number of positions 0..L-1 [default: 512]")],
    "positions": Annotated[Optional[str], _option("--positions", help="position ids: start:stop[:step] or an .npy of integers")],
    "base": Annotated[Optional[float], _option("--base", help="frequency base (YAML key base or rope_theta) [default: 10000]")],
    "layout": Annotated[Optional[str], _option("--layout", help="interleaved (pairs 2i,2i+1) or half (rotate_half)")],
    "partial_rotary_factor": Annotated[Optional[float], _option("--partial-rotary-factor", help="rope: fraction of components that rotate")],
    "normalize": Annotated[Optional[str], _option("--normalize", help="integer: none or length (p/N)")],
    "bits": Annotated[Optional[int], _option("--bits", help="binary: number of bits [default: ceil(log2 L)]")],
    "max_length": Annotated[Optional[int], _option("--max-length", help="learned: rows of the table [default: L]")],
    "seed": Annotated[Optional[int], _option("--seed", help="learned, relative: seed of the initialisation")],
    "std": Annotated[Optional[float], _option("--std", help="learned, relative: std of the initialisation")],
    "max_relative_position": Annotated[Optional[int], _option("--max-relative-position", "-K", help="relative: clip distances to ±K")],
    "buckets": Annotated[Optional[int], _option("--buckets", help="t5: number of buckets [default: 32]")],
    "max_distance": Annotated[Optional[int], _option("--max-distance", help="t5: distance of the last bucket [default: 128]")],
    "bidirectional": Annotated[Optional[bool], _option("--bidirectional/--causal", help="t5: both directions or causal")],
    "heads": Annotated[Optional[int], _option("--heads", help="alibi: number of heads [default: 8]")],
    "rope_fraction": Annotated[Optional[float], _option("--rope-fraction", help="p-RoPE: fraction of frequency pairs that rotate (highest first)")],
    "scaling": Annotated[Optional[str], _option("--scaling", help="rope context extension: none, linear, ntk, dynamic, yarn, llama3, longrope (longrope's short_factor/long_factor lists come from YAML or --hf-config)", panel=SCALING_PANEL)],
    "factor": Annotated[Optional[float], _option("--factor", help="scaling factor s", panel=SCALING_PANEL)],
    "original_max_position": Annotated[Optional[int], _option("--original-max-position", help="original_max_position_embeddings: the pre-training context", panel=SCALING_PANEL)],
    "max_position_embeddings": Annotated[Optional[int], _option("--max-position-embeddings", help="the model's max_position_embeddings", panel=SCALING_PANEL)],
    "context": Annotated[Optional[int], _option("--context", help="current sequence length (dynamic, longrope) [default: L]", panel=SCALING_PANEL)],
    "beta_fast": Annotated[Optional[float], _option("--beta-fast", help="yarn [default: 32]", panel=SCALING_PANEL)],
    "beta_slow": Annotated[Optional[float], _option("--beta-slow", help="yarn [default: 1]", panel=SCALING_PANEL)],
    "mscale": Annotated[Optional[float], _option("--mscale", help="yarn, DeepSeek style", panel=SCALING_PANEL)],
    "mscale_all_dim": Annotated[Optional[float], _option("--mscale-all-dim", help="yarn, DeepSeek style", panel=SCALING_PANEL)],
    "truncate": Annotated[Optional[bool], _option("--truncate/--no-truncate", help="yarn: floor/ceil the correction range [default: truncate]", panel=SCALING_PANEL)],
    "low_freq_factor": Annotated[Optional[float], _option("--low-freq-factor", help="llama3 [default: 1]", panel=SCALING_PANEL)],
    "high_freq_factor": Annotated[Optional[float], _option("--high-freq-factor", help="llama3 [default: 4]", panel=SCALING_PANEL)],
    "attention_factor": Annotated[Optional[float], _option("--attention-factor", help="yarn, longrope: explicit attention scaling", panel=SCALING_PANEL)],
    "dtype": Annotated[Optional[str], _option("--dtype", help="float64, float32, float16 or bfloat16 [default: float64]")],
    "config": Annotated[Optional[str], _option("--config", "-c", help="YAML file of options ('-' reads stdin)", panel=CONFIG_PANEL)],
    "hf_config": Annotated[Optional[str], _option("--hf-config", help="a HuggingFace model config.json: its RoPE settings", panel=CONFIG_PANEL)],
    "set": Annotated[Optional[list[str]], _option("--set", help="override any key: key=value (repeatable)", panel=CONFIG_PANEL)],
}

JsonOption = Annotated[bool, _option("--json", help="print one JSON document instead of a table", panel=OUTPUT_PANEL)]
QuietOption = Annotated[bool, _option("--quiet", "-q", help="print nothing on success", panel=OUTPUT_PANEL)]
ForceOption = Annotated[bool, _option("--force", "-f", help="overwrite an existing output file", panel=OUTPUT_PANEL)]


# -- errors -----------------------------------------------------------------------------------------
def fail(message: str) -> typer.Exit:
    """Print ``message`` as one line on stderr and return the exit for bad input (code 2)."""
    sys.stderr.write(f"pecli: error: {message}\n")
    return typer.Exit(2)


@contextlib.contextmanager
def errors_to_exit() -> Iterator[None]:
    """Turn the core's exceptions into one line on stderr and exit code 2."""
    try:
        yield
    except PecliError as error:
        raise fail(str(error)) from None
    except MemoryError:
        raise fail("out of memory; ask for fewer positions or a smaller dimension") from None


# -- the shared scheme options ------------------------------------------------------------------------
def scheme_command(*settings: Setting) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a command the shared scheme options and call it with a validated :class:`Spec`.

    The decorated function takes ``spec`` first, then its own parameters. Those of its parameters
    named in ``settings`` are configuration keys as well: they can come from ``--config`` or ``--set``
    and arrive in ``spec.settings`` rather than as arguments.
    """
    setting_names = {s.name for s in settings}

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(func)
        hints = typing.get_type_hints(func, include_extras=True)
        own = [p.replace(annotation=hints.get(name, p.annotation)) for name, p in signature.parameters.items() if name != "spec"]
        shared = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation)
            for name, annotation in SCHEME_OPTIONS.items()
            if name not in signature.parameters  # a command may redefine a shared option's help
        ]

        @functools.wraps(func)
        def wrapper(**kwargs: Any) -> Any:
            with errors_to_exit():
                config_path, sets = kwargs.pop("config"), kwargs.pop("set")
                given = {name: kwargs.pop(name) for name in SCHEME_OPTIONS if name in kwargs}
                given.update({name: kwargs.pop(name) for name in setting_names if name in kwargs})
                given = {name: value for name, value in given.items() if value is not None}
                from_file = load_yaml(config_path) if config_path else {}
                spec = resolve(merge(from_file, given, parse_sets(sets)), settings)
                return func(spec, **kwargs)

        own_kw = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own]
        wrapper.__signature__ = signature.replace(parameters=own_kw + shared)  # type: ignore[attr-defined]
        return wrapper

    return decorate


# -- output ---------------------------------------------------------------------------------------------
def jsonable(value: Any) -> Any:
    """Plain JSON values: NumPy scalars and arrays unwrapped, non-finite floats as null."""
    import numpy as np

    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value


def print_json(document: Any) -> None:
    """Print one JSON document on stdout, nothing else."""
    sys.stdout.write(json.dumps(jsonable(document), indent=2) + "\n")


def stdout_console():
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False)


def message(text: str, *, quiet: bool = False) -> None:
    """A message for people, on stderr (never mixed with data on stdout)."""
    if not quiet:
        sys.stderr.write(text + "\n")


def memory_budget() -> int:
    """Default memory budget: a quarter of the machine's physical memory."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4
    except (ValueError, OSError, AttributeError):
        return 4 << 30



__all__ = [
    "ForceOption", "JsonOption", "QuietOption", "Spec", "errors_to_exit", "fail", "jsonable",
    "memory_budget", "message", "print_json", "scheme_command", "stdout_console",
]
