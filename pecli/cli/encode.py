"""``pecli encode``: compute a scheme's encoding, summarise it, write it as .npy or .npz."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pecli.cli.common import (
    OUTPUT_PANEL, ForceOption, JsonOption, QuietOption, group_heading, message, print_json,
    scheme_command, stdout_console,
)
from pecli.config import DEFAULT_LENGTH, Setting, Spec, check_memory
from pecli import encoding_files
from pecli.dtypes import cast
from pecli.errors import ConfigError, PecliError
from pecli.io import check_disk, check_target, load_array, save_npy, save_npz
from pecli.schemes.positions import position_range, stored_positions

if TYPE_CHECKING:  # the summary (and the analyses it imports) loads when a command runs, not for --help
    from pecli.analysis.summary import EncodeReport

SUFFIXES = (".npy", ".npz")
WORKING_COPIES = encoding_files.WORKING_COPIES

SETTINGS = (
    Setting("out", Path, None, ".npy: the main array; .npz: its parts by stable names (rope: cos, sin, inv_freq, "
            "positions)", group=OUTPUT_PANEL),
    Setting("parts", str, None, ".npz: these parts, comma-separated (rope: encoding,cos,sin adds the interleaved "
            "encoding)", default_text="every part but a rotary scheme's encoding", group=OUTPUT_PANEL),
    Setting("apply", Path, None, ".npy array to encode: rope rotates its last axis (positions on the second-to-last), "
            "additive schemes add the encoding"),
    Setting("as_keys", bool, False, "with --apply: the array holds keys, not queries (rope --xpos divides by its "
            "factor instead of multiplying; nothing else differs)"),
    Setting("logit_scale", bool, False, "write instead the model's logit scale at each position (float64): the "
            "factor on q·k/√d beyond cos/sin (YaRN's attention factor², DeepSeek's mscale², Llama 4's "
            "temperature); needs --hf-config, --model or --gguf", group=OUTPUT_PANEL),
)


@scheme_command(*SETTINGS, per_group=lambda *args, **kwargs: every_group(*args, **kwargs))  # defined below
def encode(
    spec: Spec,
    force: ForceOption = False,
    json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Compute a scheme's encoding and write it as .npy or .npz.

    .npy holds the main array: the (L, d) per-position matrix of additive and rotary schemes (rope:
    the rotated reference vector, pairs (cos pθ, sin pθ)), alibi's (H, L, L) bias, t5's (L, L) buckets,
    relative's (L, L, d) embeddings. .npz holds every part by name, with the parameters as JSON
    under "metadata"; for rope the cos and sin caches (L, r) as HuggingFace returns them, the
    interleaved encoding only when --parts names it. Arrays are computed in blocks of rows and
    written as they come: memory is flat in the length up to 4 bytes per position (the summary's
    row keys; 8 more per id given with --positions), and 40 bytes per row that shares its key by
    chance (N²/2^32 rows: 2.5 MiB at 2^24 positions, 640 MiB at 2^28): rope at 2^24, 160 MiB.
    """
    settings = spec.settings
    if settings["apply"] and not settings["out"]:
        raise PecliError("--apply writes its result to --out: give --out x.npy")
    if settings["as_keys"] and not settings["apply"]:
        raise PecliError("--as-keys says what the array of --apply holds: give --apply x.npy")
    target = check_target(settings["out"], suffixes=SUFFIXES, force=force) if settings["out"] else None
    if settings["parts"] is not None and (target is None or target.suffix.lower() != ".npz"):
        raise PecliError("--parts chooses the arrays of an .npz archive: give --out x.npz")
    budget = spec.memory_budget
    if settings["logit_scale"]:
        return _logit_scales([(spec.plan.single if spec.plan else None, spec)], spec.plan, target, json=json, quiet=quiet, force=force)
    if settings["apply"]:
        report = _apply(spec, target, budget, force=force, quiet=quiet)
    else:
        report = _encode(spec, target, budget, force=force, quiet=quiet)

    if json:
        print_json(report.to_dict())
    elif not quiet:
        from pecli.render.encode import encode_table

        stdout_console().print(encode_table(report))
    if target is not None:
        message(f"wrote {target}", quiet=quiet or json)


def encode_run(spec: Spec, archive: bool) -> encoding_files.EncodeRun:
    """The library's run of ``spec`` (its positions allocated by ``prepare``, after the memory check;
    0 … L − 1 as a ``range``, which a long run never makes)."""
    own = spec.where.given is None and spec.where.make is None and spec.where.rank == 1
    positions = range(spec.count) if own else (lambda: spec.positions)
    return encoding_files.EncodeRun(spec.scheme, spec.count, positions, spec.output_dtype,
                                    length=spec.length, archive=archive, parts=spec.settings["parts"] if archive else None)


def _finish(run: encoding_files.EncodeRun, target: Path | None, quiet: bool) -> EncodeReport:
    report = run.report(target)
    if report.non_finite_values:
        message(f"warning: {report.non_finite_values:,} values overflow {run.dtype} (stored as ±inf)", quiet=quiet)
    return report


def _encode(spec: Spec, target: Path | None, budget: int, *, force: bool, quiet: bool) -> EncodeReport:
    archive = target is not None and target.suffix.lower() == ".npz"
    run = encode_run(spec, archive)
    check_memory(run.memory, budget)
    run.prepare()
    if target is not None:
        check_disk(target, run.disk_bytes)
    if target is None:
        run.summarise()
    elif not archive:
        encoding_files.write_npy(target, run, force=force)
    else:
        encoding_files.write_npz(target, [("", run)], run.metadata, force=force)
    return _finish(run, target, quiet)


def _logit_scales(specs, plan, target: Path | None, *, json: bool, quiet: bool, force: bool, own_positions: bool = False) -> None:
    """``encode --logit-scale``: each group's logit scale at the positions (float64), into ``-o s.npy`` (one
    group) or ``s.npz`` (``GROUP/logit_scale``). ``own_positions``: no --length or --positions was given,
    so every group is written over the model's context (not a sliding group's window)."""
    if plan is None:
        raise ConfigError("logit_scale", "is the scale of a model's attention logits: give --hf-config, --model or --gguf")
    if target is None:
        raise ConfigError("logit_scale", "writes the scale at each position: give --out s.npy (or s.npz for every group)")
    spec = next((spec for _, spec in specs if spec is not None), None)
    if spec is None or own_positions:
        count = spec_length(plan)
        check_memory(8 * count * (len(specs) + 1), spec.memory_budget if spec is not None else None, "--logit-scale")
        positions = np.arange(count, dtype=np.float64)
    else:
        positions = np.asarray(spec.positions, dtype=np.float64)
    if target.suffix.lower() == ".npy":
        if len(specs) > 1:
            raise ConfigError("out", f"{plan.source} has {len(specs)} layer groups: write them to an .npz (GROUP/logit_scale), "
                              "or choose one with --layer N or --layer-group NAME")
        save_npy(target, specs[0][0].logit_scale.at(positions), force=force)
    else:
        arrays = {f"{group.name}/logit_scale": group.logit_scale.at(positions) for group, _ in specs}
        rules = {group.name: group.logit_scale.text() for group, _ in specs}
        save_npz(target, arrays, {"source": plan.source, "logit_scale": rules, "positions": len(positions)}, force=force)
    if json:
        print_json({"source": plan.source, "out": str(target), "positions": len(positions),
                    "layer_groups": [{"name": g.name, "logit_scale": g.logit_scale.to_json()} for g, _ in specs]})
    message(f"wrote {target}", quiet=quiet or json)


def spec_length(plan) -> int:
    """The positions of a model's groups when none computes an encoding: 0 … its context − 1."""
    return max((group.context or 0 for group in plan.groups), default=0) or DEFAULT_LENGTH


def every_group(plan, specs, options, force: bool = False, json: bool = False, quiet: bool = False) -> None:
    """``encode`` of a model whose layer groups differ: every group's arrays, into one ``.npz`` under
    ``GROUP/KEY``; a group without position encoding has no arrays and says so."""
    if options.get("logit_scale"):
        target = check_target(options["out"], suffixes=SUFFIXES, force=force) if options.get("out") is not None else None
        own = options.get("length") is None and options.get("positions") is None
        return _logit_scales(specs, plan, target, json=json, quiet=quiet, force=force, own_positions=own)
    live = [(group, spec) for group, spec in specs if spec is not None]
    if options.get("apply") is not None:
        raise ConfigError("apply", "applies one layer group's encoding: choose it with --layer N or --layer-group NAME")
    target = check_target(options["out"], suffixes=SUFFIXES, force=force) if options.get("out") is not None else None
    if options.get("parts") is not None and (target is None or target.suffix.lower() != ".npz"):
        raise PecliError("--parts chooses the arrays of an .npz archive: give --out x.npz")
    if target is not None and (target.suffix.lower() != ".npz" or not live):
        what = (f"{plan.source} has {len(specs)} layer groups: write them to an .npz (GROUP/KEY), or choose one with "
                "--layer N or --layer-group NAME") if live else "the chosen layers apply no position encoding"
        raise ConfigError("out", what)
    runs = [(group, encode_run(spec, target is not None)) for group, spec in live]
    check_memory(sum(run.memory for _, run in runs), live[0][1].memory_budget if live else None)
    for _, run in runs:
        run.prepare()
    if target is not None:
        check_disk(target, sum(run.disk_bytes for _, run in runs))
    if target is None:
        for _, run in runs:
            run.summarise()
    else:
        metadata = {"source": plan.source, "model_type": plan.model_type,
                    "layer_groups": {group.name: {"layers": list(group.layers), **run.metadata} for group, run in runs}}
        encoding_files.write_npz(target, [(f"{group.name}/", run) for group, run in runs], metadata, force=force)
    reports = {group.name: _finish(run, target, quiet) for group, run in runs}
    documents = [{"name": g.name, "layers": list(g.layers), **(reports[g.name].to_dict() if g.name in reports else {"scheme": "none"})}
                 for g, _ in specs]
    if json:
        print_json({"source": plan.source, "model_type": plan.model_type, "layer_groups": documents, "out": None if target is None else str(target)})
    elif not quiet:
        from pecli.render.encode import encode_table

        console = stdout_console()
        for group, _ in specs:
            console.print(group_heading(plan, group))
            if group.name in reports:
                console.print(encode_table(reports[group.name]))
    if target is not None:
        message(f"wrote {target}", quiet=quiet or json)


def _apply(spec: Spec, target: Path, budget: int, *, force: bool, quiet: bool) -> EncodeReport:
    """``--apply``: rotate (rope) or shift (additive schemes) a whole array read from a file."""
    from pecli.analysis.summary import EncodeReport, array_summary

    scheme, positions = spec.scheme, spec.positions
    x = load_array(spec.settings["apply"], max_bytes=budget // WORKING_COPIES)  # the header is checked first
    dtype = spec.dtype or (x.dtype.name if x.dtype.kind == "f" else "float64")
    with np.errstate(over="ignore"):  # values beyond float16's range become ±inf, reported below
        result = cast(scheme.apply(x, positions, keys=bool(spec.settings["as_keys"])), dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        facts = array_summary(result)
        overflowed = int(np.count_nonzero(~np.isfinite(result.astype(np.float64))))
        given = int(np.count_nonzero(~np.isfinite(x))) if x.dtype.kind == "f" else 0
    if given:
        message(f"warning: the input holds {given:,} NaN or ±inf values; they stay non-finite", quiet=quiet)
    if overflowed > given:
        message(f"warning: {overflowed - given:,} values overflow {dtype} (stored as ±inf)", quiet=quiet)
    if target.suffix.lower() == ".npy":
        save_npy(target, result, force=force)
    else:
        report = EncodeReport(scheme.name, scheme.kind, scheme.params(), spec.length,
                              position_range(positions), "result", facts)
        document = report.to_dict()
        metadata = {k: document[k] for k in ("scheme", "kind", "params", "length", "dtype")}
        save_npz(target, {"result": result, "positions": stored_positions(positions)}, metadata, force=force)
    return EncodeReport(
        scheme.name, scheme.kind, scheme.params(), spec.length,
        position_range(positions), "result", facts, out=str(target),
        non_finite_values=overflowed,
    )


