"""The engine registry (pecli/engines): its records, their flags read as each engine's own parser reads
them (hostile input: exit 2 and one line, before any work), and ``--runtime`` on models without RoPE,
M-RoPE models and gpt-oss's published config (never exit 3). The engines' numbers themselves are held
against their own code in ``test_engines_fixtures.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pecli.engines import ENGINES, engine, names
from pecli.errors import ConfigError

ROOT = Path(__file__).parent.parent
SAMPLES = ROOT / "sample_configs" / "hf"
OTHER = ROOT / "tests" / "fixtures" / "models" / "other"

#: gpt-oss-20b's published config.json, its position keys (no layer_types).
GPT_OSS = {"model_type": "gpt_oss", "head_dim": 64, "hidden_size": 2880, "num_attention_heads": 64,
           "num_key_value_heads": 8, "num_hidden_layers": 24, "max_position_embeddings": 131072,
           "initial_context_length": 4096, "sliding_window": 128, "rope_theta": 150000,
           "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                            "original_max_position_embeddings": 4096, "rope_type": "yarn", "truncate": False}}


def written(tmp_path, config, name="config.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(config))
    return str(path)


def test_every_engine_is_one_record_with_its_version():
    assert names() == ("vllm", "sglang", "llama.cpp", "mlx")
    for name in ENGINES:
        record = engine(name)
        assert record.name == name and record.version and record.source
    with pytest.raises(ConfigError, match="'tgi' is not one of vllm, sglang, llama.cpp, mlx"):
        engine("tgi")


def test_gpt_oss_published_config_takes_the_layer_types_its_class_derives():
    # GptOssConfig.__post_init__: layer i is sliding_attention when (i + 1) % 2, else full_attention
    from pecli.models.families.from_config import plan_of

    plan = plan_of(GPT_OSS, "gpt-oss-20b")
    (group,) = plan.groups  # both types on the same RoPE: one group answering to both names
    assert group.names == ("sliding_attention", "full_attention")
    assert group.windowed_layers == tuple(range(0, 24, 2))


@pytest.mark.parametrize("name", ["vllm", "sglang", "mlx", "llama.cpp"])
def test_gpt_oss_runs_on_every_engine(invoke, tmp_path, name):
    result = invoke("diff", "--hf-config", written(tmp_path, GPT_OSS), "--runtime", name, "--args", "")
    assert result.exit_code in (0, 1), result.output


#: Flags each engine's own parser refuses, or that give a config no engine runs (issue 43): exit 2, one line.
HOSTILE = [
    ("vllm", "--max-model-len abc"), ("vllm", "--max-model-len 1e5"), ("vllm", "--max-model-len 4096.0"),
    ("vllm", "--max-model-len -5"), ("vllm", "--max-model-len 0"), ("vllm", "--max-model-len 1.5K"),
    ("vllm", "--max-model-len"), ("vllm", "--max-model-len 4096 --max-model-len 8192"),
    ("sglang", "--context-length abc"), ("sglang", "--context-length nan"), ("sglang", "--context-length -1"),
    ("sglang", "--context-length 0"), ("sglang", "--context-length 2^70"), ("sglang", "--context-length 1k"),
    ("vllm", "--hf-overrides '" + "[" * 60000 + "]" * 60000 + "'"),
    ("vllm", "--hf-overrides '" + '{"a":' * 60000 + "1" + "}" * 60000 + "'"),
    ("sglang", "--json-model-override-args '" + '{"a":' * 60000 + "1" + "}" * 60000 + "'"),
    ("vllm", "--hf-overrides '" + json.dumps({"a": "x" * (1 << 20)}) + "'"),
    ("vllm", """--hf-overrides '{"max_position_embeddings": 1e400}'"""),
    ("vllm", """--hf-overrides '{"max_position_embeddings": null}'"""),
    ("vllm", """--hf-overrides '{"max_position_embeddings": "x"}'"""),
    ("vllm", """--hf-overrides '{"max_position_embeddings": 4096.5}'"""),
    ("vllm", """--hf-overrides '{"rope_scaling": "yarn"}'"""),
    ("sglang", """--json-model-override-args '{"rope_scaling": "yarn"}'"""),
    ("sglang", """--json-model-override-args '{"max_position_embeddings": NaN}'"""),
    ("vllm", "--hf-overrides '[1, 2]'"), ("vllm", "--hf-overrides '{'"),
    ("vllm", "--rope-scale 4"), ("mlx", "--max-model-len 4096"), ("sglang", "NOT_AN_ENGINE_VAR=1 --context-length 4096"),
]


@pytest.mark.parametrize("name, args", HOSTILE, ids=[f"{n}-{a[:40]}" for n, a in HOSTILE])
def test_hostile_flags_are_one_line_and_exit_2(invoke, name, args):
    result = invoke("diff", "--hf-config", str(SAMPLES / "meta-llama--llama-3.1-8b.json"), "--runtime", name, "--args", args)
    assert result.exit_code == 2, result.output[:300]
    assert len(result.stderr.strip().splitlines()) == 1 and "internal error" not in result.stderr


def test_numbers_in_flags_are_read_as_the_engines_read_them():
    from pecli.engines.vllm import human_readable_int_or_auto

    # vllm/utils/argparse_utils.py: decimal suffixes ×1000, binary ×1024, -1 and auto: the derived length
    assert [human_readable_int_or_auto(t) for t in ("1k", "1K", "25.6k", "2M", "-1", "auto", "4096")] == \
        [1000, 1024, 25600, 2097152, -1, -1, 4096]
    config = json.loads((SAMPLES / "meta-llama--llama-3.1-8b.json").read_text())
    assert engine("vllm").run(config, "--max-model-len 1k").served == 1000
    assert engine("vllm").run(config, "--max-model-len auto").served == 131072
    # argparse's int(): SGLang takes 2**70 as a number, and refuses it as longer than it derives
    run = engine("sglang").run(config, f"--context-length {2 ** 70}")
    assert not run.accepted and "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN" in run.refused


NO_ROPE = ["gpt2", "bloom", "t5", "whisper", "mpt", "falcon", "opt"]
#: GPT-J's default config (GPTJConfig: n_positions 2048, n_embd 4096, n_head 16, n_layer 28, rotary_dim 64).
GPTJ = {"model_type": "gptj", "n_positions": 2048, "n_embd": 4096, "n_head": 16, "n_layer": 28, "rotary_dim": 64}


def model_config(name):
    if name == "gptj":
        return GPTJ
    if name == "qwen2_vl":
        return json.loads((SAMPLES / "qwen--qwen2-vl-7b-instruct-gptq-int8.json").read_text())
    return json.loads((OTHER / f"{name}.json").read_text())["config"]


@pytest.mark.parametrize("engine_name", ["vllm", "sglang", "mlx", "llama.cpp"])
@pytest.mark.parametrize("model", [*NO_ROPE, "gptj", "qwen2_vl"])
def test_runtime_never_exits_3(invoke, tmp_path, engine_name, model):
    result = invoke("diff", "--hf-config", written(tmp_path, model_config(model)), "--runtime", engine_name, "--args", "",
                    "--json")
    assert result.exit_code in (0, 1), result.output[:300]
    document = json.loads(result.stdout)
    assert document["engine"]["name"] == engine_name and document["engine"]["version"] == engine(engine_name).version


@pytest.mark.parametrize("model, served", [("gpt2", 1024), ("gptj", 2048), ("opt", 2048), ("qwen2_vl", 32768)])
def test_vllm_serves_models_without_rope_from_their_length_key(model, served):
    # vllm/transformers_utils/model_arch_config_convertor.py: the smallest of max_position_embeddings (GPT-2,
    # GPT-J: n_positions through the config's attribute_map), n_positions, …
    run = engine("vllm").run(model_config(model), "")
    assert run.accepted and run.served == served


def test_two_stacks_pair_by_name():
    # T5's encoder and decoder both number their layers from 0: a plan against itself is the same
    from pecli.models.families.from_config import plan_of
    from pecli.models.plan_diff import diff_plans

    plan = plan_of(model_config("t5"), "t5")
    assert diff_plans(plan, plan).same


def sample(name):
    return json.loads((SAMPLES / f"{name}.json").read_text())


#: Llama 3.2 1B as published: llama3 ×32 from 8,192, max_position_embeddings 131,072.
LLAMA32 = {"model_type": "llama", "hidden_size": 2048, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64,
           "num_hidden_layers": 16, "max_position_embeddings": 131072, "rope_theta": 500000.0,
           "rope_scaling": {"rope_type": "llama3", "factor": 32.0, "original_max_position_embeddings": 8192,
                            "high_freq_factor": 4.0, "low_freq_factor": 1.0}}


def test_vllm_rules_read_in_its_code():
    vllm = engine("vllm")
    # _get_and_verify_max_len: LongRoPE serves original_max_position_embeddings by default, and the rotary
    # module then keeps the short factors at every position (phi3_long_rope_scaled_rope.py: use_long_rope)
    phi = vllm.run(sample("microsoft--phi-3.5-mini-instruct"), "")
    assert phi.served == 4096 and [d.what for d in phi.departures] == ["LongRoPE factors", "served context"]
    assert vllm.run(sample("microsoft--phi-3.5-mini-instruct"), "--max-model-len 131072").served == 131072
    # Phi-3.5 with "rope_scaling": null loads (the fixture measured it; issue 41 said KeyError) and serves 131,072
    plain = vllm.run({**sample("microsoft--phi-3.5-mini-instruct"), "rope_scaling": None}, "")
    assert plain.accepted and plain.served == 131072
    # a dict override of rope_scaling goes through transformers' setter: rope_theta None unless given flat
    qwen = sample("qwen--qwen2.5-7b-instruct-yarn")
    assert "TypeError" in vllm.run(qwen, """--hf-overrides '{"rope_scaling": {"factor": 8.0}}'""").refused
    assert vllm.run(qwen, """--hf-overrides '{"rope_theta": 1e6, "rope_scaling": {"rope_type": "linear", "factor": 2.0}}'""").accepted
    assert vllm.run(qwen, """--hf-overrides '{"rope_parameters": {"factor": 8.0}}'""").refused == "KeyError: 'rope_type'"
    # a flat rope_theta the loaded config already holds is kept: said, not applied
    llama = sample("meta-llama--llama-3.1-8b")
    run = vllm.run(llama, """--hf-overrides '{"rope_theta": 1000000.0}'""")
    assert run.plan.groups[0].options["base"] == 500000.0 and run.departures[0].what == "--hf-overrides"
    # the cos/sin cache has max_position_embeddings rows: a longer --max-model-len reads past it
    long = vllm.run(sample("meta-llama--llama-2-7b-hf"), "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 --max-model-len 8192")
    assert long.cache_rows == 4096 and any(d.what == "cos/sin cache" for d in long.departures)
    # "gemma3" in the model type: no factor multiplied in; Llama 3.2 (llama3): its max_position_embeddings
    gemma = sample("google--gemma-3-4b-it")
    assert vllm.run(gemma, "").served == 131072 and not vllm.run(gemma, "--max-model-len 262144").accepted
    llama = vllm.run(LLAMA32, "")
    assert llama.served == 131072 and llama.departures == ()


def test_sglang_rules_read_in_its_code():
    sglang = engine("sglang")
    # get_context_length: × factor for linear (no original_max_position_embeddings in the block)
    linear = {**sample("meta-llama--llama-2-7b-hf"), "rope_scaling": {"rope_type": "linear", "factor": 4.0}}
    assert sglang.run(linear, "").served == 16384
    # stablelm.py: getattr(config, "rope_pct", getattr(config, "partial_rotary_factor", 1)) under transformers 5
    stablelm = json.loads((ROOT / "tests" / "fixtures" / "models" / "rope" / "stablelm.json").read_text())["config"]
    stablelm["architectures"] = ["StableLmForCausalLM"]  # model_config.py:699 indexes it (a default config has none)
    (group,) = [g for g in sglang.run(stablelm, "").plan.groups if g.options]
    assert "partial_rotary_factor" not in group.options
    # phi.py reads config.partial_rotary_factor, which transformers 5 keeps inside rope_parameters
    assert "AttributeError" in sglang.run({"model_type": "phi", "hidden_size": 2048, "num_attention_heads": 32,
                                           "num_hidden_layers": 2, "rope_theta": 10000.0,
                                           "architectures": ["PhiForCausalLM"]}, "").refused
    # model_config.py:699: ModelConfig indexes hf_config.architectures[0] whatever the model (fixtures: extra/llama
    # without architectures, extra/llama architectures [])
    bare = {k: v for k, v in sample("meta-llama--llama-2-7b-hf").items() if k != "architectures"}
    assert sglang.run(bare, "").refused == "TypeError: 'NoneType' object is not subscriptable"
    assert sglang.run({**bare, "architectures": []}, "").refused == "IndexError: list index out of range"


def test_sglang_fixes_llama4s_nope_layers():
    # llama4.py:384-396: use_rope = (layer_id + 1) % 4 != 0, hard-coded; no_rope_layers is not read
    llama4 = json.loads((ROOT / "tests" / "fixtures" / "models" / "rope" / "llama4_text.json").read_text())["config"]
    llama4["architectures"] = ["Llama4ForCausalLM"]  # model_config.py:699 indexes it (a default config has none)
    count = llama4["num_hidden_layers"]
    other = {**llama4, "no_rope_layers": [1] * (count - 1) + [0]}
    run = engine("sglang").run(other, "")
    nope = [g for g in run.plan.groups if g.options is None]
    assert nope and nope[0].layers == tuple(i for i in range(count) if (i + 1) % 4 == 0)
    assert "NoPE layers" in [d.what for d in run.departures]
    assert "NoPE layers" not in [d.what for d in engine("sglang").run(llama4, "").departures]


#: Configs with values the engines' rules read, broken: each engine answers, refuses as its code does, or pecli
#: says what is wrong (exit 2) — never an internal error.
BROKEN = [("rope_theta", "x"), ("rope_theta", True), ("rope_scaling", "yarn"), ("partial_rotary_factor", "0.5"),
          ("max_position_embeddings", "x"), ("max_position_embeddings", 0), ("rope_parameters", "x"),
          ("architectures", "x"), ("rope_scaling", {"rope_type": "yarn", "factor": "x"}),
          ("rope_scaling", {"rope_type": "longrope", "factor": 4}), ("model_max_length", "x"), ("rotary_pct", "x")]


@pytest.mark.parametrize("key, value", BROKEN)
@pytest.mark.parametrize("engine_name", ["vllm", "sglang", "mlx"])
def test_broken_configs_are_never_an_internal_error(invoke, tmp_path, engine_name, key, value):
    config = {**sample("meta-llama--llama-3.1-8b"), key: value}
    result = invoke("diff", "--hf-config", written(tmp_path, config), "--runtime", engine_name, "--args", "")
    assert result.exit_code in (0, 1, 2) and "internal error" not in result.stderr, result.output[:300]


def test_an_engine_refuses_a_block_without_the_keys_its_code_reads():
    # vLLM's get_rope reads rope_parameters["short_factor"] for longrope; mlx-lm's initialize_rope likewise
    config = {**sample("meta-llama--llama-3.1-8b"), "rope_scaling": {"rope_type": "longrope", "factor": 4.0}}
    assert engine("vllm").run(config, "").refused == "KeyError: 'short_factor'"
    assert engine("mlx").run(config, "").refused == "KeyError: 'short_factor'"


def test_a_model_file_pecli_has_not_measured_is_never_same():
    """vLLM runs Qwen3-Next on its own model file (registry), which the fixtures did not run: pecli says it cannot be sure."""
    from pecli.engines.compare import engine_diff
    from pecli.models.families.from_config import plan_of

    config = json.loads((ROOT / "tests" / "fixtures" / "models" / "rope" / "qwen3_next.json").read_text())["config"]
    config = {**config, "architectures": ["Qwen3NextForCausalLM"]}
    found = engine_diff(engine("vllm"), config, "", plan_of(config, "config.json"))
    assert not found.same
    assert any("cannot be sure" in line and "qwen3_next" in line for line in found.lines()), found.lines()


def test_phi4_mini_as_each_engine_serves_it():
    """Phi-4-mini as published (LongRoPE from 4,096, 96 of 128 dims rotated, 48 short factors all 1.0): vLLM serves
    original_max_position_embeddings and keeps the short factors (plain RoPE at base 10,000 on the 48 pairs); mlx-lm's
    SuScaledRoPE always takes the long factors, with √(1 + ln 32 / ln 4096) = 1.19024 on cos and sin (factor
    131072/4096 = 32, rope_utils.py:52-58)."""
    import math

    phi4 = sample("microsoft--phi-4-mini-instruct")
    vllm = engine("vllm").run(phi4, "")
    assert vllm.served == 4096 and [d.what for d in vllm.departures] == ["LongRoPE factors", "served context"]
    (group,) = [g for g in vllm.plan.groups if g.options]
    assert group.options["rope_scaling"]["short_factor"] == [1.0] * 48
    mlx = engine("mlx").run(phi4, "")
    (group,) = [g for g in mlx.plan.groups if g.options]
    block = group.options["rope_scaling"]
    assert block["short_factor"] == phi4["rope_scaling"]["long_factor"]
    assert math.isclose(block["attention_factor"], math.sqrt(1 + math.log(32) / math.log(4096)), rel_tol=1e-12)


def test_mlx_reads_a_present_null_as_given():
    """BaseModelArgs.from_dict passes every key the config has (mlx_lm/models/base.py:14-21): a required field
    present as null is given (None), not missing; an absent one is mlx-lm's TypeError."""
    llama4 = json.loads((ROOT / "tests" / "fixtures" / "models" / "rope" / "llama4_text.json").read_text())["config"]
    legacy = {k: v for k, v in llama4.items() if k != "rope_parameters"}
    legacy.update(rope_theta=500000.0, rope_scaling=None)
    assert engine("mlx").run({"model_type": "llama4", "text_config": legacy}, "").accepted
    del legacy["rope_scaling"]
    assert "missing 1 required positional argument: 'rope_scaling'" in \
        engine("mlx").run({"model_type": "llama4", "text_config": legacy}, "").refused


def test_mistral4_on_mlx_reads_its_scaling_from_rope_parameters_only():
    """mistral4.py:118-125 builds its rope from args.rope_parameters: a top-level rope_scaling (the older form) runs
    unscaled, said with the form that works."""
    mistral4 = json.loads((ROOT / "tests" / "fixtures" / "models" / "rope" / "mistral4.json").read_text())["config"]
    text = mistral4.get("text_config", mistral4)
    block = dict(text["rope_parameters"])
    legacy = {k: v for k, v in text.items() if k != "rope_parameters"}
    legacy.update(rope_theta=block.pop("rope_theta"), rope_scaling=block)
    legacy.pop("partial_rotary_factor", None)
    run = engine("mlx").run(legacy, "")
    (scaling,) = [d for d in run.departures if d.what == "scaling"]
    assert "from rope_parameters only" in scaling.effect and "rope_parameters" in scaling.remedy


def test_flag_words_split_as_shlex_splits_them():
    """pecli's linear-time splitter against the standard library's ``shlex.split``: the same words, the same errors."""
    import random
    import shlex

    from pecli.flag_words import shell_words

    rng = random.Random(42)
    alphabet = ["a", "b", " ", "\t", "\n", "'", '"', "\\", '\\"', "\v", "=", "é"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        try:
            want = ("words", shlex.split(text))
        except ValueError as error:
            want = ("error", str(error))
        try:
            got = ("words", shell_words(text))
        except ValueError as error:
            got = ("error", str(error))
        assert got == want, text
