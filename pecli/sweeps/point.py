"""One point of a sweep: the fixed options with the point's values, one check, one flat row.

:class:`SweepJob` holds what every point shares — the check, the fixed options as the user gave them
(``--config``, the command line, ``--set``), the declarations of the check's settings, and the model's
plan when a config.json was read — and pickles, so that :func:`run_point` runs the same way in this
process, in a pool of processes or on a Dask worker. A point is resolved exactly as ``pecli check``
resolves its options, with the point's values over the fixed ones: the row holds the verdict and the
figures ``pecli check … --json`` prints for the same options, or the error that stopped the point.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from typing import Any, Mapping

from pecli.analysis.result import CheckReport
from pecli.config import Spec, merge, resolve
from pecli.errors import ConfigError, PecliError
from pecli.models.plan import PositionPlan
from pecli.params import Parameter
from pecli.sweeps.grid import Grid, cell_value

#: The verdict of a point that could not be measured; its ``error`` column says why.
ERROR = "error"
#: Columns of every row between the grid values and the figures.
SWEEP, VERDICT, ERROR_COLUMN = "sweep", "verdict", "error"
#: Keys of the fixed options that change how a sweep runs, not what a point measures: left out of its fingerprint.
RUN_ONLY = ("max_memory",)


@dataclass(frozen=True)
class SweepJob:
    """What every point of a sweep shares; picklable.

    Attributes
    ----------
    check:
        A registered property, or ``all``.
    options:
        The fixed options, merged from ``--config``, the command line and ``--set`` (raw values; each
        point resolves them with its own values over them).
    settings:
        The declarations of the keys a check reads besides the scheme (:data:`pecli.checks.SETTINGS`
        and ``max_memory``).
    run_keys:
        The run keys the points read (``scheme``, ``length``).
    axes:
        The grid's names, the first columns of every row.
    plan:
        The model's position plan, narrowed to one layer group, when the options name a model.
    """

    check: str
    options: Mapping[str, Any]
    settings: tuple[Parameter, ...]
    run_keys: tuple[str, ...]
    axes: tuple[str, ...]
    plan: PositionPlan | None = None

    @functools.cached_property
    def fingerprint(self) -> str:
        """12 hex digits naming what the rows measure: the check, the fixed options (as given) and the
        grid's names. A file whose rows carry another fingerprint holds another sweep."""
        fixed = canonical({key: value for key, value in self.options.items() if key not in RUN_ONLY}, self.settings)
        text = json.dumps({"check": self.check, "options": fixed, "axes": sorted(self.axes)}, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def spec(self, point: Mapping[str, Any]) -> Spec:
        """The point's :class:`Spec`: the fixed options with the point's values over them, resolved as
        ``pecli check`` resolves its options."""
        return resolve(merge(self.options, point), self.settings, run_keys=self.run_keys, plan=self.plan)

    def head(self, point: Mapping[str, Any]) -> dict[str, Any]:
        """The first columns of a point's row: its grid values and the sweep's fingerprint."""
        return {**{name: cell_value(point[name]) for name in self.axes}, SWEEP: self.fingerprint}

    def check_fixed_options(self, grid: Grid) -> None:
        """Refuse, before any work, fixed options that no point can run with: the first point is
        resolved and its check prepared (nothing measured); an error naming a key that is not a grid
        axis is the fixed options'. An error of an axis's key, or a point over the memory budget, is
        that point's, and goes in its row."""
        from pecli.checks import prepared_check

        try:
            prepared_check(self.spec(grid.point(0)), self.check)
        except ConfigError as error:
            if error.key not in grid.names:
                raise
        except PecliError:
            pass


def canonical(options: Mapping[str, Any], settings: tuple[Parameter, ...]) -> dict[str, Any]:
    """``options`` with each value of a declared key as its declaration reads it (``1e4`` and ``10000``
    are one base), so that the same options spelled otherwise make the same fingerprint."""
    from pecli.schemes import SCHEMES
    from pecli.sweeps.grid import grid_keys

    known, _ = grid_keys(SCHEMES, settings)
    out = {}
    for key, value in options.items():
        try:
            out[key] = cell_value(known[key].coerce(value)) if key in known and value is not None else value
        except ConfigError:
            out[key] = value
    return out


def run_point(job: SweepJob, point: Mapping[str, Any]) -> dict[str, Any]:
    """Measure one point and return its row; a point that fails returns a row with its error instead.

    The row: the grid values, ``sweep`` (:attr:`SweepJob.fingerprint`), ``verdict`` (the report's, as
    ``check --json``; ``error`` when the point failed), ``error`` (null, or the message), then per
    property ``PROPERTY.verdict``, ``PROPERTY.key_figure``, ``PROPERTY.sampled`` (whether a figure was
    estimated from a sample of positions) and ``PROPERTY.FIGURE`` for each figure (a list or mapping as
    its JSON text). BLAS runs on one thread (the points run side by side), and the
    check's own progress is not reported (the sweep reports points).
    """
    from pecli.analysis.structure import forget_vectors, one_blas_thread
    from pecli.checks import prepared_check
    from pecli.progress import Silent, reporting

    head = job.head(point)
    try:
        with reporting(Silent()), one_blas_thread():
            report = prepared_check(job.spec(point), job.check)()
    except MemoryError:
        return error_row(head, "out of memory")
    except Exception as error:  # a failing point is a row with its error, never a crashed sweep
        return error_row(head, error_text(error))
    finally:
        forget_vectors()
    return {**head, VERDICT: report.verdict, ERROR_COLUMN: None, **result_columns(report)}


def error_row(head: Mapping[str, Any], message: str) -> dict[str, Any]:
    """The row of a point that could not be measured."""
    return {**head, VERDICT: ERROR, ERROR_COLUMN: message}


def error_text(error: BaseException) -> str:
    """An exception as one line: pecli's own errors as they read on the command line, others with their type."""
    text = str(error) if isinstance(error, PecliError) else f"{type(error).__name__}: {error}"
    return " ".join(text.split())


def result_columns(report: CheckReport) -> dict[str, Any]:
    """``PROPERTY.verdict``, ``PROPERTY.key_figure``, ``PROPERTY.sampled`` and ``PROPERTY.FIGURE`` of
    every result, in the report's order (the figures as ``check --json`` holds them; lists and mappings as JSON text)."""
    columns: dict[str, Any] = {}
    for result in report.results:
        columns[f"{result.property}.verdict"] = result.verdict
        columns[f"{result.property}.key_figure"] = result.key_figure
        columns[f"{result.property}.sampled"] = result.sampled
        for name, value in result.figures.items():
            columns[f"{result.property}.{name}"] = cell_value(value)
    return columns


def finished(row: Mapping[str, Any]) -> bool:
    """Whether a row holds a measurement (a resumed sweep skips its point) rather than an error."""
    return row.get(VERDICT) not in (ERROR, None, "")


__all__ = ["ERROR", "SweepJob", "error_row", "error_text", "finished", "result_columns", "run_point"]
