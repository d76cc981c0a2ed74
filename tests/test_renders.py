"""Figures rendered to files: ``sweep --plot``'s heatmap and ``verify --plot``'s error map.

Other tests of these commands draw without rendering (the ``unrendered`` fixture); these render, on tiny
inputs, and read the files back: the kind of file, its size, and in SVG the text the figure promises
(matplotlib writes each text drawn as paths after a comment holding the text).
"""

from __future__ import annotations

import re
import struct

import numpy as np

ROPE = ("--scheme", "rope", "-L", "64")


def svg_texts(path) -> list[str]:
    text = path.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text and text.rstrip().endswith("</svg>")
    return re.findall(r"<!-- (.*?) -->", text)


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def step_of_rope(base: float, dim: int) -> float:
    """The distance between consecutive RoPE rows (cos, sin per pair): sqrt(sum_i 4 sin^2(theta_i / 2))."""
    theta = base ** (-np.arange(0, dim, 2) / dim)
    return float(np.sqrt((4 * np.sin(theta / 2) ** 2).sum()))


def test_sweep_heatmap_renders_its_cells_where_the_grid_puts_them(run_main, tmp_path):
    result = run_main("sweep", "distinguishability", *ROPE, "--grid", "base=100,1e4", "--grid", "dim=8,16",
                      "--plot", "h.svg", "--metric", "min_step", "-q")
    assert result.returncode == 0, result.stderr
    texts = svg_texts(tmp_path / "h.svg")
    assert texts[-1] == "pecli sweep distinguishability: distinguishability.min_step by base and dim"
    assert "distinguishability.min_step" in texts  # the colour bar's label
    # x: the first axis (base), its ticks then its label; y: dim. Then the cells, row by row from the bottom.
    assert texts[:6] == ["100", "10,000", "base", "8", "16", "dim"]
    cells = [float(t) for t in texts[6:10]]
    expected = [step_of_rope(100, 8), step_of_rope(1e4, 8), step_of_rope(100, 16), step_of_rope(1e4, 16)]
    assert np.allclose(cells, expected, rtol=5e-3)


def test_sweep_heatmap_of_verdicts_renders_a_png(run_main, tmp_path):
    from matplotlib.image import imread

    result = run_main("sweep", "distinguishability", *ROPE, "--grid", "base=100,1e4", "--grid", "dim=8,16",
                      "--plot", "v.png", "-q")
    assert result.returncode == 0, result.stderr
    assert png_size(tmp_path / "v.png") == (800, 500)  # 8 x 5 inches at 100 dpi
    pixels = (imread(tmp_path / "v.png")[..., :3] * 255).round().astype(int)
    passed = np.array([0x3B, 0x8A, 0x3E])  # every point passes: the cells are pass's colour
    assert (np.abs(pixels - passed).max(axis=-1) <= 2).sum() > 10_000


def rope_arrays(positions: np.ndarray, dim: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of RoPE at base 10000 in the interleaved layout (a layout bug against pecli's half)."""
    angles = np.repeat(np.outer(positions, 10000.0 ** (-np.arange(0, dim, 2) / dim)), 2, axis=1)
    return np.cos(angles), np.sin(angles)


def verify_plot(run_main, tmp_path, positions, name, *extra):
    cos, sin = rope_arrays(positions)
    np.save(tmp_path / "cos.npy", cos)
    np.save(tmp_path / "sin.npy", sin)
    result = run_main("verify", "--dim", "16", "--cos", "cos.npy", "--sin", "sin.npy", "--plot", name, "-q", *extra)
    assert result.returncode == 1, result.stderr  # they differ: the layout
    return tmp_path / name


def test_verify_error_map_renders_png_svg_and_pdf(run_main, tmp_path):
    positions = np.arange(64)
    assert png_size(verify_plot(run_main, tmp_path, positions, "e.png")) == (800, 500)
    pdf = verify_plot(run_main, tmp_path, positions, "e.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")
    texts = svg_texts(verify_plot(run_main, tmp_path, positions, "e.svg"))
    assert texts[-1] == "pecli verify: layout"
    assert {"component", "position (tokens)", "log10(error / tolerance): above 0 differs"} <= set(texts)
    assert not any("largest of" in t for t in texts)  # a row per position: no band to explain
    assert "60" in texts[texts.index("component"):texts.index("position (tokens)")]  # the y axis reaches 63


def test_verify_error_map_counts_rows_not_position_ids(run_main, tmp_path):
    # Positions 0, 10, …, 630: a row each. The y axis is their ids, and no row stands for ten positions.
    texts = svg_texts(verify_plot(run_main, tmp_path, np.arange(0, 640, 10), "s.svg", "--positions", "0:640:10"))
    ticks = texts[texts.index("component") + 1:texts.index("position (tokens)")]
    assert "600" in ticks and not any("largest of" in t for t in texts)
    # 1,200 rows at most 512 bands: each band the largest of 3 rows.
    texts = svg_texts(verify_plot(run_main, tmp_path, np.arange(1200), "b.svg"))
    assert "note: each row the largest of 3 rows of the arrays" in texts
    # Ids at uneven steps cannot be a linear axis of positions: the axis is the arrays' rows.
    texts = svg_texts(verify_plot(run_main, tmp_path, np.array([0, 1, 5, 100, 101]), "u.svg",
                                  "--positions", "0,1,5,100,101"))
    assert "row of the arrays (positions at uneven steps)" in texts and "position (tokens)" not in texts
