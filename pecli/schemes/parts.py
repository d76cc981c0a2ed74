"""The arrays ``pecli encode`` writes, produced block by block so that no output needs to be whole."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np


@dataclass(frozen=True)
class Block:
    """A slab of one array in the order its values are stored: rows ``start`` … of segment ``segment``.

    For arrays whose first axis is the positions, ``segment`` is 0 and ``values`` is
    ``array[start : start + n]``; alibi's (H, L, L) bias comes head by head, ``values`` being
    ``bias[segment, start : start + n]``. Parameters and ids (inv_freq, slopes, positions) come whole.
    """

    segment: int
    start: int
    values: np.ndarray


@dataclass(frozen=True)
class Part:
    """One named array ``pecli encode`` writes, produced block by block so that it never needs to be whole.

    Attributes
    ----------
    name, shape:
        The array's stable name (``encoding``, ``cos``, ``bias``…) and full shape.
    blocks:
        ``blocks(rows)`` yields :class:`Block` s of at most ``rows`` rows, in storage (C) order.
    row_values:
        Values in one row of a block (for sizing blocks to memory).
    rows_at:
        For the main part: ``rows_at(index)`` is the position rows of ``positions[index]`` (after any
        ``prefix`` rows) —
        shape (n, values per position), as :func:`pecli.analysis.summary.position_rows` lays them
        out — equal to those the blocks hold; None for other parts.
    """

    name: str
    shape: tuple[int, ...]
    blocks: Callable[[int], Iterator[Block]]
    row_values: int
    rows_at: Callable[[np.ndarray], np.ndarray] | None = None
    #: Leading rows that belong to no position (prefix tokens, see :func:`prefixed`): the first block
    #: holds exactly them, and the positions' rows start at this row.
    prefix: int = 0


def whole_part(name: str, array: np.ndarray) -> Part:
    """A part that comes in one block (parameters, ids, or arrays of schemes that build them whole)."""
    array = np.asarray(array)
    return Part(name, tuple(array.shape), lambda rows: iter([Block(0, 0, array)]), max(1, int(array.size)))


def row_part(name: str, positions: np.ndarray, rows_of: Callable[[np.ndarray], np.ndarray], width: tuple[int, ...], *, main: bool = False) -> Part:
    """A part whose first axis is the positions: ``rows_of(ids)`` gives the rows of position ids ``ids``
    (``positions`` of shape (N,) or, for an n-D scheme, (N, rank))."""

    def blocks(rows: int) -> Iterator[Block]:
        for start in range(0, len(positions), rows):
            yield Block(0, start, rows_of(positions[start : start + rows]))

    def rows_at(index: np.ndarray) -> np.ndarray:
        values = rows_of(positions[index])
        return values.reshape(values.shape[0], -1)

    return Part(name, (len(positions), *width), blocks, int(np.prod(width, dtype=np.int64)), rows_at if main else None)


def prefixed(part: Part, rows: np.ndarray) -> Part:
    """``part`` with ``rows`` first: the values of tokens that have no position (a ViT's cls token), in a
    block of their own; ``rows_at`` still indexes the positions. ``part`` itself when there are none."""
    rows = np.asarray(rows)
    if not len(rows):
        return part
    count = len(rows)

    def blocks(size: int) -> Iterator[Block]:
        yield Block(0, 0, rows)
        for block in part.blocks(size):
            yield Block(block.segment, block.start + count, block.values)

    return Part(part.name, (part.shape[0] + count, *part.shape[1:]), blocks, part.row_values, part.rows_at, count)
