"""Learned absolute positions: an ``nn.Embedding(max_length, dim)`` table ([Common-PE], [EulerBlind] and [PE-explained])."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar

import numpy as np

from pecli.errors import PositionError
from pecli.params import param
from pecli.schemes.base import MAX_LENGTH, MAX_WIDTH, AdditiveScheme
from pecli.schemes.positions import as_positions


@dataclass(frozen=True)
class LearnedScheme(AdditiveScheme):
    """A table of trainable vectors, one per position, here at its initialisation.

    Notes
    -----
    ``E = T[p]`` with ``T ~ N(0, std²)`` of shape ``(max_length, dim)``, drawn from
    ``numpy.random.default_rng(seed)`` (std 0.02 as BERT and GPT-2 initialise it). The table has no row
    for ``p >= max_length``: such positions are undefined, the extrapolation failure [Common-PE], [EulerBlind] and [PE-explained] describe.
    """

    name: ClassVar[str] = "learned"
    summary: ClassVar[str] = "a trained table of max_length vectors, here at its N(0, std^2) initialisation"
    length_defaults: ClassVar[tuple[str, ...]] = ("max_length",)

    dim: int = param(512, "vector size", minimum=1, maximum=MAX_WIDTH)
    max_length: int | None = param(None, "rows of the table", minimum=1, maximum=MAX_LENGTH, default_text="the sequence length")
    seed: int = param(0, "seed of the initialisation", minimum=0)
    std: float = param(0.02, "standard deviation of the initialisation", exclusive_minimum=0)

    @classmethod
    def defaults_for_length(cls, length: int) -> dict[str, Any]:
        return {"max_length": length}

    @property
    def width(self) -> int:
        return self.dim

    @property
    def parameter_count(self) -> int:
        return int(self.max_length or 0) * self.dim

    def estimate_bytes(self, n_positions: int) -> int:
        return super().estimate_bytes(n_positions) + int(self.max_length or 0) * self.dim * 8

    def table(self) -> np.ndarray:
        """The (max_length, dim) table."""
        rng = np.random.default_rng(self.seed)
        return rng.normal(0.0, self.std, size=(int(self.max_length or 0), self.dim))

    def check_positions(self, positions: np.ndarray) -> None:
        positions = as_positions(positions)
        if positions.size and positions.max() >= (self.max_length or 0):
            first = int(positions[positions >= (self.max_length or 0)][0])
            raise PositionError(
                f"learned positions are undefined past max_length: position {first} has no row "
                f"in a table of {self.max_length}"
            )

    def encode(self, positions: Any) -> np.ndarray:
        positions = as_positions(positions)
        self.check_positions(positions)
        return self.table()[positions]

    def row_encoder(self, positions: np.ndarray, *, exact: bool = True) -> Callable[[np.ndarray], np.ndarray]:
        """Rows of the table, drawn once for every block."""
        self.check_positions(positions)
        table = self.table()
        return lambda ids: table[ids]
