"""Model position plans: every layer group of a config.json, with values worked out by hand.

Configs are written here from the public values of each model (Gemma-3-4B, Command R, Llama 4 Scout,
ModernBERT-base, Cohere2, SmolLM3, DeepSeek-V3); each expected frequency is derived in a comment.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pecli.config import resolve
from pecli.errors import ConfigError
from pecli.models.families.from_config import plan_of
from pecli.models.families.table import FAMILIES

GEMMA3 = {"model_type": "gemma3_text", "hidden_size": 2560, "num_attention_heads": 8, "head_dim": 256,
          "num_hidden_layers": 34, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
          "rope_scaling": {"rope_type": "linear", "factor": 8.0}, "sliding_window_pattern": 6,
          "max_position_embeddings": 131072}
#: The same model as transformers 5 saves it: rope_parameters per layer type, and layer_types.
GEMMA3_V5 = {"model_type": "gemma3_text", "hidden_size": 2560, "num_attention_heads": 8, "head_dim": 256,
             "num_hidden_layers": 34, "max_position_embeddings": 131072,
             "layer_types": ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(34)],
             "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
                                 "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}}
COMMAND_R = {"model_type": "cohere", "hidden_size": 8192, "num_attention_heads": 64, "num_hidden_layers": 40,
             "rope_theta": 8000000.0, "max_position_embeddings": 131072}
LLAMA4 = {"model_type": "llama4_text", "hidden_size": 5120, "num_attention_heads": 40, "head_dim": 128,
          "num_hidden_layers": 48, "rope_theta": 500000.0, "max_position_embeddings": 10485760,
          "rope_scaling": {"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0, "high_freq_factor": 1.0,
                           "original_max_position_embeddings": 8192}}
MODERNBERT = {"model_type": "modernbert", "hidden_size": 768, "num_attention_heads": 12, "num_hidden_layers": 22,
              "global_rope_theta": 160000.0, "local_rope_theta": 10000.0, "global_attn_every_n_layers": 3,
              "max_position_embeddings": 8192}


def write(tmp_path, config, name="config.json"):
    path = tmp_path / name
    path.write_text(json.dumps(config))
    return str(path)


def test_gemma3_sliding_and_full_layers(invoke, tmp_path):
    # Layer i is full attention when (i + 1) % 6 == 0: 5, 11, 17, 23, 29; the other 29 slide.
    # Pair 127 of 128 (d = 256): sliding 10000^(-254/256) = 1.0746e-4; full 1e6^(-254/256) / 8 = 1.3925e-7.
    for config in (GEMMA3, GEMMA3_V5):
        result = invoke("wavelengths", "--hf-config", write(tmp_path, config), "--json")
        assert result.exit_code == 0, result.stderr
        groups = {g["name"]: g for g in json.loads(result.stdout)["layer_groups"]}
        assert groups["full_attention"]["layers"] == [5, 11, 17, 23, 29]
        assert len(groups["sliding_attention"]["layers"]) == 29
        assert math.isclose(groups["sliding_attention"]["pairs"][127]["inv_freq"], 10000 ** (-254 / 256), rel_tol=1e-12)
        assert math.isclose(groups["full_attention"]["pairs"][127]["inv_freq"], 1e6 ** (-254 / 256) / 8, rel_tol=1e-12)


def test_a_layer_selects_its_group(invoke, tmp_path):
    path = write(tmp_path, GEMMA3)
    full = json.loads(invoke("wavelengths", "--hf-config", path, "--layer", "11", "--json").stdout)
    sliding = json.loads(invoke("wavelengths", "--hf-config", path, "--layer-group", "sliding_attention", "--json").stdout)
    assert (full["params"]["base"], full["params"]["scaling"]) == (1e6, "linear")
    assert (sliding["params"]["base"], sliding["params"]["scaling"]) == (10000.0, "none")


def test_command_r_is_interleaved(invoke, tmp_path):
    # Command R applies cos/sin with repeat_interleave: at position 1 the cos cache is
    # [cos 1, cos 1, cos θ_1, cos θ_1, …] with θ_1 = 8e6^(-2/128) = 0.78006: cos 0.5403, then 0.7109.
    out = tmp_path / "x.npz"
    result = invoke("encode", "--hf-config", write(tmp_path, COMMAND_R), "-L", "2", "-o", str(out), "--quiet")
    assert result.exit_code == 0, result.stderr
    cos = np.load(out)["cos"][1]
    theta1 = 8e6 ** (-2 / 128)
    np.testing.assert_allclose(cos[:4], [math.cos(1), math.cos(1), math.cos(theta1), math.cos(theta1)], rtol=1e-12)
    assert round(cos[2], 4) == 0.7109


def test_llama4_nope_layers_and_equal_band_edges(invoke, tmp_path):
    # no_rope_layers absent: every 4th layer (3, 7, …, 47) applies no RoPE; low = high = 1 is valid.
    path = write(tmp_path, LLAMA4)
    plan = json.loads(invoke("inspect", "config", "--hf-config", path, "--json").stdout)
    nope = next(g for g in plan["groups"] if g["name"] == "nope")
    assert nope["layers"] == list(range(3, 48, 4)) and nope["scheme"] == "none"
    rope = next(g for g in plan["groups"] if g["name"] != "nope")
    assert rope["options"]["layout"] == "interleaved"
    none = invoke("wavelengths", "--hf-config", path, "--layer", "3", "--json")
    assert none.exit_code == 0 and json.loads(none.stdout)["scheme"] == "none" and json.loads(none.stdout)["pairs"] == []
    refused = invoke("check", "uniqueness", "--hf-config", path, "--layer", "7")
    assert refused.exit_code == 2 and "apply no position encoding" in refused.stderr


def test_smollm3_explicit_no_rope_layers(tmp_path):
    config = {"model_type": "smollm3", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 4,
              "rope_theta": 5e6, "no_rope_layers": [1, 0, 1, 1]}
    plan = plan_of(config, "smollm3.json")
    assert [(g.name, g.layers) for g in plan.groups] == [("all", (0, 2, 3)), ("nope", (1,))]


def test_cohere2_full_attention_layers_have_no_rope():
    config = {"model_type": "cohere2", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 8,
              "rope_theta": 50000.0, "sliding_window_pattern": 4, "sliding_window": 4096}
    plan = plan_of(config, "cohere2.json")
    assert [(g.name, g.layers) for g in plan.groups] == [("sliding_attention", (0, 1, 2, 4, 5, 6)), ("nope", (3, 7))]
    assert plan.groups[0].options["layout"] == "interleaved"
    # Without a sliding window the attention rotates in every layer (RoPE where sliding_window is not None).
    plan = plan_of({**config, "sliding_window": None}, "cohere2.json")
    assert [g.name for g in plan.groups] == ["sliding_attention+full_attention"]


def test_modernbert_global_and_local_theta():
    # Layer i is global when i % 3 == 0 (0, 3, …, 21): base 160,000; the others local, 10,000. d = 768 / 12 = 64.
    plan = plan_of(MODERNBERT, "modernbert.json")
    groups = {g.name: g for g in plan.groups}
    assert groups["full_attention"].layers == tuple(range(0, 22, 3))
    assert (groups["full_attention"].options["base"], groups["sliding_attention"].options["base"]) == (160000.0, 10000.0)
    assert groups["full_attention"].options["dim"] == 64


def test_deepseek_v3_rotates_qk_rope_head_dim_interleaved():
    config = {"model_type": "deepseek_v3", "hidden_size": 7168, "num_attention_heads": 128, "num_hidden_layers": 61,
              "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "head_dim": 64, "rope_theta": 10000.0}
    options = plan_of(config, "v3.json").single.options
    assert (options["dim"], options["layout"]) == (64, "interleaved")
    assert plan_of({**config, "rope_interleave": False}, "v3.json").single.options["layout"] == "half"


def test_merged_layer_types_answer_to_either_name():
    config = {"model_type": "qwen2", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 3,
              "rope_theta": 1e6, "layer_types": ["sliding_attention", "full_attention", "full_attention"]}
    plan = plan_of(config, "qwen2.json")
    assert [g.name for g in plan.groups] == ["sliding_attention+full_attention"]
    assert plan.select(group="full_attention").single.layers == (0, 1, 2)


def test_unknown_model_type_reads_generic_keys_and_says_so(invoke, tmp_path):
    path = write(tmp_path, {"model_type": "brand_new", "hidden_size": 64, "num_attention_heads": 4, "rope_theta": 1e6})
    result = invoke("wavelengths", "--hf-config", path, "--json")
    assert result.exit_code == 0
    assert "model_type brand_new is not in pecli's model table" in result.stderr and "rope_theta" in result.stderr
    assert json.loads(result.stdout)["params"]["base"] == 1e6


def test_dbrx_head_dim_from_d_model_and_n_heads():
    plan = plan_of({"model_type": "dbrx", "d_model": 6144, "n_heads": 48, "rope_theta": 5e5}, "dbrx.json")
    assert plan.single.options["dim"] == 128


@pytest.mark.parametrize(("config", "args", "named"), [
    ({"model_type": "gpt_neox", "hidden_size": 64, "num_attention_heads": 4, "rotary_pct": 0.25, "rotary_dim": 8}, (), ("partial_rotary_factor", "rotary_dim")),
    ({"model_type": "qwen2", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 3, "layer_types": ["full_attention"]}, (), ("layer_types", "num_hidden_layers")),
    ({**GEMMA3}, ("--layer", "34"), ("layer", "num_hidden_layers")),
    ({"model_type": "qwen3_next", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "rope_theta": 1e7,
      "layer_types": ["mamba", "full_attention"]}, (), ("layer_types", "mamba")),
])
def test_contradicting_keys_are_refused_naming_both(invoke, tmp_path, config, args, named):
    out = tmp_path / "x.npz"
    result = invoke("encode", "--hf-config", write(tmp_path, config), "-L", "4", "-o", str(out), *args)
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert all(name in result.stderr for name in named), result.stderr
    assert not out.exists()


def test_several_groups_need_a_choice_where_one_is_computed(invoke, tmp_path):
    result = invoke("inspect", "rope", "--hf-config", write(tmp_path, GEMMA3), "--weights", "w.safetensors")
    assert result.exit_code == 2 and "--layer N or --layer-group NAME" in result.stderr and "full_attention (layers 5, 11" in result.stderr
    result = invoke("wavelengths", "--layer", "2")
    assert result.exit_code == 2 and "give --hf-config or --model" in result.stderr


def test_encode_writes_every_group_under_its_name(invoke, tmp_path):
    out = tmp_path / "g.npz"
    result = invoke("encode", "--hf-config", write(tmp_path, GEMMA3), "-L", "3", "-o", str(out), "--quiet")
    assert result.exit_code == 0, result.stderr
    with np.load(out) as archive:  # an NpzFile holds its file open until closed
        arrays = dict(archive)
    np.testing.assert_allclose(arrays["sliding_attention/inv_freq"][127], 10000 ** (-254 / 256), rtol=1e-12)
    np.testing.assert_allclose(arrays["full_attention/inv_freq"][127], 1e6 ** (-254 / 256) / 8, rtol=1e-12)
    assert json.loads(str(arrays["metadata"]))["layer_groups"]["full_attention"]["layers"] == [5, 11, 17, 23, 29]
    single = tmp_path / "one.npz"
    assert invoke("encode", "--hf-config", write(tmp_path, GEMMA3), "--layer", "5", "-L", "3", "-o", str(single), "--quiet").exit_code == 0
    with np.load(single) as archive:
        np.testing.assert_array_equal(archive["cos"], arrays["full_attention/cos"])


def test_compare_has_a_row_per_group(invoke, tmp_path):
    result = invoke("compare", "--hf-config", write(tmp_path, LLAMA4, "l4.json"), "-L", "64", "--json")
    assert result.exit_code in (0, 1), result.stderr
    assert [row["label"] for row in json.loads(result.stdout)["rows"]] == ["l4"]


def test_resolve_in_the_library_takes_a_layer(tmp_path):
    spec = resolve({"hf_config": write(tmp_path, GEMMA3), "layer": 0})
    assert spec.scheme.base == 10000.0 and spec.plan.single.layers == (0,)


def test_every_family_names_its_keys():
    assert all(family.keys_note for family in FAMILIES)


def test_check_every_group_and_the_verdict_of_all(invoke, tmp_path):
    result = invoke("check", "uniqueness", "--hf-config", write(tmp_path, LLAMA4), "-L", "64", "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["passed"] is True
    # Llama4TextConfig makes its RoPE layers chunked_attention (attention_chunk_size 8192 by default)
    assert [(g["name"], g["passed"]) for g in document["layer_groups"]] == [("chunked_attention", True), ("nope", None)]



def test_a_positional_key_pecli_does_not_read_is_refused(invoke, tmp_path):
    # An unknown model type with a second base: reading rope_theta alone would be silently wrong.
    config = {"model_type": "brand_new", "hidden_size": 64, "num_attention_heads": 4, "rope_theta": 1e6,
              "rope_local_base_freq": 10000.0}
    result = invoke("wavelengths", "--hf-config", write(tmp_path, config))
    assert result.exit_code == 2 and result.stderr.startswith("pecli: error: rope_local_base_freq: is set in")
    assert "will not guess" in result.stderr


def test_layer_rope_theta_gives_each_layer_its_base():
    # Granite SWA lists a base per layer, over the block's rope_theta: layers 0 and 2 on 10,000, layer 1 on
    # 1e6, and 0 means no RoPE (layer 3), as its modeling code reads them.
    config = {"model_type": "granite_swa", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 4,
              "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"},
              "layer_rope_theta": [10000.0, 1000000.0, 10000.0, 0]}
    plan = plan_of(config, "granite.json")
    assert [(g.layers, None if g.options is None else g.options["base"]) for g in plan.groups] == [
        ((0, 2), 10000.0), ((1,), 1000000.0), ((3,), None)]


def test_falcon_rw_with_the_default_rope_block_of_transformers_5_is_alibi():
    config = {"model_type": "falcon", "alibi": True, "hidden_size": 64, "num_attention_heads": 4,
              "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}}
    assert plan_of(config, "falcon.json").single.options == {"scheme": "alibi", "heads": 4, "slope_dtype": "bfloat16"}


def test_a_learned_table_needs_its_checkpoint_through_every_door(invoke, tmp_path):
    import pecli

    gpt2 = {"model_type": "gpt2", "n_embd": 256, "n_head": 4, "n_layer": 2, "n_positions": 1024}
    path = write(tmp_path, gpt2, "gpt2.json")
    result = invoke("compare", "--hf-config", path, "-L", "64")
    assert result.exit_code == 2 and "--weights" in result.stderr
    with pytest.raises(ConfigError, match="--weights"):
        pecli.model_scheme(gpt2)


def test_a_per_type_block_keeps_its_own_base_over_a_top_level_one():
    # transformers' standardize_rope_params fills a block's rope_theta only where it has none.
    config = {**GEMMA3_V5, "rope_theta": 1000000.0}
    groups = {g.name: g.options["base"] for g in plan_of(config, "g3.json").groups}
    assert groups == {"sliding_attention": 10000.0, "full_attention": 1000000.0}


def test_bert_tables_are_absolute_and_relative_keys_are_refused():
    bert = {"model_type": "bert", "hidden_size": 768, "num_attention_heads": 12, "num_hidden_layers": 12,
            "max_position_embeddings": 512, "position_embedding_type": "absolute"}
    assert plan_of(bert, "bert.json").single.options == {"scheme": "learned"}
    with pytest.raises(ConfigError) as error:
        plan_of({**bert, "position_embedding_type": "relative_key"}, "bert.json")
    assert error.value.key == "position_embedding_type"


def test_per_layer_keys_without_a_layer_count_or_unknown_per_layer_keys_are_refused():
    # (an unknown model type: a known one has its class's num_hidden_layers)
    base = {"model_type": "brand_new", "hidden_size": 64, "num_attention_heads": 4, "rope_theta": 1e6}
    with pytest.raises(ConfigError, match="does not say how many layers"):
        plan_of({**base, "per_layer_config": {"1": {"rope_theta": 5e5}}}, "c.json")
    with pytest.raises(ConfigError, match="use_rope"):
        plan_of({**base, "num_hidden_layers": 2, "per_layer_config": {"1": {"use_rope": False}}}, "c.json")
    # layer_types alone give the count
    plan = plan_of({**GEMMA3, "num_hidden_layers": None, "layer_types": GEMMA3_V5["layer_types"]}, "g3.json")
    assert plan.num_layers == 34 and [g.name for g in plan.groups] == ["sliding_attention", "full_attention"]


def test_an_encoder_decoder_needs_a_layer_group(invoke, tmp_path):
    t5 = {"model_type": "t5", "d_model": 512, "num_heads": 8, "num_layers": 6, "num_decoder_layers": 6,
          "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128}
    path = write(tmp_path, t5, "t5.json")
    result = invoke("encode", "--hf-config", path, "--layer", "2", "-L", "4")
    assert result.exit_code == 2 and "--layer-group" in result.stderr
    plan = json.loads(invoke("inspect", "config", "--hf-config", path, "--json").stdout)
    assert [(g["name"], g["options"]["bidirectional"]) for g in plan["groups"]] == [("encoder", True), ("decoder", False)]


def test_parts_without_an_archive_is_refused_for_every_group(invoke, tmp_path):
    result = invoke("encode", "--hf-config", write(tmp_path, GEMMA3), "-L", "4", "--parts", "cos")
    assert result.exit_code == 2 and "--parts" in result.stderr


def test_mpt_alibi_bias_max_is_said_and_set_aside(invoke, tmp_path):
    # transformers' MptModel does not pass attn_config.alibi_bias_max to its ALiBi: the slopes stay the paper's.
    mpt = {"model_type": "mpt", "d_model": 256, "n_heads": 8, "n_layers": 2, "attn_config": {"alibi": True, "alibi_bias_max": 16}}
    result = invoke("encode", "--hf-config", write(tmp_path, mpt), "-L", "4", "--json")
    assert result.exit_code == 0 and "alibi_bias_max 16" in result.stderr
    assert json.loads(result.stdout)["params"]["heads"] == 8


@pytest.mark.parametrize("model_type", ["gptj", "codegen"])
def test_gptj_and_codegen_turn_at_base_10000_whatever_rope_theta_says(model_type):
    # transformers 5.24 modeling_gptj.py / modeling_codegen.py, create_sinusoidal_positions:
    # inv_freq = 1 / 10000 ** (arange(0, dim, 2) / dim), rotary_dim 64 of a 256-wide head
    config = {"model_type": model_type, "n_positions": 2048, "n_embd": 4096, "n_head": 16, "n_layer": 28,
              "rotary_dim": 64, "rope_theta": 50000, "rope_scaling": {"rope_type": "linear", "factor": 4.0}}
    plan = plan_of(config, "config.json")
    (group,) = plan.groups
    assert group.options["base"] == 10000.0 and "rope_scaling" not in group.options
    assert any("rope_theta" in w and "does not read it" in w for w in plan.warnings)


def test_a_group_holds_its_scheme_built_once_with_its_typed_scaling():
    """Llama 3.1's block (rope_type llama3, factor 8, low 1, high 4, original 8192) is the group's scaling as
    the scaling record reads it; the scheme is built once and kept when the plan is narrowed to a layer.
    θ_0 = 1 and the last pair's θ = 500000^(−126/128) ≈ 2.47e-6 is past the low-frequency wavelength
    8192 / 1 = 8192 tokens (2π/θ ≈ 2.5e6), so llama3 divides it by the factor 8."""
    block = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
             "original_max_position_embeddings": 8192}
    plan = plan_of({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 2,
                    "rope_theta": 500000.0, "rope_scaling": block, "max_position_embeddings": 131072}, "llama.json")
    group = plan.groups[0]
    scaling = group.encoding.rope_scaling
    assert scaling.rope_type == "llama3" and scaling.values == {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                       "original_max_position_embeddings": 8192}
    assert group.encoding.inv_freq[0] == 1.0
    assert math.isclose(group.encoding.inv_freq[-1], 500000.0 ** (-126 / 128) / 8, rel_tol=1e-12)
    assert plan.select(layer=1).groups[0].encoding is group.encoding
    nope = plan_of({"model_type": "cohere2"}, "cohere2.json").group_named("nope")  # its full-attention layers
    assert nope.encoding is None
