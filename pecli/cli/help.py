"""``--help`` of every pecli command: Typer's page, built from plain Rich text.

Typer's renderer (markup mode ``markdown``) parses the help of each option as a Markdown document and
sets it in a ``Columns`` layout inside a table cell; with the ~50 options of ``pecli encode`` that was
most of the time of ``pecli encode --help``, and importing that renderer loads markdown-it. pecli's
help texts are plain sentences, so :func:`print_help` prints the same page from ``Text``: the usage,
the description, the same panels in the same order, with the same columns, widths, wrapping and
styles. Where the column widths are plain to compute (the help column has the most room) the rows
of a panel are laid out here (:class:`AlignedRows`); otherwise a Rich table does it, as in Typer.
``tests/test_help.py`` holds the page equal to Typer's, character for character.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterable
from typing import Any, ClassVar

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.highlighter import RegexHighlighter
from rich.padding import Padding
from rich.panel import Panel
from rich.segment import Segment
from rich.text import Text
from rich.theme import Theme
from typer.core import TyperArgument, TyperGroup, TyperOption

ARGUMENTS_PANEL = "Arguments"
OPTIONS_PANEL = "Options"
COMMANDS_PANEL = "Commands"

#: Typer's styles, by the names its highlighters give the parts of an option.
THEME = Theme({
    "option": "bold cyan",
    "switch": "bold green",
    "negative_option": "bold magenta",
    "negative_switch": "bold red",
    "types": "bold yellow",
    "types_sep": "dim",
    "usage": "yellow",
})
DESCRIPTION_STYLE = "dim"  # the paragraphs of a command's help after the first
DEFAULT_STYLE = "dim"
REQUIRED_STYLE = "red"
DEPRECATED_STYLE = "red"
#: Columns a panel takes around its table: the two borders and a space inside each.
PANEL_FRAME = 4


class OptionHighlighter(RegexHighlighter):
    """Typer's: ``--long`` and ``-s`` options, ``<type>`` placeholders, ``Usage:``."""

    highlights: ClassVar[list[str]] = [
        r"(^|\W)(?P<switch>\-\w+)(?![a-zA-Z0-9])",
        r"(^|\W)(?P<option>\-\-[\w\-]+)(?![a-zA-Z0-9])",
        r"(?P<types>\<[^\>]+\>)",
        r"(?P<usage>Usage: )",
    ]


class NegativeOptionHighlighter(RegexHighlighter):
    """Typer's, for the off-spelling of a flag."""

    highlights: ClassVar[list[str]] = [
        r"(^|\W)(?P<negative_switch>\-\w+)(?![a-zA-Z0-9])",
        r"(^|\W)(?P<negative_option>\-\-[\w\-]+)(?![a-zA-Z0-9])",
    ]


class TypesHighlighter(RegexHighlighter):
    """Typer's: the brackets and bars around a type are dim."""

    highlights: ClassVar[list[str]] = [
        r"^(?P<types_sep>(\[|<))",
        r"(?P<types_sep>\|)",
        r"(?P<types_sep>(\]|>))(\.\.\.)?$",
    ]


highlight_option = OptionHighlighter()
highlight_negative = NegativeOptionHighlighter()
highlight_types = TypesHighlighter()


class FullWidth:
    """Lines of text that take all the width they are offered, each line padded to it.

    Without a ``__rich_measure__`` Rich gives it the whole width, as it gives Typer's Markdown cells:
    a table lets the help column take what the option columns leave.
    """

    def __init__(self, *lines: Text) -> None:
        self.lines = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.lines


def help_console() -> Console:
    """Typer's help console: its theme and highlighter; colour forced or refused by the same variables."""
    force: bool | None = True if any(os.environ.get(v) for v in ("GITHUB_ACTIONS", "FORCE_COLOR", "PY_COLORS")) else None
    if os.environ.get("_TYPER_FORCE_DISABLE_TERMINAL"):
        force = False
    width = os.environ.get("TERMINAL_WIDTH")
    return Console(
        theme=THEME, highlighter=highlight_option, color_system="auto", force_terminal=force,
        width=int(width) if width else None,
    )


def paragraph(text: str, style: str = "") -> Text:
    """One or more paragraphs of help as Markdown shows plain text: lines of a paragraph joined by
    one space, paragraphs apart by a blank line, wrapped to the width."""
    paragraphs = [" ".join(line.strip() for line in block.splitlines() if line.strip()) for block in text.split("\n\n")]
    return Text("\n\n".join(p for p in paragraphs if p), style=style, justify="left")


def print_help(command: Any, ctx: Any) -> None:
    """Print the help page of ``command`` (a Typer command or group) on stdout."""
    console = help_console()
    console.print(Padding(highlight_option(command.get_usage(ctx)), 1), style="bold")
    if command.help:
        console.print(Padding(description(command), (0, 1, 1, 1)))
    for title, params in panels(command.get_params(ctx)):
        options_panel(console, title, params, ctx)
    if isinstance(command, TyperGroup):
        commands_panel(console, command, ctx)
    if command.epilog:
        console.print(Padding(FullWidth(paragraph(command.epilog)), 1))


def description(command: Any) -> Group:
    """The command's help: its first paragraph, then the others dim."""
    text = inspect.cleandoc(command.help or "").partition("\f")[0]
    first, _, rest = text.partition("\n\n")
    lines: list[Any] = []
    if command.deprecated:
        lines.append(Text("(deprecated) ", style=DEPRECATED_STYLE))
    lines.append(FullWidth(paragraph(first)))
    if rest:
        lines += [Text(""), FullWidth(paragraph(rest, DESCRIPTION_STYLE))]
    return Group(*lines)


def panels(params: Iterable[Any]) -> list[tuple[str, list[Any]]]:
    """(title, parameters) of each panel in Typer's order: arguments before options, the unnamed
    panel of each first, then the named ones as they first appear."""
    arguments: dict[str, list[Any]] = {ARGUMENTS_PANEL: []}
    options: dict[str, list[Any]] = {OPTIONS_PANEL: []}
    for param in params:
        if getattr(param, "hidden", False):
            continue
        kind = getattr(param, "param_type_name", None)  # click's word: the help option is click's own in some versions
        if kind == "argument":
            arguments.setdefault(getattr(param, "rich_help_panel", None) or ARGUMENTS_PANEL, []).append(param)
        elif kind == "option":
            options.setdefault(getattr(param, "rich_help_panel", None) or OPTIONS_PANEL, []).append(param)
    return [*arguments.items(), *options.items()]


def options_panel(console: Console, title: str, params: list[Any], ctx: Any) -> None:
    """One panel: a row per parameter — long names, short names, their off-spellings, type, help."""
    if not params:
        return
    rows = [option_row(param, ctx) for param in params]
    if any(param.required for param in params):
        rows = [[Text("*", style=REQUIRED_STYLE) if param.required else Text(""), *row] for param, row in zip(params, rows)]
    body = AlignedRows.fitting(rows, console.width - PANEL_FRAME)
    if body is not None:  # its lines carry the panel's inner margins
        console.print(Panel(body, border_style="dim", title=Text(title), title_align="left", padding=0))
        return
    from rich.table import Table

    table = Table(highlight=True, show_header=False, expand=True, box=None, show_lines=False, leading=0,
                  pad_edge=False, padding=(0, 1))
    for row in rows:
        table.add_row(*row)
    console.print(Panel(table, border_style="dim", title=Text(title), title_align="left"))


class AlignedRows:
    """The lines Rich's table gives the rows of a panel, laid out directly (a fraction of the work).

    Rich gives each column its widest cell plus its padding (a space on each side between columns, none
    at the table's edges) and the help column the rest, as long as the rest is at least as wide as every
    other column: the cells before the help are then set side by side at those widths and the help is
    wrapped to the rest. Where the rest is narrower Rich narrows the other columns too, and
    :meth:`fitting` leaves the table to Rich.
    """

    def __init__(self, rows: list[list[Any]], sizes: list[int]) -> None:
        self.rows, self.sizes = rows, sizes
        self.names_width = sum(sizes) + 2 * (len(sizes) - 1)

    @classmethod
    def fitting(cls, rows: list[list[Any]], width: int) -> AlignedRows | None:
        """The rows laid out for a table ``width`` wide, or None where Rich would narrow a column."""
        if not all(isinstance(row[-1], FullWidth) for row in rows):
            return None
        sizes = [max(row[index].cell_len for row in rows) for index in range(len(rows[0]) - 1)]
        padded = [size + (1 if index == 0 else 2) for index, size in enumerate(sizes)]
        return cls(rows, sizes) if width - sum(padded) >= max(padded) else None

    def names(self, row: list[Any]) -> Text:
        line = Text()
        for index, (cell, size) in enumerate(zip(row[:-1], self.sizes)):
            line.append("  " if index else "")
            line.append_text(cell)
            line.append(" " * (size - cell.cell_len))
        return line

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # a margin, the names, their right padding and the help's left padding, the help, a margin
        help_width = options.max_width - self.names_width - 4
        margin, gap, blank = Segment(" "), Segment("  "), Segment(" " * (self.names_width + 3))
        for row in self.rows:
            first = True
            for text in row[-1].lines:
                for line in text.wrap(console, help_width, justify="left", overflow=text.overflow or "ellipsis"):
                    if first:
                        yield margin
                        yield from self.names(row).render(console)
                        yield gap
                    else:
                        yield blank
                    yield from line.render(console)
                    yield margin
                    yield Segment.line()
                    first = False
            if first:  # no help at all
                yield margin
                yield from self.names(row).render(console)
                yield Segment(" " * (help_width + 3))
                yield Segment.line()


def option_row(param: Any, ctx: Any) -> list[Any]:
    """The cells of one parameter, as Typer makes them."""
    is_argument = param.param_type_name == "argument"
    name = (param.metavar or param.name or "") if is_argument else None
    long, short, long_off, short_off = [], [], [], []
    for opt in param.opts:
        (long if "--" in opt else short).append(opt if "--" in opt or not name else name)
    for opt in param.secondary_opts:
        (long_off if "--" in opt else short_off).append(opt if "--" in opt or not name else name)
    types = Text(style="bold yellow", overflow="fold")
    kind = type_text(param, ctx)
    if kind and "bool" not in kind.lower():
        types.append(kind)
    describe_range = getattr(param.type, "_describe_range", None)
    counting = getattr(param, "count", False) and param.type.min == 0 and param.type.max is None
    if describe_range is not None and not is_argument and not counting and describe_range():
        types.append(f" [{describe_range()}]")
    return [
        highlighted(highlight_option, long), highlighted(highlight_option, short),
        highlighted(highlight_negative, long_off), highlighted(highlight_negative, short_off),
        highlight_types(types), help_cell(param, ctx),
    ]


def highlighted(highlighter: RegexHighlighter, names: list[str]) -> Text:
    """The names, comma-separated, styled by ``highlighter`` (most cells are empty: nothing to match)."""
    return highlighter(",".join(names)) if names else Text("")


def type_text(param: Any, ctx: Any) -> str | None:
    """``<int>``, a metavar, or nothing: what Typer shows in the type column."""
    if param.param_type_name == "argument":
        try:
            kind = param.type.get_metavar(param=param, ctx=ctx)
        except TypeError:  # click before 8.2: no ctx
            kind = param.type.get_metavar(param)
        return kind if kind is not None else f"<{param.type.name}>"
    try:
        return param.make_metavar(ctx=ctx)
    except TypeError:
        return param.make_metavar()


def help_cell(param: Any, ctx: Any) -> Any:
    """The help of one parameter, then its default and ``[required]`` where Typer shows them."""
    lines: list[Text] = []
    if getattr(param, "help", None):  # Typer joins an option's paragraphs into one
        lines.append(paragraph("\n".join(param.help.split("\n\n")).strip()))
    if getattr(param, "show_envvar", False) and getattr(param, "envvar", None):
        envvar = param.envvar if isinstance(param.envvar, str) else ", ".join(map(str, param.envvar))
        lines.append(Text(f"[env var: {envvar}]", style="dim yellow"))
    default = default_text(param, ctx)
    if default:
        lines.append(Text(f"[default: {default}]", style=DEFAULT_STYLE))
    if param.required:
        lines.append(Text("[required]", style="dim red"))
    if lines and not getattr(param, "help", None):  # side by side when there is no help, as Typer sets them
        from rich.columns import Columns

        return Columns(lines)
    return FullWidth(*lines)


def default_text(param: Any, ctx: Any) -> str | None:
    """The default Typer shows for ``param``, through Typer's own wording of it."""
    if not isinstance(param, (TyperOption, TyperArgument)):
        return None
    show_default_is_str = isinstance(param.show_default, str)
    value = param._extract_default_help_str(ctx=ctx)
    if not (show_default_is_str or (value is not None and (param.show_default or ctx.show_default))):
        return None
    return param._get_default_string(ctx=ctx, show_default_is_str=show_default_is_str, default_value=value) or None


def commands_panel(console: Console, group: Any, ctx: Any) -> None:
    """The group's commands, by panel, each with the first paragraph of its help."""
    by_panel: dict[str, list[Any]] = {COMMANDS_PANEL: []}
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is not None and not command.hidden:
            by_panel.setdefault(getattr(command, "rich_help_panel", None) or COMMANDS_PANEL, []).append(command)
    width = max((len(c.name or "") for commands in by_panel.values() for c in commands), default=0)
    for title, commands in by_panel.items():
        if not commands:
            continue
        from rich.table import Table

        table = Table(highlight=False, show_header=False, expand=True, box=None, show_lines=False, leading=0,
                      pad_edge=False, padding=(0, 1))
        table.add_column(style="bold cyan", no_wrap=True, width=width)
        table.add_column("Description", justify="left", no_wrap=False, ratio=10)
        deprecated = any(c.deprecated for c in commands)
        for command in commands:
            summary = inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0]
            cells: list[Any] = [
                Text(command.name or "", style="dim" if command.deprecated else ""), FullWidth(paragraph(summary)),
            ]
            if deprecated:
                cells.append(Text("(deprecated) ", style=DEPRECATED_STYLE) if command.deprecated else None)
            table.add_row(*cells)
        console.print(Panel(table, border_style="dim", title=Text(title), title_align="left"))
