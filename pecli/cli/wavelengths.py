"""``pecli wavelengths``: the frequency/wavelength table of a sinusoidal or rotary configuration."""

from __future__ import annotations

from pathlib import Path

import dataclasses

from pecli.wavelengths.spectrum import BOUND_CONTEXT_LIMIT, wavelength_report
from pecli.wavelengths.base_bound import remembered_bounds
from pecli.cli.common import (
    OUTPUT_PANEL, ForceOption, JsonOption, QuietOption, group_heading, message, print_json, scheme_command, stdout_console,
)
from pecli.config import Setting, Spec
from pecli.errors import ConfigError
from pecli.io import check_target, save_npy
from pecli.schemes.base import MAX_LENGTH, Capability

SETTINGS = (
    Setting("context", int, None, "context length C", minimum=1, maximum=MAX_LENGTH,
            default_text="--length, itself max_position_embeddings with --hf-config, else 512"),
    Setting("train_length", int, None, "training length T", minimum=1, maximum=MAX_LENGTH,
            default_text="the model's own training length"),
    Setting("target_context", int, None, "suggest a base for this context length (Men et al. 2024)", minimum=2,
            maximum=BOUND_CONTEXT_LIMIT),
    Setting("wide", bool, False, "every column, even past 80 characters (longrope's short and long factors)", group=OUTPUT_PANEL),
    Setting("out", Path, None, ".npy: the final inverse frequencies of the rotated pairs (float64)", group=OUTPUT_PANEL),
)


def every_group(plan, specs, options, force: bool = False, json: bool = False, quiet: bool = False) -> None:
    """``wavelengths`` of a model whose layer groups differ: a block per group (JSON: ``layer_groups``);
    a group without position encoding says so (``"scheme": "none"``, no pairs)."""
    if options.get("out") is not None:
        what = f"{plan.source} has {len(specs)}: choose one with --layer N or --layer-group NAME" if len(specs) > 1 \
            else "the chosen layers apply no position encoding"
        raise ConfigError("out", f"writes the frequencies of one layer group; {what}")
    documents = []
    for group, spec in specs:
        report = None if spec is None else _report(spec)
        document = NO_ENCODING.copy() if report is None else report.to_dict()
        shown = group if spec is None else spec.group  # under the user's keys
        document["logit_scale"] = _logit_json(shown, report.spectrum.context if report is not None else group.context)
        documents.append((shown, report, document))
    if len(documents) == 1:  # one layer without position encoding: the single-group document
        group, _, document = documents[0]
        if json:
            print_json({**document, "layer_group": group.name, "layers": list(group.layers)})
        elif not quiet:
            stdout_console().print(group_heading(plan, group))
        return
    if json:
        print_json({"source": plan.source, "model_type": plan.model_type, "family": plan.family,
                    "layer_groups": [{"name": g.name, "layers": list(g.layers), **d} for g, _, d in documents]})
    elif not quiet:
        from pecli.render.wavelengths import wavelengths_tables

        console = stdout_console()
        for group, report, _ in documents:
            console.print(group_heading(plan, group))
            _print_logit_scale(console, group)
            for renderable in [] if report is None else wavelengths_tables(report, wide=bool(options.get("wide"))):
                console.print(renderable)


def _print_logit_scale(console, group) -> None:
    """The line above a group's table saying its logit scale, where it is not 1."""
    if not group.logit_scale_unknown and not group.logit_scale.is_unit:  # unknown: said on stderr
        console.print(f"logit scale (q·k/√d is multiplied by): {group.logit_scale.text()}")


def _logit_json(group, context):
    """The group's logit scale in the JSON document: null when pecli does not know it (said on stderr)."""
    return None if group.logit_scale_unknown else group.logit_scale.to_json(context)


#: The document of layers without position encoding.
NO_ENCODING = {"scheme": "none", "params": {}, "pairs": [], "summary": {}}


def _report(spec: Spec):
    settings = spec.settings
    if settings["context"] and spec.scheme.has_cells:
        spans = ", ".join(f"{a} {n:,}" for a, n in zip(spec.scheme.axis_names, spec.scheme.axis_spans()))
        raise ConfigError("context", f"{spec.scheme.name} turns each pair over the span of its axis ({spans}), not a context")
    context = settings["context"] or spec.length  # the length defaults to max_position_embeddings
    with remembered_bounds():  # Men et al.'s bound, searched once per (context, dim) and kept on disk
        return wavelength_report(spec.scheme, context, settings["train_length"], settings["target_context"])


@scheme_command(*SETTINGS, needs=Capability.FREQUENCIES, run_keys=("scheme", "length"), per_group=every_group)
def wavelengths(
    spec: Spec,
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
    target = check_target(settings["out"], suffixes=(".npy",), force=force) if settings["out"] else None
    report = _report(spec)
    if target is not None:
        save_npy(target, report.inv_freq, force=force)
        report = dataclasses.replace(report, out=str(target))

    group = spec.group  # the model's, under the user's keys
    if json:
        document = report.to_dict()
        if group is not None:
            document["logit_scale"] = _logit_json(group, report.spectrum.context)
        print_json(document)
    elif not quiet:
        from pecli.render.wavelengths import wavelengths_tables

        console = stdout_console()
        if group is not None:
            _print_logit_scale(console, group)
        for renderable in wavelengths_tables(report, wide=bool(settings["wide"])):
            console.print(renderable)
    if target is not None:
        message(f"wrote {target}", quiet=quiet or json)
