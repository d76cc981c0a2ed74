"""pecli: compute, measure and picture the positional encodings of transformers.

The library API::

    from pecli import build_scheme, encode
    scheme = build_scheme("rope", {"dim": 128, "base": 500000})
    E = encode("sinusoidal", range(16), dim=8)
"""

from __future__ import annotations

from typing import Any, Iterable

__version__ = "0.1.0"


def build_scheme(name: str, params: dict[str, Any] | None = None, *, length: int = 512):
    """Build a registered scheme from its name and parameters (validated as the CLI does)."""
    from pecli.config import build_scheme as _build

    return _build(name, params or {}, length=length)


def encode(name: str, positions: Iterable[int], **params: Any):
    """The main array of scheme ``name`` at ``positions`` (float64), e.g. ``encode("rope", range(8), dim=4)``."""
    import numpy as np

    from pecli.schemes import as_positions

    positions = as_positions(np.fromiter(positions, dtype=np.int64) if not hasattr(positions, "__array__") else positions)
    length = int(positions.max()) + 1 if positions.size else 1
    scheme = build_scheme(name, params, length=length)
    return next(iter(scheme.arrays(positions).values()))


__all__ = ["__version__", "build_scheme", "encode"]
