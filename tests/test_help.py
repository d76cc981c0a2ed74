"""``--help`` (pecli/cli/help.py) prints the page Typer's renderer prints, character for character:
the same usage, description, panels, columns and wrapping, from plain text cells."""

from __future__ import annotations

import contextlib
import io
import re

import pytest
import typer
import typer.main

from pecli.cli import COMMANDS, build_app
from pecli.cli.help import print_help


@pytest.fixture(scope="module")
def group():
    return typer.main.get_command(build_app())


def page(render) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        render()
    return buffer.getvalue()


#: The Typer whose page pecli's renderer follows (the newest the project allows); other versions lay
#: the description out a little differently, and are not compared.
TYPER = tuple(int(part) for part in typer.__version__.split(".")[:2])


def pages(group, monkeypatch, name, width, **environ):
    """(pecli's page, Typer's page) of command ``name`` at ``width`` columns under ``environ``."""
    monkeypatch.setenv("COLUMNS", str(width))
    for variable, value in environ.items():
        monkeypatch.setenv(variable, value)
    root = typer.Context(group, info_name="pecli")
    command = group if name == "pecli" else group.commands[name]
    ctx = root if name == "pecli" else typer.Context(command, info_name=name, parent=root)
    ours = page(lambda: print_help(command, ctx))
    from typer import rich_utils  # here, not at the top: every test process imports this file to collect it

    without_flag_types(monkeypatch)
    typers = page(lambda: rich_utils.rich_format_help(obj=command, ctx=ctx, markup_mode="markdown"))
    return ours, typers


def without_flag_types(monkeypatch) -> None:
    """Typer 0.29 shows ``<bool>`` beside a flag (``--version -V <bool>``), as if it took a value; pecli
    shows nothing there. Typer's page is compared as Typer lays it out with the same rule (patched after
    pecli's page is printed, so that pecli's is its own)."""
    from typer.core import TyperOption

    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is not None:
        monkeypatch.setattr(TyperOption, "display_type_rich",
                            lambda self, *args, **kwargs: "" if self.is_flag else shown(self, *args, **kwargs))


SGR = re.compile(r"\x1b\[([0-9;]*)m")
#: What an ANSI code means, by its number: an attribute, or a colour.
CODES = {"1": "bold", "2": "dim", "31": "red", "32": "green", "33": "yellow", "35": "magenta", "36": "cyan"}


def styled_characters(text: str) -> list[tuple[str, frozenset[str]]]:
    """Each visible character with the styles the ANSI codes before it left on: the page as a terminal
    shows it, whichever way the codes were grouped."""
    out, active, at = [], frozenset(), 0
    for match in SGR.finditer(text):
        out += [(character, active) for character in text[at : match.start()]]
        codes = [code for code in match.group(1).split(";") if code]
        active = frozenset() if not codes or codes == ["0"] else active | {CODES.get(code, code) for code in codes}
        at = match.end()
    return out + [(character, active) for character in text[at:]]


# Every command once (each page is compared against Typer's, which takes Rich a few tenths of a second to
# lay out). 80 columns is the tests' width; 50 and 60 make Rich narrow the option columns of most commands
# (pecli leaves that table to Rich) but not those of the group and of permute; 100 and 140 give the help
# column more room than it needs.
WIDTHS = {"encode": 50, "check": 140, "permute": 60, "plot": 100, "wavelengths": 140}


@pytest.mark.parametrize(("name", "width"), [
    ("pecli", 80), ("pecli", 50), *((name, WIDTHS.get(name, 80)) for name in COMMANDS),
])
@pytest.mark.skipif(TYPER < (0, 28), reason="pecli prints the page of Typer 0.28")
def test_help_is_the_page_typer_prints(group, monkeypatch, name, width):
    ours, typers = pages(group, monkeypatch, name, width, NO_COLOR="1")
    assert ours == typers


# On a terminal: the same characters in the same styles (pecli groups its codes in fewer, longer runs);
# under NO_COLOR bold and dim stay, as Rich keeps them. Blanks are compared as text only: a style on a
# space shows nothing.
@pytest.mark.parametrize(("name", "width", "environ"), [
    ("pecli", 80, {}), ("check", 100, {}), ("encode", 50, {}),
])
@pytest.mark.skipif(TYPER < (0, 28), reason="pecli prints the page of Typer 0.28")
def test_help_on_a_terminal_has_typers_styles(group, monkeypatch, name, width, environ):
    ours, typers = pages(group, monkeypatch, name, width, FORCE_COLOR="1", TERM="xterm", **environ)
    assert "\x1b[" in ours
    ours, typers = styled_characters(ours), styled_characters(typers)
    assert "".join(c for c, _ in ours) == "".join(c for c, _ in typers)
    assert [(c, s) for c, s in ours if not c.isspace()] == [(c, s) for c, s in typers if not c.isspace()]


def test_flags_show_no_value(group, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    root = typer.Context(group, info_name="pecli")
    text = page(lambda: print_help(group, root))
    for flag in ("--version", "--install-completion", "--show-completion", "--help"):
        line = next(line for line in text.splitlines() if flag in line)
        assert "<" not in line, line
    check = group.commands["check"]
    text = page(lambda: print_help(check, typer.Context(check, info_name="check", parent=root)))
    assert "<int>" in text and not any("--json" in line and "<" in line for line in text.splitlines())


def test_no_color_on_a_terminal_is_plain_text(group, monkeypatch):
    """``NO_COLOR`` means no escape sequence at all: no colour, and no bold or dim either (Rich keeps those)."""
    ours, _ = pages(group, monkeypatch, "check", 100, FORCE_COLOR="1", TERM="xterm", NO_COLOR="1")
    assert "\x1b" not in ours and "Usage" in ours


def test_typers_renderer_is_not_used(invoke, monkeypatch):
    def refuse(**kwargs):
        raise AssertionError("Typer's help renderer was called")

    from typer import rich_utils

    monkeypatch.setattr(rich_utils, "rich_format_help", refuse)
    for args in (["--help"], ["encode", "--help"], ["check", "--help"]):
        result = invoke(*args)
        assert result.exit_code == 0 and "Usage" in result.stdout
