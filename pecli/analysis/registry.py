"""The registry of ``pecli check``'s properties, :data:`ANALYSES`, and running them.

A table of frozen records, each with a name, a one-line summary and a ``run(scheme, options)``
function with the same signature, so that every analysis works on every scheme through one interface.
A record names the options it reads by their declarations (:mod:`pecli.analysis.options`), from which
the commands derive what they accept. ``all`` runs the properties of the scheme (:func:`all_names`);
``layout``, a property of a checkpoint's weights, is run by name only. Each check returns a
:class:`~pecli.analysis.result.PropertyResult` (verdict, reason, figures).
Before any work, :func:`estimate_check_bytes` bounds the memory a set of checks will hold.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np

from pecli.progress import task

from pecli.analysis.options import CheckOptions, reads

from pecli.analysis.composability import check_composability
from pecli.analysis.composability_grid import check_grid_composability
from pecli.analysis.distinguishability import check_distinguishability
from pecli.analysis.distinguishability_grid import check_grid_distinguishability
from pecli.analysis.encoding_pass import Accumulator, same_encoding, shared_pass
from pecli.analysis.extrapolation import check_extrapolation
from pecli.analysis.extrapolation_grid import check_grid_extrapolation
from pecli.analysis.precision import check_precision
from pecli.analysis.relativity import check_relativity
from pecli.analysis.relativity_grid import check_grid_relativity
from pecli.analysis.result import VERDICTS, CheckReport, PropertyResult
from pecli.analysis.footprints import (
    Footprint, composability_footprint, distinguishability_footprint, extrapolation_footprint, generic_footprint,
    precision_footprint, relativity_footprint, run_footprint, uniqueness_footprint,
)
from pecli.analysis.structure import has_vectors
from pecli.analysis.uniqueness import check_uniqueness
from pecli.errors import PecliError, PositionError
from pecli.params import Parameter
from pecli.schemes.base import Scheme


@dataclass(frozen=True)
class AnalysisInfo:
    """A registered property check."""

    name: str
    summary: str
    run: Callable[[Scheme, CheckOptions], PropertyResult]
    #: The declarations of the :class:`CheckOptions` fields it reads besides ``length`` and ``strict``
    #: (:func:`~pecli.analysis.options.reads`): what a command accepts for it; any other option is refused.
    options: tuple[Parameter, ...] = ()
    #: Its :data:`Footprint` for (scheme, options); None: a generous default (:func:`generic_footprint`).
    footprint: Callable[[Scheme, CheckOptions], Footprint] | None = None
    #: Whether it is defined for n-D schemes (positions with several coordinates, :attr:`Scheme.has_cells`);
    #: otherwise it measures positions along a line, and on such a scheme its result is ``n/a``.
    any_rank: bool = False
    #: Whether, though not of any rank, it is also defined on the cells of a grid (:attr:`Scheme.on_grid`):
    #: extrapolation, from a training grid to a larger one. ``n/a`` on other n-D positions (a sequence's ids).
    on_grids: bool = False
    #: Why it is ``n/a`` on an n-D scheme it does not apply to, when there is more to say than the rank.
    cells_reason: str = ""
    #: Whether it measures positions past what the scheme was trained on (extrapolation); the others
    #: are measured on the rows a table has when L runs past them (:func:`within_table`).
    past_training: bool = False
    #: What it computes from a vector scheme's rows, as accumulators of the one pass over them that
    #: the checks of a run share (:mod:`pecli.analysis.encoding_pass`); None: nothing, or its own pass.
    rows: Callable[[Scheme, CheckOptions], Sequence[Accumulator]] | None = None
    #: Whether ``all`` runs it: a property of the scheme. ``layout`` measures a checkpoint's weights
    #: (``--weights``), so it is asked for by name only, and is not listed among a scheme's properties.
    in_all: bool = True

    @property
    def option_names(self) -> tuple[str, ...]:
        return tuple(option.name for option in self.options)

    def applies_to(self, scheme: Scheme) -> bool:
        """Whether the property is defined for ``scheme``'s positions."""
        return self.any_rank or not scheme.has_cells or (self.on_grids and scheme.on_grid)

    def estimate_bytes(self, scheme: Scheme, options: CheckOptions) -> int:
        """An upper estimate of the peak bytes the check holds on (scheme, options), run on its own
        (the encoding it reads included), known before any work starts."""
        return sum(self._footprint(scheme, options))

    def _footprint(self, scheme: Scheme, options: CheckOptions) -> Footprint:
        return (self.footprint or generic_footprint)(scheme, options)


def _uniqueness_rows(scheme: Scheme, o: CheckOptions) -> list[Accumulator]:
    from pecli.analysis.uniqueness import uniqueness_rows

    return uniqueness_rows(scheme, o.length, o.dtype or "float64", o.samples)


def _distinguishability_rows(scheme: Scheme, o: CheckOptions) -> list[Accumulator]:
    from pecli.analysis.distinguishability import distinguishability_rows

    return [] if scheme.has_cells else distinguishability_rows(scheme, o.length, o.samples)


def _relativity_rows(scheme: Scheme, o: CheckOptions) -> list[Accumulator]:
    from pecli.analysis.relativity import DistanceScores

    return [] if scheme.has_cells or o.length < 2 else [DistanceScores(scheme, o.length, None, o.samples, o.query_scale)]


def _extrapolation_rows(scheme: Scheme, o: CheckOptions) -> list[Accumulator]:
    """The trained scheme's value ranges and hashes, when it encodes like the scheme (its rows are the pass's)."""
    from pecli.analysis.extrapolation import default_train_length, extrapolation_rows

    if scheme.on_grid or (o.train_length is None and (scheme.training_length or 0) >= o.length):
        return []
    train_length = o.train_length or default_train_length(o.length, scheme)
    if not 1 <= train_length < o.length:
        return []
    trained = scheme.at_length(train_length)
    return extrapolation_rows(trained, train_length, o.length) if same_encoding(trained, scheme) else []


def _precision_rows(scheme: Scheme, o: CheckOptions) -> list[Accumulator]:
    from pecli.analysis.precision import precision_rows

    return precision_rows(scheme, o.length, o.dtype, o.compute_dtype)


def _uniqueness(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    return check_uniqueness(scheme, o.length, dtype=o.dtype or "float64", tol=o.tol, samples=o.samples)


def _distinguishability(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    if scheme.has_cells:
        return check_grid_distinguishability(scheme, samples=o.samples)
    return check_distinguishability(scheme, o.length, samples=o.samples)


def _composability(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    if scheme.has_cells:
        return check_grid_composability(scheme, shifts=o.shifts)
    return check_composability(scheme, o.length, shifts=o.shifts)


def _relativity(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    if scheme.has_cells:
        return check_grid_relativity(scheme, samples=o.samples)
    return check_relativity(scheme, o.length, samples=o.samples, query_scale=o.query_scale)


def _extrapolation(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    if scheme.on_grid:
        return check_grid_extrapolation(scheme, train_grid=o.train_grid)
    return check_extrapolation(scheme, o.length, train_length=o.train_length)


def _precision(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    return check_precision(scheme, o.length, dtype=o.dtype, compute_dtype=o.compute_dtype)


def _layout(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    from pecli.analysis.layout import run_layout  # reads checkpoints: loaded when asked for

    return run_layout(scheme, o)


def _layout_footprint(scheme: Scheme, o: CheckOptions) -> Footprint:
    from pecli.analysis.layout import layout_footprint

    return layout_footprint(scheme, o)


#: Every property check, by name, in the order ``check all`` runs them.
ANALYSES: dict[str, AnalysisInfo] = {
    info.name: info
    for info in (
        AnalysisInfo(
            "uniqueness", "no two positions (distances) share an encoding", _uniqueness, reads("dtype", "tol", "samples"),
            uniqueness_footprint, any_rank=True, rows=_uniqueness_rows,
        ),
        AnalysisInfo(
            "distinguishability", "adjacent positions differ evenly; nearest neighbours are p ± 1", _distinguishability,
            reads("samples"), distinguishability_footprint, any_rank=True, rows=_distinguishability_rows,
        ),
        AnalysisInfo(
            "composability", "a fixed linear map takes E_p to E_(p+k)", _composability, reads("shifts"), composability_footprint,
            any_rank=True,
        ),
        AnalysisInfo(
            "relativity", "the position-only score depends on n − m only", _relativity, reads("samples"), relativity_footprint,
            any_rank=True, rows=_relativity_rows,
        ),
        AnalysisInfo(
            "extrapolation", "positions past the training length are defined, bounded, unique", _extrapolation,
            reads("train_length", "train_grid"), extrapolation_footprint, past_training=True, on_grids=True,
            cells_reason=(
                "defined for positions along a line and for the cells of a grid (trained on a smaller grid, "
                "--train-grid); {name}'s positions are the ids of {cells}, not the cells of a box, and which ids "
                "training saw along each axis is not given by its options"
            ),
            rows=_extrapolation_rows,
        ),
        AnalysisInfo(
            "precision", "positions stay apart in a low-precision dtype", _precision, reads("dtype", "compute_dtype"),
            precision_footprint, any_rank=True, rows=_precision_rows,
        ),
        AnalysisInfo(
            "layout", "a checkpoint's q/k weights were trained in the configured RoPE layout", _layout,
            reads("weights"), _layout_footprint, any_rank=True, in_all=False,
        ),
    )
}


def all_names() -> tuple[str, ...]:
    """The properties ``all`` runs, in the registry's order: every property of the scheme itself."""
    return tuple(name for name, info in ANALYSES.items() if info.in_all)


def properties() -> tuple[str, ...]:
    """What ``pecli check`` accepts: the properties ``all`` runs, ``all``, then those asked for by name only."""
    return (*all_names(), "all", *(name for name, info in ANALYSES.items() if not info.in_all))


#: :func:`properties` of the registry as built in.
PROPERTIES: tuple[str, ...] = properties()


def get_analysis(name: str) -> AnalysisInfo:
    """The registered analysis ``name``."""
    try:
        return ANALYSES[name]
    except KeyError:
        raise PecliError(f"unknown property {name!r}; valid: {', '.join(properties())}") from None


def _names(names: str | Sequence[str]) -> list[str]:
    if isinstance(names, str):
        return list(all_names()) if names == "all" else [names]
    return list(names)


def estimate_check_bytes(scheme: Scheme, names: str | Sequence[str], options: CheckOptions | None = None) -> int:
    """An upper estimate of the peak bytes :func:`run_checks` holds for (scheme, names, options).

    What the checks share (the scheme's remembered (L, d) encoding, or the results of the one pass over
    a streamed scheme's rows, :func:`~pecli.analysis.footprints.run_footprint`) plus the largest working
    memory of any one check. It reads only the scheme's shape (width, channels), its parameters and the
    options: nothing is encoded.
    """
    options = on_own_positions(scheme, options or CheckOptions())
    footprints = [
        get_analysis(name)._footprint(scheme, options) for name in _names(names) if get_analysis(name).applies_to(scheme)
    ]
    cells = 8 * scheme.position_rank * options.length if scheme.has_cells else 0  # an n-D scheme's ids
    return cells + run_footprint(scheme, footprints)


def run_checks(
    scheme: Scheme, names: str | Sequence[str], options: CheckOptions | None = None, *, label: str = ""
) -> list[PropertyResult]:
    """Run the named checks (``"all"`` for every one) and return their results, ``--strict`` applied.

    Each check is reported as a :func:`pecli.progress.task` (``label`` goes before its name).
    """
    options = on_own_positions(scheme, options or CheckOptions())
    names = _names(names)
    results = []
    with shared_rows(scheme, names, options, label=label):
        for number, name in enumerate(names, 1):
            results.append(_run_one(scheme, name, options, f"{label}{name} ({number}/{len(names)})"))
    return [r.strict() for r in results] if options.strict else results


def _run_one(scheme: Scheme, name: str, options: CheckOptions, label: str) -> PropertyResult:
    """One check, reported as a task (``n/a`` where it does not apply, on a table's rows where L runs past them)."""
    analysis = get_analysis(name)
    if not analysis.applies_to(scheme):
        return not_applicable(name, scheme)
    within = None if analysis.past_training else within_table(scheme, options)
    with task(label):
        if within is None:
            return analysis.run(scheme, options)
        # a table's rows end before L: measured on them, extrapolation judges the rest
        result = analysis.run(scheme, within)
        note = f"measured on positions 0 … {within.length - 1}, the rows the table has (see extrapolation for the rest)"
        return dataclasses.replace(result, notes=(*result.notes, note))


@contextlib.contextmanager
def shared_rows(
    scheme: Scheme, names: str | Sequence[str], options: CheckOptions, *, label: str = "", extra: Sequence[Accumulator] = (),
) -> Iterator[None]:
    """Inside, the checks ``names`` of a vector scheme read what they compute from its rows (and
    ``extra``) from one pass over them (:func:`~pecli.analysis.encoding_pass.shared_pass`), made here.

    A pass that meets bad input (positions the scheme cannot encode) is dropped: each check then meets
    it in its own way, as it would alone.
    """
    wanted = list(extra)
    if has_vectors(scheme):
        for name in _names(names):
            analysis = get_analysis(name)
            if analysis.rows is not None and analysis.applies_to(scheme) and (analysis.past_training or within_table(scheme, options) is None):
                wanted += analysis.rows(scheme, options)
    with contextlib.ExitStack() as stack:
        if wanted and has_vectors(scheme):
            try:
                stack.enter_context(shared_pass(scheme, options.length, wanted, label=label))
            except PecliError:
                pass
        yield


def within_table(scheme: Scheme, options: CheckOptions) -> CheckOptions | None:
    """``options`` cut to the rows of a scheme's table (a checkpoint's learned positions) when positions
    0 … L − 1 run past them; None when the scheme encodes them all."""
    if scheme.has_cells or not scheme.model_length or scheme.model_length >= options.length:
        return None
    try:
        scheme.check_positions(np.array([options.length - 1]))
    except PositionError:
        return dataclasses.replace(options, length=int(scheme.model_length))
    return None


def on_own_positions(scheme: Scheme, options: CheckOptions) -> CheckOptions:
    """``options`` with the length of an n-D scheme's own cells (a grid's, a sequence's), whatever was asked."""
    if not scheme.has_cells:
        return options
    return dataclasses.replace(options, length=scheme.cell_count)


def not_applicable(name: str, scheme: Scheme) -> PropertyResult:
    """The ``n/a`` result of property ``name`` on a scheme whose positions it is not defined for."""
    able = ", ".join(info.name for info in ANALYSES.values() if info.in_all and info.applies_to(scheme))
    reason = ANALYSES[name].cells_reason if name in ANALYSES else ""
    return PropertyResult(
        name, "n/a",
        reason.format(name=scheme.name, cells=scheme.cells_text()) or f"defined for positions along a line; {scheme.name} has {scheme.position_rank}-D positions",
        notes=(f"properties that apply to {scheme.name}: {able}",),
    )


def check_report(scheme: Scheme, names: str | Sequence[str], options: CheckOptions | None = None) -> CheckReport:
    """:func:`run_checks` with what the report says about the scheme: what ``pecli check`` prints."""
    options = on_own_positions(scheme, options or CheckOptions())
    results = run_checks(scheme, names, options)
    asked = names if isinstance(names, str) else ", ".join(names)
    return CheckReport(scheme.name, scheme.kind, scheme.params(), options.length, asked, tuple(results))


__all__ = [
    "ANALYSES", "PROPERTIES", "VERDICTS", "AnalysisInfo", "CheckOptions", "CheckReport", "PropertyResult", "all_names",
    "check_report", "estimate_check_bytes", "get_analysis", "not_applicable", "properties", "run_checks",
]
