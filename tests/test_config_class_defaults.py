"""A config.json as its transformers config class reads it: missing keys take the class's defaults.

Hub files hold what their authors wrote, often only what differs from the class's defaults (Gemma 3
27B's ``text_config`` has no ``rope_theta``: 1,000,000 is the class's). pecli fills each missing key from
``pecli/models/sources/type_defaults.json``, generated from transformers' config classes, and must then give the
plan transformers' own modules give (``tests/fixtures/models/rope``: the model's forward pass on its
default config; ``tests/fixtures/models/hub``: the same on configs as published, both made by
``tests/fixtures/models/rope/generate.py``), on three forms of every model type's config:

- the full config ``save_pretrained`` writes;
- the one ``save_pretrained`` writes by default, each sub-config cut to what differs from its class's
  defaults (``tests/fixtures/models/defaults/forms.json``);
- ``{"model_type": ...}`` alone.

For the model types pecli refuses, a form may be refused (one line) or read right, never read wrong.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from pecli.errors import ConfigError
from pecli.models.families import plan_of
from test_model_fixtures_rope import CASES, REFUSED, mismatches

FIXTURES = Path(__file__).parent / "fixtures" / "models"
FORMS = json.loads((FIXTURES / "defaults" / "forms.json").read_text())["diff_forms"]
HUB = sorted((FIXTURES / "hub").glob("*.json"))


def checked(data: dict, config: dict) -> list[str]:
    """What pecli gets wrong on ``config`` against the fixture's recorded groups; a refusal is fine only
    for a model type pecli refuses."""
    try:
        return mismatches({**data, "config": config})
    except ConfigError as error:
        return [] if data["model_type"] in REFUSED else [f"refused: {error}"]


@pytest.mark.parametrize("path", CASES, ids=lambda path: path.stem)
def test_the_three_forms_of_every_model_types_config_equal_transformers(path):
    data = json.loads(path.read_text())
    model_type = data["model_type"]
    found = {}
    if model_type in FORMS:
        found["as save_pretrained writes it"] = checked(data, FORMS[model_type])
    found["model_type alone"] = checked(data, {"model_type": model_type})
    assert {form: problems for form, problems in found.items() if problems} == {}


def test_the_forms_are_cut_to_what_differs():
    # The check above is only as strong as its forms: the nested configs really are cut.
    assert FORMS["gemma3"]["text_config"] == {"model_type": "gemma3_text"}
    assert len(FORMS) >= 150


@pytest.mark.parametrize("path", HUB, ids=lambda path: path.stem)
def test_configs_as_published_equal_transformers(path):
    data = json.loads(path.read_text())
    assert mismatches({**data, "config": data["published"]}) == []


def published(name: str) -> dict:
    return json.loads((FIXTURES / "hub" / f"{name}.json").read_text())["published"]


def test_gemma3_27b_full_attention_layers_take_the_class_base_and_say_so():
    # Gemma3TextConfig.default_theta: global 1,000,000, local 10,000; the file's rope_scaling (linear ×8)
    # goes to the full-attention layers only.
    plan = plan_of(published("google--gemma-3-27b-it"), "gemma-3-27b-it")
    full, sliding = plan.group_named("full_attention"), plan.group_named("sliding_attention")
    assert full.options["base"] == 1e6 and full.options["rope_scaling"] == {"rope_type": "linear", "factor": 8.0}
    assert sliding.options["base"] == 1e4 and "rope_scaling" not in sliding.options
    assert "rope_theta=1,000,000" in full.keys_defaulted and "rope_theta=10,000" in sliding.keys_defaulted
    assert full.layers == tuple(range(5, 62, 6))  # every sixth layer (sliding_window_pattern 6)


def test_gemma3_4b_head_size_and_heads_come_from_the_class(invoke, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(published("google--gemma-3-4b-it")))
    result = invoke("inspect", "config", "--hf-config", path, "--json")
    assert result.exit_code == 0, result.stderr
    groups = {g["name"]: g for g in json.loads(result.stdout)["groups"]}
    assert groups["full_attention"]["options"]["dim"] == 256  # head_dim, the class's default
    assert "head_dim=256" in groups["full_attention"]["keys_defaulted"]
    assert groups["full_attention"]["options"]["base"] == 1e6


def test_llama4_scout_empty_no_rope_layers_is_every_fourth_layer():
    plan = plan_of(published("meta-llama--llama-4-scout-17b-16e-instruct"), "scout")
    assert plan.group_named("nope").layers == tuple(range(3, 48, 4))
    assert any("no_rope_layers is []" in warning for warning in plan.warnings)


def test_smollm3_empty_no_rope_layers_is_refused_as_transformers_cannot_run_it():
    # SmolLM3Config keeps [] (it replaces None only), and its model then indexes past the list's end.
    config = {"model_type": "smollm3", "num_hidden_layers": 4, "no_rope_layers": []}
    with pytest.raises(ConfigError, match="no_rope_layers"):
        plan_of(config, "smollm3.json")


def test_falcon_rw_is_alibi_and_its_rope_theta_is_set_aside(invoke, tmp_path):
    path = Path(__file__).parent.parent / "sample_configs" / "hf" / "tiiuae--falcon-rw-1b.json"
    plan = plan_of(json.loads(path.read_text()), "falcon-rw-1b")
    assert plan.single.options == {"scheme": "alibi", "heads": 32, "slope_dtype": "bfloat16"}
    assert any("ignores rope_theta" in warning for warning in plan.warnings)
    result = invoke("encode", "--hf-config", path, "-L", "4", "--json")
    assert result.exit_code == 0, result.stderr


def test_a_derived_key_the_config_changes_the_inputs_of_is_refused_not_guessed():
    # Qwen3.5 derives layer_types from num_hidden_layers (every fourth layer full attention, the others
    # linear attention): a periodic rule pecli applies to any count ...
    plan = plan_of({"model_type": "qwen3_5_text", "num_hidden_layers": 8}, "q.json")
    assert plan.group_named("nope").layers == (0, 1, 2, 4, 5, 6)
    # ... but HunYuan V4 derives its head size from qk_rope_head_dim: changed, pecli asks for head_dim.
    with pytest.raises(ConfigError, match="head_dim.*qk_rope_head_dim"):
        plan_of({"model_type": "hy_v4", "qk_rope_head_dim": 32, "layer_types": ["full_attention"] * 34}, "h.json")
    with pytest.raises(ConfigError, match="layer_types.*qk_rope_head_dim"):  # its layer types too
        plan_of({"model_type": "hy_v4", "qk_rope_head_dim": 32}, "h.json")


DIRECT = json.loads((FIXTURES / "direct" / "rotary.json").read_text())["cases"]
#: The group of each case, and the layout its code applies cos and sin in (read from its modeling module:
#: BLT's and Moonshine's rotate_half take (x[0::2], x[1::2]) pairs with repeat_interleave'd cos/sin).
DIRECT_GROUPS = {"blt": ("global", "interleaved"), "blt_encoder": ("encoder", "interleaved"),
                 "moonshine": ("encoder", "interleaved"), "moonshine_streaming": ("all", "interleaved"),
                 "dia_encoder": ("encoder", "half"), "dia_decoder": ("decoder", "half"), "zamba2": ("hybrid", "half"),
                 "granitemoehybrid": ("full_attention", "half")}


@pytest.mark.parametrize("case", sorted(DIRECT), ids=str)
def test_model_types_read_from_their_rotary_modules(case):
    from pecli.config import build_scheme

    data = DIRECT[case]
    config = dict(data["config"])
    if case == "granitemoehybrid":  # its default layers are all Mamba; one attention layer for the check
        config["layer_types"] = ["linear_attention", "full_attention"] * (config["num_hidden_layers"] // 2)
    name, layout = DIRECT_GROUPS[case]
    group = plan_of(config, case).group_named(name)
    options = dict(group.options)
    scheme = build_scheme(options.pop("scheme"), options)
    np.testing.assert_allclose(scheme.frequency_pairs().inv_freq, data["inv_freq"], rtol=1e-6)
    assert scheme.layout == layout and scheme.attention_scaling == data["attention_scaling"]


def test_mistral_large4_is_refused_with_its_reason():
    with pytest.raises(ConfigError, match="exp\\(alpha\\)"):
        plan_of({"model_type": "mistral_large4"}, "ml4.json")


def test_zamba2_without_mem_rope_applies_none():
    plan = plan_of({"model_type": "zamba2"}, "z.json")
    assert [g.name for g in plan.groups] == ["nope"]


def test_a_sliding_group_is_analysed_over_its_window_and_says_so(invoke):
    config = Path(__file__).parent.parent / "sample_configs" / "hf" / "google--gemma-3-4b-it.json"
    result = invoke("check", "uniqueness", "--hf-config", config, "--json")
    assert result.exit_code == 0, result.stderr
    lengths = {g["name"]: g["length"] for g in json.loads(result.stdout)["layer_groups"]}
    assert lengths == {"sliding_attention": 1024, "full_attention": 131072}  # sliding_window 1,024 as published
    assert "attention window of 1024 tokens (sliding_window)" in result.stderr
    result = invoke("check", "uniqueness", "--hf-config", config, "--json", "--length", "2048")
    assert {g["length"] for g in json.loads(result.stdout)["layer_groups"]} == {2048} and "window" not in result.stderr


def test_a_scaled_config_is_analysed_at_factor_times_original(invoke):
    # Qwen2.5 with YaRN ×4 over 32,768, as its model card says to serve 128K: C = 131,072, not 32,768.
    config = Path(__file__).parent.parent / "sample_configs" / "hf" / "qwen--qwen2.5-7b-instruct-yarn.json"
    result = invoke("wavelengths", "--hf-config", config, "--json")
    assert json.loads(result.stdout)["context"] == 131072
    assert "4 × 32,768" in result.stderr


OTHER = sorted(p for p in (FIXTURES / "other").glob("*.json") if p.name != "INDEX.json" and p.stem != "musicgen")


@pytest.mark.parametrize("path", OTHER, ids=lambda path: path.stem)
def test_non_rope_model_types_read_alone_as_their_full_config(path):
    # tests/test_model_fixtures_other.py holds the full config's plan against transformers' own functions
    # (ALiBi slopes, T5 buckets, sinusoid tables); the model type alone must give that same plan.
    config = json.loads(path.read_text())["config"]
    full, alone = plan_of(config, "full"), plan_of({"model_type": config["model_type"]}, "alone")
    assert [(g.name, g.layers, dict(g.options or {})) for g in alone.groups] == \
        [(g.name, g.layers, dict(g.options or {})) for g in full.groups]


def test_a_flat_block_that_gemma3s_class_would_ignore_is_refused():
    # Gemma3TextConfig(rope_parameters={"rope_type": "linear", "factor": 8.0, "rope_theta": 5e5}) keeps the
    # flat keys beside the per-type blocks it adds ({"full_attention": {default, 1e6}, …}) and its model
    # reads only those: linear ×8 and 5e5 would be silently lost. pecli refuses rather than guess.
    with pytest.raises(ConfigError, match="per layer type"):
        plan_of({"model_type": "gemma3_text", "rope_parameters": {"rope_type": "linear", "factor": 8.0,
                                                                   "rope_theta": 5e5}}, "g.json")


def test_the_shipped_table_is_what_pecli_reads_sorted_and_indented():
    # tools/type_defaults.py cuts transformers' defaults to the fields pecli's code names and writes them
    # sorted, one key a line: the file is its own cut (nothing pecli does not read), and a regeneration a
    # reviewable diff. That nothing pecli reads was cut is the test above: every form's plan is the model's.
    sys.path.insert(0, str(Path(__file__).parent.parent / "tools"))
    import type_defaults

    text = (Path(type_defaults.TARGET)).read_text()
    assert max(len(line) for line in text.splitlines()) < 1000
    assert type_defaults.dumps(type_defaults.shipped(json.loads(text))) + "\n" == text
