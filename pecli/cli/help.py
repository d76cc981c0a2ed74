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
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, Iterator

from pecli.cli.exits import ReaderGone


def print_help(typers: Callable[[Any, Any], None], command: Any, ctx: Any, formatter: Any) -> None:
    """Print ``command``'s help page with Typer's renderer ``typers`` (its ``format_help``)."""
    for param in command.get_params(ctx):
        if getattr(param, "is_flag", False) and getattr(param, "metavar", None) is None:
            param.metavar = ""
    try:
        with _colours():
            typers(ctx, formatter)
    except SystemExit as stop:
        if stop.code == 1:  # Rich's answer to a broken pipe; nothing else in the page exits
            raise ReaderGone() from None
        raise


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
