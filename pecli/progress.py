"""Progress of long work: the core reports it, whoever runs the core decides whether to show it.

The core never prints. A long computation opens a task and advances it::

    from pecli.progress import task

    with task("encode", total=n_chunks) as bar:
        for chunk in chunks:
            ...
            bar.advance()

By default nothing is shown. The command line installs a reporter (a Rich bar on stderr, only when
stderr is a terminal and neither ``--quiet`` nor ``--json`` asks for silence) with :func:`reporting`.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Iterator, Protocol


class Reporter(Protocol):
    """Where progress goes: one task at a time may be open."""

    def start(self, label: str, total: int | None) -> None: ...

    def advance(self, amount: int) -> None: ...

    def finish(self) -> None: ...


class Silent:
    """Shows nothing: the reporter when nobody asked for progress."""

    def start(self, label: str, total: int | None) -> None:
        pass

    def advance(self, amount: int) -> None:
        pass

    def finish(self) -> None:
        pass


class Recorded:
    """Keeps what it is told, in order, in :attr:`events`: ``("start", label, total)``,
    ``("advance", amount)``, ``("finish",)`` — to see the progress a call reports (a test, a notebook)."""

    def __init__(self) -> None:
        self.events: list[tuple] = []

    def start(self, label: str, total: int | None) -> None:
        self.events.append(("start", label, total))

    def advance(self, amount: int) -> None:
        self.events.append(("advance", amount))

    def finish(self) -> None:
        self.events.append(("finish",))

    @property
    def started(self) -> list[tuple[str, int | None]]:
        """(label, total) of each task started."""
        return [(event[1], event[2]) for event in self.events if event[0] == "start"]

    @property
    def done(self) -> int:
        """The units advanced, over every task."""
        return sum(event[1] for event in self.events if event[0] == "advance")


_reporter: contextvars.ContextVar[Reporter] = contextvars.ContextVar("pecli_progress", default=Silent())


class Task:
    """An open task; :meth:`advance` by the units of work done (chunks, positions, schemes)."""

    def __init__(self, reporter: Reporter) -> None:
        self._reporter = reporter

    def advance(self, amount: int = 1) -> None:
        self._reporter.advance(int(amount))


@contextlib.contextmanager
def task(label: str, total: int | None = None) -> Iterator[Task]:
    """Report the progress of one piece of long work (``total`` units, or None when unknown)."""
    reporter = _reporter.get()
    reporter.start(label, total)
    try:
        yield Task(reporter)
    finally:
        reporter.finish()


@contextlib.contextmanager
def reporting(reporter: Reporter) -> Iterator[None]:
    """Send the progress of the work done inside to ``reporter``."""
    token = _reporter.set(reporter)
    try:
        yield
    finally:
        _reporter.reset(token)


__all__ = ["Recorded", "Reporter", "Silent", "Task", "reporting", "task"]
