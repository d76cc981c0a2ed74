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


def check_grid(grid: tuple[int, ...]) -> None:
    """A grid has 2 or 3 axes, each of at least one cell, and at most :data:`MAX_CELLS` cells."""
    if len(grid) not in GRID_AXES:
        raise ConfigError("grid", f"must have 2 or 3 axes ([H, W] or [T, H, W]), got {list(grid)}")
    if any(n < 1 for n in grid):
        raise ConfigError("grid", f"every axis needs at least one cell, got {list(grid)}")
    if int(np.prod(grid, dtype=np.float64)) > MAX_CELLS:
        raise ConfigError("grid", f"{' x '.join(map(str, grid))} is more than {MAX_CELLS:,} cells")


class OnGrid:
    """Positions of a scheme with a ``grid`` parameter: the grid's cells in row-major order.

    A mixin for frozen scheme dataclasses (before the scheme base in the bases): everything about the
    positions follows from ``grid`` alone, so the number of cells and each axis's span are known
    without building the cells.
    """

    grid: tuple[int, ...]
    has_cells: ClassVar[bool] = True
    on_grid: ClassVar[bool] = True

    @property
    def position_rank(self) -> int:  # type: ignore[override]
        return len(self.grid)

    @property
    def axis_names(self) -> tuple[str, ...]:
        return GRID_AXES[len(self.grid)]

    @property
    def cell_count(self) -> int:
        return int(np.prod(self.grid, dtype=np.int64))

    def axis_spans(self) -> np.ndarray:
        return np.asarray(self.grid, dtype=np.int64)

    @cached_property
    def _cells(self) -> np.ndarray:
        cells = grid_cells(self.grid)
        cells.setflags(write=False)
        return cells

    def cells(self) -> np.ndarray:
        return self._cells

    def cells_text(self) -> str:
        return "the " + " x ".join(map(str, self.grid)) + " grid"

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
