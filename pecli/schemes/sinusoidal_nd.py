"""Sinusoidal encodings of positions on a grid: one 1-D encoding per axis, concatenated or added ([PE-explained])."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from pecli.errors import ConfigError
from pecli.params import param
from pecli.schemes.grid import INDEXINGS, MAX_PREFIX_TOKENS, OnGrid, check_grid, check_indexing
from pecli.schemes.base import MAX_WIDTH, AdditiveScheme
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

    ``layout="split"`` (concat) puts the sines of every axis first, then their cosines:
    ``[sin(p_0 ω) | … | sin(p_{k−1} ω) | cos(p_0 ω) | … | cos(p_{k−1} ω)]``, the column order of timm's
    ``build_sincos2d_pos_embed`` (``interleave_sin_cos=False``); ``half`` gives each axis its own
    ``[sin | cos]`` block (MAE's ``get_2d_sincos_pos_embed``, timm's ``interleave_sin_cos=True``). With
    ``add`` the sum is the same for ``split`` and ``half``. The blocks follow the coordinates: with
    ``indexing="xy"`` the first block is x's (MAE: ``np.meshgrid(grid_w, grid_h)``, "w goes first").
    ``prefix_tokens`` rows of zeros come before the cells' rows (MAE's ``cls_token=True``), and ``scale``
    multiplies the table.
    """

    name: ClassVar[str] = "sinusoidal-nd"
    summary: ClassVar[str] = "a sinusoidal encoding per grid axis, concatenated or added"

    dim: int = param(256, "vector size d (concat: d/k per axis, each even)", minimum=2, maximum=MAX_WIDTH)
    base: float = param(10000.0, "base of the geometric frequencies", exclusive_minimum=0)
    grid: tuple[int, ...] = param((16, 16), "cells per axis: H,W or T,H,W (also 16x16)", minimum=1, default_text="16x16")
    combine: str = param("concat", "concat: one d/k-wide encoding per axis; add: d-wide encodings summed",
                         choices=("concat", "add"))
    layout: str = param(
        "interleaved", "interleaved: sin, cos pairs (the paper); half: each axis's sines then its cosines; "
        "split: the sines of every axis, then the cosines (timm's sincos2d)", choices=("interleaved", "half", "split"),
    )
    indexing: str = param("ij", "ij: coordinates (h, w), grid H,W; xy: coordinates (x, y), grid W,H, x first "
                          "(numpy.meshgrid, MAE); the rows run along the image's rows either way", choices=INDEXINGS)
    prefix_tokens: int = param(0, "rows without a position before the cells' (cls, register tokens): zeros",
                               minimum=0, maximum=MAX_PREFIX_TOKENS)
    scale: float = param(1.0, "multiply the table by this", exclusive_minimum=0)

    def __post_init__(self) -> None:
        check_grid(self.grid)
        check_indexing(self.indexing, self.grid)
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
        """The 1-D encoding every axis uses (``split`` lays each axis's out as ``half``, then interleaves
        the axes' halves)."""
        return SinusoidalScheme(dim=self.axis_width, base=self.base, layout="interleaved" if self.layout == "interleaved" else "half")

    def axis_frequencies(self) -> tuple[np.ndarray, ...]:
        """Each axis turns the sinusoids of its 1-D encoding, ``ω_i = base^(−2i/d_a)`` with d_a the
        :attr:`axis_width` (concat and add alike: with ``add`` the axes' sinusoids share components)."""
        inv_freq = np.asarray(self.axis_encoding().frequency_pairs().inv_freq, dtype=np.float64)
        return tuple(inv_freq.copy() for _ in self.grid)

    def encode(self, positions: Any) -> np.ndarray:
        coords = self.positions_of(positions)
        one = self.axis_encoding()
        per_axis = [one.encode(coords[:, axis]) for axis in range(coords.shape[1])]
        if self.combine == "add":
            out = np.sum(per_axis, axis=0)
        elif self.layout == "split":  # [sin a0 | sin a1 | … | cos a0 | cos a1 | …]
            half = self.axis_width // 2
            out = np.concatenate([block[:, :half] for block in per_axis] + [block[:, half:] for block in per_axis], axis=1)
        else:
            out = np.concatenate(per_axis, axis=1)
        if self.scale != 1.0:
            out *= self.scale
        return out
