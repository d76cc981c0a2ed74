"""The engines' serving rules (pecli.engines) against the engines' own code.

Sources, read for these expectations:
- vLLM, vllm/config/model.py ``_get_and_verify_max_len``: the derived max length is
  max_position_embeddings × factor for every rope_type but "su", "longrope" and "llama3"; for "yarn"
  original_max_position_embeddings × factor; "default" has no factor (×1).
- SGLang, python/sglang/srt/utils/hf_transformers_utils.py ``get_context_length``: max_position_embeddings
  × factor, unless the block has original_max_position_embeddings or rope_type "llama3".
- llama.cpp, common/arg.cpp help: ``--rope-scale N`` "RoPE context scaling factor, expands context by a
  factor of N"; ``--rope-freq-scale N`` "expands context by a factor of 1/N"; ``--yarn-orig-ctx N``
  "YaRN: original context size of model (default: 0 = model training context size)"; ``--rope-scaling
  {none,linear,yarn}``; llama3's and LongRoPE's factors are GGUF tensors written at conversion.
  src/llama-context.cpp: an unset type is the model's training type, type none forces the frequency
  scale to 1, an unset ext_factor is 1 for yarn and 0 otherwise; src/llama-model.cpp: a GGUF file
  without rope.scaling.type reads as linear; convert_hf_to_gguf.py writes no type for a model without a
  linear or yarn block (CommandR's class writes none).
- mlx-lm, mlx_lm/models/rope_utils.py ``initialize_rope``: default, linear, llama3, yarn, longrope
  (and a few model-specific types); anything else raises "Unsupported RoPE type".
"""

from __future__ import annotations

import json
import math

import pytest

from pecli.extend.patches import extension_base, method_patch
from pecli.engines import engine
from pecli.engines.llama_cpp import llama_cpp_settings
from pecli.engines.vllm import vllm_max_len


def serving_flags(name, base, patch, target, config=None):
    return engine(name).serving(base, patch, target, config)


def sglang_context_length(max_position_embeddings, block):
    from pecli.engines.sglang import sglang_context_length as derive

    return derive({"max_position_embeddings": max_position_embeddings, **({"rope_scaling": block} if block else {})})

#: Qwen2.5-7B's keys that matter here: trained and served at 32,768, base 1e6.
QWEN25 = {"model_type": "qwen2", "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
          "num_hidden_layers": 2, "max_position_embeddings": 32768, "rope_theta": 1000000.0}
LLAMA2 = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 2,
          "max_position_embeddings": 4096, "rope_theta": 10000.0}


def test_vllm_derives_the_length_as_its_config_code_does():
    linear = {"rope_type": "linear", "factor": 8.0}
    assert vllm_max_len(32768, linear) == 262144  # the linear patch served 8× too long
    assert vllm_max_len(4096, {"rope_type": "dynamic", "factor": 8.0}) == 32768
    assert vllm_max_len(131072, {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}) == 131072
    assert vllm_max_len(131072, {"rope_type": "llama3", "factor": 8.0}) == 131072
    assert vllm_max_len(131072, {"type": "longrope", "factor": 32.0}) == 131072
    assert vllm_max_len(8192, None) == 8192 and vllm_max_len(8192, {"rope_type": "default"}) == 8192


def test_sglang_derives_the_length_as_get_context_length_does():
    assert sglang_context_length(32768, {"rope_type": "linear", "factor": 8.0}) == 262144
    assert sglang_context_length(131072, {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}) == 131072
    assert sglang_context_length(131072, {"rope_type": "llama3", "factor": 8.0}) == 131072
    assert sglang_context_length(4096, None) == 4096


def test_llama_cpp_flags_read_as_llama_cpp_computes():
    def read(flags, config=LLAMA2, **kwargs):
        keys, served = llama_cpp_settings(flags, config, **kwargs)
        return keys["rope_theta"], keys["rope_scaling"], served

    # --rope-scale 4 alone on a Llama without scaling: its GGUF has no rope.scaling.type, read as linear,
    # so the frequency scale 1/4 applies: linear ×4
    assert read({"--rope-scale": "4"}) == (1e4, {"rope_type": "linear", "factor": 4.0}, 4096)
    assert read({"--rope-freq-scale": "0.25"})[1] == {"rope_type": "linear", "factor": 4.0}
    # the same flag on Command R, whose converter writes rope.scaling.type none: the scale is forced to 1
    cohere = {**LLAMA2, "model_type": "cohere"}
    assert read({"--rope-scale": "4"}, cohere) == (1e4, None, 4096)
    # --rope-scaling none wins over a scale; a base alone changes the base only
    assert read({"--rope-scaling": "none", "--rope-scale": "4"})[1] is None
    assert read({"--rope-freq-base": "1e6"})[:2] == (1e6, None)
    yarn = read({"--rope-scaling": "yarn", "--rope-scale": "4", "--yarn-orig-ctx": "32768", "--ctx-size": "131072"},
                QWEN25)
    assert yarn[0] == 1e6 and yarn[2] == 131072
    assert yarn[1] == {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768, "beta_fast": 32.0,
                       "beta_slow": 1.0, "attention_factor": pytest.approx(0.1 * math.log(4) + 1)}
    # --yarn-orig-ctx 0: the model's training context
    assert read({"--rope-scaling": "yarn", "--rope-scale": "2", "--yarn-orig-ctx": "0"}, training_context=8192)[1][
        "original_max_position_embeddings"] == 8192


def test_llama_cpp_takes_a_yarn_models_own_type_for_an_unset_type():
    qwen = {**QWEN25, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}
    # no flag: the file's yarn ×4 over 32,768; --rope-scale 2 alone: still yarn (the training type), now ×2
    assert llama_cpp_settings({}, qwen)[0]["rope_scaling"]["factor"] == 4.0
    block = llama_cpp_settings({"--rope-scale": "2"}, qwen)[0]["rope_scaling"]
    assert (block["rope_type"], block["factor"], block["original_max_position_embeddings"]) == ("yarn", 2.0, 32768)
    # --rope-scaling linear on it: ext_factor unset becomes 0, so no YaRN ramp and no attention factor
    assert llama_cpp_settings({"--rope-scaling": "linear"}, qwen)[0]["rope_scaling"] == {"rope_type": "linear", "factor": 4.0}


@pytest.mark.parametrize("flags, needle", [
    ({"--rope-scaling": "ntk"}, "--rope-scaling"),
    ({"--rope-scale": "0"}, "positive"), ({"--rope-frequency": "2"}, "not a llama.cpp RoPE flag"),
])
def test_llama_cpp_flags_refused(flags, needle):
    from pecli.errors import ConfigError

    with pytest.raises(ConfigError, match=needle):
        llama_cpp_settings(flags, LLAMA2)


def test_qwen25_yarn_to_llama_cpp_flags_and_back():
    start = extension_base(QWEN25)
    patch = method_patch(start, "yarn", 4.0, 131072)
    serving = serving_flags("llama.cpp", start, patch, 131072)
    assert serving.command_line() == "--ctx-size 131072 --rope-scaling yarn --rope-scale 4 --yarn-orig-ctx 32768"
    assert serving.served == 131072 and serving.warnings == ()
    flags = dict(zip(serving.flags[::2], serving.flags[1::2]))
    back, served = llama_cpp_settings(flags, QWEN25)
    block = patch["rope_scaling"]
    assert {k: back["rope_scaling"][k] for k in block} == pytest.approx(block)
    assert served == patch["max_position_embeddings"] == 131072


def test_a_base_that_flags_would_round_is_written_in_full():
    start = extension_base(LLAMA2)
    patch = method_patch(start, "base", 21.6086321, 32768)
    serving = serving_flags("llama.cpp", start, patch, 32768)
    base = float(serving.flags[serving.flags.index("--rope-freq-base") + 1])
    assert base == 10000.0 * 21.6086321 and serving.served == 32768


def test_vllm_overrides_for_linear_keep_max_position_embeddings_at_the_training_length():
    start = extension_base(LLAMA2)
    patch = method_patch(start, "linear", 8.0, 32768)
    assert patch["max_position_embeddings"] == 32768  # what transformers reads
    serving = serving_flags("vllm", start, patch, 32768)
    overrides = json.loads(serving.flags[1])
    assert serving.flags[0] == "--hf-overrides" and serving.flags[2:] == ("--max-model-len", "32768")
    # one whole rope dict: vLLM sets rope_parameters as given (a rope_scaling dict would lose rope_theta, a flat
    # rope_theta would be kept at the config's: tests/fixtures/engines/vllm/RULES.md, H2 and H3)
    assert overrides["rope_parameters"] == {"rope_type": "linear", "factor": 8.0, "rope_theta": 10000.0}
    assert overrides["max_position_embeddings"] == 4096
    assert vllm_max_len(overrides["max_position_embeddings"], overrides["rope_parameters"]) == 32768 == serving.served
    assert any("262,144" in warning for warning in serving.warnings)
    # the lines printed for a shell are the same command: a backslash-newline joins them
    import shlex

    words = shlex.split("\n".join(serving.command_lines()).replace("\\\n", " "))
    assert words[0] == "--hf-overrides" and json.loads(words[1]) == overrides and words[2:] == ["--max-model-len", "32768"]


def test_vllm_dynamic_is_not_advised_and_too_short_settings_are_warned():
    # vLLM 0.33's DynamicNTKScalingRotaryEmbedding: base·(s·L/L_t − (s − 1))^(r/(r−2)) with L_t defaulting to
    # L (max_position): the plain base at every length, not transformers' dynamic NTK — never advised
    start = extension_base(LLAMA2)
    dynamic = serving_flags("vllm", start, method_patch(start, "dynamic", 8.0, 32768), 32768, LLAMA2)
    assert dynamic.flags == () and dynamic.served is None and "dynamic NTK" in dynamic.unsupported
    llama3 = serving_flags("vllm", start, method_patch(start, "llama3", 8.0, 16384), 32768)  # patch serves 16,384
    assert llama3.served is None and any("VLLM_ALLOW_LONG_MAX_MODEL_LEN" in w for w in llama3.warnings)


@pytest.mark.parametrize("engine, method, words", [
    ("llama.cpp", "llama3", "GGUF"), ("llama.cpp", "dynamic", "no dynamic NTK"),
])
def test_what_an_engine_cannot_take_is_said(engine, method, words):
    start = extension_base(LLAMA2)
    serving = serving_flags(engine, start, method_patch(start, method, 8.0, 32768), 32768)
    assert serving.flags == () and words in serving.unsupported


def test_mlx_and_sglang_take_the_patch_in_the_config():
    start = extension_base(LLAMA2)
    patch = method_patch(start, "yarn", 8.0, 32768)
    mlx = serving_flags("mlx", start, patch, 32768)
    assert mlx.flags == () and mlx.edit_config == patch
    sglang = serving_flags("sglang", start, patch, 32768)
    assert sglang.flags[0] == "--json-model-override-args" and json.loads(sglang.flags[1]) == patch
    assert sglang.flags[2:] == ("--context-length", "32768") and sglang.warnings == ()


def test_extend_runtime_on_the_command_line(invoke, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(QWEN25))
    result = invoke("extend", "--hf-config", str(config), "--target", "131072", "--pick", "shipped",
                    "--runtime", "llama.cpp")
    assert result.exit_code == 0, result.output
    # one flag a line, continued with a backslash: pasted into a shell it is one command
    assert "--ctx-size 131072 \\\n--rope-scaling yarn \\\n--rope-scale 4 \\\n--yarn-orig-ctx 32768\n" in result.stdout
    document = json.loads(invoke("extend", "--hf-config", str(config), "--target", "131072", "--runtime", "vllm",
                                 "--json").stdout)
    assert document["runtime"]["engine"] == "vllm" and document["runtime"]["flags"][2:] == ["--max-model-len", "131072"]
    bad = invoke("extend", "--hf-config", str(config), "--target", "131072", "--runtime", "tgi")
    assert bad.exit_code == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_flags_back_to_the_settings_each_engine_runs_with():
    # the flags printed, run through each engine's own rules over the model's config: the candidate's settings
    start = extension_base(LLAMA2)
    for name, method in (("vllm", "linear"), ("vllm", "yarn"), ("sglang", "linear"), ("llama.cpp", "yarn"),
                         ("llama.cpp", "linear")):
        patch = method_patch(start, method, 8.0, 32768)
        # SGLang refuses a config naming no architectures (model_config.py:699)
        config = {**LLAMA2, "architectures": ["LlamaForCausalLM"]} if name == "sglang" else LLAMA2
        serving = serving_flags(name, start, patch, 32768, config)
        run = engine(name).run(config, serving.command_line())
        assert run.served == 32768, (name, method)
        options = run.plan.groups[0].options
        assert options["rope_scaling"]["rope_type"] == method and options["rope_scaling"]["factor"] == 8.0
        assert options["base"] == 10000.0
    # vLLM multiplies a linear factor into max_position_embeddings: the patch's keys as they are serve 262,144
    raw = json.dumps(method_patch(start, "linear", 8.0, 32768))
    assert engine("vllm").run(LLAMA2, f"--hf-overrides '{raw}' --max-model-len 32768").served == 32768
    assert engine("vllm").run(LLAMA2, f"--hf-overrides '{raw}'").served == 262144


def test_mlx_builds_dynamic_ntk():
    # mlx_lm/models/rope_utils.py: DynamicNTKScalingRoPE, the base raised with the sequence as transformers does
    start = extension_base(LLAMA2)
    serving = serving_flags("mlx", start, method_patch(start, "dynamic", 8.0, 32768), 32768, LLAMA2)
    assert serving.unsupported is None and serving.edit_config is not None


#: Gemma 2 in small (sliding layers 0, 2; full 1, 3; one RoPE) and Llama 4 in small (RoPE on chunked layers only).
GEMMA2 = {"model_type": "gemma2", "hidden_size": 256, "num_attention_heads": 4, "head_dim": 64, "num_hidden_layers": 4,
          "max_position_embeddings": 8192, "rope_theta": 10000.0, "sliding_window": 4096}
LLAMA4 = {"model_type": "llama4_text", "hidden_size": 256, "num_attention_heads": 4, "head_dim": 64,
          "num_hidden_layers": 4, "max_position_embeddings": 8192, "rope_theta": 500000.0,
          "attention_chunk_size": 2048, "no_rope_layers": [1, 1, 1, 0],
          "layer_types": ["chunked_attention", "chunked_attention", "chunked_attention", "full_attention"]}


def test_llama_cpp_flags_reach_full_attention_layers_only():
    # llama_model::get_rope_freq_base/scale: a windowed layer keeps the trained base and scale. Gemma 2's
    # full layers take the flags (said), Llama 4's RoPE layers are all chunked: the flags change nothing.
    start = extension_base(GEMMA2)
    serving = serving_flags("llama.cpp", start, method_patch(start, "yarn", 4.0, 32768), 32768)
    assert serving.served == 32768
    assert any("full-attention layers only" in w and "sliding_attention" in w for w in serving.warnings)
    start = extension_base(LLAMA4)
    assert (start.windowed, start.unwindowed) == (("chunked_attention",), False)
    serving = serving_flags("llama.cpp", start, method_patch(start, "yarn", 4.0, 32768), 32768)
    assert serving.served is None and any("change no frequency" in w for w in serving.warnings)


def test_mlx_gets_the_patch_in_the_keys_its_model_file_reads():
    # mlx_lm/models/llama.py reads rope_theta and rope_scaling as top-level keys only: a transformers 5 config's
    # patch is written that way for it (tests/fixtures/engines/mlx/RULES.md, §3)
    config = {**LLAMA2, "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}}
    config.pop("rope_theta")
    start = extension_base(config)
    serving = serving_flags("mlx", start, method_patch(start, "yarn", 8.0, 32768), 32768, config)
    assert serving.unsupported is None and "rope_parameters" not in serving.edit_config
    assert serving.edit_config["rope_theta"] == 10000.0 and serving.edit_config["rope_scaling"]["rope_type"] == "yarn"
