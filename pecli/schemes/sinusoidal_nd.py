"""Sinusoidal encodings of positions on a grid: one 1-D encoding per axis, concatenated or added ([PE-explained])."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from pecli.errors import ConfigError
from pecli.params import param
from pecli.schemes.grid import OnGrid, check_grid
from pecli.schemes.base import MAX_WIDTH, AdditiveScheme
from pecli.schemes.positions import as_positions
from pecli.schemes.sinusoidal import SinusoidalScheme


@dataclass(frozen=True)
class SinusoidalNDScheme(OnGrid, AdditiveScheme):
    """The sinusoidal encoding of each coordinate of a grid cell, combined into one vector.

    Notes
    -----
    [PE-explained] ("二维与多维位置编码"): apply the 1-D sinusoidal encoding to the row and to the column
    coordinate and concatenate or add the two. With ``PE^{(d)}`` the 1-D encoding of width d
    (:class:`~pecli.schemes.sinusoidal.SinusoidalScheme`, same base and layout):

    - ``combine="concat"``: ``E(p) = [PE^{(d/k)}(p_0), …, PE^{(d/k)}(p_{k−1})]`` (d/k even). Then
      ``E(m)·E(n) = Σ_a Σ_i cos(ω_i (n_a − m_a))`` depends on the offset vector only.
    - ``combine="add"``: ``E(p) = Σ_a PE^{(d)}(p_a)``. The dot product gains cross terms
      ``PE(m_a)·PE(n_b)`` between different axes, which depend on the absolute coordinates, and the
      encoding is symmetric under swapping coordinates (cell (1, 2) = cell (2, 1) on a square grid):
      relativity and uniqueness fail, as the checks show.
    """

    name: ClassVar[str] = "sinusoidal-nd"
    summary: ClassVar[str] = "a sinusoidal encoding per grid axis, concatenated or added"

    dim: int = param(256, "vector size d (concat: d/k per axis, each even)", minimum=2, maximum=MAX_WIDTH)
    base: float = param(10000.0, "base of the geometric frequencies", exclusive_minimum=0)
    grid: tuple[int, ...] = param((16, 16), "cells per axis: H,W or T,H,W (also 16x16)", minimum=1, default_text="16x16")
    combine: str = param("concat", "concat: one d/k-wide encoding per axis; add: d-wide encodings summed",
                         choices=("concat", "add"))
    layout: str = param(
        "interleaved", "interleaved: sin, cos pairs (the paper); half: all sines then all cosines",
        choices=("interleaved", "half"),
    )

    def __post_init__(self) -> None:
        check_grid(self.grid)
        self._require_even("dim", self.dim)
        axes = len(self.grid)
        if self.combine == "concat" and self.dim % (2 * axes):
            raise ConfigError("dim", f"concat gives each of the {axes} axes an even share: use a multiple of {2 * axes}, got {self.dim}")

    @property
    def width(self) -> int:
        return self.dim

    @property
    def axis_width(self) -> int:
        """Width of each axis's 1-D encoding: d/k for ``concat``, d for ``add``."""
        return self.dim // len(self.grid) if self.combine == "concat" else self.dim

    def axis_encoding(self) -> SinusoidalScheme:
        """The 1-D encoding every axis uses."""
        return SinusoidalScheme(dim=self.axis_width, base=self.base, layout=self.layout)

    def axis_frequencies(self) -> tuple[np.ndarray, ...]:
        """Each axis turns the sinusoids of its 1-D encoding, ``ω_i = base^(−2i/d_a)`` with d_a the
        :attr:`axis_width` (concat and add alike: with ``add`` the axes' sinusoids share components)."""
        inv_freq = np.asarray(self.axis_encoding().frequency_pairs().inv_freq, dtype=np.float64)
        return tuple(inv_freq.copy() for _ in self.grid)

    def encode(self, positions: Any) -> np.ndarray:
        coords = as_positions(positions, self.position_rank)
        one = self.axis_encoding()
        per_axis = [one.encode(coords[:, axis]) for axis in range(coords.shape[1])]
        return np.concatenate(per_axis, axis=1) if self.combine == "concat" else np.sum(per_axis, axis=0)
