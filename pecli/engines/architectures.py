"""The architecture an engine loads for a config: its ``architectures``, else transformers' class of its model
type (:data:`~pecli.engines.transformers_archs.ARCHITECTURE_OF`), as vLLM and SGLang resolve a config that names
none; :data:`~pecli.engines.transformers_archs.BACKEND_INCOMPATIBLE` are those their Transformers backends refuse."""

from __future__ import annotations

from typing import Any, Mapping

from pecli.engines.transformers_archs import ARCHITECTURE_OF, BACKEND_INCOMPATIBLE


def architecture(config: Mapping[str, Any]) -> str | None:
    """The architecture an engine loads: the config's first, else transformers' class of its model type."""
    given = config.get("architectures")
    if isinstance(given, list) and given and isinstance(given[0], str):
        return given[0]
    kind = config.get("model_type")
    return ARCHITECTURE_OF.get(kind) if isinstance(kind, str) else None


__all__ = ["ARCHITECTURE_OF", "BACKEND_INCOMPATIBLE", "architecture"]
