"""The rotary frequency pairs a checkpoint uses, drawn as a layer × pair heatmap (``plot rope-usage``).

The numbers are :class:`pecli.weights.usage.RopeUsage`'s: per layer and pair i, the norm of the q (and
k) projection rows feeding pair i, averaged over heads — the measurement of Barbero et al. 2024
("Round and round we go! What makes rotary positional encodings useful?").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pecli.render.figures.canvas import Drawing

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from pecli.weights.usage import RopeUsage


def draw_rope_usage(figure: "Figure", usage: "RopeUsage") -> Drawing:
    """Two panels, q and k: rows are layers, columns pairs i (fast θ on the left, slow on the right)."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    axes_q, axes_k = figure.subplots(1, 2, sharey=True)
    layer_of = FuncFormatter(lambda row, _: str(usage.layers[int(row)]) if 0 <= int(row) < len(usage.layers) else "")
    for axes, which in ((axes_q, "q"), (axes_k, "k")):
        matrix = usage.layer_pair(which)
        extent = (-0.5, usage.pairs - 0.5, len(usage.layers) - 0.5, -0.5)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
        axes.yaxis.set_major_formatter(layer_of)
        image = axes.imshow(matrix, aspect="auto", interpolation="nearest", cmap="viridis", extent=extent)
        heads = usage.heads if which == "q" else usage.kv_heads
        axes.set_title(f"{which}: mean over {heads} heads", fontsize="medium")
        axes.set_xlabel("pair i (wavelength grows →)")
        figure.colorbar(image, ax=axes, label=f"norm of the {which} rows feeding pair i")
    axes_q.set_ylabel("layer")
    slow = usage.low_frequency_share("q")
    notes = [f"share of the q norm² in the slower half of the pairs: {100 * float(np.mean(slow)):.1f}% "
             f"(layers {100 * float(slow.min()):.1f}% to {100 * float(slow.max()):.1f}%)"]
    title = f"rope usage: {len(usage.layers)} layers × {usage.pairs} pairs, {usage.layout} layout"
    return Drawing(title, notes)
