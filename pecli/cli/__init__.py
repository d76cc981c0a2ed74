"""The ``pecli`` command line: a thin Typer layer that parses, calls the core and renders.

Each subcommand lives in its own module and is registered here; :func:`main` is the console entry
point, which turns usage errors into one line and exit code 2.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from pecli import __version__
from pecli.cli.check import check
from pecli.cli.compare import compare
from pecli.cli.encode import encode
from pecli.cli.wavelengths import wavelengths
from pecli.cli.plot import plot

app = typer.Typer(
    name="pecli",
    help="Compute, measure and picture the positional encodings of transformers.",
    pretty_exceptions_show_locals=False,
    rich_markup_mode="markdown",
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.command(name="encode")(encode)
app.command(name="check")(check)
app.command(name="compare")(compare)
app.command(name="wavelengths")(wavelengths)
app.command(name="plot")(plot)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"pecli {__version__}\n")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", "-V", callback=_version, is_eager=True, help="print the version and exit")] = False,
) -> None:
    """Compute, measure and picture the positional encodings of transformers."""


#: Click's base exception, whether Typer uses click or a vendored copy of it.
_CLICK_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def main() -> None:
    """Console entry point: run the app; usage errors become one line and exit code 2."""
    try:
        code = app(args=sys.argv[1:] or ["--help"], prog_name="pecli", standalone_mode=False)
    except _CLICK_ERROR as error:
        sys.stderr.write(f"pecli: error: {error.format_message()}\n")
        code = error.exit_code
    except (typer.Abort, KeyboardInterrupt):
        sys.stderr.write("pecli: aborted\n")
        code = 130
    except Exception as error:  # a bug: one line unless asked for the traceback
        if os.environ.get("PECLI_DEBUG"):
            raise
        sys.stderr.write(f"pecli: internal error: {type(error).__name__}: {error} (PECLI_DEBUG=1 shows the traceback)\n")
        code = 3
    sys.exit(code if isinstance(code, int) else 0)
