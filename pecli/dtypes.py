"""The floating-point dtypes pecli writes and analyses, bfloat16 included (through ml_dtypes)."""

from __future__ import annotations

import numpy as np

#: Names accepted by ``--dtype``, widest first.
DTYPES = ("float64", "float32", "float16", "bfloat16")


def numpy_dtype(name: str) -> np.dtype:
    """The NumPy dtype for ``name``; bfloat16 comes from ``ml_dtypes``."""
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def cast(array: np.ndarray, name: str) -> np.ndarray:
    """Round a float array to dtype ``name`` (round to nearest even); integer arrays are kept."""
    if array.dtype.kind in "iub":
        return array
    return np.asarray(array).astype(numpy_dtype(name), copy=False)


def storable(array: np.ndarray) -> np.ndarray:
    """An array ``np.save`` can write portably: bfloat16 values are widened, exactly, to float32."""
    if array.dtype.kind == "V" or array.dtype.name == "bfloat16":
        return array.astype(np.float32)
    return array
