"""``--help`` of every pecli command: Typer's page, laid out as text without loading Rich.

Typer prints its help through Rich (a console, panels, tables, a Markdown document per option), and
importing and running that renderer took longer than the rest of ``pecli encode --help`` together.
pecli's help texts are plain sentences and its panels have one shape, so :func:`print_help` lays the
page out itself, as Typer's renderer lays it out: the usage, the description, one rounded panel per
group of parameters (names, types, then the help wrapped in what the other columns leave), the
commands. On a terminal the page carries Typer's styles as ANSI codes (colours dropped under
``NO_COLOR``, as Rich drops them); in a pipe or a file it is plain text. Where Rich would narrow the
name columns to fit a narrow terminal, the page is left to Rich (:mod:`pecli.cli.help_rich`).
``tests/test_help.py`` holds both pages equal to Typer's, character for character.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pecli.cli.styled_text import Styled, cell_len, highlight, line_ranges, set_cell_size, styled_run, wrap

ARGUMENTS_PANEL = "Arguments"
OPTIONS_PANEL = "Options"
COMMANDS_PANEL = "Commands"

#: Typer's styles, by the names its highlighters give the parts of an option.
THEME = {
    "option": "bold cyan",
    "switch": "bold green",
    "negative_option": "bold magenta",
    "negative_switch": "bold red",
    "types": "bold yellow",
    "types_sep": "dim",
    "usage": "yellow",
}
DESCRIPTION_STYLE = "dim"  # the paragraphs of a command's help after the first
DEFAULT_STYLE = "dim"
REQUIRED_STYLE = "red"
DEPRECATED_STYLE = "red"
BORDER_STYLE = "dim"
#: Columns a panel takes around its rows: the two borders and a space inside each.
PANEL_FRAME = 4
#: Below this width the page is left to Rich, which narrows and folds what does not fit.
MIN_WIDTH = 40

#: Typer's highlighters: patterns whose named groups take :data:`THEME`'s styles, in the order they are
#: applied; a later match's style is laid over an earlier one's (``--no-band`` holds the switch ``-no`` inside the option: it is an option).
OPTION_PATTERNS = (
    re.compile(r"(^|\W)(?P<switch>\-\w+)(?![a-zA-Z0-9])"),
    re.compile(r"(^|\W)(?P<option>\-\-[\w\-]+)(?![a-zA-Z0-9])"),
    re.compile(r"(?P<types>\<[^\>]+\>)"),
    re.compile(r"(?P<usage>Usage: )"),
)
NEGATIVE_PATTERNS = (
    re.compile(r"(^|\W)(?P<negative_switch>\-\w+)(?![a-zA-Z0-9])"),
    re.compile(r"(^|\W)(?P<negative_option>\-\-[\w\-]+)(?![a-zA-Z0-9])"),
)
TYPE_PATTERNS = (
    re.compile(r"^(?P<types_sep>(\[|<))"),
    re.compile(r"(?P<types_sep>\|)"),
    re.compile(r"(?P<types_sep>(\]|>))(\.\.\.)?$"),
)


def paragraphs(text: str) -> str:
    """Help as Markdown shows plain text: the lines of a paragraph joined by one space, paragraphs apart
    by a blank line."""
    blocks = [" ".join(line.strip() for line in block.splitlines() if line.strip()) for block in text.split("\n\n")]
    return "\n\n".join(block for block in blocks if block)


# -- the page's content --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    """One parameter of a panel: its name cells (each one line) and its help lines (each wrapped)."""

    names: tuple[Styled, ...]
    help: tuple[tuple[str, str], ...]  # (text, style)
    side_by_side: bool = False  # Typer sets the default beside the name when there is no help


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


def parameter_row(param: Any, ctx: Any) -> Row:
    """The cells of one parameter, as Typer makes them: long names, short names, their off-spellings,
    the type, then the help, the default and ``[required]``."""
    is_argument = param.param_type_name == "argument"
    name = argument_name(param) if is_argument else None
    long, short, long_off, short_off = [], [], [], []
    for opt in param.opts:
        (long if "--" in opt else short).append(opt if "--" in opt or not name else name)
    for opt in param.secondary_opts:
        (long_off if "--" in opt else short_off).append(opt if "--" in opt or not name else name)
    types = type_text(param, ctx)
    span = range_text(param)
    if span:
        types += f" [{span}]"
    names = (
        highlight(",".join(long), OPTION_PATTERNS, THEME), highlight(",".join(short), OPTION_PATTERNS, THEME),
        highlight(",".join(long_off), NEGATIVE_PATTERNS, THEME), highlight(",".join(short_off), NEGATIVE_PATTERNS, THEME),
        highlight(types, TYPE_PATTERNS, THEME, THEME["types"]),
    )
    help_lines: list[tuple[str, str]] = []
    if getattr(param, "help", None):  # Typer joins an option's paragraphs into one
        help_lines.append((paragraphs("\n".join(param.help.split("\n\n")).strip()), ""))
    if getattr(param, "show_envvar", False) and getattr(param, "envvar", None):
        envvar = param.envvar if isinstance(param.envvar, str) else ", ".join(map(str, param.envvar))
        help_lines.append((f"[env var: {envvar}]", "dim yellow"))
    default = default_text(param, ctx)
    if default:
        help_lines.append((f"[default: {default}]", DEFAULT_STYLE))
    if param.required:
        help_lines.append(("[required]", "dim red"))
    return Row(names, tuple(help_lines), side_by_side=bool(help_lines) and not getattr(param, "help", None))


def argument_name(param: Any) -> str:
    """An argument's name in the first column: its metavar, else its name (Typer 0.29: ``…`` after a
    name that takes several values)."""
    if hasattr(param, "display_name_raw"):  # Typer 0.29 and later
        name = param.display_name_raw or ""
        return name + "..." if param.metavar is None and param.nargs != 1 else name
    return param.metavar or param.name or ""


def type_text(param: Any, ctx: Any) -> str:
    """``<int>``, a metavar, or nothing: what Typer shows in the type column (without the range), except
    for a flag, which takes no value and shows none (Typer 0.29 writes ``--version <bool>``)."""
    if getattr(param, "is_flag", False):
        return ""
    if hasattr(param, "display_type_rich"):  # Typer 0.29 and later words it itself
        return param.display_type_rich(ctx=ctx) or ""
    if param.param_type_name == "argument":
        try:
            kind = param.type.get_metavar(param=param, ctx=ctx)
        except TypeError:  # click before 8.2: no ctx
            kind = param.type.get_metavar(param)
        kind = kind if kind is not None else f"<{param.type.name}>"
    else:
        try:
            kind = param.make_metavar(ctx=ctx)
        except TypeError:
            kind = param.make_metavar()
    return kind if kind and "bool" not in kind.lower() else ""


def range_text(param: Any) -> str | None:
    """The range of a number option (``x>=1``), as Typer words it after the type; None without one."""
    if hasattr(param, "_get_number_range_help_str"):  # Typer 0.29 and later
        return param._get_number_range_help_str()
    describe_range = getattr(param.type, "_describe_range", None)
    counting = getattr(param, "count", False) and param.type.min == 0 and param.type.max is None
    if describe_range is None or param.param_type_name == "argument" or counting:
        return None
    return describe_range() or None


def default_text(param: Any, ctx: Any) -> str | None:
    """The default Typer shows for ``param``, through Typer's own wording of it."""
    from typer.core import TyperArgument, TyperOption

    if not isinstance(param, (TyperOption, TyperArgument)):
        return None
    show_default_is_str = isinstance(param.show_default, str)
    value = param._extract_default_help_str(ctx=ctx)
    if not (show_default_is_str or (value is not None and (param.show_default or ctx.show_default))):
        return None
    return param._get_default_string(ctx=ctx, show_default_is_str=show_default_is_str, default_value=value) or None


def panel_rows(params: list[Any], ctx: Any) -> list[Row]:
    """The rows of one panel; a first column marks required parameters when any is."""
    rows = [parameter_row(param, ctx) for param in params]
    if any(param.required for param in params):
        rows = [
            Row((Styled.of("*", REQUIRED_STYLE) if param.required else Styled(), *row.names), row.help, row.side_by_side)
            for param, row in zip(params, rows)
        ]
    return rows


def name_widths(rows: list[Row], width: int) -> list[int] | None:
    """Each name column's width (its widest cell), or None where Rich would narrow them: Rich gives the
    help column what the others leave (with a space of padding on each side between columns, none at
    the edges) only while that is at least as wide as every other padded column."""
    sizes = [max(cell_len(row.names[index].plain) for row in rows) for index in range(len(rows[0].names))]
    padded = [size + (1 if index == 0 else 2) for index, size in enumerate(sizes)]
    return sizes if width - sum(padded) >= max(padded) else None


def description(command: Any) -> tuple[bool, str, str]:
    """(deprecated, first paragraph, the others) of a command's help."""
    text = inspect.cleandoc(command.help or "").partition("\f")[0]
    first, _, rest = text.partition("\n\n")
    return bool(command.deprecated), paragraphs(first), paragraphs(rest)


def listed_commands(group: Any, ctx: Any) -> dict[str, list[Any]]:
    """The group's visible commands by panel, the unnamed panel first."""
    by_panel: dict[str, list[Any]] = {COMMANDS_PANEL: []}
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is not None and not command.hidden:
            by_panel.setdefault(getattr(command, "rich_help_panel", None) or COMMANDS_PANEL, []).append(command)
    return by_panel


def command_summary(command: Any) -> str:
    return paragraphs(inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0])


# -- the page ---------------------------------------------------------------------------------------
def page(command: Any, ctx: Any, width: int) -> list[Styled] | None:
    """The lines of ``command``'s help page ``width`` cells wide, or None where the page is Rich's to
    lay out (name columns to narrow, a default set beside its name, a deprecated command)."""
    if width < MIN_WIDTH or command.deprecated:
        return None
    lines = padded(usage_lines(command.get_usage(ctx), width - 2), width, top=1, bottom=1, base="bold")
    if command.help:
        _, first, rest = description(command)
        body = [Styled.of(line) for line in wrap(first, width - 2)]
        if rest:
            body += [Styled.of(" " * (width - 2)), *(Styled.of(line, DESCRIPTION_STYLE) for line in wrap(rest, width - 2))]
        lines += padded(body, width, top=0, bottom=1)
    for title, params in panels(command.get_params(ctx)):
        if not params:
            continue
        rows = panel_rows(params, ctx)
        sizes = name_widths(rows, width - PANEL_FRAME)
        if sizes is None or any(row.side_by_side for row in rows):
            return None
        lines += boxed(title, parameter_lines(rows, sizes, width - 2), width)
    if hasattr(command, "list_commands"):
        by_panel = listed_commands(command, ctx)
        if any(c.deprecated for commands in by_panel.values() for c in commands):
            return None
        name_width = max((cell_len(c.name or "") for commands in by_panel.values() for c in commands), default=0)
        for title, commands in by_panel.items():
            if commands:
                lines += boxed(title, command_lines(commands, name_width, width - 4), width, margin=1)
    if command.epilog:
        lines += padded([Styled.of(line) for line in wrap(paragraphs(command.epilog), width - 2)], width, top=1, bottom=1)
    return lines


def usage_lines(usage: str, width: int) -> list[Styled]:
    """The usage line(s), highlighted as Typer does (``Usage:``, options), wrapped and padded to ``width``."""
    styled = highlight(usage, OPTION_PATTERNS, THEME)
    styles = [style for text, style in styled.runs for _ in text]
    lines = []
    for begin, end in line_ranges(usage, width, fold=True):
        piece = slice(begin, min(end, begin + width))
        lines.append(styled_run(usage[piece], styles[piece]) + Styled.of(" " * (width - cell_len(usage[piece]))))
    return lines


def padded(body: list[Styled], width: int, *, top: int, bottom: int, base: str = "") -> list[Styled]:
    """``body`` (lines ``width`` − 2 cells wide) a space in from each side, ``top`` and ``bottom``
    blank lines around it (Rich's ``Padding``), all of it in ``base`` under the lines' own styles."""
    blank = Styled.of(" " * width, base)
    lines = [(Styled.of(" ") + line + Styled.of(" ")).under(base) for line in body]
    return [blank] * top + lines + [blank] * bottom


def parameter_lines(rows: list[Row], sizes: list[int], width: int) -> list[Styled]:
    """A panel's rows ``width`` cells wide (inside its borders): a space, the name columns side by
    side two spaces apart, two spaces, the help wrapped to the rest, a space."""
    names_width = sum(sizes) + 2 * (len(sizes) - 1)
    help_width = width - names_width - 4
    blank = Styled.of(" " * (names_width + 3))
    lines: list[Styled] = []
    for row in rows:
        names = Styled()
        for index, (cell, size) in enumerate(zip(row.names, sizes)):
            names += Styled.of("  " if index else "") + cell + Styled.of(" " * (size - cell_len(cell.plain)))
        first = True
        for text, style in row.help:
            for line in wrap(text, help_width, fold=False):
                lead = Styled.of(" ") + names + Styled.of("  ") if first else blank
                lines.append(lead + Styled.of(line, style) + Styled.of(" "))
                first = False
        if first:  # no help at all
            lines.append(Styled.of(" ") + names + Styled.of(" " * (help_width + 3)))
    return lines


def command_lines(commands: list[Any], name_width: int, width: int) -> list[Styled]:
    """The commands panel's rows ``width`` cells wide: each name in its column, the first paragraph of
    its help wrapped beside it (Rich's table, its columns a space apart on each side)."""
    description_width = width - name_width - 2
    lines: list[Styled] = []
    for command in commands:
        name = Styled.of(command.name or "", "bold cyan") + Styled.of(" " * (name_width - cell_len(command.name or "")))
        for index, line in enumerate(wrap(command_summary(command), description_width, fold=False)):
            lead = name if index == 0 else Styled.of(" " * name_width)
            lines.append(lead + Styled.of("  ") + Styled.of(line))
    return lines


def boxed(title: str, body: list[Styled], width: int, margin: int = 0) -> list[Styled]:
    """``body`` in Typer's rounded panel ``width`` cells wide, `` title `` in its top border, the
    borders dim; ``margin`` spaces between each border and the body."""
    label = set_cell_size(f" {title} ", min(cell_len(title) + 2, width - 4))
    top = Styled.of("╭─" + label + "─" * (width - 4 - cell_len(label)) + "─╮", BORDER_STYLE)
    side, inside = Styled.of("│", BORDER_STYLE), Styled.of(" " * margin)
    return [top, *(side + inside + line + inside + side for line in body), Styled.of("╰" + "─" * (width - 2) + "╯", BORDER_STYLE)]


# -- printing -----------------------------------------------------------------------------------------
def page_width() -> int:
    """The width Typer's console takes: ``TERMINAL_WIDTH``, else ``COLUMNS``, else the terminal of
    stdin, stdout or stderr, else 80 (Rich's order)."""
    for variable in ("TERMINAL_WIDTH", "COLUMNS"):
        value = os.environ.get(variable, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    for descriptor in (0, 1, 2):
        try:
            return os.get_terminal_size(descriptor).columns or 80
        except (AttributeError, ValueError, OSError):
            continue
    return 80


def styling() -> str | None:
    """None for plain text (also under ``NO_COLOR``: no escape sequence at all); else "colours" — decided by
    the variables and the terminal test Typer's console uses."""
    environ = os.environ
    if environ.get("_TYPER_FORCE_DISABLE_TERMINAL"):
        return None
    forced = any(environ.get(name) for name in ("GITHUB_ACTIONS", "FORCE_COLOR", "PY_COLORS"))
    compatible = environ.get("TTY_COMPATIBLE", "")
    if forced or compatible == "1":
        terminal = True
    elif compatible == "0":
        terminal = False
    else:
        try:
            terminal = sys.stdout.isatty()
        except (AttributeError, ValueError):
            terminal = False
        terminal = terminal and environ.get("TERM", "").lower() not in ("dumb", "unknown")
    if not terminal:
        return None
    return None if environ.get("NO_COLOR") else "colours"  # NO_COLOR: no escapes, bold and dim neither


def print_help(command: Any, ctx: Any) -> None:
    """Print the help page of ``command`` (a Typer command or group) on stdout."""
    mode = styling()
    lines = page(command, ctx, page_width())
    try:
        if lines is None:
            from pecli.cli.help_rich import print_help as print_with_rich

            print_with_rich(command, ctx)
            return
        text = "\n".join(line.plain if mode is None else line.ansi(mode == "colours") for line in lines)
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (``--help | true``): 141, not click's exit 1 for it
        from pecli.cli.exits import ReaderGone

        raise ReaderGone() from None
