"""Configuration: YAML < command-line options < --set, aliases, validation that names the key, positions,
the rope_scaling block and --hf-config on the sample HuggingFace configs in sample_configs/hf/.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from pecli.config import build_scheme, load_yaml, merge, parse_positions, parse_sets, read_hf_config, resolve
from pecli.errors import ConfigError

HF_CONFIGS = Path(__file__).resolve().parents[1] / "sample_configs" / "hf"


def spec_of(tmp_path: Path, yaml_text: str | None = None, options: dict | None = None, sets: list[str] | None = None):
    """What the CLI does: the YAML file, then the options, then --set, resolved into a Spec."""
    from_file = {}
    if yaml_text is not None:
        path = tmp_path / "config.yaml"
        path.write_text(yaml_text, encoding="utf-8")
        from_file = load_yaml(str(path))
    return resolve(merge(from_file, options or {}, parse_sets(sets)))


def config_error(call, *args, **kwargs) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        call(*args, **kwargs)
    return info.value


# ------------------------------------------------------------------------------------------ layering
def test_layers_file_then_options_then_set(tmp_path):
    yaml_text = "scheme: sinusoidal\ndim: 16\nbase: 100\nlength: 8\n"
    assert spec_of(tmp_path, yaml_text).scheme.dim == 16
    assert spec_of(tmp_path, yaml_text, {"dim": 32}).scheme.dim == 32
    spec = spec_of(tmp_path, yaml_text, {"dim": 32}, ["dim=64"])
    assert spec.scheme.dim == 64
    # Keys the later layers do not mention keep the file's value; an explicit null asks for the default.
    assert spec.scheme.base == 100.0 and spec.length == 8
    assert spec_of(tmp_path, yaml_text, {}).scheme.dim == 16
    assert spec_of(tmp_path, yaml_text, {}, ["dim=null"]).scheme.dim == 512  # sinusoidal's default d


def test_set_overrides_the_scheme_option(tmp_path):
    spec = spec_of(tmp_path, "scheme: t5\n", {"scheme": "alibi"}, ["scheme=rope", "dim=8"])
    assert spec.scheme.name == "rope" and spec.scheme.dim == 8


def test_layers_through_the_cli(invoke, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("scheme: rope\ndim: 16\nlength: 4\n", encoding="utf-8")
    def dim(*extra):
        result = invoke("encode", "--config", config, "--json", *extra)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["params"]["dim"]
    assert dim() == 16
    assert dim("--dim", "32") == 32
    assert dim("--dim", "32", "--set", "dim=64") == 64


def test_config_from_stdin(invoke):
    result = invoke("encode", "--config", "-", "--json", input="scheme: alibi\nheads: 4\nlength: 3\n")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["scheme"] == "alibi" and document["shape"] == [4, 3, 3]


def test_yaml_keys_accept_dashes(tmp_path):
    spec = spec_of(tmp_path, "scheme: relative\nmax-relative-position: 3\ndim: 4\nlength: 5\n")
    assert spec.scheme.max_relative_position == 3


def test_empty_yaml_is_the_default(tmp_path):
    spec = spec_of(tmp_path, "")
    assert spec.scheme.name == "sinusoidal" and spec.length == 512


# ------------------------------------------------------------------------------------------ aliases, --set
def test_rope_theta_alias(tmp_path):
    assert spec_of(tmp_path, "scheme: rope\nrope_theta: 500000\n").scheme.base == 500000.0
    assert spec_of(tmp_path, options={"scheme": "rope"}, sets=["rope_theta=1e6"]).scheme.base == 1e6


def test_set_base_1e6_parses():
    # YAML 1.1 reads "1e6" as a string (no dot); it must still become the number 10^6.
    assert build_scheme("rope", parse_sets(["base=1e6"])).base == 1_000_000.0
    assert build_scheme("sinusoidal", parse_sets(["base=1e6", "dim=8"])).base == 1_000_000.0


def test_set_values_are_typed():
    sets = parse_sets(["dim=8", "bidirectional=false", "layout=half", "short_factor=[1, 2]"])
    assert sets == {"dim": 8, "bidirectional": False, "layout": "half", "short_factor": [1, 2]}


@pytest.mark.parametrize("pair", ["dim", "=3", ""])
def test_set_without_equals(pair):
    error = config_error(parse_sets, [pair])
    assert error.key == "set" and "key=value" in str(error)


# ------------------------------------------------------------------------------------------ validation
@pytest.mark.parametrize("yaml_text,key,fragment", [
    ("scheme: rope\nfoo: 1\n", "foo", "unknown key for scheme 'rope'"),
    ("scheme: rope\nheads: 8\n", "heads", "it is a parameter of alibi"),
    ("scheme: nope\n", "scheme", "must be one of integer, binary, sinusoidal"),
    ("dim: abc\n", "dim", "expected an integer, got 'abc'"),
    ("dim: 8.5\n", "dim", "expected an integer"),
    ("dim: true\n", "dim", "expected an integer"),
    ("dim: 7\n", "dim", "must be even, got 7"),
    ("dim: 0\n", "dim", "must be >= 2"),
    ("base: 0\n", "base", "must be > 0"),
    ("base: -10\n", "base", "must be > 0"),
    ("base: .inf\n", "base", "must be finite"),
    ("length: 0\n", "length", "must be >= 1"),
    ("layout: diagonal\n", "layout", "must be one of interleaved, half"),
    ("scheme: t5\nbidirectional: maybe\n", "bidirectional", "expected true or false"),
    ("scheme: rope\npartial_rotary_factor: 1.5\n", "partial_rotary_factor", "must be <= 1"),
    ("scheme: alibi\nheads: 0\n", "heads", "must be >= 1"),
    ("dtype: float8\n", "dtype", "must be one of float64, float32, float16, bfloat16"),
])
def test_bad_values_name_the_key(tmp_path, yaml_text, key, fragment):
    error = config_error(spec_of, tmp_path, yaml_text)
    assert error.key == key
    assert str(error).startswith(f"{key}: ")
    assert fragment in str(error)


def test_unknown_key_lists_valid_keys(tmp_path):
    message = str(config_error(spec_of, tmp_path, "scheme: alibi\ndimension: 4\n"))
    assert "valid keys:" in message and "heads" in message and "length" in message


def test_config_file_errors(tmp_path):
    error = config_error(load_yaml, str(tmp_path / "missing.yaml"))
    assert error.key == "config" and "cannot read" in str(error)
    bad = tmp_path / "bad.yaml"
    bad.write_text("dim: [1, 2\n", encoding="utf-8")
    assert "not valid YAML" in str(config_error(load_yaml, str(bad)))
    listing = tmp_path / "list.yaml"
    listing.write_text("- 1\n- 2\n", encoding="utf-8")
    assert "mapping" in str(config_error(load_yaml, str(listing)))


def test_yaml_is_read_with_the_safe_loader(tmp_path):
    path = tmp_path / "evil.yaml"
    path.write_text("dim: !!python/object/apply:os.system ['echo pwned']\n", encoding="utf-8")
    assert config_error(load_yaml, str(path)).key == "config"


# ------------------------------------------------------------------------------------------ positions
def test_positions_range_forms():
    np.testing.assert_array_equal(parse_positions("2:10:2"), [2, 4, 6, 8])
    np.testing.assert_array_equal(parse_positions("5:8"), [5, 6, 7])
    assert parse_positions("0:4").dtype == np.int64


def test_positions_npy_and_list(tmp_path):
    path = tmp_path / "ids.npy"
    np.save(path, np.array([7, 3, 0], dtype=np.int32))
    np.testing.assert_array_equal(parse_positions(str(path)), [7, 3, 0])
    np.testing.assert_array_equal(parse_positions([3, 1, 4]), [3, 1, 4])


@pytest.mark.parametrize("value,fragment", [
    ("a:b", "start:stop[:step]"),
    ("0:10:0", "positive step"),
    ("1:2:3:4", "start:stop[:step]"),
    ("5:2", "gives no positions"),
    ([-1, 2], ">= 0"),
    ("missing.npy", "cannot read"),
])
def test_positions_errors(value, fragment):
    error = config_error(parse_positions, value)
    assert error.key == "positions" and fragment in str(error)


def test_positions_npy_of_fractions_rejected(tmp_path):
    path = tmp_path / "f.npy"
    np.save(path, np.array([0.5, 1.0]))
    assert "whole numbers" in str(config_error(parse_positions, str(path)))


def test_positions_set_the_length(tmp_path):
    # Without --length the length is max(positions) + 1: 100:200 → 200 (binary: ceil(log2 200) = 8 bits).
    spec = spec_of(tmp_path, options={"scheme": "binary", "positions": "100:200"})
    assert spec.length == 200 and spec.scheme.bits == 8 and spec.positions[0] == 100
    # With --length it is kept (the training length): binary on 256 has 8 bits.
    spec = spec_of(tmp_path, options={"scheme": "binary", "positions": "0:4", "length": 256})
    assert spec.length == 256 and spec.scheme.bits == 8


def test_positions_as_yaml_list(tmp_path):
    # README/help: positions may be "start:stop[:step], an .npy file or a list" — a YAML list must work.
    spec = spec_of(tmp_path, "dim: 4\npositions: [3, 1, 4]\n")
    np.testing.assert_array_equal(spec.positions, [3, 1, 4])
    spec = spec_of(tmp_path, options={"dim": 4}, sets=["positions=[3, 1, 4]"])
    np.testing.assert_array_equal(spec.positions, [3, 1, 4])


# ------------------------------------------------------------------------------------------ rope_scaling in YAML
@pytest.mark.parametrize("type_key", ["rope_type", "type"])
def test_rope_scaling_block_in_yaml(tmp_path, type_key):
    # linear, factor 2 on d = 8, base 10000: θ = 1, .1, .01, .001 → halved.
    spec = spec_of(tmp_path, f"scheme: rope\ndim: 8\nrope_scaling:\n  {type_key}: linear\n  factor: 2.0\n")
    assert spec.scheme.scaling == "linear" and spec.scheme.factor == 2.0
    np.testing.assert_allclose(spec.scheme.inv_freq, [0.5, 0.05, 0.005, 0.0005], rtol=1e-12)


def test_rope_scaling_block_llama3_hf_keys(tmp_path):
    yaml_text = (
        "scheme: rope\ndim: 128\nrope_theta: 500000\nrope_scaling:\n  rope_type: llama3\n  factor: 8.0\n"
        "  low_freq_factor: 1.0\n  high_freq_factor: 4.0\n  original_max_position_embeddings: 8192\n"
    )
    scheme = spec_of(tmp_path, yaml_text).scheme
    assert (scheme.scaling, scheme.factor, scheme.low_freq_factor, scheme.high_freq_factor) == ("llama3", 8.0, 1.0, 4.0)
    assert scheme.original_max_position == 8192 and scheme.base == 500000.0
    # The highest frequency (θ_0 = 1, wavelength 2π < 8192/4) is kept; the lowest
    # (θ_63 = 500000^(−126/128), wavelength ≈ 2π·4.1e5 > 8192) is divided by 8.
    assert scheme.inv_freq[0] == 1.0
    assert math.isclose(scheme.inv_freq[-1], 500000.0 ** (-126 / 128) / 8, rel_tol=1e-12)


def test_explicit_key_wins_over_the_block(tmp_path):
    spec = spec_of(tmp_path, "scheme: rope\ndim: 8\nrope_scaling: {rope_type: linear, factor: 2}\n", {"factor": 4})
    assert spec.scheme.factor == 4.0


def test_rope_scaling_bad_block(tmp_path):
    error = config_error(spec_of, tmp_path, "scheme: rope\nrope_scaling: {rope_type: warp, factor: 2}\n")
    assert error.key == "rope_type" and "warp" in str(error)
    error = config_error(spec_of, tmp_path, "scheme: rope\nrope_scaling: 3\n")
    assert error.key == "rope_scaling"


# ------------------------------------------------------------------------------------------ --hf-config
def hf(name: str) -> str:
    return str(HF_CONFIGS / name)


def hf_scheme(name: str):
    return resolve({"hf_config": hf(name), "length": 16}).scheme


def test_hf_llama_2_defaults():
    # Llama-2-7b: hidden 4096 / 32 heads = 128; no rope_theta key → HF's default 10000; no scaling.
    scheme = hf_scheme("meta-llama--llama-2-7b-hf.json")
    assert (scheme.dim, scheme.base, scheme.scaling, scheme.max_position_embeddings) == (128, 10000.0, "none", 4096)
    assert scheme.layout == "half"  # HF rotate_half


def test_hf_llama_3_1_llama3_scaling():
    # rope_theta 500000; rope_scaling llama3, factor 8, low 1, high 4, original 8192; max_position 131072.
    scheme = hf_scheme("meta-llama--llama-3.1-8b.json")
    assert (scheme.dim, scheme.base) == (128, 500000.0)
    assert (scheme.scaling, scheme.factor, scheme.low_freq_factor, scheme.high_freq_factor) == ("llama3", 8.0, 1.0, 4.0)
    assert scheme.original_max_position == 8192 and scheme.max_position_embeddings == 131072
    assert scheme.attention_scaling == 1.0


def test_hf_gemma_2_head_dim_wins():
    # gemma-2-9b: head_dim 256 although hidden_size / heads = 3584 / 16 = 224.
    scheme = hf_scheme("google--gemma-2-9b-it.json")
    assert scheme.dim == 256 and scheme.base == 10000.0


def test_hf_pythia_rotary_pct():
    # pythia-160m: hidden 768 / 12 heads = 64; rotary_pct 0.25 → partial_rotary_factor 0.25, r = 16,
    # θ_i = 10000^(−2i/16); rotary_emb_base 10000.
    scheme = hf_scheme("eleutherai--pythia-160m.json")
    assert (scheme.dim, scheme.partial_rotary_factor, scheme.rotated_dim, scheme.base) == (64, 0.25, 16, 10000.0)
    np.testing.assert_allclose(scheme.inv_freq, [10000.0 ** (-2 * i / 16) for i in range(8)], rtol=1e-12)


@pytest.mark.parametrize("name,base", [
    ("mistralai--mistral-7b-instruct-v0.1.json", 10000.0),
    ("mistralai--mistral-7b-instruct-v0.3.json", 1_000_000.0),
])
def test_hf_mistral(name, base):
    scheme = hf_scheme(name)
    assert (scheme.dim, scheme.base, scheme.scaling, scheme.max_position_embeddings) == (128, base, "none", 32768)


@pytest.mark.parametrize("name", ["microsoft--phi-3-mini-128k-instruct.json", "microsoft--phi-3.5-mini-instruct.json"])
def test_hf_phi3_longrope(name):
    # Phi-3: hidden 3072 / 32 = 96 → 48 pairs, 48 short and 48 long factors; original 4096 (top-level key);
    # attention factor sqrt(1 + ln(131072/4096)/ln(4096)) = sqrt(1 + 5 ln2 / 12 ln2) = sqrt(17/12).
    scheme = hf_scheme(name)
    assert (scheme.dim, scheme.scaling, scheme.original_max_position) == (96, "longrope", 4096)
    assert len(scheme.short_factor) == len(scheme.long_factor) == 48
    assert math.isclose(scheme.attention_scaling, math.sqrt(17 / 12), rel_tol=1e-12)


def test_hf_deepseek_v2_lite_rotary_dim_and_yarn():
    # DeepSeek-V2-Lite: attention splits each head into qk_nope_head_dim 128 (no RoPE) and
    # qk_rope_head_dim 64, and only the latter rotates (q_pe, k_pe in the model code): the rotary dim is
    # 64, not hidden_size / heads = 2048 / 16 = 128. YaRN factor 40 over 4096; mscale = mscale_all_dim
    # = 0.707 → attention factor get_mscale(40, .707) / get_mscale(40, .707) = 1.
    scheme = hf_scheme("deepseek-ai--deepseek-coder-v2-lite-base.json")
    assert (scheme.scaling, scheme.factor, scheme.original_max_position) == ("yarn", 40.0, 4096)
    assert scheme.attention_scaling == 1.0
    assert scheme.rotated_dim == 64


def test_hf_yarn_llama_2_64k():
    # NousResearch/Yarn-Llama-2-7b-64k ships rope_scaling {type: yarn, factor: 16, original 4096,
    # finetuned: true}; HF loads it (unrecognised keys only warn), so pecli must read it too.
    # 128 dims, base 10000 (no rope_theta), attention scaling 0.1·ln 16 + 1 = 1.2772588722239781.
    scheme = hf_scheme("nousresearch--yarn-llama-2-7b-64k.json")
    assert (scheme.dim, scheme.base, scheme.scaling, scheme.factor, scheme.original_max_position) == (
        128, 10000.0, "yarn", 16.0, 4096)
    assert math.isclose(scheme.attention_scaling, 0.1 * math.log(16) + 1, rel_tol=1e-12)


def test_hf_gpt2_is_a_learned_table_that_needs_the_checkpoint():
    # GPT-2 learns its positions (wpe, n_positions 1024 rows): the config says so, the values are in the weights.
    assert read_hf_config(hf("openai-community--gpt2.json")) == {"scheme": "learned"}
    error = config_error(resolve, {"hf_config": hf("openai-community--gpt2.json")})
    assert error.key == "weights" and "--weights" in str(error) and "learned position table" in str(error)


def test_hf_qwen2_vl_mrope_reads_as_default_frequencies():
    # Qwen2-VL-7B: hidden 3584 / 28 heads = head dim 128, rope_theta 1e6, mrope_section [16, 24, 24]:
    # the mrope scheme; asked as 1-D rope, its text's RoPE with HF's default frequencies (the t/h/w
    # sections pick position ids, not frequencies).
    spec = resolve({"hf_config": hf("qwen--qwen2-vl-7b-instruct-gptq-int8.json")})
    assert spec.scheme.name == "mrope"
    assert (spec.scheme.dim, spec.scheme.base, spec.scheme.mrope_section) == (128, 1e6, (16, 24, 24))
    spec = resolve({"hf_config": hf("qwen--qwen2-vl-7b-instruct-gptq-int8.json"), "scheme": "rope"})
    assert (spec.scheme.dim, spec.scheme.base, spec.scheme.scaling) == (128, 1e6, "none")


def test_every_hf_sample_has_a_test():
    covered = {
        "meta-llama--llama-2-7b-hf.json", "meta-llama--llama-3.1-8b.json", "google--gemma-2-9b-it.json",
        "eleutherai--pythia-160m.json", "mistralai--mistral-7b-instruct-v0.1.json",
        "mistralai--mistral-7b-instruct-v0.3.json", "microsoft--phi-3-mini-128k-instruct.json",
        "microsoft--phi-3.5-mini-instruct.json", "deepseek-ai--deepseek-coder-v2-lite-base.json",
        "nousresearch--yarn-llama-2-7b-64k.json", "openai-community--gpt2.json",
        "qwen--qwen2-vl-7b-instruct-gptq-int8.json",
        # tests/test_config_class_defaults.py (as transformers reads them) and the hub fixtures
        "google--gemma-3-27b-it.json", "google--gemma-3-4b-it.json", "meta-llama--llama-4-scout-17b-16e-instruct.json",
        "tiiuae--falcon-rw-1b.json", "deepseek-ai--deepseek-v3.json", "qwen--qwen2.5-7b-instruct-yarn.json",
        # tests/test_engines.py and the engine fixtures (tests/fixtures/engines/*)
        "microsoft--phi-4-mini-instruct.json",
    }
    assert {p.name for p in HF_CONFIGS.glob("*.json")} == covered


def test_hf_config_options_override(invoke):
    # Options on the command line win over the model's config.json.
    result = invoke("encode", "--hf-config", hf("meta-llama--llama-3.1-8b.json"), "--base", "10000",
                    "--length", "8", "--json")
    assert result.exit_code == 0, result.output
    params = json.loads(result.stdout)["params"]
    assert params["base"] == 10000.0 and params["scaling"] == "llama3" and params["dim"] == 128


def test_hf_config_cli_errors(invoke, tmp_path):
    result = invoke("encode", "--hf-config", hf("openai-community--gpt2.json"))
    assert result.exit_code == 2
    assert result.stderr.startswith("pecli: error: weights: ") and "give it with --weights FILE" in result.stderr
    result = invoke("encode", "--hf-config", hf("meta-llama--llama-2-7b-hf.json"), "--scheme", "alibi")
    assert result.exit_code == 2 and "hf_config" in result.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    result = invoke("encode", "--hf-config", bad)
    assert result.exit_code == 2 and "not valid JSON" in result.stderr


def test_an_alias_and_its_key_in_one_layer_must_agree(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("scheme: rope\nbase: 10000\nrope_theta: 500000\n")
    error = config_error(lambda: resolve(merge(load_yaml(str(path)))))
    assert error.key == "rope_theta" and "base gives 10000" in str(error)


def test_a_later_layer_overrides_an_alias_of_an_earlier_one(tmp_path):
    # The file says rope_theta, the command line says base: the command line wins.
    spec = resolve(merge({"scheme": "rope", "rope_theta": 500000}, {"base": 42}))
    assert spec.scheme.base == 42.0


def test_unknown_key_suggests_the_near_one():
    error = config_error(resolve, {"dimm": 3})
    assert "did you mean dim?" in str(error)


def test_null_scheme_is_the_default():
    assert resolve(merge({"scheme": None})).scheme.name == "sinusoidal"


def test_alias_conflict_names_the_keys_as_written(tmp_path):
    error = config_error(lambda: resolve(merge({"scheme": "rope", "rope_theta": 500000, "base": 10000})))
    assert str(error) == "base: gives 10000 but rope_theta gives 500000: keep one of them"
    # The same number spelled two ways is no conflict (YAML 1.1 reads 1e6 as a string).
    assert resolve(merge({"scheme": "rope", "rope_theta": "1e6", "base": 1000000})).scheme.base == 1e6


def test_gptj_n_positions_is_the_length(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": 64, "n_positions": 2048}')
    spec = resolve({"hf_config": str(path)})
    assert spec.length == 2048 and spec.scheme.max_position_embeddings == 2048


def test_a_scaling_override_keeps_the_models_keys_it_takes(invoke):
    # Llama 3.1 ships llama3 scaling with factor 8 over an original 8,192 tokens. Asked for YaRN ×8, the
    # ramp runs over those 8,192 tokens, not the 131,072 of max_position_embeddings: with d = 128 and
    # base 5e5, YaRN's correction dims are ⌊128·ln(8192/(2π·32)) / (2 ln 5e5)⌋ = ⌊18.08⌋ = 18 and
    # ⌈128·ln(8192/(2π·1)) / (2 ln 5e5)⌉ = ⌈34.98⌉ = 35 (over 131,072 the first would be 31).
    result = invoke("wavelengths", "--hf-config", hf("meta-llama--llama-3.1-8b.json"), "--scaling", "yarn", "--factor", "8", "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["params"]["original_max_position"] == 8192 and document["summary"]["yarn_correction_range"] == [18, 35]
    # linear takes the model's factor as it is.
    result = invoke("wavelengths", "--hf-config", hf("meta-llama--llama-3.1-8b.json"), "--scaling", "linear", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["params"]["factor"] == 8.0


def test_context_is_refused_where_no_scaling_reads_it(invoke):
    result = invoke("encode", "--scheme", "rope", "--context", "100", "-L", "4")
    assert result.exit_code == 2 and result.stderr.startswith("pecli: error: context: ")
    dynamic = invoke("encode", "--scheme", "rope", "--scaling", "dynamic", "--factor", "2",
                     "--max-position-embeddings", "64", "--context", "100", "-L", "4", "--quiet")
    assert dynamic.exit_code == 0, dynamic.stderr
