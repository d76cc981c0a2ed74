"""``pecli wavelengths``: the frequency/wavelength table of a sinusoidal or rotary configuration."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Optional

import typer

from pecli.analysis.spectrum import wavelength_report
from pecli.cli.common import (
    OUTPUT_PANEL, ForceOption, JsonOption, QuietOption, message, print_json, scheme_command, stdout_console,
)
from pecli.config import Setting, Spec
from pecli.errors import PecliError
from pecli.io import check_target, save_npy
from pecli.schemes.base import Capability, require

SETTINGS = (
    Setting("context", int, None, "context length to lay the pairs against", minimum=1),
    Setting("train_length", int, None, "training length", minimum=1),
    Setting("target_context", int, None, "suggest a base for this context length", minimum=2),
    Setting("out", str, None, ".npy of the final inverse frequencies"),
)


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
    if spec.dtype is not None or spec.given_positions is not None:
        raise PecliError("wavelengths reads frequencies only: --dtype and --positions do not apply (use --context)")
    require(spec.scheme, Capability.FREQUENCIES, "wavelengths")
    target = check_target(settings["out"], suffixes=(".npy",), force=force) if settings["out"] else None
    context = settings["context"] or spec.length  # the length defaults to max_position_embeddings
    report = wavelength_report(spec.scheme, context, settings["train_length"], settings["target_context"])
    if target is not None:
        save_npy(target, report.inv_freq, force=force)
        report = dataclasses.replace(report, out=str(target))

    if json:
        print_json(report.to_dict())
    elif not quiet:
        from pecli.render.wavelengths import wavelengths_tables

        console = stdout_console()
        for renderable in wavelengths_tables(report):
            console.print(renderable)
    if target is not None:
        message(f"wrote {target}", quiet=quiet or json)
