"""The registry of RoPE scaling types, :data:`SCALINGS` (as transformers' ``ROPE_INIT_FUNCTIONS``), and
how a name finds its record.

How to add a scaling type: write its module beside the others (its rule ``rule(scaling, model) ->
ScaledFrequencies``, returned through :func:`~pecli.schemes.scaling.record.scaled_frequencies`; a
``validate`` function if it has rules across keys; a writer if ``pecli extend`` may propose it), declare
any new key in :mod:`~pecli.schemes.scaling.keys`, make its :class:`~pecli.schemes.scaling.record.ScalingType`
record with the facts it has (``reads_context``, ``grows_base``, ``from_original_length``, …) and add it to
:data:`SCALINGS`. Nothing else: the ``rope`` scheme's parameters (YAML keys, ``--set``, ``rope_scaling``
blocks), ``--context``, extend's candidates, ``--method`` and ``--pick`` come from the records, and the
rest of pecli asks the records, never a type's name.
"""
from __future__ import annotations

from pecli.errors import ConfigError
from pecli.params import Parameter
from pecli.schemes.scaling.linear import LINEAR
from pecli.schemes.scaling.llama3 import LLAMA3
from pecli.schemes.scaling.longrope import LONGROPE
from pecli.schemes.scaling.ntk import DYNAMIC, NTK
from pecli.schemes.scaling.record import ScalingType
from pecli.schemes.scaling.unscaled import NO_SCALING
from pecli.schemes.scaling.yarn import YARN

HF_TYPE_ALIASES: dict[str, str] = {"default": "none", "su": "longrope", "mrope": "none"}
"""HF ``rope_type`` / legacy ``type`` names that map to another pecli name.

``mrope`` (Qwen2-VL's multimodal RoPE) uses the default frequencies — HF's Qwen2-VL configuration
rewrites it to ``default`` — and splits the pairs into t/h/w sections (``mrope_section``) that rotate
by different position ids; the 1-D ``rope`` scheme has the frequencies, not the sections.
"""

SCALINGS: dict[str, ScalingType] = {
    record.name: record for record in (NO_SCALING, LINEAR, NTK, DYNAMIC, YARN, LLAMA3, LONGROPE)
}
"""Every scaling type pecli knows, by pecli name: its keys, its rules and the function computing it."""

SCALING_TYPES: tuple[str, ...] = tuple(SCALINGS)
"""The scaling types pecli ships, by pecli name (a snapshot of :data:`SCALINGS`' names)."""


def extension_types() -> dict[str, ScalingType]:
    """The records ``pecli extend`` builds candidates from, by method name, in their :attr:`Extension.order`
    (read from :data:`SCALINGS` at each call, so that a type registered later is offered too)."""
    records = sorted((r for r in SCALINGS.values() if r.extension is not None), key=lambda r: r.extension.order)
    return {record.extension.method: record for record in records}


def scaling_type(name: str, *, key: str = "rope_type") -> ScalingType:
    """The record of scaling type ``name`` (HF aliases accepted); ConfigError naming ``key`` if unknown."""
    record = SCALINGS.get(HF_TYPE_ALIASES.get(name, name)) if isinstance(name, str) else None
    if record is None:
        raise ConfigError(key, f"unknown RoPE scaling type {name!r}; allowed: {valid_types_text()}")
    return record


def find_scaling(name: object, *, aliases: bool = True) -> ScalingType | None:
    """The record of a ``rope_type`` as a config file or a plan spells it, or None for a type pecli does not know.

    A block without a type (``name`` None) is no scaling (:data:`NO_SCALING`); a type is found by its pecli
    name or its HF spelling (:attr:`ScalingType.hf_name`: ``default``), and with ``aliases`` by HF's other
    names too (:data:`HF_TYPE_ALIASES`: legacy ``su``, Qwen2-VL's ``mrope``). The caller then asks the record
    what it needs (``find_scaling(kind).from_original_length``), never the name.
    """
    if name is None:
        return NO_SCALING
    if not isinstance(name, str):
        return None
    if aliases:
        name = HF_TYPE_ALIASES.get(name, name)
    return SCALINGS.get(name) or next((record for record in SCALINGS.values() if record.hf_name == name), None)


def scales(name: object, *, aliases: bool = True) -> bool:
    """Whether the type ``name`` (found as :func:`find_scaling` finds it) changes the frequencies: False for no
    scaling, True for the others and for a type pecli does not know (never taken for none)."""
    record = find_scaling(name, aliases=aliases)
    return record is None or record.scales


_KEYS_SEEN: list[tuple[tuple[tuple[str, ScalingType], ...], dict[str, Parameter], tuple[str, ...]]] = []


def _keys_seen() -> tuple[dict[str, Parameter], tuple[str, ...]]:
    """The keys of :func:`scaling_keys` and their names, kept while :data:`SCALINGS` holds the same records (a
    type registered later makes them anew). Not copies: for this module's readers, which only read them."""
    records = tuple(SCALINGS.items())
    if not _KEYS_SEEN or _KEYS_SEEN[0][0] != records:
        keys: dict[str, Parameter] = {}
        for _, record in records:
            for key in record.keys:
                keys.setdefault(key.name, key)
        _KEYS_SEEN[:] = [(records, keys, tuple(keys))]
    return _KEYS_SEEN[0][1], _KEYS_SEEN[0][2]


def scaling_keys() -> dict[str, Parameter]:
    """Every scaling key once, by HF name, in the order the records of :data:`SCALINGS` first list them.

    Every config read asks several times; the answer is kept while :data:`SCALINGS` holds the same records
    (a type registered later makes it anew). The caller gets its own copy.
    """
    return dict(_keys_seen()[0])


def scaling_key_names() -> tuple[str, ...]:
    """The names of :func:`scaling_keys`, in its order, without copying the table (a scaling's attributes ask
    on every read)."""
    return _keys_seen()[1]


def is_scaling_key(name: str) -> bool:
    """Whether ``name`` is a key of :func:`scaling_keys`, without copying the table."""
    return name in _keys_seen()[0]


def shared_scaling_keys() -> tuple[str, ...]:
    """The keys at least half of the scaling types take (factor, the original length)."""
    extending = [record for record in SCALINGS.values() if record.keys]
    return tuple(
        name for name in scaling_key_names()
        if 2 * sum(name in record.key_names for record in extending) >= len(extending)
    )


def valid_types_text() -> str:
    """The types a message lists as allowed."""
    return ", ".join(SCALINGS) + " (HF 'default' = none, legacy 'su' = longrope)"
