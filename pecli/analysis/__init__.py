"""Measurements of positional encodings: pure functions over schemes and arrays.

The property checks of ``pecli check`` live in one registry, :data:`ANALYSES`: a table of frozen
records, each with a name, a one-line summary and a ``run(scheme, options)`` function with the same
signature, so that every analysis works on every scheme through one interface::

    from pecli.analysis import CheckOptions, run_checks
    results = run_checks(scheme, "all", CheckOptions(length=1024))

Each check returns a :class:`~pecli.analysis.result.PropertyResult` (verdict, reason, figures).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from pecli.analysis.composability import check_composability
from pecli.analysis.distinguishability import check_distinguishability
from pecli.analysis.extrapolation import check_extrapolation
from pecli.analysis.precision import check_precision
from pecli.analysis.relativity import check_relativity
from pecli.analysis.result import VERDICTS, CheckReport, PropertyResult
from pecli.analysis.uniqueness import check_uniqueness
from pecli.errors import PecliError
from pecli.schemes.base import Scheme


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
        composability: the shifts k (default 1, 2, 4, 8, 64).
    train_length:
        extrapolation: T (default L // 2).
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
    strict: bool = False
    samples: int | None = None


@dataclass(frozen=True)
class AnalysisInfo:
    """A registered property check."""

    name: str
    summary: str
    run: Callable[[Scheme, CheckOptions], PropertyResult]
    #: The :class:`CheckOptions` fields it reads besides ``length`` and ``strict``.
    options: tuple[str, ...] = ()


def _uniqueness(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    return check_uniqueness(scheme, o.length, dtype=o.dtype or "float64", tol=o.tol, samples=o.samples)


def _distinguishability(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    return check_distinguishability(scheme, o.length, samples=o.samples)


def _composability(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    return check_composability(scheme, o.length, shifts=o.shifts)


def _relativity(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    return check_relativity(scheme, o.length, samples=o.samples)


def _extrapolation(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    return check_extrapolation(scheme, o.length, train_length=o.train_length)


def _precision(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    return check_precision(scheme, o.length, dtype=o.dtype, compute_dtype=o.compute_dtype)


#: Every property check, by name, in the order ``check all`` runs them.
ANALYSES: dict[str, AnalysisInfo] = {
    info.name: info
    for info in (
        AnalysisInfo("uniqueness", "no two positions (distances) share an encoding", _uniqueness, ("dtype", "tol", "samples")),
        AnalysisInfo("distinguishability", "adjacent positions differ evenly; nearest neighbours are p ± 1", _distinguishability, ("samples",)),
        AnalysisInfo("composability", "a fixed linear map takes E_p to E_(p+k)", _composability, ("shifts",)),
        AnalysisInfo("relativity", "the position-only score depends on n − m only", _relativity, ("samples",)),
        AnalysisInfo("extrapolation", "positions past the training length are defined, bounded, unique", _extrapolation, ("train_length",)),
        AnalysisInfo("precision", "positions stay apart in a low-precision dtype", _precision, ("dtype", "compute_dtype")),
    )
}

#: What ``pecli check`` accepts: every registered property, and ``all``.
PROPERTIES: tuple[str, ...] = (*ANALYSES, "all")


def get_analysis(name: str) -> AnalysisInfo:
    """The registered analysis ``name``."""
    try:
        return ANALYSES[name]
    except KeyError:
        raise PecliError(f"unknown property {name!r}; valid: {', '.join(PROPERTIES)}") from None


def run_checks(scheme: Scheme, names: str | Sequence[str], options: CheckOptions | None = None) -> list[PropertyResult]:
    """Run the named checks (``"all"`` for every one) and return their results, ``--strict`` applied."""
    options = options or CheckOptions()
    if isinstance(names, str):
        names = list(ANALYSES) if names == "all" else [names]
    results = [get_analysis(name).run(scheme, options) for name in names]
    return [r.strict() for r in results] if options.strict else results


def check_report(scheme: Scheme, names: str | Sequence[str], options: CheckOptions | None = None) -> CheckReport:
    """:func:`run_checks` with what the report says about the scheme: what ``pecli check`` prints."""
    options = options or CheckOptions()
    results = run_checks(scheme, names, options)
    asked = names if isinstance(names, str) else ", ".join(names)
    return CheckReport(scheme.name, scheme.kind, scheme.params(), options.length, asked, tuple(results))


__all__ = [
    "ANALYSES", "PROPERTIES", "VERDICTS", "AnalysisInfo", "CheckOptions", "CheckReport", "PropertyResult",
    "check_report", "get_analysis", "run_checks",
]
