"""A user's keys over a model's layer group: applied as the scheme takes a change (:func:`pecli.schemes.build.layered`),
and said as the user's (``Spec.sources_of``, origin *user override*).

The expected values are read off the configs and options below by hand: what a config's block says, what the
user's key says, and which wins by the rules in ``layered``'s docstring (a later key replaces an earlier one, a
later block the whole earlier scaling, a later scaling alone keeps the earlier keys it takes)."""

from __future__ import annotations

import json
import math

import pytest

from pecli.config import resolve
from pecli.models.plan import Origin
from pecli.schemes.build import build_scheme, layered
from pecli.schemes.rope import RopeScheme

LLAMA31 = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 2,
           "rope_theta": 500000.0, "max_position_embeddings": 131072,
           "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                            "original_max_position_embeddings": 8192}}
BLOCK = {"rope_scaling": LLAMA31["rope_scaling"]}


def test_a_later_scaling_alone_keeps_the_keys_it_takes():
    """``--scaling yarn`` over Llama 3.1's block: yarn takes factor and original length (8, 8192), not the
    llama3 band factors."""
    assert layered(RopeScheme, BLOCK, {"scaling": "yarn"}) == {
        "scaling": "yarn", "factor": 8.0, "original_max_position": 8192}
    assert layered(RopeScheme, BLOCK, {"scaling": "linear"}) == {"scaling": "linear", "factor": 8.0}
    assert layered(RopeScheme, BLOCK, {"scaling": "none"}) == {"scaling": "none"}


def test_a_later_block_replaces_the_whole_earlier_scaling():
    """A block is the whole scaling, as in a config file: the earlier yarn and its keys go, llama3's come."""
    earlier = {"scaling": "yarn", "factor": 4.0, "original_max_position": 2048, "beta_fast": 16, "base": 1e6}
    assert layered(RopeScheme, earlier, BLOCK) == {
        "base": 1e6, "scaling": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position": 8192}
    assert layered(RopeScheme, BLOCK, {"rope_scaling": None}) == {}  # null switches the scaling off
    # transformers 5's name for the block, and a block's own base
    assert layered(RopeScheme, BLOCK, {"rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 10.0}}) == {
        "base": 10.0, "scaling": "linear", "factor": 2.0}


def test_a_key_under_an_alias_replaces_the_key_it_names():
    assert layered(RopeScheme, {"base": 1.0, "dim": 8}, {"rope_theta": 2.0}, {"head_dim": 16}) == {"base": 2.0, "dim": 16}
    # within a layer, its own keys win over its block's
    assert layered(RopeScheme, {**BLOCK, "factor": 16.0})["factor"] == 16.0


def test_one_layer_builds_as_before():
    """build_scheme reads one layer: Llama 3.1's block with --factor 16 is llama3 ×16 from 8192. The last pair
    (θ = 500000^(−126/128), wavelength ≈ 2.5e6 > 8192 / low) is divided by the factor."""
    scheme = build_scheme("rope", {"dim": 128, "base": 500000.0, **BLOCK, "factor": 16.0})
    assert scheme.rope_scaling.rope_type == "llama3" and scheme.rope_scaling.values["factor"] == 16.0
    assert math.isclose(scheme.inv_freq[-1], 500000.0 ** (-126 / 128) / 16, rel_tol=1e-12)


@pytest.fixture()
def llama31(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(LLAMA31))
    return str(path)


def test_the_user_keys_over_a_model_are_said_to_be_the_users(llama31):
    spec = resolve({"hf_config": llama31, "scaling": "yarn", "rope_theta": 1e6, "length": 64})
    assert spec.scheme.base == 1e6 and spec.scheme.scaling == "yarn"
    assert spec.scheme.rope_scaling.values == {"factor": 8.0, "original_max_position_embeddings": 8192}
    assert [(s.key, s.origin) for s in spec.sources_of("base")] == [("rope_theta", Origin.USER)]
    assert [(s.key, s.origin) for s in spec.sources_of("scaling")] == [("scaling", Origin.USER)]
    # a setting the user left alone is the model's, from its config
    assert [(s.key, s.origin) for s in spec.sources_of("max_position_embeddings")] == [
        ("max_position_embeddings", Origin.CONFIG)]
    assert resolve({"scheme": "rope", "base": 2.0}).sources_of("base") == ()  # no model: nothing to say


def test_compare_keeps_a_models_own_scaling_under_the_users(llama31):
    """compare's model row is the model: the scheme options given for the other rows fill only what the model
    leaves out. A llama3 block is the model's scaling, so ``--scaling yarn --factor 4`` does not turn the
    row into yarn ×4 (it did: the user's keys won over the block's)."""
    from pecli.comparison.rows import compared_rows

    spec = resolve({"scheme": "rope", "scaling": "yarn", "factor": 4.0, "original_max_position": 2048, "length": 64})
    rows = compared_rows([], [(llama31, None, None)], build=spec.variant, dim=128).rows
    (_, scheme), = rows
    assert scheme.scaling == "llama3" and scheme.rope_scaling.values["factor"] == 8.0
    assert scheme.base == 500000.0
    assert math.isclose(scheme.inv_freq[-1], 500000.0 ** (-126 / 128) / 8, rel_tol=1e-12)
