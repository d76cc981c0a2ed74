"""Position ids: one integer per token, or k coordinates per cell of a grid (n-D schemes); real-valued
positions for the schemes whose angles are any multiple of a frequency."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from pecli.errors import PositionError


#: Position ids stay below 2^53: float64, in which angles p·θ are formed, holds every whole number below it.
MAX_ID = 1 << 53


def as_positions(positions: Any, rank: int = 1, *, real: bool = False) -> np.ndarray:
    """Return ``positions`` as int64 ids: shape (N,) for rank 1, (N, rank) for positions on a grid.

    With ``real`` (schemes whose angles are any multiple of a frequency: rope, rope-nd, sinusoidal,
    sinusoidal-nd), positions may be any finite real numbers, negative or fractional (EVA's stretched grid
    coordinates, rotary-embedding-torch's pixel positions in [−1, 1]); they come back as float64 when
    some are not whole non-negative numbers, else as int64 ids as always.

    Raises
    ------
    PositionError
        If the positions are not integers (not finite numbers with ``real``), have the wrong shape or
        are negative.
    """
    array = np.asarray(positions)
    if array.ndim == 0:
        array = array.reshape(1)
    if rank == 1 and array.ndim != 1:
        raise PositionError(f"positions must be one-dimensional, got shape {array.shape}")
    if rank > 1 and (array.ndim != 2 or array.shape[1] != rank):
        raise PositionError(f"positions must have shape (N, {rank}), got shape {array.shape}")
    if real and array.dtype.kind in "iubf" and _not_ids(array):
        return _real_positions(array)
    if array.dtype.kind == "f":
        if not np.all(np.isfinite(array)) or not np.all(array == np.round(array)):
            raise PositionError("positions must be whole numbers")
    elif array.dtype.kind not in "iub":
        raise PositionError(f"positions must be {'numbers' if real else 'integers'}, got dtype {array.dtype}")
    if array.size and array.max() >= MAX_ID:
        raise PositionError(f"positions must be below 2**53 (angles are formed in float64, exact for whole numbers "
                            f"below it), got {array.max()}")
    array = array.astype(np.int64)
    if array.size and array.min() < 0:
        raise PositionError(f"positions must be >= 0, got {int(array.min())}")
    return array


def _not_ids(array: np.ndarray) -> bool:
    """Whether some value is not a whole number in [0, 2^53): then real positions are float64."""
    if not array.size:
        return False
    if array.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            return not (np.all(np.isfinite(array)) and np.all(array == np.round(array))
                        and array.min() >= 0 and array.max() < MAX_ID)
    return bool(array.min() < 0)


def _real_positions(array: np.ndarray) -> np.ndarray:
    """Real-valued positions as float64, refusing NaN, ±inf and values beyond 2^53 in magnitude."""
    values = array.astype(np.float64)
    if not np.all(np.isfinite(values)):
        raise PositionError("positions must be finite numbers (no NaN or ±inf)")
    if np.abs(values).max() >= MAX_ID:
        raise PositionError(f"positions must be below 2**53 in magnitude, got {values[np.argmax(np.abs(values))]:g}")
    return values


def positions_length(positions: np.ndarray) -> int:
    """The sequence length L that positions reach: the largest (rounded down) + 1, at least 1; for the
    defaults that depend on it (rope's context, learned's rows)."""
    positions = np.asarray(positions)
    if not positions.size:
        return 1
    return max(1, int(np.floor(positions.max())) + 1)


def grid_cells(grid: tuple[int, ...]) -> np.ndarray:
    """The cells of a grid of shape ``grid`` in row-major order, int64 of shape (prod(grid), len(grid)).

    Cell ``(i_0, …, i_{k−1})`` is row ``Σ_a i_a · Π_{b>a} grid[b]``, as ``np.ravel_multi_index`` numbers it.
    """
    return np.indices(tuple(int(n) for n in grid), dtype=np.int64).reshape(len(grid), -1).T


def stored_positions(positions: np.ndarray) -> np.ndarray:
    """Position ids as ``encode`` writes them: (N,), or (rank, N) with one row per axis, as
    HuggingFace's multimodal ``position_ids``."""
    return positions if positions.ndim == 1 else positions.T.copy()


def position_label(position: Any) -> int | float | list:
    """A position as JSON and messages show it: an int id (a number, for real-valued positions), or the
    list of a grid cell's coordinates."""
    array = np.asarray(position)
    if array.ndim == 0:
        return _number(array)
    return [_number(v) for v in array]


def _number(value: Any) -> int | float:
    value = np.asarray(value)
    if value.dtype.kind == "f":
        number = float(value)
        return int(number) if number.is_integer() and abs(number) < MAX_ID else number
    return int(value)


def position_range(positions: np.ndarray) -> tuple[int, Any, Any]:
    """(count, first, last) of position ids, the first and last as :func:`position_label` gives them."""
    return len(positions), position_label(positions[0]), position_label(positions[-1])


def position_text(position: Any) -> str:
    """A position in words: ``17``, ``0.5``, or ``(2, 5)`` for a grid cell."""
    label = position_label(position)
    if isinstance(label, list):
        return "(" + ", ".join(map(_number_text, label)) + ")"
    return _number_text(label)


def _number_text(value: int | float) -> str:
    return str(value) if isinstance(value, int) else f"{value:.6g}"


@dataclass(frozen=True)
class Positions:
    """Position ids: (N,) integers, or (N, rank) coordinates for schemes whose positions live on a grid.

    ``Positions.range(L)`` is 0 … L − 1 and is built only when its ids are asked for.
    """

    given: np.ndarray | None = None
    length: int = 0
    rank: int = 1
    #: Builds the ids when they are first asked for (an n-D scheme's cells), instead of 0 … L − 1.
    make: Callable[[], np.ndarray] | None = None

    @classmethod
    def range(cls, length: int, rank: int = 1) -> Positions:
        return cls(None, int(length), rank)

    @classmethod
    def cells(cls, count: int, rank: int, make: Callable[[], np.ndarray]) -> Positions:
        """The ``count`` cells of an n-D scheme, built by ``make`` only when their ids are asked for."""
        return cls(None, int(count), rank, make)

    @classmethod
    def of(cls, ids: Any, rank: int = 1, *, real: bool = False) -> Positions:
        ids = as_positions(ids, rank, real=real)
        return cls(ids, int(ids.shape[0]), rank)

    @property
    def count(self) -> int:
        """Number of positions, known before any array is built (for memory estimates)."""
        return self.length

    @property
    def ids(self) -> np.ndarray:
        if self.given is not None:
            return self.given
        if self.make is not None:
            return self.make()
        return np.arange(self.length, dtype=np.int64)
