"""What a property check may read besides the scheme: one record, shared by the checks, their
footprints and the commands that build it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class CheckOptions:
    """Everything a property check may need besides the scheme; each check reads what it uses.

    Attributes
    ----------
    length:
        Positions 0 … L − 1 (extrapolation: the test length).
    dtype:
        uniqueness: compare encodings in this dtype (default float64); precision: the low-precision
        dtype (default bfloat16).
    compute_dtype:
        precision: form the angles in this dtype (the ``computed`` case) instead of casting afterwards.
    tol:
        uniqueness: distances at or below it count as collisions.
    shifts:
        composability: the shifts k (default 1, 2, 4, 8, 64; on cells 1, 2, 4 along each axis).
    train_length:
        extrapolation along a line: T (default L // 2).
    train_grid:
        extrapolation on a grid (rope-nd, sinusoidal-nd): the training grid, a side per axis, each at
        most the scheme's grid's (default each side halved). A scheme reads the one of ``train_length``
        and ``train_grid`` that fits its positions (``compare`` sets 1-D and grid schemes side by side).
    strict:
        turn warnings into failures.
    samples:
        force sampled all-pairs scans with this many query positions.

    The scheme as trained on T positions is ``scheme.at_length(T)``.
    """

    length: int = 512
    dtype: str | None = None
    compute_dtype: str | None = None
    tol: float = 0.0
    shifts: tuple[int, ...] | None = None
    train_length: int | None = None
    train_grid: tuple[int, ...] | None = None
    strict: bool = False
    samples: int | None = None
    #: relativity: the factor the model's attention applies to the query at each position, besides cos
    #: and sin (a model's logit scale: DeepSeek's mscale², Qwen's log-n); None: none.
    query_scale: Callable[[np.ndarray], np.ndarray] | None = None
