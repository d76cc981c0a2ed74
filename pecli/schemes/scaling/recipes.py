"""The recipes ``pecli extend`` writes a candidate's scaling keys with, where several types share one.

A type that ``pecli extend`` may propose carries an :class:`~pecli.schemes.scaling.record.Extension` on its
record, whose ``write(record, start)`` gives the candidate's keys from s, L₀ and N
(:class:`~pecli.schemes.scaling.record.ExtensionStart`). A type's own writer lives beside its rule (yarn,
llama3, longrope); the shared ones, and the keys every candidate carries for the attention, are here.
"""
from __future__ import annotations

from typing import Any

from pecli.schemes.scaling.record import ExtensionStart, ScalingType


def write_nothing(record: ScalingType, start: ExtensionStart) -> None:
    """No scaling block (the base increase)."""
    return None


def write_factor(record: ScalingType, start: ExtensionStart) -> dict[str, Any]:
    """``rope_type`` and ``factor`` s: linear's θ_i / s, dynamic NTK's growing base."""
    return {"rope_type": record.extension.rope_type, "factor": start.factor, **start.carried}


#: The key DeepSeek-V2/V3's attention reads for every rope type but ``default``: its softmax scale is
#: multiplied by mscale(factor, ``mscale_all_dim``)² (transformers' ``yarn_get_mscale`` in the attention).
#: transformers logs "Unrecognized keys" for it under linear, dynamic, llama3 and longrope, yet the
#: attention reads it there, so those candidates carry it.
ATTENTION_READ_KEYS = ("mscale_all_dim",)
