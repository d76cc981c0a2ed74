"""Tables a person can read in a pipe and in 80 columns: no number, name or header is ever cut.

Every example of a command that prints a table (README and the site's command pages) and every sample config is run in-process at
80 columns to a non-terminal (what ``pecli … | less`` gets), and the output must hold no ``…`` glued
to a number or a word — Rich's mark of a cut cell (``0.00085…``, ``θ rad/t…``). ``plot`` prints no
table (its figure goes to a file), and ``--json`` examples print none either; they are left out.

To keep this fast, lengths and contexts above a few thousand are lowered (see :func:`shrink`): the
tables keep their shape, because which columns a table has does not depend on the length and every
number is formatted to a bounded width (:func:`pecli.render.tables.number`, tested below).
"""

from __future__ import annotations

import functools
import re
import shlex
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from rich.table import Table
from typer.testing import CliRunner

from pecli.cli import app
from pecli.render.console import FittingConsole, uncut_width
from pecli.render.tables import number

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
SAMPLES = REPO / "sample_configs"
#: Rich's ellipsis right after a character of a number or a word: a cut cell.
CUT = re.compile(r"[0-9A-Za-z_.,+\-/)(θλ₀]…")
#: Commands whose output is a table.
TABLE_COMMANDS = ("encode", "check", "compare", "wavelengths")
#: Largest length (and context) run here, and the length of a compare; see the module's docstring.
MAX_LENGTH, COMPARE_LENGTH = 1024, 64
#: Box-drawing characters: a border line is not a word.
BOX = set("─━│┃┏┓┗┛┡┩╇┳┻┼┬┴├┤┌┐└┘╭╮╰╯")


def readme_examples() -> list[str]:
    """The example commands of README and of the site's command pages that print a table."""
    commands = []
    texts = [README] + [(REPO / "docs" / "commands" / f"{name}.md").read_text(encoding="utf-8") for name in TABLE_COMMANDS]
    for section in texts:
        for block in re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL):
            for line in block.replace("\\\n", " ").splitlines():
                command = line.split("#")[0].strip()
                if command.startswith("pecli ") and "--json" not in command and command.split()[1] in TABLE_COMMANDS:
                    commands.append(command)
    return commands


def sample_commands() -> list[str]:
    """The command of every sample config that prints a table, and ``wavelengths`` of every HF config."""
    commands = []
    for path in sorted(SAMPLES.glob("*.yaml")):
        first = path.read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
        if not first.startswith("pecli plot"):
            commands.append(first)
    models = [p.name for p in sorted((SAMPLES / "hf").glob("*.json"))
              if "gpt2" not in p.name and "falcon-rw" not in p.name]  # GPT-2 and Falcon-RW have no RoPE
    commands += [f"pecli wavelengths --hf-config sample_configs/hf/{name}" for name in models]
    return commands


def shrink(args: list[str]) -> list[str]:
    """``args`` with lengths and contexts capped at :data:`MAX_LENGTH`, a compare at
    :data:`COMPARE_LENGTH` positions and a model's wavelengths over a 1024-token context."""
    out = []
    for previous, arg in zip(["", *args], args):
        if previous in ("--length", "-L", "--context") and int(arg) > MAX_LENGTH:
            arg = str(MAX_LENGTH)
        elif previous == "--set" and arg.startswith("length="):
            arg = f"length={COMPARE_LENGTH}"
        out.append(arg.replace("sample_configs/", f"{SAMPLES}/"))
    if out[0] == "compare" and "--length" in out:
        out[out.index("--length") + 1] = str(COMPARE_LENGTH)
    elif out[0] == "compare":
        out += ["--length", str(COMPARE_LENGTH)]
    elif out[0] == "check" and not {"--length", "-L"} & set(out) and not encodes_own_cells(out):
        out += ["--length", "128"]
    if out[0] == "wavelengths" and "--hf-config" in out and "--context" not in out and not multimodal(out):
        out += ["--context", "1024"]  # Men et al.'s bound at a model's 128K context takes seconds
    return out


def multimodal(args: list[str]) -> bool:
    """Whether ``--hf-config FILE`` describes a multimodal RoPE (whose pairs turn over each id's span)."""
    from pecli.models.sources.config_json import read_plan

    return any(g.scheme == "mrope" for g in read_plan(args[args.index("--hf-config") + 1]).groups)


def encodes_own_cells(args: list[str]) -> bool:
    """Whether the scheme of ``--config FILE`` is an n-D one, whose length is its number of cells."""
    import yaml

    from pecli.schemes import SCHEMES

    if "--config" not in args:
        return False
    scheme = yaml.safe_load(Path(args[args.index("--config") + 1]).read_text(encoding="utf-8")).get("scheme")
    return scheme in SCHEMES and SCHEMES[scheme].has_cells


def run(command: str, tmp_path: Path, columns: int = 80) -> str:
    args = shrink(shlex.split(command)[1:])
    # README's --out /tmp/FILE is written in the test's folder: /tmp may hold another user's file of that name
    args = [str(tmp_path / arg.removeprefix("/tmp/")) if before in ("--out", "-o") and arg.startswith("/tmp/") else arg
            for before, arg in zip([None, *args], args)]
    if "--apply" in args or "--out" in args or "-o" in args:  # reads or writes a file in tmp_path
        if "--apply" in args:
            np.save(tmp_path / args[args.index("--apply") + 1], np.ones((37, 64)))
        return output(tuple(args), columns)
    return printed(tuple(args), columns)


def output(args: tuple[str, ...], columns: int) -> str:
    result = CliRunner(env={"NO_COLOR": "1", "COLUMNS": str(columns)}).invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code in (0, 1), f"pecli {' '.join(args)}: {result.output}"
    return result.stdout


@functools.cache
def printed(args: tuple[str, ...], columns: int) -> str:
    """The output of a command that touches no file: several tests read the same ones."""
    return output(args, columns)


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples write --out files
    return tmp_path


def test_the_examples_are_found():
    examples = readme_examples()
    assert any(c.startswith("pecli compare") for c in examples) and any(c.startswith("pecli wavelengths") for c in examples)
    assert len(sample_commands()) >= 20


@pytest.mark.parametrize("command", readme_examples() + sample_commands() + [
    "pecli check all --scheme t5", "pecli check all --scheme relative",
])
def test_nothing_is_cut_at_80_columns_in_a_pipe(command, in_tmp):
    output = run(command, in_tmp)
    cut = [line for line in output.splitlines() if CUT.search(line)]
    assert not cut, f"{command}: cut cells:\n" + "\n".join(cut)


@pytest.mark.parametrize("command", [
    "pecli compare --length 64",
    ("pecli compare --hf-config sample_configs/hf/meta-llama--llama-3.1-8b.json "
     "--hf-config sample_configs/hf/mistralai--mistral-7b-instruct-v0.3.json --set length=96"),
    "pecli wavelengths --hf-config sample_configs/hf/microsoft--phi-3-mini-128k-instruct.json",
])
def test_no_word_or_number_is_split_across_lines(command, in_tmp):
    # Every word at 80 columns is a word of the same output at 400: nothing was folded in two.
    words = set(run(command, in_tmp, columns=400).split())
    split = [word for word in run(command, in_tmp).split() if word not in words and not BOX & set(word)]
    assert not split, f"{command}: split words {split[:10]}"


def test_default_tables_fit_80_columns(in_tmp):
    # The offenders fit 80 columns by default: nothing needs the natural-width fallback.
    for command in ("pecli compare --length 64", "pecli check all --scheme t5 --length 64",
                    "pecli wavelengths --hf-config sample_configs/hf/microsoft--phi-3-mini-128k-instruct.json"):
        widths = [len(line.rstrip()) for line in run(command, in_tmp).splitlines()]
        assert max(widths) <= 80, command


def test_wide_adds_longrope_factors(in_tmp):
    command = "pecli wavelengths --hf-config sample_configs/hf/microsoft--phi-3-mini-128k-instruct.json"
    assert "factor" not in run(command, in_tmp).split("summary")[0]
    wide = run(command + " --wide", in_tmp)
    assert "factor" in wide.split("summary")[0] and not CUT.search(wide)


@pytest.mark.parametrize("value", [0.00085123, -1.743e-14, 121627.4, 9.556e-7, -0.0918798, 1e30, 5e5, 2.5, -123456789.0])
def test_numbers_have_a_bounded_width(value):
    text = number(value)
    assert len(text) <= 10 and "…" not in text
    assert float(text.replace(",", "")) == pytest.approx(value, rel=5e-4)


def test_counts_are_written_alike_in_every_column():
    # A count is a count whether it arrives as an int (a key figure) or a whole float (a table value):
    # thousands separated from 10,000 on, as the tables' other counts are; shorter ones stay one word.
    from pecli.render.tables import format_value

    assert format_value(57360) == format_value(57360.0) == number(57360.0) == "57,360"
    assert format_value(np.int64(131072)) == "131,072" and format_value(2048) == "2048" and number(-10000.0) == "-10,000"
    assert format_value(True) == "yes"


def test_a_table_too_wide_for_a_pipe_prints_whole():
    table = Table("a", "b")
    for column in table.columns:
        column.no_wrap = True
    table.add_row("x" * 60, "0.000851234567891234")
    table.add_row("y", "1" * 40)
    console = FittingConsole(width=80, file=__import__("io").StringIO(), force_terminal=False)
    assert uncut_width(console, table) > 80
    console.print(table)
    text = console.file.getvalue()
    assert "0.000851234567891234" in text and "1" * 40 in text and "…" not in text
    plain = Console(width=80, file=__import__("io").StringIO(), force_terminal=False)
    plain.print(table)
    assert "…" in plain.file.getvalue()  # what Rich alone does


# -- a real terminal of 60 and 80 columns: every table whole -------------------------------------------------------
LLAMA31 = "sample_configs/hf/meta-llama--llama-3.1-8b.json"
MISTRAL = "sample_configs/hf/mistralai--mistral-7b-instruct-v0.3.json"
TERMINAL_COMMANDS = {
    "wavelengths llama 3.1": ["wavelengths", "--hf-config", LLAMA31],
    "wavelengths context": ["wavelengths", "--scheme", "rope", "--dim", "32", "--context", "131072", "--train-length", "8192"],
    "encode": ["encode", "--scheme", "rope", "--dim", "32", "--length", "64"],
    "extend": ["extend", "--hf-config", "sample_configs/hf/meta-llama--llama-2-7b-hf.json", "--target", "32768"],
    "sweep": ["sweep", "distinguishability", "--scheme", "rope", "--length", "256", "--grid", "base=1e2,1e6"],
    "inspect config": ["inspect", "config", "--hf-config", LLAMA31],
    "compare models": ["compare", "--hf-config", LLAMA31, "--hf-config", MISTRAL, "--set", "length=96"],
    "compare schemes": ["compare", "--schemes", "sinusoidal,rope,alibi,t5,learned", "--length", "64"],
    "check all": ["check", "all", "--scheme", "t5", "--length", "64"],
}


@pytest.mark.parametrize("width", [60, 80])
@pytest.mark.parametrize("args", list(TERMINAL_COMMANDS.values()), ids=list(TERMINAL_COMMANDS))
def test_tables_fit_a_terminal_without_cutting(args, width, monkeypatch):
    """On a terminal (``TTY_COMPATIBLE=1``: Rich's console takes stdout for one) of ``width`` columns, no
    line is wider and no cell is cut with an ellipsis."""
    import contextlib
    import io

    from pecli.cli import run

    monkeypatch.chdir(REPO)
    for key, value in {"TTY_COMPATIBLE": "1", "COLUMNS": str(width), "NO_COLOR": "1", "TERM": "xterm"}.items():
        monkeypatch.setenv(key, value)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = run(args)
    assert code in (0, 1)
    text = out.getvalue()
    assert "\x1b" not in text  # NO_COLOR: no escape sequence at all
    assert max(len(line.rstrip()) for line in text.splitlines()) <= width
    assert not any(line.rstrip().endswith("…") or "…│" in line or "… │" in line for line in text.splitlines())


def test_compare_of_two_models_keeps_each_name_whole_at_60_columns(monkeypatch):
    """Stacked on a 60-column terminal, each block starts with its model's whole name (wrapped at most at
    its own hyphens, never cut or dropped)."""
    import contextlib
    import io

    from pecli.cli import run

    monkeypatch.chdir(REPO)
    for key, value in {"TTY_COMPATIBLE": "1", "COLUMNS": "60", "NO_COLOR": "1", "TERM": "xterm"}.items():
        monkeypatch.setenv(key, value)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert run(TERMINAL_COMMANDS["compare models"]) in (0, 1)
    lines = out.getvalue().splitlines()
    names = []
    for at, line in enumerate(lines):
        if line.startswith("scheme ") and "acts on" not in line:
            name = line.split(maxsplit=1)[1].strip()
            for following in lines[at + 1:]:
                if not following.startswith(" ") or not following.strip():
                    break
                name += following.strip()
            names.append(name)
    stems = [Path(LLAMA31).stem, Path(MISTRAL).stem]
    assert names == stems  # the verdicts table, a block per model
    # the facts table fits 60 columns without its box: its first column, a name over lines broken at hyphens
    start = next(at for at, line in enumerate(lines) if line.startswith("scheme ") and "acts on" in line)
    facts, rows = [], lines[start + 2:]
    for line in rows:
        if not line.strip() or not line.startswith(("meta", "mistral", "llama", "instruct")):
            break
        first, rest = line[:14].strip(), line[14:].strip()
        facts.append(first) if rest else facts.__setitem__(-1, facts[-1] + first)
    assert facts == stems


# -- progress on stderr ------------------------------------------------------------------------------
class FakeTerminal(__import__("io").StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("environ", [{"NO_COLOR": "1", "TERM": "xterm"}, {"TERM": "dumb"}])
def test_progress_under_no_color_is_plain_text(monkeypatch, environ):
    import sys

    from pecli.cli.progress import PlainReporter, reporter_for

    monkeypatch.delenv("NO_COLOR", raising=False)
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    reporter = reporter_for(quiet=False)
    assert isinstance(reporter, PlainReporter)
    reporter.every = 0.0
    reporter.start("encode", 4)
    for _ in range(4):
        reporter.advance(1)
    reporter.finish()
    text = terminal.getvalue()
    assert "\x1b" not in text and "encode  4/4" in text
    assert text.endswith("\r") and text.rsplit("\r", 2)[-2].strip() == ""  # blanked: nothing left behind


def test_progress_off_a_terminal_writes_nothing(monkeypatch):
    import io
    import sys

    from pecli.cli.progress import reporter_for
    from pecli.progress import Silent

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert isinstance(reporter_for(quiet=False), Silent)
    monkeypatch.setattr(sys, "stderr", FakeTerminal())
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert isinstance(reporter_for(quiet=True), Silent) and not isinstance(reporter_for(quiet=False), Silent)


def test_a_command_under_no_color_on_a_terminal_writes_no_escape_to_stderr(monkeypatch):
    import contextlib
    import io

    from pecli.cli import run

    for key, value in {"NO_COLOR": "1", "TERM": "xterm", "COLUMNS": "80"}.items():
        monkeypatch.setenv(key, value)
    err = FakeTerminal()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        assert run(["compare", "--length", "32"]) in (0, 1)
    assert "\x1b" not in err.getvalue()
