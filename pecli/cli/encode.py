"""``pecli encode``: compute a scheme's encoding, summarise it, write it as .npy or .npz."""

from __future__ import annotations

import dataclasses

import numpy as np

from pecli.analysis.summary import EncodeReport, array_summary, summarize
from pecli.cli.common import (
    OUTPUT_PANEL, ForceOption, JsonOption, QuietOption, message, memory_budget, print_json,
    scheme_command, stdout_console,
)
from pecli.config import Setting, Spec, parse_size
from pecli.dtypes import cast
from pecli.errors import PecliError
from pecli.io import check_target, load_array, save_npy, save_npz

SUFFIXES = (".npy", ".npz")
#: Peak memory over the main array: the float64 result, its cast copy and the other parts (cos, sin…).
WORKING_COPIES = 4

SETTINGS = (
    Setting("out", str, None, ".npy: the main array; .npz: every part with stable names", group=OUTPUT_PANEL),
    Setting("apply", str, None, ".npy array to encode: rope rotates its last axis (positions on the second-to-last), "
            "additive schemes add the encoding"),
    Setting("max_memory", str, None, "refuse beyond this many bytes, e.g. 2G", default_text="a quarter of RAM"),
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
    under "metadata".
    """
    scheme, settings = spec.scheme, spec.settings
    if settings["apply"] and not settings["out"]:
        raise PecliError("--apply writes its result to --out: give --out x.npy")
    target = check_target(settings["out"], suffixes=SUFFIXES, force=force) if settings["out"] else None
    budget = parse_size("max_memory", settings["max_memory"]) if settings["max_memory"] else memory_budget()
    if not settings["apply"]:
        _check_budget(scheme.estimate_bytes(spec.count) * WORKING_COPIES, budget)
    positions = spec.positions

    if settings["apply"]:
        x = load_array(settings["apply"])
        _check_budget(x.size * 8 * WORKING_COPIES, budget)
        dtype = spec.dtype or (x.dtype.name if x.dtype.kind == "f" else "float64")
        with np.errstate(over="ignore"):  # values beyond float16's range become ±inf, reported below
            arrays = {"result": cast(scheme.apply(x, positions), dtype), "positions": positions}
    else:
        dtype = spec.output_dtype
        with np.errstate(over="ignore"):  # inv_freq keeps float64: it is a parameter, not an output
            arrays = {name: array if name == "inv_freq" else cast(array, dtype) for name, array in scheme.arrays(positions).items()}

    main_key = next(iter(arrays))
    main = arrays[main_key]
    with np.errstate(invalid="ignore", over="ignore"):  # ±inf values (float16 overflow) are counted below
        facts = summarize(scheme, positions, main) if main_key != "result" else array_summary(main)
    overflowed = int(np.count_nonzero(~np.isfinite(main.astype(np.float64)))) if main.dtype.kind != "i" else 0
    report = EncodeReport(
        scheme.name, scheme.kind, scheme.params(), spec.length,
        (int(positions.size), int(positions[0]), int(positions[-1])), main_key, facts, non_finite_values=overflowed,
    )
    if overflowed:
        message(f"warning: {overflowed:,} values overflow {dtype} (stored as ±inf)", quiet=quiet)
    if target is not None:
        document = report.to_dict()
        metadata = {k: document[k] for k in ("scheme", "kind", "params", "length", "dtype")}
        if target.suffix.lower() == ".npy":
            save_npy(target, main, force=force)
        else:
            save_npz(target, arrays, metadata, force=force)
        report = dataclasses.replace(report, out=str(target))

    if json:
        print_json(report.to_dict())
    elif not quiet:
        from pecli.render.encode import encode_table

        stdout_console().print(encode_table(report))
    if target is not None:
        message(f"wrote {target}", quiet=quiet or json)


def _check_budget(needed: int, budget: int) -> None:
    if needed > budget:
        raise PecliError(
            f"this needs about {_gib(needed)} of memory, over the budget of {_gib(budget)}; "
            "use fewer positions or raise --max-memory"
        )


def _gib(n: int) -> str:
    return f"{n / (1 << 30):.2f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.1f} MiB"

