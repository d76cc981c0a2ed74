"""The quick facts ``pecli encode`` reports about the array it computed."""

from __future__ import annotations

from typing import Any

import numpy as np

from pecli.analysis.structure import collisions
from pecli.schemes.base import Scheme


def position_rows(scheme: Scheme, main: np.ndarray) -> np.ndarray:
    """One row per position: the encoding of additive/rotary schemes, the bias row of a query otherwise.

    ``main`` is the scheme's main array; alibi's (H, L, L) bias becomes (L, H·L), relative's
    (L, L, d) embeddings become (L, L·d).
    """
    if scheme.main_key == "bias":
        main = np.moveaxis(main, 0, 1)
    return main.reshape(main.shape[0], -1)


def summarize(scheme: Scheme, positions: np.ndarray, main: np.ndarray) -> dict[str, Any]:
    """Shape, dtype, bytes, value range, smallest step between adjacent positions and collisions.

    ``main`` is the main array already cast to the output dtype, so collisions are those of that dtype.
    """
    rows = position_rows(scheme, main)
    wide = rows.astype(np.float64) + 0.0  # −0.0 reads as 0.0
    facts: dict[str, Any] = {
        "shape": list(main.shape),
        "dtype": str(main.dtype),
        "bytes": int(main.nbytes),
        "min": float(wide.min()) if wide.size else None,
        "max": float(wide.max()) if wide.size else None,
    }
    if rows.shape[0] > 1:
        steps = np.linalg.norm(np.diff(wide, axis=0), axis=1)
        at = int(np.argmin(steps))
        facts["min_adjacent_distance"] = float(steps[at])
        facts["min_adjacent_pair"] = [int(positions[at]), int(positions[at + 1])]
        # Shift-invariant encodings (sinusoidal, rope) step by the same distance everywhere: naming
        # the pair with the smallest one would only name rounding noise.
        facts["adjacent_distance_constant"] = bool(np.ptp(steps) <= 1e-9 * max(float(steps.max()), 1e-300))
    else:
        facts["min_adjacent_distance"] = None
        facts["min_adjacent_pair"] = None
        facts["adjacent_distance_constant"] = None
    facts["colliding_positions"] = collisions(rows).repeated
    return facts
