"""Every RoPE model type of transformers, layer by layer, against transformers' own modules.

``tests/fixtures/models/rope/<model_type>.json`` holds, for the default config of each model type with
a rotary module, the config.json that ``save_pretrained`` writes and what the model's own code does in
each group of layers (found by running its forward pass, see ``generate.py`` there; versions in
INDEX.json): the rotary module's ``inv_freq`` and attention scaling, and the model's own apply function
on a reference q, ``q_j = 1 + j / width``, at positions 0 … 32,767; or that the layers apply none.

pecli reads the config.json through its family table and must give, for a layer of every group: no
position encoding where the model has none; the inverse frequencies to 1e-5 relative; the attention
scaling to 1e-6; and the same rotation of q. transformers forms its angles in float32, so at position p
the rotated components may differ by the float32 rounding of p·θ (2^-24 relative, twice, times |q| ≤ 2);
below position 100 that is under 2e-5, and a wrong layout or base is off by O(1).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from pecli.config import build_scheme
from pecli.errors import ConfigError
from pecli.models.families.from_config import plan_of

FIXTURES = Path(os.environ.get("PECLI_ROPE_FIXTURES", Path(__file__).parent / "fixtures" / "models" / "rope"))
CASES = sorted(p for p in FIXTURES.glob("*.json") if p.name != "INDEX.json")

#: Model types pecli refuses, each with the words of its one-line reason.
REFUSED = {
    "deepseek_v4": "per attention module",
    "dory": "layer type 'mlp'",
    "ernie4_5_vl_moe": "3-D RoPE",
    "ernie4_5_vl_moe_text": "3-D RoPE",
    "glm4_moe": "not a multiple of num_attention_heads",
}


def mismatches(data: dict) -> list[str]:
    """What pecli's plan of ``data["config"]`` gets wrong against the recorded groups (empty: nothing)."""
    plan = plan_of(data["config"], data["model_type"], "rope")  # a Qwen-VL text: M-RoPE's ids are equal on every axis
    found = []
    stack = data.get("layer_stack", "").split(".")[0]  # T5Gemma: the fixture records one stack's layers
    for recorded in data["groups"]:
        layer = recorded["layers"][0]
        in_stack = [g for g in plan.groups if g.name.split("/")[0] == stack and layer in g.layers]
        group = in_stack[0] if in_stack else plan.group_of(layer)
        if not recorded["rope"]:
            if group.options is not None:
                found.append(f"layer {layer}: the model applies no RoPE, pecli reads {group.name}")
            continue
        if group.options is None:
            found.append(f"layer {layer}: the model applies RoPE, pecli reads none")
            continue
        rows = [i for i, row in enumerate(recorded["rotated"]) if row is not None]  # GPT-J's table ends at 2048
        positions = np.asarray(data["positions"])[rows]
        options = dict(group.options)
        scheme = build_scheme(options.pop("scheme"), {**options, "context": int(max(data["positions"])) + 1})
        inv_freq = scheme.frequency_pairs().inv_freq
        if recorded.get("inv_freq") is not None:
            expected = np.asarray(recorded["inv_freq"], dtype=np.float64)
            if inv_freq.shape != expected.shape or not np.allclose(inv_freq, expected, rtol=1e-5, atol=0):
                found.append(f"layer {layer}: inv_freq {inv_freq[:3]}… vs {expected[:3]}…")
                continue
        scaling = recorded.get("attention_scaling")
        if scaling is not None and not math.isclose(scheme.attention_scaling, scaling, rel_tol=1e-6):
            found.append(f"layer {layer}: attention scaling {scheme.attention_scaling} vs {scaling}")
        width = recorded["q_width"]
        if width > scheme.dim:
            found.append(f"layer {layer}: the model rotates a q of {width} components, pecli's head has {scheme.dim}")
            continue
        reference = 1 + np.arange(width) / width
        q = np.zeros((len(positions), scheme.dim))
        q[:, :width] = reference  # the model slices the rotated part out of the head before its apply function
        got = scheme.apply(q, positions)[:, :width]
        rotated = np.asarray([recorded["rotated"][i] for i in rows], dtype=np.float64)
        # DeepSeek's apply_rotary_pos_emb_interleave de-interleaves q before rotate_half: at position 0 (no
        # rotation) its output is q reordered (0, 2, 4, …, 1, 3, …). The same rotation, in that order.
        order = np.concatenate([np.arange(0, width, 2), np.arange(1, width, 2)])
        if 0 in positions and np.allclose(rotated[0], reference[order]) and not np.allclose(rotated[0], reference):
            got = got[:, order]
        tolerance = 2e-5 + 4 * 2.0**-24 * positions[:, None].astype(np.float64)
        wrong = np.abs(got - rotated) > tolerance
        if wrong.any():
            row, j = np.argwhere(wrong)[0]
            found.append(f"layer {layer}: q rotated to position {positions[row]}, component {j}: "
                         f"{got[row, j]:.6f} vs {rotated[row, j]:.6f} (pecli layout {scheme.layout})")
    return found


@pytest.mark.parametrize("path", CASES, ids=lambda path: path.stem)
def test_every_layer_group_equals_transformers(path):
    data = json.loads(path.read_text())
    if data["model_type"] in REFUSED:
        with pytest.raises(ConfigError, match=REFUSED[data["model_type"]]):
            mismatches(data)
        return
    assert mismatches(data) == []


def test_fixtures_cover_every_generated_model_type():
    index = json.loads((FIXTURES / "INDEX.json").read_text())
    assert sorted(index["generated"]) == sorted(path.stem for path in CASES)
    assert len(CASES) >= 150  # transformers 5 has about 200 model types with a text rotary module
    assert all(reason for reason in index["skipped"].values())


def test_the_comparison_catches_a_wrong_layout():
    # The check itself: Command R read in the half layout must be caught at position 1.
    path = FIXTURES / "cohere.json"
    data = json.loads(path.read_text())
    data["config"] = {**data["config"], "model_type": "llama"}
    assert any("pecli layout half" in problem for problem in mismatches(data))


@pytest.mark.parametrize("model_type", ["gemma3_text", "cohere2", "llama4_text", "modernbert"])
def test_the_command_line_gives_the_fixtures_frequencies(invoke, tmp_path, model_type):
    # The same check through `pecli wavelengths --hf-config`: each layer's pairs, or "none" for NoPE layers.
    data = json.loads((FIXTURES / f"{model_type}.json").read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data["config"]))
    for recorded in data["groups"]:
        result = invoke("wavelengths", "--hf-config", path, "--layer", str(recorded["layers"][0]), "--context", "4096", "--json")
        assert result.exit_code == 0, result.stderr
        document = json.loads(result.stdout)
        if not recorded["rope"]:
            assert document["scheme"] == "none" and document["pairs"] == []
            continue
        np.testing.assert_allclose([pair["inv_freq"] for pair in document["pairs"]], recorded["inv_freq"], rtol=1e-5)
