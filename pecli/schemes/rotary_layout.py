"""Where a rotary encoding's pairs sit in a head, and what turning them does: the layout maths that RoPE,
its n-D variants and their encoded results share (plain NumPy, no scheme)."""

from __future__ import annotations

import numpy as np


def layout_cache(half: np.ndarray, layout: str) -> np.ndarray:
    """(N, r/2) values per pair laid out as the layout's (N, r) cos or sin cache: ``concat(v, v)`` for
    ``half`` (HuggingFace), each value twice adjacently for ``interleaved`` (GPT-J, Meta)."""
    return np.concatenate([half, half], axis=1) if layout == "half" else np.repeat(half, 2, axis=1)


def pair_components(rotated: int, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """Component indices (first, second) of each of the ``rotated / 2`` pairs: (i, i + r/2) for
    ``half`` (HuggingFace ``rotate_half``), (2i, 2i + 1) for ``interleaved`` (GPT-J, Meta)."""
    if layout == "half":
        first = np.arange(rotated // 2)
        return first, first + rotated // 2
    first = np.arange(0, rotated, 2)
    return first, first + 1


def pair_slices(rotated: int, layout: str) -> tuple[slice, slice]:
    """:func:`pair_components` as slices (views, not copies, when indexing)."""
    return (slice(0, rotated // 2), slice(rotated // 2, rotated)) if layout == "half" else (slice(0, rotated, 2), slice(1, rotated, 2))


def reference_rotations(angles: np.ndarray, dim: int, layout: str, scaling: float = 1.0) -> np.ndarray:
    """(N, dim) rows holding ``scaling·(cos, sin)`` of the (N, r/2) ``angles`` at each pair's components
    of the layout, zero past the r rotated ones: the reference vector (1, 0 on every pair) rotated."""
    rotated = 2 * angles.shape[1]
    out = (np.zeros if rotated < dim else np.empty)((angles.shape[0], dim))
    first, second = pair_slices(rotated, layout)
    np.cos(angles, out=out[:, first])
    np.sin(angles, out=out[:, second])
    if scaling != 1.0:
        out[:, :rotated] *= scaling
    return out


def rotate_pairs(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``x`` with each pair (a, b) of its last axis turned: (a cos − b sin, b cos + a sin), float64."""
    a, b = x[..., first], x[..., second]
    out = x.copy()
    out[..., first] = a * cos - b * sin
    out[..., second] = b * cos + a * sin
    return out
