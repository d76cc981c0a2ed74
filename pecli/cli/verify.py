"""``pecli verify``: a user's own position-encoding arrays against the model's, and the bug named."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pecli.cli.common import (
    OUTPUT_PANEL, ForceOption, JsonOption, QuietOption, message, print_json, scheme_command, stdout_console,
)
from pecli.config import Setting, Spec
from pecli.errors import ConfigError

VERIFY_PANEL = "Verify"

SETTINGS = (
    Setting("scheme", str, "rope", "the reference scheme", choices=("rope", "alibi", "sinusoidal", "t5", "mrope")),
    Setting("cos", str, None, "rope: your cos array, .npy (or FILE.npz[:KEY]) of shape (P, r) in either layout or "
            "(P, r/2); float64, float32, float16 or bfloat16", group=VERIFY_PANEL),
    Setting("sin", str, None, "rope: your sin array, the same shape as --cos", group=VERIFY_PANEL),
    Setting("inv_freq", str, None, "rope: your inverse frequencies, .npy of r/2 values", group=VERIFY_PANEL),
    Setting("slopes", str, None, "alibi: your slopes, .npy of one value per head", group=VERIFY_PANEL),
    Setting("bias", str, None, "alibi: your bias, .npy of shape (H, L, L) or BLOOM's (H, 1, L)", group=VERIFY_PANEL),
    Setting("table", str, None, "sinusoidal: your table, .npy of shape (P, d)", group=VERIFY_PANEL),
    Setting("buckets", str, None, "t5: your buckets, .npy of shape (P, P), query by key", group=VERIFY_PANEL),
    Setting("position_ids", str, None, "mrope: your (3, N) position ids, rows t, h, w, .npy; checked against the "
            "model's rule for --sequence", group=VERIFY_PANEL),
    Setting("plot", Path, None, "rope: draw the error over positions and components (.png, .svg or .pdf)",
            group=OUTPUT_PANEL),
)
#: The options that give the user's arrays (see pecli.verification.arrays.INPUTS for which go with which scheme).
INPUT_KEYS = ("cos", "sin", "inv_freq", "slopes", "bias", "table", "buckets", "position_ids")


@scheme_command(*SETTINGS, run_keys=("scheme", "positions"))
def verify(
    spec: Spec,
    force: ForceOption = False,
    json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Check your own position-encoding arrays against the model's: exit 0 when they match, 1 when not.

    The reference is what every command takes (--hf-config or --model, with --layer for a model whose
    layers differ, or --scheme rope --dim … --base … --scaling …); the arrays are --cos and --sin at
    --positions (default 0 … P − 1), read a block of rows at a time. Each value is held to how it is
    stored (float32, float16, bfloat16 — float32 arrays of bfloat16 values as bfloat16), with the angle
    rounding of a float32 pipeline allowed to grow with the position, capped well under the largest
    possible error; NaN never matches. When they differ,
    each known cause is tested — layout, position-offset, base, scaling, attention-scaling, rotary-dim,
    precision, sin-sign — and those that explain the arrays are named; when none does, none is named.
    --inv-freq checks a vector of inverse frequencies the same way; --scheme alibi --slopes the slopes
    and --bias a bias, up to a constant per query (causes: slope-rule, order, sign, precision); --scheme sinusoidal --table a table (layout, spacing,
    position-offset, base); --scheme t5 --buckets a bucket table (direction, sign); an M-RoPE model
    (--scheme mrope, Qwen2-VL, Qwen2.5-VL, Qwen3-VL) --position-ids, (3, N) ids for the tokens of
    --sequence, the first wrong token named (vision-rule, block-start, temporal-rule, axes).
    """
    from pecli.verification.arrays import position_ids, verify_arrays

    settings = spec.settings
    ids = None if spec.where.given is None else position_ids(spec.where.given)  # refused before any file is read
    names = [key for key in INPUT_KEYS if settings[key]]
    if settings["plot"] is not None and sorted(names) != ["cos", "sin"]:
        raise ConfigError("plot", "draws the error of --cos and --sin over positions; the other inputs have a verdict only")
    figure_file = None
    if settings["plot"] is not None:
        from pecli.io import check_target
        from pecli.render.figures import FIGURE_SUFFIXES

        figure_file = check_target(settings["plot"], suffixes=FIGURE_SUFFIXES, force=force, option="--plot")
    if not names:
        verify_arrays(spec.scheme)  # the line that says which inputs the scheme takes
    arrays = {key: read_input(settings[key], key, spec.memory_budget) for key in names}
    report = verify_arrays(spec.scheme, ids, max_bytes=spec.memory_budget, **arrays)  # given ids, even 0 … L − 1
    if figure_file is not None:
        _plot(figure_file, arrays["cos"], arrays["sin"], spec.scheme, ids, report, force=force)
        message(f"wrote {figure_file}", quiet=quiet or json)
    _show(report, json, quiet)


def read_input(path: str, key: str, budget: int):
    """cos and sin as rows read a block at a time; the other inputs whole, within the budget."""
    _refuse_inline(path, key)
    if key in ("cos", "sin"):
        from pecli.verification.files import open_rows

        return open_rows(path, key, budget)
    return load_input(path, key, budget)


def _refuse_inline(path: str, key: str) -> None:
    """Numbers typed where a file is read (``--inv-freq 1,0.1``, as ``encode --inv-freq`` takes them): say that
    verify reads the arrays your code made, saved, rather than "no such file"."""
    import os

    from pecli.config_files import is_number_text
    from pecli.errors import PecliError

    items = path.strip().strip("[]").split(",")
    if not os.path.exists(path) and all(is_number_text(item) for item in items):
        raise PecliError(f"{key}: {path!r} is no file: verify reads the array your code made, saved as .npy "
                         f"(np.save('{key}.npy', values)) or in an .npz")


def _plot(target: Path, cos, sin, scheme, positions, report, *, force: bool) -> None:
    """The error map of ``--plot``, written atomically."""
    from pecli.verification.rope import error_map
    from pecli.io import write_atomic
    from pecli.render import figures

    ids = np.arange(cos.shape[0]) if positions is None else positions
    if scheme.reads_context:
        scheme = scheme.at_length(int(ids.max()) + 1)
    ratios, starts = error_map(cos, sin, scheme, ids)
    figure = figures.new_figure((8, 5), 100)
    verdict = "match" if report.match else ", ".join(d.code for d in report.diagnosis) or "differ, no known cause"
    band = -(-len(ids) // ratios.shape[0])  # error_map's rows per band
    drawing = figures.draw_error_map(figure.add_subplot(), ratios, starts, f"pecli verify: {verdict}", band)
    figures.finish(figure, drawing)
    write_atomic(target, lambda stream: figures.save_figure(figure, stream, target.suffix.lower()[1:]), force=force)


def load_input(path: str, key: str, budget: int) -> np.ndarray:
    """An input array: an ``.npy`` file, or member ``key`` of an ``.npz`` archive (``FILE.npz`` takes the
    member named after the option — ``cos``, ``sin``, … as ``pecli encode`` writes them — or the only
    one; ``FILE.npz:NAME`` names it), the memory its verification needs checked from its header before it
    is read (:func:`pecli.verification.arrays.memory_needed`)."""
    from pecli.verification.arrays import check_memory_of
    from pecli.verification.files import member_name, read_header, regular_file, split_member
    from pecli.errors import PecliError
    from pecli.io import load_array, read_npy_header

    archive, member = split_member(path)
    if not archive.endswith(".npz"):
        shape, _ = read_npy_header(path, key)
        check_memory_of({key: shape}, budget)
        return load_array(path, key=key)
    regular_file(archive, key)
    import zipfile
    import zlib

    try:
        with zipfile.ZipFile(archive) as zipped:
            wanted = member_name(zipped, archive, member, key)
            with zipped.open(wanted + ".npy") as stream:
                shape, _, _ = read_header(stream, f"{archive}:{wanted}", key)  # the header only
            check_memory_of({key: shape}, budget)
            with zipped.open(wanted + ".npy") as stream:
                return np.lib.format.read_array(stream, allow_pickle=False)
    except (OSError, zipfile.BadZipFile, zlib.error, ValueError) as error:  # zlib: damaged compressed bytes
        raise PecliError(f"{key}: cannot read {archive}: {error}") from None


def _show(report, json: bool, quiet: bool) -> None:
    """Print the report (a table, or the JSON document); exit 1 when the arrays differ."""
    if json:
        print_json(report.to_dict())
    elif not quiet:
        stdout_console().print(verify_table(report))
    if not report.match:
        import typer

        raise typer.Exit(1)


def verify_table(report):
    """The verdict, the largest error and the worst ratio (each with where), the diagnosis, as a
    two-column table."""
    from pecli.render.tables import key_value_table, number

    rows = [("verdict", "MATCH" if report.match else "DIFFER")]
    for row in report.table_rows():
        value = row["value"]
        rows.append((row["item"], number(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value))
    return key_value_table("pecli verify", rows)
