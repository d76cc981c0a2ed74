"""Integer positions added to every component ([Fleetwood], "整数位置编码")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from pecli.params import param
from pecli.schemes.base import MAX_LENGTH, MAX_WIDTH, AdditiveScheme
from pecli.schemes.positions import as_positions


@dataclass(frozen=True)
class IntegerScheme(AdditiveScheme):
    """The position itself, or the position divided by the sequence length, in every component.

    Notes
    -----
    ``E[p, k] = p`` (``normalize="none"``) or ``E[p, k] = p / N`` (``normalize="length"``), N the
    sequence length, for every component k < dim. [Fleetwood] builds it as the first, naive scheme: the
    raw values dwarf token embeddings (which sit near 0); dividing by N bounds them in [0, 1) but the same
    position then gets a different value at every length.
    """

    name: ClassVar[str] = "integer"
    summary: ClassVar[str] = "the position p (or p/N) added to every component ([Fleetwood])"
    length_defaults: ClassVar[tuple[str, ...]] = ("norm_length",)

    dim: int = param(64, "number of components (all equal to p or p/N)", minimum=1, maximum=MAX_WIDTH)
    normalize: str = param("none", "none: E = p; length: E = p / N", choices=("none", "length"))
    norm_length: int | None = param(None, "N, what p is divided by under normalize=length", minimum=1, maximum=MAX_LENGTH, default_text="the sequence length")

    @classmethod
    def defaults_for_length(cls, length: int) -> dict[str, Any]:
        return {"norm_length": length}

    @property
    def shift_isometric(self) -> bool:
        """``||E_p − E_q|| = c·|q − p|·√dim``: a function of ``q − p`` alone."""
        return True

    @property
    def width(self) -> int:
        return self.dim

    def encode(self, positions: Any) -> np.ndarray:
        positions = as_positions(positions).astype(np.float64)
        if self.normalize == "length":
            positions = positions / float(self.norm_length or 1)
        return np.repeat(positions[:, None], self.dim, axis=1)
