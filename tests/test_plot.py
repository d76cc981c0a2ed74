"""Tests of ``pecli plot`` and of the figures of :mod:`pecli.render.figures`.

Figures are checked for structure (panels, labels, notes) and, where cheap, for the plotted numbers
against values derived by hand in the comments; files for their magic bytes. Sizes and dpi are kept
small so that the whole file runs in seconds.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from pecli.cli import app
from pecli.config import build_scheme
from pecli.render import figures
from pecli.render.figures import frequencies

PECLI = str(Path(sys.executable).with_name("pecli"))
MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF-", ".svg": b"<svg"}
SMALL = ["--dpi", "40", "--size", "4x3"]


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner(env={"NO_COLOR": "1", "COLUMNS": "80"})


def run(runner: CliRunner, *args: str):
    return runner.invoke(app, ["plot", *args], catch_exceptions=False)


def assert_figure_file(path: Path) -> None:
    data = path.read_bytes()
    magic = MAGIC[path.suffix]
    assert (magic in data[:400]) if path.suffix == ".svg" else data.startswith(magic)
    assert len(data) > 2000


def draw(function, *args, size=(4, 3), dpi=40, on_figure=False, **kwargs):
    """Draw with one of the drawing functions on a fresh Figure (on its one Axes unless ``on_figure``).

    Returns the finished figure and the drawing's notes.
    """
    figure = figures.new_figure(size, dpi)
    drawing = function(figure if on_figure else figure.add_subplot(), *args, **kwargs)
    figures.finish(figure, drawing)
    return figure, drawing.notes


def panels(figure) -> list:
    """The data axes of a figure (colour bars left out)."""
    return [axes for axes in figure.axes if axes.get_label() != "<colorbar>" and axes.get_visible()]


# -- every kind writes a file, for a scheme of every kind of scheme it supports -------------------------
# With the sample configs (tests/test_sample_configs.py renders each as PNG: heatmap and circle of
# sinusoidal, bias of alibi, dot-distance of sinusoidal and rope, extrapolation, precision and wavelengths
# of rope, similarity-2d of rope-nd) and the default heatmap below, every kind is rendered for every kind
# of scheme it supports, and each format for an additive, a rotary and a bias scheme.
FILE_CASES = [
    ("heatmap", ["--scheme", "rope", "--dim", "16", "--length", "32"], ".svg"),
    ("heatmap", ["--scheme", "alibi", "--heads", "2", "--length", "16"], ".pdf"),  # every head: a grid of panels
    ("circle", ["--scheme", "rope", "--bases", "10,100"], ".pdf"),
    ("similarity", ["--scheme", "binary", "--length", "20"], ".svg"),
    ("similarity", ["--scheme", "rope", "--dim", "8", "--length", "20"], ".png"),
    ("wavelengths", ["--scheme", "sinusoidal", "--dim", "32"], ".png"),
    ("bias", ["--scheme", "t5", "--length", "40"], ".svg"),
    ("bias", ["--scheme", "relative", "--length", "40", "-K", "4"], ".pdf"),
    ("dot-distance", ["--scheme", "rope", "--dim", "16", "--length", "40", "--bases", "100,10000"], ".svg"),
    ("dot-distance", ["--scheme", "alibi", "--schemes", "learned,alibi", "--heads", "2", "--length", "40"], ".pdf"),
    ("extrapolation", ["--scheme", "sinusoidal", "--dim", "16", "--length", "400"], ".png"),
    ("precision", ["--scheme", "integer", "--dim", "4", "--length", "300", "--dtypes", "float16"], ".pdf"),
    ("precision", ["--scheme", "t5", "--length", "50"], ".svg"),
]


@pytest.mark.parametrize(("kind", "args", "suffix"), FILE_CASES, ids=lambda v: v if isinstance(v, str) else None)
def test_writes_a_valid_file(runner, tmp_path, kind, args, suffix):
    out = tmp_path / f"figure{suffix}"
    result = run(runner, kind, *args, *SMALL, "--out", str(out))
    assert result.exit_code == 0, result.output
    assert_figure_file(out)
    assert f"wrote {out}" in result.stderr


def test_no_options_draws_the_default_heatmap(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["plot"])
    assert result.exit_code == 0, result.output
    assert_figure_file(tmp_path / "heatmap.png")


def test_refuses_to_overwrite_without_force(runner, tmp_path, unrendered):
    out = tmp_path / "h.png"
    out.write_bytes(b"keep")
    result = run(runner, "heatmap", *SMALL, "--out", str(out))
    assert result.exit_code == 2
    assert result.stderr == f"pecli: error: {out} exists; pass --force to overwrite it\n"
    assert out.read_bytes() == b"keep"
    assert run(runner, "heatmap", *SMALL, "--out", str(out), "--force").exit_code == 0
    assert out.read_bytes() == unrendered and [p.name for p in tmp_path.iterdir()] == ["h.png"]


def test_config_file_holds_the_kind(runner, tmp_path, unrendered):
    import json

    config = tmp_path / "plot.yaml"
    config.write_text("kind: bias\nscheme: alibi\nheads: 2\nlength: 8\ndpi: 40\nsize: 4x3\n")
    out = tmp_path / "b.png"
    result = run(runner, "--config", str(config), "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["kind"], document["scheme"], document["params"]["heads"], document["length"]) == ("bias", "alibi", 2, 8)
    assert out.read_bytes() == unrendered


# -- errors: one line, exit 2, what is supported ------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["circle", "--scheme", "alibi"], "plot circle does not support scheme 'alibi' (bias); it supports: sinusoidal, rope"),
        (["bias", "--scheme", "sinusoidal"], "plot bias does not support scheme 'sinusoidal' (additive); it supports: relative, t5, alibi"),
        (["similarity", "--scheme", "t5"], "plot similarity does not support scheme 't5' (bias); it supports: integer, binary, sinusoidal, learned, rope"),
        (["wavelengths", "--scheme", "learned"], "plot wavelengths does not support scheme 'learned' (additive); it supports: sinusoidal, rope"),
        (["nonsense"], "kind: must be one of heatmap, circle, dot-distance, similarity, similarity-2d, wavelengths, extrapolation, bias, precision, rope-usage; got 'nonsense'"),
        (["circle", "--head", "1"], "--head does not apply to plot circle (it applies to heatmap, bias)"),
        (["circle", "--positions", "100:200"], "--positions does not apply to plot circle (it applies to heatmap, similarity)"),
        (["heatmap", "--compute-dtype", "each"], "--compute-dtype does not apply to plot heatmap (it applies to precision)"),
        (["extrapolation", "--length", "64", "--train-length", "64"], "train_length: must be below the test length 64 (--length), got 64"),
        (["precision", "--dtypes", "float8"], "dtypes: unknown dtype 'float8'; valid: float64, float32, float16, bfloat16"),
        (["dot-distance", "--schemes", "sinusoidal,nope"], "schemes: must be one of " + ", ".join(__import__("pecli.schemes").schemes.SCHEMES) + "; got 'nope' (did you mean rope?)"),
        (["circle", "--pair", "2"], "pair: must be between 0 and 1 for sinusoidal dim=4 base=1 layout=interleaved (2 pairs), got 2"),
        (["heatmap", "--scheme", "alibi", "--heads", "4", "--head", "4"], "head: must be between 0 and 3 (alibi has 4 head(s)), got 4"),
        (["heatmap", "--out", "x.jpg"], "--out x.jpg: unsupported suffix .jpg; use one of .png, .svg, .pdf"),
        (["heatmap", "--size", "big"], "size: expected WxH in inches, such as 8x5, got 'big'"),
        (["heatmap", "--scheme", "learned", "--max-length", "4", "--positions", "0:8"],
         "learned positions are undefined past max_length: position 4 has no row in a table of 4"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(runner, tmp_path, monkeypatch, args, expected):
    monkeypatch.chdir(tmp_path)
    result = run(runner, *args)
    assert result.exit_code == 2
    assert result.stderr == f"pecli: error: {expected}\n"
    assert not list(tmp_path.iterdir())


def test_usage_errors_are_one_line_from_the_console_script(tmp_path, run_main):
    # The installed script once; the second case through what it runs (pecli.cli.run), in this process.
    for args, needle, console_script in ((["plot", "heatmap", "--dpi", "many"], "--dpi", True),
                                         (["plot", "nonsense"], "heatmap, circle", False)):
        if console_script:
            done = subprocess.run([PECLI, *args], capture_output=True, text=True, cwd=tmp_path, timeout=60)
        else:
            done = run_main(*args)
        assert done.returncode == 2
        assert done.stdout == ""
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("pecli: error:") and needle in done.stderr


# That importing the CLI (plot and the figures included) does not import matplotlib: test_library.py,
# test_imports_stay_light.


# -- the figures and their data --------------------------------------------------------------------------
def test_circle_points_are_sin_and_cos_of_the_pair_angle():
    # pair 1 of d = 4: ω_1 = base^(−2/4) = base^(−1/2); base 1 → ω_1 = 1, base 100 → ω_1 = 0.1.
    # Point p is (sin pω_1, cos pω_1): for base 1, (sin p, cos p).
    schemes = [build_scheme("sinusoidal", {"dim": 4, "base": b}) for b in (1, 5, 10, 100)]
    figure, _ = draw(frequencies.draw_circles, schemes, range(5), pair=1, on_figure=True)
    axes = panels(figure)
    assert len(axes) == 4
    p = np.arange(5)
    np.testing.assert_allclose(axes[0].collections[0].get_offsets(), np.c_[np.sin(p), np.cos(p)], atol=1e-12)
    np.testing.assert_allclose(axes[3].collections[0].get_offsets(), np.c_[np.sin(0.1 * p), np.cos(0.1 * p)], atol=1e-12)
    assert "base=1:" in axes[0].get_title() and "base=100:" in axes[3].get_title()
    assert "sin" in axes[0].get_xlabel() and "cos" in axes[0].get_ylabel()
    assert "pair 1" in figure._suptitle.get_text()
    assert [t.get_text() for t in axes[0].texts] == ["0", "1", "2", "3", "4"]


def test_circle_default_is_the_second_pair_of_d4_with_four_bases():
    # [Conditions] uses d = 2, whose only pair has ω_0 = base^0 = 1 whatever the base: the CLI's default
    # draws pair 1 of d = 4 instead, where the four bases differ (the command's own default run, and
    # what its --json says it drew, are in test_json_describes_every_scheme_drawn_and_what_varied).
    schemes = [build_scheme("sinusoidal", {"dim": 4, "base": b}) for b in (1, 5, 10, 100)]
    figure, _ = draw(frequencies.draw_circles, schemes, range(8), pair=1, on_figure=True)
    titles = [a.get_title() for a in panels(figure)]
    assert len(set(titles)) == 4


def test_heatmap_of_sinusoidal_holds_the_encoding():
    # d = 8: ω_i = 10000^(−2i/8) = 10^(−i): E[p, 0] = sin p, E[p, 1] = cos p, E[p, 2] = sin(p/10).
    scheme = build_scheme("sinusoidal", {"dim": 8})
    figure, notes = draw(figures.draw_encoding_heatmap, scheme, range(16))
    (axes,) = panels(figure)
    assert len(figure.axes) == 2  # the matrix and its colour bar
    image = np.asarray(axes.images[0].get_array())
    assert image.shape == (16, 8)
    assert image[3, 0] == pytest.approx(math.sin(3)) and image[3, 1] == pytest.approx(math.cos(3))
    assert image[3, 2] == pytest.approx(math.sin(0.3))
    assert axes.get_xlabel() == "component (dimension index)" and axes.get_ylabel() == "position (tokens)"
    assert "sinusoidal dim=8 base=10000" in figure._suptitle.get_text()
    assert notes == []


def test_large_heatmap_is_downsampled_with_a_note():
    scheme = build_scheme("sinusoidal", {"dim": 4})
    figure, notes = draw(figures.draw_encoding_heatmap, scheme, range(3000), dpi=30, size=(3, 2))
    image = np.asarray(panels(figure)[0].images[0].get_array())
    assert image.shape == (1000, 4)  # blocks of ceil(3000 / 1024) = 3 positions
    # Row 0 averages positions 0, 1, 2; component 0 is sin(p·ω_0) with ω_0 = 1:
    # (sin 0 + sin 1 + sin 2) / 3 = (0 + 0.841471 + 0.909297) / 3 = 0.583589.
    assert image[0, 0] == pytest.approx((np.sin(0) + np.sin(1) + np.sin(2)) / 3)
    assert notes == [
        "positions: each row is the mean of 3 consecutive positions of 3000 "
        "(sampling every row instead would alias the fast components)"
    ]
    assert "note: positions" in figure._supxlabel.get_text()


def test_heatmap_of_alibi_one_head_and_every_head():
    # 8 heads: slopes 2^(−k), k = 1 … 8; head 2 has m = 1/8, so bias[i=0, j=5] = −5/8.
    scheme = build_scheme("alibi", {"heads": 8})
    one, _ = draw(figures.draw_bias_heatmap, scheme, range(10), head=2, on_figure=True)
    (axes,) = panels(one)
    assert np.asarray(axes.images[0].get_array())[0, 5] == pytest.approx(-0.625)
    assert axes.get_xlabel() == "key position j (tokens)" and axes.get_ylabel() == "query position i (tokens)"
    every, _ = draw(figures.draw_bias_heatmap, scheme, range(10), on_figure=True)
    assert len(panels(every)) == 8
    assert [a.get_title() for a in panels(every)][:2] == ["head 0, m=0.5", "head 1, m=0.25"]


def test_similarity_of_d2_sinusoid_is_cos_of_distance():
    # d = 2: E_p = (sin p, cos p), unit vectors, so cos-sim(p, q) = cos(p − q).
    scheme = build_scheme("sinusoidal", {"dim": 2})
    figure, _ = draw(figures.draw_similarity, scheme, range(12))
    (axes,) = panels(figure)
    p = np.arange(12)
    np.testing.assert_allclose(np.asarray(axes.images[0].get_array()), np.cos(p[:, None] - p[None, :]), atol=1e-12)
    assert "cosine similarity" in figure.axes[1].get_ylabel()


def test_wavelengths_are_2pi_over_the_frequencies():
    # d = 8, base 10000: ω_i = 10^(−i), wavelengths 2π·10^i for i = 0 … 3.
    scheme = build_scheme("sinusoidal", {"dim": 8})
    figure, _ = draw(frequencies.draw_wavelengths, scheme, context=100, train_length=50)
    (axes,) = panels(figure)
    assert axes.get_yscale() == "log" and axes.get_ylabel() == "wavelength (tokens)"
    np.testing.assert_allclose(axes.lines[0].get_ydata(), 2 * np.pi * 10.0 ** np.arange(4))
    labels = axes.get_legend_handles_labels()[1]
    assert "context length 100" in labels and "training length 50" in labels
    assert "2 pair(s) never complete a turn within 100" in labels  # 628 and 6283 > 100


def test_wavelengths_of_a_scaled_rope_show_both():
    # linear scaling by 4 multiplies every wavelength by 4 (θ_i / 4).
    scheme = build_scheme("rope", {"dim": 8, "scaling": "linear", "factor": 4})
    (axes,) = panels(draw(frequencies.draw_wavelengths, scheme, context=1000)[0])
    original, scaled = axes.lines[0].get_ydata(), axes.lines[1].get_ydata()
    np.testing.assert_allclose(scaled, 4 * original)
    assert axes.get_legend_handles_labels()[1][:2] == ["original (unscaled)", "in use (scaled)"]


def test_bias_lines_are_the_alibi_slopes_times_distance():
    # 4 heads: slopes 2^(−8k/4) = 4^(−k), k = 1 … 4; bias = −m·|Δ|.
    scheme = build_scheme("alibi", {"heads": 4})
    figure, _ = draw(figures.draw_bias, scheme, 6)
    (axes,) = panels(figure)
    assert len(axes.lines) == 4 + 1  # one per head, and the Δ = 0 line
    delta = np.arange(-5, 6)
    for k in range(4):
        np.testing.assert_allclose(axes.lines[k].get_xdata(), delta)
        np.testing.assert_allclose(axes.lines[k].get_ydata(), -(4.0 ** -(k + 1)) * np.abs(delta))
    assert axes.get_xlabel().startswith("relative distance Δ = j − i (tokens")


def test_bias_of_t5_is_the_bucket():
    # bidirectional, 32 buckets: 16 per side; Δ = 0 → 0, Δ = +1 → 16 + 1 = 17, Δ = −1 → 1.
    scheme = build_scheme("t5", {})
    (axes,) = panels(draw(figures.draw_bias, scheme, 3)[0])
    assert list(axes.lines[0].get_ydata()) == [2, 1, 0, 17, 18]


def test_describe_and_size():
    assert figures.describe(build_scheme("rope", {"dim": 64, "rope_theta": 500000})) == "rope dim=64 base=500000 layout=half"
    assert figures.parse_figure_size("8x5") == (8.0, 5.0)


def test_dot_distance_of_d2_sinusoid_is_cos_of_distance():
    # d = 2: ω_0 = 1, E_m · E_(m+Δ) = cos(Δ) for every m: the mean is cos Δ and there is no band.
    scheme = build_scheme("sinusoidal", {"dim": 2})
    figure, notes = draw(figures.draw_dot_distance, [scheme], 10)
    (axes,) = panels(figure)
    curve = axes.lines[0]
    np.testing.assert_allclose(curve.get_xdata(), np.arange(-9, 10))
    np.testing.assert_allclose(curve.get_ydata(), np.cos(np.arange(-9, 10)), atol=1e-12)
    assert not axes.collections  # no band: the score depends on Δ only
    assert axes.get_xlabel() == "distance Δ (tokens)"
    assert notes == ["no band: the score does not vary with m at any distance (it depends on Δ only)"]


def test_dot_distance_carries_a_query_scale():
    # A constant factor c on every query (DeepSeek-V3: mscale(40, 1)² = (0.1 ln 40 + 1)²) scales the score:
    # c · cos Δ for the d = 2 sinusoid, still without a band.
    c = (0.1 * math.log(40) + 1) ** 2
    scheme = build_scheme("sinusoidal", {"dim": 2})
    figure, notes = draw(figures.draw_dot_distance, [scheme], 10, query_scales=[lambda m: np.full(np.shape(m), c)])
    (axes,) = panels(figure)
    np.testing.assert_allclose(axes.lines[0].get_ydata(), c * np.cos(np.arange(-9, 10)), atol=1e-12)
    assert "the scores carry the model's factor on each query besides cos and sin (its logit scale)" in notes
    # a factor for the first scheme only: the second curve is cos Δ
    figure, _ = draw(figures.draw_dot_distance, [scheme, scheme], 10, query_scales=[lambda m: np.full(np.shape(m), c)])
    first, second = panels(figure)[0].lines[:2]
    np.testing.assert_allclose(first.get_ydata(), c * np.cos(np.arange(-9, 10)), atol=1e-12)
    np.testing.assert_allclose(second.get_ydata(), np.cos(np.arange(-9, 10)), atol=1e-12)


def test_plot_dot_distance_of_a_model_carries_its_logit_scale(runner, tmp_path, unrendered):
    configs = Path(__file__).parent.parent / "sample_configs" / "hf"
    said = {}
    for name in ("deepseek-ai--deepseek-v3.json", "meta-llama--llama-3.1-8b.json"):
        out = tmp_path / f"{name}.png"
        result = run(runner, "dot-distance", "--hf-config", str(configs / name), "--length", "64", "-o", str(out),
                     "--json", *SMALL)
        assert result.exit_code == 0, result.output
        said[name] = any("logit scale" in note for note in json.loads(result.stdout)["notes"])
    assert said == {"deepseek-ai--deepseek-v3.json": True, "meta-llama--llama-3.1-8b.json": False}
    # beside the model's rope, a sinusoid is not the model's: its scores are not scaled
    out = tmp_path / "two.png"
    result = run(runner, "dot-distance", "--hf-config", str(configs / "deepseek-ai--deepseek-v3.json"), "--length", "64",
                 "--schemes", "rope,sinusoidal", "-o", str(out), "--json", "--dpi", "40")
    assert result.exit_code == 0, result.output
    assert "the rope scores carry the model's factor on each query besides cos and sin (its logit scale)" in \
        json.loads(result.stdout)["notes"]


def test_dot_distance_overlays_schemes_with_a_band_where_the_score_varies():
    schemes = [build_scheme("learned", {"dim": 8, "max_length": 20}), build_scheme("sinusoidal", {"dim": 8})]
    (axes,) = panels(draw(figures.draw_dot_distance, schemes, 20)[0])
    labels = axes.get_legend_handles_labels()[1]
    assert labels == ["learned dim=8 max_length=20 seed=0", "sinusoidal dim=8 base=10000 layout=interleaved"]
    assert len(axes.collections) == 1  # the learned table's score varies with m; the sinusoid's does not


def test_extrapolation_bars_are_the_largest_angles():
    # d = 8, base 10000: θ_i = 10^(−i). T = 100: (T−1)θ = 99, 9.9, 0.99, 0.099; L = 1000: 999θ.
    # Training completed a turn (2π ≈ 6.28) on pairs 0 and 1 only; pairs 2 and 3 go further at test: unseen.
    scheme = build_scheme("sinusoidal", {"dim": 8})
    figure, _ = draw(frequencies.draw_extrapolation, scheme, train_length=100, length=1000)
    (axes,) = panels(figure)
    test, train = axes.collections[:2]  # the bars of each kind, one collection each

    def heights(bars):
        return [path.vertices[:, 1].max() for path in bars.get_paths()]

    theta = 10.0 ** -np.arange(4)
    np.testing.assert_allclose(heights(test), 999 * theta)
    np.testing.assert_allclose(heights(train), 99 * theta)
    colours = test.get_facecolors()
    red = [bool(np.array_equal(colour, colours[3])) for colour in colours]
    assert red == [False, False, True, True]
    assert "pairs from i = 2 are out of distribution" in " ".join(figure._suptitle.get_text().split())  # wrapped to the figure
    assert axes.get_yscale() == "log" and axes.get_ylabel() == r"largest angle $p\,\theta_i$ (radians)"


def test_precision_curves_per_dtype():
    scheme = build_scheme("sinusoidal", {"dim": 8})
    figure, notes = draw(figures.draw_precision, scheme, 64, dtypes=("float64", "float16"))
    (axes,) = panels(figure)
    labels = axes.get_legend_handles_labels()[1]
    assert len(labels) == 1 and labels[0].startswith("float16: max ")
    assert notes == ["exact in float64 (error 0 everywhere, nothing to draw on a log scale)"]
    assert axes.get_xlabel() == "position (tokens)" and axes.get_yscale() == "log"
    # float16 has an 11-bit significand: rounding a value in [0.5, 1] errs by at most 2^-12.
    assert 0 < np.nanmax(axes.lines[0].get_ydata()) <= 2.0 ** -12


# -- the registry: one record per kind ---------------------------------------------------------------------
def test_settings_and_applicability_come_from_the_records():
    from pecli.cli.plot import KINDS, SETTINGS

    assert KINDS == tuple(figures.PLOTS)
    options = list(dict.fromkeys(option.name for record in figures.PLOTS.values() for option in record.options))
    assert [setting.name for setting in SETTINGS] == ["kind", "out", "dpi", "size", "title", *options]
    assert figures.applies_to("head") == ("heatmap", "bias")
    assert figures.applies_to("dtype") == ("heatmap", "similarity", "similarity-2d", "precision")
    assert figures.supported_schemes("circle") == ("sinusoidal", "rope")


def test_figure_returns_the_notes_and_takes_the_style():
    request = figures.PlotRequest(build_scheme("sinusoidal", {"dim": 4}), 3000)
    figure, notes = figures.figure("heatmap", request, figures.Style(title="mine", size=(3, 2), dpi=30))
    assert notes == [
        "positions: each row is the mean of 3 consecutive positions of 3000 "
        "(sampling every row instead would alias the fast components)"
    ]
    assert figure._suptitle.get_text() == "mine" and "note: positions" in figure._supxlabel.get_text()
    assert tuple(figure.get_size_inches()) == (3, 2) and figure.dpi == 30


def test_a_new_kind_is_one_record_and_its_function(monkeypatch):
    def draw_points(figure, request):
        axes = figure.add_subplot()
        axes.plot(request.position_ids, request.position_ids)
        return figures.Drawing(f"{request.scheme.name}: points", ["one note"])

    record = figures.PlotKind("points", "positions against themselves", None, (), draw_points)
    monkeypatch.setitem(figures.PLOTS, "points", record)
    figure, notes = figures.figure("points", figures.PlotRequest(build_scheme("t5", {}), 5), figures.Style(dpi=40))
    assert notes == ["one note"] and figure._suptitle.get_text() == "t5: points"
    # every scheme whose positions lie along a line (a kind for grids says on_grid=True)
    lines = tuple(name for name, cls in __import__("pecli.schemes").schemes.SCHEMES.items() if not cls.has_cells)
    assert figures.supported_schemes("points") == lines


def test_drawing_functions_compose_on_one_figure():
    figure = figures.new_figure((6, 3), 40)
    left, right = figure.subplots(1, 2)
    bias = figures.draw_bias(left, build_scheme("alibi", {"heads": 2}), 6)
    waves = frequencies.draw_wavelengths(right, build_scheme("sinusoidal", {"dim": 8}))
    assert len(left.lines) == 2 + 1 and len(right.lines) == 1
    assert bias.title.startswith("alibi heads=2: bias") and waves.notes == []


def test_bias_schemes_describe_what_their_plots_show():
    # t5 and relative stop changing beyond a distance (buckets, clipping); alibi's heads differ by slope.
    t5, relative, alibi = (build_scheme(name, {}) for name in ("t5", "relative", "alibi"))
    assert t5.piecewise_constant_bias and relative.piecewise_constant_bias and not alibi.piecewise_constant_bias
    assert t5.bias_limit()[0] == 128 and relative.bias_limit()[0] == 16 and alibi.bias_limit() is None
    assert alibi.channel_quantity(0) == ("m", 0.5) and t5.channel_quantity(0) is None
    (axes,) = panels(draw(figures.draw_bias, t5, 200)[0])
    assert [line.get_xdata()[0] for line in axes.lines[2:4]] == [-128, 128]
    assert axes.texts[0].get_text() == " max_distance 128"


# -- issue 11: the figure as drawn, one spelling, words and pictures ------------------------------------
def test_json_describes_every_scheme_drawn_and_what_varied(runner, tmp_path, unrendered):
    import json

    out = tmp_path / "c.png"
    result = run(runner, "circle", *SMALL, "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    circle = json.loads(result.stdout)
    assert circle["kind"] == "circle" and circle["out"] == str(out) and circle["notes"] == []
    assert out.read_bytes() == unrendered
    # The default circle is d = 4 at bases 1, 5, 10, 100, not the run's d = 512 base 10000.
    assert "params" not in circle and [s["params"]["dim"] for s in circle["schemes"]] == [4] * 4
    assert circle["varied"] == {"base": [1.0, 5.0, 10.0, 100.0]}
    both = json.loads(run(runner, "dot-distance", "--schemes", "sinusoidal,rope", "--length", "16", *SMALL,
                          "--out", str(out), "--force", "--json").stdout)
    assert [s["scheme"] for s in both["schemes"]] == ["sinusoidal", "rope"]
    assert {s["params"]["dim"] for s in both["schemes"]} == {128} and both["varied"]["scheme"] == ["sinusoidal", "rope"]
    one = json.loads(run(runner, "similarity", "--scheme", "rope", "--dim", "8", "--length", "8", *SMALL,
                         "--out", str(out), "--force", "--json").stdout)
    assert one["scheme"] == "rope" and one["params"]["dim"] == 8 and "schemes" not in one


def test_dot_distance_by_base_titles_the_bases_and_notes_once():
    request = figures.PlotRequest(build_scheme("rope", {"dim": 8}), 16, options={"bases": (100.0, 10000.0)},
                                  given_params={"dim": 8})
    figure, drawing = figures.draw("dot-distance", request, figures.Style(size=(4, 3), dpi=40))
    title = figure._suptitle.get_text()
    assert "rope, rope" not in title and "base = 100, 10000" in title
    assert len(drawing.notes) == len(set(drawing.notes)) and len(drawing.schemes) == 2
    assert figure._supxlabel.get_text().count("long-term decay") == 1
    assert panels(figure)[0].get_legend_handles_labels()[1] == ["base=100", "base=10000"]


def test_precision_compute_dtype_is_checks_spelling(runner, tmp_path, unrendered):
    out = tmp_path / "p.png"
    result = run(runner, "precision", "--scheme", "rope", "--dim", "8", "--length", "300", "--dtypes", "float32,bfloat16",
                 "--compute-dtype", "bfloat16", *SMALL, "--out", str(out))
    assert result.exit_code == 0, result.output
    scheme = build_scheme("rope", {"dim": 8})
    drawing = figures.draw_precision(figures.new_figure((4, 3), 40).add_subplot(), scheme, 300,
                                     dtypes=("float32",), compute_dtype="bfloat16")
    assert drawing.title.endswith("angles formed in bfloat16, rounded to each dtype")
    assert run(runner, "precision", "--computed", "--out", str(out), "--force").exit_code != 0


def test_precision_of_alibi_shows_every_dtype_on_a_distance_axis():
    from matplotlib.ticker import NullFormatter

    scheme = build_scheme("alibi", {"heads": 2})
    figure, notes = draw(figures.draw_precision, scheme, 2100, dtypes=("float16", "bfloat16"))
    (axes,) = panels(figure)
    labels = axes.get_legend_handles_labels()[1]
    # float16 holds integers up to 2048 exactly: slope 1/2 first rounds Δ = −2049 onto its neighbour.
    assert "float16: first distance equal to its neighbour, Δ = −2049" in labels
    assert any(label.startswith("bfloat16: max ") for label in labels) and not any("position" in l for l in labels)
    # Each dtype's worst-so-far curve is solid and drawn in its own line style, float16's above bfloat16's.
    envelopes = [line for line in axes.lines if line.get_label().startswith("float16: max")
                 or line.get_label().startswith("bfloat16: max")]
    assert [line.get_linestyle() for line in envelopes] == ["-", "--"]
    assert envelopes[0].get_zorder() > envelopes[1].get_zorder()
    bottom, top = axes.get_ylim()
    assert math.log10(bottom).is_integer() and isinstance(axes.yaxis.get_minor_formatter(), NullFormatter)
    assert len(notes) == len(set(notes))


def test_t5_heatmap_says_bucket_index():
    figure, _ = draw(figures.draw_bias_heatmap, build_scheme("t5", {}), np.arange(8), head=0, on_figure=True)
    assert "(L, L) bucket index, head 0" in figure._suptitle.get_text()


def test_symbols_are_mathtext_not_underscores():
    import re

    def texts(figure) -> list[str]:
        out = [figure._suptitle.get_text()]
        for axes in figure.axes:
            out += [axes.get_xlabel(), axes.get_ylabel(), axes.get_title(), *axes.get_legend_handles_labels()[1]]
        return out

    drawn = [
        draw(figures.draw_similarity, build_scheme("sinusoidal", {"dim": 4}), np.arange(6))[0],
        draw(frequencies.draw_extrapolation, build_scheme("rope", {"dim": 8}), train_length=10, length=400)[0],
        draw(figures.draw_dot_distance, [build_scheme("sinusoidal", {"dim": 4})], 8)[0],
        draw(figures.draw_dot_distance, [build_scheme("rope", {"dim": 4})], 8)[0],
        draw(frequencies.draw_wavelengths, build_scheme("rope", {"dim": 8}))[0],
        draw(figures.draw_bias, build_scheme("alibi", {"heads": 2}), 8)[0],
    ]
    for text in (t for figure in drawn for t in texts(figure)):
        outside_math = re.sub(r"\$[^$]*\$", "", text)
        assert not re.search(r"(?<![A-Za-z])[A-Za-zθωΔ]_[A-Za-z(]", outside_math), text


def test_plot_of_a_model_draws_a_panel_per_layer_group(runner, tmp_path, unrendered):
    # Gemma 3: sliding layers on base 10,000, full-attention layers on 1e6 (every 6th layer).
    import json

    config = tmp_path / "gemma3.json"
    config.write_text(json.dumps({"model_type": "gemma3_text", "head_dim": 256, "num_attention_heads": 8, "hidden_size": 2560,
                                  "num_hidden_layers": 12, "rope_theta": 1e6, "rope_local_base_freq": 10000.0}))
    out = tmp_path / "w.png"
    result = run(runner, "wavelengths", "--hf-config", str(config), "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    groups = json.loads(result.stdout)["layer_groups"]
    assert [(g["name"], g["layers"], g["params"]["base"]) for g in groups] == [
        ("sliding_attention", [0, 1, 2, 3, 4, 6, 7, 8, 9, 10], 10000.0), ("full_attention", [5, 11], 1e6)]
    assert out.read_bytes() == unrendered


def test_plot_and_check_take_the_same_training_length_of_a_model(tmp_path, invoke):
    # Qwen2.5-7B: no scaling, max_position_embeddings 131,072: it was trained on 131,072 positions. check
    # extrapolation at L = 262,144 says so; the plot must too (it said 65,536, half of L, before).
    import json

    config = tmp_path / "qwen25.json"
    config.write_text(json.dumps({"model_type": "qwen2", "hidden_size": 3584, "num_attention_heads": 28,
                                  "num_hidden_layers": 28, "rope_theta": 1e6, "max_position_embeddings": 131072}))
    checked = json.loads(invoke("check", "extrapolation", "--hf-config", config, "-L", "262144", "--json").stdout)
    assert checked["results"][0]["figures"]["train_length"] == 131072
    from pecli.cli.plot import SETTINGS, _request
    from pecli.config import resolve

    spec = resolve({"hf_config": str(config), "length": 262144, "kind": "extrapolation"}, SETTINGS)
    _, drawing = figures.draw("extrapolation", _request(spec))
    assert "trained on 131,072, tested on 262,144" in drawing.title
    at_its_own_length = invoke("plot", "extrapolation", "--hf-config", config, "-o", tmp_path / "e.png")
    assert at_its_own_length.exit_code == 2 and "nothing to extrapolate" in at_its_own_length.stderr


def test_verify_draws_where_the_arrays_differ(invoke, tmp_path, unrendered):
    # The error map of `pecli verify --plot`: a layout bug differs from position 1 on, in every pair.
    import json

    positions = np.arange(64)
    angles = np.repeat(np.outer(positions, 10000.0 ** (-np.arange(0, 16, 2) / 16)), 2, axis=1)  # interleaved
    np.save(tmp_path / "cos.npy", np.cos(angles))
    np.save(tmp_path / "sin.npy", np.sin(angles))
    out = tmp_path / "error.png"
    result = invoke("verify", "--dim", "16", "--cos", tmp_path / "cos.npy", "--sin", tmp_path / "sin.npy",
                    "--plot", out, "--json")
    assert result.exit_code == 1 and [d["code"] for d in json.loads(result.stdout)["diagnosis"]] == ["layout"]
    assert out.read_bytes() == unrendered
    from pecli.verification.rope import error_map
    from pecli.config import build_scheme

    ratios, starts = error_map(np.cos(angles), np.sin(angles), build_scheme("rope", {"dim": 16}), positions)
    assert ratios.shape == (64, 16) and list(starts) == list(positions)
    assert (ratios[0] <= 1).all() and (ratios[1:, 1:8] > 1).all()  # position 0 is the identity in any layout


# -- issue 26: frequencies given with --inv-freq ------------------------------------------------------------
def test_circle_of_given_frequencies_is_one_panel_at_their_own_dimension(runner, tmp_path, unrendered):
    import json

    out = tmp_path / "c.png"
    result = run(runner, "circle", "--scheme", "rope", "--dim", "8", "--inv-freq", "2,0.7,0.1,0.01", "--out", str(out),
                 "--json")
    assert result.exit_code == 0, result.output
    circle = json.loads(result.stdout)
    # not the default sweep of bases (which would ignore the frequencies): one scheme, the given frequencies
    assert "schemes" not in circle and circle["params"]["inv_freq"] == [2.0, 0.7, 0.1, 0.01]
    refused = run(runner, "circle", "--scheme", "rope", "--dim", "8", "--inv-freq", "2,0.7,0.1,0.01", "--bases", "1,5",
                  "--out", str(out), "--force")
    assert refused.exit_code == 2 and "bases:" in refused.output


def test_wavelengths_marks_the_serving_context_as_the_wavelengths_command(runner, tmp_path, monkeypatch, unrendered):
    # rope d = 32, base 10^6: λ_i = 2π·10^(6·2i/32) = 2π·10^(3i/8); C = 131,072 is the red line, and the
    # pairs whose λ_i passes it are circled.
    from matplotlib.figure import Figure

    drawn = {}
    original = frequencies.draw_wavelengths

    def spy(axes, scheme, **kwargs):
        drawn.update(kwargs, figure=axes.figure)
        return original(axes, scheme, **kwargs)

    monkeypatch.setattr(frequencies, "draw_wavelengths", spy)
    result = run(runner, "wavelengths", "--scheme", "rope", "--dim", "32", "--base", "1e6", "--context", "131072",
                 "-o", str(tmp_path / "w.png"), *SMALL)
    assert result.exit_code == 0, result.output
    assert drawn["context"] == 131072 and isinstance(drawn["figure"], Figure)
    (axes,) = panels(drawn["figure"])
    labels = [line.get_label() for line in axes.lines]
    # λ_i = 2π·10^(3i/8) > 131,072 ⟺ i > (8/3)·log10(131072/2π) = 11.52…: pairs 12–15, four of them
    assert "context length 131,072" in labels and "4 pair(s) never complete a turn within 131,072" in labels
    # the command's own table says the same of the same context
    table = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(
        app, ["wavelengths", "--scheme", "rope", "--dim", "32", "--base", "1e6", "--context", "131072", "--json"])
    import json

    pairs = json.loads(table.stdout)["pairs"]
    assert sum(1 for pair in pairs if pair["wavelength"] > 131072) == 4


def test_wavelengths_context_takes_a_dynamic_scaling_at_that_context(runner, tmp_path, unrendered):
    # dynamic NTK at C = 8192 over 2048 trained positions, factor 2: the base grows (as wavelengths --context
    # takes it), and --json describes the scheme drawn, at C.
    import json

    args = ["--scheme", "rope", "--scaling", "dynamic", "--factor", "2", "--max-position-embeddings", "2048",
            "--context", "8192"]
    result = run(runner, "wavelengths", *args, "-o", str(tmp_path / "w.png"), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["params"]["context"] == 8192
    refused = run(runner, "heatmap", "--context", "100", "-o", str(tmp_path / "h.png"))
    assert refused.exit_code == 2 and "--context does not apply to plot heatmap" in refused.stderr


def test_library_plot_takes_the_length_it_is_given(tmp_path):
    # The library door and the command's door draw the same extrapolation figure for one length, and
    # another length draws another: d = 8, base 10,000, T = 100: test angles (L − 1)·10^(−i).
    import pecli
    from pecli.cli.plot import SETTINGS, _request
    from pecli.config import resolve

    def heights(figure):
        (axes,) = panels(figure)
        return [path.vertices[:, 1].max() for path in axes.collections[0].get_paths()]

    scheme = build_scheme("sinusoidal", {"dim": 8})
    theta = 10.0 ** -np.arange(4)
    library = {length: pecli.plot("extrapolation", scheme, length=length, train_length=100)[0] for length in (8192, 512)}
    np.testing.assert_allclose(heights(library[8192]), 8191 * theta)
    np.testing.assert_allclose(heights(library[512]), 511 * theta)
    spec = resolve({"scheme": "sinusoidal", "dim": 8, "length": 8192, "train_length": 100, "kind": "extrapolation"},
                   SETTINGS)
    command, _ = figures.draw("extrapolation", _request(spec))
    np.testing.assert_allclose(heights(command), heights(library[8192]))
    assert command._suptitle.get_text() == library[8192]._suptitle.get_text()
