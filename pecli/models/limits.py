"""Bounds on the sizes a model's ``config.json`` states, checked before a plan is built from them.

A plan holds one entry per layer (its groups list their layers), so a config claiming a billion layers
would have pecli build lists of a billion integers — gigabytes from a file of two hundred bytes —
before any command could refuse it. :func:`check_config_sizes` refuses such a count first, with a
one-line error naming the key.

The bound, :data:`MAX_LAYERS` = 2¹⁶, is far above any released model (the deepest have about a
hundred and twenty layers) and small enough that a plan of that many layers takes a few megabytes.
"""

from __future__ import annotations

import numbers
from typing import Any

from pecli.errors import ConfigError

#: Most layers a model config may state (``num_hidden_layers`` and the keys that spell it).
MAX_LAYERS = 1 << 16
#: The keys that give a number of layers, in any family and in any nested sub-config.
LAYER_COUNT_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers", "num_decoder_layers",
                    "num_encoder_layers", "decoder_layers", "encoder_layers")
#: Deepest nesting searched (a config.json nests sub-configs two or three levels deep).
MAX_SEARCH_DEPTH = 8


def check_layer_count(key: str, value: Any, source: str, option: str = "hf_config") -> None:
    """Refuse a number of layers above :data:`MAX_LAYERS` (a value of another type is left to the
    reader of that key, which says what it expected).

    Raises
    ------
    ConfigError
        (key ``option``: the file's, ``hf_config`` or ``gguf``) ``value`` is a number above
        :data:`MAX_LAYERS`, or not finite.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return
    if not value <= MAX_LAYERS:  # NaN fails this too
        raise ConfigError(option, f"{key} in {source} is {value!r}; pecli reads models of at most "
                                       f"{MAX_LAYERS:,} layers")


def check_config_sizes(data: Any, source: str) -> None:
    """Refuse, before any plan is built, a parsed ``config.json`` whose layer counts (at any level, in
    any sub-config such as ``text_config``) exceed :data:`MAX_LAYERS`.

    Raises
    ------
    ConfigError
        (key ``hf_config``) naming the key and its value.
    """
    pending = [(data, 0)]
    while pending:
        node, depth = pending.pop()
        if not isinstance(node, dict) or depth > MAX_SEARCH_DEPTH:
            continue
        for key, value in node.items():
            if key in LAYER_COUNT_KEYS:
                check_layer_count(key, value, source)
            elif isinstance(value, dict):
                pending.append((value, depth + 1))


__all__ = ["LAYER_COUNT_KEYS", "MAX_LAYERS", "check_config_sizes", "check_layer_count"]
