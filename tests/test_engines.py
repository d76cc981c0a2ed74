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
    from pecli.models.families import plan_of

    plan = plan_of(GPT_OSS, "gpt-oss-20b")
    (group,) = plan.groups  # both types on the same RoPE: one group answering to both names
    assert group.names == ("sliding_attention", "full_attention")
    assert group.windowed_layers == tuple(range(0, 24, 2))


@pytest.mark.parametrize("name", ["vllm", "sglang", "mlx", "llama.cpp"])
def test_gpt_oss_runs_on_every_engine(invoke, tmp_path, name):
    result = invoke("diff", "--hf-config", written(tmp_path, GPT_OSS), "--runtime", name, "--args", "")
    assert result.exit_code in (0, 1), result.output
