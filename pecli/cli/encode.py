"""``pecli encode``: compute a scheme's encoding, summarise it, write it as .npy or .npz."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

# OpenBLAS's threads, started when NumPy loads it, wait for work spinning 2^28 cycles before they sleep:
# 0.1 CPU s at every run's start (0.15 against 0.05 for `import numpy` and a 0.4 s sleep), taken from the
# rows' and the writer's threads on two cores, for a command that multiplies no matrices. A short wait
# (2^4 cycles) leaves BLAS its threads; the other commands, whose modules load apart, keep the default,
# and a value the user set is kept. Set before NumPy's first import in `pecli encode`'s process (here).
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import numpy as np  # noqa: E402 - after OpenBLAS's setting above

from pecli.cli.common import (
    OUTPUT_PANEL, ForceOption, JsonOption, QuietOption, group_heading, message, print_json,
    scheme_command, stdout_console,
)
from pecli.config import DEFAULT_LENGTH, Setting, Spec, check_memory
from pecli import encoding_files
from pecli.dtypes import cast
from pecli.errors import ConfigError, PecliError
from pecli.io import check_disk, check_target, load_array, save_npy, save_npz
from pecli.memory import memory_budget
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
            "temperature); needs --hf-config, --model or --gguf; written in blocks, memory flat in the length",
            group=OUTPUT_PANEL),
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
    if settings["logit_scale"]:
        check_logit_scale_options({**settings, "dtype": spec.dtype})
    if settings["apply"] and not settings["out"]:
        raise PecliError("--apply writes its result to --out: give --out x.npy")
    if settings["as_keys"] and not settings["apply"]:
        raise PecliError("--as-keys says what the array of --apply holds: give --apply x.npy")
    target = check_target(settings["out"], suffixes=SUFFIXES, force=force) if settings["out"] else None
    budget = spec.memory_budget
    if settings["logit_scale"]:
        groups = [spec.group] if spec.plan is not None else []  # under the user's keys
        return _logit_scales(groups, spec.plan, target, _spec_positions(spec), budget, json=json, quiet=quiet, force=force)
    if settings["parts"] is not None and (target is None or target.suffix.lower() != ".npz"):
        raise PecliError("--parts chooses the arrays of an .npz archive: give --out x.npz")
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


def check_logit_scale_options(options: dict) -> None:
    """``--logit-scale`` writes each group's float64 scale and nothing else: the options that choose an
    encoding's arrays are refused rather than ignored."""
    if options.get("parts") is not None:
        raise ConfigError("parts", "does not apply with --logit-scale: the file holds each layer group's logit_scale "
                          "(float64); leave out --parts")
    if options.get("apply") is not None:
        raise ConfigError("apply", "does not apply with --logit-scale, which writes the scale itself; leave out one of them")
    if options.get("dtype") not in (None, "float64"):
        raise ConfigError("dtype", f"does not apply with --logit-scale: the scale is written as float64, not {options['dtype']}")


def _logit_scales(groups, plan, target: Path | None, positions, budget: int, *, json: bool, quiet: bool,
                  force: bool) -> None:
    """``encode --logit-scale``: each group's logit scale at ``positions`` (a ``range`` or ids, float64), into
    ``-o s.npy`` (one group) or ``s.npz`` (``GROUP/logit_scale``), block by block
    (:mod:`pecli.logit_scale_files`), the memory checked before work."""
    from pecli.logit_scale_files import logit_scale_memory, write_logit_scales

    if plan is None:
        raise ConfigError("logit_scale", "is the scale of a model's attention logits: give --hf-config, --model or --gguf")
    if target is None:
        raise ConfigError("logit_scale", "writes the scale at each position: give --out s.npy (or s.npz for every group)")
    if target.suffix.lower() == ".npy" and len(groups) > 1:
        raise ConfigError("out", f"{plan.source} has {len(groups)} layer groups: write them to an .npz (GROUP/logit_scale), "
                          "or choose one with --layer N or --layer-group NAME")
    if not isinstance(positions, range) and np.ndim(positions) != 1:
        raise ConfigError("positions", "--logit-scale reads one token index per position: give 1-D positions")
    count = len(positions)
    check_memory(logit_scale_memory(count, len(groups), ids_given=not isinstance(positions, range)), budget, "--logit-scale")
    check_disk(target, 8 * count * len(groups))
    unknown = next((group for group in groups if group.logit_scale_unknown), None)
    if unknown is not None:
        raise ConfigError("logit_scale", f"of layer group {unknown.name} is not known to pecli under your keys "
                          f"({unknown.logit_scale_unknown})")
    scales = [(group.name, group.logit_scale) for group in groups]
    metadata = None if target.suffix.lower() == ".npy" else {  # an .npz carries what each group's rule is
        "source": plan.source, "logit_scale": {group.name: group.logit_scale.text() for group in groups}, "positions": count}
    write_logit_scales(target, positions, scales, metadata, force=force)
    if json:
        print_json({"source": plan.source, "out": str(target), "positions": count,
                    "layer_groups": [{"name": g.name, "logit_scale": g.logit_scale.to_json()} for g in groups]})
    message(f"wrote {target}", quiet=quiet or json)


def _spec_positions(spec: Spec):
    """A spec's positions for the logit scale, the token indices: a ``range`` for the scheme's own positions
    (0 … L − 1, or an n-D scheme's cells in token order; never made whole), else the ids given."""
    return range(spec.count) if spec.where.given is None else spec.positions


def spec_length(groups) -> int:
    """The positions of a model's groups when none computes an encoding: 0 … its context − 1."""
    return max((group.context or 0 for group in groups), default=0) or DEFAULT_LENGTH


def every_group(plan, specs, options, force: bool = False, json: bool = False, quiet: bool = False) -> None:
    """``encode`` of a model whose layer groups differ: every group's arrays, into one ``.npz`` under
    ``GROUP/KEY``; a group without position encoding has no arrays and says so."""
    if options.get("logit_scale"):
        check_logit_scale_options(options)
        target = check_target(options["out"], suffixes=SUFFIXES, force=force) if options.get("out") is not None else None
        spec = next((spec for _, spec in specs if spec is not None), None)
        own = spec is None or (options.get("length") is None and options.get("positions") is None)
        # Without --length or --positions every group is written over the model's context (not a sliding
        # group's window).
        groups = [group if spec is None else spec.group for group, spec in specs]  # under the user's keys
        positions = range(spec_length(groups)) if own else _spec_positions(spec)
        return _logit_scales(groups, plan, target, positions, memory_budget(options.get("max_memory")),
                             json=json, quiet=quiet, force=force)
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
    # values beyond float16's range become ±inf, and a given ±inf times sin 0 NaN: both reported below
    with np.errstate(over="ignore", invalid="ignore"):
        result = cast(scheme.apply(x, positions, keys=bool(spec.settings["as_keys"])), dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        facts = array_summary(result)
        non_finite = ~np.isfinite(result.astype(np.float64))
        given = int(np.count_nonzero(~np.isfinite(x))) if x.dtype.kind == "f" else 0
        # a non-finite value given spreads along its row (a rotation mixes it into its pair): only rows given
        # finite can tell an overflow
        rows_given_finite = np.isfinite(x).all(axis=-1, keepdims=True) if given else True
        overflowed = int(np.count_nonzero(non_finite & rows_given_finite))
    if given:
        message(f"warning: the input holds {given:,} NaN or ±inf values; they stay non-finite", quiet=quiet)
    if overflowed:
        message(f"warning: {overflowed:,} values overflow {dtype} (stored as ±inf)", quiet=quiet)
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
        non_finite_values=int(np.count_nonzero(non_finite)),
    )


