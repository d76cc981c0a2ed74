"""``pecli encode``: compute a scheme's encoding, summarise it, write it as .npy or .npz."""

from __future__ import annotations

import collections
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from pecli.cli.common import (
    OUTPUT_PANEL, ForceOption, JsonOption, QuietOption, group_heading, message, print_json,
    scheme_command, stdout_console,
)
from pecli.config import Setting, Spec, check_memory
from pecli.dtypes import cast, numpy_dtype, storable
from pecli.errors import ConfigError, PecliError
from pecli.io import check_disk, check_target, load_array, save_npy, save_npz, stream_npy, stream_npz
from pecli.progress import task
from pecli.schemes.base import Scheme
from pecli.schemes.frequencies import ANCHOR
from pecli.schemes.parts import Part
from pecli.schemes.positions import position_range, stored_positions

if TYPE_CHECKING:  # the summary (and the analyses it imports) loads when a command runs, not for --help
    from pecli.analysis.summary import EncodeReport

SUFFIXES = (".npy", ".npz")
#: Peak memory over the main array when a scheme builds its arrays whole (--apply, schemes without
#: :meth:`~pecli.schemes.base.Scheme.parts` of their own): the float64 result, its cast copy, the other parts.
WORKING_COPIES = 4
#: Values computed at once: the rows of a block (at least one row) hold about this many values.
BLOCK_VALUES = 1 << 20
#: Bytes held per position for the whole run: the ids, the summary's row hashes and squared steps.
POSITION_BYTES = 24
#: Bytes per position the summary's last step adds, once the blocks are gone: sorting the hashes to
#: group equal ones, the steps' square roots.
FINISH_BYTES = 32
#: Bytes per value of the candidate rows the summary compares at once (recomputed, cast, widened, sorted).
VERIFY_BYTES_PER_VALUE = 48

SETTINGS = (
    Setting("out", Path, None, ".npy: the main array; .npz: every part with stable names", group=OUTPUT_PANEL),
    Setting("parts", str, None, ".npz: only these parts, comma-separated (rope: cos,sin)", default_text="every part",
            group=OUTPUT_PANEL),
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
    under "metadata". Arrays are computed in blocks of rows and written as they come, so memory stays
    flat in the length.
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


def block_rows(row_values: int) -> int:
    """Rows per block: about :data:`BLOCK_VALUES` values, a multiple of the phasors' anchor when that many."""
    rows = max(1, BLOCK_VALUES // max(1, row_values))
    return rows - rows % ANCHOR if rows >= ANCHOR else rows


def streamed(scheme: Scheme) -> bool:
    """Whether the scheme produces its arrays block by block (its own :meth:`Scheme.parts`)."""
    return type(scheme).parts is not Scheme.parts


def memory_needed(scheme: Scheme, count: int, dtype: str = "float64", wanted: list[str] | None = None) -> int:
    """Bytes ``pecli encode`` holds at its peak for ``count`` positions, writing the parts ``wanted``.

    Streamed: :data:`POSITION_BYTES` per position, the tables a scheme draws whole (learned's) and what
    it keeps to share work between parts (rope's cos and sin), plus the larger of a block (the scheme's
    ``block_bytes_per_value`` per value) and the summary's last step (:data:`FINISH_BYTES` per
    position and a batch of candidate rows), which never coincide; otherwise the whole arrays (:data:`WORKING_COPIES`).
    """
    if not streamed(scheme):
        return scheme.estimate_bytes(count) * WORKING_COPIES
    shape = scheme.main_shape(count)
    main_bytes = int(np.prod(shape, dtype=np.float64)) * 8
    # A block's rows: a query row of one head for a (heads, L, L) bias, else the array past its first axis.
    row_values = shape[-1] if scheme.main_key == "bias" else int(np.prod(shape[1:], dtype=np.float64))
    block_values = min(block_rows(row_values), max(count, 1)) * row_values
    tables = scheme.estimate_bytes(count) - main_bytes
    shared = scheme.shared_bytes(count, numpy_dtype(dtype).itemsize, wanted)
    from pecli.analysis.summary import VERIFY_VALUES

    finish = count * FINISH_BYTES + VERIFY_VALUES * VERIFY_BYTES_PER_VALUE
    working = max(block_values * scheme.block_bytes_per_value, finish)
    return working + count * POSITION_BYTES + tables + shared


class Encoding:
    """One spec's encode run: its arrays streamed block by block (into a file, or only summarised),
    then its report — so that several layer groups can stream into one archive."""

    def __init__(self, spec: Spec, archive: bool) -> None:
        self.spec, self.archive = spec, archive
        self.wanted = _wanted(spec.scheme, spec.settings["parts"]) if archive else [spec.scheme.main_key]
        #: Bytes held at the peak, known from the sizes alone: check it before :meth:`prepare`.
        self.memory = memory_needed(spec.scheme, spec.count, spec.output_dtype, self.wanted)

    def prepare(self) -> None:
        """Set up the parts and the summary (after the memory check: positions and tables are allocated)."""
        from pecli.analysis.summary import StreamingSummary, steps_are_equal

        spec, scheme, dtype, archive = self.spec, self.spec.scheme, self.spec.output_dtype, self.archive
        positions = spec.positions
        parts = scheme.parts(positions, exact=numpy_dtype(dtype).itemsize >= 8, dtype=dtype, wanted=self.wanted)
        self.main = main = parts[0]
        self.chosen = _chosen_parts(parts, spec.settings["parts"]) if archive else [main]
        nbytes = int(np.prod(main.shape, dtype=np.int64)) * _itemsize(main, dtype)
        self.summary = StreamingSummary(
            len(positions), main.shape, _dtype_name(main, dtype), nbytes, equal_steps=steps_are_equal(scheme, positions, dtype)
        )
        self.rows = block_rows(main.row_values)
        rows = len(positions) + main.prefix  # prefix tokens' rows come first, in a block of their own
        segments = int(np.prod(main.shape, dtype=np.int64)) // max(1, rows * main.row_values)
        self.steps = segments * (-(-len(positions) // self.rows) + (1 if main.prefix else 0))

    @property
    def disk_bytes(self) -> int:
        return sum(int(np.prod(p.shape, dtype=np.int64)) * _itemsize(p, self.spec.output_dtype) for p in self.chosen)

    def main_blocks(self, bar) -> Iterator[np.ndarray]:
        prefix = self.main.prefix
        for block in self.main.blocks(self.rows):
            with np.errstate(over="ignore"):  # values beyond float16's range become ±inf, reported below
                values = storable(cast(block.values, self.spec.output_dtype))
            if block.start >= prefix:  # the summary is about the positions' rows, not the prefix tokens'
                self.summary.add(dataclasses.replace(block, start=block.start - prefix), values)
            bar.advance()
            yield values

    def _cast_blocks(self, part: Part) -> Iterator[np.ndarray]:
        for block in part.blocks(block_rows(part.row_values)):
            with np.errstate(over="ignore"):  # inv_freq keeps float64: it is a parameter, not an output
                yield block.values if part.name == "inv_freq" else cast(block.values, self.spec.output_dtype)

    def drain(self, bar) -> None:
        """Summarise the main array without writing it."""
        collections.deque(self.main_blocks(bar), maxlen=0)

    def members(self, bar, prefix: str = "") -> list[tuple[str, tuple[int, ...], Iterator[np.ndarray]]]:
        """The archive members ``(prefix + name, shape, blocks)``; the main array is summarised either way."""
        def first(blocks: Iterator[np.ndarray]) -> Iterator[np.ndarray]:
            if self.main not in self.chosen:
                self.drain(bar)
            yield from blocks

        out = [(prefix + p.name, p.shape, self.main_blocks(bar) if p is self.main else self._cast_blocks(p)) for p in self.chosen]
        name, shape, blocks = out[0]
        return [(name, shape, first(blocks)), *out[1:]]

    @property
    def metadata(self) -> dict[str, Any]:
        scheme = self.spec.scheme
        return {"scheme": scheme.name, "kind": scheme.kind, "params": scheme.params(), "length": self.spec.length,
                "dtype": self.summary.dtype}

    def report(self, target: Path | None, quiet: bool) -> EncodeReport:
        from pecli.analysis.summary import EncodeReport

        spec, scheme, dtype, main = self.spec, self.spec.scheme, self.spec.output_dtype, self.main

        def cast_rows(index: np.ndarray) -> np.ndarray:
            with np.errstate(over="ignore"):
                return storable(cast(main.rows_at(index), dtype))

        with np.errstate(invalid="ignore", over="ignore"):
            facts = self.summary.finish(spec.positions, cast_rows)
        if self.summary.non_finite:
            message(f"warning: {self.summary.non_finite:,} values overflow {dtype} (stored as ±inf)", quiet=quiet)
        return EncodeReport(
            scheme.name, scheme.kind, scheme.params(), spec.length, position_range(spec.positions), main.name, facts,
            out=None if target is None else str(target), non_finite_values=self.summary.non_finite,
        )


def _encode(spec: Spec, target: Path | None, budget: int, *, force: bool, quiet: bool) -> EncodeReport:
    archive = target is not None and target.suffix.lower() == ".npz"
    run = Encoding(spec, archive)
    check_memory(run.memory, budget)
    run.prepare()
    if target is not None:
        check_disk(target, run.disk_bytes)
    with task("encode", total=run.steps) as bar:
        if target is None:
            run.drain(bar)
        elif not archive:
            stream_npy(target, run.main.shape, run.main_blocks(bar), force=force)
        else:
            stream_npz(target, run.members(bar), run.metadata, force=force)
    return run.report(target, quiet)


def _logit_scales(specs, plan, target: Path | None, *, json: bool, quiet: bool, force: bool) -> None:
    """``encode --logit-scale``: each group's logit scale at the positions (float64), into ``-o s.npy`` (one
    group) or ``s.npz`` (``GROUP/logit_scale``)."""
    if plan is None:
        raise ConfigError("logit_scale", "is the scale of a model's attention logits: give --hf-config, --model or --gguf")
    if target is None:
        raise ConfigError("logit_scale", "writes the scale at each position: give --out s.npy (or s.npz for every group)")
    spec = next(spec for _, spec in specs if spec is not None) if any(spec for _, spec in specs) else None
    positions = np.asarray(spec.positions if spec is not None else np.arange(spec_length(plan)), dtype=np.float64)
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
    return max((group.context or 0 for group in plan.groups), default=0) or 512


def every_group(plan, specs, options, force: bool = False, json: bool = False, quiet: bool = False) -> None:
    """``encode`` of a model whose layer groups differ: every group's arrays, into one ``.npz`` under
    ``GROUP/KEY``; a group without position encoding has no arrays and says so."""
    if options.get("logit_scale"):
        target = check_target(options["out"], suffixes=SUFFIXES, force=force) if options.get("out") is not None else None
        return _logit_scales(specs, plan, target, json=json, quiet=quiet, force=force)
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
    runs = [(group, Encoding(spec, target is not None)) for group, spec in live]
    check_memory(sum(run.memory for _, run in runs), live[0][1].memory_budget if live else None)
    for _, run in runs:
        run.prepare()
    if target is not None:
        check_disk(target, sum(run.disk_bytes for _, run in runs))
    with task("encode", total=sum(run.steps for _, run in runs)) as bar:
        if target is None:
            for _, run in runs:
                run.drain(bar)
        else:
            members = [member for group, run in runs for member in run.members(bar, f"{group.name}/")]
            metadata = {"source": plan.source, "model_type": plan.model_type,
                        "layer_groups": {group.name: {"layers": list(group.layers), **run.metadata} for group, run in runs}}
            stream_npz(target, members, metadata, force=force)
    reports = {group.name: run.report(target, quiet) for group, run in runs}
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


def _wanted(scheme: Scheme, names: str | None) -> list[str] | None:
    """The parts an archive will hold and the main array (summarised either way); None for every part."""
    if names is None:
        return None
    if not names.strip(" ,"):
        raise ConfigError("parts", "is empty: name the parts (rope: cos,sin), or leave it out for every part")
    return [scheme.main_key, *(name.strip() for name in names.split(",") if name.strip())]


def _chosen_parts(parts: list[Part], names: str | None) -> list[Part]:
    """The parts ``--parts`` names, in the scheme's order; every part without it."""
    if not names:
        return parts
    wanted = [name.strip() for name in names.split(",") if name.strip()]
    known = [part.name for part in parts]
    unknown = [name for name in wanted if name not in known]
    if unknown or not wanted:
        raise ConfigError("parts", f"{', '.join(unknown) or names!r} not among this scheme's parts: {', '.join(known)}")
    return [part for part in parts if part.name in wanted]


def _dtype_name(part: Part, dtype: str) -> str:
    """The dtype the report names: the output dtype, or int64 for integer arrays (t5's buckets)."""
    sample = part.rows_at(np.zeros(1, dtype=np.int64)) if part.rows_at is not None else None
    return "int64" if sample is not None and sample.dtype.kind in "iu" else dtype


def _itemsize(part: Part, dtype: str) -> int:
    return 8 if _dtype_name(part, dtype) == "int64" else numpy_dtype(dtype).itemsize


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


