"""Schemes whose positions are the cells of a grid (``rope-nd``, ``sinusoidal-nd``): what they share."""

from __future__ import annotations

from functools import cached_property
from typing import ClassVar

import numpy as np

from pecli.errors import ConfigError
from pecli.schemes.base import Capability
from pecli.schemes.positions import grid_cells

#: Most cells a grid may have (as many as the positions of a 1-D sequence may be).
MAX_CELLS = 1 << 26
#: Axis names of grids of 2 and 3 axes, in the order of their coordinates.
GRID_AXES = {2: ("h", "w"), 3: ("t", "h", "w")}


#: Most rows without a position (cls and register tokens) a grid's table may start with.
MAX_PREFIX_TOKENS = 1 << 16
#: How a grid's coordinates are ordered (``numpy.meshgrid``'s ``indexing``): ``ij``, the first axis is the
#: rows (h before w); ``xy``, the first axis is the columns (x before y) — 2-axis grids only.
INDEXINGS = ("ij", "xy")


def check_indexing(indexing: str, grid: tuple[int, ...]) -> None:
    """``xy`` orders the two axes of an image; a grid of 3 axes has no x and y to swap."""
    if indexing == "xy" and len(grid) != 2:
        raise ConfigError("indexing", f"xy puts the columns first on a 2-axis grid [W, H]; the grid has {len(grid)} axes "
                          f"({' x '.join(map(str, grid))}): use ij")


def check_grid(grid: tuple[int, ...]) -> None:
    """A grid has 2 or 3 axes, each of at least one cell, and at most :data:`MAX_CELLS` cells."""
    if len(grid) not in GRID_AXES:
        raise ConfigError("grid", f"must have 2 or 3 axes ([H, W] or [T, H, W]), got {list(grid)}")
    if any(n < 1 for n in grid):
        raise ConfigError("grid", f"every axis needs at least one cell, got {list(grid)}")
    if int(np.prod(grid, dtype=np.float64)) > MAX_CELLS:
        raise ConfigError("grid", f"{' x '.join(map(str, grid))} is more than {MAX_CELLS:,} cells")


class OnGrid:
    """Positions of a scheme with a ``grid`` parameter: the grid's cells, row by row.

    A mixin for frozen scheme dataclasses (before the scheme base in the bases): everything about the
    positions follows from ``grid`` (and ``indexing``) alone, so the number of cells and each axis's
    span are known without building the cells.

    ``grid`` gives the cells per coordinate, in the order of the coordinates. With ``indexing="ij"``
    (the default) the coordinates are (h, w) or (t, h, w) and the rows of the encoding run in row-major
    order, the last coordinate fastest. With ``"xy"`` (2-axis grids) they are (x, y) = (w, h) — ``grid``
    is [W, H] — and the rows still run along the image's rows, x fastest: as ``numpy.meshgrid(x, y)``
    (``indexing="xy"``) and timm's ``grid_indexing="xy"`` lay them out.
    """

    grid: tuple[int, ...]
    has_cells: ClassVar[bool] = True
    on_grid: ClassVar[bool] = True
    real_positions: ClassVar[bool] = True

    @property
    def position_rank(self) -> int:  # type: ignore[override]
        return len(self.grid)

    @property
    def swapped(self) -> bool:
        """Whether the coordinates are (x, y): the first one is the column (``indexing="xy"``)."""
        return getattr(self, "indexing", "ij") == "xy"

    @property
    def axis_names(self) -> tuple[str, ...]:
        names = GRID_AXES[len(self.grid)]
        return names[::-1] if self.swapped else names

    @property
    def prefix_rows(self) -> int:
        """The ``prefix_tokens`` rows (cls, registers) before the cells' rows."""
        return int(getattr(self, "prefix_tokens", 0))

    def image_axes(self) -> tuple[int, int]:
        """The coordinates that index an image of the last two axes: (rows, columns)."""
        k = len(self.grid)
        return (1, 0) if self.swapped else (k - 2, k - 1)

    @property
    def cell_count(self) -> int:
        return int(np.prod(self.grid, dtype=np.int64))

    def axis_spans(self) -> np.ndarray:
        return np.asarray(self.grid, dtype=np.int64)

    @cached_property
    def _cells(self) -> np.ndarray:
        # xy: the rows of the image (y) outermost, x fastest, each cell written (x, y)
        cells = grid_cells(self.grid[::-1])[:, ::-1].copy() if self.swapped else grid_cells(self.grid)
        cells.setflags(write=False)
        return cells

    def cells(self) -> np.ndarray:
        return self._cells

    def cells_text(self) -> str:
        shape = " x ".join(map(str, self.grid))
        return f"the {shape} grid (x, y)" if self.swapped else f"the {shape} grid"

    def axis_frequencies(self) -> tuple[np.ndarray, ...] | None:
        """θ_j of the sinusoids each axis's coordinate turns, one float64 array per axis, in the order of
        :attr:`axis_names`: what extrapolation to a larger grid compares, axis by axis.

        A scheme with frequency pairs gives, for axis a, the ``inv_freq`` of the pairs whose
        :attr:`~pecli.schemes.frequencies.FrequencyPairs.axis` is a (rope-nd: its ladder
        ``base^(−2j/d_a)``); None when the encoding is not built from sinusoids of single coordinates.
        """
        if not self.has(Capability.FREQUENCIES):  # type: ignore[attr-defined]
            return None
        pairs = self.frequency_pairs()  # type: ignore[attr-defined]
        inv_freq = np.asarray(pairs.inv_freq, dtype=np.float64)
        return tuple(inv_freq[pairs.axis == axis] for axis in range(len(self.grid)))
