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
    explicit: dict[str, Any] = {}
    from_blocks: dict[str, Any] = {}
    for key, value in params.items():
        key = normalize_key(key)
        if key in cls.block_keys:
            from_blocks.update(cls.expand_block(key, value))
        else:
            explicit[cls.aliases.get(key, key)] = value
    if "scaling" in explicit and from_blocks.get("scaling") != explicit["scaling"]:
        # Another scaling than the block's: the block's keys that the new one takes carry over (a model's
        # factor and original length), the others do not.
        kept = set(cls.block_model_keys) | set(cls.block_keys_of(explicit["scaling"]))
        from_blocks = {k: v for k, v in from_blocks.items() if k in kept}
    values: dict[str, Any] = {}
    for key, value in {**from_blocks, **explicit}.items():  # explicit keys win over a block's
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
    values = {key: value for key, value in given.items() if key in own}
    values.update({normalize_key(key): value for key, value in (params or {}).items()})
    for key, value in changes.items():
        if key in own:
            for alias in [a for a, target in cls.aliases.items() if target == key]:
                values.pop(alias, None)
            values[key] = value
    return build_scheme(name, values, length=length)
