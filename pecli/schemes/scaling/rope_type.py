"""The rope type a HuggingFace RoPE block names: the one reader of ``rope_type`` and its legacy ``type``.

A ``rope_scaling`` (transformers 4) or ``rope_parameters`` (5) block names its type under ``rope_type``,
or under ``type``, the older spelling, which transformers still reads: ``standardize_rope_params`` in
``modeling_rope_utils.py`` does ``setdefault("rope_type", get("type", "default"))``. Every part of pecli
that reads a block's type as the file wrote it — the scaling records (:meth:`RopeScaling.from_hf
<pecli.schemes.scaling.value.RopeScaling.from_hf>`), the family table, the engines' rules — reads it here,
so that a block has one type whoever asks. A key whose value is null counts as absent, as everywhere pecli
reads a config.
"""

from __future__ import annotations

from typing import Any, Mapping

#: The keys that name a block's type, the first given winning.
TYPE_KEYS = ("rope_type", "type")


def rope_type_key(block: Mapping[str, Any] | None) -> str:
    """The key that names ``block``'s type: ``rope_type``, else ``type`` when only that is given."""
    return next((key for key in TYPE_KEYS if block and block.get(key) is not None), TYPE_KEYS[0])


def hf_rope_type(block: Mapping[str, Any] | None, default: Any = "default") -> Any:
    """The type ``block`` names (``rope_type``, else ``type``) as written; ``default`` when it names
    none or there is no block (transformers' own default is ``"default"``: unscaled)."""
    if not block:
        return default
    named = block.get(rope_type_key(block))
    return default if named is None else named


__all__ = ["TYPE_KEYS", "hf_rope_type", "rope_type_key"]
