"""Rows of a q or k projection between the two RoPE layouts.

Meta's Llama checkpoints rotate pairs of neighbouring components (2i, 2i + 1) of each head, the
``interleaved`` layout; HF's Llama code rotates (i, i + d/2), the ``half`` layout of ``rotate_half``.
transformers' ``convert_llama_weights_to_hf.py`` therefore permutes the rows of every q and k projection,
head by head (k with ``num_key_value_heads`` heads)::

    w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2).reshape(dim1, dim2)

so that row 2i + c of a head (pair i, component c) moves to row c·d/2 + i. :func:`to_half` is that
permutation, :func:`to_interleaved` its inverse; both are pure reorderings, exact in any dtype.
"""

from __future__ import annotations

import numpy as np

from pecli.errors import ConfigError

LAYOUTS = ("interleaved", "half")


def check_weight(weight: np.ndarray) -> None:
    """A q or k projection (rows, columns), or its bias vector: floating-point, not empty, finite.

    Raises
    ------
    ConfigError
        (key ``input``) Any other array, named by its shape, dtype or the first non-finite value.
    """
    if weight.ndim not in (1, 2):
        raise ConfigError("input", f"expected a (rows, columns) projection or a bias vector, got shape {list(weight.shape)}")
    if weight.size == 0:
        raise ConfigError("input", f"the array of shape {list(weight.shape)} is empty")
    if np.dtype(weight.dtype).kind != "f" and "float" not in np.dtype(weight.dtype).name:
        raise ConfigError("input", f"holds {weight.dtype} values; a projection holds floating-point weights")
    finite = np.isfinite(weight.astype(np.float32, copy=False))
    if not finite.all():
        row = int(np.argwhere(~finite)[0][0])
        raise ConfigError("input", f"holds NaN or ±inf (row {row}): not a trained projection")


def _heads_view(weight: np.ndarray, heads: int) -> tuple[np.ndarray, tuple[int, ...]]:
    """``weight`` as (rows, columns) with its rows a whole number of heads of an even dimension."""
    shape = weight.shape
    if weight.ndim not in (1, 2):
        raise ConfigError("weights", f"expected a (rows, columns) projection or a bias vector, got shape {list(shape)}")
    rows = shape[0]
    if heads < 1 or rows % heads or (rows // heads) % 2:
        raise ConfigError("heads", f"{rows} rows are not {heads} heads of an even dimension")
    return weight.reshape(rows, -1), shape


def to_half(weight: np.ndarray, heads: int) -> np.ndarray:
    """Interleaved → half, transformers' ``permute(w, n_heads)``: per head, (d/2, 2) → (2, d/2) rows."""
    matrix, shape = _heads_view(weight, heads)
    rows, columns = matrix.shape
    return matrix.reshape(heads, rows // heads // 2, 2, columns).transpose(0, 2, 1, 3).reshape(shape)


def to_interleaved(weight: np.ndarray, heads: int) -> np.ndarray:
    """Half → interleaved, the inverse of :func:`to_half`: per head, (2, d/2) → (d/2, 2) rows."""
    matrix, shape = _heads_view(weight, heads)
    rows, columns = matrix.shape
    return matrix.reshape(heads, 2, rows // heads // 2, columns).transpose(0, 2, 1, 3).reshape(shape)


def permute_layout(weight: np.ndarray, heads: int, source: str, target: str) -> np.ndarray:
    """``weight`` with its rows moved from layout ``source`` to layout ``target`` (a copy)."""
    for key, layout in (("from", source), ("to", target)):
        if layout not in LAYOUTS:
            raise ConfigError(key, f"unknown layout {layout!r}; layouts: {', '.join(LAYOUTS)}")
    if source == target:
        raise ConfigError("to", f"the weights are already in the {target} layout")
    return np.ascontiguousarray(to_half(weight, heads) if target == "half" else to_interleaved(weight, heads))
