"""The one reader of a HuggingFace RoPE block's type, held to transformers' own reading:
``rope_parameters.setdefault("rope_type", rope_parameters.get("type", "default"))``
(``standardize_rope_params``, ``modeling_rope_utils.py``, transformers 5.24.0), a null value counting as absent."""

from __future__ import annotations

import pytest

from pecli.schemes.scaling.rope_type import hf_rope_type, rope_type_key


@pytest.mark.parametrize(("block", "key", "kind"), [
    ({"rope_type": "yarn", "factor": 4.0}, "rope_type", "yarn"),
    ({"type": "linear", "factor": 2.0}, "type", "linear"),  # the legacy spelling
    ({"rope_type": "llama3", "type": "linear"}, "rope_type", "llama3"),  # both: rope_type wins
    ({"rope_type": None, "type": "dynamic"}, "type", "dynamic"),  # null is absent
    ({"factor": 2.0}, "rope_type", "default"),
    ({}, "rope_type", "default"),
    (None, "rope_type", "default"),
])
def test_the_type_a_block_names(block, key, kind):
    assert rope_type_key(block) == key
    assert hf_rope_type(block) == kind


def test_a_caller_chooses_what_no_type_means():
    assert hf_rope_type({"factor": 2.0}, None) is None
    assert hf_rope_type(None, "none") == "none"
