"""vLLM and a config that names no ``architectures``: what vLLM's own code did (``tests/fixtures/engines/vllm``, the
``noarch/`` cases: transformers' default configs without the key) and what pecli's vLLM module says.

vLLM 0.33.0 names such a config by transformers' base model class (``LlamaModel``,
``transformers_utils/config.py:939-949``). Its registry maps LlamaModel, MistralModel, Qwen2Model and Gemma2Model
to their causal-LM files: it generates, with the same rotary. Phi3Model, Qwen3Model, Gemma3TextModel and
GPTNeoXModel it runs as embedding models (runner pooling, convert embed): the same rotary, no text generated.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pecli.engines import engine

CASES = {case["id"]: case for case in
         json.loads((Path(__file__).parent / "fixtures/engines/vllm/cases.json").read_text())["cases"]}
#: What the generator recorded (vLLM's ModelConfig.runner_type), written here as expectations of their own.
RUNNERS = {"llama": "generate", "qwen2": "generate", "gemma2": "generate", "mistral": "generate", "phi3": "pooling",
           "qwen3": "pooling", "gemma3_text": "pooling", "gpt_neox": "pooling"}


@pytest.mark.parametrize("model_type, runner", sorted(RUNNERS.items()))
def test_the_fixtures_hold_what_vllm_did_without_architectures(model_type, runner):
    case = CASES[f"noarch/{model_type}"]
    assert "architectures" not in case["config"] and case["accepted"]
    assert case["runner"] == runner and case["architecture"].endswith("Model")


@pytest.mark.parametrize("case_id", sorted(key for key, case in CASES.items() if case["accepted"]))
def test_pecli_says_vllm_runs_an_embedding_model_exactly_where_it_did(case_id):
    # Every case vLLM loaded (its refusals are held in test_engines_fixtures.py): the noarch/ ones, the fourth and
    # fifth passes' default configs (no architectures either: embedding models), the remedy (--hf-overrides naming
    # the class: generate) and every config naming its class.
    case = CASES[case_id]
    config = case["config"]
    if not isinstance(config, dict):  # a repository path, or its member
        config = json.loads((Path(__file__).parent.parent / config).read_text())
        config = config[case["member"]] if case.get("member") else config
    run = engine("vllm").run(config, case["args"], env=case.get("env") or {})
    said = [d for d in run.departures if d.what == "architectures"]
    assert bool(said) == (case["runner"] != "generate"), (case_id, case["runner"], said)


def test_diff_names_the_embedding_model_and_its_remedy(run_main, tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(CASES["noarch/phi3"]["config"]))
    done = run_main("diff", "--runtime", "vllm", "--hf-config", "config.json", "--args", "", "--json")
    assert done.returncode == 1
    text = json.dumps(json.loads(done.stdout))
    assert "Phi3Model" in text and "runner pooling" in text and '\\"architectures\\": [\\"Phi3ForCausalLM\\"]' in text
    named = run_main("diff", "--runtime", "vllm", "--hf-config", "config.json",
                     "--args", "--hf-overrides '{\"architectures\": [\"Phi3ForCausalLM\"]}'")
    assert named.returncode == 0 and named.stdout.startswith("same:")
    (tmp_path / "config.json").write_text(json.dumps(CASES["noarch/llama"]["config"]))
    assert run_main("diff", "--runtime", "vllm", "--hf-config", "config.json", "--args", "").returncode == 0
