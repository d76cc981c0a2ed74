"""The figures of ``pecli plot``: a registry of plot kinds and composable drawing functions.

- :mod:`~pecli.render.figures.registry`: :data:`PLOTS`, one :class:`PlotKind` record per kind, and
  :func:`figure`, which builds a kind's Figure from a :class:`PlotRequest` and a :class:`Style`;
- :mod:`~pecli.render.figures.canvas`: the style, blank figures, titles, notes, saving, sampling;
- :mod:`~pecli.render.figures.matrices`, :mod:`~pecli.render.figures.frequencies`,
  :mod:`~pecli.render.figures.scores`: the drawing functions, each drawing on an Axes (or a Figure)
  it is given and returning a :class:`Drawing` (suggested title and notes).

Every drawing calls the core for its numbers (the schemes, :mod:`pecli.analysis`); matplotlib is
imported only when something is drawn or saved.
"""

import logging


class _ConfigFolderNotes(logging.Filter):
    """matplotlib's notes, at its import, that the folder it keeps its settings and font cache in (under
    ``HOME``) cannot be written and that it made a temporary one: with a read-only or missing ``HOME`` (a
    container, a service account) they were two lines of stderr around pecli's one-line messages. The
    temporary folder is made as before."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = str(record.msg)
        return not (text.startswith(("mkdir -p failed for path", "Matplotlib created a temporary"))
                    or text.endswith("is not a writable directory"))


logging.getLogger("matplotlib").addFilter(_ConfigFolderNotes())  # before matplotlib is imported, below

from pecli.render.figures.canvas import (  # noqa: E402
    DEFAULT_DPI, FIGURE_SUFFIXES, Drawing, Style, describe, describe_all, downsample, finish, new_figure, parse_figure_size,
    save_figure, varied,
)
from pecli.render.figures.matrices import (
    cosine_similarity, draw_bias_heatmap, draw_encoding_heatmap, draw_error_map, draw_similarity,
)
from pecli.render.figures.registry import (
    PLOTS, PlotKind, PlotRequest, applies_to, check_applicable, draw, draw_panels, figure, lookup, plot_options,
    supported_schemes,
)
from pecli.render.figures.scores import draw_bias, draw_dot_distance, draw_precision

__all__ = [
    "DEFAULT_DPI", "FIGURE_SUFFIXES", "PLOTS", "Drawing", "PlotKind", "PlotRequest", "Style", "applies_to",
    "check_applicable", "cosine_similarity", "describe", "describe_all", "downsample", "draw", "draw_bias", "draw_panels",
    "draw_bias_heatmap", "draw_error_map",
    "draw_dot_distance", "draw_encoding_heatmap", "draw_precision",
    "draw_similarity", "figure", "finish", "lookup", "new_figure", "parse_figure_size",
    "plot_options", "save_figure", "supported_schemes", "varied",
]

