"""``pecli diff --gguf F --runtime llama.cpp --args "…"`` (llama.cpp's flags on the file the user has) and
``pecli diff --gguf A --gguf B`` (two files, the first the reference), issue 41. An unset flag takes the
file's value (``src/llama-context.cpp``, ``llama_context``'s constructor); a sliding layer keeps its trained
base and scale (``llama_model::get_rope_freq_base``). The frequencies expected are worked out here."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("gguf")

from gguf_models import convert, write_gguf  # noqa: E402
from test_diff_llama_cpp import inv_freq_by_layer  # noqa: E402 (each group's frequencies, layer by layer)

#: A small Llama file: 2 layers, 4 heads of 64, base 10,000, 4,096 tokens, no scaling keys.
SMALL = {"block_count": 2, "context_length": 4096, "embedding_length": 256, "attention.head_count": 4,
         "rope.freq_base": 10000.0}
THETA = 10000.0 ** (-np.arange(0, 64, 2) / 64)


def flags_inv_freq(path: str, args: str) -> dict[int, np.ndarray]:
    """Each layer's frequencies under the flags, through the library."""
    from pecli.models.gguf import read_gguf_metadata
    from pecli.models.gguf_flags import plan_under_flags
    from pecli.models.runtime_flags import parse_flags

    values, tensors, types = read_gguf_metadata(path)
    return inv_freq_by_layer(plan_under_flags(values, tensors, path, types, parse_flags(args), args))


def test_rope_scale_on_a_file_without_scaling_is_linear(invoke, tmp_path):
    # no rope.scaling.type → linear (load_hparams); --rope-scale 4 → frequency scale 1/4 on every pair
    path = write_gguf(tmp_path / "small.gguf", "llama", SMALL)
    for frequencies in flags_inv_freq(path, "--rope-scale 4").values():
        np.testing.assert_allclose(frequencies, THETA / 4, rtol=1e-12)
    result = invoke("diff", "--gguf", path, "--runtime", "llama.cpp", "--args", "--rope-scale 4", "--json")
    assert result.exit_code == 1
    (difference,) = json.loads(result.stdout)["differences"]
    assert (difference["runtime_key"], difference["gguf_key"], difference["gguf_value"]) == (
        "--rope-scale", "llama.rope.scaling.factor", "absent")
    assert "pairs 0–31 rotate 4× slower" in difference["effect"]


def test_a_flag_the_file_already_says_changes_nothing(invoke, tmp_path):
    path = write_gguf(tmp_path / "small.gguf", "llama", SMALL)
    assert invoke("diff", "--gguf", path, "--runtime", "llama.cpp", "--args", "--rope-freq-base 10000 -c 4096").exit_code == 0


def test_a_yarn_file_run_linear_loses_its_ramp(tmp_path):
    # Qwen2.5 yarn ×4 file; --rope-scaling linear keeps the file's scale 1/4 and drops ext_factor: θ_i/4 everywhere
    path, _ = convert(tmp_path, "qwen25")
    theta = 1e6 ** (-np.arange(0, 128, 2) / 128)
    for frequencies in flags_inv_freq(path, "--rope-scaling linear").values():
        np.testing.assert_allclose(frequencies, theta / 4, rtol=1e-9)


def test_the_flags_reach_the_full_attention_layers_of_a_gemma3_file(tmp_path):
    # Gemma 3: sliding layers (i % 6 < 5) keep base 10,000 unscaled; full layers take --rope-freq-base 20000,
    # still scaled by the file's linear factor 8
    path, _ = convert(tmp_path, "gemma3")
    by_layer = flags_inv_freq(path, "--rope-freq-base 20000")
    ladder = np.arange(0, 256, 2) / 256
    np.testing.assert_allclose(by_layer[0], 10000.0 ** -ladder, rtol=1e-9)
    np.testing.assert_allclose(by_layer[5], 20000.0 ** -ladder / 8, rtol=1e-9)


def test_flags_that_mend_a_file_give_the_models_numbers(invoke, tmp_path):
    # a Vicuna-16K file that lost its linear ×4 keys, run with --rope-scale 4: the model's frequencies again
    path, config = convert(tmp_path, "vicuna16k", "linear_dropped")
    hf = tmp_path / "config.json"
    hf.write_text(json.dumps(config))
    assert invoke("diff", "--hf-config", str(hf), "--gguf", path).exit_code == 1
    assert invoke("diff", "--hf-config", str(hf), "--gguf", path, "--runtime", "llama.cpp", "--args",
                  "--rope-scale 4").exit_code == 0
    result = invoke("diff", "--hf-config", str(hf), "--gguf", path, "--runtime", "llama.cpp", "--args", "--rope-scale 2",
                    "--json")
    (difference,) = json.loads(result.stdout)["differences"]
    assert difference["runtime_key"] == "--rope-scale" and "2× faster" in difference["effect"]


def test_two_files_are_compared_the_first_as_reference(invoke, tmp_path):
    good, _ = convert(tmp_path, "llama31")
    bad, _ = convert(tmp_path, "llama31", "rope_freqs")
    assert invoke("diff", "--gguf", good, "--gguf", good).exit_code == 0
    result = invoke("diff", "--gguf", good, "--gguf", bad, "--json")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    (difference,) = document["differences"]
    assert (difference["second_key"], difference["second_value"], difference["first_value"]) == (
        "rope_freqs (tensor)", "absent", "64 factors")
    # without the llama3 divisors pairs 35–63 (wavelength past 8,192) turn 8× faster
    assert "pairs 35–63 rotate 8× faster" in difference["effect"]
    assert (document["reference"]["source"], document["candidate"]["source"]) == (good, bad)


def test_two_files_name_the_key_that_differs(invoke, tmp_path):
    good, _ = convert(tmp_path, "gemma3")
    bad, _ = convert(tmp_path, "gemma3", "swa_global_base")
    (difference,) = json.loads(invoke("diff", "--gguf", good, "--gguf", bad, "--json").stdout)["differences"]
    assert (difference["what"], difference["second_key"], difference["second_value"], difference["first_value"]) == (
        "base", "gemma3.rope.freq_base_swa", 1000000.0, "absent")


@pytest.mark.parametrize("extra, needle", [
    (["--gguf", "{a}", "--gguf", "{a}", "--gguf", "{a}"], "two --gguf files"),
    (["--gguf", "{a}", "--runtime", "vllm", "--args", "-c 8"], "a GGUF file runs on llama.cpp"),
    (["--gguf", "{a}", "--gguf", "{a}", "--runtime", "llama.cpp", "--args", "-c 8"], "one --gguf FILE"),
])
def test_bad_combinations_are_one_line(invoke, tmp_path, extra, needle):
    a = write_gguf(tmp_path / "small.gguf", "llama", SMALL)
    phi3, _ = convert(tmp_path, "phi3")
    result = invoke("diff", *[e.format(a=a, phi3=phi3) for e in extra])
    assert result.exit_code == 2 and needle in result.stderr and len(result.stderr.strip().splitlines()) == 1
