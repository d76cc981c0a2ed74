"""HunYuan v1's ``alpha`` against transformers' own rotary modules.

``tests/fixtures/models/hunyuan/hunyuan.json`` (its ``generate.py``; transformers 5.24.0, torch 2.13.0) holds,
for dense and MoE configs with and without ``alpha`` under ``rope_type`` ``dynamic`` and several head sizes, the
``inv_freq`` and attention scaling of ``HunYuanDenseV1RotaryEmbedding`` / ``HunYuanMoEV1RotaryEmbedding`` as
built, and after a forward pass four times past ``max_position_embeddings``. pecli's plan of the saved
config.json must give both, at the model's length and at the long one, to float32's rounding.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from pecli.errors import ConfigError
from pecli.models.families.from_config import plan_of
from pecli.models.plan import Origin

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "models" / "hunyuan" / "hunyuan.json").read_text())
CASES = {case["name"]: case for case in FIXTURE["cases"]}


def close(got: np.ndarray, expected: list[float]) -> bool:
    expected_array = np.asarray(expected, dtype=np.float64)
    return got.shape == expected_array.shape and np.allclose(got, expected_array, rtol=1e-6, atol=0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_plan_gives_the_rotary_modules_frequencies(name):
    case = CASES[name]
    (group,) = plan_of(case["config"], name).groups
    built = group.encoding.at_length(case["config"]["max_position_embeddings"])
    assert close(built.frequency_pairs().inv_freq, case["inv_freq"])
    assert math.isclose(built.attention_scaling, case["attention_scaling"], rel_tol=1e-6)
    long = group.encoding.at_length(case["long"]["length"])
    assert close(long.frequency_pairs().inv_freq, case["long"]["inv_freq"])
    assert math.isclose(long.attention_scaling, case["long"]["attention_scaling"], rel_tol=1e-6)


def test_the_fixture_holds_both_readings():
    """The cases cover what they claim: alpha read as ntk_alpha (fixed past the length), plain dynamic (grown),
    alpha under linear (transformers' own linear function, which does not read it)."""
    types = {case["rope_type"] for case in FIXTURE["cases"]}
    assert types == {"ntk_alpha", "dynamic", "linear"}
    assert {case["model_type"] for case in FIXTURE["cases"]} == {"hunyuan_v1_dense", "hunyuan_v1_moe"}
    for case in FIXTURE["cases"]:
        assert (case["inv_freq"] != case["long"]["inv_freq"]) == (case["rope_type"] == "dynamic")


def test_alpha_base_comes_from_the_models_code():
    case = CASES["dense-alpha"]
    (group,) = plan_of(case["config"], "x").groups
    # 10000 · 1000^(64/62), by hand: 10^4 · 10^(3·64/62) = 10^(4 + 96/31)
    assert math.isclose(group.options["base"], 10 ** (4 + 96 / 31), rel_tol=1e-12)
    assert "rope_scaling" not in group.options
    (source,) = group.sources_of("base")
    assert source.origin is Origin.MODEL_CODE and "alpha" in source.key


def with_block(case: str, **changes) -> dict:
    config = json.loads(json.dumps(CASES[case]["config"]))
    config["rope_parameters"].update(changes)
    return {key: value for key, value in config.items() if value is not None}


def test_alpha_outside_dynamic_is_ignored_as_the_model_does():
    """Under another type the model's code calls transformers' own functions, which never read alpha."""
    config = with_block("dense-alpha", rope_type="linear", factor=2.0)
    plain = with_block("dense-alpha", rope_type="linear", factor=2.0)
    del plain["rope_parameters"]["alpha"]
    plan = plan_of(config, "x")
    assert np.array_equal(plan.groups[0].encoding.frequency_pairs().inv_freq,
                          plan_of(plain, "x").groups[0].encoding.frequency_pairs().inv_freq)
    assert any("alpha" in warning and "ignores" in warning for warning in plan.warnings)


@pytest.mark.parametrize("changes, words", [
    ({"alpha": -2.0}, "positive number"),
    ({"alpha": "big"}, "positive number"),
    ({"factor": None}, "needs a factor"),
])
def test_an_alpha_block_transformers_refuses_is_refused(changes, words):
    config = with_block("dense-alpha", **changes)
    config["rope_parameters"] = {k: v for k, v in config["rope_parameters"].items() if v is not None}
    with pytest.raises(ConfigError, match=words):
        plan_of(config, "x")


def test_alpha_without_head_dim_is_refused():
    """transformers' ntk_alpha reads config.head_dim itself (None: a TypeError), not hidden_size / heads."""
    config = with_block("dense-alpha")
    config.pop("head_dim", None)
    with pytest.raises(ConfigError, match="head_dim"):
        plan_of(config, "x")
