"""``--help`` through Rich, for the pages :func:`pecli.cli.help.page` does not lay out itself.

Where the name columns of a panel do not leave the help column as much room as the widest of them (a
narrow terminal), Rich's table narrows and folds them, and the page is printed here: the same content
(:mod:`pecli.cli.help`: the rows, their styles, the wording of defaults) set in Rich's ``Panel`` and
``Table`` as Typer's renderer sets it.
"""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from pecli.cli import help as page


class FullWidth:
    """Lines of text that take all the width they are offered, each line padded to it.

    Without a ``__rich_measure__`` Rich gives it the whole width, as it gives Typer's Markdown cells:
    a table lets the help column take what the option columns leave.
    """

    def __init__(self, *lines: Text) -> None:
        self.lines = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.lines


def styled_text(styled: page.Styled, style: str = "") -> Text:
    return Text.assemble(*styled.runs, style=style)


def paragraph(text: str, style: str = "") -> Text:
    return Text(text, style=style, justify="left")


class HelpConsole(Console):
    """Rich's console, except that a reader going away (``pecli check --help | true``) ends the run as
    a table's does, exit 141, not with Rich's ``SystemExit(1)``."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def help_console() -> Console:
    """Typer's help console: colour forced or refused by the same variables."""
    force: bool | None = True if any(os.environ.get(v) for v in ("GITHUB_ACTIONS", "FORCE_COLOR", "PY_COLORS")) else None
    if os.environ.get("_TYPER_FORCE_DISABLE_TERMINAL"):
        force = False
    width = os.environ.get("TERMINAL_WIDTH")
    colours = None if os.environ.get("NO_COLOR") else "auto"  # NO_COLOR: no escapes, bold and italic neither
    return HelpConsole(color_system=colours, force_terminal=force, width=int(width) if width else None)


def print_help(command: Any, ctx: Any) -> None:
    """Print the help page of ``command`` (a Typer command or group) on stdout."""
    console = help_console()
    console.print(Padding(styled_text(page.highlight(command.get_usage(ctx), page.OPTION_PATTERNS, page.THEME)), 1), style="bold")
    if command.help:
        deprecated, first, rest = page.description(command)
        lines: list[Any] = [Text("(deprecated) ", style=page.DEPRECATED_STYLE)] if deprecated else []
        lines.append(FullWidth(paragraph(first)))
        if rest:
            lines += [Text(""), FullWidth(paragraph(rest, page.DESCRIPTION_STYLE))]
        console.print(Padding(Group(*lines), (0, 1, 1, 1)))
    for title, params in page.panels(command.get_params(ctx)):
        if params:
            console.print(Panel(rows_table(page.panel_rows(params, ctx)), border_style=page.BORDER_STYLE,
                                title=Text(title), title_align="left"))
    if hasattr(command, "list_commands"):
        commands_panels(console, command, ctx)
    if command.epilog:
        console.print(Padding(FullWidth(paragraph(page.paragraphs(command.epilog))), 1))


def rows_table(rows: list[page.Row]) -> Table:
    """A panel's rows in Typer's table: one column per name cell, the help last."""
    table = Table(highlight=True, show_header=False, expand=True, box=None, show_lines=False, leading=0,
                  pad_edge=False, padding=(0, 1))
    for row in rows:
        help_lines = [paragraph(text, style) if not style else Text(text, style=style) for text, style in row.help]
        if row.side_by_side:  # no help: the default and [required] side by side, as Typer sets them
            from rich.columns import Columns

            cell: Any = Columns(help_lines)
        else:
            cell = FullWidth(*help_lines)
        table.add_row(*(styled_text(names) for names in row.names), cell)
    return table


def commands_panels(console: Console, group: Any, ctx: Any) -> None:
    """The group's commands, by panel, each with the first paragraph of its help."""
    by_panel = page.listed_commands(group, ctx)
    width = max((len(c.name or "") for commands in by_panel.values() for c in commands), default=0)
    for title, commands in by_panel.items():
        if not commands:
            continue
        table = Table(highlight=False, show_header=False, expand=True, box=None, show_lines=False, leading=0,
                      pad_edge=False, padding=(0, 1))
        table.add_column(style="bold cyan", no_wrap=True, width=width)
        table.add_column("Description", justify="left", no_wrap=False, ratio=10)
        deprecated = any(c.deprecated for c in commands)
        for command in commands:
            cells: list[Any] = [
                Text(command.name or "", style="dim" if command.deprecated else ""),
                FullWidth(paragraph(page.command_summary(command))),
            ]
            if deprecated:
                cells.append(Text("(deprecated) ", style=page.DEPRECATED_STYLE) if command.deprecated else None)
            table.add_row(*cells)
        console.print(Panel(table, border_style=page.BORDER_STYLE, title=Text(title), title_align="left"))
