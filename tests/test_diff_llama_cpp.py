"""``pecli diff --runtime llama.cpp``: llama.cpp's flags over a model read from config.json, by llama.cpp's
rule (src/llama-context.cpp: an unset --rope-scaling is the model's training type; type none forces the
frequency scale to 1; src/llama-model.cpp: a GGUF file without rope.scaling.type is linear;
convert_hf_to_gguf.py writes no type for a Llama without a linear or yarn block, none for Command R).
The frequencies expected are worked out here: θ_i = b^(−2i/d), divided by the factor llama.cpp applies.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pecli.models.families.from_config import plan_of
from pecli.models.runtime_flags import runtime_plan
from pecli.schemes.build import build_scheme

#: A small Llama without scaling: 4 heads of 64, trained on 4,096 tokens, base 10,000.
LLAMA = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2,
         "max_position_embeddings": 4096, "rope_theta": 10000.0}
THETA = 10000.0 ** (-np.arange(0, 64, 2) / 64)


def runtime_inv_freq(config: dict, args: str) -> np.ndarray:
    plan = runtime_plan(plan_of(config, "config"), "llama.cpp", args)
    options = dict(next(g for g in plan.groups if g.options is not None).options)
    return np.asarray(build_scheme(options.pop("scheme"), options).frequency_pairs().inv_freq)


def written(tmp_path, config: dict, name: str = "config.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(config))
    return str(path)


def test_rope_scale_alone_on_a_llama_without_scaling_is_linear(invoke, tmp_path):
    # no rope.scaling.type in its GGUF → linear; --rope-scale 4 → frequency scale 0.25
    np.testing.assert_allclose(runtime_inv_freq(LLAMA, "--rope-scale 4"), THETA * 0.25, rtol=1e-12)
    result = invoke("diff", "--hf-config", written(tmp_path, LLAMA), "--runtime", "llama.cpp", "--args", "--rope-scale 4",
                    "--json")
    document = json.loads(result.stdout)
    assert result.exit_code == 1 and [d["what"] for d in document["differences"]] == ["frequencies"]
    assert "trained with linear scaling" in document["candidate"]["source"]
    # the same flag over the same model scaled linearly ×4 in its config: the same numbers
    scaled = written(tmp_path, {**LLAMA, "rope_scaling": {"rope_type": "linear", "factor": 4.0}}, "linear.json")
    assert invoke("diff", "--hf-config", scaled, "--runtime", "llama.cpp", "--args", "--rope-scale 4").exit_code == 0
    np.testing.assert_allclose(runtime_inv_freq({**LLAMA, "rope_scaling": {"rope_type": "linear", "factor": 4.0}},
                                                "--rope-scale 2"), THETA * 0.5, rtol=1e-12)


def test_rope_scale_alone_on_command_r_changes_nothing(invoke, tmp_path):
    # its converter writes rope.scaling.type none: llama.cpp forces the frequency scale to 1
    cohere = {**LLAMA, "model_type": "cohere"}
    np.testing.assert_allclose(runtime_inv_freq(cohere, "--rope-scale 4"), THETA, rtol=1e-12)
    result = invoke("diff", "--hf-config", written(tmp_path, cohere), "--runtime", "llama.cpp", "--args", "--rope-scale 4")
    assert result.exit_code == 0 and "trained with none scaling" in result.stdout.replace("\n    ", " ")
    # asked for explicitly, linear applies
    np.testing.assert_allclose(runtime_inv_freq(cohere, "--rope-scaling linear --rope-scale 4"), THETA / 4, rtol=1e-12)


def test_an_unset_type_keeps_a_yarn_models_own(tmp_path, invoke):
    qwen = {**LLAMA, "max_position_embeddings": 131072, "rope_theta": 1e6,
            "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}
    # --rope-scale 4 alone: the training type yarn, over the file's original 32,768: the config's own numbers
    assert invoke("diff", "--hf-config", written(tmp_path, qwen), "--runtime", "llama.cpp", "--args",
                  "--rope-scale 4").exit_code == 0
    # --rope-scaling linear: the pairs all divided by 4, no ramp
    np.testing.assert_allclose(runtime_inv_freq(qwen, "--rope-scaling linear"),
                               1e6 ** (-np.arange(0, 64, 2) / 64) / 4, rtol=1e-12)


def test_llama3_runs_its_factors_with_a_linear_scale_on_top(tmp_path, invoke):
    block = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
             "original_max_position_embeddings": 2048}
    llama31 = {**LLAMA, "max_position_embeddings": 16384, "rope_theta": 500000.0, "rope_scaling": block}
    assert invoke("diff", "--hf-config", written(tmp_path, llama31), "--runtime", "llama.cpp", "--args",
                  "--rope-freq-base 500000").exit_code == 0
    # Llama 3.1's rule by hand: wavelengths under 2048/4 tokens kept, over 2048/1 divided by 8, smooth between
    theta = 500000.0 ** (-np.arange(0, 64, 2) / 64)
    wavelength = 2 * np.pi / theta
    smooth = (2048 / wavelength - 1.0) / (4.0 - 1.0)
    expected = np.where(wavelength < 2048 / 4, theta, np.where(wavelength > 2048, theta / 8,
                                                              (1 - smooth) * theta / 8 + smooth * theta))
    np.testing.assert_allclose(runtime_inv_freq(llama31, "--rope-scale 2"), expected / 2, rtol=1e-12)


@pytest.mark.parametrize("args, needle", [
    ("--rope-scaling dynamic", "--rope-scaling"),
    ("--rope-scale", "needs a value"), ("--rope-scale x", "takes a number"),
    ("--yarn-orig-ctx x", "--yarn-orig-ctx takes a whole number, got 'x'"),
    # llama.cpp keeps scales as float32: 1e-320 would be 0 there, which reads as "not given"
    ("--rope-freq-scale 1e-320", "--rope-freq-scale takes a number a float32 holds, got '1e-320'"),
    ("--rope-scale 1e39", "--rope-scale takes a number a float32 holds, got '1e39'"),
    ("--ctx-size 4294967296", "--ctx-size takes a whole number up to 2,147,483,647, got '4294967296'"),
])
def test_bad_flags_are_one_line(invoke, tmp_path, args, needle):
    result = invoke("diff", "--hf-config", written(tmp_path, LLAMA), "--runtime", "llama.cpp", "--args", args)
    assert result.exit_code == 2 and needle in result.stderr and len(result.stderr.strip().splitlines()) == 1


def inv_freq_by_layer(plan) -> dict[int, np.ndarray]:
    out = {}
    for group in plan.groups:
        if group.options is not None:
            options = dict(group.options)
            frequencies = np.asarray(build_scheme(options.pop("scheme"), options).frequency_pairs().inv_freq)
            out.update({layer: frequencies for layer in group.layers})
    return out


#: Gemma 2 in small: its layers alternate sliding (even) and full attention (odd), on one RoPE (base 10,000).
GEMMA2 = {"model_type": "gemma2", "hidden_size": 256, "num_attention_heads": 4, "head_dim": 64, "num_hidden_layers": 4,
          "max_position_embeddings": 8192, "rope_theta": 10000.0, "sliding_window": 4096}


def test_the_flags_reach_the_full_attention_layers_only(invoke, tmp_path):
    # llama_model::get_rope_freq_base/scale: a sliding layer (hparams.is_swa) runs its trained base and scale
    plan = runtime_plan(plan_of(GEMMA2, "config"), "llama.cpp", "--rope-scale 2 --rope-freq-base 20000")
    frequencies = inv_freq_by_layer(plan)
    for layer in (0, 2):
        np.testing.assert_allclose(frequencies[layer], THETA, rtol=1e-12)
    for layer in (1, 3):
        np.testing.assert_allclose(frequencies[layer], 20000.0 ** (-np.arange(0, 64, 2) / 64) / 2, rtol=1e-12)
    result = invoke("diff", "--hf-config", written(tmp_path, GEMMA2), "--runtime", "llama.cpp", "--args", "--rope-scale 2",
                    "--json")
    assert result.exit_code == 1
    assert {d["layers"] for d in json.loads(result.stdout)["differences"]} == {"1, 3"}


def test_converters_that_write_no_scaling():
    from pecli.models.runtime_flags import converted_rope

    def trained(block, model_type):
        return converted_rope(block, model_type=model_type, base=10000.0, context=4096, rotated_dim=64)

    # Cohere2Model.set_gguf_parameters: add_rope_scaling_type(NONE)
    assert trained(None, "cohere2").scaling_type == "none"
    # NemotronModel: none without a factor, linear by the factor with one
    assert trained(None, "nemotron").scaling_type == "none"
    assert (trained({"rope_type": "linear", "factor": 2.0}, "nemotron").scaling_type,
            trained({"rope_type": "linear", "factor": 2.0}, "nemotron").freq_scale) == ("linear", 0.5)
    np.testing.assert_allclose(runtime_inv_freq({**LLAMA, "model_type": "nemotron", "partial_rotary_factor": 1.0},
                                                "--rope-scale 4"), THETA, rtol=1e-12)


def test_deepseek_without_flags_is_the_model(invoke):
    # DeepSeek-V3 (yarn ×40, mscale = mscale_all_dim = 1): transformers puts mscale(40, 1)/mscale(40, 1) = 1 on
    # cos and sin and mscale² in the softmax; the converter writes yarn_log_multiplier 0.1 × mscale_all_dim,
    # and llama.cpp's DeepSeek rule (TAG_DEEPSEEK2_YARN_LOG_MUL_FIX) gives mscale(0.1)/mscale(0.1) = 1 too.
    config = str(Path(__file__).parent.parent / "sample_configs" / "hf" / "deepseek-ai--deepseek-v3.json")
    result = invoke("diff", "--hf-config", config, "--runtime", "llama.cpp", "--args", "--ctx-size 4096")
    assert result.exit_code == 0, result.output


def test_a_flag_is_blamed_when_leaving_it_out_gives_the_models_numbers(invoke, tmp_path):
    # --rope-freq-base 20000 over a base-10,000 Llama: pair i turns 2^(−2i/64) as fast, at every position;
    # --ctx-size 4096 is the model's own context and changes nothing, so it is not blamed
    result = invoke("diff", "--hf-config", written(tmp_path, LLAMA), "--runtime", "llama.cpp", "--args",
                    "--ctx-size 4096 --rope-freq-base 20000", "--json")
    (difference,) = json.loads(result.stdout)["differences"]
    assert (difference["what"], difference["runtime_key"], difference["hf_key"]) == ("base", "--rope-freq-base", "rope_theta")
    assert (difference["runtime_value"], difference["hf_value"]) == (20000.0, 10000.0)
    assert difference["effect"] == f"pairs 1–31 rotate {2 ** (2 / 64):.3g}–{2 ** (62 / 64):.3g}× slower at every position"
