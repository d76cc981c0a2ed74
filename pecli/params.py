"""Parameter declarations and the one validation path every configuration value goes through.

A scheme parameter (or a RoPE scaling key, or a command setting) is declared once, as a
:class:`Parameter`: its name, type, default, help, valid range and the values it may take. Everything
else is derived from that record: the dataclass field of a scheme (:func:`param`), the command-line
option, the YAML and ``--set`` key, the coercion of a raw value (:func:`coerce`) and the error message
that names the key and what is allowed.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
import re
import sys
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pecli.errors import ConfigError

#: Longest excerpt of a value that an error message quotes.
EXCERPT = 60


@dataclass(frozen=True)
class Parameter:
    """One configuration key: what it holds and which values are valid.

    Attributes
    ----------
    name:
        The key in snake_case (``max_relative_position``); the option is ``--max-relative-position``.
    type:
        ``int``, ``float``, ``bool``, ``str``, ``Path`` (a file name: a non-empty string) or
        ``tuple[float, ...]`` (a list: a comma list on the command line, a YAML list in a file);
        ``object`` takes any value and leaves it to the caller.
    default:
        The value used when the key is not given (None: the owner fills it in, e.g. from the length).
    help:
        One line for ``--help``.
    choices, minimum, exclusive_minimum, maximum:
        The valid values; ranges apply to numbers and to each element of a list.
    default_text:
        How ``--help`` states a default that is not a constant (``"ceil(log2 L)"``).
    group:
        The family of keys it belongs to (``"RoPE scaling"``), where ``--help`` lists it; None: with the
        other parameters of its scheme.
    from_file:
        A list that may also be given as the name of a file holding it (``.npy``, or text; see
        :func:`pecli.config_files.read_numbers`): ``--inv-freq freqs.npy``.
    attribute:
        The dataclass field holding the value, when it is not ``name`` (rope's ``inv_freq`` key is held
        by ``given_inv_freq``: ``scheme.inv_freq`` is the array of frequencies in use); None: ``name``.
    """

    name: str
    type: Any
    default: Any = None
    help: str = ""
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    exclusive_minimum: float | None = None
    maximum: float | None = None
    default_text: str | None = None
    group: str | None = None
    from_file: bool = False
    attribute: str | None = None

    @property
    def base_type(self) -> Any:
        """The type without ``| None``."""
        return base_type(self.type)

    @property
    def is_list(self) -> bool:
        return typing.get_origin(self.base_type) is tuple

    def coerce(self, value: Any) -> Any:
        """``value`` converted to this parameter's type and checked against its range (a list parameter
        :attr:`from_file` reads a file name's numbers first)."""
        if self.from_file and isinstance(value, (str, Path)):
            from pecli.config_files import names_number_file, read_numbers

            if names_number_file(value):
                value = read_numbers(str(value), self.name)
        return coerce(
            self.name, value, self.type, choices=self.choices, minimum=self.minimum,
            exclusive_minimum=self.exclusive_minimum, maximum=self.maximum,
        )

    def describe_default(self) -> str | None:
        """The default as ``--help`` states it, or None when there is none to state."""
        if self.default_text is not None:
            return self.default_text
        if self.default is None:
            return None
        if isinstance(self.default, bool):
            return "true" if self.default else "false"
        if isinstance(self.default, float):
            return f"{self.default:g}"
        return str(self.default)


def param(
    default: Any,
    help: str,
    *,
    choices: tuple[str, ...] | None = None,
    minimum: float | None = None,
    exclusive_minimum: float | None = None,
    maximum: float | None = None,
    default_text: str | None = None,
    group: str | None = None,
    from_file: bool = False,
    key: str | None = None,
) -> Any:
    """Declare a scheme parameter as a dataclass field; :func:`dataclass_parameters` reads it back.

    ``key`` names the parameter when the field's own name is taken (see :attr:`Parameter.attribute`).
    """
    metadata = {
        "parameter": dict(
            help=help, choices=choices, minimum=minimum, exclusive_minimum=exclusive_minimum, maximum=maximum,
            default_text=default_text, group=group, from_file=from_file, key=key,
        )
    }
    return field(default=default, metadata=metadata)


def dataclass_parameters(cls: type) -> dict[str, Parameter]:
    """The :class:`Parameter` of every field of ``cls`` declared with :func:`param`, in field order."""
    return dict(_dataclass_parameters(cls))


@functools.lru_cache(maxsize=None)
def _dataclass_parameters(cls: type) -> dict[str, Parameter]:
    out: dict[str, Parameter] = {}
    for f in dataclasses.fields(cls):
        if "parameter" in f.metadata:
            declared = dict(f.metadata["parameter"])
            name = declared.pop("key", None) or f.name
            attribute = None if name == f.name else f.name
            out[name] = Parameter(name, _field_type(cls, f), f.default, **declared, attribute=attribute)
    return out


def field_values(parameters: dict[str, Parameter], values: dict[str, Any]) -> dict[str, Any]:
    """``values`` keyed by parameter name, keyed by the dataclass fields that hold them instead."""
    return {(parameters[key].attribute or key) if key in parameters else key: value for key, value in values.items()}


def _field_type(cls: type, field: dataclasses.Field) -> Any:
    """The type of a field, its annotation evaluated in the module of the class that declares it (what
    ``typing.get_type_hints`` gives, for this field only: start-up reads every scheme's parameters)."""
    if not isinstance(field.type, str):
        return field.type
    owner = next(c for c in cls.__mro__ if field.name in c.__dict__.get("__annotations__", {}))
    return _evaluated(field.type, owner.__module__)


@functools.lru_cache(maxsize=None)
def _evaluated(annotation: str, module: str) -> Any:
    return eval(annotation, vars(sys.modules[module]))  # noqa: S307 - the source's own annotation


# -- coercion ----------------------------------------------------------------------------------------
#: The plain types :func:`base_type` gives back as they are (most annotations: asked once per value coerced).
_PLAIN_TYPES = frozenset({int, float, bool, str, Path, object})


def base_type(annotation: Any) -> Any:
    """``int | None`` → ``int``; ``tuple[float, ...]`` stays as it is."""
    if type(annotation) is type and annotation in _PLAIN_TYPES:
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return base_type(args[0]) if len(args) == 1 else annotation
    return annotation


def excerpt(value: Any) -> str:
    """``repr(value)``, cut to a short excerpt: an error message never prints a whole large value."""
    if isinstance(value, (list, tuple, dict)) and len(value) > 8:
        text = f"a {type(value).__name__} of {len(value)} items"
        return text
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 196:
        # past 59 digits repr would be cut anyway; past 4300, Python refuses to write it at all
        return f"an integer of about {math.floor(value.bit_length() * math.log10(2)) + 1:,} digits"
    text = repr(value)
    return text if len(text) <= EXCERPT else text[: EXCERPT - 1] + "…"


def type_word(kind: Any) -> str:
    """How an error message names a type."""
    kind = base_type(kind)
    if typing.get_origin(kind) is tuple:
        return "a list of integers" if typing.get_args(kind)[0] is int else "a list of numbers"
    return {int: "an integer", float: "a number", bool: "true or false", str: "a string", Path: "a file name"}.get(
        kind, str(kind)
    )


def number_text(x: float) -> str:
    """A bound as a message writes it: ``1`` rather than ``1.0``."""
    return str(int(x)) if float(x).is_integer() else str(x)


def coerce(
    key: str,
    value: Any,
    kind: Any,
    *,
    choices: tuple[str, ...] | None = None,
    minimum: float | None = None,
    exclusive_minimum: float | None = None,
    maximum: float | None = None,
) -> Any:
    """Convert ``value`` to ``kind`` and check its range; raise :class:`ConfigError` naming ``key``.

    Strings are accepted for every type (they come from the command line and ``--set``); integral
    floats are accepted as integers; lists may be given as ``"1,2,3"``. Non-finite numbers are refused.
    """
    kind = base_type(kind)
    given = value

    def bad() -> ConfigError:  # built only when raised: its excerpt costs more than the check (long lists)
        return ConfigError(key, f"expected {type_word(kind)}, got {excerpt(given)}")

    if kind is bool:
        if isinstance(value, bool):
            result = value
        elif isinstance(value, str) and value.lower() in ("true", "yes", "on", "1", "false", "no", "off", "0"):
            result = value.lower() in ("true", "yes", "on", "1")
        else:
            raise bad()
    elif kind is int:
        result = _integer(value, bad)
    elif kind is float:
        if isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
            raise bad()
        try:
            result = float(value)
        except (TypeError, ValueError, OverflowError):
            raise bad() from None
        if not math.isfinite(result):
            raise ConfigError(key, f"must be finite, got {excerpt(value)}")
    elif typing.get_origin(kind) is tuple:
        item_kind = typing.get_args(kind)[0]
        if isinstance(value, str):  # "1,2,3", "[1, 2, 3]", and sizes as "16x16"
            text = value.strip().removeprefix("[").removesuffix("]")
            separator = "x" if item_kind is int and re.fullmatch(r"\s*\d+(\s*x\s*\d+)+\s*", text) else ","
            value = [item.strip() for item in text.split(separator)]
        if hasattr(value, "tolist") and getattr(value, "ndim", 0) == 1:  # a 1-D NumPy array (library callers)
            value = value.tolist()
        items = value
        if not isinstance(items, (list, tuple)):
            raise bad()
        if _plain_numbers(items, item_kind, minimum, exclusive_minimum, maximum):
            return tuple(items)
        return tuple(
            coerce(key, item, item_kind, minimum=minimum, exclusive_minimum=exclusive_minimum, maximum=maximum)
            for item in items
        )
    elif kind is str:
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise bad()
        result = str(value)
    elif kind is Path:
        if not isinstance(value, (str, Path)) or not str(value).strip():
            raise ConfigError(key, f"expected a file name, got {excerpt(value)}")
        result = str(value)
    else:
        result = value
    if choices is not None and result not in choices:
        raise choice_error(key, value, choices)
    if isinstance(result, (int, float)) and not isinstance(result, bool):
        if minimum is not None and result < minimum:
            raise ConfigError(key, f"must be >= {number_text(minimum)}, got {excerpt(value)}")
        if exclusive_minimum is not None and result <= exclusive_minimum:
            raise ConfigError(key, f"must be > {number_text(exclusive_minimum)}, got {excerpt(value)}")
        if maximum is not None and result > maximum:
            raise ConfigError(key, f"must be <= {number_text(maximum)}, got {excerpt(value)}")
    return result


def choice_error(key: str, value: Any, choices: Any) -> ConfigError:
    """``KEY: must be one of a, b, c; got 'x'`` with a "did you mean" when one choice is close."""
    import difflib

    choices = [str(choice) for choice in choices]
    guess = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.6) if isinstance(value, str) else []
    hint = f" (did you mean {guess[0]}?)" if guess else ""
    return ConfigError(key, f"must be one of {', '.join(choices)}; got {excerpt(value)}{hint}")


def _plain_numbers(items: list | tuple, kind: Any, minimum: float | None, exclusive_minimum: float | None,
                   maximum: float | None) -> bool:
    """Whether every item is already a ``kind`` (``float``: finite) within the bounds, so that coercing each
    would return it unchanged (a long list of factors is read item by item otherwise)."""
    if kind not in (int, float):
        return False
    if not items:
        return True
    if set(map(type, items)) != {kind}:
        return False
    # a sum of floats is finite only if each of them is (an inf or a NaN stays one); a finite sum that
    # overflows says False too, and the items are then coerced one by one, as any other list
    if kind is float and not math.isfinite(sum(items)):
        return False
    low, high = min(items), max(items)  # NaN is ruled out: the items are ordered
    if minimum is not None and low < minimum:
        return False
    if exclusive_minimum is not None and low <= exclusive_minimum:
        return False
    return maximum is None or high <= maximum


def _integer(value: Any, bad: Callable[[], ConfigError]) -> int:
    if isinstance(value, bool):
        raise bad()
    if isinstance(value, int):
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            value = float(text)
        except ValueError:
            raise bad() from None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if hasattr(value, "__index__"):  # NumPy integers
        return int(value.__index__())
    raise bad()


__all__ = [
    "Parameter", "base_type", "choice_error", "coerce", "dataclass_parameters", "excerpt", "field_values", "number_text",
    "param", "type_word",
]
