"""The scheme factory: a scheme built from raw parameter values, each coerced and validated.

Every door builds its schemes here (the request pipeline in :mod:`pecli.config`, a model's layer groups
in :mod:`pecli.models`, the library), so that a value means the same whichever door it came through.
"""

from __future__ import annotations

from typing import Any, Mapping

from pecli.errors import ConfigError
from pecli.params import Parameter
from pecli.schemes import Scheme, get_scheme_class

#: The sequence length a run uses when nothing gives one.
DEFAULT_LENGTH = 512


def normalize_key(key: str) -> str:
    """A key as pecli spells it: ``rope-theta`` → ``rope_theta``."""
    return key.replace("-", "_")


def scheme_parameters(cls: type[Scheme]) -> dict[str, Parameter]:
    """The parameters of a scheme class (name, type, default, range, help), declared once by the scheme."""
    return cls.parameters()


def build_scheme(name: str, params: Mapping[str, Any], *, length: int = DEFAULT_LENGTH) -> Scheme:
    """Build scheme ``name`` from raw parameter values, coercing and validating each.

    Parameters the user left out that depend on the sequence length (binary ``bits``, learned
    ``max_length``, integer ``norm_length``) are filled from ``length``.
    """
    cls = get_scheme_class(name)
    known = scheme_parameters(cls)
    values: dict[str, Any] = {}
    for key, value in layered(cls, params).items():
        if key not in known:
            valid = ", ".join(known) or "none"
            raise ConfigError(key, f"is not a parameter of scheme {name!r} (its parameters: {valid})")
        if value is None:  # null in YAML: the default
            continue
        values[key] = known[key].coerce(value)
    length_defaults = cls.defaults_for_length(length)
    filled = [key for key in length_defaults if values.get(key) is None]
    values.update({key: length_defaults[key] for key in filled})
    return cls.from_params({**values, "length_filled": tuple(filled)})


def accepted_keys(cls: type[Scheme]) -> set[str]:
    """Every key that configures scheme ``cls``: its parameters, their aliases and its block keys."""
    return set(scheme_parameters(cls)) | set(cls.aliases) | set(cls.block_keys)


def variant(
    name: str, given: Mapping[str, Any], length: int, params: Mapping[str, Any] | None = None, **changes: Any
) -> Scheme:
    """Scheme ``name`` built from the parameters a user gave for a run, as a command setting several
    schemes side by side needs it (``compare``, ``plot dot-distance``, ``plot circle``'s bases).

    The keys of ``given`` that the scheme takes (``--base`` reaches sinusoidal and rope, ``--heads``
    alibi), then ``params`` (one entry's own keys, which must be the scheme's), then ``changes`` (a base
    the command sweeps), each applied only where the scheme takes it; a key given under an alias is
    replaced by a change to the key it names.
    """
    cls = get_scheme_class(name)
    own = accepted_keys(cls)
    taken = {key: value for key, value in changes.items() if key in own}
    return build_scheme(name, layered(cls, {k: v for k, v in given.items() if k in own}, params, taken), length=length)


#: The parameter naming a block's variant (rope: the scaling type), which decides which of a block's keys apply.
VARIANT = "scaling"


def layered(cls: type[Scheme], *layers: Mapping[str, Any] | None) -> dict[str, Any]:
    """The parameters of scheme ``cls`` that ``layers`` give, each a change over the ones before it, as
    the scheme takes a change: keys under their own names (``rope_theta`` → ``base``), a block
    (``rope_scaling``) read into its parameters.

    Within a layer, its own keys win over its block's, and a variant other than the block's (``scaling:
    yarn`` beside a llama3 block) keeps only the block's keys the new variant takes (a model's factor
    and original length) and :attr:`~pecli.schemes.base.Scheme.block_model_keys`. Across layers, a later
    key replaces an earlier one; a later block replaces the earlier variant and all its keys (a block is
    the whole scaling, as in a config file; ``rope_scaling: null`` switches it off), and a later variant
    alone keeps the earlier keys it takes (``--scaling yarn`` over a model's llama3 block keeps its factor
    and original length).

    Returns
    -------
    dict
        Parameter name → value (None: the default), not yet coerced: :func:`build_scheme` checks them.
    """
    variant_keys = _variant_keys(cls)
    out: dict[str, Any] = {}
    for layer in layers:
        values, blocked = _one_layer(cls, layer or {})
        if blocked:
            out = {k: v for k, v in out.items() if k not in variant_keys}
        elif VARIANT in values and values[VARIANT] != out.get(VARIANT):
            kept = set(cls.block_keys_of(values[VARIANT])) if values[VARIANT] is not None else set()
            out = {k: v for k, v in out.items() if k not in variant_keys or k in kept}
        out.update(values)
    return out


def _one_layer(cls: type[Scheme], params: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """One layer's parameters (its block read, its own keys winning) and whether it gave a block."""
    explicit: dict[str, Any] = {}
    from_blocks: dict[str, Any] = {}
    blocked = False
    for key, value in params.items():
        key = normalize_key(str(key))
        if key in cls.block_keys:
            from_blocks.update(cls.expand_block(key, value))
            blocked = True
        else:
            explicit[cls.aliases.get(key, key)] = value
    if VARIANT in explicit and from_blocks.get(VARIANT) != explicit[VARIANT]:
        # Another variant than the block's: the block's keys that the new one takes carry over (a model's
        # factor and original length), the others do not.
        kept = set(cls.block_model_keys) | set(cls.block_keys_of(explicit[VARIANT]))
        from_blocks = {k: v for k, v in from_blocks.items() if k in kept}
    return {**from_blocks, **explicit}, blocked


def _variant_keys(cls: type[Scheme]) -> frozenset[str]:
    """The variant parameter and every parameter one of its variants takes: what a new block replaces."""
    parameter = scheme_parameters(cls).get(VARIANT) if cls.block_keys else None
    if parameter is None:
        return frozenset()
    return frozenset({VARIANT}.union(*(cls.block_keys_of(choice) for choice in parameter.choices or ())))
