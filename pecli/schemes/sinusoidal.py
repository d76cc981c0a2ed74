"""The sinusoidal encoding of "Attention Is All You Need" (Vaswani et al. 2017; all seeds)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from pecli.schemes.base import AdditiveScheme, as_positions, param


def sinusoidal_inv_freq(dim: int, base: float) -> np.ndarray:
    """Angular frequencies ``ω_i = base^(−2i/dim)`` for ``i = 0 … dim/2 − 1``, float64."""
    exponents = np.arange(0, dim, 2, dtype=np.float64) / dim
    return 1.0 / np.power(float(base), exponents)


@dataclass(frozen=True)
class SinusoidalScheme(AdditiveScheme):
    """Fixed sines and cosines of geometrically spaced frequencies.

    Notes
    -----
    With ``ω_i = base^(−2i/d)``:

    - ``layout="interleaved"`` (the paper; DistilBERT, seed 000):
      ``PE[p, 2i] = sin(p ω_i)``, ``PE[p, 2i+1] = cos(p ω_i)``;
    - ``layout="half"`` (Marian): ``PE[p] = [sin(p ω_0) … sin(p ω_{d/2−1}), cos(p ω_0) … cos(p ω_{d/2−1})]``.

    The two layouts are the same vectors with their components permuted, so every dot product
    ``PE_p · PE_q = Σ_i cos(ω_i (p − q))`` (seeds 000, 002) is the same. Angles ``p ω_i`` are formed
    in float64.

    References
    ----------
    Vaswani et al., "Attention Is All You Need", 2017, section 3.5.
    """

    name: ClassVar[str] = "sinusoidal"
    summary: ClassVar[str] = "sin/cos of p·base^(-2i/d) (Vaswani et al. 2017)"

    dim: int = param(512, "model dimension d (even)", minimum=2)
    base: float = param(10000.0, "base of the geometric frequencies", exclusive_minimum=0)
    layout: str = param(
        "interleaved", "interleaved: sin, cos pairs (the paper); half: all sines then all cosines (Marian)",
        choices=("interleaved", "half"),
    )

    def __post_init__(self) -> None:
        self._require_even("dim", self.dim)

    @property
    def width(self) -> int:
        return self.dim

    @property
    def inv_freq(self) -> np.ndarray:
        return sinusoidal_inv_freq(self.dim, self.base)

    def angles(self, positions: Any) -> np.ndarray:
        """The (L, d/2) angles ``p ω_i`` in float64."""
        return np.outer(as_positions(positions).astype(np.float64), self.inv_freq)

    def encode(self, positions: Any) -> np.ndarray:
        angles = self.angles(positions)
        if self.layout == "half":
            return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)
        out = np.empty((angles.shape[0], self.dim), dtype=np.float64)
        out[:, 0::2] = np.sin(angles)
        out[:, 1::2] = np.cos(angles)
        return out
