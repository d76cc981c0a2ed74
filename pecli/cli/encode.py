"""``pecli encode``: compute a scheme's encoding, summarise it, write it as .npy or .npz."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import numpy as np

from pecli.cli.common import (
    OUTPUT_PANEL, ForceOption, JsonOption, QuietOption, message, print_json,
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
)


@scheme_command(*SETTINGS)
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
    target = check_target(settings["out"], suffixes=SUFFIXES, force=force) if settings["out"] else None
    if settings["parts"] and (target is None or target.suffix.lower() != ".npz"):
        raise PecliError("--parts chooses the arrays of an .npz archive: give --out x.npz")
    budget = spec.memory_budget
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


def _encode(spec: Spec, target: Path | None, budget: int, *, force: bool, quiet: bool) -> EncodeReport:
    from pecli.analysis.summary import EncodeReport, StreamingSummary, steps_are_equal

    scheme, dtype = spec.scheme, spec.output_dtype
    archive = target is not None and target.suffix.lower() == ".npz"
    wanted = _wanted(scheme, spec.settings["parts"]) if archive else [scheme.main_key]
    check_memory(memory_needed(scheme, spec.count, dtype, wanted), budget)
    positions = spec.positions
    exact = numpy_dtype(dtype).itemsize >= 8
    parts = scheme.parts(positions, exact=exact, dtype=dtype, wanted=wanted)
    main = parts[0]
    chosen = _chosen_parts(parts, spec.settings["parts"])
    nbytes = int(np.prod(main.shape, dtype=np.int64)) * _itemsize(main, dtype)
    if target is not None:
        written = chosen if archive else [main]
        check_disk(target, sum(int(np.prod(p.shape, dtype=np.int64)) * _itemsize(p, dtype) for p in written))
    summary = StreamingSummary(
        len(positions), main.shape, _dtype_name(main, dtype), nbytes, equal_steps=steps_are_equal(scheme, positions, dtype)
    )
    rows = block_rows(main.row_values)
    segments = int(np.prod(main.shape, dtype=np.int64)) // max(1, len(positions) * main.row_values)

    def cast_rows(index: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return storable(cast(main.rows_at(index), dtype))

    def main_blocks(bar) -> Iterator[np.ndarray]:
        for block in main.blocks(rows):
            with np.errstate(over="ignore"):  # values beyond float16's range become ±inf, reported below
                values = storable(cast(block.values, dtype))
            summary.add(block, values)
            bar.advance()
            yield values

    def cast_blocks(part: Part) -> Iterator[np.ndarray]:
        for block in part.blocks(block_rows(part.row_values)):
            with np.errstate(over="ignore"):  # inv_freq keeps float64: it is a parameter, not an output
                yield block.values if part.name == "inv_freq" else cast(block.values, dtype)

    with task("encode", total=segments * -(-len(positions) // rows)) as bar:
        if target is None:
            collections.deque(main_blocks(bar), maxlen=0)
        elif target.suffix.lower() == ".npy":
            stream_npy(target, main.shape, main_blocks(bar), force=force)
        else:
            if main not in chosen:
                collections.deque(main_blocks(bar), maxlen=0)
            members = [(p.name, p.shape, main_blocks(bar) if p is main else cast_blocks(p)) for p in chosen]
            metadata = {
                "scheme": scheme.name, "kind": scheme.kind, "params": scheme.params(), "length": spec.length,
                "dtype": summary.dtype,
            }
            stream_npz(target, members, metadata, force=force)
    with np.errstate(invalid="ignore", over="ignore"):
        facts = summary.finish(positions, cast_rows)
    if summary.non_finite:
        message(f"warning: {summary.non_finite:,} values overflow {dtype} (stored as ±inf)", quiet=quiet)
    return EncodeReport(
        scheme.name, scheme.kind, scheme.params(), spec.length,
        position_range(positions), main.name, facts,
        out=None if target is None else str(target), non_finite_values=summary.non_finite,
    )


def _wanted(scheme: Scheme, names: str | None) -> list[str] | None:
    """The parts an archive will hold and the main array (summarised either way); None for every part."""
    if not names:
        return None
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
        result = cast(scheme.apply(x, positions), dtype)
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


