"""``--help`` is Typer's own page (pecli/cli/help.py sets only how it is printed): what users need of it.

It fits the terminal and names every option whole at 80 columns; flags show no value; a pipe and
``NO_COLOR`` get no escape sequence; a reader that goes away ends the run with 141, not a traceback.
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys

import pytest
import typer
import typer.main
from rich.cells import cell_len

from pecli.cli import COMMANDS, ClickException, UsageError, build_app, run

#: A cell Rich cut short: a word, a number or a closing bracket, then "…" at the end of the cell.
CUT = re.compile(r"[\w)\]]…(\s*│|\s*$)")


@pytest.fixture(scope="module")
def group():
    return typer.main.get_command(build_app())


def page(name: str, columns: int, monkeypatch, **environ: str) -> str:
    """What ``pecli NAME --help`` prints on stdout at ``columns`` columns under ``environ``."""
    monkeypatch.setenv("COLUMNS", str(columns))
    for variable in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(variable, raising=False)
    for variable, value in environ.items():
        monkeypatch.setenv(variable, value)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = run([name, "--help"] if name else ["--help"])
    assert code == 0, name
    return out.getvalue()


def option_names(group, name: str) -> list[str]:
    command = group if not name else group.get_command(None, name)
    ctx = typer.Context(command, info_name=name or "pecli")
    return [opt for param in command.get_params(ctx) if param.param_type_name == "option" and not param.hidden
            for opt in (*param.opts, *param.secondary_opts)]


def whole(option: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text) is not None


@pytest.mark.parametrize("name", ["", *COMMANDS])
def test_the_page_fits_80_columns_and_cuts_nothing(group, monkeypatch, name):
    text = page(name, 80, monkeypatch, NO_COLOR="1")
    assert max(cell_len(line) for line in text.splitlines()) <= 80
    assert not [line for line in text.splitlines() if CUT.search(line)], name
    missing = [option for option in option_names(group, name) if not whole(option, text)]
    assert not missing, f"pecli {name} --help: {missing} not shown whole"


# Narrow terminals: every line fits. Typer's table lets Rich narrow the option-name columns as readily as
# the help column, so a long name (--max-position-embeddings) is cut short below about 70 columns; the
# pages whose names are short keep them whole at 60.
@pytest.mark.parametrize(("name", "columns"), [("", 60), ("permute", 60), ("diff", 60), ("extend", 60),
                                               ("", 40), ("encode", 60), ("encode", 40), ("check", 40)])
def test_a_narrow_terminal_gets_lines_that_fit(group, monkeypatch, name, columns):
    text = page(name, columns, monkeypatch, NO_COLOR="1")
    lines = text.splitlines()
    assert max(cell_len(line) for line in lines) <= columns
    assert any(line.strip().startswith(f"Usage: pecli {name}".rstrip()) for line in lines)
    if columns == 60 and name != "encode":
        assert [option for option in option_names(group, name) if not whole(option, text)] == []


def test_flags_show_no_value(monkeypatch):
    text = page("", 80, monkeypatch, NO_COLOR="1")
    for flag in ("--version", "--install-completion", "--show-completion", "--help"):
        line = next(line for line in text.splitlines() if flag in line)
        assert "<" not in line, line
    text = page("check", 80, monkeypatch, NO_COLOR="1")
    assert "<int>" in text  # an option that takes a value shows its type
    for flag in ("--json", "--quiet", "--strict", "--no-truncate", "--help"):
        line = next(line for line in text.splitlines() if whole(flag, line))
        assert "<" not in line, line


def test_no_escape_sequence_in_a_pipe(monkeypatch):
    assert "\x1b" not in page("check", 80, monkeypatch)


def test_no_color_on_a_terminal_is_plain_text(monkeypatch):
    """On a terminal the page has Typer's styles; under ``NO_COLOR`` none at all, bold and dim neither
    (Rich keeps those), and the next page is styled again."""
    terminal = {"TTY_COMPATIBLE": "1", "TERM": "xterm"}
    assert "\x1b[" in page("check", 80, monkeypatch, **terminal)
    plain = page("check", 80, monkeypatch, NO_COLOR="1", **terminal)
    assert "\x1b" not in plain and "Usage: pecli check" in plain
    assert "\x1b[" in page("", 80, monkeypatch, **terminal)


def test_the_page_is_typers(monkeypatch):
    """pecli lays out no page of its own: ``--help`` is Typer's renderer's output."""
    from typer import rich_utils

    def typers(*, obj, ctx, markup_mode):
        sys.stdout.write(f"Typer's page of {ctx.command_path} ({markup_mode})\n")

    monkeypatch.setattr(rich_utils, "rich_format_help", typers)
    assert page("encode", 80, monkeypatch).startswith("Typer's page of pecli encode (markdown)")
    assert page("", 80, monkeypatch).startswith("Typer's page of pecli (markdown)")


@pytest.mark.parametrize("reader", ["head -1", "true"])
def test_help_into_a_closed_pipe_exits_141(tmp_path, reader):
    result = subprocess.run(f"{sys.executable} -m pecli encode --help | {reader}; exit ${{PIPESTATUS[0]}}",
                            shell=True, executable="/bin/bash", capture_output=True, text=True, cwd=tmp_path,
                            env={"PATH": "/usr/bin:/bin", "COLUMNS": "80"})
    assert result.returncode == 141, result.stderr
    assert result.stderr == ""


def test_usage_errors_are_clicks_classes():
    """The errors pecli says in one line are the classes of the Click Typer uses (its own copy from 0.29)."""
    assert issubclass(typer.BadParameter, UsageError) and issubclass(UsageError, ClickException)
    assert UsageError.__module__ == typer.BadParameter.__module__
