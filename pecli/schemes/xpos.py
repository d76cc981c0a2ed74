"""xPos (Sun et al., "A Length-Extrapolatable Transformer", 2022): rotary pairs whose queries are scaled by
``ζ_i^((p − L//2)/B)`` and keys by its inverse, so that ``q_m·k_n`` carries ``ζ_i^((m − n)/B)``, a decay with
the distance (:class:`~pecli.schemes.rope.RopeScheme` with ``xpos``)."""

from __future__ import annotations

import numpy as np

from pecli.errors import PecliError, PositionError
from pecli.schemes.positions import position_text

#: Largest |log| of an xPos factor: the analyses' products of such vectors (Gram determinants, up to
#: e^±4·150 times the squared count) stay within float64 (e^±709). With B = 512: |p − L//2| up to 61,000.
XPOS_EXPONENT_LIMIT = 150.0


def xpos_zeta(rotated_dim: int) -> np.ndarray:
    """xPos's per-pair ratio ``ζ_i = (2i + 0.4r)/(1.4r)``, i = 0 … r/2 − 1, in (0.28, 1)."""
    r = rotated_dim
    return (np.arange(0, r, 2, dtype=np.float64) + 0.4 * r) / (1.4 * r)


def xpos_factors(positions: np.ndarray, rotated_dim: int, context: int | None, scale_base: float, *,
                 keys: bool = False) -> np.ndarray:
    """The (N, r/2) xPos factors ``ζ_i^((p − L//2)/B)`` of the queries at ``positions`` (``keys``: their
    inverses), with ``L`` the sequence length ``context`` and ``B`` the scale base.

    Notes
    -----
    The centre ``L//2`` cancels in ``q_m·k_n`` and keeps the factors near 1 (x-transformers'
    ``RotaryEmbedding``, ``max_pos = t.max() + 1``; lucidrains' rotary-embedding-torch, ``len(t)``). Each
    vector's norm depends on its absolute position. Factors past e^±:data:`XPOS_EXPONENT_LIMIT` are refused.
    """
    if context is None:
        raise PecliError("xPos needs the sequence length L (context) for its centre L//2")
    zeta = xpos_zeta(rotated_dim)
    power = (positions.astype(np.float64) - context // 2) / scale_base
    # ζ_0 is the smallest ratio: its factor is the largest (or smallest) of each position's.
    extreme = np.abs(power) * -np.log(zeta[0])
    if extreme.size and extreme.max() > XPOS_EXPONENT_LIMIT:
        p = positions[int(np.argmax(extreme))]
        raise PositionError(
            f"xPos factors ζ^((p − L//2)/B) reach e^±{extreme.max():.0f} at position {position_text(p)} (L = {context:,}, "
            f"B = {scale_base:g}), past what float64 scores hold (e^±{XPOS_EXPONENT_LIMIT:.0f}): use a larger --xpos or fewer positions"
        )
    return np.power(zeta[None, :], (-power if keys else power)[:, None])
