"""The logit scale of a model's layer group under the user's keys: the model's code's for the overridden
settings, not the model's own.

Known values by hand from transformers 5.24.0: ``DeepseekV3Attention`` multiplies its softmax scale by
``yarn_get_mscale(factor, mscale_all_dim)²`` with ``yarn_get_mscale(s, m) = 0.1·m·ln s + 1``, and
``_compute_yarn_parameters`` multiplies cos and sin by ``mscale(s, mscale) / mscale(s, mscale_all_dim)``.
DeepSeek-V3's block: yarn, factor 40, mscale 1, mscale_all_dim 1 (so cos/sin's factor is 1).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pecli.config import resolve

ROOT = Path(__file__).parent.parent
V3 = ROOT / "sample_configs" / "hf" / "deepseek-ai--deepseek-v3.json"


def mscale(s: float, m: float) -> float:
    return 0.1 * m * math.log(s) + 1.0


def test_wavelengths_shows_the_scale_under_the_users_factor(invoke):
    result = invoke("wavelengths", "--hf-config", V3, "--factor", "80", "--context", "4096")
    assert result.exit_code == 0, result.stderr
    assert "logit scale (q·k/√d is multiplied by): 2.068\n" in result.stdout  # (0.1·ln 80 + 1)² = 2.0684
    result = invoke("wavelengths", "--hf-config", V3, "--factor", "80", "--context", "4096", "--json")
    assert json.loads(result.stdout)["logit_scale"] == pytest.approx((0.1 * math.log(80) + 1) ** 2, rel=1e-12)


def test_the_base_alone_keeps_the_models_scale(invoke):
    result = invoke("wavelengths", "--hf-config", V3, "--base", "50000", "--context", "4096", "--json")
    assert json.loads(result.stdout)["logit_scale"] == pytest.approx((0.1 * math.log(40) + 1) ** 2, rel=1e-12)


def test_the_softmax_and_the_cos_sin_parts_follow_the_factor(tmp_path):
    # mscale 1, mscale_all_dim 0.5: softmax × mscale(80, 0.5)², cos and sin × mscale(80, 1) / mscale(80, 0.5)
    config = json.loads(V3.read_text())
    config["rope_scaling"] = {**config["rope_scaling"], "mscale_all_dim": 0.5}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    group = resolve({"hf_config": str(path), "factor": 80, "length": 64}).group
    assert group.attention_scale.factor == pytest.approx(mscale(80, 0.5) ** 2, rel=1e-12)
    assert group.encoding.attention_scaling == pytest.approx(mscale(80, 1) / mscale(80, 0.5), rel=1e-12)
    assert group.logit_scale.factor == pytest.approx(mscale(80, 1) ** 2, rel=1e-12)
    # the query scale of check and plot's scores follows: the softmax part
    spec = resolve({"hf_config": str(path), "factor": 80, "length": 64})
    assert spec.query_scale([0.0])[0] == pytest.approx(mscale(80, 0.5) ** 2, rel=1e-12)


def test_switching_the_scaling_off_leaves_no_factor():
    group = resolve({"hf_config": str(V3), "scaling": "none", "length": 64}).group
    assert group.logit_scale.is_unit


def test_a_model_without_an_attention_side_factor_is_unchanged(tmp_path):
    # Llama 3.1 under --factor 16: llama3 puts no factor on the logits, before or after
    config = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 2,
              "rope_theta": 500000.0, "max_position_embeddings": 131072,
              "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                               "original_max_position_embeddings": 8192}}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    spec = resolve({"hf_config": str(path), "factor": 16, "length": 64})
    assert spec.group.logit_scale.is_unit and spec.query_scale is None


def test_a_group_whose_rule_is_unknown_says_so():
    from pecli.models.group_change import user_changed

    plan = resolve({"hf_config": str(V3), "length": 64}).plan
    group = plan.single.replaced(attention_rule=None)
    changed = user_changed(group, {"rope_scaling": {**group.options["rope_scaling"], "factor": 80}})
    assert changed.logit_scale_unknown
    assert not user_changed(group, {"base": 5}).logit_scale_unknown  # the scaling unchanged


def test_the_context_follows_the_users_factor(invoke):
    # yarn's context is factor × original_max_position_embeddings: 80 × 4,096 = 327,680 (the model's: 163,840)
    spec = resolve({"hf_config": str(V3), "factor": 80})
    assert spec.length == 327_680 and spec.group.context == 327_680
    assert resolve({"hf_config": str(V3), "base": 50000}).length == 163_840
    result = invoke("wavelengths", "--hf-config", V3, "--factor", "80", "--json")
    assert json.loads(result.stdout)["context"] == 327_680
    assert "analysed over 327,680 positions" in result.stderr and "(80 × 4096)" in result.stderr
    # an explicit --context wins
    result = invoke("wavelengths", "--hf-config", V3, "--factor", "80", "--context", "4096", "--json")
    assert json.loads(result.stdout)["context"] == 4096


def test_encode_writes_the_scale_under_the_users_factor(invoke, tmp_path):
    out = tmp_path / "s.npy"
    result = invoke("encode", "--hf-config", V3, "--factor", "80", "--logit-scale", "-L", "8", "-o", out, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["layer_groups"][0]["logit_scale"] == pytest.approx(mscale(80, 1) ** 2, rel=1e-12)


def test_a_gguf_under_the_users_factor_says_its_scale_is_unknown(invoke, tmp_path):
    pytest.importorskip("gguf")
    from gguf_models import convert

    gguf_path, _ = convert(tmp_path, "deepseek_v3")
    result = invoke("wavelengths", "--gguf", gguf_path, "--context", "4096", "--factor", "80", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["logit_scale"] is None
    assert result.stderr.count("logit scale under your keys is not known to pecli") == 1  # one line
    result = invoke("wavelengths", "--gguf", gguf_path, "--context", "4096", "--factor", "80")
    assert "logit scale (" not in result.stdout  # never the model's 1.874 as if it were the user's
    # the base alone leaves the scaling, so the model's factor stands
    result = invoke("wavelengths", "--gguf", gguf_path, "--context", "4096", "--base", "5", "--json")
    assert json.loads(result.stdout)["logit_scale"] == pytest.approx(mscale(40, 1) ** 2, rel=1e-7)  # GGUF holds float32
    result = invoke("encode", "--gguf", gguf_path, "--factor", "80", "--logit-scale", "-L", "8", "-o", tmp_path / "s.npy")
    assert result.exit_code == 2 and not (tmp_path / "s.npy").exists()


def test_inspect_config_says_it_shows_the_plan_as_read(invoke):
    result = invoke("inspect", "config", "--hf-config", V3, "--factor", "80", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["groups"][0]["logit_scale"] == pytest.approx(mscale(40, 1) ** 2, rel=1e-12)
    assert "shows the model's plan as read; factor not applied" in result.stderr
    assert invoke("inspect", "config", "--hf-config", V3).stderr == ""


def test_ministral3s_beta_reads_the_users_original_length(tmp_path):
    # get_llama_4_attn_scale reads the RoPE block's original_max_position_embeddings: under the user's 8,192
    # (the class default: 16,384) the queries' factor 1 + 0.1·ln(1 + ⌊p / 8192⌋) steps up at p = 8,192
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "ministral3"}))
    group = resolve({"hf_config": str(path), "original_max_position": 8192, "length": 64}).group
    assert group.attention_scale.rule == "llama4_beta" and group.attention_scale.params == (0.1, 8192.0)
    # its block's mscale = mscale_all_dim = 1: cos and sin carry mscale(16, 1) / mscale(16, 1) = 1
    assert group.logit_scale.at([8191.0, 8192.0]).tolist() == pytest.approx([1.0, 1 + 0.1 * math.log(2)], rel=1e-12)
