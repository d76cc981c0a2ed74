"""``partial_rotary_factor`` in the configs of models whose rotary module turns the whole head.

Llama's ``compute_default_rope_parameters`` (transformers 5.24.0, ``modeling_llama.py``) builds
inv_freq from ``head_dim`` alone, ``1 / base^(2i / head_dim)``, and ``apply_rotary_pos_emb`` multiplies
the whole q by cos: the factor changes nothing. Phi's module reads it: ``dim = int(head_dim × factor)``.
Expected values are those formulas, written here.
"""

from __future__ import annotations

import json

import pytest

from pecli.models.partial import ignoring_types

#: head_dim = 256 / 4 = 64.
LLAMA = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2,
         "rope_theta": 10000.0, "max_position_embeddings": 4096, "partial_rotary_factor": 0.5}


def write(tmp_path, config):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return str(path)


def inv_freqs(stdout):
    return [pair["inv_freq"] for pair in json.loads(stdout)["pairs"]]


def test_llama_rotates_the_whole_head_whatever_the_factor(invoke, tmp_path):
    result = invoke("wavelengths", "--hf-config", write(tmp_path, LLAMA), "--json")
    assert result.exit_code == 0, result.stderr
    expected = [10000.0 ** (-2 * i / 64) for i in range(32)]
    assert inv_freqs(result.stdout) == pytest.approx(expected, rel=1e-12)
    assert "partial_rotary_factor 0.5" in result.stderr and "ignores it" in result.stderr


def test_the_factor_in_a_v5_rope_parameters_block_is_ignored_too(invoke, tmp_path):
    config = {k: v for k, v in LLAMA.items() if k not in ("rope_theta", "partial_rotary_factor")}
    config["rope_parameters"] = {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25}
    result = invoke("wavelengths", "--hf-config", write(tmp_path, config), "--json")
    assert result.exit_code == 0, result.stderr
    assert len(inv_freqs(result.stdout)) == 32


def test_a_scaled_llama_with_the_factor_is_refused(invoke, tmp_path):
    # yarn's shared function reads the factor (16 frequencies for 64 components); Llama multiplies q's
    # 64 components by that cos: transformers does not define it.
    config = {**LLAMA, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024}}
    result = invoke("wavelengths", "--hf-config", write(tmp_path, config), "--json")
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("pecli: error: partial_rotary_factor:") and "yarn" in lines[-1]


def test_phi_reads_the_factor(invoke, tmp_path):
    # Phi: dim = int(64 × 0.5) = 32 rotated components, inv_freq 10000^(-2i/32).
    config = {**LLAMA, "model_type": "phi"}
    result = invoke("wavelengths", "--hf-config", write(tmp_path, config), "--json")
    assert result.exit_code == 0, result.stderr
    assert inv_freqs(result.stdout) == pytest.approx([10000.0 ** (-2 * i / 32) for i in range(16)], rel=1e-12)
    assert "ignores it" not in result.stderr


def test_the_generated_list_names_the_models_that_ignore_it():
    # Read from transformers' modeling files: Llama, Mistral, Qwen2 and Gemma build inv_freq from head_dim;
    # Phi, Phi-3, StableLM, Persimmon and GLM from int(head_dim × partial_rotary_factor).
    types = ignoring_types()
    assert {"llama", "mistral", "qwen2", "gemma"} <= types
    assert not {"phi", "phi3", "stablelm", "persimmon", "glm"} & types


@pytest.mark.parametrize("value, words", [(1.5, "must be <= 1"), ("half", "partial_rotary_factor")])
def test_a_factor_out_of_range_is_still_refused_where_it_is_ignored(invoke, tmp_path, value, words):
    result = invoke("wavelengths", "--hf-config", write(tmp_path, {**LLAMA, "partial_rotary_factor": value}))
    assert result.exit_code == 2
    assert words in result.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(("given", "rotated"), [
    ({"partial_rotary_factor": 0.5}, 16),  # not read: rotary_pct's default 0.25 of 64
    ({"rotary_pct": 0.5}, 32),
    ({"rotary_pct": 0.5, "partial_rotary_factor": 0.75}, 32),
    ({}, 16),
    ({"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5}}, 32),
])
def test_gpt_neox_reads_rotary_pct_only(invoke, tmp_path, given, rotated):
    # GPTNeoXConfig (transformers 5.24.0) takes rotary_pct=0.25 into rope_parameters' partial_rotary_factor;
    # a top-level partial_rotary_factor is not one of its arguments. head_dim = 256 / 4 = 64.
    config = {"model_type": "gpt_neox", "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2, **given}
    result = invoke("wavelengths", "--hf-config", write(tmp_path, config), "--json")
    assert result.exit_code == 0, result.stderr
    expected = [10000.0 ** (-2 * i / rotated) for i in range(rotated // 2)]
    assert inv_freqs(result.stdout) == pytest.approx(expected, rel=1e-12)
    assert ("partial_rotary_factor" in result.stderr) == ("partial_rotary_factor" in given)
