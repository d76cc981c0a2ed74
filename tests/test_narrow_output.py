"""What a narrow terminal and a mixed figure show (issue 44): a table kept whole at 60 columns, titles
never cut inside a word, a warning said once, the dtype of a precision figure, a bias on its own axis."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

REPO = Path(__file__).parent.parent
LLAMA31 = "sample_configs/hf/meta-llama--llama-3.1-8b.json"
LLAMA2 = "sample_configs/hf/meta-llama--llama-2-7b-hf.json"


def on_terminal(monkeypatch, width: int, *args: str) -> str:
    """stdout of ``pecli ARGS`` on a terminal of ``width`` columns (Rich takes stdout for one)."""
    from pecli.cli import run

    monkeypatch.chdir(REPO)
    for key, value in {"TTY_COMPATIBLE": "1", "COLUMNS": str(width), "NO_COLOR": "1", "TERM": "xterm"}.items():
        monkeypatch.setenv(key, value)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert run(list(args)) in (0, 1)
    return out.getvalue()


@pytest.mark.parametrize("width", [60, 80])
def test_wavelengths_keeps_a_table_at_60_columns(monkeypatch, width):
    text = on_terminal(monkeypatch, width, "wavelengths", "--hf-config", LLAMA31)
    lines = text.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= width
    # a row per pair (64), not a block of seven lines per pair
    cells = [line.replace("│", " ") for line in lines]
    rows = [line for line in cells if re.match(r"^\s*\d+\s+\S+\s+\S+\s+\S+\s+(yes|no)\s", line)]
    assert len(rows) == 64 and len(lines) < 100
    assert re.match(r"^\s*0\s+1\s+6\.3\s+2\.086e4\s+yes\s+1\s+unchanged", rows[0])


@pytest.mark.parametrize("args", [
    ("extend", "--hf-config", LLAMA2, "--target", "32768"),
    ("compare", "--hf-config", LLAMA31, "--hf-config", LLAMA2, "--set", "length=96"),
], ids=["extend", "compare"])
def test_titles_never_split_a_name_at_60_columns(monkeypatch, args):
    text = on_terminal(monkeypatch, 60, *args)
    assert "max_position_embeddi\n" not in text and "embeddin\n" not in text
    words = set(re.findall(r"[A-Za-z_]{6,}", text))
    if args[0] == "extend":  # its title names the key whole
        assert "max_position_embeddings" in words
    for word in words:  # every long word of the output is whole somewhere: no fragment of a name
        assert not (word.endswith("_") or word.startswith("_")), word


def test_check_says_a_warning_once(invoke):
    result = invoke("check", "all", "--scheme", "rope", "--dim", "64", "--length", "4096", "--train-length", "2048")
    assert (result.stdout + result.stderr).count("11 of 32") == 1  # in the reason; no warning line repeats it
    single = invoke("check", "extrapolation", "--scheme", "rope", "--dim", "64", "--length", "4096", "-T", "2048")
    assert " ".join(single.stdout.split()).count("11 of 32 frequency pairs") == 1


def test_compare_names_the_dtype_of_precision(invoke):
    result = invoke("compare", "--schemes", "rope,alibi", "--length", "1024")
    text = result.stdout
    assert re.search(r"precision\s*[┃│]?\s*\n.*bfloat16", text) or "precision bfloat16" in " ".join(text.split())
    assert "collisions in bfloat16 (alibi)" in " ".join(text.split())


def test_a_bias_beside_dot_products_gets_its_own_axis():
    import pecli
    from pecli.render.figures.scores import draw_dot_distance

    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    rope, alibi = pecli.build_scheme("rope", {"dim": 16}), pecli.build_scheme("alibi", {"heads": 4})
    figure = Figure()
    axes = figure.add_subplot()
    drawing = draw_dot_distance(axes, [rope, alibi], 512)
    twins = [a for a in figure.axes if a is not axes]
    assert len(twins) == 1  # alibi's −slope·Δ reaches −128 while rope's score stays within ±16
    assert twins[0].get_ylim()[0] < -100 and axes.get_ylim()[0] > -20  # heads 4: slopes down to 1/4, −128 at 511
    assert "right axis" in drawing.title and any("right-hand axis" in note for note in drawing.notes)
    assert "right axis: alibi" in twins[0].get_ylabel()
    assert len(axes.get_legend().get_texts()) == 2  # one legend for both axes


def test_curves_that_coincide_are_dashed_and_said():
    import pecli
    from pecli.render.figures.scores import draw_dot_distance

    from matplotlib.figure import Figure

    half = pecli.build_scheme("rope", {"dim": 16, "layout": "half"})
    interleaved = pecli.build_scheme("rope", {"dim": 16, "layout": "interleaved"})  # the same score, other layout
    axes = Figure().add_subplot()
    draw_dot_distance(axes, [half, interleaved], 256)
    labels = [t.get_text() for t in axes.get_legend().get_texts()]
    assert "the same curve as rope" in labels[1] and "same" not in labels[0]
    assert [line.get_linestyle() for line in axes.get_lines() if line.get_label() in labels] == ["-", "--"]


def test_a_long_list_of_factors_wraps_between_its_numbers_at_60_columns(monkeypatch):
    # Phi-3.5's long_factor as one word ("[1.08,…,2.62,…]") was wider than the value column at 60 columns:
    # folded through a number ("2.6" / "2,…]"). Each factor is the config's, written out whole.
    text = on_terminal(monkeypatch, 60, "encode", "--hf-config", "sample_configs/hf/microsoft--phi-3.5-mini-instruct.json",
                       "-L", "8")
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 60
    words = " ".join(line.strip(" │") for line in text.splitlines()).split()
    assert "long_factor=[1.08," in words and "2.62," in words and "1.62," in words
    assert not any(re.fullmatch(r"\d+,…\]", word) for word in words)


def test_diff_wraps_its_lines_at_the_terminals_width(monkeypatch, tmp_path):
    # Llama 3.1 against Llama 2: base and scaling differ. The lines wrapped at 80 whatever the terminal.
    text = on_terminal(monkeypatch, 60, "diff", "--hf-config", LLAMA31, "--hf-config", LLAMA2)
    lines = text.splitlines()
    assert len(lines) > 2 and max(len(line) for line in lines) <= 60
    assert "rope_theta" in text
