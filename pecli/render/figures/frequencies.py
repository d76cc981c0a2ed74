"""Figures of the frequency pairs (schemes with :attr:`~pecli.schemes.Capability.FREQUENCIES`).

Everything here reads :meth:`~pecli.schemes.Scheme.frequency_pairs`: the circle of one pair, the
wavelength of every pair, and the angles each pair reaches in training and at test length.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from pecli.numbers import integer, number
from pecli.wavelengths.spectrum import wavelengths_of
from pecli.errors import ConfigError, PecliError
from pecli.render.figures.canvas import (
    MAX_CURVE_POINTS, MAX_LABELLED_POINTS, Drawing, describe, describe_all, downsample, grid, number_text, stride_note,
)
from pecli.schemes import Scheme, as_positions
from pecli.schemes.frequencies import FrequencyPairs

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def configured_base(pairs: FrequencyPairs) -> float:
    """The base the user configured: a scaling (NTK, dynamic) may have changed the base in effect."""
    scaled = pairs.scaled
    if scaled is not None and scaled.original_base is not None:
        return float(scaled.original_base)
    return float(pairs.base)


# -- circle --------------------------------------------------------------------------------------------
def draw_circles(figure: "Figure", schemes: Sequence[Scheme], positions: Any, *, pair: int = 1) -> Drawing:
    """Positions on the (sin, cos) plane of frequency pair ``pair``, one panel per scheme (per base).

    Point p of a panel is ``(sin(p ω_pair), cos(p ω_pair))`` with the scheme's ``ω_pair`` (for rope,
    ``θ_pair``; its rotation of (1, 0) is (cos, sin), the same point with the axes swapped). [Conditions] draws
    pair 0, where ``ω_0 = base^0 = 1`` for every base; a higher pair shows the base.
    """
    positions = as_positions(positions)
    if not schemes:
        raise PecliError("circle: no scheme to draw")
    rows, columns = grid(len(schemes))
    panels = figure.subplots(rows, columns, squeeze=False)
    shown, step = downsample(positions, MAX_CURVE_POINTS)
    points = None
    for index, axes in enumerate(panels.flat):
        if index >= len(schemes):
            axes.set_visible(False)
            continue
        points = draw_circle(axes, schemes[index], shown, pair=pair)
    if shown.size > MAX_LABELLED_POINTS:
        figure.colorbar(points, ax=panels.ravel().tolist(), label="position (tokens)", shrink=0.8)
    first = schemes[0]
    pairs = first.frequency_pairs()
    dim = pairs.dim
    ladder = "given" if np.isnan(pairs.base) else f"base$^{{-{2 * pair}/{dim}}}$"
    title = (
        f"{describe_all(schemes)}: positions {shown[0]}–{shown[-1]} on the circle of pair {pair} "
        f"of {pairs.count} ($\\omega_{{{pair}}}$ = {ladder})"
    )
    notes = [stride_note("positions", shown.size, positions.size, step)] if step > 1 else []
    return Drawing(title, notes, schemes=list(schemes))


def draw_circle(axes: "Axes", scheme: Scheme, positions: np.ndarray, *, pair: int):
    """One panel of :func:`draw_circles`: ``positions`` on the circle of ``pair``; returns the scatter."""
    pairs = scheme.frequency_pairs()
    if not 0 <= pair < pairs.count:
        raise ConfigError("pair", f"must be between 0 and {pairs.count - 1} for {describe(scheme)} ({pairs.count} pairs), got {pair}")
    omega = pairs.inv_freq[pair]
    angles = positions.astype(np.float64) * omega
    x, y = np.sin(angles), np.cos(angles)
    circle = np.linspace(0, 2 * np.pi, 361)
    axes.plot(np.sin(circle), np.cos(circle), color="0.85", linewidth=1, zorder=0)
    points = axes.scatter(x, y, c=positions, cmap="viridis", s=60 if positions.size <= 64 else 12, zorder=2)
    if positions.size <= MAX_LABELLED_POINTS:
        for p, px, py in zip(positions, x, y):
            axes.annotate(str(p), (px, py), xytext=(4, 4), textcoords="offset points", fontsize=8)
    base = configured_base(pairs)
    where = "given frequencies" if np.isnan(base) else f"base={number_text(base)}"
    axes.set_title(f"{where}: $\\omega_{{{pair}}}$ = {number(omega)} rad/token", fontsize=10)
    axes.set_xlabel(f"$\\sin(p\\,\\omega_{{{pair}}})$")
    axes.set_ylabel(f"$\\cos(p\\,\\omega_{{{pair}}})$")
    axes.set_xlim(-1.3, 1.3)
    axes.set_ylim(-1.3, 1.3)
    axes.set_aspect("equal")
    return points


# -- wavelengths ---------------------------------------------------------------------------------------
def draw_wavelengths(
    axes: "Axes",
    scheme: Scheme,
    *,
    context: int | None = None,
    train_length: int | None = None,
    model_length: int | None = None,
) -> Drawing:
    """Wavelength ``2π/ω_i`` of every frequency pair on a log scale, with the lengths as lines.

    Under a context-extension scaling (original frequencies that differ from those in use), the
    original wavelengths are drawn too; ``model_length`` (``max_position_embeddings``) adds a line for
    the model's own context.
    """
    pairs = scheme.frequency_pairs()
    inv_freq = np.asarray(pairs.inv_freq, dtype=np.float64)
    original = np.asarray(pairs.original_inv_freq, dtype=np.float64)
    unscaled = original.shape == inv_freq.shape and np.array_equal(original, inv_freq)
    index = np.arange(inv_freq.size)
    rotating = inv_freq > 0
    wavelengths = wavelengths_of(inv_freq)
    if not unscaled:
        axes.plot(index, wavelengths_of(original), marker=".", linestyle="--", color="0.55", label="original (unscaled)")
        axes.plot(index[rotating], wavelengths[rotating], marker=".", color="C0", label="in use (scaled)")
    else:
        axes.plot(index[rotating], wavelengths[rotating], marker=".", color="C0", label=r"wavelength $2\pi/\omega_i$")
    axes.set_yscale("log")
    axes.set_xlabel("frequency pair i")
    axes.set_ylabel("wavelength (tokens)")
    if context is not None:
        axes.axhline(context, color="C3", linewidth=1, label=f"context length {integer(context)}")
        longer = rotating & (wavelengths > context)
        if np.any(longer):
            axes.plot(index[longer], wavelengths[longer], linestyle="none", marker="o", markersize=6,
                      markerfacecolor="none", color="C3",
                      label=f"{int(longer.sum())} pair(s) never complete a turn within {integer(context)}")
    if train_length is not None:
        axes.axhline(train_length, color="C2", linewidth=1, linestyle=":", label=f"training length {integer(train_length)}")
    if model_length is not None and model_length != context:
        axes.axhline(model_length, color="C4", linewidth=1, linestyle="-.", label=f"max_position_embeddings {integer(model_length)}")
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize=8, loc="upper left")
    shown = wavelengths[rotating]
    span = f"wavelengths {number(shown.min())} … {number(shown.max())} tokens" if shown.size else "no rotating pair"
    notes = []
    if not np.all(rotating):
        idle = index[~rotating]
        notes.append(f"pairs {idle[0]}–{idle[-1]} do not rotate (frequency 0, infinite wavelength) and are not drawn")
    return Drawing(f"{describe(scheme)}: {span}", notes)


# -- extrapolation ----------------------------------------------------------------------------------------
def bars(axes: "Axes", x: np.ndarray, heights: np.ndarray, *, width: float, colors: Any) -> None:
    """Vertical bars from 0 to ``heights``, centred on ``x``, as one artist.

    ``Axes.bar`` makes a patch per bar, and each one is laid out, bounded and drawn on its own: for
    the 256 pairs of d = 512 that was most of a second, against a few milliseconds here.
    """
    from matplotlib.collections import PolyCollection

    x, heights = np.asarray(x, dtype=float), np.asarray(heights, dtype=float)
    left, right, base = x - width / 2, x + width / 2, np.zeros_like(heights)
    corners = np.stack([np.c_[left, base], np.c_[left, heights], np.c_[right, heights], np.c_[right, base]], axis=1)
    axes.add_collection(PolyCollection(corners, facecolors=colors, edgecolors="none", linewidths=0))
    axes.autoscale_view()


def draw_extrapolation(
    axes: "Axes", scheme: Scheme, *, train_length: int, length: int, train_scheme: Scheme | None = None
) -> Drawing:
    """Per frequency pair, the largest angle seen in training against the largest reached at test length.

    The numbers are :func:`pecli.analysis.extrapolation.angle_ranges`. Pairs that training never
    took through a full turn and that the test positions take further (``unseen``) are drawn in red:
    their angles at test time are out of distribution. ``train_scheme`` is the scheme training used
    when it differs (before a context-extension scaling).
    """
    from matplotlib.patches import Patch

    from pecli.analysis.extrapolation import angle_ranges

    ranges = angle_ranges(scheme, train_length, length, train_scheme=train_scheme)
    index = np.arange(ranges.inv_freq.size)
    unseen = np.asarray(ranges.unseen, dtype=bool)
    test_colors = np.where(unseen, "C3", "0.78")
    bars(axes, index, ranges.test_max_angle, width=0.85, colors=test_colors)
    bars(axes, index, ranges.train_max_angle, width=0.5, colors="C0")
    axes.axhline(2 * np.pi, color="0.2", linestyle="--", linewidth=1)
    axes.set_yscale("log")
    axes.set_xlabel("frequency pair i")
    axes.set_ylabel(r"largest angle $p\,\theta_i$ (radians)")
    turn = axes.lines[-1]
    turn.set_label("one full turn, 2π")
    handles = [
        Patch(color="C0", label=f"seen in training: $(T-1)\\,\\theta_i$, T = {integer(train_length)}"),
        Patch(color="0.78", label=f"reached at test length L = {integer(length)}, within the training range"),
        Patch(color="C3", label=f"reached at L, never seen in training ({int(unseen.sum())} pair(s))"),
        turn,
    ]
    axes.legend(handles=handles, fontsize=8, loc="upper right")
    axes.grid(True, axis="y", alpha=0.3)
    first = ranges.first_unseen_pair
    if first is not None:
        axes.axvline(first - 0.5, color="C3", linestyle=":", linewidth=1)
    verdict = f"pairs from i = {first} are out of distribution" if first is not None else "no pair leaves the training range"
    notes = []
    idle = index[np.asarray(ranges.inv_freq) == 0]
    if idle.size:
        notes.append(f"pairs {idle[0]}–{idle[-1]} do not rotate (frequency 0) and have no bar")
    if train_scheme is not None:
        notes.append(f"training angles from the unscaled scheme: {describe(train_scheme)}")
    return Drawing(f"{describe(scheme)}: trained on {integer(train_length)}, tested on {integer(length)}; {verdict}", notes)
