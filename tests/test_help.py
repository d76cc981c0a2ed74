"""``--help`` is Typer's own page (pecli/cli/help.py sets only how it is printed): what users need of it.

It fits the terminal and names every option whole at 80 columns; flags show no value; a pipe and
``NO_COLOR`` get no escape sequence; a reader that goes away ends the run with 141, not a traceback.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
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


def test_help_into_a_closed_pipe_exits_141(tmp_path):
    result = subprocess.run(f"{sys.executable} -m pecli encode --help | true; exit ${{PIPESTATUS[0]}}",
                            shell=True, executable="/bin/bash", capture_output=True, text=True, cwd=tmp_path,
                            env={"PATH": "/usr/bin:/bin", "COLUMNS": "80"})
    assert result.returncode == 141, result.stderr
    assert result.stderr == ""


@pytest.mark.skipif(not hasattr(fcntl, "F_SETPIPE_SZ"), reason="a pipe's size is set on Linux only")
def test_help_into_a_pipe_closed_after_one_line_exits_141(tmp_path):
    """``pecli encode --help | head -1``. The pipe is made to hold 4 KiB, less than the page (30 KB), so the
    page is still being written when the reader leaves, however the two processes are scheduled (with
    Linux's 64 KiB the whole page could be written before ``head`` read its line, and exit 0)."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    process = subprocess.Popen([sys.executable, "-m", "pecli", "encode", "--help"], stdout=write_end,
                               stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                               env={"PATH": "/usr/bin:/bin", "COLUMNS": "80"})
    os.close(write_end)
    with os.fdopen(read_end, "rb", buffering=0) as reader:
        assert reader.read(4096)
    stderr = process.communicate(timeout=60)[1]
    assert process.returncode == 141, stderr
    assert stderr == ""


def test_usage_errors_are_clicks_classes():
    """The errors pecli says in one line are the classes of the Click Typer uses (its own copy from 0.29)."""
    assert issubclass(typer.BadParameter, UsageError) and issubclass(UsageError, ClickException)
    assert UsageError.__module__ == typer.BadParameter.__module__


# -- the page made cheap: plain help text is not parsed as Markdown, and looks the same -------------------

#: Texts Markdown reads as plain paragraphs, and texts it reads as syntax (each goes to Rich's Markdown).
PLAIN_TEXTS = [
    "one line", "  two\n lines \n\n\n  and a second paragraph ", "θ_i = base^(−2i/d), rope_theta, ORG/NAME[@REVISION]: x",
    "d [default: 2] (a, b) {c} 'q' \"r\" $ % ^ ~ 1.5 p-q a+b x=y? no: 3", "a [x] (y)", "",
    "a line\n--name and -x\n128) inside a paragraph\n2. also", "-1 or +2\n1.5 and\n= y", "x\n\n3.5 km",
]
MARKDOWN_TEXTS = [
    "*em*", "**strong**", "`code`", "a_b_ _c_", "<int>", "&amp;", "a\\*b", "line  \nbreak", "~~gone~~",
    "[a](b)", "[a][b]", "![i](j)", "- item", "+ item", "1. item", "2) item", "# title", "> quote",
    "title\n=====", "a | b\n--|--\n1 | 2", "    code", "[ref]: http://x\n[ref]",
    "a\n1) item", "a\n01. item", "a\n\n3. item", "a\n- item", "a\n+", "a\n-", "a\n  ===", "- - -",
]


def test_help_texts_without_markdown_are_plain_paragraphs():
    from rich.markdown import Markdown

    from pecli.cli.help import HelpMarkdown, PlainParagraphs

    assert all(isinstance(HelpMarkdown(text, style="dim"), PlainParagraphs) for text in PLAIN_TEXTS)
    assert all(isinstance(HelpMarkdown(text, style="dim"), Markdown) for text in MARKDOWN_TEXTS)


@pytest.mark.parametrize("width", [12, 40, 100])
def test_plain_paragraphs_are_what_rich_markdown_prints(width):
    """Rich's own Markdown is the reference: the same characters and the same escape sequences."""
    from rich.console import Console
    from rich.markdown import Markdown

    from pecli.cli.help import PlainParagraphs

    def printed(renderable) -> str:
        console = Console(file=io.StringIO(), width=width, force_terminal=True, color_system="standard")
        console.print(renderable)
        return console.file.getvalue()

    for text in PLAIN_TEXTS:
        for style in ("", "dim", "bold red"):
            assert printed(PlainParagraphs(text, style=style)) == printed(Markdown(text, style=style)), (text, style)


@pytest.mark.parametrize("name", ["", "encode", "extend", "plot"])
def test_the_page_is_the_one_rich_markdown_gives(monkeypatch, name):
    """Every help text through Rich's Markdown and Columns (as Typer does with rich_markup_mode="markdown"),
    Rich's own Emoji and a Console that remembers no cell, gives the same page, character for character
    and style for style, as pecli's plain paragraphs and remembered cells."""
    import pecli.cli.help as help_module
    from rich.columns import Columns
    from rich.console import Console
    from rich.emoji import Emoji
    from rich.markdown import Markdown
    from rich.panel import Panel

    rich_utils = help_module.typers_renderer()
    assert rich_utils.Console is not Console and issubclass(rich_utils.Console, Console)
    monkeypatch.setattr(help_module, "typers_renderer", lambda: rich_utils)
    for environ in ({"TTY_COMPATIBLE": "1", "TERM": "xterm"}, {"NO_COLOR": "1"}):
        for columns in (40, 50, 80, 132):
            ours = page(name, columns, monkeypatch, **environ)
            with monkeypatch.context() as rich_own:
                rich_own.setattr(rich_utils, "Markdown", Markdown)
                rich_own.setattr(rich_utils, "Columns", Columns)
                rich_own.setattr(rich_utils, "Emoji", Emoji)
                rich_own.setattr(rich_utils, "Console", Console)
                rich_own.setattr(rich_utils, "Panel", Panel)
                assert page(name, columns, monkeypatch, **environ) == ours, (columns, environ)


def test_a_remembered_cell_is_the_cell_rich_renders():
    """The console that prints the page hands out, for a cell it has rendered before, the lines Rich
    renders for it: for equal cells (the same characters, spans, padding and options) and only for them."""
    from rich.console import Console
    from rich.padding import Padding
    from rich.text import Text

    import pecli.cli.help as help_module

    remembering = help_module.help_console_class()(file=io.StringIO(), width=60, force_terminal=True)
    plain = Console(file=io.StringIO(), width=60, force_terminal=True)
    cells = [Text(""), Text("--dim"), Text("--dim", style="bold"), Text("--dim", end=""), Text("INTEGER " * 12),
             Text("a b"), Text("--dim")]
    cells[5].stylize("red", 0, 1)
    for width in (1, 3, 8, 30):
        for padding in ((0, 1), (0, 1, 0, 0), 1):
            for cell in cells * 2:
                options = plain.options.update(width=width, no_wrap=width == 8)
                assert remembering.render_lines(Padding(cell, padding), options) == \
                    plain.render_lines(Padding(cell, padding), options), (cell, width, padding)
    assert len(remembering._rendered) == 4 * 3 * (len(cells) - 1)  # one entry per distinct cell, width and padding


def test_emoji_codes_are_still_replaced():
    from rich._emoji_codes import EMOJI
    from rich.emoji import Emoji

    from pecli.cli.help import EMOJI_NAME_CHARACTERS, typers_renderer

    assert set("".join(name.lower() for name in EMOJI)) <= EMOJI_NAME_CHARACTERS
    texts = ("a :smiley: b", "no code: here", ":not_an_emoji:", "x:y:z", "::", "a :warning-emoji: b", "",
             "start:stop[:step] and :thumbs_up:", "hf://ORG/REPO:FILE.gguf: x", ":SMILEY:", "a:b[:c] :+1:", ":a/b::tada:")
    for text in texts:
        assert typers_renderer().Emoji.replace(text) == Emoji.replace(text), text


def test_help_imports_no_markdown_parser_nor_tracebacks():
    # compare, verify and extend: a line of their text starts with --name or 128), which is not a list;
    # verify's text has "ORG/REPO:FILE.gguf:", which could be an emoji code as far as the names' letters go
    code = ("import contextlib, io, sys\nfrom pecli.cli import run\n"
            "def loaded(names): return sorted(m for m in names if m in sys.modules)\n"
            "for name in ('encode', 'compare', 'extend', 'plot'):\n"
            "    with contextlib.redirect_stdout(io.StringIO()): run([name, '--help'])\n"
            "print(loaded(('rich._emoji_codes', 'pecli.render.figures.frequencies', 'pecli.wavelengths')))\n"
            "with contextlib.redirect_stdout(io.StringIO()): run(['verify', '--help'])\n"
            "print(loaded(('markdown_it', 'rich.markdown', 'rich.traceback', 'pygments')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split("\n")[:2] == ["[]", "[]"]


#: What a figure is drawn with: matplotlib, the drawings of frequencies and of a checkpoint's pairs and the
#: numbers under them. (The figures package itself imports its other drawing modules, matrices and scores,
#: whose functions it exports: with NumPy's code not run, they are definitions only.)
DRAWINGS = ("matplotlib", "pecli.render.figures.frequencies", "pecli.render.figures.usage", "pecli.wavelengths",
            "pecli.weights.usage")


def test_no_page_runs_numpys_code_and_plots_imports_no_drawing():
    # through the console entry point, as a user runs it, plot's page first; after each page: NumPy's
    # module holds nothing of its own (vars() asks the module nothing) and none of its submodules is loaded
    pages = ("plot", "", *(name for name in COMMANDS if name != "plot"))
    code = ("import contextlib, io, sys\nfrom pecli.cli import main\n"
            f"for name in {pages!r}:\n"
            "    sys.argv = ['pecli', *([name] if name else []), '--help']\n"
            "    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit): main()\n"
            "    ran = 'ndarray' in vars(sys.modules['numpy']) or any(m.startswith('numpy.') for m in sys.modules)\n"
            "    print(name or 'pecli', 'ran numpy' if ran else 'no numpy')\n"
            "    if name == 'plot':\n"
            f"        print(sorted(m for m in {DRAWINGS!r} if m in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == ["plot no numpy", "[]", *(f"{name or 'pecli'} no numpy" for name in pages[1:])]


def test_numpy_deferred_is_numpy_once_asked():
    code = ("import sys, types\nfrom pecli.cli.deferred_numpy import defer_numpy\ndefer_numpy()\n"
            "import numpy as np\nimport numpy\n"
            "print('ndarray' in vars(np), [m for m in sys.modules if m.startswith('numpy.')])\n"
            "from numpy import arange\n"
            "print(type(np) is types.ModuleType, np is sys.modules['numpy'] is numpy, int(arange(4).sum()),\n"
            "      np.float64(0.5) * 2 == 1.0, np.linalg.norm(np.array([3.0, 4.0])) == 5.0)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == ["False []", "True True 6 True True"]


def test_a_submodule_imported_first_runs_numpy_first():
    # `pecli encode --positions --help`: the help word is the option's value, the command runs with NumPy
    # deferred, and its first use of NumPy is `import numpy.lib.format` (reading the .npy header of "--help"):
    # the package's own code must run before the submodule's, as with a plain import (it ran after, half-made:
    # "data type 'bool' not understood", exit 3)
    code = ("from pecli.cli.deferred_numpy import defer_numpy\ndefer_numpy()\n"
            "import numpy.lib.format as f\nimport numpy as np\n"
            "print(f.MAGIC_PREFIX == b'\\x93NUMPY', int(np.arange(4).sum()))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == ["True 6"]
    done = subprocess.run([sys.executable, "-m", "pecli", "encode", "--positions", "--help"], capture_output=True,
                          text=True, env={"PATH": "/usr/bin:/bin", "COLUMNS": "80"})
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "pecli: error: positions: cannot read --help: no such file\n"


def test_a_run_that_asks_for_no_page_loads_numpy_with_its_modules():
    code = ("import contextlib, io, sys\nfrom pecli.cli import main\n"
            "sys.argv = ['pecli', 'wavelengths', '--scheme', 'rope', '--dim', '8', '--length', '16', '--json']\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit): main()\n"
            "print(type(sys.modules['numpy']).__name__, 'ndarray' in vars(sys.modules['numpy']))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == ["module True"]


def test_a_deferred_module_that_fails_to_load_leaves_as_a_failed_import(tmp_path, monkeypatch):
    import importlib.util

    from pecli.cli.deferred_numpy import _Deferred

    source = tmp_path / "broken_for_pecli.py"
    source.write_text("value = 1\nraise ImportError('no such library')\n")
    spec = importlib.util.spec_from_file_location("broken_for_pecli", source)
    module = importlib.util.module_from_spec(spec)
    module.__class__ = _Deferred
    monkeypatch.setitem(sys.modules, "broken_for_pecli", module)
    with pytest.raises(ImportError, match="no such library"):
        module.value
    assert "broken_for_pecli" not in sys.modules
