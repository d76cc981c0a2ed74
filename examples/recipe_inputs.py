"""Write the inputs the Recipes page's commands read, in the current folder.

Run it from anywhere: ``python examples/recipe_inputs.py``. It writes

- ``q.npy``, ``k.npy``: (16, 64) float32 queries and keys (``--apply``);
- ``eva-q.npy``: (1 + 16·16, 64) float32 queries of EVA-02: a cls token, then 16 x 16 patches;
- ``x128.npy``: (16, 128) float32 inputs of a Llama-3 head;
- ``pixel-bands.npy``, ``pixel-cells.npy``: timm's pixel bands (16 of them, ``max_freq=224``:
  ``π·2^linspace(0, log2(224) − 1, 16)``) and the 16 x 16 grid's cells on [−1, 1]², rows first;
- ``pixel-freqs.npy``, ``pixel-t.npy``: rotary-embedding-torch's ``freqs_for='pixel'`` frequencies of
  ``dim=16, max_freq=10`` (``π·linspace(1, max_freq / 2, 8)``) and 9 positions on [−1, 1];
- ``axial-freqs.npy``, ``axial-cells.npy``: the same with ``max_freq=224``, and a 4 x 6 grid's cells.

Every array is float32, as the libraries compute them; the random ones come from a fixed seed.
"""

from __future__ import annotations

import math

import numpy as np

F32 = np.float32


def grid_cells(height: int, width: int) -> np.ndarray:
    """The cells of a ``height`` x ``width`` grid on [−1, 1]², the last axis fastest: (H·W, 2)."""
    rows, cols = np.linspace(-1, 1, height, dtype=F32), np.linspace(-1, 1, width, dtype=F32)
    return np.stack(np.meshgrid(rows, cols, indexing="ij"), axis=-1).reshape(-1, 2)


def pixel_bands(count: int, max_freq: float) -> np.ndarray:
    """timm's ``pixel_freq_bands(count, max_freq, linear_bands=False)``."""
    return (2 ** np.linspace(0, math.log2(max_freq) - 1, count, dtype=F32) * F32(np.pi)).astype(F32)


def lang_pixel_freqs(dim: int, max_freq: float) -> np.ndarray:
    """rotary-embedding-torch's ``freqs_for='pixel'``: ``linspace(1, max_freq / 2, dim // 2) · π``."""
    return (np.linspace(1.0, max_freq / 2, dim // 2, dtype=F32) * F32(np.pi)).astype(F32)


def inputs() -> dict[str, np.ndarray]:
    """Every input by file name (without ``.npy``)."""
    rng = np.random.default_rng(2024)
    return {
        "q": rng.standard_normal((16, 64)).astype(F32),
        "k": rng.standard_normal((16, 64)).astype(F32),
        "eva-q": rng.standard_normal((1 + 16 * 16, 64)).astype(F32),
        "x128": rng.standard_normal((16, 128)).astype(F32),
        "pixel-bands": pixel_bands(16, 224.0),
        "pixel-cells": grid_cells(16, 16),
        "pixel-freqs": lang_pixel_freqs(16, 10.0),
        "pixel-t": np.linspace(-1, 1, 9, dtype=F32),
        "axial-freqs": lang_pixel_freqs(16, 224.0),
        "axial-cells": grid_cells(4, 6),
    }


def main() -> None:
    for name, array in inputs().items():
        np.save(f"{name}.npy", array)


if __name__ == "__main__":
    main()
