"""What every figure shares: the :class:`Style`, the blank Figure, titles, notes, saving, and sampling.

matplotlib is imported only inside the functions that create or save a Figure, never at module
import, so that ``import pecli.cli`` stays fast. Figures are built on :class:`matplotlib.figure.Figure`
with an Agg canvas, never through pyplot's global state.

A drawing function returns a :class:`Drawing`: the title it suggests and its notes (what was
downsampled, clipped or left out). :func:`finish` writes both on the Figure: the caller's title wins
over the suggested one, and the notes go in small print under the axes, so nothing is dropped silently.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, Sequence

import numpy as np

from pecli.errors import ConfigError
from pecli.schemes import Scheme
from pecli.schemes.base import Capability

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

#: File formats a figure can be saved in (by ``--out`` suffix).
FIGURE_SUFFIXES = (".png", ".svg", ".pdf")
DEFAULT_DPI = 100
#: Default figure size in inches (width, height) of a kind that does not set its own.
DEFAULT_SIZE = (8.0, 5.0)

#: Most rows (positions) and columns (components) a heatmap draws; beyond, a regular stride.
MAX_HEATMAP_ROWS = 1024
MAX_HEATMAP_COLUMNS = 1024
#: Most positions per side of an (L, L) matrix (similarity, bias heatmap of one head).
MAX_MATRIX_SIDE = 1024
#: Most positions per side of each panel of a grid of heads, and most heads in the grid.
MAX_GRID_SIDE = 256
MAX_GRID_HEADS = 16
#: Most heads drawn as separate lines (bias, dot-distance).
MAX_LINES = 16
#: Most points of a curve (distances, positions); beyond, a regular stride.
MAX_CURVE_POINTS = 8192
#: Most points labelled with their position on the circle plot.
MAX_LABELLED_POINTS = 32
#: Largest figure side in pixels (Agg's own limit is 2^16).
MAX_PIXELS = 16384
#: Longest suggested title kept on one line; longer ones break after the scheme.
TITLE_WIDTH = 80
#: Characters of a note (8-point type) that fit in an inch of figure width; longer notes are wrapped.
NOTE_CHARACTERS_PER_INCH = 15
#: Characters of a title (11-point type) that fit in an inch of figure width.
TITLE_CHARACTERS_PER_INCH = 11
#: rope scalings whose frequencies depend on the context (HF dynamic NTK, LongRoPE): only there is
#: rope's ``context`` worth a place in a title.


@dataclass(frozen=True)
class Style:
    """How a figure looks, whatever it shows.

    Attributes
    ----------
    title:
        Replaces the title the drawing suggests; None keeps the suggestion.
    size:
        (width, height) in inches; None takes the kind's own size.
    dpi:
        Resolution in dots per inch.
    """

    title: str | None = None
    size: tuple[float, float] | None = None
    dpi: float = DEFAULT_DPI


@dataclass(frozen=True)
class Drawing:
    """What a drawing function reports: the title it suggests, its notes in the order they arose, and
    the schemes it drew when they are not just the one it was given (variants by base, overlays)."""

    title: str
    notes: list[str] = field(default_factory=list)
    schemes: list[Scheme] = field(default_factory=list)

    @property
    def unique_notes(self) -> list[str]:
        """The notes, each once (overlaid variants of one scheme raise the same note)."""
        return list(dict.fromkeys(self.notes))


# -- figures: creating, finishing, saving ------------------------------------------------------------
def parse_figure_size(value: Any) -> tuple[float, float]:
    """``"8x6"`` → ``(8.0, 6.0)`` inches."""
    text = str(value).strip().lower().replace("×", "x")
    parts = text.split("x")
    try:
        width, height = (float(part) for part in parts)
    except ValueError:
        raise ConfigError("size", f"expected WxH in inches, such as 8x5, got {value!r}") from None
    if not (0 < width <= 100 and 0 < height <= 100):
        raise ConfigError("size", f"width and height must be in (0, 100] inches, got {value!r}")
    return width, height


def new_figure(size: tuple[float, float] = DEFAULT_SIZE, dpi: float = DEFAULT_DPI) -> "Figure":
    """An empty constrained-layout Figure on an Agg canvas (no pyplot), shown inline in Jupyter."""
    width, height = size
    if max(width, height) * dpi > MAX_PIXELS:
        raise ConfigError("size", f"{width:g}x{height:g} inches at {dpi:g} dpi is {max(width, height) * dpi:,.0f} pixels "
                          f"a side, over {MAX_PIXELS:,}: give a smaller --size or --dpi")
    figure = _shown_figure_class()(figsize=(width, height), dpi=dpi, layout="constrained")
    _agg_canvas_class()(figure)
    return figure


@functools.cache
def _shown_figure_class() -> type:
    """matplotlib's Figure with ``_repr_png_``: Jupyter shows it inline whatever the backend (a Figure made
    without pyplot has no display of its own there)."""
    from matplotlib.figure import Figure

    class ShownFigure(Figure):
        def _repr_png_(self) -> bytes:
            import io

            stream = io.BytesIO()
            self.savefig(stream, format="png")
            return stream.getvalue()

    ShownFigure.__name__ = ShownFigure.__qualname__ = "Figure"
    return ShownFigure


@functools.cache
def _agg_canvas_class() -> type:
    """matplotlib's Agg canvas, whose renderers all share one mathtext parser.

    Agg gives every renderer (one per figure and size) its own ``MathTextParser``, and the parser caches
    what it parsed per instance: each new figure parsed its ``$…$`` labels and log-axis tick labels
    (``$\\mathdefault{10^{3}}$``) again with pyparsing, a fifth of drawing a small figure. The parse is
    a function of the text, dpi, font and antialiasing only (its cache key), so sharing the parser
    changes no pixel; it only keeps those parses for the next figure of the process.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    shared: list[Any] = []  # the first renderer's own parser, of whatever kind this matplotlib makes

    class Canvas(FigureCanvasAgg):
        def get_renderer(self, *args: Any, **kwargs: Any) -> Any:
            renderer = super().get_renderer(*args, **kwargs)
            if not shared:
                shared.append(renderer.mathtext_parser)
            renderer.mathtext_parser = shared[0]
            return renderer

    return Canvas


def finish(figure: "Figure", drawing: Drawing, title: str | None = None) -> None:
    """Write the title (``title`` if given, else the drawing's) and the drawing's notes on ``figure``."""
    set_title(figure, drawing.title, title)
    if drawing.notes:
        import textwrap

        width = max(40, int(figure.figure.get_figwidth() * NOTE_CHARACTERS_PER_INCH))
        lines = [line for note in drawing.unique_notes for line in textwrap.wrap(f"note: {note}", width, subsequent_indent="  ")]
        figure.supxlabel("\n".join(lines), fontsize=8, color="0.3")


def set_title(figure: "Figure", default: str, title: str | None) -> None:
    """``title`` if given, else ``default`` ("scheme params: what"), broken after the scheme when long
    and wrapped to the figure's width, so that no title runs past its edges."""
    width = max(40, min(TITLE_WIDTH, int(figure.figure.get_figwidth() * TITLE_CHARACTERS_PER_INCH)))
    if title is None and len(default) > width and ": " in default:
        import textwrap

        head, tail = default.split(": ", 1)
        default = "\n".join([*textwrap.wrap(head + ":", width), *textwrap.wrap(tail, width)])
    figure.suptitle(title if title is not None else default, fontsize=11)


def save_figure(figure: "Figure", stream: BinaryIO, fmt: str) -> None:
    """Write ``figure`` to ``stream`` as ``png``, ``svg`` or ``pdf``, without timestamps."""
    import matplotlib

    metadata: dict[str, Any] = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[fmt]
    # np.errstate: a log axis over values near float64's end (a wavelength of 1e300) overflows in matplotlib's
    # own margins (exp(1.05·ln v)), which NumPy would print as a warning; the figure is the same
    with matplotlib.rc_context({"svg.hashsalt": "pecli", "svg.fonttype": "path"}), np.errstate(over="ignore"):
        figure.savefig(stream, format=fmt, metadata=metadata)


# -- describing ---------------------------------------------------------------------------------------
def number_text(value: Any) -> str:
    """A parameter value as a title writes it: ``10000`` for 10000.0, ``true`` for True."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def describe(scheme: Scheme, *, skip: Sequence[str] = ()) -> str:
    """``"rope dim=128 base=10000 layout=half"``: the scheme and its parameters, for titles and legends.

    The first three parameters are always shown; the others only where they differ from their default
    (a scaling's ``factor``, say), and rope's ``context`` only under the scalings that read it.
    """
    parts = [scheme.name]
    values = scheme.params()
    given_frequencies = values.get("inv_freq") is not None  # then the base makes none of them
    for index, (name, parameter) in enumerate(scheme.parameters().items()):
        value = values[name]
        if name in skip or value is None or (name == "base" and given_frequencies):
            continue
        if parameter.from_file and isinstance(value, list):  # a list read from a file: too long for a title
            parts.append(f"{name}=given")
            continue
        if isinstance(value, (dict, list)):
            continue
        if (index >= 3 or name in scheme.quiet_defaults) and value == parameter.default:
            continue
        if name == "context" and not scheme.reads_context:
            continue
        parts.append(f"{name}={number_text(value)}")
    return " ".join(parts)


def varied(schemes: Sequence[Scheme]) -> dict[str, list[Any]]:
    """What differs between ``schemes``: ``{"scheme": names}`` if the names differ, and every parameter
    the schemes share whose value differs, with its values in drawing order (each once)."""
    if len(schemes) < 2:
        return {}
    out: dict[str, list[Any]] = {}
    names = [scheme.name for scheme in schemes]
    if len(set(names)) > 1:
        out["scheme"] = list(dict.fromkeys(names))
    values = [scheme.params() for scheme in schemes]
    shared = [name for name in values[0] if all(name in v for v in values[1:])]
    for name in shared:
        column = [v[name] for v in values]
        if any(value != column[0] for value in column[1:]):
            out[name] = [value for index, value in enumerate(column) if value not in column[:index]]
    return out


def describe_all(schemes: Sequence[Scheme]) -> str:
    """The title words of several schemes drawn together: what they share, then what varies.

    ``"rope dim=128 layout=half, base = 100, 10000"`` for variants of one scheme by base;
    ``"sinusoidal, rope"`` for different schemes. One scheme is :func:`describe`'s.
    """
    if len(schemes) < 2:
        return describe(schemes[0])
    changes = varied(schemes)
    if "scheme" in changes:
        return ", ".join(changes["scheme"])
    what = "; ".join(f"{name} = {', '.join(number_text(v) for v in values)}" for name, values in changes.items())
    return f"{describe(schemes[0], skip=tuple(changes))}, {what}" if what else describe(schemes[0])


# -- sampling and axes ---------------------------------------------------------------------------------
def downsample(values: np.ndarray, limit: int) -> tuple[np.ndarray, int]:
    """Every ``step``-th value so that at most ``limit`` remain; returns (values, step)."""
    step = max(1, math.ceil(values.size / limit))
    return values[::step], step


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def stride_note(what: str, shown: int, total: int, step: int) -> str:
    """The note of a regular downsampling: ``"positions: every 3rd of 3000 drawn (1000 shown)"``."""
    return f"{what}: every {_ordinal(step)} of {total} drawn ({shown} shown)"


def grid(count: int) -> tuple[int, int]:
    """(rows, columns) of the most nearly square grid of ``count`` panels."""
    columns = math.ceil(math.sqrt(count))
    return math.ceil(count / columns), columns


def _position_axis(positions: np.ndarray) -> tuple[float, float] | None:
    """(first, last) if positions are evenly spaced (then axes show position ids), else None."""
    if positions.size < 2:
        return float(positions[0]), float(positions[0])
    steps = np.diff(positions)
    if np.all(steps == steps[0]) and steps[0] > 0:
        return float(positions[0]), float(positions[-1])
    return None


def row_extent(rows: np.ndarray, columns: tuple[float, float]) -> tuple[tuple[float, float, float, float], bool]:
    """imshow extent with position ids on the rows when they are evenly spaced; and whether they are."""
    span = _position_axis(rows)
    left, right = columns
    if span is None:
        return (left, right, rows.size - 0.5, -0.5), False
    first, last = span
    half = (last - first) / max(rows.size - 1, 1) / 2 if rows.size > 1 else 0.5
    return (left, right, last + half, first - half), True


def square_extent(positions: np.ndarray) -> tuple[tuple[float, float, float, float], bool]:
    """imshow extent of an (n, n) matrix over positions: position ids when evenly spaced, else rows."""
    span = _position_axis(positions)
    if span is None:
        return (-0.5, positions.size - 0.5, positions.size - 0.5, -0.5), False
    first, last = span
    half = (last - first) / (positions.size - 1) / 2 if positions.size > 1 else 0.5
    return (first - half, last + half, last + half, first - half), True


def diverging(matrix: np.ndarray) -> dict[str, Any]:
    """imshow colour settings: a symmetric red-blue scale when values take both signs, else viridis."""
    finite = matrix[np.isfinite(matrix)]
    if finite.size and finite.min() < 0 < finite.max():
        limit = float(np.abs(finite).max())
        return {"cmap": "RdBu_r", "vmin": -limit, "vmax": limit}
    return {"cmap": "viridis"}
