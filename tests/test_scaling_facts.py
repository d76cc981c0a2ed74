"""The facts a scaling type's record states, held against what its rule computes and what transformers
names, and the lookups that take a config's ``rope_type`` to its record.

Each fact is checked on what the type does (its frequencies at two lengths, whether it accepts given
frequencies), not on the record's own flags, so that a record that says something its rule does not do fails.
"""

from __future__ import annotations

import numpy as np
import pytest

from pecli.errors import ConfigError
from pecli.models.plan import LayerGroup
from pecli.schemes.scaling.compute import compute_inv_freq
from pecli.schemes.scaling.registry import SCALINGS, find_scaling, scales
from pecli.schemes.scaling.unscaled import NO_SCALING
from pecli.schemes.scaling.value import RopeScaling

#: d = 16 rotated components (8 pairs), base 10,000, trained on L₀ = 1,024 tokens, served at 4,096.
D, BASE, ORIGINAL, SERVED = 16, 10000.0, 1024, 4096

#: A block of each shipped type, as a config would give it.
BLOCKS = {
    "none": {},
    "linear": {"factor": 4.0},
    "ntk": {"factor": 4.0},
    "dynamic": {"factor": 4.0},
    "yarn": {"factor": 4.0, "original_max_position_embeddings": ORIGINAL},
    "llama3": {"factor": 4.0, "original_max_position_embeddings": ORIGINAL},
    "longrope": {"short_factor": [1.0] * (D // 2), "long_factor": [2.0] * (D // 2), "original_max_position_embeddings": ORIGINAL},
}


def frequencies(name: str, context: int | None = None, ladder=None):
    return compute_inv_freq(base=BASE, rotated_dim=D, scaling=RopeScaling(name, **BLOCKS[name]),
                            max_position_embeddings=SERVED if name != "dynamic" else ORIGINAL, context=context,
                            ladder=ladder)


def test_every_shipped_type_has_a_block_here():
    assert set(BLOCKS) == set(SCALINGS)


@pytest.mark.parametrize("name", list(BLOCKS))
def test_scales_is_whether_the_frequencies_change(name):
    theta = BASE ** (-np.arange(0, D, 2) / D)
    changed = [not np.allclose(frequencies(name, context).inv_freq, theta, rtol=1e-12, atol=0) for context in (None, 4 * SERVED)]
    assert SCALINGS[name].scales == any(changed)


@pytest.mark.parametrize("name", list(BLOCKS))
def test_grows_base_is_a_base_that_depends_on_the_length(name):
    # dynamic NTK at 4 L₀ with s = 4: b' = b · (4·4 − 3)^(16/14) = b · 13^(8/7)
    grown = frequencies(name, context=4 * ORIGINAL).base
    assert SCALINGS[name].grows_base == (grown != frequencies(name, context=ORIGINAL).base)
    if name == "dynamic":
        assert grown == pytest.approx(BASE * 13 ** (8 / 7), rel=1e-12)


@pytest.mark.parametrize("name", list(BLOCKS))
def test_on_ladder_is_whether_given_frequencies_are_taken(name):
    ladder = tuple(1.0 / 3**i for i in range(D // 2))
    if SCALINGS[name].on_ladder:
        frequencies(name, ladder=ladder)
    else:
        with pytest.raises(ConfigError, match="inv_freq"):
            frequencies(name, ladder=ladder)


@pytest.mark.parametrize("name", list(BLOCKS))
def test_reads_context_is_whether_the_length_changes_the_frequencies(name):
    short, long = frequencies(name, context=ORIGINAL // 2), frequencies(name, context=8 * SERVED)
    assert SCALINGS[name].reads_context == (not np.array_equal(short.inv_freq, long.inv_freq))


def test_the_types_that_start_from_the_original_length():
    # transformers' llama3, yarn and longrope rules read original_max_position_embeddings; dynamic NTK reads
    # max_position_embeddings as its L (modeling_rope_utils, v5)
    assert {n for n, r in SCALINGS.items() if r.from_original_length} == {"llama3", "yarn", "longrope"}
    assert {n for n, r in SCALINGS.items() if r.original_from_model} == {"dynamic"}
    assert {n for n, r in SCALINGS.items() if r.per_pair_factors} == {"longrope"}
    # pecli's static ntk is its own; transformers has no such rope_type
    assert {n for n, r in SCALINGS.items() if not r.in_transformers} == {"ntk"}


def test_a_config_spelling_finds_its_record():
    assert find_scaling(None) is NO_SCALING and find_scaling("default") is NO_SCALING and find_scaling("none") is NO_SCALING
    assert find_scaling("su") is SCALINGS["longrope"] and find_scaling("mrope") is NO_SCALING
    assert find_scaling("su", aliases=False) is None and find_scaling("mrope", aliases=False) is None
    assert find_scaling("default", aliases=False) is NO_SCALING
    assert find_scaling("proportional") is None and find_scaling(3) is None
    # an unknown type is never taken for no scaling
    assert scales("proportional") and scales("yarn") and not scales(None) and not scales("default")
    assert RopeScaling().to_hf() == {"rope_type": "default"}


@pytest.mark.parametrize("scheme, rotary", [("rope", True), ("mrope", True), ("alibi", False), ("t5", False),
                                            ("sinusoidal", False), ("learned", False)])
def test_a_group_is_asked_whether_it_rotates(scheme, rotary):
    assert LayerGroup("all", (0,), {"scheme": scheme}).rotary is rotary
    assert LayerGroup("none", (0,), None).rotary is False
