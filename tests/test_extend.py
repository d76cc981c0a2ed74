"""pecli extend: candidates whose patches transformers reads as pecli does, measured, ranked, refused cleanly.

The fixtures (tests/fixtures/extend, generate.py) hold each candidate's patch and what transformers'
own rotary module computes from the config with the patch merged (versions in each file).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from pecli.extend.report import Candidate, adjacent_step, cost_of, extension_report, logit_scale, ranked
from pecli.extend.patches import candidate_patches, extension_base, patched, shipped_recipes
from pecli.models.families import plan_of

FIXTURES = Path(__file__).parent / "fixtures" / "extend"
CASES = sorted(FIXTURES.glob("*.json"))

#: A small Llama (head dim 64, trained on 2,048 tokens), legacy keys: the full report runs in a second.
SMALL = {"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8, "num_hidden_layers": 2,
         "max_position_embeddings": 2048, "rope_theta": 10000.0}


def read_back(config: dict, target: int):
    """The scheme pecli's own config reader gives for ``config``, at the target."""
    from pecli.config import build_scheme

    options = dict(next(g for g in plan_of(config, "test").groups if g.options is not None).options)
    return build_scheme(options.pop("scheme"), options, length=target).at_length(target)


#: The one warning transformers logs for a patch on purpose: DeepSeek's attention reads mscale_all_dim
#: under every rope type but "default" (yarn_apply_mscale), though the rope validation does not list it.
ATTENTION_KEY_WARNING = "Unrecognized keys in `rope_parameters` for 'rope_type'='{}': {{'mscale_all_dim'}}"


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_every_patch_reads_in_pecli_as_transformers_reads_it(path):
    fixture = json.loads(path.read_text())
    config, target = fixture["config"], fixture["target"]
    base_patch = fixture["patches"].get("base")
    theta = None if base_patch is None else _theta(base_patch)
    start = extension_base(config, path.stem)
    patches = candidate_patches(start, target, base_for_target=theta)
    ranked_methods = {key: patch for key, patch in fixture["patches"].items() if key != "shipped"}
    # pecli still writes the patches transformers was run on (else: regenerate the fixtures)
    assert json.loads(json.dumps(patches)) == ranked_methods
    shipped = [recipe.patch(start, target) for recipe in shipped_recipes(config, start)]
    assert shipped == ([fixture["patches"]["shipped"]] if "shipped" in fixture["patches"] else [])
    for key, patch in fixture["patches"].items():
        reference = fixture["transformers"][key]
        block = patch.get("rope_parameters", patch.get("rope_scaling")) or {}
        kind = block.get("rope_type", block.get("type"))
        allowed = [ATTENTION_KEY_WARNING.format(kind)] if "mscale_all_dim" in block and kind != "yarn" else []
        assert reference["warnings"] == allowed, (key, reference["warnings"])
        # the patched config exactly as written (DeepSeek's mscale_all_dim under llama3 too), read by pecli
        merged = patched(config, patch)
        pairs = read_back(merged, target).frequency_pairs()
        np.testing.assert_allclose(pairs.inv_freq, reference["inv_freq"], rtol=2e-6, err_msg=key)
        assert pairs.attention_scaling == pytest.approx(reference["attention_scaling"], rel=1e-6), key
        # the logit scale pecli reports, from the patch's block: transformers' attention_scaling² × DeepSeek's mscale²
        assert logit_scale(block, pairs.attention_scaling, config["model_type"]) == pytest.approx(reference["logit_scale"], rel=1e-6), key
        # and the one every command reports for the patched model (inspect config, wavelengths, check)
        group = next(g for g in plan_of(merged, key).groups if g.options is not None)
        assert group.logit_scale.factor == pytest.approx(reference["logit_scale"], rel=1e-6), key


def _theta(patch: dict) -> float:
    block = patch.get("rope_parameters", patch)
    return float(block.get("rope_theta", block.get("rotary_emb_base")))


def test_the_patches_of_a_llama_by_hand():
    """s = 32768 / 4096 = 8; the keys transformers' _compute_*_parameters read."""
    config = json.loads((FIXTURES / "llama2-legacy.json").read_text())["config"]
    patches = candidate_patches(extension_base(config), 32768, base_for_target=640000.0)
    assert patches["linear"] == {"rope_theta": 10000.0, "rope_scaling": {"rope_type": "linear", "factor": 8.0},
                                 "max_position_embeddings": 32768}
    # dynamic NTK grows the base past max_position_embeddings, which therefore stays at the trained 4,096
    assert patches["dynamic"]["max_position_embeddings"] == 4096
    assert patches["yarn"]["rope_scaling"]["attention_factor"] == pytest.approx(0.1 * math.log(8) + 1)  # 1.2079
    assert patches["yarn"]["rope_scaling"]["original_max_position_embeddings"] == 4096
    assert patches["base"] == {"rope_theta": 640000.0, "rope_scaling": None, "max_position_embeddings": 32768}
    # dynamic at 32,768: b·(s·N/L − (s − 1))^(d/(d−2)) = 10⁴ · 57^(128/126)
    scheme = read_back(patched(config, patches["dynamic"]), 32768)
    assert scheme.frequency_pairs().base == pytest.approx(1e4 * 57 ** (128 / 126), rel=1e-12)


def test_a_multimodal_config_is_patched_inside_its_text_config():
    text = {**SMALL, "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}}
    del text["rope_theta"]
    config = {"model_type": "llava", "text_config": text, "vision_config": {"model_type": "clip_vision_model"}}
    patch = candidate_patches(extension_base(config), 8192, base_for_target=None)["linear"]
    assert patch == {"text_config": {"rope_parameters": {"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0},
                                     "max_position_embeddings": 8192}}
    merged = patched(config, patch)
    assert merged["vision_config"] == config["vision_config"] and merged["text_config"]["num_attention_heads"] == 8
    theta = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    np.testing.assert_allclose(read_back(merged, 8192).frequency_pairs().inv_freq, theta / 4, rtol=1e-12)


def test_the_measures_of_position_interpolation_by_hand():
    report = extension_report(SMALL, 8192)
    linear = report.candidate("linear").measures
    theta = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    assert linear["unseen_pairs"] == 0
    assert linear["trained_pair_shift"] == pytest.approx(2.0)  # every pair divided by s = 4: two octaves
    # a context c spans c·θ/4; training spanned 2048·θ: exactly the target, 8,192 (not 8,193)
    assert linear["angles_in_range_up_to"] == 2048 * 4
    step = lambda t: math.sqrt(sum(4 - 4 * math.cos(x) for x in t))  # noqa: E731 - ‖R(θ)·1 − 1‖
    assert linear["local_resolution"] == pytest.approx(step(theta / 4) / step(theta), rel=1e-12)
    assert adjacent_step(theta) == pytest.approx(step(theta), rel=1e-12)
    # Liu et al.: the pairs whose wavelength 2π·10^(i/8) fits in 2,048 are i = 0 … 20
    # (i = 20: 2π·10^2.5 = 1,987; i = 21: 2π·10^2.625 = 2,650): 21 pairs, 42 dimensions
    assert report.critical_dimension == 42
    assert report.to_dict()["trained"]["critical_dimension"] == 42
    yarn = report.candidate("yarn").measures
    assert yarn["attention_factor"] == pytest.approx(0.1 * math.log(4) + 1)
    assert report.candidate("dynamic").measures["length_dependent"] is True


def test_the_ranking_rule():
    """Fewest failed conditions, then the cost in octaves (worked out here from its parts), then the method order."""
    s = 8.0
    yarn_logit = (0.1 * math.log(s) + 1) ** 2  # YaRN's temperature for s = 8: 1.459

    def candidate(method, failed=(), dyn=False, shift=0.0, near=1.0, logit=1.0):
        measures = {"length_dependent": dyn, "trained_pair_shift": shift, "local_resolution": near, "logit_scale": logit}
        measures["cost"] = cost_of(measures, s)
        return Candidate(method, {}, measures, tuple(failed))

    order = ranked([
        candidate("linear", shift=3.0, near=1 / 8), candidate("yarn", failed=("bfloat16",), shift=0.1, logit=yarn_logit),
        candidate("dynamic", dyn=True, shift=2.0, near=0.85), candidate("llama3", shift=0.3),
        candidate("base", shift=0.3), candidate("yarn", shift=0.5, logit=yarn_logit),
    ])
    # costs: yarn 0.5; llama3 and base 0.3 + log2(1.459) = 0.845; dynamic 2 + 0.234 + 0.545 + 1 = 3.78;
    # linear 3 + 3 + 0.545 = 6.55; the failing yarn last
    assert [c.method for c in order] == ["yarn", "llama3", "base", "dynamic", "linear", "yarn"]
    assert order[1].measures["cost"] == pytest.approx(0.3 + math.log2(yarn_logit))
    assert order[3].measures["cost"] == pytest.approx(2.0 - math.log2(0.85) + math.log2(yarn_logit) + 1)
    assert [c.rank for c in order] == [1, 2, 3, 4, 5, 6]
    assert "lower cost" in order[0].why and "the method order" in order[1].why and "fewer failed" in order[4].why


def test_extend_json_and_patch_file(invoke, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(SMALL))
    out = tmp_path / "patch.json"
    result = invoke("extend", "--hf-config", str(config), "--target", "8192", "--json", "-o", str(out))
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["target"] == 8192 and document["trained"]["pretraining_length"] == 2048
    assert [c["rank"] for c in document["candidates"]] == list(range(1, len(document["candidates"]) + 1))
    assert {c["method"] for c in document["candidates"]} == {"yarn", "llama3", "dynamic", "base", "linear"}
    assert set(document["candidates"][0]) == {"rank", "method", "origin", "label", "config_patch", "measures", "failed",
                                              "dropped_keys", "why"}
    assert json.loads(out.read_text()) == document["candidates"][0]["config_patch"]
    again = invoke("extend", "--hf-config", str(config), "--target", "8192", "-o", str(out), "--pick", "linear")
    assert again.exit_code == 2 and "--force" in again.stderr
    forced = invoke("extend", "--hf-config", str(config), "--target", "8192", "-o", str(out), "--pick", "linear", "--force")
    assert forced.exit_code == 0, forced.output
    assert json.loads(out.read_text())["rope_scaling"] == {"rope_type": "linear", "factor": 4.0}
    assert "pecli extend" in forced.stdout and "linear" in forced.stdout


@pytest.mark.parametrize("target, words", [
    ("2048", "not past the 2,048 tokens"), ("1e300", "past 2^40"), ("inf", "whole number"), ("-5", "not past"), ("0", "not past"), ("abc", "a number of tokens"), ("1e3x", "a number"),
    ("8192.5", "whole number"), ("nan", "whole number"),
])
def test_bad_targets(invoke, tmp_path, target, words):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(SMALL))
    result = invoke("extend", "--hf-config", str(config), "--target", target)
    assert result.exit_code == 2 and words in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("config, words", [
    ({"model_type": "bloom", "n_head": 8, "hidden_size": 64, "n_layer": 2}, "uses alibi"),
    ({"model_type": "gptj", "n_embd": 256, "n_head": 4, "rotary_dim": 32, "n_positions": 2048, "n_layer": 2},
     "fixed base"),
    ({**SMALL, "layer_types": ["sliding_attention", "full_attention"],
      "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 1e6},
                          "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}, "model_type": "gemma3_text",
      "head_dim": 64, "sliding_window": 512}, "different RoPE settings"),
])
def test_models_extend_cannot_change(invoke, tmp_path, config, words):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = invoke("extend", "--hf-config", str(path), "--target", "1000000")
    assert result.exit_code == 2 and words in result.stderr, result.stderr


@pytest.mark.parametrize("method", ["llama3", "linear"])
def test_an_mla_models_patch_is_read_by_every_command(invoke, tmp_path, method):
    """DeepSeek-V3's llama3 and linear patches keep mscale_all_dim (its attention reads it under every rope
    type but default: ``yarn_apply_mscale``); pecli's own commands read the patched config, the softmax
    factor mscale(s, 1)² with s = 327,680 / 4,096 = 80: (0.1 ln 80 + 1)² = 2.0678."""
    source = Path(__file__).parent.parent / "sample_configs" / "hf" / "deepseek-ai--deepseek-v3.json"
    out = tmp_path / "patch.json"
    assert invoke("extend", "--hf-config", source, "--target", "327680", "--pick", method, "-o", out).exit_code == 0
    patch = json.loads(out.read_text())
    assert patch["rope_scaling"]["mscale_all_dim"] == 1.0
    merged = tmp_path / "config.json"
    merged.write_text(json.dumps(patched(json.loads(source.read_text()), patch)))
    for command in (("wavelengths",), ("check", "relativity", "--length", "64")):
        result = invoke(*command, "--hf-config", merged)
        assert result.exit_code == 0, result.stderr
    plan = json.loads(invoke("inspect", "config", "--hf-config", merged, "--json").stdout)
    assert plan["groups"][0]["logit_scale"] == pytest.approx((0.1 * math.log(80) + 1) ** 2, rel=1e-12)
    assert "mscale_all_dim" not in plan["groups"][0]["options"]["rope_scaling"]
