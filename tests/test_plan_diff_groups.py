"""``pecli diff`` of two configs whose plans are not RoPE groups over one layer count: an encoder–decoder
(T5: an ``encoder`` and a ``decoder`` group over the same layer indices, the encoder's buckets bidirectional,
the decoder's not, ``modeling_t5.py``) and M-RoPE (Qwen2-VL), whose options are compared one by one."""

from __future__ import annotations

import json
from pathlib import Path

import pecli

ROOT = Path(__file__).parent.parent
#: t5-small's position keys: 6 layers a stack, 32 buckets over a distance of 128.
T5 = {"model_type": "t5", "d_model": 512, "num_heads": 8, "num_layers": 6, "d_kv": 64,
      "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128}


def test_an_encoder_decoder_is_the_same_as_itself(invoke, tmp_path):
    # The encoder was paired with the decoder too: "bidirectional True against False" for one model.
    assert pecli.diff(T5, dict(T5)).same
    path = tmp_path / "config.json"
    path.write_text(json.dumps(T5))
    result = invoke("diff", "--hf-config", path, "--hf-config", path, "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["differences"] == [], result.stdout


def test_an_encoder_decoder_differs_stack_by_stack():
    found = pecli.diff(T5, dict(T5, relative_attention_num_buckets=64))
    # one difference in each stack, the buckets, 64 against 32; the stacks' own directions are not compared
    assert [(d.what, d.candidate_value, d.reference_value) for d in found.differences] == [("buckets", 64, 32)] * 2
    assert all(d.effect == "a different bias or table" for d in found.differences)


def test_an_mrope_section_is_named_with_what_it_does():
    config = json.loads((ROOT / "sample_configs" / "hf" / "qwen--qwen2-vl-7b-instruct-gptq-int8.json").read_text())
    other = json.loads(json.dumps(config))
    other["rope_scaling"]["mrope_section"] = [24, 20, 20]  # the published config says [16, 24, 24]
    (difference,) = pecli.diff(config, other).differences
    assert (difference.what, difference.candidate_value, difference.reference_value) == \
        ("mrope_section", [24, 20, 20], [16, 24, 24])
    assert difference.effect == "other pairs follow the time, height and width coordinates"


def test_a_plan_without_one_layer_count_names_no_count_in_its_title():
    # T5's encoder and decoder are stacks of their own: the plan has no single layer count, and said "None layers"
    title = repr(pecli.model_plan(T5)).splitlines()[0]
    assert title == "<PositionPlan: config: T5 (t5)>"
    llama = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 6}
    assert repr(pecli.model_plan(llama)).splitlines()[0].endswith(", 6 layers>")
