"""The console pecli prints its tables on: it never cuts a number, a name or a header.

Rich cuts a table that is wider than the console: it folds or truncates cells (``0.00085…``,
``sinusoida``/``l``) and drops what still does not fit. A pipe has no width, so when stdout is not
a terminal a table that cannot fit without cutting is printed at its natural width instead (one
line per row, nothing wrapped). A terminal has a width: there such a table is stacked instead, each
row a block of ``header  value`` lines (:func:`stacked`), so a 60-column window shows every number
and name whole.

``NO_COLOR`` (set and not empty, https://no-color.org) means no escape sequence at all: Rich would
drop the colours and keep bold and italic; here the console gets no colour system, so it styles nothing.

What may not be cut is declared by the tables themselves: a column with ``no_wrap=True`` holds
numbers or names and keeps its full width; any other column holds text and may wrap between words.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.table import Table

#: Width used to measure a renderable unconstrained.
UNBOUNDED = 1 << 16


def uncut_width(console: Console, renderable: RenderableType) -> int:
    """The narrowest width at which ``renderable`` prints without cutting anything.

    For a table: every ``no_wrap`` column at its widest cell (header included), every other column at
    its longest word, plus padding and borders. For anything else: its longest word.
    """
    options = console.options.update(width=UNBOUNDED)
    if not isinstance(renderable, Table):
        return Measurement.get(console, options, renderable).minimum
    left, right = table_padding(renderable)
    total = 0
    for column in renderable.columns:
        cells = [*([column.header] if renderable.show_header else []), *column.cells]
        sizes = [Measurement.get(console, options, cell) for cell in cells]
        widest = max((size.maximum if column.no_wrap else size.minimum for size in sizes), default=0)
        total += max(widest, column.min_width or 0) + left + right
    return total + border_width(renderable)


def natural_width(console: Console, renderable: RenderableType) -> int:
    """The width at which ``renderable`` prints with nothing wrapped."""
    return Measurement.get(console, console.options.update(width=UNBOUNDED), renderable).maximum


def table_padding(table: Table) -> tuple[int, int]:
    """The left and right padding of each cell of ``table``."""
    _, right, _, left = table.padding
    return left, right


def border_width(table: Table) -> int:
    """The characters the borders of ``table`` take on each line."""
    if table.box is None:
        return 0
    return len(table.columns) - 1 + (2 if table.show_edge else 0)


def parts(renderables: Iterable[Any]) -> list[Any]:
    """The renderables with every :class:`~rich.console.Group` opened, so each part is fitted alone."""
    out: list[Any] = []
    for renderable in renderables:
        out.extend(parts(renderable.renderables) if isinstance(renderable, Group) else [renderable])
    return out


def fitted_parts(console: Console, renderables: list[Any]) -> list[Any]:
    """The renderables with each that lays itself out for a console (a ``fitted(console)`` method, as
    ``compare``'s verdicts, which run on over several tables in a pipe) replaced by the parts it gives."""
    out: list[Any] = []
    for renderable in renderables:
        fitted = getattr(renderable, "fitted", None)
        out.extend(fitted(console) if callable(fitted) and not isinstance(renderable, type) else [renderable])
    return out


class FittingConsole(Console):
    """A Rich console that, when stdout is not a terminal, prints at its natural width anything that
    would otherwise be cut (see the module's docstring)."""

    def on_broken_pipe(self) -> None:
        """The reader went away (``| head``): let the caller stop quietly with its own exit code (141),
        not Rich's ``SystemExit(1)``, which a ``set -o pipefail`` script reads as a failed check."""
        self.quiet = True
        raise BrokenPipeError

    def print(self, *objects: Any, **kwargs: Any) -> None:
        if not objects:
            super().print(*objects, **kwargs)
            return
        for part in fitted_parts(self, parts(objects)):
            if isinstance(part, str) or uncut_width(self, part) <= self.width:
                super().print(part, **kwargs)
                continue
            if self.is_terminal:
                if isinstance(part, Table):
                    part = next((form for form in compact_forms(part) if uncut_width(self, form) <= self.width), None) \
                        or stacked(part)
                    if part.title:  # the title wraps at the terminal's width, between words, not at the table's
                        title, part = untitled(part)
                        super().print(title, **kwargs)
                super().print(part, **kwargs)
                continue
            width = self.width
            self.width = max(width, natural_width(self, part))
            try:
                super().print(part, **kwargs)
            finally:
                self.width = width


def compact_forms(table: Table) -> list[Table]:
    """``table`` with less room between its columns, widest first: no box but a rule under the headers
    and a space either side of each column, then a single space between columns. The columns, headers and
    cells stay as they are (a header wraps at its own line breaks), so a narrow terminal keeps the table."""
    import copy

    from rich import box

    forms = []
    for padding in ((0, 1), (0, 0)):
        form = copy.copy(table)
        form.columns = [copy.copy(column) for column in table.columns]
        form.box, form.show_edge, form.pad_edge, form.padding = box.SIMPLE_HEAD, False, False, padding
        forms.append(form)
    return forms


def untitled(table: Table) -> tuple[Any, Table]:
    """The title of ``table`` as its own text (its style and justification kept), and the table without it."""
    import copy

    from rich.text import Text

    title = table.title if isinstance(table.title, Text) else Text.from_markup(str(table.title), style=table.title_style or "")
    title.justify = "left"
    rest = copy.copy(table)
    rest.title = None
    return title, rest


def stacked(table: Table) -> Table:
    """``table`` one row at a time: each row a block of lines ``header  value``, blocks apart by a rule.

    For a terminal narrower than the table: each value has the width the header leaves it, and wraps
    between words there (a reason is text); a number or a name is one word, so it stays whole unless it
    is wider than the whole terminal, and then it folds onto the next line rather than being cut. The
    headers wrap between words.
    """
    out = Table(box=None, show_header=False, title=table.title, caption=table.caption, padding=(0, 1),
                pad_edge=False, show_lines=False)
    out.add_column(style="bold", overflow="fold")
    out.add_column(overflow="fold")
    headers = [" ".join(str(column.header).split()) for column in table.columns]
    columns = [list(column.cells) for column in table.columns]
    for index in range(table.row_count):
        if index:
            out.add_row("", "")
        for header, cells in zip(headers, columns):
            out.add_row(header or "·", cells[index] if index < len(cells) else "")
    return out


def no_color() -> bool:
    """Whether ``NO_COLOR`` asks for plain text (set, and not empty)."""
    import os

    return bool(os.environ.get("NO_COLOR"))


def stdout_console() -> Console:
    """The console of stdout: plain text unless a colour terminal, no highlighting, nothing cut."""
    if no_color():
        return FittingConsole(highlight=False, soft_wrap=False, color_system=None)
    return FittingConsole(highlight=False, soft_wrap=False)
