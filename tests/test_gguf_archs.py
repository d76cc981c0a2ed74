"""llama.cpp architectures read as llama.cpp runs them (issue 41): glm4, smollm3, cohere2, gpt-oss, MPT
without ALiBi, GPT-J refused. Each file is written here from the model's config (the fixture configs of
transformers' own models) the way ``convert_hf_to_gguf.py`` writes it; the layers and numbers expected
come from llama.cpp's source, cited beside each test."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gguf")

from gguf_models import write_gguf  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "models" / "rope"


def fixture_config(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())["config"]


def config_file(tmp_path, config: dict) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return str(path)


def base_keys(config: dict, rotated: int) -> dict:
    """TextModel.set_gguf_parameters: the counts, the context, the base; the rotated components."""
    rope = config.get("rope_parameters") or {}
    keys = {"block_count": config["num_hidden_layers"], "context_length": config["max_position_embeddings"],
            "embedding_length": config["hidden_size"], "attention.head_count": config["num_attention_heads"],
            "rope.freq_base": float(rope.get("rope_theta", config.get("rope_theta", 10000.0))),
            "rope.dimension_count": rotated}
    if "head_dim" in config:
        keys["attention.key_length"] = config["head_dim"]
    return keys


def plan_groups(invoke, path: str) -> dict:
    result = invoke("inspect", "config", "--gguf", path, "--json")
    assert result.exit_code == 0, result.output
    return {g["name"]: g for g in json.loads(result.stdout)["groups"]}


def test_smollm3_skips_rope_on_every_fourth_layer(invoke, tmp_path):
    # llama.cpp: SmolLM3's n_no_rope_layer_step = 4 and its graph's use_rope = (il + 1) % 4 != 0: layers 3, 7, …, 35
    config = fixture_config("smollm3")
    path = write_gguf(tmp_path / "smollm3.gguf", "smollm3", base_keys(config, 2048 // 16))
    groups = plan_groups(invoke, path)
    assert groups["nope"]["layers"] == list(range(3, 36, 4))
    assert groups["nope"]["options"] is None
    assert invoke("diff", "--hf-config", config_file(tmp_path, config), "--gguf", path).exit_code == 0


def test_cohere2_rotates_its_sliding_layers_only(invoke, tmp_path):
    # set_swa_pattern(4): layer i slides when i % 4 < 3; build_cohere2 applies ggml_rope_ext only when is_swa
    config = fixture_config("cohere2")
    keys = {**base_keys(config, 128), "rope.scaling.type": "none", "attention.sliding_window": 4096}
    path = write_gguf(tmp_path / "cohere2.gguf", "cohere2", keys)
    groups = plan_groups(invoke, path)
    assert groups["nope"]["layers"] == list(range(3, 40, 4))
    assert groups["sliding_attention"]["options"]["layout"] == "interleaved"
    assert invoke("diff", "--hf-config", config_file(tmp_path, config), "--gguf", path).exit_code == 0


def test_glm4_rotates_half_of_each_head_in_adjacent_pairs(invoke, tmp_path):
    # Glm4Model writes rope.dimension_count = 128 × 0.5 = 64; llama_model_rope_type: GLM4 is NORM, weights unpermuted
    config = fixture_config("glm4")
    path = write_gguf(tmp_path / "glm4.gguf", "glm4", base_keys(config, 64))
    (group,) = plan_groups(invoke, path).values()
    assert group["options"]["partial_rotary_factor"] == 0.5 and group["options"]["layout"] == "interleaved"
    assert invoke("diff", "--hf-config", config_file(tmp_path, config), "--gguf", path).exit_code == 0
    # a file rotating the whole head: 128 components where the model rotates 64
    whole = write_gguf(tmp_path / "glm4-whole.gguf", "glm4", base_keys(config, 128))
    result = invoke("diff", "--hf-config", config_file(tmp_path, config), "--gguf", whole, "--json")
    (difference,) = json.loads(result.stdout)["differences"]
    assert (difference["what"], difference["gguf_key"], difference["gguf_value"], difference["hf_value"]) == (
        "rotated components", "glm4.rope.dimension_count", 128, 64)


def gpt_oss_file(tmp_path, config: dict) -> str:
    """GptOssModel: yarn, its factor and original context; the sliding window."""
    rope = config["rope_parameters"]
    keys = {**base_keys(config, 64), "rope.scaling.type": "yarn", "rope.scaling.factor": float(rope["factor"]),
            "rope.scaling.original_context_length": rope["original_max_position_embeddings"],
            "attention.sliding_window": config["sliding_window"]}
    return write_gguf(tmp_path / "gpt-oss.gguf", "gpt-oss", keys)


def ggml_yarn_inv_freq(base: float, dim: int, factor: float, original: int, rounded: bool) -> np.ndarray:
    """ggml_rope_yarn_corr_dims (floor/ceil) and rope_yarn's ramp when ``rounded``; transformers' truncate: false not."""
    def corr(beta: float) -> float:
        return dim * math.log(original / (beta * 2 * math.pi)) / (2 * math.log(base))
    low, high = corr(32.0), corr(1.0)
    if rounded:
        low, high = math.floor(low), math.ceil(high)
    theta = base ** (-np.arange(0, dim, 2) / dim)
    ramp = 1 - np.clip((np.arange(dim // 2) - low) / max(0.001, high - low), 0, 1)  # 1: extrapolate
    return theta / factor * (1 - ramp) + theta * ramp


def test_gpt_oss_rounds_the_yarn_range_where_the_model_does_not(invoke, tmp_path):
    config = fixture_config("gpt_oss")
    path = gpt_oss_file(tmp_path, config)
    ours = ggml_yarn_inv_freq(150000.0, 64, 32.0, 4096, rounded=True)
    theirs = ggml_yarn_inv_freq(150000.0, 64, 32.0, 4096, rounded=False)
    # issue 41's figures for pair 17: 2.2795e-4 (llama.cpp) vs 1.2932e-4 rad/token (transformers)
    assert (ours[17], theirs[17]) == (pytest.approx(2.2795e-4, rel=1e-4), pytest.approx(1.2932e-4, rel=1e-4))
    wavelengths = json.loads(invoke("wavelengths", "--gguf", path, "--json").stdout)
    np.testing.assert_allclose([p["inv_freq"] for p in wavelengths["pairs"]], ours, rtol=1e-9)
    result = invoke("diff", "--hf-config", config_file(tmp_path, config), "--gguf", path, "--json")
    assert result.exit_code == 1
    (difference,) = json.loads(result.stdout)["differences"]
    assert difference["what"] == "frequencies"
    assert "ggml_rope_yarn_corr_dims" in difference["gguf_key"] and "truncate" in difference["hf_key"]
    ratios = ours / theirs
    assert f"{ratios[17]:.3g}" in difference["effect"]


def test_mpt_without_alibi_is_read_as_no_position_signal(invoke, tmp_path):
    # load_hparams: use_alibi only when f_max_alibi_bias > 0; the converter writes 0 for alibi: false
    path = write_gguf(tmp_path / "mpt.gguf", "mpt", {"block_count": 4, "context_length": 2048, "embedding_length": 256,
                                                        "attention.head_count": 4, "attention.max_alibi_bias": 0.0})
    (group,) = plan_groups(invoke, path).values()
    assert group["options"] is None and "no position signal" in group["note"]
    config = {"model_type": "mpt", "d_model": 256, "n_heads": 4, "n_layers": 4, "max_seq_len": 2048,
              "attn_config": {"alibi": True, "alibi_bias_max": 8}}
    result = invoke("diff", "--hf-config", config_file(tmp_path, config), "--gguf", path, "--json")
    assert result.exit_code == 1
    (difference,) = json.loads(result.stdout)["differences"]
    assert (difference["what"], difference["gguf_value"], difference["hf_value"]) == ("encoding", "none", "alibi")


def test_gptj_is_said_not_to_be_a_llama_cpp_architecture(invoke, tmp_path):
    path = write_gguf(tmp_path / "gptj.gguf", "gptj", {"block_count": 28, "context_length": 2048,
                                                          "embedding_length": 4096, "attention.head_count": 16})
    config = config_file(tmp_path, {"model_type": "gptj", "n_embd": 4096, "n_head": 16, "n_layer": 28,
                                    "rotary_dim": 64, "n_positions": 2048})
    for args in (["wavelengths", "--gguf", path], ["diff", "--hf-config", config, "--gguf", path]):
        result = invoke(*args)
        assert result.exit_code == 2, result.output
        assert "GPT-J is not a llama.cpp architecture" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    # the engine refuses the model: a difference, as vLLM's refusal of MPT is (exit 1, the engine's reason)
    result = invoke("diff", "--hf-config", config, "--runtime", "llama.cpp", "--args", "--ctx-size 2048", "--json")
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert not document["accepted"] and "GPT-J is not a llama.cpp architecture" in document["refused"]


def test_gpt_oss_on_llama_cpp_flags_names_the_rounding_too(invoke, tmp_path):
    # the same departure through --runtime llama.cpp: no flag explains it, ggml's rounding does
    config = fixture_config("gpt_oss")
    result = invoke("diff", "--hf-config", config_file(tmp_path, config), "--runtime", "llama.cpp", "--args",
                    "--ctx-size 8192", "--json")
    assert result.exit_code == 1
    differences = json.loads(result.stdout)["differences"]
    assert differences and all("ggml_rope_yarn_corr_dims" in d["runtime_key"] for d in differences)
    ratio = ggml_yarn_inv_freq(150000.0, 64, 32.0, 4096, True) / ggml_yarn_inv_freq(150000.0, 64, 32.0, 4096, False)
    assert f"1.02–{ratio[17]:.3g}× faster" in differences[0]["effect"]


def llama4_keys(config: dict) -> dict:
    return {**base_keys(config, 128), "attention.key_length": 128, "rope.freq_base": 500000.0}


def test_llama4_skips_rope_on_every_fourth_layer(invoke, tmp_path):
    # llm_build_llama_iswa: use_rope = (il + 1) % n_no_rope_layer_step != 0, step 4 (llama-hparams.h's default):
    # layers 3, 7, …, 47 apply no RoPE, as the config's no_rope_layers say
    config = fixture_config("llama4_text")
    path = write_gguf(tmp_path / "llama4.gguf", "llama4", llama4_keys(config))
    groups = plan_groups(invoke, path)
    assert groups["nope"]["layers"] == list(range(3, 48, 4))
    assert invoke("diff", "--hf-config", config_file(tmp_path, config), "--gguf", path).exit_code == 0
    # the RoPE layers are all chunked: llama.cpp keeps their trained base whatever --rope-freq-base says
    assert invoke("diff", "--gguf", path, "--runtime", "llama.cpp", "--args", "--rope-freq-base 10000").exit_code == 0


def test_llama4_with_its_windows_off_rotates_all_but_its_last_layer(invoke, tmp_path):
    # attention.sliding_window 0: swa_type NONE and n_no_rope_layer_step = n_layer; (il + 1) % 48 == 0 for il = 47
    config = fixture_config("llama4_text")
    path = write_gguf(tmp_path / "llama4.gguf", "llama4", {**llama4_keys(config), "attention.sliding_window": 0})
    groups = plan_groups(invoke, path)
    assert groups["nope"]["layers"] == [47]
    assert "last layer" in groups["nope"]["note"]
