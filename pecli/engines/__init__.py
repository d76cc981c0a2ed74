"""The serving engines pecli knows, one module each, imported on first use.

An engine is one module of this package (its record, :class:`~pecli.engines.base.Engine`, named
``ENGINE``) plus its fixtures (``tests/fixtures/engines/<engine>/``, made by running the engine's own
code): the flags it reads and how it parses them, the context it serves, what its rotary code builds
for each layer group and where that departs from transformers, the version measured and the source
cited. :func:`engine` is the one way in; ``pecli diff --runtime`` and ``pecli extend --runtime`` ask it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from pecli.errors import ConfigError

if TYPE_CHECKING:
    from pecli.engines.base import Engine

#: Each engine as ``--runtime`` spells it, and the module that holds its record.
ENGINES = {
    "vllm": "pecli.engines.vllm",
    "sglang": "pecli.engines.sglang",
    "llama.cpp": "pecli.engines.llama_cpp",
    "mlx": "pecli.engines.mlx",
}


def names() -> tuple[str, ...]:
    """The engines' names, as ``--runtime`` takes them."""
    return tuple(ENGINES)


def engine(name: str) -> Engine:
    """The record of engine ``name`` (its module imported now); ConfigError naming the ones there are."""
    if not isinstance(name, str) or name not in ENGINES:
        raise ConfigError("runtime", f"{name!r} is not one of {', '.join(ENGINES)}")
    return importlib.import_module(ENGINES[name]).ENGINE


__all__ = ["ENGINES", "engine", "names"]
