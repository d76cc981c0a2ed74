"""inspect rope, plot rope-usage, check layout and permute on synthetic checkpoints with known usage."""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest

pytest.importorskip("safetensors")
from safetensors.numpy import load_file, save_file  # noqa: E402

from pecli.weights.permute import to_half, to_interleaved  # noqa: E402

HEAD_DIM, HEADS, KV_HEADS, HIDDEN, LAYERS = 8, 4, 2, 32, 2
PAIRS = HEAD_DIM // 2
#: The norm of the rows feeding pair i, the same in every head: growing with i (slow pairs used most).
USAGE = np.array([1.0, 2.0, 3.0, 4.0])
CONFIG = {"model_type": "llama", "hidden_size": HIDDEN, "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS,
          "rope_theta": 10000.0, "max_position_embeddings": 64}


def projection(heads: int, layout: str, rng: np.random.Generator, usage=USAGE, angles=None) -> np.ndarray:
    """Rows of a q or k projection: pair i of every head has its two rows at a random orientation φ in
    the pair's plane, √(‖a‖² + ‖b‖²) = usage[i] exactly; rows placed by ``layout``."""
    weight = np.zeros((heads * HEAD_DIM, HIDDEN), np.float32)
    for head in range(heads):
        for i in range(PAIRS):
            phi = rng.uniform(0, 2 * np.pi) if angles is None else angles
            first, second = (i, i + PAIRS) if layout == "half" else (2 * i, 2 * i + 1)
            weight[head * HEAD_DIM + first, (head + i) % HIDDEN] = usage[i] * np.cos(phi)
            weight[head * HEAD_DIM + second, (head + i + 1) % HIDDEN] = usage[i] * np.sin(phi)
    return weight


def checkpoint(folder, layout="half", name="model.safetensors", **kwargs):
    rng = np.random.default_rng(7)
    tensors = {}
    for layer in range(LAYERS):
        tensors[f"model.layers.{layer}.self_attn.q_proj.weight"] = projection(HEADS, layout, rng, **kwargs)
        tensors[f"model.layers.{layer}.self_attn.k_proj.weight"] = projection(KV_HEADS, layout, rng, **kwargs)
    tensors["model.embed_tokens.weight"] = np.zeros((3, HIDDEN), np.float32)
    path = folder / name
    save_file(tensors, str(path))
    config = folder / "config.json"
    config.write_text(json.dumps(CONFIG))
    return path, config


def test_inspect_rope_measures_the_known_usage(invoke, tmp_path):
    weights, config = checkpoint(tmp_path)
    result = invoke("inspect", "rope", "--weights", weights, "--hf-config", config, "--json")
    assert result.exit_code == 0, result.stderr
    usage = json.loads(result.stdout)
    assert (usage["heads"], usage["kv_heads"], usage["head_dim"], usage["layers"]) == (HEADS, KV_HEADS, HEAD_DIM, [0, 1])
    pairs = usage["pairs"]
    np.testing.assert_allclose([p["q_norm"] for p in pairs], USAGE, rtol=1e-6)
    np.testing.assert_allclose([p["k_norm"] for p in pairs], USAGE, rtol=1e-6)
    np.testing.assert_allclose([p["q_share"] for p in pairs], USAGE**2 / 30, rtol=1e-6)  # 1 + 4 + 9 + 16
    np.testing.assert_allclose([p["wavelength"] for p in pairs], 2 * np.pi * 10000.0 ** (np.arange(4) / 4))
    assert np.array(usage["k_heads"]).shape == (LAYERS, KV_HEADS, PAIRS)
    assert usage["per_layer"][0]["q_low_frequency_share"] == pytest.approx(25 / 30)


def test_inspect_rope_table_and_memory_bound(invoke, tmp_path):
    weights, config = checkpoint(tmp_path)
    table = invoke("inspect", "rope", "--weights", weights, "--hf-config", config)
    assert table.exit_code == 0 and "q share" in table.stdout and "53.3%" in table.stdout  # 16 / 30
    refused = invoke("inspect", "rope", "--weights", weights, "--hf-config", config, "--max-memory", "1K")
    assert refused.exit_code == 2 and "budget" in refused.stderr


def test_inspect_reads_interleaved_weights_with_an_interleaved_config(invoke, tmp_path):
    weights, config = checkpoint(tmp_path, "interleaved")
    result = invoke("inspect", "rope", "--weights", weights, "--hf-config", config, "--layout", "interleaved", "--json")
    np.testing.assert_allclose([p["q_norm"] for p in json.loads(result.stdout)["pairs"]], USAGE, rtol=1e-6)


def test_inspect_without_projections_is_one_line(invoke, tmp_path):
    path = tmp_path / "gpt2.safetensors"
    save_file({"wpe.weight": np.zeros((4, 8), np.float32)}, str(path))
    result = invoke("inspect", "rope", "--weights", path, "--dim", "8")
    assert result.exit_code == 2 and "no q and k projections" in result.stderr


@pytest.mark.parametrize(("trained", "configured", "code", "verdict"), [
    ("half", "half", 0, "pass"), ("interleaved", "interleaved", 0, "pass"),
    ("interleaved", "half", 1, "fail"), ("half", "interleaved", 1, "fail"),
])
def test_check_layout_tells_the_layout(invoke, tmp_path, trained, configured, code, verdict):
    weights, config = checkpoint(tmp_path, trained)
    result = invoke("check", "layout", "--weights", weights, "--hf-config", config, "--layout", configured, "--json")
    assert result.exit_code == code, result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == verdict and report["results"][0]["figures"]["found_layout"] == trained
    if verdict == "fail":
        assert f"permute --from {trained} --to {configured}" in report["results"][0]["reason"]


def test_check_layout_warns_when_the_weights_do_not_tell(invoke, tmp_path):
    weights, config = checkpoint(tmp_path, usage=np.ones(PAIRS), angles=np.pi / 4)  # every row alike
    result = invoke("check", "layout", "--weights", weights, "--hf-config", config, "--json")
    assert json.loads(result.stdout)["verdict"] == "warn"


def test_check_all_leaves_layout_out(invoke):
    result = invoke("check", "all", "--scheme", "rope", "--dim", "8", "--length", "16", "--json")
    assert "layout" not in [r["property"] for r in json.loads(result.stdout)["results"]]


def test_plot_rope_usage(invoke, tmp_path):
    weights, config = checkpoint(tmp_path)
    out = tmp_path / "usage.png"
    result = invoke("plot", "rope-usage", "--weights", weights, "--hf-config", config, "--out", out, "--dpi", "20")
    assert result.exit_code == 0, result.stderr
    assert out.stat().st_size > 0 and "83.3%" in result.stderr  # the slow half's share: (9 + 16) / 30
    # The budget bounds the projections read, not only the positions drawn (one position: a few bytes).
    bounded = tmp_path / "bounded.png"
    refused = invoke("plot", "rope-usage", "--weights", weights, "--hf-config", config, "--length", "1",
                     "--max-memory", "300B", "--out", bounded)
    assert refused.exit_code == 2 and "reading one projection" in refused.stderr and not bounded.exists()


# -- permute ---------------------------------------------------------------------------------------------
def test_to_half_matches_a_hand_written_two_head_reference():
    # Two heads of 4 components; interleaved rows per head: p0c0 p0c1 p1c0 p1c1 → half: p0c0 p1c0 p0c1 p1c1.
    weight = np.arange(8 * 3).reshape(8, 3)
    expected = weight[[0, 2, 1, 3, 4, 6, 5, 7]]
    np.testing.assert_array_equal(to_half(weight, 2), expected)
    np.testing.assert_array_equal(to_interleaved(expected, 2), weight)


def test_permutation_round_trips_exactly():
    weight = np.random.default_rng(0).normal(size=(6 * 16, 5)).astype(ml_dtypes.bfloat16)
    for heads in (1, 2, 3, 6):
        np.testing.assert_array_equal(to_interleaved(to_half(weight, heads), heads), weight)


def test_permute_turns_meta_weights_into_hf_ones(invoke, tmp_path):
    meta, config = checkpoint(tmp_path, "interleaved", name="meta.safetensors")
    hf, _ = checkpoint(tmp_path, "half", name="hf.safetensors")
    name = "model.layers.1.self_attn.k_proj.weight"
    out = tmp_path / "k.safetensors"
    result = invoke("permute", meta, "--tensor", name, "--from", "interleaved", "--to", "half", "--heads", KV_HEADS, "--out", out)
    assert result.exit_code == 0, result.stderr
    np.testing.assert_array_equal(load_file(str(out))[name], load_file(str(hf))[name])
    again = invoke("permute", meta, "--tensor", name, "--from", "interleaved", "--to", "half", "--heads", KV_HEADS, "--out", out)
    assert again.exit_code == 2 and "--force" in again.stderr


def test_permute_npy_keeps_bf16_values_and_checks_heads(invoke, tmp_path):
    weight = np.random.default_rng(1).normal(size=(16, 4)).astype(ml_dtypes.bfloat16)
    source = tmp_path / "w.safetensors"
    save_file({"w": weight}, str(source))
    out = tmp_path / "w.npy"
    assert invoke("permute", source, "--from", "half", "--to", "interleaved", "--head-dim", 8, "--out", out).exit_code == 0
    np.testing.assert_array_equal(np.load(out), to_interleaved(weight, 2).astype(np.float32))
    bad = invoke("permute", source, "--from", "half", "--to", "interleaved", "--heads", 3, "--out", tmp_path / "x.npy")
    assert bad.exit_code == 2 and "not 3 heads" in bad.stderr
    assert not (tmp_path / "x.npy").exists()
