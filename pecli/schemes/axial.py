"""Rotary embeddings of positions with several coordinates: axial RoPE on a grid (``rope-nd``).

[Fleetwood] ends with RoPE in n dimensions: pairing an image's x and y coordinates inside one rotation
would mix the two offsets, so each pair of components rotates with the coordinate of one axis only.
:class:`AxialRotaryScheme` is that construction for any assignment of pairs to axes; ``rope-nd`` (here)
and multimodal RoPE (:mod:`pecli.schemes.mrope`) differ only in which pair follows which axis, at which
frequency, and where the positions come from.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from pecli.errors import ConfigError
from pecli.schemes.scaling.keys import SCALING_GROUP
from pecli.params import param
from pecli.schemes.base import MAX_WIDTH, Scheme, check_apply_input, factored_score, with_prefix_rows
from pecli.schemes.frequencies import (DEFAULT_BASE, FrequencyPairs, check_float32_base, check_given_frequencies,
                                      geometric_inv_freq)
from pecli.schemes.parts import Part, prefixed, whole_part
from pecli.schemes.rotary_layout import layout_cache, pair_components, reference_rotations, rotate_pairs
from pecli.schemes.rotary_parts import rotary_parts, shares_tables
from pecli.schemes.grid import INDEXINGS, MAX_PREFIX_TOKENS, OnGrid, check_grid, check_indexing
from pecli.schemes.positions import stored_positions



# No @dataclass: it adds no field (see the note above Scheme).
class AxialRotaryScheme(Scheme):
    """Rotate pair i of the query/key components by ``p[a_i] · θ_i``: the coordinate of its axis ``a_i``.

    Notes
    -----
    A position p has k coordinates. Each frequency pair i follows one axis ``a_i``
    (:attr:`pair_axis`) and turns by ``p[a_i] θ_i`` radians, so the rotation is
    ``R_p = ⊕_i R(p[a_i] θ_i)`` and ``R_mᵀ R_n = R_{n−m}``: the score ``(R_m q)·(R_n k)`` depends on the
    offset vector n − m only, each pair seeing only its own axis's offset ([Fleetwood], "rotate pairs
    within one axis, never mix the x and y offsets"). Components of pair i sit at ``(i, i + d/2)``
    (``layout="half"``, HuggingFace's ``rotate_half``) or ``(2i, 2i + 1)`` (``interleaved``). Angles
    are formed in float64. :meth:`encode` is the rotated reference vector (1, 0) on every pair and
    :meth:`score` uses the all-ones vector, as for ``rope``.
    """

    kind: ClassVar[str] = "rotary"
    #: Its positions are its own cells (a grid's, a sequence's), not 0 … L − 1.
    has_cells: ClassVar[bool] = True

    # -- what a subclass defines ------------------------------------------------------------------
    @property
    def inv_freq(self) -> np.ndarray:
        """θ_i of every pair, float64, shape (dim/2,)."""
        raise NotImplementedError

    @property
    def pair_axis(self) -> np.ndarray:
        """The axis each pair follows, int64, shape (dim/2,)."""
        raise NotImplementedError

    # -- shared --------------------------------------------------------------------------------------
    @property
    def width(self) -> int:
        return self.dim

    @property
    def attention_scaling(self) -> float:
        return 1.0

    def pair_indices(self) -> tuple[np.ndarray, np.ndarray]:
        """Component indices (first, second) of each pair in the chosen layout."""
        return pair_components(self.dim, self.layout)

    @property
    def original_inv_freq(self) -> np.ndarray:
        """θ_i before any scaling (here: :attr:`inv_freq`)."""
        return self.inv_freq

    @property
    def ladder_base(self) -> float:
        """The base of the frequency ladders (NaN where the frequencies are given instead)."""
        return float(self.base)

    def frequency_pairs(self) -> FrequencyPairs:
        first, second = self.pair_indices()
        return FrequencyPairs(
            self.inv_freq, self.original_inv_freq, first, second, False, self.dim, self.ladder_base,
            axis=self.pair_axis, axis_names=self.axis_names,
        )

    def angles(self, positions: Any) -> np.ndarray:
        """The (N, dim/2) angles ``p[a_i] θ_i``, float64, for positions of shape (N, rank)."""
        coords = self.positions_of(positions)
        return coords[:, self.pair_axis].astype(np.float64) * self.inv_freq

    def cos_sin(self, positions: Any) -> tuple[np.ndarray, np.ndarray]:
        """The (N, dim) cos and sin caches of the layout: ``concat(cos θ, cos θ)`` for ``half`` (HF)."""
        angles = layout_cache(self.angles(positions), self.layout)
        return np.cos(angles), np.sin(angles)

    def encode(self, positions: Any) -> np.ndarray:
        return reference_rotations(self.angles(positions), self.dim, self.layout)

    def apply(self, x: np.ndarray, positions: Any, *, keys: bool = False) -> np.ndarray:
        """Rotate the last axis of ``x``; positions (N, rank) run along its second-to-last axis, after the
        rows of any prefix tokens, which turn by no angle (left as they are)."""
        positions = self.positions_of(positions)
        x = np.asarray(x, dtype=np.float64)
        prefix = self.prefix_rows
        check_apply_input(x, positions, self.dim, prefix)
        angles = self.angles(positions)
        if not prefix:
            return rotate_pairs(x, np.cos(angles), np.sin(angles), *self.pair_indices())
        out = x.copy()
        out[..., prefix:, :] = rotate_pairs(x[..., prefix:, :], np.cos(angles), np.sin(angles), *self.pair_indices())
        return out

    def score_factors(self, positions: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(R_p u, R_p u)`` for the all-ones vector u."""
        positions = self.positions_of(positions)
        rotated = rotate_pairs(np.ones((len(positions), self.dim)), *self._cos_sin_pairs(positions), *self.pair_indices())
        return rotated, rotated

    def _cos_sin_pairs(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        angles = self.angles(positions)
        return np.cos(angles), np.sin(angles)

    def score(self, m: Any, n: Any) -> np.ndarray:
        return factored_score(self, m, n)

    def prefix_values(self) -> dict[str, np.ndarray]:
        """The rows of the prefix tokens in ``encoding``, ``cos`` and ``sin``: the identity rotation (angle 0)."""
        angles = np.zeros((self.prefix_rows, self.dim // 2))
        return {"encoding": reference_rotations(angles, self.dim, self.layout),
                "cos": np.ones((self.prefix_rows, self.dim)), "sin": np.zeros((self.prefix_rows, self.dim))}

    def arrays(self, positions: Any) -> dict[str, np.ndarray]:
        positions = self.positions_of(positions)
        cos, sin = self.cos_sin(positions)
        prefix = self.prefix_values()
        return {
            "encoding": with_prefix_rows(self.encode(positions), prefix["encoding"]),
            "cos": with_prefix_rows(cos, prefix["cos"]), "sin": with_prefix_rows(sin, prefix["sin"]),
            "inv_freq": self.inv_freq, "pair_axis": self.pair_axis, "positions": stored_positions(positions),
        }

    def phasors(self, ids: np.ndarray) -> np.ndarray:
        """The (n, dim/2) phasors ``exp(i·angle)`` of positions ``ids`` (n, rank): cos and sin of the float64 angles."""
        angles = self.angles(ids)
        z = np.empty(angles.shape, dtype=np.complex128)
        np.cos(angles, out=z.real)
        np.sin(angles, out=z.imag)
        return z

    def encoded(self, positions: Any, *, dtype: str | None = None) -> Any:
        """The ``cos`` and ``sin`` caches (N, dim) in ``dtype`` from the exact cos and sin of the float64
        angles, cast once, after the prefix tokens' rows; ``inv_freq``, ``pair_axis`` and ``positions`` (rank, N): a
        :class:`~pecli.schemes.encoded.RotaryEncoding`."""
        from pecli.schemes.encoded import RotaryEncoding, rotary_caches

        positions = self.positions_of(positions)
        cos, sin = rotary_caches(positions, self.phasors, self.dim, self.layout, dtype)
        prefix = self.prefix_values()  # the prefix tokens' rows first: the identity rotation
        cos, sin = with_prefix_rows(cos, prefix["cos"]), with_prefix_rows(sin, prefix["sin"])
        return RotaryEncoding(self, cos, sin, self.inv_freq, stored_positions(positions), self.pair_axis)

    def shared_bytes(self, n_positions: int, itemsize: int, wanted: Any) -> int:
        """The (N, dim/2) cos and sin tables :meth:`parts` keeps when several of encoding, cos, sin are wanted."""
        return n_positions * self.dim * itemsize if shares_tables(wanted) else 0

    def parts(self, positions: Any, *, exact: bool = True, dtype: str | None = None, wanted: Any = None) -> list[Part]:
        """``encoding``, ``cos``, ``sin`` row by row (:func:`~pecli.schemes.rope.rotary_parts`), then
        ``inv_freq``, ``pair_axis`` and ``positions`` as (rank, N), one row per axis as HuggingFace's
        multimodal ``position_ids``."""
        positions = self.positions_of(positions)
        prefix = self.prefix_values()
        trigonometric = rotary_parts(positions, self.phasors, self.dim, self.dim, self.layout, dtype, wanted)
        return [
            *(prefixed(part, prefix[part.name]) for part in trigonometric),
            whole_part("inv_freq", self.inv_freq),
            whole_part("pair_axis", self.pair_axis),
            whole_part("positions", stored_positions(positions)),
        ]


def split_evenly(total: int, parts: int) -> tuple[int, ...]:
    """``total`` split into ``parts`` near-equal integers, the larger ones first (64 in 3: 22, 21, 21)."""
    size, extra = divmod(int(total), int(parts))
    return tuple(size + (1 if axis < extra else 0) for axis in range(parts))


@dataclass(frozen=True)
class RopeNDScheme(OnGrid, AxialRotaryScheme):
    """Axial RoPE on a grid of ``[H, W]`` or ``[T, H, W]`` cells: each axis rotates its own pairs.

    Notes
    -----
    The ``dim/2`` pairs are split between the k axes, ``axis_dims[a]/2`` pairs for axis a (default: as
    evenly as possible, earlier axes first), axis 0's pairs first. Each axis has its own geometric
    ladder over its share of the components, ``θ_j = base^(−2j/d_a)`` for j = 0 … d_a/2 − 1, as in the
    "RoPE-Axial" of Heo et al. 2024 (base 100 for ViTs there; pecli keeps rope's 10000 by default).
    Positions are the grid cells in row-major order (h before w); ``encode --out x.npz`` writes them as
    ``positions`` (k, N), one row per axis.

    ``inv_freq`` replaces the ladders with given frequencies: one axis's ladder (d/(2k) values, the same
    for every axis; the axes must then have equal shares) or d/2 values, axis 0's pairs first.
    ``scaling="linear"`` with ``factor`` F interpolates positions per axis, coordinate c → c/F (θ → θ/F);
    F may be below 1: EVA-02's ``ref_feat_shape`` 16 on a 14-cell grid stretches c to c·16/14, F = 14/16.
    ``indexing="xy"`` makes the coordinates (x, y), so the first block of pairs turns with x (timm's
    ``grid_indexing="xy"``), and ``prefix_tokens`` puts rows of the identity rotation (cos 1, sin 0)
    first, for the cls and register tokens RoPE leaves alone (timm's EVA: ``npt`` tokens).

    With ``layout="half"`` (the default) this is the 2-D RoPE of Qwen2-VL's vision encoder
    (``VisionRotaryEmbedding``: an h ladder and a w ladder over d/2 components each, concatenated, then
    ``rotate_half``). With ``layout="interleaved"`` it is a 1-D interleaved RoPE of width d_a per axis,
    concatenated: Heo et al.'s code puts the column (x) axis first, so its caches are ours with the two
    halves of the components swapped; the rotations, and every score, are the same.

    References
    ----------
    Heo et al., "Rotary Position Embedding for Vision Transformer", ECCV 2024; Wang et al., "Qwen2-VL",
    2024 (its vision encoder).
    """

    name: ClassVar[str] = "rope-nd"
    summary: ClassVar[str] = "axial RoPE on an [H, W] or [T, H, W] grid: each axis rotates its own pairs"

    dim: int = param(128, "head dimension (even)", minimum=2, maximum=MAX_WIDTH)
    base: float = param(10000.0, "base of each axis's frequencies", exclusive_minimum=0)
    grid: tuple[int, ...] = param((16, 16), "cells per axis: H,W or T,H,W (also 16x16)", minimum=1, default_text="16x16")
    axis_dims: tuple[int, ...] | None = param(
        None, "components per axis, each even, summing to dim", minimum=2, default_text="an even split",
    )
    layout: str = param(
        "half", "half: pairs (i, i+d/2) as HF rotate_half; interleaved: pairs (2i, 2i+1)", choices=("half", "interleaved"),
    )
    indexing: str = param("ij", "ij: coordinates (h, w), grid H,W; xy: coordinates (x, y), grid W,H, x first "
                          "(timm's grid_indexing); the rows run along the image's rows either way", choices=INDEXINGS)
    prefix_tokens: int = param(0, "rows without a position before the cells' (cls, register tokens): no rotation",
                               minimum=0, maximum=MAX_PREFIX_TOKENS)
    given_inv_freq: tuple[float, ...] | None = param(
        None, "the frequencies in place of the ladders: one axis's d/(2k) (every axis alike) or all d/2, "
        "inline or an .npy or text file", exclusive_minimum=0, from_file=True, key="inv_freq", default_text="base^(-2j/d_a)",
    )
    scaling: str = param("none", "linear: position interpolation per axis, coordinate c → c/factor", choices=("none", "linear"),
                         group=SCALING_GROUP)
    factor: float | None = param(None, "linear: F, coordinates c → c/F (below 1 stretches them: EVA's ref_feat_shape/grid "
                                 "is 1/F)", exclusive_minimum=0, group=SCALING_GROUP)

    def __post_init__(self) -> None:
        self._require_even("dim", self.dim)
        check_grid(self.grid)
        check_indexing(self.indexing, self.grid)
        if self.scaling == "linear" and self.factor is None:
            raise ConfigError("factor", "scaling linear divides each coordinate by the factor: give --factor F")
        if self.scaling == "none" and self.factor is not None:
            raise ConfigError("factor", f"is the factor of --scaling linear; rope-nd's scaling is none (give --scaling linear)")
        if self.axis_dims is None and self.dim < 2 * len(self.grid):
            raise ConfigError("dim", f"needs a pair per axis: at least {2 * len(self.grid)} for {len(self.grid)} axes, got {self.dim}")
        dims = self.dims
        if len(dims) != len(self.grid):
            raise ConfigError("axis_dims", f"gives {len(dims)} axes but grid has {len(self.grid)}")
        if any(d % 2 or d < 2 for d in dims) or sum(dims) != self.dim:
            raise ConfigError("axis_dims", f"must be even numbers (at least 2) summing to dim = {self.dim}, got {list(dims)}")
        if self.given_inv_freq is None:
            check_float32_base(self.base)
        else:
            self._check_given_frequencies(dims)

    def _check_given_frequencies(self, dims: tuple[int, ...]) -> None:
        per_axis = (dims[0] // 2,) if len(set(dims)) == 1 else ()
        what = f"rope-nd with dim {self.dim} on {len(dims)} axes ({'+'.join(str(d // 2) for d in dims)} pairs)"
        check_given_frequencies(self.given_inv_freq, (*per_axis, self.dim // 2), what)
        if self.base != DEFAULT_BASE:
            raise ConfigError("inv_freq", f"replaces the ladders of base {self.base:g}; give the frequencies or the base, not both")

    @property
    def dims(self) -> tuple[int, ...]:
        """Components per axis: ``axis_dims``, or dim split into even shares."""
        if self.axis_dims is not None:
            return tuple(self.axis_dims)
        return tuple(2 * pairs for pairs in split_evenly(self.dim // 2, len(self.grid)))

    @cached_property
    def _ladders(self) -> tuple[np.ndarray, np.ndarray]:
        given = self.given_inv_freq
        if given is None:
            inv_freq = np.concatenate([geometric_inv_freq(d, self.base) for d in self.dims])
        else:
            inv_freq = np.array(given if len(given) == self.dim // 2 else given * len(self.dims), dtype=np.float64)
        axis = np.repeat(np.arange(len(self.dims), dtype=np.int64), [d // 2 for d in self.dims])
        inv_freq.setflags(write=False)
        axis.setflags(write=False)
        return inv_freq, axis

    @property
    def original_inv_freq(self) -> np.ndarray:
        """The frequencies before the linear scaling: the ladders ``base^(−2j/d_a)``, or the given ones."""
        return self._ladders[0].copy()

    @property
    def ladder_base(self) -> float:
        return float("nan") if self.given_inv_freq is not None else float(self.base)

    @property
    def inv_freq(self) -> np.ndarray:
        """The frequencies in use: :attr:`original_inv_freq`, divided by the linear scaling's factor."""
        return self._ladders[0] / self.factor if self.scaling == "linear" else self._ladders[0].copy()

    @property
    def pair_axis(self) -> np.ndarray:
        return self._ladders[1].copy()
