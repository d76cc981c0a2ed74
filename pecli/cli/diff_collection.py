"""``pecli diff --hf-config C --gguf …`` over many GGUF files: the options, the run and the table.

The work is :mod:`pecli.sweeps.gguf_collection`'s; this module parses ``-o``/``--jobs``/``--cluster``,
opens the rows file as ``sweep -o`` does (:mod:`pecli.sweeps.files`), shows a progress bar on stderr and
prints one table (or ``--json``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional, Sequence

import typer

from pecli.cli.options import OUTPUT_PANEL
from pecli.errors import ConfigError

COLLECTION_PANEL = "Many GGUF files"

OutOption = Annotated[Optional[Path], typer.Option(
    "--out", "-o", help="with several GGUF files: the rows as .csv, .jsonl or .parquet, appended as files finish; "
    "a rerun with the same file resumes", rich_help_panel=OUTPUT_PANEL, show_default=False)]
JobsOption = Annotated[Optional[int], typer.Option(
    "--jobs", metavar="N", help="with several GGUF files: read them in N local processes (default: threads of this one)",
    rich_help_panel=COLLECTION_PANEL, show_default=False)]
ClusterOption = Annotated[Optional[str], typer.Option(
    "--cluster", help="with several GGUF files: read them on the Dask scheduler at ADDRESS (needs pecli[dask])",
    rich_help_panel=COLLECTION_PANEL, show_default=False)]


def is_collection(ggufs: Sequence[str], references: int, *, out: Any, jobs: Any, cluster: Any) -> bool:
    """Whether ``diff`` reads a collection: one model and several GGUF files, or a folder, glob, list or
    Hub repository, or a collection's option. (Two files without a model: the second against the first.)"""
    from pecli.sweeps.gguf_collection import MAGIC
    from pecli.models.gguf_remote import is_remote

    if not ggufs or references != 1:
        return False
    many = len(ggufs) > 1 or any(
        g.startswith("@") or (g.startswith("hf://") and not g.endswith(".gguf")) or Path(g).is_dir()
        or (MAGIC.search(g) is not None and not is_remote(g) and not Path(g).exists()) for g in ggufs)
    return many or out is not None or jobs is not None or cluster is not None


def run(ggufs: Sequence[str], reference: Any, *, out: Path | None, force: bool, jobs: int | None,
        cluster: str | None, json: bool, quiet: bool) -> None:
    """Read every file, print the table (or ``--json``), exit 0 when every file is the same, else 1."""
    from pecli.cli.common import message, print_json
    from pecli.cli.progress import reporter_for
    from pecli.config import memory_budget
    from pecli.sweeps.gguf_collection import FILE, CollectionJob, locations, run_collection, runner_for
    from pecli.progress import reporting
    from pecli.sweeps.files import open_rows_file
    from pecli.sweeps.runners import require_dask

    if jobs is not None and jobs < 1:  # declared without click's range, whose "<int range> [x>=1]" the page would show
        raise ConfigError("jobs", f"must be >= 1, got {jobs}")
    if jobs is not None and cluster is not None:
        raise ConfigError("jobs", "--jobs runs local processes and --cluster sends the files to Dask: give one of them")
    if cluster is not None:
        require_dask()
    files = locations(ggufs)
    if out is not None:  # --force or not, the rows never replace a file the run reads (a GGUF file, an @LIST)
        from pecli.io import refuse_inputs

        refuse_inputs(out, [*files, *(g[1:] for g in ggufs if g.startswith("@")), *references_of(reference)], "--out")
    job = CollectionJob(reference)
    output = (open_rows_file(out, (FILE,), job.fingerprint, force=force, max_bytes=memory_budget(None))
              if out is not None else None)
    with reporting(reporter_for(quiet=quiet or json)):
        result = run_collection(job, files, runner_for(min(jobs, len(files)) if jobs else None, cluster), output)
    if json:
        print_json(result.to_dict())
    elif not quiet:
        from pecli.cli.common import stdout_console

        stdout_console().print(table(result))
    if out is not None:
        message(f"wrote {out} ({result.read} read, {result.resumed} resumed)", quiet=quiet or json)
    raise typer.Exit(0 if result.same else 1)


def references_of(reference: Any) -> list[str]:
    """The file a reference plan was read from, where it names one (its ``source``)."""
    source = getattr(reference, "source", None)
    return [source] if isinstance(source, str) else []


def table(result: Any) -> Any:
    """One row per file: the file, its verdict, and its first difference or why it could not be read."""
    from rich.markup import escape
    from rich.table import Table

    from pecli.sweeps.gguf_collection import DIFFERENT, FIRST, SAME

    title = result.table_title()
    out = Table(title=title, title_justify="left", min_width=len(title))
    out.add_column("file", overflow="fold")
    out.add_column("verdict", no_wrap=True)
    out.add_column("first difference, or why it cannot be read", overflow="fold")
    styles = {SAME: "green", DIFFERENT: "red"}
    for row in result.rows:
        verdict = str(row.get("verdict"))
        detail = row.get(FIRST) if verdict == DIFFERENT else row.get("error") if verdict != SAME else ""
        if verdict == DIFFERENT and str(row.get("differences") or "1") not in ("1", "None"):
            detail = f"{detail} (+{int(row['differences']) - 1} more)"
        shown = f"[{styles.get(verdict, 'yellow')}]{verdict}[/]"
        out.add_row(escape(str(row.get("file"))), shown, escape(str(detail or "")))
    return out


__all__ = ["ClusterOption", "JobsOption", "OutOption", "is_collection", "references_of", "run", "table"]
