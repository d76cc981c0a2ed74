"""DeepSeek's logit scale when the user names another scaling type: the number transformers computes for
the config the request stands for.

``yarn_apply_mscale`` (``modeling_deepseek_v3.py``, ``modeling_deepseek_v2.py``, transformers 5.24.0) puts
mscale(factor, mscale_all_dim)² on the softmax under every ``rope_type`` but default. A type asked for alone
(``--scaling linear``) keeps the model's keys it takes, and in these models' attention every type takes
``mscale_all_dim``: the request stands for the model's block under the new type with the model's
``mscale_all_dim``. A block given whole (``--set rope_scaling=...``) is the config's whole block.

Known values: ``tests/fixtures/models/logit/switched.json``, transformers' own attention and rotary modules
over each block (``generate_switched.py``), and by hand: (0.1·ln 4 + 1)² = 1.29648.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pecli.config import resolve

ROOT = Path(__file__).parent.parent
CASES = json.loads((ROOT / "tests" / "fixtures" / "models" / "logit" / "switched.json").read_text())["cases"]
V3 = ROOT / "sample_configs" / "hf" / "deepseek-ai--deepseek-v3.json"
V2_LITE = ROOT / "sample_configs" / "hf" / "deepseek-ai--deepseek-coder-v2-lite-base.json"


def transformers_scale(case: str) -> float:
    """The whole factor on q·k/√d in transformers: the softmax part times the rotary factor on q and k."""
    found = CASES[case]
    return found["softmax_ratio"] * found["attention_scaling"] ** 2


def config_with(tmp_path: Path, case: str) -> Path:
    """The case's config as a file: the sample config with the case's RoPE block."""
    found = CASES[case]
    config = json.loads((ROOT / "sample_configs" / "hf" / f"{found['config']}.json").read_text())
    config["rope_scaling"] = found["rope_scaling"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return path


def scale_of(**request) -> float:
    group = resolve({**request, "length": 64}).user_group
    assert group is not None and not group.logit_scale_unknown
    return group.logit_scale.factor


def test_the_hand_value():
    assert transformers_scale("v3 linear 4 + mscale_all_dim") == pytest.approx((0.1 * math.log(4) + 1) ** 2, rel=1e-11)


@pytest.mark.parametrize("case", sorted(CASES))
def test_pecli_reads_each_block_as_transformers_does(tmp_path, case):
    plan = resolve({"hf_config": str(config_with(tmp_path, case)), "length": 64}).plan
    assert plan.single.logit_scale.factor == pytest.approx(transformers_scale(case), rel=1e-11)


@pytest.mark.parametrize(("request_keys", "case"), [
    ({"scaling": "linear", "factor": 4}, "v3 linear 4 + mscale_all_dim"),
    ({"scaling": "dynamic", "factor": 4}, "v3 dynamic 4 + mscale_all_dim"),
    ({"scaling": "llama3", "factor": 4, "low_freq_factor": 1, "high_freq_factor": 4}, "v3 llama3 4 + mscale_all_dim"),
    ({"factor": 4}, "v3 yarn 4 + mscale 1 + mscale_all_dim"),
    ({"rope_scaling": {"rope_type": "linear", "factor": 4}}, "v3 linear 4"),
    ({"rope_scaling": {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 4096}}, "v3 yarn 4"),
])
def test_a_users_type_over_deepseek_v3(request_keys, case):
    assert scale_of(hf_config=str(V3), **request_keys) == pytest.approx(transformers_scale(case), rel=1e-11)


def test_deepseek_v2s_own_mscale_all_dim_carries_over():
    # V2-Lite's block: yarn, factor 40, mscale 0.707, mscale_all_dim 0.707
    assert scale_of(hf_config=str(V2_LITE), scaling="linear", factor=4) == pytest.approx(
        transformers_scale("v2 lite linear 4 + mscale_all_dim"), rel=1e-11)


def test_over_a_linear_block_with_mscale_all_dim(tmp_path):
    # the model's block: linear, factor 4, mscale_all_dim 1 (extend's patches write such blocks)
    path = str(config_with(tmp_path, "v3 linear 4 + mscale_all_dim"))
    # yarn alone keeps the model's mscale_all_dim, which yarn takes too
    assert scale_of(hf_config=path, scaling="yarn", original_max_position=4096) == pytest.approx(
        transformers_scale("v3 yarn 4 + mscale_all_dim"), rel=1e-11)
    # the user's own mscale_all_dim wins over the model's
    assert scale_of(hf_config=path, scaling="yarn", original_max_position=4096, mscale_all_dim=0.5) == pytest.approx(
        transformers_scale("v3 yarn 4 + mscale_all_dim 0.5"), rel=1e-11)
    # a block given whole carries none of the model's keys
    assert scale_of(hf_config=path, rope_scaling={"rope_type": "linear", "factor": 4}) == pytest.approx(
        transformers_scale("v3 linear 4"), rel=1e-11)


def test_a_carried_mscale_all_dim_beside_a_users_mscale_is_unknown(tmp_path, invoke):
    # yarn's factor on cos and sin would read the model's mscale_all_dim beside the user's mscale, and the
    # frequencies built from the user's keys do not hold it: pecli says it does not know
    path = config_with(tmp_path, "v3 linear 4 + mscale_all_dim")
    group = resolve({"hf_config": str(path), "scaling": "yarn", "mscale": 1, "length": 64}).user_group
    assert "mscale_all_dim" in group.logit_scale_unknown
    result = invoke("wavelengths", "--hf-config", path, "--scaling", "yarn", "--mscale", "1", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["logit_scale"] is None
    assert result.stderr.count("give --mscale-all-dim") == 1


def test_wavelengths_says_the_scale_under_linear(invoke):
    result = invoke("wavelengths", "--hf-config", V3, "--scaling", "linear", "--factor", "4", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["logit_scale"] == pytest.approx(transformers_scale("v3 linear 4 + mscale_all_dim"),
                                                                     rel=1e-11)


@pytest.mark.parametrize(("request_keys", "case"), [
    ({"scaling": "linear", "factor": 4, "mscale_all_dim": 0.5}, "v3 linear 4 + mscale_all_dim 0.5"),
    ({"rope_scaling": {"rope_type": "linear", "factor": 4, "mscale_all_dim": 0.5}}, "v3 linear 4 + mscale_all_dim 0.5"),
    ({"scaling": "none", "mscale_all_dim": 0.5}, "v3 default + mscale_all_dim 0.5"),
    ({"scaling": "dynamic", "factor": 4, "mscale_all_dim": 1}, "v3 dynamic 4 + mscale_all_dim"),
])
def test_a_users_mscale_all_dim_beside_a_type_that_does_not_take_it(request_keys, case):
    # the request stands for the config whose block it writes, which pecli reads (test above) as transformers
    # does: the frequencies of the type, mscale(factor, mscale_all_dim)² on the softmax under any type but default
    assert scale_of(hf_config=str(V3), **request_keys) == pytest.approx(transformers_scale(case), rel=1e-11)


def test_the_command_line_agrees_with_the_config(tmp_path, invoke):
    # by hand: (0.1·0.5·ln 4 + 1)² = 1.14343
    assert transformers_scale("v3 linear 4 + mscale_all_dim 0.5") == pytest.approx((0.05 * math.log(4) + 1) ** 2, rel=1e-11)
    flags = invoke("wavelengths", "--hf-config", V3, "--scaling", "linear", "--factor", "4", "--mscale-all-dim", "0.5",
                   "--json")
    config = invoke("wavelengths", "--hf-config", config_with(tmp_path, "v3 linear 4 + mscale_all_dim 0.5"), "--json")
    assert flags.exit_code == 0 and config.exit_code == 0, flags.stderr + config.stderr
    by_flags, by_config = json.loads(flags.stdout), json.loads(config.stdout)
    assert by_flags["logit_scale"] == pytest.approx(transformers_scale("v3 linear 4 + mscale_all_dim 0.5"), rel=1e-11)
    assert by_config["logit_scale"] == by_flags["logit_scale"]
    assert [row["inv_freq"] for row in by_flags["pairs"]] == [row["inv_freq"] for row in by_config["pairs"]]


def test_mscale_all_dim_beside_linear_stays_refused_where_no_attention_reads_it(invoke):
    # Llama's attention reads no mscale_all_dim: the key means nothing there, in a config as on the command line
    result = invoke("wavelengths", "--hf-config", ROOT / "sample_configs" / "hf" / "meta-llama--llama-2-7b-hf.json",
                    "--scaling", "linear", "--factor", "4", "--mscale-all-dim", "1")
    assert result.exit_code == 2 and "mscale_all_dim" in result.stderr


def test_mscale_all_dim_without_factor_is_refused_as_transformers_fails(tmp_path, invoke):
    # transformers 5.24.0: yarn_apply_mscale (modeling_deepseek_v3.py:268-273) reads rope_parameters["factor"]
    # beside a truthy mscale_all_dim under any type but default; a longrope block may leave factor out (KeyError)
    config = json.loads(V3.read_text())
    config["rope_scaling"] = {"rope_type": "longrope", "short_factor": [1.0] * 32, "long_factor": [2.0] * 32,
                              "original_max_position_embeddings": 4096, "mscale_all_dim": 1.0}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = invoke("wavelengths", "--hf-config", path)
    assert result.exit_code == 2 and "KeyError: 'factor'" in result.stderr and result.stderr.count("\n") == 1
