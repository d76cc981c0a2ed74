"""``pecli plot KIND``: draw a scheme as a figure and write it as .png, .svg or .pdf.

The kinds are the records of :data:`pecli.render.figures.PLOTS`; this module parses the options,
looks up the record, has :func:`pecli.render.figures.figure` draw it, and saves the figure.
matplotlib is imported only when a figure is drawn.
"""

from __future__ import annotations

import textwrap
from typing import Annotated, Any, Optional

import typer

from pecli.cli.common import OUTPUT_PANEL, ForceOption, JsonOption, QuietOption, message, print_json, scheme_command
from pecli.config import Setting, Spec
from pecli.io import check_target, write_atomic
from pecli.render import figures
from pecli.render.figures import FIGURE_SUFFIXES as SUFFIXES
from pecli.render.figures import PLOTS, PlotRequest, Style, check_applicable, lookup, plot_options
from pecli.render.figures.registry import CIRCLE_PAIR, CIRCLE_POINTS, RUN_KEYS

PLOT_PANEL = "Plot"
KINDS = tuple(PLOTS)
#: The kinds' own options, each declared once by the records.
OPTIONS = plot_options()

SETTINGS = (
    Setting("kind", str, "heatmap", "what to draw", choices=KINDS),
    Setting("out", str, None, "output file: .png, .svg or .pdf [default: <kind>.png]"),
    Setting("dpi", int, 100, "resolution (dots per inch)", minimum=10, maximum=1200),
    Setting("size", str, None, "figure size WxH in inches, e.g. 8x5"),
    Setting("title", str, None, "figure title [default: the scheme and its parameters]"),
    *OPTIONS,
)


def _opt(*names: str, help: str) -> Any:
    return typer.Option(*names, help=help, rich_help_panel=PLOT_PANEL, show_default=False)


@scheme_command(*SETTINGS)
def plot(
    spec: Spec,
    kind: Annotated[Optional[str], typer.Argument(metavar="KIND", help=f"{', '.join(KINDS)} [default: heatmap]", show_default=False)] = None,
    out: Annotated[Optional[str], typer.Option("--out", "-o", help="output file: .png, .svg or .pdf [default: KIND.png]", rich_help_panel=OUTPUT_PANEL, show_default=False)] = None,
    dpi: Annotated[Optional[int], _opt("--dpi", help="resolution in dots per inch [default: 100]")] = None,
    size: Annotated[Optional[str], _opt("--size", help="figure size WxH in inches, e.g. 8x5")] = None,
    title: Annotated[Optional[str], _opt("--title", help="figure title [default: the scheme and its parameters]")] = None,
    head: Annotated[Optional[int], _opt("--head", help="heatmap, bias: the head of a bias scheme [default: all heads]")] = None,
    bases: Annotated[Optional[str], _opt("--bases", help="circle, dot-distance: bases to compare, e.g. 1,5,10,100")] = None,
    pair: Annotated[Optional[int], _opt("--pair", help=f"circle: frequency pair i drawn [default: {CIRCLE_PAIR}]")] = None,
    points: Annotated[Optional[int], _opt("--points", help=f"circle: positions 0 … N−1 placed [default: {CIRCLE_POINTS}]")] = None,
    schemes: Annotated[Optional[str], _opt("--schemes", help="dot-distance: schemes overlaid, e.g. sinusoidal,rope,alibi")] = None,
    band: Annotated[Optional[bool], _opt("--band/--no-band", help="dot-distance: the range over m as a band [default: on]")] = None,
    train_length: Annotated[Optional[int], _opt("--train-length", help="wavelengths, extrapolation: training length; the test length is --length [default: rope's original_max_position; extrapolation: else half of --length]")] = None,
    dtypes: Annotated[Optional[str], _opt("--dtypes", help="precision: dtypes compared with float64 [default: float32,float16,bfloat16]")] = None,
    computed: Annotated[Optional[bool], _opt("--computed/--cast", help="precision: form the angles in each dtype, or round the float64 values [default: cast]")] = None,
    force: ForceOption = False,
    json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Draw a scheme and write the figure as .png, .svg or .pdf."""
    settings = spec.settings
    kind = settings["kind"]
    record = lookup(kind)
    check_applicable(kind, _given(spec))
    record.check(spec.scheme)
    target = check_target(settings["out"] or f"{kind}.png", suffixes=SUFFIXES, force=force)
    style = Style(
        title=settings["title"],
        size=figures.parse_figure_size(settings["size"]) if settings["size"] else None,
        dpi=settings["dpi"],
    )
    request = PlotRequest(
        spec.scheme, spec.length, spec.given_positions, spec.dtype,
        {option.name: settings[option.name] for option in OPTIONS}, spec.given_params,
    )
    figure, notes = figures.figure(kind, request, style)
    write_atomic(target, lambda stream: figures.save_figure(figure, stream, target.suffix.lower()[1:]), force=force)
    if json:
        print_json({"kind": kind, **spec.describe(), "out": str(target), "notes": notes})
    for note in notes:
        message(f"note: {note}", quiet=quiet or json)
    message(f"wrote {target}", quiet=quiet or json)


# The help's list of kinds, from the records' summaries.
plot.__doc__ = (plot.__doc__ or "") + "\n\n" + textwrap.fill(
    "KIND is one of: " + ", ".join(f"{kind} ({record.summary})" for kind, record in PLOTS.items()) + ".", 100
)


def _given(spec: Spec) -> set[str]:
    """The plot options and the run keys of :data:`RUN_KEYS` that the user gave."""
    given = {option.name for option in OPTIONS if spec.settings.get(option.name) is not None}
    run = {"positions": spec.given_positions, "dtype": spec.dtype}
    return given | {key for key in RUN_KEYS if run[key] is not None}
