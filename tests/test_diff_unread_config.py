"""``pecli diff --runtime E`` over a config pecli does not read as transformers does (a rope type only engines build):
the engine's own reading, where it has one, said as "not read", never "same" and never a number of pecli's own.

Known values by hand: ``deepseek_yarn`` ×8 from 4,096 with neither ``mscale`` nor ``mscale_all_dim`` puts
mscale(8, 1)/mscale(8, 0) = 0.1·ln 8 + 1 = 1.20794 on cos and sin (vLLM's ``DeepseekScalingRotaryEmbedding``; the
engines' fixtures measure the same: ``extra/llama deepseek_yarn`` of SGLang, 1.20794).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


@pytest.fixture
def deepseek_yarn_llama(tmp_path: Path) -> Path:
    config = json.loads((ROOT / "sample_configs" / "hf" / "meta-llama--llama-2-7b-hf.json").read_text())
    config["rope_scaling"] = {"rope_type": "deepseek_yarn", "factor": 8.0, "original_max_position_embeddings": 4096}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return path


@pytest.mark.parametrize("runtime", ["vllm", "sglang", "mlx"])
def test_an_engine_reads_what_pecli_does_not(invoke, deepseek_yarn_llama, runtime):
    result = invoke("diff", "--hf-config", deepseek_yarn_llama, "--runtime", runtime, "--args", "", "--json")
    assert result.exit_code == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["accepted"] is True and not document["same"]
    (difference,) = document["differences"]
    assert difference["what"] == "not read" and difference["hf_value"]["rope_type"] == "deepseek_yarn"
    built = difference["runtime_value"]
    assert built["rope_type"] == "yarn" and built["factor"] == 8.0
    # MLX's YarnRoPE puts the same magnitude on cos and sin; pecli's yarn gives it without attention_factor
    assert built.get("attention_factor", 0.1 * math.log(8) + 1) == pytest.approx(0.1 * math.log(8) + 1, rel=1e-12)


def test_without_an_engine_it_stays_refused(invoke, deepseek_yarn_llama):
    result = invoke("wavelengths", "--hf-config", deepseek_yarn_llama)
    assert result.exit_code == 2 and "deepseek_yarn" in result.stderr and result.stderr.count("\n") == 1


def test_a_config_no_reader_takes_is_refused_as_before(invoke, tmp_path):
    path = tmp_path / "config.json"
    path.write_text("{not json")
    result = invoke("diff", "--hf-config", path, "--runtime", "vllm", "--args", "")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
