"""Where each setting of a layer group came from: the key, and whether the file, its config class's defaults,
the reader's default or the model's code gave it. The expected sources are read off the configs below by
hand: a key the config writes is a config key; one it leaves out is its class's default where
transformers' config class has one (``type_defaults.json``), else transformers' own default."""

from __future__ import annotations

import dataclasses

from pecli.models.families.from_config import plan_of
from pecli.models.plan import Origin, Source

CONFIG, CLASS, DEFAULT, CODE = Origin.CONFIG, Origin.CLASS_DEFAULT, Origin.DEFAULT, Origin.MODEL_CODE


def sources(group, setting):
    return [(s.key, s.origin) for s in group.sources_of(setting)]


def test_llama_31_settings_come_from_its_keys_and_its_class():
    plan = plan_of({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 2,
                    "rope_theta": 500000.0, "max_position_embeddings": 131072,
                    "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}},
                   "llama.json")
    group = plan.groups[0]
    assert sources(group, "base") == [("rope_theta", CONFIG)]
    assert sources(group, "rope_scaling") == [("rope_scaling", CONFIG)]
    assert sources(group, "max_position_embeddings") == [("max_position_embeddings", CONFIG)]
    assert sources(group, "dim") == [("head_dim", CLASS)]  # LlamaConfig derives head_dim = 4096 / 32
    assert sources(group, "layout") == [("model_type", CODE)]  # rotate_half, in LlamaAttention's code
    assert str(group.sources_of("base")[0]) == "base ← rope_theta (config key)"


def test_a_base_no_key_gives_is_the_default_and_gptjs_is_its_codes():
    generic = plan_of({"model_type": "not_a_type", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 1,
                       "rope_scaling": {"type": "linear", "factor": 2.0}}, "x.json").groups[0]
    assert sources(generic, "base") == [("rope_theta", DEFAULT)]  # transformers' 10000
    assert sources(generic, "dim") == [("hidden_size", CONFIG), ("num_attention_heads", CONFIG)]
    assert sources(generic, "layout") == [("model_type", DEFAULT)]  # a reading, not the model's code
    gptj = plan_of({"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": 64, "n_layer": 2,
                    "rope_theta": 5.0}, "gptj.json").groups[0]
    assert sources(gptj, "base") == [("model_type", CODE)]  # create_sinusoidal_positions: 10000 whatever the file says
    assert sources(gptj, "partial_rotary_factor") == [("rotary_dim", CONFIG)]


def test_gemma3s_legacy_base_and_its_class_base_per_layer_type():
    plan = plan_of({"model_type": "gemma3_text", "rope_local_base_freq": 20000.0, "num_hidden_layers": 12}, "gemma3.json")
    assert plan.group_named("sliding_attention").options["base"] == 20000.0
    assert sources(plan.group_named("sliding_attention"), "base") == [("rope_local_base_freq", CONFIG)]
    assert sources(plan.group_named("full_attention"), "base") == [("rope_theta", CLASS)]  # Gemma3TextConfig: 1e6


def test_t5_buckets_from_its_class():
    encoder = plan_of({"model_type": "t5", "relative_attention_max_distance": 64}, "t5.json").group_named("encoder")
    assert sources(encoder, "buckets") == [("relative_attention_num_buckets", CLASS)]
    assert sources(encoder, "max_distance") == [("relative_attention_max_distance", CONFIG)]


def test_a_setting_changed_after_it_was_read_claims_no_source():
    group = plan_of({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 1,
                     "rope_theta": 500000.0}, "llama.json").groups[0]
    changed = dataclasses.replace(group, options={**group.options, "base": 10000.0})  # an engine's rule, say
    assert changed.sources_of("base") == () and sources(changed, "dim") == sources(group, "dim")
    assert Source("base", "rope_theta", CONFIG, repr(500000.0)) in group.sources
