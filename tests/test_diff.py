"""``pecli diff``: faithful conversions of public configs give exit 0, each conversion bug people hit
exit 1 with a line naming the key or tensor at fault; two configs compare the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("gguf")

from gguf_models import convert  # noqa: E402

FAITHFUL = ["llama31", "code_llama", "vicuna16k", "qwen25", "qwen3moe", "phi3", "gemma3", "deepseek_v3", "phi2",
            "bloom", "starcoder2"]


def config_file(tmp_path, config, name="config.json"):
    path = tmp_path / name
    path.write_text(json.dumps(config))
    return str(path)


@pytest.mark.parametrize("name", FAITHFUL)
def test_a_faithful_conversion_is_the_same(invoke, tmp_path, name):
    gguf_path, config = convert(tmp_path, name)
    result = invoke("diff", "--hf-config", config_file(tmp_path, config), "--gguf", gguf_path, "--json")
    document = json.loads(result.stdout)
    assert result.exit_code == 0, document
    assert document["same"] is True and document["differences"] == []


def test_a_yarn_key_the_architecture_does_not_read_changes_nothing(invoke, tmp_path):
    """llama.cpp's qwen2 loader never reads ``rope.scaling.yarn_ext_factor`` (only Grok's, Mistral 3's and DeepSeek 2's
    read YaRN keys; tests/fixtures/engines/llama_cpp, case llama-yarn-keys): a wrong one is no difference."""
    gguf_path, config = convert(tmp_path, "qwen25", "ext_factor")
    result = invoke("diff", "--hf-config", config_file(tmp_path, config), "--gguf", gguf_path)
    assert result.exit_code == 0, result.stdout


@pytest.mark.parametrize("name, bug, culprit, what", [
    ("llama31", "rope_freqs", "rope_freqs", "frequencies"),               # llama.cpp #8650
    ("vicuna16k", "linear_dropped", "llama.rope.scaling.factor", "frequencies"),  # #2772
    ("code_llama", "base_missing", "llama.rope.freq_base", "base"),        # #2768
    ("qwen3moe", "yarn_missing", "qwen3moe.rope.scaling.type", "frequencies"),  # #13322
    ("gemma3", "swa_global_base", "gemma3.rope.freq_base_swa", "base"),    # #14367
])
def test_each_planted_bug_is_named(invoke, tmp_path, name, bug, culprit, what):
    gguf_path, config = convert(tmp_path, name, bug)
    hf = config_file(tmp_path, config)
    result = invoke("diff", "--hf-config", hf, "--gguf", gguf_path)
    assert result.exit_code == 1
    lines = [line for line in result.stdout.replace("\n    ", " ").splitlines() if culprit in line]
    assert lines, result.stdout
    document = json.loads(invoke("diff", "--hf-config", hf, "--gguf", gguf_path, "--json").stdout)
    assert document["same"] is False
    assert any(culprit in d["gguf_key"] and d["what"] == what for d in document["differences"]), document


def test_a_deepseek_file_without_its_log_multiplier_scales_cos_and_sin(invoke, tmp_path):
    # llama.cpp without the key (measured, tests/fixtures/engines/llama_cpp case deepseek-v3-no-log-mul): YaRN's
    # mscale(40) = 0.1 ln 40 + 1 ≈ 1.3689 lands on cos and sin, and its softmax keeps mscale² ≈ 1.874 as
    # transformers': the logits are 1.874× the model's, blamed on the missing key.
    gguf_path, config = convert(tmp_path, "deepseek_v3", "log_mul_missing")
    document = json.loads(invoke("diff", "--hf-config", config_file(tmp_path, config), "--gguf", gguf_path, "--json").stdout)
    assert document["same"] is False
    (found,) = document["differences"]
    assert found["gguf_key"] == "deepseek2.rope.scaling.yarn_log_multiplier" and "1.874" in found["effect"], document


def test_the_missing_llama3_tensor_says_which_pairs_and_by_how_much(invoke, tmp_path):
    # Llama 3.1, head 128, base 500,000: pair i's wavelength 2π·500000^(i/64) passes 8192/1 from i = 35
    # (divided by 8) and 8192/4 from i = 29 (smoothed): without rope_freqs those turn 8× too fast.
    gguf_path, config = convert(tmp_path, "llama31", "rope_freqs")
    document = json.loads(invoke("diff", "--hf-config", config_file(tmp_path, config), "--gguf", gguf_path, "--json").stdout)
    (difference,) = document["differences"]
    assert "pairs 35–63 rotate 8× faster past 8,192" in difference["effect"]
    assert difference["hf_key"] == "rope_scaling" and difference["gguf_key"] == "rope_freqs (tensor)"
    assert difference["gguf_value"] == "absent"
    assert difference["hf_value"] == "llama3 ×8 from 8,192, written as 64 rope_freqs factors"


def test_a_dropped_yarn_block_changes_the_attention_factor_too(invoke, tmp_path):
    gguf_path, config = convert(tmp_path, "qwen3moe", "yarn_missing")
    document = json.loads(invoke("diff", "--hf-config", config_file(tmp_path, config), "--gguf", gguf_path, "--json").stdout)
    factors = {d["what"]: d for d in document["differences"]}["attention factor"]
    # blamed on the keys that, set alone to the model's values, restore it: a yarn type and its factor
    assert factors["gguf_key"] == "qwen3moe.rope.scaling.type, qwen3moe.rope.scaling.factor"
    assert factors["gguf_value"] == ["absent", "absent"] and factors["hf_value"] == ["yarn", 4.0]
    # 0.1 ln 4 + 1 = 1.138629 on cos and sin in the model; 1 in the file
    assert "cos and sin carry 1 where the model's carry 1.13863" in factors["effect"]


def test_two_configs_name_their_sides_old_and_new(invoke, tmp_path):
    old = config_file(tmp_path, {**_code_llama(), "rope_theta": 10000.0}, "old.json")
    new = config_file(tmp_path, _code_llama(), "new.json")
    result = invoke("diff", "--hf-config", old, "--hf-config", new, "--json")
    assert result.exit_code == 1
    (difference,) = json.loads(result.stdout)["differences"]
    assert difference["old_key"] == difference["new_key"] == "rope_theta"
    assert (difference["old_value"], difference["new_value"]) == (10000.0, 1000000.0)
    assert "slower" in difference["effect"]  # a larger base: every pair but the first turns slower
    assert invoke("diff", "--hf-config", new, "--hf-config", new).exit_code == 0


def _code_llama():
    from gguf_models import CODE_LLAMA

    return dict(CODE_LLAMA)


@pytest.mark.parametrize("args, needle", [
    (["--hf-config", "{hf}"], "diff compares two plans"),
    (["--gguf", "{gguf}"], "is compared with one model"),
    (["--hf-config", "{hf}", "--gguf", "{hf}"], "not a readable GGUF file"),
])
def test_bad_requests_are_one_line_and_exit_2(invoke, tmp_path, args, needle):
    gguf_path, config = convert(tmp_path, "phi2")
    hf = config_file(tmp_path, config)
    result = invoke("diff", *[a.format(hf=hf, gguf=gguf_path) for a in args])
    assert result.exit_code == 2 and needle in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_llama_cpp_flags_are_read_as_llama_cpp_computes(invoke, tmp_path):
    # --rope-scale 4 is freq_scale 1/4: with yarn from 32,768 the same numbers as Qwen2.5's own YaRN block
    _, config = convert(tmp_path, "qwen25")
    plain = config_file(tmp_path, {k: v for k, v in config.items() if k != "rope_scaling"})
    yarn = config_file(tmp_path, config, "yarn.json")
    flags = "--rope-scaling yarn --rope-scale 4 --yarn-orig-ctx 32768"
    assert invoke("diff", "--hf-config", yarn, "--runtime", "llama.cpp", "--args", flags).exit_code == 0
    result = invoke("diff", "--hf-config", plain, "--runtime", "llama.cpp", "--args", flags, "--json")
    assert result.exit_code == 1
    assert {d["what"] for d in json.loads(result.stdout)["differences"]} == {"frequencies", "attention factor"}
    bad = invoke("diff", "--hf-config", plain, "--runtime", "llama.cpp", "--args", "--rope-scaling ntk")
    assert bad.exit_code == 2 and "--rope-scaling" in bad.stderr


def test_vllm_and_sglang_flags_are_read_as_the_engines_read_them(invoke, tmp_path):
    # vLLM 0.33 (vllm/config/model.py, _get_and_verify_max_len) multiplies no yarn factor into the length it
    # derives: Qwen2.5's yarn config serves its max_position_embeddings, 32,768, and a longer --max-model-len
    # is refused unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. SGLang (get_context_length) likewise: the block
    # holds original_max_position_embeddings, so ×1.
    qwen = json.loads((Path(__file__).parent.parent / "sample_configs" / "hf" / "qwen--qwen2.5-7b-instruct-yarn.json").read_text())
    scaled = config_file(tmp_path, qwen)
    assert invoke("diff", "--hf-config", scaled, "--runtime", "vllm", "--args", "").exit_code == 0
    result = invoke("diff", "--hf-config", scaled, "--runtime", "vllm", "--args", "--max-model-len 131072", "--json")
    document = json.loads(result.stdout)
    assert result.exit_code == 1 and document["accepted"] is False and "VLLM_ALLOW_LONG_MAX_MODEL_LEN" in document["refused"]
    assert document["engine"] == {"name": "vllm", "version": "0.33.0", "source": document["engine"]["source"]}
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({k: v for k, v in qwen.items() if k != "rope_scaling"}))
    # a dict override replaces the rope dict through transformers' setter, which takes rope_theta from an attribute
    # the loaded config no longer has: None, and the model file fails (measured: tests/fixtures/engines/vllm)
    overrides = json.dumps({"rope_scaling": qwen["rope_scaling"]})
    result = invoke("diff", "--hf-config", plain, "--runtime", "vllm", "--args", f"--hf-overrides '{overrides}'", "--json")
    document = json.loads(result.stdout)
    assert result.exit_code == 1 and "NoneType" in document["refused"]
    overrides = json.dumps({"rope_theta": qwen["rope_theta"], "rope_scaling": qwen["rope_scaling"]})
    result = invoke("diff", "--hf-config", plain, "--runtime", "vllm", "--args", f"--hf-overrides '{overrides}'", "--json")
    document = json.loads(result.stdout)
    assert result.exit_code == 1 and {d["what"] for d in document["differences"]} >= {"frequencies"}
    result = invoke("diff", "--hf-config", scaled, "--runtime", "sglang", "--args", "--context-length 65536", "--json")
    assert result.exit_code == 1 and "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN" in json.loads(result.stdout)["refused"]
    result = invoke("diff", "--hf-config", scaled, "--runtime", "sglang", "--args",
                    "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 --context-length 65536", "--json")
    assert result.exit_code == 1 and json.loads(result.stdout)["differences"][0]["runtime_value"] == 65536
    result = invoke("diff", "--hf-config", scaled, "--runtime", "vllm", "--args", "--rope-scale 4")
    assert result.exit_code == 2 and "--rope-scale" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_base_and_scaling_that_differ_are_said_even_where_the_rotated_components_differ(run_main, tmp_path):
    # 4 heads of 16 (d = 16, base 10,000, no scaling) against Llama 3.1's 128 (base 500,000, llama3): the
    # frequencies cannot be held pair against pair, and base and scaling went unsaid; the layer count was
    # named "layers" on the candidate's side though it read num_hidden_layers
    toy = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2,
           "rope_theta": 10000.0, "max_position_embeddings": 4096}
    (tmp_path / "toy.json").write_text(json.dumps(toy))
    from conftest import HF_CONFIGS

    done = run_main("diff", "--hf-config", "toy.json", "--hf-config", HF_CONFIGS / "meta-llama--llama-3.1-8b.json", "--json")
    assert done.returncode == 1
    found = {d["what"]: d for d in json.loads(done.stdout)["differences"]}
    assert found["base"]["new_value"] == 500000.0 and found["base"]["old_value"] == 10000.0
    assert found["base"]["new_key"] == "rope_theta" and found["base"]["old_key"] == "rope_theta"
    assert found["scaling"]["new_value"] == "llama3" and found["scaling"]["old_value"] == "none"
    assert found["layers"]["new_key"] == "num_hidden_layers" and found["rotated components"]["new_value"] == 128
