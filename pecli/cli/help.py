"""``--help`` of every pecli command: Typer's own page, with what pecli's users are promised around it.

Typer lays the page out (its rich help: the usage, the description, one panel per ``rich_help_panel``,
which pecli's options take from ``Parameter.group``). :func:`print_help` changes three things about
how it is printed, each through a setting Typer or Rich offers:

- A flag takes no value, so it shows none: Typer 0.29 writes ``<bool>`` beside ``--json`` unless the
  option has a metavar of its own; flags get the empty one.
- ``NO_COLOR`` means no escape sequence at all (pecli's convention for every output). Rich honours
  ``NO_COLOR`` by dropping colours but keeps bold and dim; Typer builds its console with
  ``typer.rich_utils.COLOR_SYSTEM``, and a console without a colour system styles nothing.
- A reader that goes away (``pecli encode --help | head -1``) ends the run with exit code 141, as for
  any other output. Rich's console answers a broken pipe by sending stdout to ``/dev/null`` and
  raising ``SystemExit(1)`` (``Console.on_broken_pipe``); that exit becomes :class:`ReaderGone`.

And it makes the page cheap without changing a character of it (:func:`typers_renderer`). pecli's
commands are made with ``rich_markup_mode="markdown"``, so Typer hands every piece of help text to
``rich.markdown.Markdown``: importing it costs ``markdown_it`` and Pygments, and each of a page's
hundred-odd texts is parsed by a fresh ``MarkdownIt`` — half the time of ``encode --help``. Almost no
help text has any Markdown in it; such a text is laid out as :class:`PlainParagraphs`, exactly as
Markdown lays out its paragraphs, and only a text with a character Markdown could read as syntax goes
to Rich's ``Markdown``, imported then; and an option's help alone in its ``Columns`` is laid out
without the grid Columns would build for it (:class:`HelpColumns`). Likewise ``rich.traceback``
(Typer's pretty tracebacks, which pecli never prints) is imported only if asked for. The console
Typer prints with renders each distinct table cell once per page (:func:`help_console_class`: most
cells repeat), and Rich's table of emoji codes is loaded only for a text with a ``:name:`` that
could be in it (:class:`_Emoji`, :func:`help_panel_class`).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from typing import Any, Callable, Iterator

from pecli.cli.exits import ReaderGone


def print_help(typers: Callable[[Any, Any], None], command: Any, ctx: Any, formatter: Any) -> None:
    """Print ``command``'s help page with Typer's renderer ``typers`` (its ``format_help``)."""
    for param in command.get_params(ctx):
        if getattr(param, "is_flag", False) and getattr(param, "metavar", None) is None:
            param.metavar = ""
    typers_renderer()
    try:
        with _colours(), _collector_paused(ctx):
            typers(ctx, formatter)
    except SystemExit as stop:
        if stop.code == 1:  # Rich's answer to a broken pipe; nothing else in the page exits
            raise ReaderGone() from None
        raise


def _collector_paused(ctx: Any) -> contextlib.AbstractContextManager[None]:
    """The cycle collector paused while the page is laid out, in a process that runs one command line
    (``Group.one_shot``; :func:`pecli.cli.collector_paused`)."""
    from pecli.cli import collector_paused

    root = ctx.find_root().command if ctx is not None else None
    return collector_paused(getattr(root, "one_shot", False), freeze=False)


@contextlib.contextmanager
def _colours() -> Iterator[None]:
    """Typer's console without a colour system (so no style at all) while ``NO_COLOR`` is set."""
    if not os.environ.get("NO_COLOR"):
        yield
        return
    from typer import rich_utils

    before = rich_utils.COLOR_SYSTEM
    rich_utils.COLOR_SYSTEM = None
    try:
        yield
    finally:
        rich_utils.COLOR_SYSTEM = before


#: What CommonMark (with the tables and strikethrough Rich enables) could read as syntax, erring on
#: the side of Markdown: emphasis (``*``, ``_`` other than between letters or digits), code, HTML and
#: autolinks (``<``), entities, backslash escapes and hard breaks, strikethrough, brackets that could
#: make a link or image (``](``, ``][``, ``![``); at a line's start, a heading, a quote, a link
#: definition (``[``), a table's row (``|``), a list item (``-`` or ``+`` then a space or the line's
#: end; a number, ``.`` or ``)`` and the same: any number where a paragraph starts, else 1 only, the
#: one number CommonMark lets interrupt a paragraph), a setext underline, a thematic break, a table's
#: delimiter row, an indented or fenced code block. A text with none of these is plain paragraphs (a
#: ``[name]`` is a link only with a definition; ``--name`` or ``128)`` inside a paragraph is text).
_SYNTAX = re.compile(
    r"[*`<>]|(?<![^\W_])_|_(?![^\W_])|&[A-Za-z0-9#]+;|\\(?:[!-/:-@\[-`{-~]|$)|~~|\][(\[]|!\["
    r"|^[ \t]*(?:[>#|\[]|(?:[-+]|0*1[.)])(?:[ \t]|$))|(?:\A|\n[ \t]*\n)[ \t]*\d+[.)](?:[ \t]|$)"
    r"|^[ \t]*=+[ \t]*$|^[ \t|:-]*-[ \t|:-]*$|  $|^(?: {4}|\t)",
    re.MULTILINE,
)


class PlainParagraphs:
    """Text without Markdown syntax, rendered as ``rich.markdown.Markdown`` renders it, span for span:
    paragraphs (separated by blank lines), each a left-justified ``Text`` of its lines (stripped), with
    one space between them, in the Markdown's style combined with ``markdown.paragraph``'s, and one
    empty line between paragraphs. Like ``Markdown``, it has no ``__rich_measure__`` (a table cell
    holding it takes the width it is given).
    """

    def __init__(self, markup: str, style: Any = "none") -> None:
        self.markup, self.style = markup, style

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        from rich.segment import Segment
        from rich.text import Text

        style = console.get_style(self.style, default="none") + console.get_style("markdown.paragraph", default="none")
        options = options.update(height=None)
        for number, lines in enumerate(_paragraphs(self.markup)):
            if number:
                yield Segment.line()
            text = Text(justify="left")
            for index, line in enumerate(lines):
                if index:
                    text.append(" ", style)  # Markdown's soft break, a span of its own
                text.append(line, style)
            yield from console.render(text, options)


def _paragraphs(text: str) -> Iterator[list[str]]:
    """The paragraphs of ``text`` (runs of lines that are not blank), each as its lines, stripped."""
    lines: list[str] = []
    for line in [*text.split("\n"), ""]:
        line = line.strip(" \t")
        if line:
            lines.append(line)
        elif lines:
            yield lines
            lines = []


class HelpColumns:
    """What Typer's renderer calls ``Columns`` (each option's help and its notes): Rich's ``Columns``,
    except that one :class:`PlainParagraphs` alone — every option of pecli's pages — is rendered as
    Columns renders it (a one-cell grid giving it the whole width, its lines padded to it) without
    building and measuring that grid, a third of the page's time."""

    def __new__(cls, renderables: Any = None, *args: Any, **kwargs: Any) -> Any:
        items = list(renderables or ())
        if len(items) == 1 and isinstance(items[0], PlainParagraphs) and not args and not kwargs:
            return _WholeWidth(items[0])
        from rich.columns import Columns

        return Columns(items, *args, **kwargs)


class _WholeWidth:
    """A renderable laid out over the whole width it is given, each line padded to it."""

    def __init__(self, renderable: Any) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        from rich.segment import Segment

        new_line = Segment.line()
        for line in console.render_lines(self.renderable, options, pad=True):
            yield from line
            yield new_line


class HelpMarkdown:
    """What Typer's renderer calls ``Markdown``: :class:`PlainParagraphs` for a text without Markdown
    syntax, else Rich's ``Markdown`` (imported then)."""

    def __new__(cls, markup: str, *args: Any, **kwargs: Any) -> Any:
        if _SYNTAX.search(markup) is None and not args and set(kwargs) <= {"style"}:
            return PlainParagraphs(markup, **kwargs)
        from rich.markdown import Markdown

        return Markdown(markup, *args, **kwargs)


#: Every character of the names in Rich's table of emoji codes, lower case (``rich._emoji_codes.EMOJI``;
#: tests/test_help.py holds this to the table).
EMOJI_NAME_CHARACTERS = frozenset("!#&()*+-.0123456789_abcdefghijklmnopqrstuvwxyzãåçéíô’")


class _Emoji:
    """What Typer's renderer calls ``Emoji``: its ``replace`` (which Typer applies to every help text in
    Markdown mode) hands a text to Rich's only where Rich's pattern for an emoji code finds a ``:name:``
    that could be in Rich's table (every character of it is in some name of the table); elsewhere
    Rich's replaces nothing and returns the text as it is, and the table (``rich._emoji_codes``, 3,600
    names) stays unloaded. ``start:stop[:step]`` or ``hf://ORG/REPO`` are no codes."""

    _CODE = re.compile(r"(:(\S*?)(?:(?:\-)(emoji|text))?:)")  # rich._emoji_replace's pattern, which it scans alike

    @classmethod
    def replace(cls, text: str) -> str:
        if all(not set(code.group(2).lower()) <= EMOJI_NAME_CHARACTERS for code in cls._CODE.finditer(text)):
            return text
        from rich.emoji import Emoji

        return Emoji.replace(text)


def help_panel_class() -> type:
    """Rich's ``Panel``, its title given as text: Rich makes a title given as a string into text with
    ``Text.from_markup``, which for a string without ``[`` is ``Text(emoji codes replaced)``; that is
    done here, with :class:`_Emoji` (Rich's way loads the table of emoji codes for the word "Options")."""
    from rich.panel import Panel
    from rich.text import Text

    class HelpPanel(Panel):
        def __init__(self, renderable: Any, *args: Any, title: Any = None, **kwargs: Any) -> None:
            if isinstance(title, str) and "[" not in title:
                title = Text(_Emoji.replace(title), style="")
            super().__init__(renderable, *args, title=title, **kwargs)

    return HelpPanel


def _rendering_key(renderable: Any, options: Any, style: Any, pad: bool, new_lines: bool) -> Any:
    """What the lines of ``Padding(Text)`` (each cell of Typer's tables) depend on, or None for any other
    renderable: the padding, the text's characters, spans and settings, every console option, and the
    arguments of ``render_lines``."""
    from rich.padding import Padding
    from rich.text import Text

    if type(renderable) is not Padding or type(renderable.renderable) is not Text:
        return None
    text = renderable.renderable
    return (renderable.top, renderable.right, renderable.bottom, renderable.left, renderable.style, renderable.expand,
            text.plain, tuple(text.spans), text.style, text.justify, text.overflow, text.no_wrap, text.end,
            text.tab_size, tuple(options.__dict__.items()), style, pad, new_lines)


def help_console_class() -> type:
    """Rich's ``Console``, remembering the lines of each table cell it renders (:func:`_rendering_key`):
    Rich renders a cell as a function of that key, and a page repeats most cells (an empty column's cell
    on every row, the same type names), each rendered through three layers of Rich's generic code. One
    console prints one page; the lines are Rich's own, handed out as copies."""
    from rich.console import Console

    class HelpConsole(Console):
        def render_lines(self, renderable: Any, options: Any = None, *, style: Any = None, pad: bool = True,
                         new_lines: bool = False) -> list[list[Any]]:
            try:
                key = _rendering_key(renderable, options or self.options, style, pad, new_lines)
                lines = self._rendered.get(key) if key is not None else None
            except (TypeError, AttributeError):  # a value that cannot be a key: render as Rich does
                key = lines = None
            if lines is None:
                lines = super().render_lines(renderable, options, style=style, pad=pad, new_lines=new_lines)
                if key is not None:
                    self._rendered[key] = [list(line) for line in lines]
                return lines
            return [list(line) for line in lines]

        @property
        def _rendered(self) -> dict[Any, list[list[Any]]]:
            rendered = self.__dict__.get("_rendered_lines")
            if rendered is None:
                rendered = self.__dict__["_rendered_lines"] = {}
            return rendered

    return HelpConsole


class _Traceback:
    """Stands in for ``rich.traceback.Traceback`` in Typer's renderer until a traceback is asked for."""

    @classmethod
    def from_exception(cls, *args: Any, **kwargs: Any) -> Any:
        from rich.traceback import Traceback

        return Traceback.from_exception(*args, **kwargs)


def typers_renderer() -> Any:
    """``typer.rich_utils``, imported without ``rich.markdown`` and ``rich.traceback`` (stand-ins sit in
    their places in ``sys.modules`` while it imports, and leave), with :class:`HelpMarkdown` as its
    ``Markdown`` and :class:`HelpColumns` as its ``Columns``. The module and ``rich`` are otherwise Typer's and Rich's own."""
    if "typer.rich_utils" not in sys.modules:
        import types

        stand_ins = {}
        for name, attribute, value in (("rich.markdown", "Markdown", HelpMarkdown), ("rich.traceback", "Traceback", _Traceback)):
            if name not in sys.modules:
                stand_ins[name] = sys.modules[name] = types.ModuleType(name)
                setattr(stand_ins[name], attribute, value)
        try:
            from typer import rich_utils
        finally:
            for name, module in stand_ins.items():
                if sys.modules.get(name) is module:
                    del sys.modules[name]
    from typer import rich_utils

    if getattr(rich_utils.Markdown, "__module__", None) == "rich.markdown":  # imported before: Rich's own
        rich_utils.Markdown = HelpMarkdown
    if getattr(rich_utils.Columns, "__module__", None) == "rich.columns":
        rich_utils.Columns = HelpColumns
    if getattr(rich_utils.Emoji, "__module__", None) == "rich.emoji":
        rich_utils.Emoji = _Emoji
    if getattr(rich_utils.Panel, "__module__", None) == "rich.panel":
        rich_utils.Panel = help_panel_class()
    if getattr(rich_utils.Console, "__module__", None) == "rich.console":
        rich_utils.Console = help_console_class()
    return rich_utils
