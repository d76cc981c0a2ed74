"""``pecli sweep CHECK --grid NAME=V1,V2,…``: one check over the product of grids, a row per point.

The command parses; :mod:`pecli.sweeps` builds the grid, runs the points (here, in local processes or
on Dask) and keeps the rows file; :mod:`pecli.render.sweep` and :mod:`pecli.render.figures.sweep` draw
the table and the heatmap. Every scheme option means what it means for ``pecli check``: the options
are merged the same way (``--config``, the command line, ``--set``), then each point is resolved with
its grid values over them, as ``check`` resolves its own.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Mapping, Optional

import typer

from pecli.analysis.options import check_parameters
from pecli.cli import completion
from pecli.cli.common import (
    OUTPUT_PANEL, ForceOption, JsonOption, QuietOption, SchemeCommand, errors_to_exit, message, print_json, stdout_console,
)
from pecli.cli.options import plain_flag
from pecli.config import Setting, memory_budget
from pecli.errors import ConfigError

if TYPE_CHECKING:
    from pecli.models.plan import PositionPlan

SWEEP_PANEL = "Sweep"

#: The sweep's own keys (options, and keys of a --config file); the check's come first.
OWN_SETTINGS = (
    Setting("out", Path, None, "rows file: .csv, .jsonl or .parquet; resumed when it holds this sweep's rows",
            default_text="a table on stdout", group=OUTPUT_PANEL),
    Setting("plot", Path, None, "a heatmap of the two grid axes: .png, .svg or .pdf", group=OUTPUT_PANEL),
    Setting("metric", str, None, "the column the heatmap and the table show, e.g. step_ratio", default_text="verdict",
            group=OUTPUT_PANEL),
    Setting("jobs", int, None, "run the points in N local processes, which share --max-memory", minimum=1,
            default_text="the cores", group=SWEEP_PANEL),
    Setting("cluster", str, None, "send the points to the Dask scheduler at ADDRESS (needs pecli[dask])",
            group=SWEEP_PANEL),
)
SETTINGS = (*check_parameters().values(), *OWN_SETTINGS)  # the check's (pecli.checks.SETTINGS), then the sweep's

#: A ``--grid`` value without ``NAME=``: the cells of rope-nd or sinusoidal-nd, as in every command.
CELLS = re.compile(r"\[?\s*\d+(\s*[x,]\s*\d+)*\s*\]?")

GridOption = Annotated[Optional[list[str]], typer.Option(
    "--grid", "-g", metavar="NAME=V1,V2,…", rich_help_panel=SWEEP_PANEL, show_default=False,
    help="a grid axis: a key and its values (repeatable; the points are the product); without NAME=, "
         "the cells of rope-nd or sinusoidal-nd, as in every command",
)]
YesOption = plain_flag("--yes", "-y", help="run a grid of 10^6 points or more", panel=SWEEP_PANEL)


@dataclasses.dataclass(frozen=True)
class SweepRequest:
    """What ``sweep`` receives in place of a resolved spec: the merged options and the model's plan
    (each point is resolved on its own, with its grid values)."""

    options: Mapping[str, Any]
    plan: PositionPlan | None


class SweepCommand(SchemeCommand):
    """The scheme options of every command, with two differences: ``--grid NAME=…`` entries are axes
    (one entry without ``NAME=`` stays the cells of an n-D scheme), and the command gets the merged
    options rather than one resolved spec."""

    def __call__(self, **kwargs: Any) -> Any:
        entries = kwargs.get("grid") or []
        cells = [entry for entry in entries if "=" not in entry]
        with errors_to_exit():
            for entry in cells:
                if not CELLS.fullmatch(entry.strip()):
                    raise ConfigError("grid", f"expected NAME=V1,V2,… (a grid axis, e.g. base=1e4,1e5) or the HxW cells "
                                      f"of rope-nd or sinusoidal-nd, got {entry!r}")
            if len(cells) > 1:
                raise ConfigError("grid", f"gives the cells of the scheme twice ({', '.join(cells)}); to sweep them use grid=8x8,16x16")
        kwargs["grid"] = [entry for entry in entries if "=" in entry]
        if cells:
            kwargs["set"] = [f"grid={cells[0]}", *(kwargs.get("set") or [])]  # --set still overrides it
        return super().__call__(**kwargs)

    def _resolve(self, options: dict[str, Any], plan: Any = None) -> Any:
        return SweepRequest(dict(options), plan)


def sweep_command(*settings: Setting):
    def decorate(func):
        return SweepCommand(func, settings, needs=None, run_keys=("scheme", "length"))

    return decorate


@sweep_command(*SETTINGS)
def sweep(
    spec: SweepRequest,
    prop: Annotated[str, typer.Argument(metavar="CHECK", show_default=False, autocompletion=completion.sweep_checks, help="a registered property (uniqueness, "
                    "distinguishability, composability, relativity, extrapolation, precision) or all [default: all]")] = "all",
    grid: GridOption = None,
    yes: YesOption = False,
    force: ForceOption = False,
    json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Run a check over the product of grids of values: one row per point, its verdict and figures.

    Each --grid NAME=V1,V2,… varies one key (a parameter of the scheme such as base, dim or factor;
    length; a setting of the check); the other options stay fixed. -o writes the rows as .csv, .jsonl
    or .parquet while the points finish (in grid order at the end), and a rerun with the same file
    resumes: only the points without a finished row run. --jobs N runs N local processes (default: the
    cores); --cluster ADDRESS sends the points to a Dask scheduler. --plot draws a heatmap of two axes.
    Exit 1 when a point failed (its row holds the error), 2 on bad input.
    """
    from pecli.sweeps import check_rows_memory, plan_sweep, run_sweep, runner_for, share_memory
    from pecli.sweeps.files import open_rows_file
    from pecli.sweeps.grid import confirm_size

    options = dict(spec.options)
    own = {setting.name: _own(setting, options.pop(setting.name, None)) for setting in OWN_SETTINGS}
    job, built = plan_sweep(prop, options, _axes(options, grid or []), spec.plan)
    confirm_size(built, yes)
    plot = _plot_target(own["plot"], built, force)
    jobs = min(_jobs(own), built.count)  # more processes than points would idle
    budget = memory_budget(options.get("max_memory"))
    output = (open_rows_file(own["out"], built.names, job.fingerprint, force=force, max_bytes=budget)
              if own["out"] is not None else None)
    check_rows_memory(built, prop, budget)
    job = share_memory(job, jobs, own["cluster"])
    job.check_fixed_options(built)
    result = run_sweep(job, built, runner_for(jobs, own["cluster"]), output)
    column, unknown = _metric(result.rows, own["metric"])
    _report(result, built, job, own, plot, column, prop=prop, json=json, quiet=quiet, summary=unknown is None)
    if unknown is not None:  # said after the rows, which are printed or in the file: the one line on stderr
        where = f"; rows in {own['out']}" if own["out"] is not None else ""
        raise ConfigError(unknown.key, f"{str(unknown).removeprefix(unknown.key + ': ')} "
                                       f"(the sweep ran: {result.points:,} points{where})")
    if plot is not None:
        _draw(result.rows, built, column, prop, plot, force)
        message(f"wrote {plot}", quiet=quiet or json)
    if result.failed:
        raise typer.Exit(1)


def _own(setting: Setting, value: Any) -> Any:
    return setting.default if value is None else setting.coerce(value)


def _axes(options: dict[str, Any], entries: list[str]) -> list[tuple[str, list[Any]]]:
    """The axes of a YAML file's ``grid:`` mapping, then those of ``--grid`` (which win over the file's of
    the same name); a ``grid`` that is not a mapping stays in ``options``: the cells of an n-D scheme."""
    from pecli.sweeps.grid import axes_from_mapping, parse_axis

    given = [parse_axis(entry) for entry in entries]
    from_file = axes_from_mapping(options.pop("grid")) if isinstance(options.get("grid"), Mapping) else []
    return [(name, values) for name, values in from_file if name not in dict(given)] + given


def _metric(rows: list[dict[str, Any]], metric: str | None) -> tuple[str, ConfigError | None]:
    """The column ``--metric`` names (default: verdict), or verdict and the error naming the columns."""
    from pecli.sweeps import metric_column

    try:
        return metric_column(rows, metric or "verdict"), None
    except ConfigError as error:
        return "verdict", error


def _jobs(own: dict[str, Any]) -> int:
    from pecli.sweeps import default_jobs
    from pecli.sweeps.runners import require_dask

    if own["cluster"] is not None:
        if own["jobs"] is not None:
            raise ConfigError("jobs", "--jobs runs local processes and --cluster sends the points to Dask: give one of them")
        require_dask()
        return 1
    return own["jobs"] or default_jobs()


def _plot_target(plot: str | None, grid: Any, force: bool) -> Path | None:
    if plot is None:
        return None
    from pecli.io import check_target, names_folder
    from pecli.render.figures.canvas import FIGURE_SUFFIXES

    if len(grid.axes) != 2:
        raise ConfigError("plot", f"draws a heatmap of two grid axes; this grid has {len(grid.axes)} ({', '.join(grid.names)})")
    text = str(plot)  # as given: Path() would drop a final "/"
    suffix = Path(text).suffix
    if suffix.lower() not in FIGURE_SUFFIXES and not names_folder(text):
        raise ConfigError("plot", f"{text}: unsupported suffix {suffix or '(none)'}; use one of {', '.join(FIGURE_SUFFIXES)}")
    return check_target(text, suffixes=FIGURE_SUFFIXES, force=force, option="--plot")


def _report(result: Any, grid: Any, job: Any, own: dict[str, Any], plot: Path | None, column: str, *, prop: str,
            json: bool, quiet: bool, summary: bool = True) -> None:
    """The JSON summary (with the rows when there is no file), or the table without -o, and (``summary``)
    a line on stderr."""
    from pecli.sweeps.grid import cell_value

    out = own["out"]
    if json:
        summary = {
            "check": prop, "grid": {axis.name: [cell_value(v) for v in axis.values] for axis in grid.axes},
            "sweep": job.fingerprint, "points": result.points, "written": result.written, "skipped": result.skipped,
            "failed": result.failed, "out": None if out is None else str(out), "plot": None if plot is None else str(plot),
        }
        print_json({**summary, **({"rows": result.rows} if out is None else {})})
    elif out is None and not quiet:
        from pecli.render.sweep import sweep_table

        stdout_console().print(sweep_table(result.rows, grid.names, prop, column))
    where = f" in {out}" if out is not None else ""
    already = f", {result.skipped:,} already{where}" if result.skipped else ""
    failed = f"; {result.failed:,} failed (their rows hold the error)" if result.failed else ""
    message(f"sweep {prop}: {result.points:,} points, {result.written:,} run{already}{failed}"
            + (f"; rows in {out}" if out is not None else ""), quiet=quiet or json or not summary)


def _draw(rows: list[dict[str, Any]], grid: Any, column: str, prop: str, target: Path, force: bool) -> None:
    from pecli.io import write_atomic
    from pecli.render import figures
    from pecli.render.figures.sweep import sweep_figure
    from pecli.render.tables import format_value, plain

    x, y = ((axis.name, [format_value(plain(value)) for value in axis.values]) for axis in grid.axes)
    figure = sweep_figure(rows, x, y, column, prop)
    write_atomic(target, lambda stream: figures.save_figure(figure, stream, target.suffix.lower()[1:]), force=force)
