"""``pecli diff --gguf``: each difference blamed on the key whose value, set alone to what the converter
writes for the model, gives the model's numbers (issue 44). The files are written here from the model's
config the way ``convert_hf_to_gguf.py`` writes them, with one key changed or left out; the expected
numbers are worked out by hand below."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

pytest.importorskip("gguf")

from gguf_models import LLAMA31, llama3_rope_freqs, llama_keys, write_gguf  # noqa: E402

SAMPLES = Path(__file__).parent.parent / "sample_configs" / "hf"


def config_file(tmp_path, config, name="config.json"):
    path = tmp_path / name
    path.write_text(json.dumps(config))
    return str(path)


def diff_json(invoke, hf: str, gguf: str):
    result = invoke("diff", "--hf-config", hf, "--gguf", gguf, "--json")
    return result.exit_code, json.loads(result.stdout)


def test_a_llama31_file_with_the_wrong_base_is_blamed_on_its_base(invoke, tmp_path):
    # The real converter's rope_freqs (from base 500,000) beside llama.rope.freq_base 10,000: every pair i
    # turns at 10000^(−2i/128) / f_i instead of 500000^(−2i/128) / f_i, i.e. (50)^(2i/128) times faster —
    # at every position, 1 for pair 0 and 50^(126/128) = 47.0 for pair 63.
    keys = {**llama_keys(LLAMA31), "rope.freq_base": 10000.0}
    gguf = write_gguf(tmp_path / "llama31.gguf", "llama", keys, {"rope_freqs.weight": llama3_rope_freqs(LLAMA31)})
    code, document = diff_json(invoke, config_file(tmp_path, LLAMA31), gguf)
    assert code == 1
    (difference,) = document["differences"]
    assert (difference["what"], difference["gguf_key"], difference["hf_key"]) == ("base", "llama.rope.freq_base", "rope_theta")
    assert (difference["gguf_value"], difference["hf_value"]) == (10000.0, 500000.0)
    assert f"pairs 1–63 rotate {50 ** (2 / 128):.3g}–{50 ** (126 / 128):.3g}× faster at every position" == difference["effect"]
    assert "past" not in difference["effect"]


def phi35_keys(config: dict) -> tuple[dict, dict]:
    """Phi3MiniModel's keys and tensors: LongRoPE factors, the original context and attn_factor
    sqrt(1 + ln(131072/4096)/ln(4096)) = sqrt(1 + ln 32/ln 4096) = 1.19024."""
    block, original = config["rope_scaling"], config["original_max_position_embeddings"]
    keys = {"block_count": config["num_hidden_layers"], "context_length": config["max_position_embeddings"],
            "embedding_length": config["hidden_size"], "attention.head_count": config["num_attention_heads"],
            "rope.dimension_count": config["hidden_size"] // config["num_attention_heads"],
            "rope.freq_base": float(config.get("rope_theta", 10000.0)),
            "rope.scaling.original_context_length": original,
            "rope.scaling.attn_factor": math.sqrt(1 + math.log(config["max_position_embeddings"] / original)
                                                  / math.log(original))}
    tensors = {"rope_factors_long.weight": block["long_factor"], "rope_factors_short.weight": block["short_factor"]}
    return keys, tensors


def test_a_phi35_file_without_its_attention_factor_is_blamed_on_that_key(invoke, tmp_path):
    config_path = str(SAMPLES / "microsoft--phi-3.5-mini-instruct.json")
    config = json.loads(Path(config_path).read_text())
    keys, tensors = phi35_keys(config)
    assert keys["rope.scaling.attn_factor"] == pytest.approx(1.190238, rel=1e-6)
    faithful = write_gguf(tmp_path / "phi35.gguf", "phi3", keys, tensors)
    assert diff_json(invoke, config_path, faithful)[0] == 0
    keys.pop("rope.scaling.attn_factor")
    broken = write_gguf(tmp_path / "phi35-broken.gguf", "phi3", keys, tensors)
    code, document = diff_json(invoke, config_path, broken)
    assert code == 1
    (difference,) = document["differences"]
    assert difference["what"] == "attention factor"
    assert difference["gguf_key"] == "phi3.rope.scaling.attn_factor" and difference["gguf_value"] == "absent"
    assert difference["hf_value"] == pytest.approx(1.190238, rel=1e-6)
    # the logits carry the factor squared: 1/1.190238² = 0.7059
    assert "0.7059× the model's" in difference["effect"]
    assert "phi3.rope.scaling.type" not in json.dumps(document)


def test_every_key_is_tried_not_only_the_scaling_ones(invoke, tmp_path):
    # a Qwen2.5 yarn file with rope.dimension_count 64 of a 128-wide head: the rotated components differ,
    # blamed on dimension_count whatever else the file holds
    config = json.loads((SAMPLES / "qwen--qwen2.5-7b-instruct-yarn.json").read_text())
    keys = {"block_count": 28, "context_length": 32768, "embedding_length": 3584, "attention.head_count": 28,
            "rope.dimension_count": 64, "rope.freq_base": 1e6, "rope.scaling.type": "yarn", "rope.scaling.factor": 4.0,
            "rope.scaling.original_context_length": 32768}
    gguf = write_gguf(tmp_path / "qwen.gguf", "qwen2", keys)
    code, document = diff_json(invoke, config_file(tmp_path, config), gguf)
    assert code == 1
    (difference,) = document["differences"]
    assert (difference["what"], difference["gguf_key"], difference["gguf_value"], difference["hf_value"]) == (
        "rotated components", "qwen2.rope.dimension_count", 64, 128)


def test_a_file_that_only_differs_in_an_unused_key_is_the_same(invoke, tmp_path):
    # yarn_beta_fast is written but llama.cpp reads it only with a YaRN ext_factor: a linear file ignores it
    keys = {**llama_keys({**LLAMA31, "rope_scaling": {"rope_type": "linear", "factor": 8.0}}),
            "rope.scaling.yarn_beta_fast": 16.0}
    config = {**LLAMA31, "rope_scaling": {"rope_type": "linear", "factor": 8.0}}
    gguf = write_gguf(tmp_path / "l.gguf", "llama", keys)
    assert diff_json(invoke, config_file(tmp_path, config), gguf)[0] == 0
