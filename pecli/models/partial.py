"""Model types whose rotary module turns the whole head, whatever ``partial_rotary_factor`` says.

transformers' default RoPE computation is each model's own ``compute_default_rope_parameters``: for
Llama and most of its kin it reads ``head_dim`` only, and the attention rotates every component of
the head. A ``partial_rotary_factor`` in such a config changes nothing while the RoPE type is
``default``. The scaled types (yarn, llama3, longrope, linear, dynamic) go through
``modeling_rope_utils``, which does read the factor: cos and sin then cover part of a head that the
model's ``apply_rotary_pos_emb`` multiplies whole, which transformers does not define.

The list is data, ``partial_rotary.json`` beside this module, generated from transformers by
``tools/partial_rotary.py`` (``python tools/regenerate.py partial-rotary``): each type's rotary module
built with and without the factor.
"""

from __future__ import annotations

import functools
import json
import numbers
from pathlib import Path
from typing import Any

from pecli.errors import ConfigError
from pecli.schemes.scaling.registry import find_scaling


@functools.cache
def ignoring_types() -> frozenset[str]:
    """The model types whose default rotary module ignores ``partial_rotary_factor``."""
    data = json.loads(Path(__file__).with_name("partial_rotary.json").read_text())
    return frozenset(data["ignored_by_default_rope"])


def effective_fraction(fraction: Any, model_type: Any, rope_type: Any, source: str) -> tuple[Any, str | None]:
    """The fraction of the head the model rotates, and a warning when the config's is not it.

    Parameters
    ----------
    fraction : float or None
        ``partial_rotary_factor`` as the config gives it.
    model_type : str or None
        The config's ``model_type`` (the text config's for a multimodal model).
    rope_type : str or None
        The RoPE block's ``rope_type`` (or legacy ``type``).
    source : str
        The config's name, for messages.

    Returns
    -------
    (fraction, warning)
        ``(None, line)`` when the model's default RoPE turns the whole head; ``(fraction, None)`` otherwise.

    Raises
    ------
    ConfigError
        A scaled RoPE type of ``modeling_rope_utils`` with a factor other than 1 on a model that
        rotates the whole head.
    """
    proper = isinstance(fraction, numbers.Real) and not isinstance(fraction, bool) and 0 < fraction < 1
    if not proper or model_type not in ignoring_types():  # a value out of range is refused where it is validated
        return fraction, None
    # no scaling goes through the model's own default computation; the others transformers computes go through
    # modeling_rope_utils' shared functions, which read the factor (a type pecli does not know, such as Gemma 4's
    # proportional, is read as its family reads it)
    record = find_scaling(rope_type)
    if record is None or not record.in_transformers:
        return fraction, None
    if not record.scales:
        return None, (f"partial_rotary_factor {fraction} is in {source}, and model_type {model_type}'s rotary module "
                      "in transformers ignores it: every component of the head rotates, as in pecli's numbers")
    raise ConfigError("partial_rotary_factor", f"is {fraction} in {source} with rope_type {rope_type}: transformers "
                      f"computes cos and sin for part of the head, and model_type {model_type}'s attention rotates the "
                      "whole head, which it does not define: pecli will not guess")
