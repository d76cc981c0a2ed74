"""Hostile input, round four: config reading (``--hf-config``, class defaults, YAML and ``--set``, extend's options).

What transformers does with each file is the reference, read in its own code (transformers 5.24.0 with
huggingface_hub 2.4.0, the versions of ``pecli/models/sources/type_defaults.json``): its config classes are strict
dataclasses, so ``AutoConfig.from_pretrained`` raises ``StrictDataclassFieldValidationError`` for an int
field given ``"8192"``, ``[8192]``, ``NaN``, ``8192.5`` or ``true``, for ``sliding_window: true``,
``alibi: "false"``, ``text_config: [1]``, ``attn_config: [1]``, a ``list[int]`` holding a bool or a string;
``validate_layer_type`` raises "`num_hidden_layers` (6) must be equal to the number of `layer_types` (600)";
``AutoConfig`` raises "Transformers does not recognize this architecture" for ``model_type`` 123 or true
(``[1]`` and ``{"a": 1}`` fail on hashing); ``standardize_rope_params`` fails on a per-layer-type block
that is a string. ``rope_theta: "500000"`` passes the class (``rope_parameters`` is an untyped dict) and
then fails the model: ``LlamaRotaryEmbedding`` computes ``"500000" ** tensor`` (TypeError), and a rotary
module reading ``partial_rotary_factor: "0.5"`` computes ``int(64 * "0.5")`` (ValueError). A base of 1 is
accepted (its validation reads no bound on ``rope_theta``): every pair gets 1 / 1^(2i/d) = 1.

Every refusal is exit 2, one line that names the key, no traceback, and no output file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import assert_refused

LLAMA = {"model_type": "llama", "num_hidden_layers": 6, "num_attention_heads": 4, "hidden_size": 256,
         "rope_theta": 10000.0, "max_position_embeddings": 8192}
TYPES = ["full_attention"] * 3 + ["sliding_attention"] * 3


def write(tmp_path: Path, config: dict | str, name: str = "c.json") -> Path:
    path = tmp_path / name
    path.write_text(config if isinstance(config, str) else json.dumps(config))
    return path


def refused_everywhere(run_main, tmp_path: Path, config: dict | str, *words: str) -> None:
    """``inspect config``, ``wavelengths`` and ``encode -o`` each refuse the config, and nothing is written."""
    write(tmp_path, config)
    assert_refused(run_main("inspect", "config", "--hf-config", "c.json"), *words)
    assert_refused(run_main("wavelengths", "--hf-config", "c.json"), *words)
    assert_refused(run_main("encode", "--hf-config", "c.json", "-L", "8", "-o", "out.npy"), *words)
    assert not (tmp_path / "out.npy").exists()


# -- layer_types: one entry per layer, as validate_layer_type holds them ---------------------------------
@pytest.mark.parametrize("count", [600, 7, 5])
def test_layer_types_of_another_length_than_the_layers_is_refused(run_main, tmp_path, count):
    refused_everywhere(run_main, tmp_path, {**LLAMA, "layer_types": ["full_attention"] * count},
                       f"layer_types: lists {count} layers but num_hidden_layers is 6")


def test_layer_types_without_a_layer_count_meets_the_class_default(run_main, tmp_path):
    # LlamaConfig's num_hidden_layers defaults to 32: five layer types are refused by transformers too
    config = {**LLAMA, "layer_types": ["full_attention"] * 5}
    del config["num_hidden_layers"]
    write(tmp_path, config)
    assert_refused(run_main("inspect", "config", "--hf-config", "c.json"), "lists 5 layers but num_hidden_layers is 32")


def test_llama4_no_rope_layers_are_one_per_layer_smollm3_reads_the_first(run_main, tmp_path):
    # Llama4TextConfig derives layer_types from no_rope_layers (validate_layer_type refuses 6 for 4 layers);
    # SmolLM3Config keeps the list as given and its layers read their own index.
    base = {"num_hidden_layers": 4, "num_attention_heads": 4, "hidden_size": 256, "no_rope_layers": [1, 1, 1, 0, 1, 1],
            "layer_types": ["full_attention"] * 4}
    refused_everywhere(run_main, tmp_path, {**base, "model_type": "llama4_text"}, "no_rope_layers")
    write(tmp_path, {**base, "model_type": "smollm3"})
    done = run_main("inspect", "config", "--hf-config", "c.json", "--json")
    assert done.returncode == 0, done.stderr
    groups = {g["name"]: g["layers"] for g in json.loads(done.stdout)["groups"]}
    assert groups == {"full_attention": [0, 1, 2], "nope": [3]}


def test_zamba2_layers_block_type_of_600_is_refused(run_main, tmp_path):
    config = {"model_type": "zamba2", "num_hidden_layers": 4, "num_attention_heads": 4, "hidden_size": 256,
              "layers_block_type": ["mamba"] * 600}
    write(tmp_path, config)
    assert_refused(run_main("inspect", "config", "--hf-config", "c.json"), "layers_block_type", "each of the 4 layers")


# -- what was exit 3 --------------------------------------------------------------------------------------
@pytest.mark.parametrize("extra, words", [
    ({"max_position_embeddings": float("nan")}, "max_position_embeddings in c.json must be an integer, got nan"),
    ({"max_position_embeddings": [8192]}, "max_position_embeddings in c.json must be an integer, got [8192]"),
    ({"max_position_embeddings": "8192"}, "max_position_embeddings in c.json must be an integer, got '8192' (a string"),
    ({"model_type": [1]}, "model_type in c.json must be a string"),
    ({"model_type": {"a": 1}}, "model_type in c.json must be a string"),
    ({"rope_scaling": {"rope_type": "yarn", "factor": float("nan"), "original_max_position_embeddings": 4096}},
     "factor: must be finite"),
    ({"rope_scaling": {"rope_type": "yarn", "factor": 1e308, "original_max_position_embeddings": 4096}},
     "factor: 1e308 × original_max_position_embeddings 4096 reaches inf tokens"),
    ({"_pecli_underived": {"head_dim": ["x"]}}, ("_pecli_underived in c.json", "pecli's own bookkeeping")),
    ({"_pecli_underived": 5}, "_pecli_underived"),
    ({"_pecli_moved": 5}, "_pecli_moved"),
    ({"text_config": {"_pecli_class_defaults": 1}}, "_pecli_class_defaults in text_config of c.json"),
    ({"model_type": "gemma3_text", "sliding_window_pattern": 0}, "sliding_window_pattern in c.json must be a positive integer"),
    ({"model_type": "gemma3_text", "sliding_window_pattern": "6"}, "sliding_window_pattern"),
    ({"model_type": "modernbert", "global_attn_every_n_layers": float("inf")}, "global_attn_every_n_layers"),
    ({"model_type": "mpt", "attn_config": [1]}, "attn_config in c.json must be a mapping"),
])
def test_what_was_an_internal_error_is_one_line(run_main, tmp_path, extra, words):
    refused_everywhere(run_main, tmp_path, {**LLAMA, **extra}, *(words if isinstance(words, tuple) else (words,)))


def test_an_integer_past_pythons_digit_limit_is_one_line(run_main, tmp_path):
    refused_everywhere(run_main, tmp_path, json.dumps(LLAMA)[:-1] + ', "rope_theta": ' + "9" * 5000 + "}",
                       "hf_config: c.json holds an integer of 5,000 digits")


def test_extend_set_of_100000_digits_is_one_line(run_main, tmp_path):
    write(tmp_path, LLAMA)
    digits = "9" * 100_000
    assert_refused(run_main("extend", "--hf-config", "c.json", "--target", "32768", "--set", f"beta_fast={digits}"),
                   "--set beta_fast holds an integer of 100,000 digits")
    done = run_main("extend", "--hf-config", "c.json", "--target", digits)
    assert_refused(done, "target:")
    assert len(done.stderr) < 200  # the value is quoted as an excerpt, not whole


# -- what was read quietly ----------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [123, 1.5, True])
def test_a_model_type_that_is_not_a_string_is_refused(run_main, tmp_path, value):
    refused_everywhere(run_main, tmp_path, {**LLAMA, "model_type": value}, "model_type in c.json must be a string",
                       "AutoConfig refuses it too")


@pytest.mark.parametrize("key, value", [("rope_theta", "500000"), ("partial_rotary_factor", "0.5"),
                                        ("rotary_emb_base", "10000"), ("rope_theta", True), ("rope_theta", 10**400)])
def test_a_number_key_that_is_not_a_number_is_refused(run_main, tmp_path, key, value):
    refused_everywhere(run_main, tmp_path, {**LLAMA, key: value}, f"{key} in c.json must be a number")


def test_a_number_inside_a_per_type_block_is_checked_too(run_main, tmp_path):
    config = {**LLAMA, "layer_types": TYPES, "rope_parameters": {
        "full_attention": {"rope_type": "default", "rope_theta": "1e6"},
        "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}}
    del config["rope_theta"]
    refused_everywhere(run_main, tmp_path, config, "rope_theta in rope_parameters.full_attention of c.json must be a number")


@pytest.mark.parametrize("block", ["x", [1], 5])
def test_a_per_layer_type_block_that_is_not_a_mapping_is_refused(run_main, tmp_path, block):
    blocks = {"full_attention": {"rope_type": "default", "rope_theta": 1e6}, "sliding_attention": block}
    words = "rope_parameters.sliding_attention in c.json must be a mapping"
    llama = {**LLAMA, "layer_types": TYPES, "rope_parameters": blocks}
    del llama["rope_theta"]
    refused_everywhere(run_main, tmp_path, llama, words)
    # Gemma 3's class builds its per-type blocks itself: the bad one was replaced by the default ("defaulted")
    refused_everywhere(run_main, tmp_path, {"model_type": "gemma3_text", "num_hidden_layers": 6, "rope_parameters": blocks},
                       words)


@pytest.mark.parametrize("extra, words", [
    ({"sliding_window": True, "layer_types": ["sliding_attention"] * 6}, "sliding_window in c.json must be an integer"),
    ({"model_type": "falcon", "alibi": "false"}, ("alibi in c.json must be true or false", "without quotes")),
    ({"model_type": "deepseek_v3", "qk_rope_head_dim": 64, "rope_interleave": "false"}, "rope_interleave"),
    ({"text_config": [1], "model_type": "llava"}, "text_config in c.json must be a mapping"),
    ({"model_type": "llama4_text", "no_rope_layers": ["1", "1", "1", "0", "1", "1"], "layer_types": ["full_attention"] * 6},
     "no_rope_layers in c.json"),
    ({"model_type": "mllama_text_model", "cross_attention_layers": [True, 3]}, "cross_attention_layers"),
    ({"model_type": "granite_swa", "layer_rope_theta": [False] + [1e4] * 5}, "layer_rope_theta in c.json"),
    ({"num_attention_heads": True}, "num_attention_heads in c.json must be a positive integer, got True (a boolean)"),
    ({"max_position_embeddings": True}, "max_position_embeddings in c.json must be an integer"),
    ({"head_dim": 64.5}, "head_dim in c.json must be a positive integer"),
    ({"per_layer_config": {"1": {"rope_theta": "x"}}}, "rope_theta in per_layer_config.1 of c.json"),
    ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": True}},
     "original_max_position_embeddings in rope_scaling of c.json"),
    ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 10**30}},
     "original_max_position_embeddings: must be <= 1099511627776"),
    ({"rope_scaling": {"rope_type": "linear", "factor": 1e200}}, "factor: 1e200 × max_position_embeddings 8192"),
    ({"rope_scaling": "yarn"}, "rope_scaling in c.json must be a mapping"),
    ({"layer_types": ["sliding_attention"] * 6, "sliding_window": -5}, "sliding_window in c.json must be an integer from 0"),
    ({"layer_types": ["chunked_attention"] * 6, "attention_chunk_size": 10**30}, "attention_chunk_size"),
    ({"model_type": "llama4_text", "layer_types": ["full_attention"] * 6, "floor_scale": float("inf")},
     "floor_scale in c.json must be a finite number"),
    ({"model_type": "llama4_text", "layer_types": ["full_attention"] * 6, "attn_scale": float("nan")}, "attn_scale"),
    ({"model_type": "ministral3", "rope_parameters": {"rope_type": "yarn", "factor": 4.0, "rope_theta": 1e6,
      "original_max_position_embeddings": 4096, "llama_4_scaling_beta": "0.1"}}, "llama_4_scaling_beta in rope_parameters"),
    ({"model_type": "x" * 100_000}, "at most 100 characters"),
    ({"per_layer_config": {"9" * 5000: {"rope_theta": 1e5}}}, "per_layer_config: has '999"),
    ({"thinker_config": {"text_config": "x"}, "model_type": "qwen2_5_omni"}, "text_config in thinker_config of c.json"),
    # the attention's own factor on q·kᵀ: a string was passed over for 1/√d, silently
    ({"model_type": "gemma3_text", "query_pre_attn_scalar": "168"}, "query_pre_attn_scalar in c.json must be a finite number above 0"),
    ({"model_type": "granite", "attention_multiplier": -0.5}, "attention_multiplier in c.json"),
    # transformers' find_correction_dim takes ln(L / (β·2π)) = ln 0; DeepSeek's softmax scale squares 0.1·m·ln s + 1
    ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096, "beta_fast": 1e308}},
     "beta_fast: 1e308 rotations × 2π overflows float64"),
    ({"model_type": "deepseek_v3", "qk_rope_head_dim": 64, "rope_scaling": {"rope_type": "yarn", "factor": 40.0,
      "mscale": 1.0, "mscale_all_dim": -1e308, "original_max_position_embeddings": 4096}}, "mscale_all_dim: -1e308 gives"),
])
def test_others_like_them_in_the_same_door(run_main, tmp_path, extra, words):
    refused_everywhere(run_main, tmp_path, {**LLAMA, **extra}, *(words if isinstance(words, tuple) else (words,)))
    assert len(run_main("inspect", "config", "--hf-config", "c.json").stderr) < 400  # values quoted as excerpts


def test_an_integer_is_a_truth_value_as_llama4_scout_ships_it(run_main, tmp_path):
    # Llama 4 Scout's config has attn_temperature_tuning 4: read as on (transformers 4 read it so)
    config = {"model_type": "llama4_text", "num_hidden_layers": 4, "num_attention_heads": 4, "hidden_size": 256,
              "layer_types": ["full_attention"] * 4, "attn_temperature_tuning": 4}
    write(tmp_path, config)
    assert run_main("inspect", "config", "--hf-config", "c.json").returncode == 0


# -- a base of 1: transformers accepts it; pecli computes it and says what it is ------------------------------
@pytest.mark.parametrize("base", [1, 1.0, 0.5])
def test_a_base_of_one_or_less_is_computed_with_a_warning(run_main, tmp_path, base):
    write(tmp_path, {**LLAMA, "rope_theta": base})
    done = run_main("wavelengths", "--hf-config", "c.json", "--json")
    assert done.returncode == 0, done.stderr
    assert "pecli: warning: a RoPE base of" in done.stderr and "transformers accepts it" in done.stderr
    pairs = json.loads(done.stdout)["pairs"]
    # θ_i = base^(−2i/64), i = 0 … 31 (by hand: 1 for every pair at base 1; 2^(2i/64) at base 0.5)
    expected = [float(base) ** (-2 * i / 64) for i in range(32)]
    assert [p["inv_freq"] for p in pairs] == pytest.approx(expected, rel=1e-12)


# -- YAML numbers ---------------------------------------------------------------------------------------------
def test_yaml_reads_exponent_floats_as_numbers():
    from pecli.config_files import parse_yaml

    # YAML 1.1 reads 1e6 and 1.5e3 as strings (it wants 1.0e+6); YAML 1.2 and JSON read numbers
    assert parse_yaml("[1e6, 1.5e3, -2e-3, .5e1, 1.0e+6, 1e, e5]", "t") == [1e6, 1500.0, -0.002, 5.0, 1e6, "1e", "e5"]


def test_a_yaml_block_takes_an_exponent_factor(run_main, tmp_path):
    write(tmp_path, LLAMA)
    done = run_main("wavelengths", "--hf-config", "c.json", "--set",
                    "rope_scaling={rope_type: linear, factor: 2e0}", "--json")
    assert done.returncode == 0, done.stderr


# -- the library ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("extra", [{"model_type": 123}, {"rope_theta": 10**5000}, {"layer_types": ["full_attention"] * 600},
                                   {"_pecli_underived": {}}, {1: 2}, {None: 2}, {"rope_scaling": {1: 2}},
                                   {"per_layer_config": {10**5000: {"rope_theta": 1e5}}},
                                   {"per_layer_config": {1.5: {"rope_theta": 1e5}}}])
def test_the_library_refuses_the_same(extra):
    import pecli
    from pecli.errors import ConfigError

    with pytest.raises(ConfigError):
        pecli.model_plan({**LLAMA, **extra})


# -- every key pecli reads, every hostile value: a ConfigError or a plan whose numbers can be read ------------
HOSTILE = [float("nan"), float("inf"), -1e308, -1, 0, 0.5, True, False, "x", "8", "false", [1], [], {"a": 1}, {},
           10**400, 2**63, 1e308, "", None]
BASES = {
    "llama": {**LLAMA, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048}},
    "gemma3_text": {"model_type": "gemma3_text", "num_hidden_layers": 6, "sliding_window": 512},
    "llama4_text": {"model_type": "llama4_text", "num_hidden_layers": 4, "num_attention_heads": 4, "hidden_size": 256,
                    "layer_types": ["chunked_attention"] * 3 + ["full_attention"], "attn_temperature_tuning": True},
    "qwen": {"model_type": "qwen", "num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 256, "kv_channels": 64,
             "use_logn_attn": True, "seq_length": 2048},
    "deepseek_v3": {"model_type": "deepseek_v3", "num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 256,
                    "qk_rope_head_dim": 64, "rope_scaling": {"rope_type": "yarn", "factor": 40.0, "mscale": 1.0,
                                                             "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096}},
    "qwen2_5_vl": {"model_type": "qwen2_5_vl", "num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 256,
                   "rope_scaling": {"type": "mrope", "mrope_section": [16, 8, 8]}, "vision_config": {"tokens_per_second": 2}},
    "t5": {"model_type": "t5", "num_layers": 2, "num_decoder_layers": 3},
    "bloom": {"model_type": "bloom", "n_head": 8, "n_layer": 2},
    "gpt_neox": {"model_type": "gpt_neox", "num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 256},
    "gptj": {"model_type": "gptj", "n_layer": 2, "n_head": 4, "n_embd": 256, "rotary_dim": 32},
    "modernbert": {"model_type": "modernbert", "num_hidden_layers": 6},
    "granite_swa": {"model_type": "granite_swa", "num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 256,
                    "layer_rope_theta": [1e4, 0]},
    "falcon": {"model_type": "falcon", "num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 256, "alibi": True},
}


@pytest.mark.filterwarnings("error")
def test_each_key_with_each_hostile_value_is_refused_or_read():
    from pecli.errors import ConfigError
    from pecli.models.key_types import KIND_OF
    from pecli.models.sources.config_json import plan_of_config

    keys = sorted(KIND_OF) + ["factor", "beta_fast", "original_max_position_embeddings", "rope_type"]
    for family, base in BASES.items():
        for key in keys:
            for value in HOSTILE:
                config = {**base, key: value}
                if key in ("factor", "beta_fast", "rope_type") or key == "original_max_position_embeddings" and family == "llama":
                    config = {**base, "rope_scaling": {**base.get("rope_scaling", {"rope_type": "linear", "factor": 2.0}),
                                                       key: value}}
                nested = {"model_type": "llava", "text_config": config}  # the same, as a multimodal model's text
                for form in (config, nested) if family == "llama" else (config,):
                    try:
                        plan = plan_of_config(form, "c.json")
                    except ConfigError:
                        continue
                    for group in plan.groups:  # what every door reads of a group, before any work
                        group.context, group.analysis_length, group.analysis_note, group.logit_scale, group.to_dict()


def test_an_integer_flag_is_read_by_its_truth(run_main, tmp_path):
    # DeepSeek's attention tests `if self.config.rope_interleave:`; 0 turns the interleave off as false does
    config = {"model_type": "deepseek_v3", "num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 256,
              "qk_rope_head_dim": 64}
    layouts = []
    for flag in (0, False, 1, None):
        write(tmp_path, {**config, "rope_interleave": flag})
        done = run_main("inspect", "config", "--hf-config", "c.json", "--json")
        assert done.returncode == 0, done.stderr
        layouts.append(json.loads(done.stdout)["groups"][0]["options"]["layout"])
    assert layouts == ["half", "half", "interleaved", "interleaved"]


def test_diff_of_two_qwen_vl_configs_compares_their_mrope_options(run_main, tmp_path):
    # it was exit 3: the RoPE comparison asked an mrope scheme for rope's attributes
    config = {"model_type": "qwen2_5_vl", "num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 256,
              "rope_scaling": {"type": "mrope", "mrope_section": [16, 8, 8]}}
    write(tmp_path, config, "a.json")
    write(tmp_path, {**config, "rope_scaling": {"type": "mrope", "mrope_section": [16, 12, 4]}}, "b.json")
    assert run_main("diff", "--hf-config", "a.json", "--hf-config", "a.json").returncode == 0
    done = run_main("diff", "--hf-config", "a.json", "--hf-config", "b.json", "--json")
    assert done.returncode == 1, done.stderr
    (found,) = json.loads(done.stdout)["differences"]
    assert (found["what"], found["new_value"], found["old_value"]) == ("mrope_section", [16, 12, 4], [16, 8, 8])
