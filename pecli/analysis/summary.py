"""The quick facts ``pecli encode`` reports about the array it computed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pecli.analysis.structure import collisions
from pecli.schemes.base import Scheme


@dataclass(frozen=True)
class Adjacency:
    """How far apart adjacent positions are, and how many positions repeat an earlier one.

    Attributes
    ----------
    min_distance, min_pair:
        The smallest Euclidean step ``||E_{p+1} − E_p||`` and its positions; None with one position.
    constant:
        True when every adjacent step is the same (shift-invariant encodings), None with one position.
    colliding_positions:
        Positions whose row equals an earlier one, exactly, in the output dtype.
    """

    min_distance: float | None
    min_pair: tuple[int, int] | None
    constant: bool | None
    colliding_positions: int


@dataclass(frozen=True)
class ArraySummary:
    """Shape, dtype, bytes and value range of an array; the adjacency of an encoding's positions."""

    shape: tuple[int, ...]
    dtype: str
    bytes: int
    min: float | None
    max: float | None
    adjacency: Adjacency | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON keys (``min_adjacent_distance`` … ``colliding_positions`` with an adjacency)."""
        out: dict[str, Any] = {"shape": list(self.shape), "dtype": self.dtype, "bytes": self.bytes, "min": self.min, "max": self.max}
        if self.adjacency is not None:
            out["min_adjacent_distance"] = self.adjacency.min_distance
            out["min_adjacent_pair"] = None if self.adjacency.min_pair is None else list(self.adjacency.min_pair)
            out["adjacent_distance_constant"] = self.adjacency.constant
            out["colliding_positions"] = self.adjacency.colliding_positions
        return out


@dataclass(frozen=True)
class EncodeReport:
    """What ``pecli encode`` reports: the scheme, the positions, the main array's summary, the file."""

    scheme: str
    kind: str
    params: dict[str, Any]
    length: int
    #: (count, first, last) of the position ids.
    positions: tuple[int, int, int]
    #: Name of the main array (``encoding``, ``bias``, … or ``result`` with ``--apply``).
    main: str
    array: ArraySummary
    out: str | None = None
    #: Values that overflowed the output dtype (stored as ±inf).
    non_finite_values: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``pecli encode --json``."""
        count, first, last = self.positions
        facts = self.array.to_dict()
        document: dict[str, Any] = {
            "scheme": self.scheme, "params": self.params, "length": self.length, "dtype": facts.pop("dtype"),
            "kind": self.kind, "positions": {"count": count, "first": first, "last": last}, "main": self.main,
            **facts, "out": self.out,
        }
        if self.non_finite_values:
            document["non_finite_values"] = self.non_finite_values
        return document


def position_rows(scheme: Scheme, main: np.ndarray) -> np.ndarray:
    """One row per position: the encoding of additive/rotary schemes, the bias row of a query otherwise.

    ``main`` is the scheme's main array; alibi's (H, L, L) bias becomes (L, H·L), relative's
    (L, L, d) embeddings become (L, L·d).
    """
    if scheme.main_key == "bias":
        main = np.moveaxis(main, 0, 1)
    return main.reshape(main.shape[0], -1)


def summarize(scheme: Scheme, positions: np.ndarray, main: np.ndarray) -> ArraySummary:
    """Shape, dtype, bytes, value range, smallest step between adjacent positions and collisions.

    ``main`` is the main array already cast to the output dtype, so collisions are those of that dtype.
    """
    rows = position_rows(scheme, main)
    wide = rows.astype(np.float64) + 0.0  # −0.0 reads as 0.0
    lowest = float(wide.min()) if wide.size else None
    highest = float(wide.max()) if wide.size else None
    repeated = collisions(rows).repeated
    if rows.shape[0] > 1:
        steps = np.linalg.norm(np.diff(wide, axis=0), axis=1)
        at = int(np.argmin(steps))
        # Shift-invariant encodings (sinusoidal, rope) step by the same distance everywhere: naming
        # the pair with the smallest one would only name rounding noise.
        constant = bool(np.ptp(steps) <= 1e-9 * max(float(steps.max()), 1e-300))
        adjacency = Adjacency(float(steps[at]), (int(positions[at]), int(positions[at + 1])), constant, repeated)
    else:
        adjacency = Adjacency(None, None, None, repeated)
    return ArraySummary(tuple(main.shape), str(main.dtype), int(main.nbytes), lowest, highest, adjacency)


def array_summary(array: np.ndarray) -> ArraySummary:
    """Shape, dtype, bytes and value range of any array (an ``--apply`` result)."""
    wide = array.astype(np.float64)
    return ArraySummary(tuple(array.shape), str(array.dtype), int(array.nbytes), float(wide.min()), float(wide.max()))
