"""What a property check may read besides the scheme: one record, shared by the checks, their
footprints and the commands that build it.

Each option a user can give is declared once, as a field of :class:`CheckOptions` made with
:func:`pecli.params.param`: its type, range, default, help and panel. The command-line options of
``check``, ``sweep`` and ``compare``, the YAML keys and the dataclass field all derive from that one
declaration (:func:`check_parameters`), and the analyses' records (:data:`pecli.analysis.registry.ANALYSES`)
name the declarations they read. :func:`check_options` builds the record from resolved values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from pecli.dtypes import DTYPES
from pecli.params import Parameter, dataclass_parameters, param
from pecli.schemes.build import DEFAULT_LENGTH

#: Where ``--help`` lists the check options.
CHECK_PANEL = "Check"


@dataclass(frozen=True)
class CheckOptions:
    """Everything a property check may need besides the scheme; each check reads what it uses.

    The fields declared with :func:`~pecli.params.param` are the options a user gives, in ``--help``'s
    order. The scheme as trained on T positions is ``scheme.at_length(T)``.

    Attributes
    ----------
    length:
        Positions 0 … L − 1 (extrapolation: the test length). A run key, not a check option.
    dtype:
        uniqueness: compare encodings in this dtype (default float64); precision: the low-precision
        dtype (default bfloat16).
    train_length:
        extrapolation along a line: T (default L // 2).
    train_grid:
        extrapolation on a grid (rope-nd, sinusoidal-nd): the training grid, a side per axis, each at
        most the scheme's grid's (default each side halved). A scheme reads the one of ``train_length``
        and ``train_grid`` that fits its positions (``compare`` sets 1-D and grid schemes side by side).
    tol:
        uniqueness: distances at or below it count as collisions.
    shifts:
        composability: the shifts k, whole numbers ≥ 1 (default 1, 2, 4, 8, 64; on cells 1, 2, 4 along
        each axis).
    compute_dtype:
        precision: form the angles in this dtype (the ``computed`` case) instead of casting afterwards.
    strict:
        turn warnings into failures (every check).
    samples:
        force sampled all-pairs scans with this many query positions.
    weights:
        layout: the checkpoint whose q/k projections are read.
    query_scale:
        relativity: the factor the model's attention applies to the query at each position, besides cos
        and sin (a model's logit scale: DeepSeek's mscale², Qwen's log-n); None: none. Set by the
        caller from a model's plan, not an option.
    """

    length: int = DEFAULT_LENGTH
    dtype: str | None = param(
        None, "uniqueness: compare the encodings in this dtype; precision: the low-precision dtype",
        choices=DTYPES, default_text="float64 for uniqueness, bfloat16 for precision", group=CHECK_PANEL,
    )
    train_length: int | None = param(
        None, "extrapolation: training length T", minimum=1,
        default_text="the model's own training length, else L // 2", group=CHECK_PANEL,
    )
    train_grid: tuple[int, ...] | None = param(
        None, "extrapolation on a grid: training cells per axis, H,W or T,H,W (also 14x14)", minimum=1,
        default_text="each side of --grid halved", group=CHECK_PANEL,
    )
    tol: float = param(
        0.0, "uniqueness: encodings within this Euclidean distance collide (0: exact in --dtype)", minimum=0,
        group=CHECK_PANEL,
    )
    shifts: tuple[int, ...] | None = param(
        None, "composability: shifts k", minimum=1, default_text="1,2,4,8,64", group=CHECK_PANEL,
    )
    compute_dtype: str | None = param(
        None, "precision: compute the angles in this dtype instead of casting the exact result", choices=DTYPES,
        group=CHECK_PANEL,
    )
    strict: bool = param(
        False, "turn warnings (unseen angles, untrained buckets) into failures", group=CHECK_PANEL,
    )
    samples: int | None = param(
        None, "sample this many query positions in all-pairs scans", minimum=2, default_text="exact when cheap",
        group=CHECK_PANEL,
    )
    weights: str | None = param(
        None, "layout: the checkpoint of the q/k projections (learned: of the position table)", group=CHECK_PANEL,
    )
    query_scale: Callable[[np.ndarray], np.ndarray] | None = None


def check_parameters() -> dict[str, Parameter]:
    """The declaration of every check option by name, in :class:`CheckOptions`' field order."""
    return dataclass_parameters(CheckOptions)


def reads(*names: str) -> tuple[Parameter, ...]:
    """The declarations of the options ``names``, for an analysis's record; an unknown name is a TypeError."""
    declared = check_parameters()
    unknown = [name for name in names if name not in declared]
    if unknown:
        raise TypeError(f"names: {', '.join(unknown)} is not a check option; options: {', '.join(declared)}")
    return tuple(declared[name] for name in names)


def check_options(values: Mapping[str, Any], **fixed: Any) -> CheckOptions:
    """:class:`CheckOptions` from ``values`` by option name (already coerced by their declarations), and
    ``fixed`` fields (``length``, ``query_scale``); an option absent or None takes its declared default."""
    given = {name: values[name] for name in check_parameters() if values.get(name) is not None}
    return CheckOptions(**{**given, **fixed})
