"""``pecli plot KIND``: draw a scheme as a figure and write it as .png, .svg or .pdf.

The kinds are the records of :data:`pecli.render.figures.PLOTS`; this module parses the options,
looks up the record, has :func:`pecli.render.figures.figure` draw it, and saves the figure.
matplotlib is imported only when a figure is drawn.
"""

from __future__ import annotations

from pathlib import Path

import textwrap
from typing import Annotated, Optional

import typer

from pecli.cli import completion
from pecli.cli.common import OUTPUT_PANEL, ForceOption, JsonOption, QuietOption, message, print_json, scheme_command
from pecli.config import Setting, Spec
from pecli.errors import ConfigError
from pecli.schemes.base import Capability
from pecli.io import check_target, write_atomic
from pecli.render import figures
from pecli.render.figures import FIGURE_SUFFIXES as SUFFIXES
from pecli.render.figures import PLOTS, PlotRequest, Style, check_applicable, lookup, plot_options
from pecli.render.figures.registry import RUN_KEYS

PLOT_PANEL = "Plot"
KINDS = tuple(PLOTS)
#: The kinds' own options, each declared once by the records.
OPTIONS = plot_options()

SETTINGS = (
    Setting("kind", str, "heatmap", "what to draw", choices=KINDS),
    Setting("out", Path, None, "output file: .png, .svg or .pdf", default_text="KIND.png", group=OUTPUT_PANEL),
    Setting("dpi", int, 100, "resolution in dots per inch", minimum=10, maximum=1200, group=PLOT_PANEL),
    Setting("size", str, None, "figure size WxH in inches, e.g. 8x5", group=PLOT_PANEL),
    Setting("title", str, None, "figure title", default_text="the scheme and its parameters", group=PLOT_PANEL),
    *OPTIONS,
)


def every_group(plan, specs, options, kind: str | None = None, force: bool = False, json: bool = False, quiet: bool = False) -> None:
    """``plot`` of a model whose layer groups differ: one figure, a panel per group."""
    live = [spec for _, spec in specs if spec is not None]
    if not live:
        raise ConfigError("layer", "the chosen layers apply no position encoding: nothing to draw")
    settings = live[0].settings
    kind = settings["kind"]
    record = lookup(kind)
    _check_title(settings["title"])
    for spec in live:
        check_applicable(kind, _given(spec))
        record.check(spec.scheme)
    live[0].check_memory(sum(plot_bytes(spec) for spec in live), f"plot {kind}")  # the panels are held together
    target = _target(settings["out"], kind, force)
    style = Style(title=settings["title"], size=figures.parse_figure_size(settings["size"]) if settings["size"] else None,
                  dpi=settings["dpi"])
    panels = [(f"{group.name} (layers {group.layers_text()})", None if spec is None else _request(spec)) for group, spec in specs]
    figure, drawings = figures.draw_panels(kind, panels, style)
    write_atomic(target, lambda stream: figures.save_figure(figure, stream, target.suffix.lower()[1:]), force=force)
    notes = list(dict.fromkeys(note for drawing in drawings for note in drawing.notes))
    if json:
        drawn = iter(drawings)
        print_json({"kind": kind, "source": plan.source, "out": str(target), "notes": notes, "layer_groups": [
            {"name": group.name, "layers": list(group.layers),
             **({"scheme": "none"} if spec is None else describe_drawn(spec, next(drawn)))} for group, spec in specs]})
    for note in notes:
        message(f"note: {note}", quiet=quiet or json)
    message(f"wrote {target}", quiet=quiet or json)


def _target(out: Path | None, kind: str, force: bool) -> Path:
    """The figure's file: ``--out``, else ``KIND.png`` in the current folder, which a second run without
    ``--out`` finds there: the refusal then says where that file came from and the two ways on."""
    default = Path(f"{kind}.png")
    if out is None and not force and default.exists():
        from pecli.errors import PecliError

        raise PecliError(f"{default} exists (plot {kind} writes there when --out is not given); pass --force to "
                         "overwrite it, or --out to name another file")
    return check_target(out or default, suffixes=SUFFIXES, force=force)


def _check_title(title: str | None) -> None:
    """A title of printable characters (line breaks allowed): matplotlib has no glyph for the others."""
    bad = next((ch for ch in title or "" if not ch.isprintable() and ch != "\n"), None)
    if bad is not None:
        raise ConfigError("title", f"holds the control character {bad!r}; a title is printable text (line breaks allowed)")


def _request(spec: Spec) -> PlotRequest:
    settings = spec.settings
    return PlotRequest(
        spec.scheme, spec.length, spec.given_positions, spec.dtype,
        {option.name: settings[option.name] for option in OPTIONS}, spec.given_params, spec.memory_budget,
        spec.query_scale,
    )


@scheme_command(*SETTINGS, per_group=every_group, complete_scheme=completion.plot_schemes)
def plot(
    spec: Spec,
    kind: Annotated[Optional[str], typer.Argument(metavar="KIND", autocompletion=completion.plot_kinds, help=f"{', '.join(KINDS)} [default: heatmap]", show_default=False)] = None,
    force: ForceOption = False,
    json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Draw a scheme and write the figure as .png, .svg or .pdf."""
    settings = spec.settings
    kind = settings["kind"]
    record = lookup(kind)
    _check_title(settings["title"])
    check_applicable(kind, _given(spec))
    record.check(spec.scheme)
    target = _target(settings["out"], kind, force)
    style = Style(
        title=settings["title"],
        size=figures.parse_figure_size(settings["size"]) if settings["size"] else None,
        dpi=settings["dpi"],
    )
    request = _request(spec)
    spec.check_memory(plot_bytes(spec), f"plot {kind}")
    figure, drawing = figures.draw(kind, request, style)
    notes = drawing.notes
    write_atomic(target, lambda stream: figures.save_figure(figure, stream, target.suffix.lower()[1:]), force=force)
    if json:
        print_json({"kind": kind, **describe_drawn(spec, drawing), "out": str(target), "notes": notes})
    for note in notes:
        message(f"note: {note}", quiet=quiet or json)
    message(f"wrote {target}", quiet=quiet or json)


# The help's list of kinds, from the records' summaries.
plot.__doc__ = (plot.__doc__ or "") + "\n\n" + textwrap.fill(
    "KIND is one of: " + ", ".join(f"{kind} ({record.summary})" for kind, record in PLOTS.items()) + ".", 100
)


def describe_drawn(spec: Spec, drawing: figures.Drawing) -> dict:
    """The figure as drawn, for --json: with one scheme its name and parameters (as ``check --json``);
    with several (variants by base, overlays) each of them under ``schemes`` and what differs under
    ``varied``. Then the length and the dtype of the run."""
    schemes = drawing.schemes
    if len(schemes) == 1:
        drawn = {"scheme": schemes[0].name, "params": schemes[0].params()}
    else:
        drawn = {
            "schemes": [{"scheme": scheme.name, "params": scheme.params()} for scheme in schemes],
            "varied": figures.varied(schemes),
        }
    run = spec.describe()
    return {**drawn, "length": run["length"], "dtype": run["dtype"]}


def _given(spec: Spec) -> set[str]:
    """The plot options and the run keys of :data:`RUN_KEYS` that the user gave."""
    given = {option.name for option in OPTIONS if spec.settings.get(option.name) is not None}
    run = {"positions": spec.given_positions, "dtype": spec.dtype}
    return given | {key for key in RUN_KEYS if run[key] is not None}


def plot_bytes(spec: Spec) -> int:
    """An upper estimate of what drawing holds: the per-position factors of every position (the
    dot-distance curve needs them whole; heatmaps and the rest work in smaller chunks), three copies in
    float64, plus the bias rows of every channel."""
    scheme, count = spec.scheme, spec.count
    vectors = 3 * 8 * scheme.width * count if scheme.has(Capability.VECTORS) else 0
    cells = 8 * scheme.position_rank * count if scheme.has_cells else 0
    return vectors + 4 * 8 * scheme.channels * count + cells
