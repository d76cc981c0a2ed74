"""What a newcomer meets first (round seven): a misspelled command, the library's default length, and
``compare``'s verdicts at 80 columns with any number of properties."""

from __future__ import annotations

import inspect

import pytest

from pecli.analysis.registry import ANALYSES, AnalysisInfo
from pecli.analysis.result import PropertyResult


@pytest.mark.parametrize("typed, said", [
    ("encod", "no such command 'encod' (did you mean encode?)"),
    ("chek", "no such command 'chek' (did you mean check?)"),
    ("Encode", "no such command 'Encode' (did you mean encode?)"),
    ("zzz", "no such command 'zzz'; the commands: encode, check, compare, wavelengths, plot, inspect, permute, "
            "verify, diff, extend, sweep"),
])
def test_a_misspelled_command_names_the_closest(run_main, typed, said):
    result = run_main(typed, "--dim", "8")
    assert result.returncode == 2
    assert result.stderr == f"pecli: error: {said}\n"


def test_the_library_takes_its_default_length_from_the_one_declaration(monkeypatch):
    import pecli
    import pecli.schemes.build as build

    for function in (pecli.build_scheme, pecli.model_scheme, pecli.preset, pecli.plot):
        assert inspect.signature(function).parameters["length"].default is None, function.__name__
    # binary fills its bits from the length: ceil(log2(L)); 512 → 9 bits, and 40 → 6 once the declaration says 40
    assert pecli.build_scheme("binary").params()["bits"] == 9
    monkeypatch.setattr(build, "DEFAULT_LENGTH", 40)
    assert pecli.build_scheme("binary").params()["bits"] == 6
    assert pecli.preset("mae").params()["dim"] == 768  # a preset still builds with no length


def _toy_sign(scheme, options):
    """A toy seventh property: always holds; its key figure the length, a number wide enough to matter."""
    return PropertyResult("toy_seventh", "pass", "always", {"length_seen": options.length * 1_000_003}, "length_seen")


@pytest.mark.parametrize("columns", [80, 70])
def test_compare_holds_a_seventh_property_without_cutting(run_main, monkeypatch, columns):
    monkeypatch.setitem(ANALYSES, "toy_seventh", AnalysisInfo("toy_seventh", "a toy seventh property", _toy_sign))
    monkeypatch.setenv("COLUMNS", str(columns))
    result = run_main("compare", "--length", "64", "--schemes", "sinusoidal,alibi")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= columns
    assert not [line for line in lines if line[:1] in "┃│" and "…" in line]  # no cell cut
    # every property's header, the toy's among them, and its figure 64 × 1,000,003 in full
    headers = "\n".join(line for line in lines if line.startswith("┃"))
    for short in ("unique", "distinct", "compose", "relative", "extrap.", "precision", "toy_seventh"):
        assert short in headers, short
    assert "64000192" in result.stdout.replace(",", "")
    tables = sum(line.startswith("┏") for line in lines)
    assert tables >= 3  # the facts, then the verdicts ran on in a second table
    assert result.stdout.count("│ alibi ") == tables  # each scheme in every table, once


def test_compare_keeps_one_table_when_the_six_fit(run_main, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    result = run_main("compare", "--length", "64", "--schemes", "sinusoidal,alibi")
    assert result.returncode == 0, result.stderr
    assert [line.rstrip() for line in result.stdout.splitlines() if line.startswith("verdicts")] == [
        "verdicts (key figure below each; [n]: footnote)"]


def test_compare_on_a_terminal_keeps_a_seventh_property_whole(monkeypatch, tmp_path):
    """On an 80-column terminal the console lays the seven columns out itself (narrower borders or a block
    per row): no cell cut either."""
    import contextlib
    import io

    from pecli.cli import run

    monkeypatch.setitem(ANALYSES, "toy_seventh", AnalysisInfo("toy_seventh", "a toy seventh property", _toy_sign))
    for key, value in {"TTY_COMPATIBLE": "1", "COLUMNS": "80", "NO_COLOR": "1", "TERM": "xterm"}.items():
        monkeypatch.setenv(key, value)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert run(["compare", "--length", "64", "--schemes", "sinusoidal,alibi,rope"]) == 0
    text = out.getvalue()
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80
    assert "64000192" in text.replace(",", "") and "toy_seventh" in text
    assert "…" not in text.split("key figures")[0]


def test_plot_run_twice_without_out_says_where_its_file_came_from(run_main, tmp_path):
    assert run_main("plot", "circle", "--bases", "1,10").returncode == 0
    first = (tmp_path / "circle.png").read_bytes()
    again = run_main("plot", "circle", "--bases", "1,100")
    assert again.returncode == 2
    assert again.stderr == ("pecli: error: circle.png exists (plot circle writes there when --out is not given); pass "
                            "--force to overwrite it, or --out to name another file\n")
    assert (tmp_path / "circle.png").read_bytes() == first  # not overwritten
    assert run_main("plot", "circle", "--bases", "1,100", "--force").returncode == 0


def test_arguments_stay_arguments_whatever_get_type_hints_makes_of_a_none_default(monkeypatch):
    """Python 3.10's typing.get_type_hints wraps the annotation of a parameter defaulting to None in Optional[…],
    hiding Typer's Annotated metadata: plot's KIND became an option --kind, and `pecli plot heatmap` was refused
    as an unexpected extra argument on a fresh 3.10 install. The commands' signatures do not depend on it."""
    import typing

    import typer.main

    from pecli.cli import build_app

    real = typing.get_type_hints

    def as_python_310(obj, globalns=None, localns=None, include_extras=False):
        import inspect

        hints = real(obj, globalns, localns, include_extras)
        defaults = {name: p.default for name, p in inspect.signature(obj).parameters.items()}
        return {name: typing.Optional[hint] if defaults.get(name, inspect.Parameter.empty) is None else hint
                for name, hint in hints.items()}

    monkeypatch.setattr(typing, "get_type_hints", as_python_310)
    group = typer.main.get_command(build_app())
    context = group.make_context("pecli", ["plot"], resilient_parsing=True)
    for name, argument in (("plot", "kind"), ("check", "prop"), ("inspect", "subject"), ("sweep", "prop")):
        params = {param.name: param.param_type_name for param in group.get_command(context, name).params}
        assert params[argument] == "argument", name
