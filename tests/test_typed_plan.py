"""What a layer group says of its scaling is read from its typed scaling (``LayerGroup.encoding.rope_scaling``),
not the options' raw block. The expected values are worked out by hand from the configs below."""

from __future__ import annotations

from pecli.models.families.from_config import plan_of
from pecli.models.rope_facts import scaling_text

LLAMA = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 2,
         "rope_theta": 500000.0, "max_position_embeddings": 131072}


def test_the_context_is_the_factor_times_the_original_length_the_config_gives():
    """32 × 8192 = 262144 > max_position_embeddings 131072; 8 × 8192 = 65536 < 131072 leaves it."""
    block = {"rope_type": "llama3", "factor": 32.0, "original_max_position_embeddings": 8192}
    group = plan_of({**LLAMA, "rope_scaling": block}, "l.json").groups[0]
    assert group.context == 262144
    assert group.analysis_note == ("analysed over 262,144 positions, the scaling's factor × original length "
                                   "(32 × 8192)")
    group = plan_of({**LLAMA, "rope_scaling": {**block, "factor": 8.0}}, "l.json").groups[0]
    assert group.context == 131072 and group.analysis_note == ""


def test_a_llama3_block_without_an_original_length_keeps_max_position_embeddings():
    """pecli's llama3 rule falls back on 8192 for the frequencies, but that is no length of the config's:
    the group's context stays its max_position_embeddings, and its scaling is said without an original."""
    group = plan_of({**LLAMA, "rope_scaling": {"rope_type": "llama3", "factor": 32.0}}, "l.json").groups[0]
    assert group.context == 131072 and group.analysis_note == ""
    assert scaling_text(group) == "llama3 ×32"


def test_a_legacy_su_block_is_longrope():
    """Phi-3's first configs name LongRoPE ``su``; transformers' Phi3Config renames it longrope
    (configuration_phi3.py, 5.24.0: ``if rope_parameters_type in ["su", "yarn"]: ... = "longrope"``), and
    HF moves the top-level original length (4096) into the block. The raw block's name had read as a scaling
    of its own, "su"."""
    pairs = 48  # head_dim 3072 / 32 = 96
    config = {"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32, "num_hidden_layers": 2,
              "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
              "rope_scaling": {"type": "su", "short_factor": [1.0] * pairs, "long_factor": [2.0] * pairs}}
    group = plan_of(config, "phi3.json").groups[0]
    assert group.encoding.rope_scaling.rope_type == "longrope"
    assert scaling_text(group) == "longrope from 4,096"
    assert scaling_text(group.options) == "longrope from 4,096"  # the options, as the engines' blame passes them
    assert group.context == 131072  # no factor: not stretched past max_position_embeddings


def test_an_unscaled_group_and_given_frequencies():
    group = plan_of(LLAMA, "l.json").groups[0]
    assert scaling_text(group) == "none" and group.context == 131072
