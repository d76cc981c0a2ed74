"""``--gguf FILE``: a GGUF file's position settings as llama.cpp reads them (the reader is
:mod:`pecli.models.gguf`; its header is read, not its weights)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from pecli.errors import ConfigError
from pecli.params import excerpt

if TYPE_CHECKING:
    from pecli.models.plan import PositionPlan


def read(path: Any, scheme: str | None = None) -> PositionPlan:
    """The plan of the GGUF file at ``path`` (a local path, an https:// URL or hf://…); ``scheme`` is not
    read: a GGUF file says its own."""
    if not isinstance(path, str) or not path:
        raise ConfigError("gguf", f"expected the path of a GGUF file, got {excerpt(path)}")
    from pecli.models.gguf import read_gguf_plan

    return read_gguf_plan(path)


def recognises(path: Any) -> bool:
    """Whether ``path`` names a GGUF file: its suffix, or its first four bytes (``GGUF``)."""
    if isinstance(path, dict) or not isinstance(path, (str, os.PathLike)):
        return False
    if str(path).lower().endswith(".gguf"):
        return True
    try:
        with open(path, "rb") as stream:
            return stream.read(4) == b"GGUF"
    except OSError:
        return False
