"""The logit scale of each layer group: the factor on q·k/√d that position settings add besides cos/sin.

Known values are worked out by hand from the model code in transformers 5.24.0 (``yarn_get_mscale``,
``_compute_yarn_parameters``, ``Llama4TextAttention``, ``get_llama_4_attn_scale``), and the attention
modules' own softmax scales are held against ``tests/fixtures/models/logit/scales.json`` (made by its
``generate.py``: each attention module's ``scaling`` with the config's RoPE scaling, over the same without).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from pecli.models.families.from_config import plan_of

ROOT = Path(__file__).parent.parent
SCALES = json.loads((ROOT / "tests" / "fixtures" / "models" / "logit" / "scales.json").read_text())["cases"]


def config_of(case: str) -> dict:
    kind, name = case.split(":")
    if kind == "published":
        return json.loads((ROOT / "sample_configs" / "hf" / f"{name}.json").read_text())
    return json.loads((ROOT / "tests" / "fixtures" / "models" / "rope" / f"{name}.json").read_text())["config"]


@pytest.mark.parametrize("case", sorted(c for c in SCALES if SCALES[c]["softmax_ratio"]))
def test_the_attention_side_factor_equals_the_attention_modules(case):
    plan = plan_of(config_of(case), case)
    (expected,) = SCALES[case]["softmax_ratio"]  # one value over every layer
    for group in plan.groups:
        if group.options is not None:
            assert group.attention_scale.factor == pytest.approx(expected, rel=1e-9), group.name


def test_the_fixture_covers_the_scaled_models():
    assert SCALES["published:deepseek-ai--deepseek-v3"]["softmax_ratio"] != [1.0]
    assert len(SCALES) >= 10


def sample(name: str) -> dict:
    return json.loads((ROOT / "sample_configs" / "hf" / f"{name}.json").read_text())


def test_deepseek_v3_is_its_softmax_factor_mscale_squared():
    # YaRN ×40 with mscale = mscale_all_dim = 1: cos/sin carry mscale(40, 1) / mscale(40, 1) = 1, the softmax
    # scale mscale(40, 1)² with mscale(s, m) = 0.1·m·ln s + 1.
    group = plan_of(sample("deepseek-ai--deepseek-v3"), "v3").single
    assert group.logit_scale.constant
    assert group.logit_scale.factor == pytest.approx((0.1 * math.log(40) + 1) ** 2, rel=1e-12)
    assert group.logit_scale.factor == pytest.approx(1.8738542, rel=1e-7)


def test_yarn_gives_the_square_of_its_attention_factor():
    # Qwen2.5 with YaRN ×4 over 32,768: cos and sin are multiplied by 0.1·ln 4 + 1 (q and k both).
    group = plan_of(sample("qwen--qwen2.5-7b-instruct-yarn"), "qwen").single
    assert group.logit_scale.factor == pytest.approx((0.1 * math.log(4) + 1) ** 2, rel=1e-12)
    assert group.context == 131072  # factor × original, where the model card says to serve it


def test_llama4_nope_layers_give_the_temperature_rule_and_its_values():
    plan = plan_of(sample("meta-llama--llama-4-scout-17b-16e-instruct"), "scout")
    nope, rope = plan.group_named("nope"), plan.group_named("chunked_attention")
    assert rope.logit_scale.factor == 1 and rope.logit_scale.constant
    values = nope.logit_scale.at([0, 8190, 8191, 16383, 131071])
    # 1 + 0.1·ln(1 + ⌊(p + 1) / 8192⌋): 1 below p = 8191, then 1 + 0.1 ln 2, 1 + 0.1 ln 3, 1 + 0.1 ln 17
    np.testing.assert_allclose(values, [1, 1, 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(3), 1 + 0.1 * math.log(17)],
                               rtol=1e-12)
    document = nope.logit_scale.to_json(10485760)
    assert set(document["at"]) == {"1", "8192", "131072", "10485760"} and "8192" in document["rule"]


def test_ministral3_beta_rule_over_its_yarn_factor():
    group = plan_of({"model_type": "ministral3"}, "ministral3").single
    # Ministral3's default block: YaRN ×16 over 16,384 with β = 0.1 (llama_4_scaling_beta)
    assert group.logit_scale.rule == "llama4_beta"
    np.testing.assert_allclose(group.logit_scale.at([16383, 16384]) / group.logit_scale.factor,
                               [1.0, 1 + 0.1 * math.log(2)], rtol=1e-12)


def test_the_command_line_carries_it(invoke, tmp_path):
    config = ROOT / "sample_configs" / "hf" / "deepseek-ai--deepseek-v3.json"
    result = invoke("wavelengths", "--hf-config", config, "--context", "4096", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["logit_scale"] == pytest.approx(1.8738542, rel=1e-7)
    result = invoke("inspect", "config", "--hf-config", config, "--json")
    assert json.loads(result.stdout)["groups"][0]["logit_scale"] == pytest.approx(1.8738542, rel=1e-7)
    out = tmp_path / "s.npz"
    scout = ROOT / "sample_configs" / "hf" / "meta-llama--llama-4-scout-17b-16e-instruct.json"
    result = invoke("encode", "--hf-config", scout, "--logit-scale", "-L", "16384", "-o", out)
    assert result.exit_code == 0, result.stderr
    with np.load(out) as archive:
        assert archive["nope/logit_scale"][8191] == pytest.approx(1 + 0.1 * math.log(2))
        assert (archive["chunked_attention/logit_scale"] == 1).all()
    result = invoke("encode", "--logit-scale", "-o", tmp_path / "x.npy")
    assert result.exit_code == 2 and "--hf-config" in result.stderr


def test_qwen_v1_logn_scale_past_its_training_length():
    # Qwen-7B's config.json (remote code): queries past seq_length 8,192 scaled by log_8192(p + 1).
    config = {"model_type": "qwen", "hidden_size": 4096, "kv_channels": 128, "num_attention_heads": 32,
              "num_hidden_layers": 32, "max_position_embeddings": 8192, "seq_length": 8192, "rotary_emb_base": 10000,
              "rotary_pct": 1.0, "use_dynamic_ntk": True, "use_logn_attn": True}
    plan = plan_of(config, "qwen-7b")
    scale = plan.single.logit_scale
    np.testing.assert_allclose(scale.at([0, 8191, 16383, 65535]), [1, 1, 14 / 13, 16 / 13], rtol=1e-12)
    assert any("use_dynamic_ntk" in warning for warning in plan.warnings)
    assert plan.single.options["dim"] == 128 and plan.single.options["base"] == 10000


def test_relativity_carries_the_query_scale(invoke, tmp_path):
    # Qwen (v1) with log-n past seq_length 64: S(m, m) = |q|² · log_64(m + 1) past m = 63, so the score at
    # Δ = 0 ranges over [|q|², |q|² · log_64 256] = [64, 85.33] for a 64-component reference q of ones;
    # within 64 positions it is relative.
    config = tmp_path / "qwen.json"
    config.write_text(json.dumps({"model_type": "qwen", "hidden_size": 256, "kv_channels": 64, "num_attention_heads": 4,
                                  "num_hidden_layers": 2, "max_position_embeddings": 64, "seq_length": 64,
                                  "rotary_emb_base": 10000, "rotary_pct": 1.0, "use_logn_attn": True}))
    result = invoke("check", "relativity", "--hf-config", config, "--length", "256", "--json")
    assert result.exit_code == 1, result.stderr
    row = next(r for r in json.loads(result.stdout)["results"][0]["table"] if r["distance"] == 0)
    assert row["min"] == pytest.approx(64.0) and row["max"] == pytest.approx(64 * 4 / 3)
    assert invoke("check", "relativity", "--hf-config", config, "--length", "64").exit_code == 0
    # DeepSeek-V3's constant factor scales every score by mscale(40, 1)² and keeps the verdict
    v3 = ROOT / "sample_configs" / "hf" / "deepseek-ai--deepseek-v3.json"
    scaled = json.loads(invoke("check", "relativity", "--hf-config", v3, "--length", "64", "--json").stdout)["results"][0]
    plain = json.loads(invoke("check", "relativity", "--scheme", "rope", "--dim", "64", "--layout", "interleaved",
                              "--length", "64", "--json").stdout)["results"][0]
    assert scaled["verdict"] == "pass"
    assert scaled["figures"]["score_scale"] == pytest.approx(plain["figures"]["score_scale"] * (0.1 * math.log(40) + 1) ** 2)


def test_the_logit_scale_file_covers_the_model_context_not_a_chunk(invoke, tmp_path):
    # Llama 4 with a 20,000-token context and 8,192-token chunks: without --length the file holds every
    # position of the context (not the chunk the chunked group is analysed over), so the NoPE rule's
    # second step, 1 + 0.1 ln 3 from p = 16,383 on, is in it.
    config = tmp_path / "llama4.json"
    config.write_text(json.dumps({"model_type": "llama4_text", "max_position_embeddings": 20000}))
    out = tmp_path / "s.npz"
    result = invoke("encode", "--hf-config", config, "--logit-scale", "-o", out)
    assert result.exit_code == 0, result.stderr
    with np.load(out) as archive:
        nope = archive["nope/logit_scale"]
        assert nope.shape == (20000,) and archive["chunked_attention/logit_scale"].shape == (20000,)
        assert nope[16383] == pytest.approx(1 + 0.1 * math.log(3)) and nope[16382] == pytest.approx(1 + 0.1 * math.log(2))


SOFTMAX = json.loads((ROOT / "tests" / "fixtures" / "models" / "logit" / "softmax.json").read_text())["cases"]


def whole_config(case: str) -> dict:
    kind, name = case.split(":")
    if kind == "published":
        return sample(name)
    for folder in ("rope", "other"):
        path = ROOT / "tests" / "fixtures" / "models" / folder / f"{name}.json"
        if path.exists():
            return json.loads(path.read_text())["config"]
    raise FileNotFoundError(case)


def test_every_groups_softmax_scale_is_its_attention_modules():
    """Each layer's self.scaling in transformers (softmax.json, generate_softmax.py) is the group's softmax
    scale times its position part, or pecli says it does not know it; never another number."""
    from pecli.errors import ConfigError
    from pecli.models.logit_scale import UNKNOWN_SOFTMAX_TYPES

    checked = 0
    for case, found in SOFTMAX.items():
        try:
            plan = plan_of(whole_config(case), case)
        except ConfigError:  # a model pecli refuses to read (said in one line)
            continue
        for group in plan.groups:
            for layer in group.layers:
                expected = found["scaling"][layer] if layer < len(found["scaling"]) else None
                if expected is None:  # no softmax attention in that layer (a linear-attention or recurrent block)
                    continue
                if group.softmax.value is None:
                    assert found["model_type"] in UNKNOWN_SOFTMAX_TYPES, case
                    continue
                whole = group.softmax.value * group.softmax_position_part
                assert whole == pytest.approx(expected, rel=1e-9), (case, group.name, layer, group.softmax)
                checked += 1
    assert checked > 3000


def test_gemma3_27b_tells_its_window_and_its_softmax_scale(invoke):
    # Gemma3Attention: self.scaling = query_pre_attn_scalar ** -0.5 = 168^-0.5, 0.873 of 1/√128; its
    # sliding layers attend to sliding_window = 1,024 tokens.
    path = ROOT / "sample_configs" / "hf" / "google--gemma-3-27b-it.json"
    result = invoke("inspect", "config", "--hf-config", path)
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "attention: a sliding window of 1,024 tokens (sliding_window)" in text
    assert "softmax scale (the attention's scaling): 0.07715 = query_pre_attn_scalar 168^-0.5 (0.8729 × 1/√128)" in text
    document = json.loads(invoke("inspect", "config", "--hf-config", path, "--json").stdout)
    sliding, full = document["groups"]
    assert sliding["window"] == {"key": "sliding_window", "tokens": 1024} and full["window"] is None
    assert full["softmax_scale"]["value"] == pytest.approx(168 ** -0.5, rel=1e-12)
    assert full["softmax_scale"]["value"] * math.sqrt(128) == pytest.approx(0.87287, rel=1e-5)
    assert full["softmax_scale"]["from"] == "query_pre_attn_scalar 168^-0.5"


def test_wavelengths_names_the_key_its_training_length_comes_from(invoke):
    # Gemma 3 pre-trained at 32K; its config says max_position_embeddings 131,072, which is all pecli knows
    path = ROOT / "sample_configs" / "hf" / "google--gemma-3-27b-it.json"
    result = invoke("wavelengths", "--hf-config", path, "--layer", "5")
    assert "training length T = 131,072 (max_position_embeddings;" in " ".join(result.stdout.split())
    llama = invoke("wavelengths", "--hf-config", ROOT / "sample_configs" / "hf" / "meta-llama--llama-3.1-8b.json", "--json")
    assert json.loads(llama.stdout)["train_length_from"] == "original_max_position_embeddings"
