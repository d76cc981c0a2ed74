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

from pecli.render.figures.canvas import (
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
    "draw_bias_heatmap", "draw_circle", "draw_error_map",
    "draw_circles", "draw_dot_distance", "draw_encoding_heatmap", "draw_extrapolation", "draw_precision",
    "draw_similarity", "draw_wavelengths", "figure", "finish", "lookup", "new_figure", "parse_figure_size",
    "plot_options", "save_figure", "supported_schemes", "varied",
]


def __getattr__(name: str):
    """The drawings of frequencies (:mod:`~pecli.render.figures.frequencies`, and :mod:`pecli.wavelengths`
    under them), imported on first use: ``pecli plot --help`` draws nothing."""
    if name in ("draw_circle", "draw_circles", "draw_extrapolation", "draw_wavelengths"):
        from pecli.render.figures import frequencies

        return getattr(frequencies, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
