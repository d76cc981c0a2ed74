"""Pairs of an n-D scheme's cells that differ by a given offset vector: what the grid analyses step along.

A grid's cells are a full box, so the cell ``c + Δ`` is found by index arithmetic; a multimodal
sequence's tokens are any set of (t, h, w) ids, so they are looked up in a sorted index. Both give, for
an offset Δ, the row pairs ``(i, j)`` with ``cells[j] = cells[i] + Δ``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CellIndex:
    """The row of each cell, found from its coordinates.

    Attributes
    ----------
    cells:
        The (N, k) integer cells, in the order of the encoding's rows.
    values:
        Per axis, the sorted distinct coordinates the cells take.
    keys:
        Each cell's code (its coordinates' ranks in ``values``, mixed-radix), sorted; ``order`` the rows
        in that order. None when the codes would overflow int64 (then a structured sort is used).
    """

    cells: np.ndarray
    values: tuple[np.ndarray, ...]
    keys: np.ndarray
    order: np.ndarray | None

    @classmethod
    def of(cls, cells: np.ndarray) -> CellIndex:
        cells = np.asarray(cells, dtype=np.int64)
        values = tuple(np.unique(cells[:, axis]) for axis in range(cells.shape[1]))
        codes = _codes(cells, values)
        if codes is None:
            structured = _structured(cells)
            order = np.argsort(structured, kind="stable")
            return cls(cells, values, structured[order], order)
        if codes.size < 2 or bool(np.all(codes[1:] > codes[:-1])):  # a grid in row-major order
            return cls(cells, values, codes, None)
        order = np.argsort(codes, kind="stable")
        return cls(cells, values, codes[order], order)

    def find(self, targets: np.ndarray) -> np.ndarray:
        """The row of each target cell (shape (M, k)), or −1 where no cell has those coordinates."""
        targets = np.asarray(targets, dtype=np.int64)
        if self.keys.dtype.names is not None:
            wanted = _structured(targets)
            present = np.ones(len(targets), dtype=bool)
        else:
            present = np.ones(len(targets), dtype=bool)
            for axis, values in enumerate(self.values):
                at = np.searchsorted(values, targets[:, axis])
                present &= (at < values.size) & (values[np.minimum(at, values.size - 1)] == targets[:, axis])
            wanted = _codes(np.where(present[:, None], targets, self.cells[:1]), self.values)
        at = np.minimum(np.searchsorted(self.keys, wanted), self.keys.size - 1)
        found = present & (self.keys[at] == wanted)
        rows = at if self.order is None else self.order[at]
        return np.where(found, rows, -1)

    def pairs(self, offset: np.ndarray | tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Rows ``(i, j)`` with ``cells[j] = cells[i] + offset``, in the order of i."""
        j = self.find(self.cells + np.asarray(offset, dtype=np.int64))
        i = np.flatnonzero(j >= 0)
        return i, j[i]


def _codes(cells: np.ndarray, values: tuple[np.ndarray, ...]) -> np.ndarray | None:
    """Mixed-radix codes of the coordinates' ranks (row-major), or None if they would pass 2⁶²."""
    if float(np.prod([max(v.size, 1) for v in values], dtype=np.float64)) >= 2.0**62:
        return None
    codes = np.zeros(len(cells), dtype=np.int64)
    for axis, axis_values in enumerate(values):
        codes *= max(axis_values.size, 1)
        codes += np.searchsorted(axis_values, cells[:, axis])
    return codes


def _structured(cells: np.ndarray) -> np.ndarray:
    """Cells as one structured value each, ordered lexicographically by coordinate."""
    fields = [(f"a{axis}", np.int64) for axis in range(cells.shape[1])]
    return np.ascontiguousarray(cells, dtype=np.int64).view(fields).ravel()


def unit_offset(rank: int, axis: int, steps: int = 1) -> np.ndarray:
    """``steps · e_axis``: the offset of ``steps`` cells along one axis."""
    offset = np.zeros(rank, dtype=np.int64)
    offset[axis] = steps
    return offset


def is_full_grid(cells: np.ndarray) -> bool:
    """True when the cells are every point of a box ``[0, G_0) × … × [0, G_{k−1})`` in row-major order."""
    spans = cells.max(axis=0) + 1 if len(cells) else np.zeros(cells.shape[1], dtype=np.int64)
    if int(np.prod(spans, dtype=np.float64)) != len(cells) or cells.min(initial=0) < 0:
        return False
    strides = np.r_[np.cumprod(spans[1:][::-1])[::-1], 1]
    return bool(np.array_equal(cells @ strides, np.arange(len(cells))))


class GridFrame:
    """What every check on a scheme's cells starts from: the (N, k) cells, their axis names, and — built
    when first asked for — the encoding's rows and the index of the cells.

    :func:`grid_frame` makes one, refusing a scheme with too few cells in the check's own words.
    """

    def __init__(self, scheme, cells: np.ndarray) -> None:
        self.scheme, self.cells, self.names = scheme, cells, tuple(scheme.axis_names)

    @functools.cached_property
    def encoding(self) -> np.ndarray:
        """The (N, d) rows of the cells, in their order."""
        from pecli.analysis.structure import vectors

        return vectors(self.scheme, len(self.cells))

    @functools.cached_property
    def index(self) -> CellIndex:
        return CellIndex.of(self.cells)

    @property
    def rank(self) -> int:
        return int(self.cells.shape[1])


def grid_frame(scheme, minimum: int, refusal: str, *, integer: bool = True) -> GridFrame:
    """The :class:`GridFrame` of ``scheme``'s cells (as int64 unless ``integer`` is false); no cells, or
    fewer than ``minimum``, raise ``refusal``."""
    from pecli.errors import PecliError

    cells = scheme.cells()
    if cells is None or len(cells) < minimum:
        raise PecliError(refusal)
    return GridFrame(scheme, np.asarray(cells, dtype=np.int64) if integer else np.asarray(cells))
