"""Sweeps: one check over the product of grids of values, a row per point (``pecli sweep``).

A sweep is a :class:`~pecli.sweeps.grid.Grid` of named axes (``base``, ``dim``, ``length``, …), a
:class:`~pecli.sweeps.point.SweepJob` that every point shares (the check and the fixed options), a
runner that runs the points (:mod:`pecli.sweeps.runners`: this process, local processes, Dask) and
optionally a rows file (:mod:`pecli.sweeps.files`) that keeps the finished rows and lets an
interrupted sweep resume. :func:`run_sweep` ties them together; :func:`sweep` is the library's door::

    from pecli.sweeps import sweep
    result = sweep("distinguishability", {"base": [1e4, 1e5], "dim": [64, 128]}, scheme="rope", length=4096)
    result.rows   # one dict per point, in grid order

Nothing here knows the command line.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from pecli.analysis.registry import all_names
from pecli.config import DEFAULT_SCHEME, MEMORY_SETTING, merge
from pecli.errors import ConfigError
from pecli.models.plan import PositionPlan, one_group
from pecli.notebook import Tabular
from pecli.params import choice_error
from pecli.progress import task
from pecli.sweeps.files import RowsFile, open_rows_file
from pecli.sweeps.grid import Grid, build_grid
from pecli.sweeps.point import ERROR, SweepJob, finished, run_point
from pecli.sweeps.runners import DaskCluster, LocalProcesses, in_process

#: What a sweep may run: a registered property, or ``all`` (``layout`` reads weights, not a scheme).
CHECKS = (*all_names(), "all")
#: The run keys a point reads, as ``pecli check``'s.
RUN_KEYS = ("scheme", "length")
#: Bytes a row takes in memory per property it reports (its dict, keys and values; measured: 2.0 KB for
#: one property, 10 KB for all six): a sweep holds every row until it writes the file in grid order.
ROW_BYTES = 2560

#: Figures an unknown ``--metric`` lists (``check all`` has about sixty).
METRICS_LISTED = 16

Runner = Callable[[SweepJob, Iterable[tuple[int, dict[str, Any]]]], Iterable[tuple[int, dict[str, Any]]]]


def check_settings() -> tuple[Any, ...]:
    """The declarations of the keys a point's check reads besides the scheme, as ``pecli check``'s."""
    from pecli.checks import SETTINGS

    return (*SETTINGS, MEMORY_SETTING)


def plan_sweep(check: str, options: Mapping[str, Any], axes: Sequence[tuple[str, list[Any]]],
               plan: PositionPlan | None = None) -> tuple[SweepJob, Grid]:
    """The job and the grid of a sweep: ``check`` over ``axes`` (name, values as given), the other keys
    fixed at ``options`` (merged from a YAML file, options and ``--set``; ``plan``: the model's, when
    they name one). A grid axis takes the place of the fixed option of its key."""
    if check not in CHECKS:
        raise choice_error("check", check, CHECKS)
    from pecli.presets import expand_preset

    options = expand_preset(merge(options))  # aliases resolved (rope_theta is base), a preset's options spelled out
    scheme = options.get("scheme") or (one_group(plan).scheme if plan is not None else DEFAULT_SCHEME)
    settings = check_settings()
    grid = build_grid(axes, str(scheme), [s for s in settings if s is not MEMORY_SETTING])  # a budget is no axis
    fixed = {key: value for key, value in options.items() if key not in grid.names}
    return SweepJob(check, fixed, settings, RUN_KEYS, grid.names, plan), grid


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def runner_for(jobs: int, cluster: str | None = None) -> Runner:
    """The runner of ``--jobs``/``--cluster``: Dask at ``cluster``, else ``jobs`` local processes, else
    (one job) this process."""
    if cluster is not None:
        return DaskCluster(cluster)
    return in_process if jobs <= 1 else LocalProcesses(jobs)


def check_rows_memory(grid: Grid, check: str, budget: int) -> None:
    """Refuse, before any work, a grid whose rows would take more than ``budget`` bytes to hold
    (:data:`ROW_BYTES` per property reported)."""
    from pecli.errors import PecliError
    from pecli.io import size_text

    needed = grid.count * ROW_BYTES * (len(all_names()) if check == "all" else 1)
    if needed > budget:
        raise PecliError(f"the rows of {grid.count:,} points take about {size_text(needed)} of memory, over the budget "
                         f"of {size_text(budget)}; sweep fewer points at a time or raise --max-memory")


def share_memory(job: SweepJob, jobs: int, cluster: str | None) -> SweepJob:
    """``job`` whose points each get 1/``jobs`` of the memory budget when ``jobs`` local processes run
    them side by side (a Dask worker's memory is its own)."""
    if jobs <= 1 or cluster is not None:
        return job
    from pecli.config import memory_budget

    budget = memory_budget(job.options.get("max_memory"))
    return dataclasses.replace(job, options={**job.options, "max_memory": max(1, budget // jobs)})


@dataclass(frozen=True, repr=False)
class SweepResult(Tabular):
    """What a sweep did.

    Attributes
    ----------
    rows:
        One row per point of the grid, in grid order (rows read back from a CSV file hold text).
    written:
        Points measured by this run (their rows appended to the file).
    skipped:
        Points whose row was already in the file (a resumed sweep).
    failed:
        Points of the grid whose row is an error, after this run.
    """

    rows: list[dict[str, Any]]
    written: int
    skipped: int
    failed: int

    @property
    def points(self) -> int:
        return len(self.rows)

    def table_title(self) -> str:
        return f"pecli sweep: {self.points} points ({self.written} run, {self.skipped} resumed, {self.failed} failed)"

    def table_rows(self) -> list[dict[str, Any]]:
        return self.rows


def run_sweep(job: SweepJob, grid: Grid, runner: Runner = in_process, output: RowsFile | None = None) -> SweepResult:
    """Run every point of ``grid`` that ``output`` holds no finished row of, appending each row to
    ``output`` as it finishes; then rewrite ``output`` in grid order (its rows of points outside this
    grid are kept, after the grid's). Progress is reported per point (:func:`pecli.progress.task`).

    A row with an error is run again: only finished rows are skipped.
    """
    previous: dict[int, dict[str, Any]] = {}
    outside: list[dict[str, Any]] = []
    for row in output.previous if output is not None else ():
        index = grid.index_of(row)
        if index is None:
            outside.append(row)
        else:
            previous[index] = row  # the last row of a point is its latest
    skip = {index for index, row in previous.items() if finished(row)}
    computed: dict[int, dict[str, Any]] = {}
    try:
        todo = grid.count - len(skip)
        if todo:
            with task(f"sweep {job.check}", total=todo) as bar:
                for index, row in runner(job, grid.points(skip)):
                    computed[index] = row
                    if output is not None:
                        output.append(row)
                    bar.advance()
        rows = [computed[index] if index in computed else previous[index] for index in range(grid.count)]
        if output is not None:
            output.finish(rows + outside, grid.names)
    finally:
        if output is not None:
            output.close()
    failed = sum(1 for row in rows if not finished(row))
    return SweepResult(rows, written=len(computed), skipped=len(skip), failed=failed)


def sweep(check: str, grid: Mapping[str, Sequence[Any]], *, jobs: int = 1, cluster: str | None = None,
          out: str | os.PathLike | None = None, force: bool = False, **options: Any) -> SweepResult:
    """Run ``check`` over the product of ``grid`` (name → values) with the other keys fixed at
    ``options`` (as ``pecli check`` takes them: ``scheme``, ``length``, ``dim``, ``hf_config``, …).

    ``jobs`` local processes, or the Dask scheduler at ``cluster``; ``out`` a .csv, .jsonl or .parquet
    file that keeps the rows (resumed when it holds this sweep's, replaced only with ``force``).
    Raises :class:`~pecli.errors.ConfigError` for bad input, as the command line does.
    """
    from pecli.config import memory_budget, selected_plan

    plan = selected_plan(options, {s.name: s for s in check_settings()})
    job, built = plan_sweep(check, options, _library_axes(grid), plan)
    budget = memory_budget(options.get("max_memory"))
    output = open_rows_file(out, built.names, job.fingerprint, force=force, max_bytes=budget) if out is not None else None
    check_rows_memory(built, check, budget)
    jobs = min(jobs, built.count)
    job = share_memory(job, jobs, cluster)
    job.check_fixed_options(built)
    return run_sweep(job, built, runner_for(jobs, cluster), output)


def _library_axes(grid: Any) -> list[tuple[str, list[Any]]]:
    """The axes of the library's ``grid`` mapping, each a name and a non-empty list of values.

    Raises
    ------
    TypeError
        ``grid`` is not a mapping, or a name's values are not a list (a string, a number).
    ValueError
        A name lists no values.
    """
    if not isinstance(grid, Mapping):
        raise TypeError(f"grid must be a mapping of names to lists of values, got {type(grid).__name__}")
    axes = []
    for name, values in grid.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise TypeError(f"grid: {name} must map to a list of values, got {type(values).__name__}")
        values = list(values)
        if not values:
            raise ValueError(f"grid: {name} lists no values; give at least one")
        axes.append((str(name), values))
    return axes


def metric_column(rows: Sequence[Mapping[str, Any]], name: str) -> str:
    """The column that ``name`` names: itself, or the one column ending in ``.NAME`` (``step_ratio`` for
    ``distinguishability.step_ratio``)."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    if name in columns:
        return name
    matches = [column for column in columns if column.endswith("." + name)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ConfigError("metric", f"{name} is the name of several columns: {', '.join(matches)}; give one of them")
    figures = [figure for figure in dict.fromkeys(column.rpartition(".")[2] for column in columns if "." in column)
               if figure not in ("verdict", "key_figure")]
    shown = ", ".join(figures[:METRICS_LISTED]) + (f" and {len(figures) - METRICS_LISTED} more" if len(figures) > METRICS_LISTED else "")
    raise ConfigError("metric", f"no column {name!r}; give verdict or a figure of the rows: {shown or 'none (every point failed)'}")


__all__ = [
    "CHECKS", "ERROR", "Grid", "SweepJob", "SweepResult", "check_rows_memory", "default_jobs", "metric_column", "plan_sweep", "run_point",
    "run_sweep", "runner_for", "share_memory", "sweep",
]
