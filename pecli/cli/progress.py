"""A Rich progress bar on stderr for the core's long work (:mod:`pecli.progress`).

Shown only when stderr is a terminal and the command is not ``--quiet`` or ``--json``; it is
transient, so it leaves nothing behind in the terminal, and stdout is never touched.
"""

from __future__ import annotations

import sys
from typing import Any


class RichReporter:
    """Draws the open task as a bar (a spinner when its total is unknown)."""

    def __init__(self) -> None:
        self._progress: Any = None
        self._task: Any = None

    def start(self, label: str, total: int | None) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.finish()
        columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn()]
        if total is None:
            columns = [SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn()]
        self._progress = Progress(*columns, console=Console(stderr=True), transient=True)
        self._progress.start()
        self._task = self._progress.add_task(label, total=total)

    def advance(self, amount: int) -> None:
        if self._progress is not None:
            self._progress.advance(self._task, amount)

    def finish(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def reporter_for(*, quiet: bool) -> Any:
    """The reporter of a command: a bar on a terminal's stderr, else silence."""
    from pecli.progress import Silent

    stream = sys.stderr
    if quiet or stream is None or not hasattr(stream, "isatty") or not stream.isatty():
        return Silent()
    return RichReporter()
