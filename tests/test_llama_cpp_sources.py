"""llama.cpp's words for scaling types (one table keyed by the scaling records), and where the settings of a plan
llama.cpp runs came from: the GGUF keys of a file, the engine flags of a command line."""

import json
from pathlib import Path

from pecli.models.gguf import plan_of_metadata
from pecli.models.llama_cpp_scaling import FLAG_WORDS, GGUF_WORDS, Converted, of_hf, of_word
from pecli.models.plan import Origin
from pecli.models.runtime_flags import runtime_plan
from pecli.models.sources.config_json import plan_of_config

FIXTURES = Path(__file__).parent / "fixtures" / "models" / "rope"


def test_llama_cpp_words_are_its_own():
    # src/llama-model.cpp LLAMA_ROPE_SCALING_TYPES; common/arg.cpp --rope-scaling {none,linear,yarn}
    assert GGUF_WORDS == ("none", "linear", "yarn", "longrope")
    assert FLAG_WORDS == ("none", "linear", "yarn")
    assert of_word("default") is None and of_word("su") is None


def test_a_hf_type_finds_what_the_converter_writes():
    assert of_hf("default").word == "none" and of_hf("su").word == "longrope"
    assert of_hf("llama3").converted is Converted.DIVISORS and of_hf("llama3").word is None
    assert of_hf("dynamic").converted is Converted.NOTHING
    assert of_hf("yarn").ramps and not of_hf("linear").ramps
    assert of_hf("ntk") is None  # pecli's static NTK: transformers and the converter have no such type


def test_a_gguf_plan_names_the_keys_its_settings_came_from():
    values = {"general.architecture": "llama", "llama.block_count": 4, "llama.context_length": 8192,
              "llama.embedding_length": 512, "llama.attention.head_count": 8, "llama.rope.freq_base": 500000.0,
              "llama.rope.scaling.type": "linear", "llama.rope.scaling.factor": 4.0}
    group, = plan_of_metadata(values, {}, "x.gguf").groups
    said = lambda setting: {(s.key, s.origin) for s in group.sources_of(setting)}  # noqa: E731
    assert said("base") == {("llama.rope.freq_base", Origin.GGUF)}
    assert said("rope_scaling") == {("llama.rope.scaling.type", Origin.GGUF), ("llama.rope.scaling.factor", Origin.GGUF)}
    assert said("max_position_embeddings") == {("llama.context_length", Origin.GGUF)}
    assert said("dim") == {("llama.embedding_length", Origin.GGUF), ("llama.attention.head_count", Origin.GGUF)}


def test_a_setting_the_flags_change_names_the_flags_that_did():
    config = json.loads((FIXTURES / "gemma3_text.json").read_text())["config"]
    model = plan_of_config(config, "config.json")
    plan = runtime_plan(model, "llama.cpp", "--rope-scaling yarn --rope-scale 4 -c 16384")
    full = next(g for g in plan.groups if g.name == "full_attention")
    # -c 16384 changes no frequency here (yarn's original length is the file's): not a source
    assert {(s.key, s.origin) for s in full.sources_of("rope_scaling")} == {
        ("--rope-scaling", Origin.ENGINE_FLAG), ("--rope-scale", Origin.ENGINE_FLAG)}
    assert full.sources_of("dim") == next(g for g in model.groups if "full_attention" in g.names).sources_of("dim")
    assert all(s.origin is not Origin.ENGINE_FLAG for g in plan.groups if g.windowed for s in g.sources)


def test_a_key_an_override_flag_gives_is_the_flags():
    from pecli.engines import engine

    config = json.loads((FIXTURES / "llama.json").read_text())["config"]
    run = engine("vllm").run(config, """--hf-overrides '{"rope_parameters": {"rope_theta": 500000.0, "rope_type": "default"}}'""")
    group, = (g for g in run.plan.groups if g.options)
    assert group.options["base"] == 500000.0
    assert {(s.key, s.origin) for s in group.sources_of("base")} == {("--hf-overrides rope_parameters", Origin.ENGINE_FLAG)}
    assert all(s.origin is Origin.CONFIG for s in group.sources_of("max_position_embeddings"))


LLAMA_GGUF = {"general.architecture": "llama", "llama.block_count": 4, "llama.context_length": 8192,
              "llama.embedding_length": 512, "llama.attention.head_count": 8, "llama.rope.freq_base": 500000.0,
              "llama.rope.scaling.type": "linear", "llama.rope.scaling.factor": 4.0}


def _under_flags(values: dict, args: str, tensors: dict | None = None):
    from pecli.models.gguf_flags import plan_under_flags
    from pecli.models.runtime_flags import checked_flags, parse_flags

    group, = plan_under_flags(values, tensors or {}, "x.gguf", None, checked_flags(parse_flags(args)), args).groups
    return lambda setting: {(s.key, s.origin) for s in group.sources_of(setting)}  # noqa: E731


def test_a_gguf_setting_a_flag_changes_names_the_flag():
    # --rope-freq-base 20000 replaces the file's base (llama_context: cparams.rope_freq_base = the flag's when given);
    # the file's other settings keep their keys
    said = _under_flags(LLAMA_GGUF, "--rope-freq-base 20000")
    assert said("base") == {("--rope-freq-base", Origin.ENGINE_FLAG)}
    assert said("rope_scaling") == {("llama.rope.scaling.type", Origin.GGUF), ("llama.rope.scaling.factor", Origin.GGUF)}
    assert said("layout") == {("general.architecture", Origin.GGUF), ("attn_q, attn_k (rows permuted)", Origin.CONVERTER)}
    # --rope-scale 2 replaces the file's factor 4 (freq_scale = 1/2): the scaling is the flag's; the base the file's
    said = _under_flags(LLAMA_GGUF, "--rope-scale 2")
    assert said("rope_scaling") == {("--rope-scale", Origin.ENGINE_FLAG)}
    assert said("base") == {("llama.rope.freq_base", Origin.GGUF)}
    # no flag: the file's keys, as the file's own reading names them
    assert _under_flags(LLAMA_GGUF, "")("base") == {("llama.rope.freq_base", Origin.GGUF)}


def test_rope_freqs_stays_the_converters_under_a_flag():
    # a llama3 file: rope_freqs divides the frequencies at whatever base the flag gives (ggml_rope_ext's freq_factors)
    import numpy as np

    values = {k: v for k, v in LLAMA_GGUF.items() if not k.startswith("llama.rope.scaling.")}
    tensors = {"rope_freqs": np.array([1.0] * 16 + [8.0] * 16, dtype=np.float32)}
    said = _under_flags(values, "--rope-freq-base 20000", tensors)
    assert said("inv_freq") == {("rope_freqs (tensor)", Origin.CONVERTER), ("--rope-freq-base", Origin.ENGINE_FLAG)}


def test_a_config_run_names_the_converters_rope_freqs():
    # Llama 3.1's llama3 block becomes the rope_freqs tensor (convert_hf_to_gguf.py, LlamaModel.generate_extra_tensors):
    # llama.cpp runs its frequencies divided by it, with or without flags
    config = json.loads((Path(__file__).parent.parent / "sample_configs" / "hf" / "meta-llama--llama-3.1-8b.json").read_text())
    model = plan_of_config(config, "config.json")
    for args, flags in (("", set()), ("-c 8192", set()), ("--rope-freq-base 1000000", {"--rope-freq-base"})):
        group, = runtime_plan(model, "llama.cpp", args).groups
        found = {(s.key, s.origin, s.converted_from) for s in group.sources_of("inv_freq")}
        assert found == {("rope_freqs (tensor)", Origin.CONVERTER, "rope_scaling llama3"),
                         *((flag, Origin.ENGINE_FLAG, "") for flag in flags)}, args
