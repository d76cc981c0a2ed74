"""pecli extend: keys a patch must keep, recipes people shipped or give, the training length, bad input.

Expected numbers are worked out here: DeepSeek's mscale = 0.1·mscale_all_dim·ln(s) + 1 and its softmax
factor mscale² (transformers' DeepseekV3Attention, yarn_apply_mscale); llama3's low-frequency band (pairs
whose wavelength is past L₀ / low_freq_factor) divided by the factor (Meta's Llama 3.1 rule).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import pecli.extend.report as extension
from pecli.extend.report import extension_report
from pecli.errors import ConfigError
from pecli.extend.patches import candidate_patches, dropped_keys, extension_base

FIXTURES = Path(__file__).parent / "fixtures" / "extend"
DEEPSEEK = json.loads((FIXTURES / "deepseek-v3.json").read_text())["config"]
PHI3 = json.loads((FIXTURES / "phi3-longrope.json").read_text())["config"]
#: Llama 3 8B: base 500,000, trained and served at 8,192, no scaling (small elsewhere).
LLAMA3 = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
          "num_hidden_layers": 2, "max_position_embeddings": 8192, "rope_theta": 500000.0}


def test_deepseek_patches_keep_what_its_attention_reads():
    start = extension_base(DEEPSEEK)
    assert start.pretraining == 4096
    patches = candidate_patches(start, 327680, base_for_target=None)
    for method, patch in patches.items():
        block = patch["rope_scaling"]
        assert block["mscale_all_dim"] == 1.0, method
        assert dropped_keys(start, method) == (), method
    yarn = patches["yarn"]["rope_scaling"]
    # with mscale and mscale_all_dim, transformers derives the attention factor: no attention_factor written
    assert yarn["mscale"] == 1.0 and "attention_factor" not in yarn and yarn["factor"] == 80.0
    assert dropped_keys(start, "base") == ("mscale_all_dim",)


def test_deepseek_logit_scale_by_hand():
    # the model as shipped: factor 40, mscale_all_dim 1 → (0.1 ln 40 + 1)² = 1.8739 (the 1.874)
    assert extension.logit_scale(DEEPSEEK["rope_scaling"], 1.0, "deepseek_v3") == pytest.approx((0.1 * math.log(40) + 1) ** 2)
    assert extension.logit_scale(DEEPSEEK["rope_scaling"], 1.0, "deepseek_v3") == pytest.approx(1.8738542, rel=1e-6)
    assert extension.logit_scale({"rope_type": "default", "mscale_all_dim": 1.0, "factor": 40}, 1.0, "deepseek_v3") == 1.0
    assert extension.logit_scale({"rope_type": "yarn", "factor": 4.0}, 1.2) == pytest.approx(1.44)
    # served at 16,384 (yarn ×4 over 4,096) to keep the test short; to 32,768: s = 8 over 4,096
    small = {**DEEPSEEK, "max_position_embeddings": 16384, "rope_scaling": {**DEEPSEEK["rope_scaling"], "factor": 4}}
    report = extension_report(small, 32768)
    for candidate in report.candidates:
        expected = 1.0 if candidate.method == "base" else (0.1 * math.log(8) + 1) ** 2
        assert candidate.measures["logit_scale"] == pytest.approx(expected), candidate.method
    assert "drops the model's mscale_all_dim" in report.candidate("base").why


def test_phi3_base_candidate_says_it_drops_the_longrope_factors():
    report = extension_report({**PHI3, "max_position_embeddings": 8192}, 16384)  # short: the same keys
    base = report.candidate("base")
    assert base.config_patch["rope_scaling"] is None
    assert base.dropped == ("short_factor", "long_factor")
    assert "LongRoPE factors it was fine-tuned with" in base.why
    assert report.candidate("longrope").dropped == ()


def test_llama3_8b_to_128k_measures_the_shipped_recipe_and_a_given_one():
    report = extension_report(LLAMA3, 131072, method="llama3", factor=8)
    shipped, given = report.candidate("shipped"), report.candidate("given")
    assert shipped.label == "Llama 3.1" and given.label == "llama3 ×8"
    for c in (shipped, given):
        block = c.config_patch["rope_scaling"]
        assert (block["rope_type"], block["factor"], block["original_max_position_embeddings"]) == ("llama3", 8.0, 8192)
        # the pairs that never turned in 8,192 tokens are past L₀ / low_freq_factor: all divided by 8
        assert c.measures["angles_in_range_up_to"] == 8192 * 8
    assert report.candidate("llama3").config_patch["rope_scaling"]["factor"] == 16.0  # s = N / L₀
    assert any("Llama 3.1 shipped a recipe" in note for note in report.notes)
    assert report.candidate().origin == "given"  # the given recipe is the one shown and written


@pytest.mark.parametrize("config, original, factor", [
    ({"model_type": "qwen2", "hidden_size": 3584, "num_attention_heads": 28, "num_hidden_layers": 2,
      "max_position_embeddings": 32768, "rope_theta": 1e6}, 32768, 4.0),
    ({"model_type": "qwen3", "hidden_size": 4096, "num_attention_heads": 32, "head_dim": 128, "num_hidden_layers": 2,
      "max_position_embeddings": 40960, "rope_theta": 1e6}, 32768, 4.0),
])
def test_qwen_yarn_recipes(config, original, factor):
    start = extension_base(config)
    recipes = extension.shipped_recipes(config, start)
    assert len(recipes) == 1
    block = recipes[0].patch(start, 131072)["rope_scaling"]
    assert (block["rope_type"], block["factor"], block["original_max_position_embeddings"]) == ("yarn", factor, original)
    assert block["attention_factor"] == pytest.approx(0.1 * math.log(factor) + 1)


def test_train_length_sets_l0():
    mistral = {"model_type": "mistral", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 2,
               "max_position_embeddings": 32768, "rope_theta": 10000.0, "sliding_window": 4096}
    start = extension_base(mistral, train_length="8192")
    assert start.pretraining == 8192 and start.factor(65536) == 8.0
    yarn = candidate_patches(start, 65536, base_for_target=None)["yarn"]["rope_scaling"]
    assert yarn["original_max_position_embeddings"] == 8192 and yarn["factor"] == 8.0
    with pytest.raises(ConfigError, match="train_length"):
        extension_base(mistral, train_length=65536)


def test_pick_is_checked_before_anything_is_measured(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("measured before the pick was checked")

    monkeypatch.setattr(extension, "_measure", refuse)
    with pytest.raises(ConfigError, match="longrope is not among"):
        extension_report(LLAMA3, 131072, pick="longrope")
    with pytest.raises(ConfigError, match="LongRoPE"):
        extension_report(LLAMA3, 131072, method="longrope", factor=4)
    with pytest.raises(ConfigError, match="hf_config"):
        extension_report(None, 8192)


@pytest.mark.parametrize("yaml_text, words", [
    ("hf_config: {a: 1}\ntarget: 8192\n", "hf_config: expected one value, got a mapping"),
    ("hf_config: [a, b]\ntarget: 8192\n", "hf_config: expected one value, got a list"),
    ("target: {n: 1}\n", "target: expected one value"),
])
def test_a_mapping_where_a_value_goes(invoke, tmp_path, yaml_text, words):
    path = tmp_path / "options.yaml"
    path.write_text(yaml_text)
    result = invoke("extend", "--config", str(path))
    assert result.exit_code == 2 and words in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_billion_layers_is_refused_before_the_plan(invoke, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**LLAMA3, "num_hidden_layers": 1e9}))
    result = invoke("extend", "--hf-config", str(path), "--target", "16384")
    assert result.exit_code == 2 and "num_hidden_layers" in result.stderr


def test_set_gives_a_recipe_on_the_command_line(invoke, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(LLAMA3))
    result = invoke("extend", "--hf-config", str(path), "--target", "131072", "--set", "method=llama3", "--set", "factor=8",
                    "--json")
    assert result.exit_code == 0, result.output
    given = [c for c in json.loads(result.stdout)["candidates"] if c["origin"] == "given"]
    assert len(given) == 1 and given[0]["config_patch"]["rope_scaling"]["factor"] == 8.0
    wrong = invoke("extend", "--hf-config", str(path), "--target", "131072", "--set", "factr=8")
    assert wrong.exit_code == 2 and "factr" in wrong.stderr


def test_the_table_says_what_the_numbers_are(invoke, tmp_path):
    from typer.testing import CliRunner

    from pecli.cli import app

    path = tmp_path / "config.json"
    path.write_text(json.dumps(LLAMA3))
    runner = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "80"})
    result = runner.invoke(app, ["extend", "--hf-config", str(path), "--target", "1e5", "--method", "llama3",
                                 "--factor", "8"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "trained on 8,192, serves 8,192 (max_position_embeddings) → 100,000" in " ".join(result.stdout.split())
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    assert np.isfinite(json.loads(invoke("extend", "--hf-config", str(path), "--target", "1e5", "--json").stdout)[
        "candidates"][0]["measures"]["cost"])
