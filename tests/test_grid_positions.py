"""Positions with several coordinates: axial RoPE (rope-nd), 2-D sinusoidal (sinusoidal-nd) and M-RoPE.

Expected values are worked out by hand from the formulas (Heo et al. 2024 for axial RoPE, the
"Positional encoding explained" article for 2-D sinusoids) or transcribe HuggingFace's reference
procedure step by step (Qwen2-VL's ``apply_multimodal_rotary_pos_emb``, Qwen3-VL's
``apply_interleaved_mrope``), independently of how pecli assigns pairs to axes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

from pecli.analysis.registry import ANALYSES, run_checks
from pecli.config import build_scheme, resolve
from pecli.errors import ConfigError
from pecli.schemes.base import AdditiveScheme
from pecli.schemes.positions import grid_cells

HF = "sample_configs/hf/qwen--qwen2-vl-7b-instruct-gptq-int8.json"


# -- rope-nd --------------------------------------------------------------------------------------------
def test_rope_nd_rotates_each_pair_by_its_own_axis():
    # dim 8 on a [2, 3] grid: 4 components per axis, θ = 10000^(-2j/4) = 1, 0.01; pairs 0, 1 follow h,
    # pairs 2, 3 follow w; half layout: cos at components 0–3, sin at 4–7.
    scheme = build_scheme("rope-nd", {"dim": 8, "grid": [2, 3]})
    h, w = 1, 2
    angles = [h * 1.0, h * 0.01, w * 1.0, w * 0.01]
    expected = [math.cos(a) for a in angles] + [math.sin(a) for a in angles]
    np.testing.assert_allclose(scheme.encode([[h, w]])[0], expected, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(scheme.cells(), [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]])


def test_rope_nd_uneven_axes_and_bad_axis_dims():
    scheme = build_scheme("rope-nd", {"dim": 12, "grid": "2x3x4"})
    assert scheme.dims == (4, 4, 4) and scheme.axis_names == ("t", "h", "w")
    assert build_scheme("rope-nd", {"dim": 128, "grid": [2, 3, 4]}).dims == (44, 42, 42)
    with pytest.raises(ConfigError, match="axis_dims: must be even numbers"):
        build_scheme("rope-nd", {"dim": 8, "grid": [2, 2], "axis_dims": [2, 4]})
    with pytest.raises(ConfigError, match="grid: must have 2 or 3 axes"):
        build_scheme("rope-nd", {"grid": [2, 2, 2, 2]})


def test_grid_cells_are_row_major():
    np.testing.assert_array_equal(grid_cells((2, 2, 2))[5], [1, 0, 1])


# -- sinusoidal-nd ----------------------------------------------------------------------------------------
def test_sinusoidal_nd_concat_and_add_by_hand():
    # d = 4 on a [3, 3] grid, concat: each axis gets the 1-D encoding of width 2, [sin p, cos p].
    concat = build_scheme("sinusoidal-nd", {"dim": 4, "grid": [3, 3]})
    np.testing.assert_allclose(concat.encode([[1, 2]])[0], [math.sin(1), math.cos(1), math.sin(2), math.cos(2)], atol=1e-15)
    # add: both axes at full width 4 (ω = 1, 0.01), summed
    added = build_scheme("sinusoidal-nd", {"dim": 4, "grid": [3, 3], "combine": "add"})
    one = lambda p: [math.sin(p), math.cos(p), math.sin(0.01 * p), math.cos(0.01 * p)]  # noqa: E731
    np.testing.assert_allclose(added.encode([[1, 2]])[0], np.add(one(1), one(2)), atol=1e-15)
    with pytest.raises(ConfigError, match="dim: concat gives each of the 2 axes an even share"):
        build_scheme("sinusoidal-nd", {"dim": 6, "grid": [3, 3]})


# -- relativity and uniqueness on a grid --------------------------------------------------------------------
@dataclass(frozen=True)
class MixedAxes(AdditiveScheme):
    """The mistake [Fleetwood] warns about: one pair holds (cos xθ, sin yθ), the x and y offsets mixed."""

    name: ClassVar[str] = "mixed-axes"
    summary: ClassVar[str] = "x and y in one pair"
    has_cells: ClassVar[bool] = True
    position_rank: ClassVar[int] = 2
    axis_names: ClassVar[tuple[str, ...]] = ("h", "w")

    @property
    def width(self) -> int:
        return 4

    def encode(self, positions):
        p = np.asarray(positions, dtype=np.float64)
        theta = np.array([1.0, 0.1])
        return np.concatenate([np.cos(p[:, :1] * theta), np.sin(p[:, 1:] * theta)], axis=1)

    def cells(self):
        return grid_cells((5, 5))


@pytest.mark.parametrize("name,params,holds", [
    ("rope-nd", {"dim": 16, "grid": [5, 6]}, True),
    ("sinusoidal-nd", {"dim": 16, "grid": [5, 6]}, True),
    ("sinusoidal-nd", {"dim": 16, "grid": [5, 6], "combine": "add"}, False),  # cross terms PE(m_h)·PE(n_w)
    ("mrope", {"dim": 16, "mrope_section": [2, 3, 3], "sequence": "text:3,image:1x4x6,video:2x4x4,text:2"}, True),
])
def test_relativity_depends_on_the_offset_vector(name, params, holds):
    (result,) = run_checks(build_scheme(name, params), "relativity")
    assert result.passed is holds, result.reason
    assert set(result.figures["axis_spread"]) == set(build_scheme(name, params).axis_names)
    if holds:  # and along each axis alone
        assert max(result.figures["axis_spread"].values()) < 1e-12


def test_mixing_the_axes_in_one_pair_fails_relativity():
    (result,) = run_checks(MixedAxes(), "relativity")
    assert result.verdict == "fail" and "not only their offset" in result.reason


def test_uniqueness_over_grid_cells():
    (added,) = run_checks(build_scheme("sinusoidal-nd", {"dim": 8, "grid": [4, 4], "combine": "add"}), "uniqueness")
    # PE(x) + PE(y) is symmetric: cells (x, y) and (y, x) coincide, 6 pairs off the diagonal of a 4 × 4 grid
    assert added.verdict == "fail" and added.figures["colliding_pairs"] == 6
    assert added.figures["first_collision"] == [[0, 1], [1, 0]]
    (axial,) = run_checks(build_scheme("rope-nd", {"dim": 8, "grid": [4, 4]}), "uniqueness")
    assert axial.verdict == "pass"


def test_properties_of_a_line_are_not_applicable():
    # on a grid every property is measured (extrapolation from a training grid: tests/test_grid_extrapolation.py);
    # on an M-RoPE sequence, whose ids are not a box, extrapolation is not
    on_grid = {r.property: r for r in run_checks(build_scheme("rope-nd", {"dim": 8, "grid": [3, 3]}), "all")}
    assert {name for name, r in on_grid.items() if r.verdict == "n/a"} == set()
    results = {r.property: r for r in run_checks(build_scheme("mrope", {"dim": 8}), "all")}
    assert {name for name, r in results.items() if r.verdict == "n/a"} == {
        name for name, info in ANALYSES.items() if not info.any_rank
    } == {"extrapolation"}  # distinguishability and composability are measured per axis (tests/test_grid_analyses.py)


# -- M-RoPE -----------------------------------------------------------------------------------------------
def hf_mrope_cos(ids: np.ndarray, dim: int, base: float, section: list[int]) -> np.ndarray:
    """Qwen2-VL's reference, step by step: freqs (3, L, d/2) per id row, emb = cat(freqs, freqs), cos,
    split along the last axis by section * 2 and chunk i taken from id row i % 3."""
    inv_freq = 1.0 / base ** (np.arange(0, dim, 2) / dim)
    freqs = ids.T[:, :, None].astype(np.float64) * inv_freq  # (3, L, d/2)
    cos = np.cos(np.concatenate([freqs, freqs], axis=-1))  # (3, L, d)
    chunks = np.split(cos, np.cumsum(section * 2)[:-1], axis=-1)
    return np.concatenate([chunk[i % 3] for i, chunk in enumerate(chunks)], axis=-1)


def hf_interleaved_cos(ids: np.ndarray, dim: int, base: float, section: list[int]) -> np.ndarray:
    """Qwen3-VL's apply_interleaved_mrope: t's freqs, with h at slice(1, 3·s_h, 3) and w at slice(2, 3·s_w, 3)."""
    inv_freq = 1.0 / base ** (np.arange(0, dim, 2) / dim)
    freqs = ids.T[:, :, None].astype(np.float64) * inv_freq
    freqs_t = freqs[0].copy()
    for axis, offset in ((1, 1), (2, 2)):
        index = slice(offset, section[axis] * 3, 3)
        freqs_t[..., index] = freqs[axis, ..., index]
    return np.cos(np.concatenate([freqs_t, freqs_t], axis=-1))


SEQUENCE = "text:3,image:1x4x6,text:2"


def test_mrope_cos_is_the_reference_split_by_sections():
    scheme = build_scheme("mrope", {"dim": 16, "base": 10000, "mrope_section": [2, 3, 3], "sequence": SEQUENCE})
    ids = scheme.cells()
    cos, _ = scheme.cos_sin(ids)
    np.testing.assert_allclose(cos, hf_mrope_cos(ids, 16, 10000.0, [2, 3, 3]), rtol=0, atol=1e-15)


def test_mrope_interleaved_is_the_qwen3_reference():
    params = {"dim": 24, "base": 5e5, "mrope_section": [4, 4, 4], "mrope_interleaved": True, "sequence": SEQUENCE}
    scheme = build_scheme("mrope", params)
    cos, _ = scheme.cos_sin(scheme.cells())
    np.testing.assert_allclose(cos, hf_interleaved_cos(scheme.cells(), 24, 5e5, [4, 4, 4]), rtol=0, atol=1e-15)


def test_mrope_on_text_is_rope():
    text = build_scheme("mrope", {"dim": 16, "mrope_section": [2, 3, 3], "sequence": "text:7"})
    rope = build_scheme("rope", {"dim": 16, "base": 1e6})
    np.testing.assert_array_equal(text.encode(text.cells()), rope.encode(np.arange(7)))


def test_sections_must_sum_to_half_the_dim(run_main):
    result = run_main("encode", "--scheme", "mrope", "--dim", "64", "--mrope-section", "16,24,24")
    assert result.returncode == 2
    assert result.stderr == "pecli: error: mrope_section: [16, 24, 24] sums to 64; the sections must sum to dim/2 = 32\n"


def test_encode_writes_positions_and_caches_from_a_qwen2_vl_config(invoke, tmp_path):
    out = tmp_path / "m.npz"
    result = invoke("encode", "--hf-config", HF, "--sequence", "text:3,image:1x8x12,text:2", "--out", out)
    assert result.exit_code == 0, result.output
    with np.load(out) as archive:
        positions = archive["positions"]
        assert positions.shape == (3, 29) and archive["cos"].shape == (29, 128)
        # text 0, 1, 2; the merged 1 × 4 × 6 image at 3; then text from 3 + max(1, 4, 6) = 9
        np.testing.assert_array_equal(positions[:, 2], [2, 2, 2])
        np.testing.assert_array_equal(positions[:, 3], [3, 3, 3])
        np.testing.assert_array_equal(positions[:, 26], [3, 6, 8])
        np.testing.assert_array_equal(positions[:, 27], [9, 9, 9])
        np.testing.assert_allclose(archive["cos"], hf_mrope_cos(positions.T, 128, 1e6, [16, 24, 24]), atol=1e-15)


def test_wavelengths_say_which_axis_turns_each_pair(invoke):
    result = invoke("wavelengths", "--hf-config", HF, "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    axes = [row["axis"] for row in document["pairs"]]
    assert axes == ["t"] * 16 + ["h"] * 24 + ["w"] * 24
    shares = {share["axis"]: share for share in document["summary"]["axes"]}
    assert shares["h"]["pairs"] == list(range(16, 40))
    # λ_i = 2π · 1e6^(i/64): h's shortest is pair 16's
    assert shares["h"]["smallest_wavelength"] == pytest.approx(2 * math.pi * 1e6 ** (16 / 64))


def test_check_refuses_a_property_of_a_line(invoke):
    result = invoke("check", "extrapolation", "--scheme", "mrope", "--dim", "8")
    assert result.exit_code == 2
    assert "extrapolation is defined for positions along a line and for the cells of a grid" in result.stderr
    assert "mrope's positions are the ids of the sequence text:3,image:1x8x12,text:2, not the cells of a box" in result.stderr


def test_length_is_the_number_of_cells(invoke):
    result = invoke("encode", "--scheme", "rope-nd", "--grid", "4x4", "--length", "10")
    assert result.exit_code == 2
    assert result.stderr.startswith("pecli: error: length: rope-nd encodes its 16 cells (the 4 x 4 grid)")
    assert resolve({"scheme": "sinusoidal-nd", "grid": [3, 5]}).length == 15


def test_compare_marks_what_does_not_apply(invoke):
    result = invoke("compare", "--schemes", "rope,rope-nd,mrope", "--dim", "8", "--grid", "3x3", "--length", "16", "--json")
    assert result.exit_code == 0, result.output
    rows = {row["label"]: row for row in json.loads(result.stdout)["rows"]}
    assert rows["mrope"]["results"]["extrapolation"]["verdict"] == "n/a"
    assert rows["rope-nd"]["results"]["relativity"]["verdict"] == "pass"
    assert rows["rope"]["results"]["composability"]["verdict"] == "pass"


def test_plot_similarity_2d(invoke, tmp_path, unrendered):
    out = tmp_path / "s.png"  # the figure is rendered with the sample config plot-similarity-2d.yaml
    result = invoke("plot", "similarity-2d", "--scheme", "rope-nd", "--dim", "16", "--grid", "5x7", "--cell", "1,2", "--out", out,
                    "--dpi", "40")
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == unrendered
    bad = invoke("plot", "similarity-2d", "--scheme", "rope-nd", "--grid", "5x7", "--cell", "5,0", "--out", out, "--force")
    assert bad.exit_code == 2 and "cell: must be a cell of the 5 x 7 grid" in bad.stderr
    line = invoke("plot", "circle", "--scheme", "rope-nd", "--out", tmp_path / "c.png")
    assert line.exit_code == 2 and "kinds that draw it: similarity-2d" in line.stderr


def test_a_qwen2_5_vl_config_numbers_video_frames_by_time(tmp_path):
    # Qwen2.5-VL: videos' temporal ids advance by second_per_grid_t × tokens_per_second (vision_config: 2).
    config = {
        "model_type": "qwen2_5_vl", "hidden_size": 2048, "num_attention_heads": 16, "rope_theta": 1000000.0,
        "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
        "vision_config": {"spatial_merge_size": 2, "tokens_per_second": 2},
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    spec = resolve({"hf_config": str(path), "sequence": "text:1,video:2x2x2,text:1"})
    assert (spec.scheme.temporal, spec.scheme.tokens_per_second) == ("time", 2.0)
    # text (0,0,0); the video's two frame groups of one merged cell at start 1: t = 1 + 0·1·2, 1 + 1·1·2;
    # the text after it starts at 1 + max(2 + 1, 1, 1) = 4
    np.testing.assert_array_equal(spec.scheme.cells(), [[0, 0, 0], [1, 1, 1], [3, 1, 1], [4, 4, 4]])


def test_default_sections_keep_qwen2_vl_proportions():
    # Qwen2-VL: [16, 24, 24] of 64 pairs; the same split of 8 pairs: a quarter (2), then 3 and 3
    assert build_scheme("mrope", {}).mrope_section == (16, 24, 24)
    assert build_scheme("mrope", {"dim": 16}).mrope_section == (2, 3, 3)
    assert build_scheme("mrope", {"dim": 20}).mrope_section == (2, 4, 4)
    # Qwen3-VL, interleaved: [24, 20, 20] of 64 pairs
    assert build_scheme("mrope", {"mrope_interleaved": True}).mrope_section == (24, 20, 20)


def test_library_encodes_an_n_d_scheme_at_its_cells():
    import pecli

    np.testing.assert_array_equal(
        pecli.encode("rope-nd", grid=[3, 4], dim=8), build_scheme("rope-nd", {"grid": [3, 4], "dim": 8}).encode(grid_cells((3, 4)))
    )
    assert pecli.encode("rope-nd", [[0, 1], [2, 2]], grid=[3, 4], dim=8).shape == (2, 8)


def test_mrope_has_no_plot_kind_and_says_so(invoke, tmp_path):
    result = invoke("plot", "heatmap", "--scheme", "mrope", "--out", tmp_path / "h.png")
    assert result.exit_code == 2
    assert "mrope has 3-D positions (no plot kind draws it yet; see pecli wavelengths)" in result.stderr


@pytest.mark.parametrize("args,message", [
    (["--grid", "4"], "grid: must have 2 or 3 axes ([H, W] or [T, H, W]), got [4]"),
    (["--grid", "4x4", "--dim", "2"], "dim: needs a pair per axis: at least 4 for 2 axes, got 2"),
    (["--axis-dims", "x"], "axis_dims: expected an integer, got 'x'"),
    (["--positions", "[[0, 0], [1]]"], "positions: every position needs the same number of coordinates, got [[0, 0], [1]]"),
    (["--positions", "[0, 1]"], "positions: must have shape (N, 2), got shape (2,)"),
])
def test_bad_grid_input_is_one_line(invoke, args, message):
    result = invoke("encode", "--scheme", "rope-nd", *args)
    assert result.exit_code == 2 and result.stderr == f"pecli: error: {message}\n"


def test_positions_as_written_by_encode_are_read_back(invoke, tmp_path):
    # encode writes positions (k, N), one row per axis as HF's position_ids; --positions takes them back
    np.save(tmp_path / "ids.npy", np.array([[0, 1, 3], [2, 2, 0]]))
    result = invoke("encode", "--scheme", "rope-nd", "--dim", "8", "--positions", tmp_path / "ids.npy", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["positions"] == {"count": 3, "first": [0, 2], "last": [3, 0]}


def test_interleaved_sections_must_be_what_the_pairs_get(invoke):
    result = invoke("encode", "--scheme", "mrope", "--mrope-section", "10,30,24", "--mrope-interleaved")
    assert result.exit_code == 2
    assert "interleaved, [10, 30, 24] gives t, h, w [22, 21, 21] pairs" in result.stderr


def test_a_nested_qwen2_5_vl_config_and_qwen3_vl_read_as_rope(tmp_path):
    # transformers saves newer VL configs with the text model nested in text_config (model_type
    # qwen2_5_vl_text): the model's own type still says its videos are timed.
    nested = {"model_type": "qwen2_5_vl", "vision_config": {"tokens_per_second": 4}, "text_config": {
        "model_type": "qwen2_5_vl_text", "hidden_size": 256, "num_attention_heads": 2, "rope_theta": 1e6,
        "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}}
    path = tmp_path / "nested.json"
    path.write_text(json.dumps(nested), encoding="utf-8")
    scheme = resolve({"hf_config": str(path)}).scheme
    assert (scheme.name, scheme.temporal, scheme.tokens_per_second) == ("mrope", "time", 4.0)
    qwen3 = {"model_type": "qwen3_vl", "hidden_size": 256, "num_attention_heads": 2, "rope_theta": 5e6,
             "rope_scaling": {"rope_type": "default", "mrope_section": [24, 20, 20], "mrope_interleaved": True}}
    path.write_text(json.dumps(qwen3), encoding="utf-8")
    assert resolve({"hf_config": str(path)}).scheme.mrope_interleaved is True
    rope = resolve({"hf_config": str(path), "scheme": "rope"}).scheme
    assert (rope.name, rope.base, rope.scaling) == ("rope", 5e6, "none")


def test_rope_nd_half_is_qwen2_vl_vision_rope():
    # Qwen2-VL's VisionRotaryEmbedding, step by step: dim = head_dim / 2, inv_freq = 1 / 10000^(arange(0,
    # dim, 2) / dim); a cell's freqs = [h · inv_freq, w · inv_freq]; emb = cat(freqs, freqs); cos, sin.
    head_dim = 16
    inv_freq = 1.0 / 10000 ** (np.arange(0, head_dim // 2, 2) / (head_dim // 2))
    cells = grid_cells((3, 5))
    freqs = np.concatenate([cells[:, :1] * inv_freq, cells[:, 1:] * inv_freq], axis=1)
    emb = np.concatenate([freqs, freqs], axis=1)
    scheme = build_scheme("rope-nd", {"dim": head_dim, "grid": [3, 5]})
    cos, sin = scheme.cos_sin(cells)
    np.testing.assert_allclose(cos, np.cos(emb), rtol=0, atol=1e-15)
    np.testing.assert_allclose(sin, np.sin(emb), rtol=0, atol=1e-15)
