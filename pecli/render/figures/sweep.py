"""The heatmap of a sweep over two grid axes (``pecli sweep --plot``): one cell per point.

The first axis runs along x, the second along y; a cell shows the chosen column of its point's row:
a number on a colour scale, or a verdict (pass, warn, fail, n/a, error) in its own colour. Cells
without a value (an error row under a numeric column) are left blank and counted in a note.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from pecli.errors import ConfigError
from pecli.render.figures.canvas import DEFAULT_SIZE, Drawing, finish, new_figure

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: The verdict words of a row, in the order of the legend, with their colours.
VERDICT_COLOURS = {"pass": "#3b8a3e", "warn": "#e3a21a", "fail": "#c62828", "n/a": "#b0b0b0", "error": "#424242"}
#: Most cells whose value is written in the cell.
MAX_LABELLED_CELLS = 400


def metric_matrix(rows: Sequence[Mapping[str, Any]], shape: tuple[int, int], metric: str) -> tuple[np.ndarray, list[str] | None]:
    """The (y, x) matrix of column ``metric`` over rows in grid order (x the first axis, varying slowest;
    ``shape`` the points along x and along y), and, for verdicts, the categories its values index (else
    None: the values themselves, NaN for none)."""
    across, up = shape  # points along x (the first axis) and along y
    values = [row.get(metric) for row in rows]
    present = [value for value in values if value not in (None, "")]
    if present and all(isinstance(value, str) and value in VERDICT_COLOURS for value in present):
        categories = list(VERDICT_COLOURS)
        numbers = [np.nan if value in (None, "") else float(categories.index(value)) for value in values]
    else:
        categories = None
        numbers = [_number(value, metric) for value in values]
    return np.asarray(numbers, dtype=np.float64).reshape(across, up).T, categories


def _number(value: Any, metric: str) -> float:
    if value is None or value == "":
        return np.nan
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("true", "false"):  # a CSV cell of a flag
            return float(lowered == "true")
        try:
            return float(value)
        except ValueError:
            raise ConfigError("metric", f"{metric} holds text ({value[:40]!r}), not numbers: choose a column of numbers, "
                              "or verdict") from None
    return float(value)


def draw_sweep(axes: "Axes", matrix: np.ndarray, categories: list[str] | None, x: tuple[str, list[str]],
               y: tuple[str, list[str]], metric: str) -> Drawing:
    """Draw the (y, x) ``matrix`` of :func:`metric_matrix`, its axes labelled with the grid's values."""
    from matplotlib.colors import BoundaryNorm, ListedColormap

    if categories is not None:
        colours = ListedColormap([VERDICT_COLOURS[name] for name in categories])
        image = axes.imshow(matrix, cmap=colours, norm=BoundaryNorm(np.arange(len(categories) + 1) - 0.5, len(categories)),
                            aspect="auto", interpolation="nearest", origin="lower")
        from matplotlib.patches import Patch

        shown = sorted({int(v) for v in matrix[np.isfinite(matrix)]})
        axes.legend(handles=[Patch(color=VERDICT_COLOURS[categories[i]], label=categories[i]) for i in shown],
                    loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, frameon=False)
    else:
        if not np.isfinite(matrix).any():
            raise ConfigError("metric", f"{metric} has no number at any point to draw")
        image = axes.imshow(np.ma.masked_invalid(matrix), cmap="viridis", aspect="auto", interpolation="nearest", origin="lower")
        axes.figure.colorbar(image, ax=axes, label=metric)
    for at, (name, labels), set_ticks in ((0, x, axes.set_xticks), (1, y, axes.set_yticks)):
        set_ticks(range(len(labels)), labels=labels)
        (axes.set_xlabel if at == 0 else axes.set_ylabel)(name)
    if matrix.size <= MAX_LABELLED_CELLS:
        _label_cells(axes, image, matrix, categories)
    blank = int(np.count_nonzero(~np.isfinite(matrix)))
    notes = [f"{blank} of {matrix.size} points have no value of {metric} (an error, or no such figure): left blank"] if blank else []
    return Drawing(f"{metric} by {x[0]} and {y[0]}", notes)


def _label_cells(axes: "Axes", image: Any, matrix: np.ndarray, categories: list[str] | None) -> None:
    """Write each cell's value in it, dark or light against its colour."""
    from pecli.render.tables import number

    for (row, column), value in np.ndenumerate(matrix):
        if not np.isfinite(value):
            continue
        red, green, blue, _ = image.cmap(image.norm(value))
        text = categories[int(value)].upper() if categories is not None else number(float(value), 3)
        colour = "black" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.5 else "white"
        axes.text(column, row, text, ha="center", va="center", fontsize=8, color=colour)


def sweep_figure(rows: Sequence[Mapping[str, Any]], x: tuple[str, list[str]], y: tuple[str, list[str]],
                 metric: str, check: str) -> "Figure":
    """The heatmap Figure of a two-axis sweep: ``rows`` in grid order, ``x`` and ``y`` the axes' names
    and their values as labels, ``metric`` the column drawn."""
    matrix, categories = metric_matrix(rows, (len(x[1]), len(y[1])), metric)
    figure = new_figure(DEFAULT_SIZE)
    drawing = draw_sweep(figure.add_subplot(), matrix, categories, x, y, metric)
    finish(figure, Drawing(f"pecli sweep {check}: {drawing.title}", drawing.notes))
    return figure


__all__ = ["MAX_LABELLED_CELLS", "VERDICT_COLOURS", "draw_sweep", "metric_matrix", "sweep_figure"]
