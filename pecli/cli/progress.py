"""Progress of the core's long work (:mod:`pecli.progress`) on stderr.

Shown only when stderr is a terminal and the command is not ``--quiet`` or ``--json``; stdout is never
touched. On a terminal that takes escape sequences it is a transient Rich bar, which leaves nothing
behind. Under ``NO_COLOR`` (https://no-color.org: no escape sequence at all) or ``TERM=dumb`` it is one
plain line, ``label  3/10  0:04``, rewritten in place with carriage returns and blanked at the end.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, TextIO


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


class PlainReporter:
    """The open task as one line of plain text, rewritten with ``\\r`` at most every :attr:`every` seconds."""

    every = 0.2

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._label: str | None = None
        self._total: int | None = None
        self._done, self._started, self._shown_at, self._width = 0, 0.0, 0.0, 0

    def start(self, label: str, total: int | None) -> None:
        self.finish()
        self._label, self._total, self._done = label, total, 0
        self._started = time.monotonic()
        self._show()

    def advance(self, amount: int) -> None:
        if self._label is None:
            return
        self._done += amount
        if time.monotonic() - self._shown_at >= self.every:
            self._show()

    def finish(self) -> None:
        if self._label is not None and self._width:
            self._write("\r" + " " * self._width + "\r")
        self._label, self._width = None, 0

    def _show(self) -> None:
        now = time.monotonic()
        elapsed = int(now - self._started)
        count = f"{self._done}/{self._total}" if self._total is not None else f"{self._done}"
        line = f"{self._label}  {count}  {elapsed // 60}:{elapsed % 60:02d}"
        self._write("\r" + line.ljust(self._width))
        self._width, self._shown_at = max(self._width, len(line)), now

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):  # stderr closed under us: progress is not worth an error
            self._label = None


def reporter_for(*, quiet: bool) -> Any:
    """The reporter of a command: on a terminal's stderr a bar (plain text under ``NO_COLOR`` or
    ``TERM=dumb``), else silence."""
    from pecli.progress import Silent

    stream = sys.stderr
    if quiet or stream is None or not hasattr(stream, "isatty") or not stream.isatty():
        return Silent()
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return PlainReporter(stream)
    return RichReporter()
