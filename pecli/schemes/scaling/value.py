"""One scaling value, :class:`RopeScaling`: a type and the keys given, read from and written to HF's form.

``RopeScaling("yarn", factor=4.0, original_max_position_embeddings=4096)`` is what a ``rope_scaling`` /
``rope_parameters`` block says; :meth:`RopeScaling.from_hf` reads one as a model's ``config.json`` ships
it (``rope_type`` or the legacy ``type``), :meth:`RopeScaling.to_hf` writes it back, and
:meth:`RopeScaling.validated` checks it as HF's ``rope_config_validation`` does, raising instead of warning.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pecli.errors import ConfigError
from pecli.numbers import integer, number
from pecli.params import Parameter, base_type, excerpt, type_word
from pecli.schemes.scaling.keys import LONGEST_CONTEXT, MODEL_LENGTH, check_rotated_dim
from pecli.schemes.scaling.record import ScalingType
from pecli.schemes.scaling.registry import (HF_TYPE_ALIASES, SCALINGS, is_scaling_key, scaling_key_names, scaling_type,
                                             valid_types_text)
from pecli.schemes.scaling.rope_type import TYPE_KEYS, hf_rope_type, rope_type_key

# Keys the reader leaves to its caller (rope_theta, partial_rotary_factor) or that HF accepts without
# using them in the frequencies (``finetuned``, shipped by YaRN's Llama 2 checkpoints).
_IGNORED_HF_KEYS = frozenset({"rope_theta", "partial_rotary_factor", "finetuned", "mrope_section", "mrope_interleaved"})


@dataclass(frozen=True, init=False, repr=False)
class RopeScaling:
    """A RoPE context-extension scaling, as HF's ``rope_scaling`` / ``rope_parameters`` describes it.

    ``RopeScaling("yarn", factor=4.0, original_max_position_embeddings=4096)``: the type and the keys
    given, in HF spelling. Every key of :func:`scaling_keys` reads as an attribute (None when not
    given); :meth:`value` adds the type's defaults.

    Parameters
    ----------
    rope_type : str
        One of :data:`SCALING_TYPES`. HF's ``"default"`` maps to ``"none"``, legacy ``"su"`` to
        ``"longrope"``.
    **keys
        The scaling's keys (see each record of :data:`SCALINGS`); None counts as not given, lists
        become tuples.

    Notes
    -----
    Source: HF transformers ``modeling_rope_utils.py`` (``rope_config_validation``). Construction does
    not check the values; :meth:`validate` does (and :func:`compute_inv_freq` calls it).
    """

    rope_type: str
    given: tuple[tuple[str, Any], ...]

    def __init__(self, rope_type: str = "none", **keys: Any) -> None:
        if isinstance(rope_type, str):
            rope_type = HF_TYPE_ALIASES.get(rope_type, rope_type)
        known = scaling_key_names()
        for key in keys:
            if key not in known:
                raise ConfigError(key, f"is not a RoPE scaling key (the keys: {', '.join(known)})")
        given = tuple((key, _frozen(keys[key])) for key in known if keys.get(key) is not None)
        object.__setattr__(self, "rope_type", rope_type)
        object.__setattr__(self, "given", given)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not attributes: the scaling keys read as attributes.
        if is_scaling_key(name):
            value = next((value for key, value in self.given if key == name), None)
            object.__setattr__(self, name, value)  # the keys given never change: later reads find it at once
            return value
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __repr__(self) -> str:
        keys = "".join(f", {key}={value!r}" for key, value in self.given)
        return f"RopeScaling({self.rope_type!r}{keys})"

    @property
    def values(self) -> dict[str, Any]:
        """The keys given, with their values."""
        return dict(self.given)

    @property
    def record(self) -> ScalingType:
        """The type's record in :data:`SCALINGS` (ConfigError naming ``rope_type`` if unknown)."""
        return scaling_type(self.rope_type)

    def value(self, key: str) -> Any:
        """The key's value, or the type's default for it (None when it has none)."""
        given = next((value for name, value in self.given if name == key), None)
        return self.record.defaults.get(key) if given is None else given

    # ---------------------------------------------------------------- construction from HF
    @classmethod
    def from_hf(cls, block: Mapping[str, Any] | None) -> RopeScaling:
        """Build a scaling from a HF ``rope_scaling`` (v4) or ``rope_parameters`` (v5) dict.

        Parameters
        ----------
        block : dict or None
            As a model's ``config.json`` ships it. The type is read from ``"rope_type"`` or, failing
            that, the legacy ``"type"`` (``"rope_type"`` wins when both are present, as in HF); a missing
            type means ``"default"``. ``"rope_theta"`` and ``"partial_rotary_factor"`` are ignored
            (the caller reads them). Keys whose value is ``None`` count as absent. Lists become tuples
            of float. ``None`` or ``{}`` gives the unscaled ``RopeScaling()``.

        Returns
        -------
        RopeScaling

        Raises
        ------
        ConfigError
            Unknown type (key ``rope_type``), a key the type does not use (names the key and the allowed
            keys), or a value of the wrong kind (a JSON string where a number belongs, too).

        Notes
        -----
        Source: HF ``rope_config_validation`` / ``_check_received_keys`` (``"type"`` is the BC spelling of
        ``"rope_type"``); HF only warns on unrecognised keys, pecli refuses them.
        """
        if block is None:
            return cls()
        if not isinstance(block, Mapping):
            raise ConfigError("rope_scaling", f"must be a mapping (dict) or null, got {type(block).__name__}")
        raw = {str(k): v for k, v in block.items() if v is not None}
        type_key, type_name = rope_type_key(raw), hf_rope_type(raw)
        for key in TYPE_KEYS:
            raw.pop(key, None)
        if not isinstance(type_name, str):
            raise ConfigError(type_key, f"must be a string, one of {valid_types_text()}, got {type_name!r}")
        record = scaling_type(type_name, key=type_key)
        keys: dict[str, Any] = {}
        for key, value in raw.items():
            if key in _IGNORED_HF_KEYS:
                continue
            if key not in record.key_names:
                allowed = ", ".join(record.key_names) or "none besides rope_type"
                raise ConfigError(key, f"not a key of rope_type {type_name!r}; allowed keys: {allowed}")
            keys[key] = _read_document_value(record.key(key), value)
        return cls(record.name, **keys)

    def to_hf(self) -> dict[str, Any]:
        """Return the HF ``rope_scaling`` dict of this scaling (``rope_type`` plus the keys given).

        Returns
        -------
        dict
            ``{"rope_type": "default"}`` for ``"none"``; tuples become lists. pecli's ``"ntk"`` has no HF
            equivalent and is written as ``"ntk"``.
        """
        record = SCALINGS.get(self.rope_type)
        out: dict[str, Any] = {"rope_type": self.rope_type if record is None else record.hf_name}
        out.update({key: list(value) if isinstance(value, tuple) else value for key, value in self.given})
        return out

    # ---------------------------------------------------------------- validation
    def validated(self, *, rotated_dim: int, max_position_embeddings: int | None) -> RopeScaling:
        """This scaling with every key converted and checked; see :meth:`validate`.

        A plan's groups and every scheme built from them ask again of the same scaling: the answer is kept
        (:data:`_VALIDATED`) by the exact values given (type and repr: ``True``, ``1`` and ``1.0`` differ), the
        record that checked them and the arguments; a refusal is not kept, it is raised again each time.
        """
        record = self.record
        key = (self.rope_type, tuple((name, type(value), repr(value)) for name, value in self.given),
               type(rotated_dim), repr(rotated_dim), type(max_position_embeddings), repr(max_position_embeddings))
        kept = _VALIDATED.get(key)
        if kept is not None and kept[0] is record:
            return kept[1]
        checked = self._checked(record, rotated_dim, max_position_embeddings)
        if len(_VALIDATED) >= _VALIDATED_KEPT:
            _VALIDATED.clear()
        _VALIDATED[key] = (record, checked)
        return checked

    def _checked(self, record: ScalingType, rotated_dim: int, max_position_embeddings: int | None) -> RopeScaling:
        check_rotated_dim(rotated_dim)
        if max_position_embeddings is not None:
            max_position_embeddings = MODEL_LENGTH.coerce(max_position_embeddings)
        for key, _ in self.given:
            if key not in record.key_names:
                raise ConfigError(key, _foreign_key_message(key, record))
        for key in record.required:
            if self.values.get(key) is None:
                raise ConfigError(key, f"required for rope_type {record.name!r}")
        checked = RopeScaling(record.name, **{key: record.key(key).coerce(value) for key, value in self.given})
        _check_reach(checked, max_position_embeddings)
        if record.validate is not None:
            record.validate(checked, int(rotated_dim), max_position_embeddings)
        return checked

    def validate(self, *, rotated_dim: int, max_position_embeddings: int | None) -> None:
        """Check this scaling as HF's ``rope_config_validation`` does, raising instead of warning.

        Parameters
        ----------
        rotated_dim : int
            ``d``, the number of rotated channels per head (even, >= 2; > 2 for ntk and dynamic,
            whose exponent is ``d / (d - 2)``).
        max_position_embeddings : int or None
            The model's (extended) ``max_position_embeddings``.

        Raises
        ------
        ConfigError
            Naming the offending key and what is allowed: an unknown ``rope_type``; a key the type does
            not take (the message says which types take it); a required key missing; a value outside its
            key's range (:data:`scaling_keys`); a rule of the type across keys (its record's ``validate``).

        Notes
        -----
        Source: HF ``_validate_{linear,dynamic,yarn,longrope,llama3}_rope_parameters`` (v4.4x and v5).
        """
        self.validated(rotated_dim=rotated_dim, max_position_embeddings=max_position_embeddings)


#: :meth:`RopeScaling.validated`'s answers, by the scaling's exact values and the arguments; emptied when it
#: holds :data:`_VALIDATED_KEPT` (a fuzzer's thousands of configs).
_VALIDATED: dict[tuple[Any, ...], tuple[ScalingType, RopeScaling]] = {}
_VALIDATED_KEPT = 4096


def _check_reach(scaling: RopeScaling, max_position_embeddings: int | None) -> None:
    """Refuse a factor that takes the original length (else the model's) past :data:`LONGEST_CONTEXT`."""
    given = scaling.original_max_position_embeddings
    original, key = (given, "original_max_position_embeddings") if given is not None else \
        (max_position_embeddings, "max_position_embeddings")
    if scaling.factor is not None and original is not None and not scaling.factor * original <= LONGEST_CONTEXT:
        raise ConfigError("factor", f"{number(scaling.factor)} × {key} {integer(original)} reaches "
                          f"{number(scaling.factor * original)} tokens, past the 2^40 any context may be")


def _frozen(value: Any) -> Any:
    """Lists as tuples (floats where numbers), so that a scaling is hashable."""
    if isinstance(value, list):
        return tuple(float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else x for x in value)
    return value


def _read_document_value(key: Parameter, value: Any) -> Any:
    """A value from config.json or a YAML block: as :meth:`Parameter.coerce`, but a string is not a number.

    ``coerce`` accepts strings because the command line gives nothing else; in a document a quoted
    ``"2"`` where a number belongs is a mistake worth naming.
    """
    items = value if key.is_list and isinstance(value, (list, tuple)) else [value]
    if base_type(key.type) is not str and any(isinstance(item, str) for item in items):
        raise ConfigError(key.name, f"expected {type_word(key.type)}, got {excerpt(value)}")
    return key.coerce(value)


def _foreign_key_message(key: str, record: ScalingType) -> str:
    takers = ", ".join(name for name, other in SCALINGS.items() if key in other.key_names)
    if not record.keys:
        return f"applies only with a scaling ({takers}); none is set (rope_type / --scaling)"
    return (f"not used by rope_type {record.name!r} (allowed keys: {', '.join(record.key_names)}); "
            f"it is a key of {takers}")
