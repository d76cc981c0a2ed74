"""The keys a ``rope_scaling`` block may hold, each declared once in HF's spelling, and the bounds they share.

A scaling type's record (:class:`~pecli.schemes.scaling.record.ScalingType`) lists the keys its type
takes; each is a :class:`pecli.params.Parameter`, so that its type and range are checked in one place
and it becomes an option, a YAML and ``--set`` key and a line of ``--help`` without more code.
"""
from __future__ import annotations

from numbers import Integral
from typing import Any

from pecli.errors import ConfigError
from pecli.params import Parameter
#: Where ``--help`` lists these keys.
SCALING_GROUP = "RoPE scaling"


#: The longest context a length key may state (rope's ``max_position_embeddings`` has the same bound), and
#: the longest a scaling may reach (factor × original length).
LONGEST_CONTEXT = 1 << 40


def _key(*args: Any, **kwargs: Any) -> Parameter:
    return Parameter(*args, **kwargs, group=SCALING_GROUP)


FACTOR = _key("factor", float, None, "scaling factor s (context ratio)", minimum=1)
ORIGINAL_LENGTH = _key(
    "original_max_position_embeddings", int, None, "the pre-training context length",
    minimum=1, maximum=LONGEST_CONTEXT, default_text="llama3: 8192; yarn, longrope: --max-position-embeddings",
)
BETA_FAST = _key("beta_fast", float, None, "yarn: rotations where extrapolation ends", exclusive_minimum=0,
                  default_text="32")
BETA_SLOW = _key("beta_slow", float, None, "yarn: rotations where interpolation starts", exclusive_minimum=0,
                  default_text="1")
MSCALE = _key("mscale", float, None, "yarn, DeepSeek style: mscale")
MSCALE_ALL_DIM = _key("mscale_all_dim", float, None, "yarn, DeepSeek style: mscale_all_dim")
ATTENTION_FACTOR = _key("attention_factor", float, None, "yarn, longrope: explicit attention scaling",
                        exclusive_minimum=0)
TRUNCATE = _key("truncate", bool, None, "yarn: floor/ceil the correction range", default_text="true")
LOW_FREQ_FACTOR = _key("low_freq_factor", float, None, "llama3: low-frequency band edge", exclusive_minimum=0,
                       default_text="1")
HIGH_FREQ_FACTOR = _key("high_freq_factor", float, None, "llama3: high-frequency band edge",
                        exclusive_minimum=0, default_text="4")
SHORT_FACTOR = _key("short_factor", tuple[float, ...], None,
                    "longrope: per-pair factors up to the original length", exclusive_minimum=0)
LONG_FACTOR = _key("long_factor", tuple[float, ...], None, "longrope: per-pair factors beyond it",
                   exclusive_minimum=0)


#: What the entry point and the formulas check their plain arguments with.
MODEL_LENGTH = Parameter("max_position_embeddings", int, minimum=1)
CONTEXT = Parameter("context", int, minimum=1)
BASE = Parameter("base", float, exclusive_minimum=0)


def check_rotated_dim(rotated_dim: object, *, minimum: int = 2) -> int:
    """``d`` as the caller computed it: an int (not a float, not a bool), even and at least ``minimum``."""
    if isinstance(rotated_dim, bool) or not isinstance(rotated_dim, Integral) or rotated_dim < minimum or rotated_dim % 2:
        raise ConfigError("rotated_dim", f"must be an even integer >= {minimum}, got {rotated_dim!r}")
    return int(rotated_dim)
