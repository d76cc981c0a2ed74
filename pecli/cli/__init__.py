"""The ``pecli`` command line: a thin Typer layer that parses, calls the core and renders.

Each subcommand lives in its own module, listed once in :data:`COMMANDS`. The group of commands is lazy
(:class:`Group`, Click's "lazily loading subcommands"): a run imports only the module of the command it
runs, when Click resolves its name (start-up stays close to importing Typer and NumPy); ``pecli --help``
and a shell completing a command's name list every command from the summaries here without importing any. :func:`main` is the console entry
point, which turns usage errors into one line and exit code 2.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import importlib
import os
import re
import signal
import sys
from typing import Annotated, Any, Callable, Iterator

# Typer and Click load with the cycle collector paused (as a command's modules do, see collector_paused): what an
# import makes lives as long as the process, and collections during it free nothing. The collector is as
# it was once they are loaded, or failed to load.
_COLLECTING = gc.isenabled()
gc.disable()
try:
    import typer
    import typer.core
    import typer.main
    import typer.models

    from pecli import __version__
    from pecli.cli.coercion import plain_values
    from pecli.cli.exits import BAD_INPUT, BROKEN_PIPE, BUG, INTERRUPTED, TERMINATED, Interrupted, ReaderGone, Terminated
finally:
    if _COLLECTING:
        gc.enable()

#: Click's exception module: the one that defines ``typer.BadParameter``, whether Typer uses the
#: ``click`` package or its own copy of it (``typer._click``, Typer 0.29 and later).
_CLICK_EXCEPTIONS = sys.modules[typer.BadParameter.__module__]
#: Every error Click says in one line (usage, bad values, missing files), and the usage errors among them.
ClickException: type[Exception] = _CLICK_EXCEPTIONS.ClickException
UsageError: type[Exception] = _CLICK_EXCEPTIONS.UsageError

#: Every subcommand: its module (which defines a function of the same name) and its one-line summary.
COMMANDS: dict[str, tuple[str, str]] = {
    "encode": ("pecli.cli.encode", "Compute a scheme's encoding and write it as .npy or .npz."),
    "check": ("pecli.cli.check", "Measure a property of an encoding: exit 0 when it holds, 1 when it does not."),
    "compare": ("pecli.cli.compare", "Measure every property of several schemes side by side."),
    "wavelengths": ("pecli.cli.wavelengths", "The frequency and wavelength of every pair of a sinusoidal or rotary encoding."),
    "plot": ("pecli.cli.plot", "Draw a scheme and write the figure as .png, .svg or .pdf."),
    "inspect": ("pecli.cli.inspect", "Which RoPE frequency pairs a checkpoint's q and k projections use."),
    "permute": ("pecli.cli.permute", "Convert a q or k projection between the interleaved and half RoPE layouts."),
    "verify": ("pecli.cli.verify", "Check your own position-encoding arrays against the model's, and name the bug."),
    "diff": ("pecli.cli.diff", "Compare two position plans (a config.json and a GGUF file, two configs): exit 1 when they differ."),
    "extend": ("pecli.cli.extend", "The RoPE changes that reach a longer context, measured, ranked, as config patches."),
    "sweep": ("pecli.cli.sweep", "Run a check over the product of grids of values: one row per point."),
}


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"pecli {__version__}\n")
        raise typer.Exit()


def _root(
    version: Annotated[bool, typer.Option("--version", "-V", callback=_version, is_eager=True, help="print the version and exit")] = False,
) -> None:
    """Compute, measure and picture the positional encodings of transformers."""


def _listed_only() -> None:  # pragma: no cover - never runs: the command's own module is loaded to run it
    raise typer.Exit(2)


def _command(name: str, callback: Callable[..., Any], **settings: Any) -> Any:
    """The click command Typer makes of ``callback`` under ``name``, with pecli's :class:`Command`."""
    info = typer.models.CommandInfo(name=name, cls=Command, callback=callback, **settings)
    return typer.main.get_command_from_info(info, pretty_exceptions_short=True, rich_markup_mode="markdown")


class Command(typer.core.TyperCommand):
    """A Typer command whose ``--help`` is Typer's page (:func:`pecli.cli.help.print_help`, loaded only
    to print it), which refuses an option of one value given twice (Click would keep the last one,
    silently), and whose plain options are converted without Typer's per-option Pydantic adapters
    (:mod:`pecli.cli.coercion`)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from pecli.cli.help import print_help

        print_help(super().format_help, self, ctx, formatter)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        plain_values(self.get_params(ctx))  # the help option too, which Click makes when asked
        if not ctx.resilient_parsing:  # a shell completing the line: never an error on TAB
            refuse_repeated(self.params, args, ctx)
        return super().parse_args(ctx, args)


def refuse_repeated(params: list[Any], args: list[str], ctx: Any) -> None:
    """A usage error when an option that takes one value is given more than once."""
    single = {name: option for option in params if getattr(option, "opts", None) and option.param_type_name == "option"
              and not option.multiple and not option.is_flag for name in (*option.opts, *option.secondary_opts)}
    seen: dict[str, int] = {}
    for arg in args:
        if arg == "--":
            break
        option = single.get(arg.split("=", 1)[0])
        if option is not None:
            seen[option.opts[0]] = seen.get(option.opts[0], 0) + 1
    repeated = [name for name, count in seen.items() if count > 1]
    if repeated:
        raise UsageError(f"{repeated[0]} is given {seen[repeated[0]]} times; it takes one value", ctx)


class Group(typer.core.TyperGroup):
    """The lazy group of commands, whose ``--help`` is Typer's page (:func:`pecli.cli.help.print_help`).

    A command's module is imported when Click resolves its name, and kept. While the group lists its
    commands (its ``--help``, a shell completing a command's name) each is a stand-in that has only its
    summary. ``one_shot``: the process runs one command line, see :func:`collector_paused`.
    """

    listing = False
    one_shot = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.listed: dict[str, Any] = {}  # the stand-ins, made once

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, name: str) -> Any:
        if name not in COMMANDS:
            return None
        if self.listing:
            if name not in self.listed:
                self.listed[name] = _command(name, _listed_only, help=COMMANDS[name][1], add_help_option=False)
            return self.listed[name]
        if name not in self.commands:
            with collector_paused(self.one_shot):
                self.commands[name] = _command(name, getattr(importlib.import_module(COMMANDS[name][0]), name))
        return self.commands[name]

    @contextlib.contextmanager
    def _listed(self) -> Iterator[None]:
        self.listing = True
        try:
            yield
        finally:
            self.listing = False

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from pecli.cli.help import print_help

        with self._listed():
            print_help(super().format_help, self, ctx, formatter)

    def shell_complete(self, ctx: Any, incomplete: str) -> list[Any]:
        with self._listed():
            return super().shell_complete(ctx, incomplete)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        plain_values(self.get_params(ctx))
        return super().parse_args(ctx, args)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """Click's resolution, naming the closest commands when the name is none (Click suggests options only)."""
        if args and args[0] not in COMMANDS and not args[0].startswith("-") and not ctx.resilient_parsing:
            import difflib

            close = difflib.get_close_matches(args[0].lower(), list(COMMANDS), n=2, cutoff=0.6)
            hint = f" (did you mean {' or '.join(close)}?)" if close else f"; the commands: {', '.join(COMMANDS)}"
            ctx.fail(f"no such command {args[0]!r}{hint}")
        return super().resolve_command(ctx, args)


#: The options that ask for a help page, on every command.
HELP_OPTIONS = ("-h", "--help")


def build_app() -> typer.Typer:
    """The Typer app: the root's options (with Typer's ``--install-completion`` and ``--show-completion``)
    over the lazy :class:`Group` of :data:`COMMANDS`."""
    app = typer.Typer(
        name="pecli",
        cls=Group,
        help="Compute, measure and picture the positional encodings of transformers.",
        pretty_exceptions_show_locals=False,
        rich_markup_mode="markdown",
        context_settings={"help_option_names": HELP_OPTIONS},
    )
    app.callback()(_root)
    return app


#: The whole app, for tests and for embedding; no command's module is loaded until it runs.
app = build_app()


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


class _ClosedStream:
    """Stands in for a standard stream the caller closed (``>&-``): writing to it is an error."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def main() -> None:
    """Console entry point: run the command line; every failure becomes one line on stderr and an exit code.

    The codes are those of :mod:`pecli.cli.exits`. A line that asks for a help page runs NumPy's code only
    if something asks NumPy for something (:mod:`pecli.cli.deferred_numpy`).
    """
    signal.signal(signal.SIGTERM, _on_sigterm)
    if sys.stdout is None:
        sys.stdout = _ClosedStream()  # type: ignore[assignment]
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - nowhere to say anything; the exit code still tells
    for stream in (sys.stdout, sys.stderr):  # an ASCII or cp1252 terminal: θ and … shown as ?, not an error
        with contextlib.suppress(AttributeError, OSError, ValueError):  # a closed descriptor keeps its own errors
            stream.reconfigure(errors="replace")
    args = sys.argv[1:] or ["--help"]
    if any(option in args for option in HELP_OPTIONS):  # a page shows nothing NumPy computes
        from pecli.cli.deferred_numpy import defer_numpy

        defer_numpy()
    sys.exit(run(args, one_shot=True))


def run(args: list[str], *, command: Callable[..., Any] | None = None, one_shot: bool = False) -> int:
    """Run ``pecli ARGS…`` and return its exit code, having said any failure in one line on stderr.

    ``command`` is the click command of the whole app when the caller runs many command lines (a
    fuzzer); by default it is made of :data:`app`, and loads only the command that runs. ``one_shot``:
    the process runs this one command line and ends (the console entry point), see :func:`collector_paused`.
    """
    try:
        from pecli.cli.completion import request_is_broken

        if request_is_broken():
            return 0  # a completion request without what its protocol needs: nothing offered, quietly
        if command is None:
            with collector_paused(one_shot):
                command = typer.main.get_command(app)
            command.one_shot = one_shot
        code = command(args=args, prog_name="pecli", standalone_mode=False)
        sys.stdout.flush()
    except ClickException as error:
        code = _say(f"pecli: error: {_without_help_hint(error.format_message())}{_file_hint(error, args)}", error.exit_code)
    except (KeyboardInterrupt, Interrupted):
        code = _say("pecli: interrupted", INTERRUPTED)
    except typer.Abort:
        code = _say("pecli: aborted", INTERRUPTED)
    except Terminated:
        code = _say("pecli: terminated", TERMINATED)
    except (BrokenPipeError, ReaderGone):
        code = _quiet_broken_pipe()
    except OSError as error:  # standard output full (/dev/full) or closed
        if error.errno == errno.EPIPE:
            code = _quiet_broken_pipe()
        else:
            code = _say(f"pecli: error: cannot write the output: {error.strerror or error}", BAD_INPUT)
    except Exception as error:  # a bug: one line unless asked for the traceback
        if os.environ.get("PECLI_DEBUG"):
            raise
        code = _say(f"pecli: internal error: {type(error).__name__}: {error} (PECLI_DEBUG=1 shows the traceback)", BUG)
    code = code if isinstance(code, int) else 0
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        code = _quiet_broken_pipe() if code == 0 else code
    return code


@contextlib.contextmanager
def collector_paused(one_shot: bool, *, freeze: bool = True) -> Iterator[None]:
    """Python's cycle collector paused for a while — in a process that runs one command line — and, with
    ``freeze``, everything made meanwhile set aside from later collections (:func:`gc.freeze`).

    Loading a run's modules (``freeze``): modules, classes and functions live until the process ends, and
    the collector traversing them, during the imports and once more when Python exits, frees nothing and
    costs about 15–20 ms of each run (``benchmarks/bench_startup.py``); what the command itself makes is
    collected as usual. Laying out a help page (no ``freeze``): its thousands of short-lived segments would
    start collections that traverse every object loaded before. Not in a process that runs many command
    lines (tests, a notebook): there, freezing would keep their garbage.
    """
    if not one_shot or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        gc.enable()


#: A word of a message longer than this (a value echoed back: a 1 MB ``--args``) is shown by its ends.
LONGEST_WORD = 240


def shortened(line: str) -> str:
    """``line`` with every word (a run without spaces) longer than :data:`LONGEST_WORD` characters cut
    to its first 100 and last 40, saying how long it was: an error stays one readable line whatever
    value it quotes; a line still longer than 1,800 characters keeps its first 1,200 and last 400."""
    def cut(match: re.Match) -> str:
        word = match.group(0)
        return f"{word[:100]}…({len(word):,} characters)…{word[-40:]}"

    line = re.sub(rf"\S{{{LONGEST_WORD + 1},}}", cut, line)
    return line if len(line) <= 1800 else f"{line[:1200]} …({len(line):,} characters)… {line[-400:]}"


def one_line(text: str) -> str:
    """``text`` with line breaks and other control characters escaped: a message stays one line; an
    overlong value it quotes is shown by its ends (:func:`shortened`)."""
    return shortened("".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text))


#: The option that takes a file of each kind, for a file given without one (``pecli inspect config c.json``).
FILE_OPTIONS = {".json": "--hf-config", ".gguf": "--gguf", ".yaml": "--config", ".yml": "--config"}


def _without_help_hint(message: str) -> str:
    """Click's message without its suggestion when the only option it finds close is ``--help``
    (``No such option: --alpha (Possible options: --help)``): a misspelled option is never a request for help."""
    return re.sub(r"(?: Did you mean --help\?| \(Possible options: --help\))$", "", message)


def _file_hint(error: Exception, args: list[str]) -> str:
    """Where a usage error is a file given without its option, the option that takes it."""
    if not str(error.format_message()).startswith("Got unexpected extra argument"):
        return ""
    for word in args:
        option = FILE_OPTIONS.get(os.path.splitext(word)[1].lower())
        if option and not word.startswith("-") and word in error.format_message():
            return f": give a file as {option} {word}"
    return ""


def _say(line: str, code: int) -> int:
    try:
        sys.stderr.write(one_line(line) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # stderr closed or gone: the exit code is all there is
    return code


def _quiet_broken_pipe() -> int:
    """The reader of stdout went away: stop quietly, and keep Python from complaining at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    return BROKEN_PIPE
