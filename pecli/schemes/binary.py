"""Binary positions: bit k of p in component k ([Conditions] and [Fleetwood])."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from pecli.errors import PositionError
from pecli.params import param
from pecli.schemes.base import AdditiveScheme
from pecli.schemes.positions import as_positions


@dataclass(frozen=True)
class BinaryScheme(AdditiveScheme):
    """The binary digits of the position, least significant bit first.

    Notes
    -----
    ``E[p, k] = floor(p / 2**k) mod 2`` for ``k < bits``. [Fleetwood]'s example: 252 = 0b11111100, so
    ``E[252] = [0, 0, 1, 1, 1, 1, 1, 1]`` (the string read from the right). With ``bits`` fixed by a
    training length L, ``bits = ceil(log2 L)`` and positions ``>= 2**bits`` overflow: [Conditions]'s 300
    needs 9 bits after training on 256 with 8.
    """

    name: ClassVar[str] = "binary"
    summary: ClassVar[str] = "bit k of the position in component k, least significant first ([Conditions] and [Fleetwood])"
    length_defaults: ClassVar[tuple[str, ...]] = ("bits",)

    bits: int | None = param(None, "number of bits (default ceil(log2(length)))", minimum=1, maximum=62)

    @classmethod
    def defaults_for_length(cls, length: int) -> dict[str, Any]:
        return {"bits": max(1, math.ceil(math.log2(length))) if length > 1 else 1}

    @property
    def width(self) -> int:
        return int(self.bits or 1)

    def check_positions(self, positions: np.ndarray) -> None:
        positions = as_positions(positions)
        limit = 1 << self.width
        if positions.size and positions.max() >= limit:
            first = int(positions[positions >= limit][0])
            raise PositionError(
                f"binary overflow: position {first} needs {first.bit_length()} bits, "
                f"the encoding has {self.width} (positions < {limit})"
            )

    def encode(self, positions: Any) -> np.ndarray:
        positions = as_positions(positions)
        self.check_positions(positions)
        shifts = np.arange(self.width, dtype=np.int64)
        return ((positions[:, None] >> shifts) & 1).astype(np.float64)
