"""Matrices drawn as images: the (L, d) encoding, the (L, L) bias of each head, the cosine similarity.

The numbers come from the schemes themselves (``encode``, ``bias``); positions beyond the limits of
:mod:`pecli.render.figures.canvas` are drawn with a stride and a note.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from pecli.errors import ConfigError
from pecli.render.figures.canvas import (
    MAX_GRID_HEADS, MAX_GRID_SIDE, MAX_HEATMAP_COLUMNS, MAX_HEATMAP_ROWS, MAX_MATRIX_SIDE, Drawing, describe,
    diverging, downsample, grid, row_extent, square_extent, stride_note,
)
from pecli.schemes import Scheme, as_positions
from pecli.schemes.base import Capability

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


# -- the (L, d) encoding --------------------------------------------------------------------------------
def draw_encoding_heatmap(axes: "Axes", scheme: Scheme, positions: Any, *, dtype: str | None = None) -> Drawing:
    """The (L, d) encoding matrix of a scheme with per-position vectors, one row per position.

    Rows beyond :data:`MAX_HEATMAP_ROWS` are block means (sampling every k-th row would alias the
    fast components); columns beyond :data:`MAX_HEATMAP_COLUMNS` are drawn with a stride. ``dtype``
    casts the encoding first (what a model in that dtype sees).
    """
    positions = scheme.positions_of(positions)  # real-valued where the scheme takes them
    shown, step = downsample(positions, MAX_HEATMAP_ROWS)
    matrix = _block_means(scheme, positions, step, dtype)
    columns, column_step = downsample(np.arange(matrix.shape[1]), MAX_HEATMAP_COLUMNS)
    matrix = matrix[:, columns]
    extent, by_position = row_extent(shown, (-0.5 * column_step, columns[-1] + 0.5 * column_step))
    image = axes.imshow(matrix, aspect="auto", interpolation="antialiased", extent=extent, **diverging(matrix))
    axes.set_xlabel("component (dimension index)")
    axes.set_ylabel("position (tokens)" if by_position else "row of --positions")
    rotary = scheme.has(Capability.ROTARY)
    unit = "value (rotated reference vector: cos pθ, sin pθ)" if rotary else "value"
    axes.figure.colorbar(image, ax=axes, label=unit)
    what = "rotary encoding" if rotary else "encoding"
    notes = []
    if step > 1:
        notes.append(f"positions: each row is the mean of {step} consecutive positions of {positions.size} "
                     "(sampling every row instead would alias the fast components)")
    if column_step > 1:
        notes.append(stride_note("components", columns.size, scheme.width, column_step))
    return Drawing(f"{describe(scheme)}: {what}, {positions.size} positions{_dtype_text(dtype)}", notes)


def _dtype_text(dtype: str | None) -> str:
    return f", {dtype}" if dtype and dtype != "float64" else ""


def _cast(values: np.ndarray, dtype: str | None) -> np.ndarray:
    """``values`` rounded to ``dtype`` and back to float64 (unchanged for None and float64)."""
    if dtype is None or dtype == "float64":
        return values
    from pecli.dtypes import cast

    return cast(values, dtype).astype(np.float64)


def _block_means(scheme: Scheme, positions: np.ndarray, step: int, dtype: str | None) -> np.ndarray:
    """The encoding at ``positions`` (cast to ``dtype``), averaged over blocks of ``step`` rows."""
    rows = []
    chunk = step * max(1, (1 << 16) // step)  # whole blocks, about 65k positions at a time
    for start in range(0, positions.size, chunk):
        part = _cast(scheme.encode(positions[start : start + chunk]), dtype)
        blocks = -(-part.shape[0] // step)
        padded = np.full((blocks * step, part.shape[1]), np.nan)
        padded[: part.shape[0]] = part
        rows.append(np.nanmean(padded.reshape(blocks, step, -1), axis=1))
    return np.concatenate(rows)


# -- the (L, L) bias of each head -------------------------------------------------------------------------
def check_head(scheme: Scheme, head: int | None) -> None:
    """Raise :class:`ConfigError` unless ``head`` is None or one of the scheme's channels."""
    channels = scheme.channels
    if head is not None and not 0 <= head < channels:
        raise ConfigError("head", f"must be between 0 and {channels - 1} ({scheme.name} has {channels} head(s)), got {head}")


def channel_title(scheme: Scheme, channel: int, precision: int) -> str:
    """``"head 2"``, with the quantity that sets the head apart where the scheme has one (``"head 2, m=0.125"``)."""
    quantity = scheme.channel_quantity(channel)
    if quantity is None:
        return f"head {channel}"
    symbol, value = quantity
    return f"head {channel}, {symbol}={value:.{precision}g}"


def bias_quantity(scheme: Scheme) -> str:
    """What a bias scheme's values are, in a title: "bias", or what the scheme returns instead (t5: the
    bucket index, each bucket's bias being learned)."""
    return "bias" if scheme.score_caveat is None else scheme.bias_label.split(" (", 1)[0]


def draw_bias_heatmap(figure: "Figure", scheme: Scheme, positions: Any, *, head: int | None = None) -> Drawing:
    """The (L, L) bias ``bias[i, j]`` of one head, or a grid of every head (up to :data:`MAX_GRID_HEADS`).

    Each head of the grid has its own colour scale: ALiBi's slopes span 2^-1 … 2^-8, so a shared
    scale would leave the gentle heads one flat colour.
    """
    positions = as_positions(positions)
    check_head(scheme, head)
    channels = scheme.channels
    heads = [head] if head is not None else list(range(min(channels, MAX_GRID_HEADS)))
    shown, step = downsample(positions, MAX_MATRIX_SIDE if len(heads) == 1 else MAX_GRID_SIDE)
    bias = scheme.bias(shown[None, :] - shown[:, None])
    several = len(heads) > 1
    by_position = square_extent(shown)[1]
    unit = "" if several else " (tokens)"
    rows, columns = grid(len(heads))
    panels = figure.subplots(rows, columns, squeeze=False)
    image = None
    for index, axes in enumerate(panels.flat):
        if index >= len(heads):
            axes.set_visible(False)
            continue
        image = _bias_panel(axes, scheme, bias[heads[index]], shown, heads[index], several=several)
        if not several or index + columns >= len(heads):  # no panel below it
            axes.set_xlabel(f"key position j{unit}" if by_position else "key row of --positions")
        if not several or index % columns == 0:  # first of its row
            axes.set_ylabel(f"query position i{unit}" if by_position else "query row of --positions")
    notes = []
    if not several:
        figure.colorbar(image, ax=panels.ravel().tolist(), label=scheme.bias_label)
    else:
        notes.append(f"colour: {scheme.bias_label}, one scale per head")
    which = f"head {head}" if head is not None else (f"{len(heads)} heads" if several else "one head")
    if step > 1:
        notes.append(stride_note("positions", shown.size, positions.size, step))
    if len(heads) < channels and head is None:
        notes.append(f"first {len(heads)} of {channels} heads drawn; choose one with --head")
    return Drawing(f"{describe(scheme)}: (L, L) {bias_quantity(scheme)}, {which}, {positions.size} positions (tokens)", notes)


def _bias_panel(axes: "Axes", scheme: Scheme, bias: np.ndarray, shown: np.ndarray, head: int, *, several: bool):
    """One head's (L, L) bias on ``axes``, on its own colour scale; returns the image."""
    extent, _ = square_extent(shown)
    limits = diverging(bias)
    limits.setdefault("vmin", float(np.min(bias)))
    limits.setdefault("vmax", float(np.max(bias)))
    image = axes.imshow(bias, aspect="auto", interpolation="nearest", extent=extent, **limits)
    if several:
        axes.figure.colorbar(image, ax=axes, fraction=0.046, pad=0.02).ax.tick_params(labelsize=7)
        axes.set_title(channel_title(scheme, head, 3), fontsize=9)
    return image


# -- cosine similarity ------------------------------------------------------------------------------------
def cosine_similarity(vectors: np.ndarray) -> np.ndarray:
    """The (n, n) cosine similarity of the rows of ``vectors``; NaN where a row is all zeros."""
    norms = np.linalg.norm(vectors, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        unit = vectors / norms[:, None]
    unit[norms == 0] = np.nan
    return np.clip(unit @ unit.T, -1.0, 1.0)


def draw_similarity(axes: "Axes", scheme: Scheme, positions: Any, *, dtype: str | None = None) -> Drawing:
    """The (L, L) cosine similarity ``E_p · E_q / (|E_p| |E_q|)`` between the encodings of two positions."""
    positions = scheme.positions_of(positions)
    shown, step = downsample(positions, MAX_MATRIX_SIDE)
    vectors = _cast(scheme.encode(shown), dtype)
    similarity = cosine_similarity(vectors)
    extent, by_position = square_extent(shown)
    image = axes.imshow(similarity, interpolation="nearest", extent=extent, cmap="RdBu_r", vmin=-1, vmax=1)
    axes.set_xlabel("position q (tokens)" if by_position else "row of --positions")
    axes.set_ylabel("position p (tokens)" if by_position else "row of --positions")
    axes.figure.colorbar(image, ax=axes, label="cosine similarity of $E_p$ and $E_q$")
    notes = []
    if step > 1:
        notes.append(stride_note("positions", shown.size, positions.size, step))
    zero = int(np.count_nonzero(np.linalg.norm(vectors, axis=1) == 0))
    if zero:
        notes.append(f"{zero} position(s) encode to the zero vector: similarity undefined (blank)")
    return Drawing(f"{describe(scheme)}: cosine similarity, {positions.size} positions{_dtype_text(dtype)}", notes)


# -- similarity on a grid ---------------------------------------------------------------------------------
def draw_similarity_grid(axes: "Axes", scheme: Scheme, cell: Any = None, *, dtype: str | None = None) -> Drawing:
    """The cosine similarity of one cell's encoding to every cell of the grid, as an (H, W) image.

    The picture of ViT papers (Dosovitskiy et al. 2021, figure 7): with a good 2-D encoding the
    similarity falls off with the offset from the chosen cell along both axes. On a [T, H, W] grid the
    image is the H × W slice at the cell's t. ``cell`` defaults to the centre. The colours span the
    values drawn (not [−1, 1]), so that encodings whose similarities stay high still show their shape.
    """
    grid_shape = tuple(int(n) for n in scheme.axis_spans())  # a grid's spans are its shape
    cell = tuple(n // 2 for n in grid_shape) if cell is None else tuple(int(c) for c in cell)
    if len(cell) != len(grid_shape) or any(not 0 <= c < n for c, n in zip(cell, grid_shape)):
        raise ConfigError("cell", f"must be a cell of the {' x '.join(map(str, grid_shape))} grid, got {list(cell)}")
    cells = scheme.cells()
    plane = cells if len(grid_shape) == 2 else cells[cells[:, 0] == cell[0]]
    target = _cast(scheme.encode(np.asarray([cell])), dtype)[0]
    similarity = np.empty(len(plane))
    step = max(1, (1 << 22) // max(int(scheme.width), 1))  # cells encoded at once: 32 MiB of float64
    for start in range(0, len(plane), step):
        vectors = _cast(scheme.encode(plane[start : start + step]), dtype)
        norms = np.linalg.norm(vectors, axis=1) * np.linalg.norm(target)
        with np.errstate(invalid="ignore", divide="ignore"):
            similarity[start : start + step] = np.where(norms > 0, vectors @ target / np.where(norms > 0, norms, 1.0), np.nan)
    # the range of the values, as the ViT figure draws it: 2-D sinusoids stay within [0.75, 1]
    low, high = (float(np.nanmin(similarity)), float(np.nanmax(similarity))) if np.isfinite(similarity).any() else (0.0, 1.0)
    rows, columns = scheme.image_axes()  # (h, w), or (y, x) for a grid indexed xy
    image = axes.imshow(similarity.reshape(grid_shape[rows], grid_shape[columns]), interpolation="nearest",
                        cmap="viridis", vmin=low, vmax=max(high, low + 1e-12))
    axes.plot([cell[columns]], [cell[rows]], marker="x", color="black", markersize=8)
    names = scheme.axis_names
    axes.set_xlabel(f"{names[columns]} (cell)")
    axes.set_ylabel(f"{names[rows]} (cell)")
    axes.figure.colorbar(image, ax=axes, label="cosine similarity to the marked cell")
    where = ", ".join(f"{name}={c}" for name, c in zip(names, cell))
    return Drawing(f"{describe(scheme)}: similarity to cell ({where}){_dtype_text(dtype)}", [])


def draw_error_map(axes: "Axes", ratios: np.ndarray, band_starts: np.ndarray, title: str, band: int = 1) -> Drawing:
    """``pecli verify --plot``: each element's error over its tolerance (log10; above 0 is outside it),
    the largest of each band of ``band`` rows of the arrays, by position and component.

    ``band_starts`` is the position id of each band's first row. Evenly spaced ids make the y axis
    the position; ids at uneven steps (a list given to ``--positions``) make it the row of the arrays,
    since a linear axis of positions would put the rows at the wrong ones.
    """
    with np.errstate(divide="ignore"):
        shown = np.log10(np.maximum(ratios, 1e-6))
    steps = np.diff(band_starts)
    if steps.size == 0 or (steps == steps[0]).all():
        first, step = int(band_starts[0]), (int(steps[0]) if steps.size else band)
        top, bottom, label = first, first + step * len(band_starts), "position (tokens)"
    else:
        top, bottom, label = 0, band * len(band_starts), "row of the arrays (positions at uneven steps)"
    image = axes.imshow(shown, aspect="auto", interpolation="nearest", cmap="RdBu_r", vmin=-6, vmax=6,
                        extent=(-0.5, ratios.shape[1] - 0.5, bottom, top))
    axes.set_xlabel("component")
    axes.set_ylabel(label)
    axes.figure.colorbar(image, ax=axes, label="log10(error / tolerance): above 0 differs")
    bands = f"each row the largest of {band} rows of the arrays" if band > 1 else ""
    return Drawing(title, [bands] if bands else [])
