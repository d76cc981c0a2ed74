"""The rope types the engines' code compares, held as scaling records, against the engines' own lists; and
the changes an engine makes to a group, applied through its scheme with their origin recorded.

The literal lists below are copied from the engines' installed code at the versions measured (vLLM 0.33.0,
mlx-lm 0.32.2; file and line beside each): they are the truth the records must spell.
"""

from __future__ import annotations

import math

import pytest

from pecli.engines import mlx, mlx_load_refusals, vllm
from pecli.engines.vocabulary import Vocabulary, hf_record
from pecli.models.group_change import changed
from pecli.models.plan import LayerGroup, Origin, Source
from pecli.schemes.build import build_scheme
from pecli.schemes.scaling.linear import LINEAR
from pecli.schemes.scaling.unscaled import NO_SCALING
from pecli.schemes.scaling.yarn import YARN

# vllm/config/model.py:2613-2620: the types whose factor _get_and_verify_max_len does not multiply in
VLLM_UNSCALED = {"su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling"}
# mlx_lm/models/rope_utils.py:305-373 (initialize_rope)
MLX_BUILT = {"default", "linear", "dynamic", "llama3", "yarn", "longrope", "deepseek_yarn", "telechat3-yarn", "proportional",
             "mrope"}
# rope_utils.py:326: the words built as YarnRoPE besides yarn
MLX_YARN_SPELLINGS = {"deepseek_yarn", "telechat3-yarn"}
# hunyuan.py:39, hunyuan_v1_dense.py:33: the keys a truthy rope_scaling must hold (no check of its type)
MLX_NTK_ALPHA_KEYS = {"hunyuan": {"factor", "type"}, "hunyuan_v1_dense": {"alpha", "factor", "type"}}
# mlx_lm/models/phi3.py:41, internlm2.py:40, internlm3.py:41, qwen2_moe.py:42, nemotron.py:45
MLX_CHECKED = {"phi3": {"longrope", "su", "linear"}, "internlm2": {"linear", "dynamic"},
               "internlm3": {"linear", "dynamic"}, "qwen2_moe": {"linear"}, "nemotron": {"linear"}}


def test_vllm_tables_spell_its_code():
    assert vllm.UNSCALED_TYPES.spellings == VLLM_UNSCALED
    # get_rope's branches (rotary_embedding/__init__.py:167-313) and the keys each reads without a default
    dispatch = {word: keys for types, keys in vllm.GET_ROPE_KEYS for word in types.spellings}
    assert dispatch == {"linear": ("factor",), "ntk": ("factor",), "yarn": ("factor",),
                        "llama3": ("factor", "low_freq_factor", "high_freq_factor"),
                        "longrope": ("short_factor", "long_factor"), "su": ("short_factor", "long_factor")}


def test_mlx_tables_spell_its_code():
    assert mlx.BUILT_TYPES.spellings == MLX_BUILT
    for module, words in MLX_CHECKED.items():
        assert mlx_load_refusals.CHECKED_BLOCKS[module][2].spellings == words, module
    assert set(mlx_load_refusals.CHECKED_BLOCKS) == set(MLX_CHECKED)
    assert mlx.YARN_SPELLINGS.spellings == MLX_YARN_SPELLINGS
    assert {module: set(keys) for module, (keys, _, _) in mlx.NTK_ALPHA.items()} == MLX_NTK_ALPHA_KEYS


def test_a_word_is_looked_up_as_the_engine_compares_it():
    # the HF spelling only: not pecli's name for no scaling, not pecli's aliases
    assert hf_record("default") is NO_SCALING and hf_record("yarn") is YARN
    assert hf_record("none") is None and hf_record("su") is None and hf_record(None) is None
    assert vllm.UNSCALED_TYPES.holds("su") and not vllm.UNSCALED_TYPES.holds("linear")
    assert not mlx.BUILT_TYPES.holds("su") and not mlx.BUILT_TYPES.holds("none") and mlx.BUILT_TYPES.holds("default")


def test_a_vocabulary_refuses_a_pecli_type_and_an_undeclared_word():
    with pytest.raises(RuntimeError, match="now pecli scaling types"):
        Vocabulary("toy", {"yarn": "toy.py:1"})
    words = Vocabulary("toy", {"toy_yarn": "toy.py:1"})
    assert words.types(LINEAR, "toy_yarn").holds("toy_yarn")
    with pytest.raises(RuntimeError, match="neither"):
        words.types("toy_rope")


def _group() -> LayerGroup:
    options = {"scheme": "rope", "dim": 64, "layout": "half", "base": 10000.0,
               "rope_scaling": {"rope_type": "linear", "factor": 4.0}, "max_position_embeddings": 4096}
    sources = (Source("base", "rope_theta", Origin.CONFIG, repr(10000.0)),
               Source("rope_scaling", "rope_scaling", Origin.CONFIG, repr(options["rope_scaling"])))
    return LayerGroup("all", tuple(range(4)), options, sources=sources)


def test_a_change_keeps_the_model_order_and_records_its_origin():
    group = _group()
    run = changed(group, {"rope_scaling": None, "base": 20000.0}, by="engine X: fixed base", origin=Origin.MODEL_CODE)
    assert list(run.options) == ["scheme", "dim", "layout", "base", "max_position_embeddings"]
    assert run.sources_of("base") == (Source("base", "engine X: fixed base", Origin.MODEL_CODE, repr(20000.0)),)
    assert run.sources_of("rope_scaling") == ()
    # the scheme is built through the change: θ_0 = 1, θ_1 = 20000^(-2/64), unscaled
    pairs = run.encoding.frequency_pairs()
    assert math.isclose(pairs.inv_freq[1], 20000.0 ** (-2 / 64), rel_tol=1e-15)
    # what the options say builds the same numbers
    rebuilt = build_scheme("rope", {k: v for k, v in run.options.items() if k != "scheme"}).frequency_pairs()
    assert list(rebuilt.inv_freq) == list(pairs.inv_freq)


def test_a_flag_said_anew_comes_after_the_model_keys():
    group = _group()
    run = changed(group, {"base": 500000.0, "rope_scaling": {"rope_type": "yarn", "factor": 2.0,
                                                             "original_max_position_embeddings": 4096}},
                  dropped=("rope_scaling", "base"), by="--rope-freq-base", origin=Origin.ENGINE_FLAG)
    assert list(run.options) == ["scheme", "dim", "layout", "max_position_embeddings", "base", "rope_scaling"]
    assert run.encoding.rope_scaling.record is YARN
    assert [s.origin for s in run.sources_of("rope_scaling")] == [Origin.ENGINE_FLAG]


def test_an_engine_rule_records_its_code_as_the_source():
    config = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 256,
              "num_attention_heads": 4, "num_hidden_layers": 2, "max_position_embeddings": 4096,
              "rope_theta": 10000.0, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}
    run = vllm.ENGINE.run(config)
    group = run.plan.groups[0]
    assert "rope_scaling" not in group.options  # vLLM fixes the base: no growing scaling left
    assert [s.origin for s in group.sources_of("base")] == [Origin.MODEL_CODE]
    assert group.sources_of("dim") and all(s.origin is not Origin.MODEL_CODE for s in group.sources_of("dim"))


def test_a_users_key_goes_through_the_same_change_with_its_origin():
    from pecli.models.group_change import user_changed

    group = _group()
    run = user_changed(group, {"factor": 8.0}, by={"factor": "--factor"})
    assert run.sources_of("factor") == (Source("factor", "--factor", Origin.USER, repr(8.0)),)
    # linear ×8 over θ_i = 10000^(-2i/64): θ_1 / 8
    assert math.isclose(run.encoding.frequency_pairs().inv_freq[1], 10000.0 ** (-2 / 64) / 8, rel_tol=1e-15)
    assert group.sources_of("base") == run.sources_of("base")  # the model's other settings keep their keys
