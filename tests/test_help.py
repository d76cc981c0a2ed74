"""``--help`` (pecli/cli/help.py) prints the page Typer's renderer prints, character for character:
the same usage, description, panels, columns and wrapping, from plain text cells."""

from __future__ import annotations

import contextlib
import io

import pytest
import typer
import typer.main
from typer import rich_utils

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


# 80 columns is the tests' width; 50 makes Rich narrow the option columns (pecli leaves that table
# to Rich); 140 gives the help column more room than it needs.
@pytest.mark.parametrize(("name", "width"), [("pecli", 80), *((name, 80) for name in COMMANDS), ("encode", 50), ("check", 140)])
@pytest.mark.skipif(TYPER < (0, 28), reason="pecli prints the page of Typer 0.28")
def test_help_is_the_page_typer_prints(group, monkeypatch, name, width):
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.setenv("NO_COLOR", "1")
    root = typer.Context(group, info_name="pecli")
    command = group if name == "pecli" else group.commands[name]
    ctx = root if name == "pecli" else typer.Context(command, info_name=name, parent=root)
    ours = page(lambda: print_help(command, ctx))
    typers = page(lambda: rich_utils.rich_format_help(obj=command, ctx=ctx, markup_mode="markdown"))
    assert ours == typers


def test_typers_renderer_is_not_used(invoke, monkeypatch):
    def refuse(**kwargs):
        raise AssertionError("Typer's help renderer was called")

    monkeypatch.setattr(rich_utils, "rich_format_help", refuse)
    for args in (["--help"], ["encode", "--help"], ["check", "--help"]):
        result = invoke(*args)
        assert result.exit_code == 0 and "Usage" in result.stdout
