"""``pecli wavelengths``: the frequency/wavelength table of a sinusoidal or rotary configuration."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Optional

import numpy as np
import typer

from pecli.analysis.spectrum import base_lower_bound, long_term_decay_holds, spectrum
from pecli.cli.common import (
    OUTPUT_PANEL, ForceOption, JsonOption, QuietOption, message, print_json, scheme_command, stdout_console,
)
from pecli.config import Setting, Spec, build_scheme
from pecli.errors import PecliError
from pecli.io import check_target, save_npy

SETTINGS = (
    Setting("context", int, None, "context length to lay the pairs against", minimum=1),
    Setting("train_length", int, None, "training length", minimum=1),
    Setting("target_context", int, None, "suggest a base for this context length", minimum=2),
    Setting("out", str, None, ".npy of the final inverse frequencies"),
)
#: Contexts beyond this make Men et al.'s bound slow (seconds per million tokens); it is then skipped.
BOUND_CONTEXT_LIMIT = 1 << 22


@scheme_command(*SETTINGS)
def wavelengths(
    spec: Spec,
    context: Annotated[Optional[int], typer.Option("--context", help="context length C [default: --length, itself max_position_embeddings with --hf-config, else 512]")] = None,
    train_length: Annotated[Optional[int], typer.Option("--train-length", "-T", help="training length T [default: the original length of a RoPE scaling]")] = None,
    target_context: Annotated[Optional[int], typer.Option("--target-context", help="suggest a base for this context length (Men et al. 2024)")] = None,
    out: Annotated[Optional[str], typer.Option("--out", "-o", help=".npy: the final inverse frequencies of the rotated pairs (float64)", rich_help_panel=OUTPUT_PANEL)] = None,
    force: ForceOption = False,
    json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """The frequency and wavelength of every pair of a sinusoidal or rotary encoding.

    One row per pair i: inverse frequency θ_i, wavelength 2π/θ_i in tokens, rotations within the
    context, whether training positions completed a full rotation, and under a scaling the original
    θ_i, the ratio and what the scaling did to the pair. Below: largest and smallest wavelength, the
    critical dimension (Liu et al. 2023), the smallest base for the context (Men et al. 2024), the
    attention scaling. Works with --hf-config to read a model's config.json.
    """
    settings = spec.settings
    scheme = spec.scheme
    if spec.dtype is not None or spec.given_positions is not None:
        raise PecliError("wavelengths reads frequencies only: --dtype and --positions do not apply (use --context)")
    if scheme.name not in ("sinusoidal", "rope"):
        raise PecliError(f"wavelengths works with sinusoidal and rope, not {scheme.name!r}")
    target = check_target(settings["out"], suffixes=(".npy",), force=force) if settings["out"] else None
    context = settings["context"] or spec.length  # the length defaults to max_position_embeddings
    if scheme.name == "rope":  # dynamic NTK and LongRoPE depend on the context
        scheme = build_scheme("rope", {**spec.given_params, "context": context}, length=spec.length)
    train = settings["train_length"] or scheme.pretraining_length if scheme.name == "rope" else settings["train_length"]
    table = spectrum(scheme, context=context, train_length=train)

    document: dict[str, Any] = {
        "scheme": scheme.name,
        "params": scheme.params(),
        "context": context,
        "train_length": train,
        "pairs": [dataclasses.asdict(row) for row in table.pairs],
        "summary": dict(table.summary),
        "out": None,
    }
    if scheme.name == "rope" and context <= BOUND_CONTEXT_LIMIT:
        bound = base_lower_bound(context, scheme.rotated_dim)
        document["summary"]["base_lower_bound"] = bound.as_dict()
        effective = scheme.frequencies.base  # ntk and dynamic change the base itself
        document["summary"]["base_meets_bound"] = long_term_decay_holds(effective, scheme.rotated_dim, context)
    if settings["target_context"]:
        dim = scheme.rotated_dim if scheme.name == "rope" else scheme.dim
        document["suggested_base"] = base_lower_bound(settings["target_context"], dim).as_dict()
    if target is not None:
        rotated = np.asarray(scheme.inv_freq, dtype=np.float64)
        save_npy(target, rotated, force=force)
        document["out"] = str(target)

    if json:
        print_json(document)
    elif not quiet:
        from pecli.render.wavelengths import wavelengths_tables

        console = stdout_console()
        for renderable in wavelengths_tables(document):
            console.print(renderable)
    if target is not None:
        message(f"wrote {target}", quiet=quiet or json)
