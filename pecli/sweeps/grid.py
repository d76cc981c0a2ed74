"""The grid of a sweep: named axes of values, checked before any work, and the points of their product.

An axis is a configuration key and the values it takes: ``base=1e4,1e5,1e6`` on the command line, or
``base: [1e4, 1e5, 1e6]`` under ``grid:`` in a YAML file. Its name is a key that configures a point —
a parameter of the scheme (``base``, ``dim``, ``factor``, … or an alias such as ``rope_theta``), the run
keys ``scheme`` and ``length``, or a setting of the check (``train_length``, ``samples``, …) — and each
value goes through that key's own declaration (:class:`~pecli.params.Parameter`), so that a value the
key refuses by type, range or choice is bad input before any point runs. The points are the product of
the axes, in grid order: the first axis varies slowest, the last fastest (C order), point 0 first.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Sequence

from pecli.config import RUN_SETTINGS, normalize_key
from pecli.errors import ConfigError
from pecli.params import Parameter, excerpt
from pecli.schemes import SCHEMES, get_scheme_class

#: A grid of this many points or more runs only when asked with ``--yes``.
CONFIRM_POINTS = 10**6
#: The run keys a grid may vary besides the scheme's parameters and the check's settings.
RUN_AXES = ("scheme", "length")


@dataclass(frozen=True)
class Axis:
    """One axis of a grid: a key and its values, each already checked by the key's declaration."""

    name: str
    values: tuple[Any, ...]
    parameter: Parameter

    def texts(self) -> list[str]:
        """The values as a row holds them, for tables, ticks and messages."""
        return [str(cell_value(value)) for value in self.values]


@dataclass(frozen=True)
class Grid:
    """The axes of a sweep; its points are their product, in C order (the last axis varies fastest)."""

    axes: tuple[Axis, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(axis.name for axis in self.axes)

    @property
    def count(self) -> int:
        return math.prod(len(axis.values) for axis in self.axes)

    def shape_text(self) -> str:
        """``3 × 4 (base, dim)``: the sizes of the axes and their names."""
        return f"{' × '.join(str(len(axis.values)) for axis in self.axes)} ({', '.join(self.names)})"

    def points(self, skip: set[int] | frozenset[int] = frozenset()) -> Iterator[tuple[int, dict[str, Any]]]:
        """``(index, {name: value})`` for every point in grid order, except the indices in ``skip``."""
        for index, values in enumerate(itertools.product(*(axis.values for axis in self.axes))):
            if index not in skip:
                yield index, dict(zip(self.names, values))

    def point(self, index: int) -> dict[str, Any]:
        """The point of grid index ``index``."""
        values = {}
        for axis in reversed(self.axes):
            index, position = divmod(index, len(axis.values))
            values[axis.name] = axis.values[position]
        return {name: values[name] for name in self.names}

    def index_of(self, row: Mapping[str, Any]) -> int | None:
        """The grid index of the point whose values a row holds, however the file typed them (CSV cells
        are text); None when the row is not a point of this grid."""
        index = 0
        for axis in self.axes:
            try:
                key = value_key(axis.parameter.coerce(_from_cell(row.get(axis.name), axis.parameter)))
            except ConfigError:
                return None
            position = self._positions[axis.name].get(key)
            if position is None:
                return None
            index = index * len(axis.values) + position
        return index

    @functools.cached_property
    def _positions(self) -> dict[str, dict[str, int]]:
        """Per axis, the position of each value by its :func:`value_key`."""
        return {axis.name: {value_key(value): at for at, value in enumerate(axis.values)} for axis in self.axes}


def _from_cell(value: Any, parameter: Parameter) -> Any:
    """A list value as a row holds it (JSON text) back to the list its parameter coerces."""
    if isinstance(value, str) and parameter.is_list and value.strip().startswith("["):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def value_key(value: Any) -> str:
    """The text two equal values share, whatever their spelling (``1e4`` and ``10000`` as floats)."""
    return json.dumps(_plain(value))


def cell_value(value: Any) -> Any:
    """A value as a row holds it: a number, a string, true/false or null; a list as its JSON text."""
    value = _plain(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return value


def _plain(value: Any) -> Any:
    from pecli.render.tables import plain  # what --json holds: NumPy unwrapped, tuples as lists, non-finite as null

    return plain(value)


# -- reading the axes ---------------------------------------------------------------------------------
def parse_axis(text: str) -> tuple[str, list[Any]]:
    """``"base=1e4,1e5"`` → ``("base", ["1e4", "1e5"])``; ``"grid=[[8, 8], [16, 16]]"`` takes a YAML
    list of values (for keys whose values are lists); ``8x8,16x16`` splits on commas as well."""
    name, sep, raw = text.partition("=")
    name = normalize_key(name.strip())
    if not sep or not name or not name.replace("_", "").isalnum():
        raise ConfigError("grid", f"expected NAME=V1,V2,… (e.g. base=1e4,1e5), got {excerpt(text)}")
    raw = raw.strip()
    if raw.startswith("["):
        from pecli.config_files import parse_yaml

        try:  # the guarded loader of --config and --set: no alias bomb, no nesting deep enough to recurse
            values = parse_yaml(raw, f"--grid {name}")
        except ConfigError as error:
            raise ConfigError("grid", f"{name}: expected a list such as [[8, 8], [16, 16]]; "
                              f"{str(error).removeprefix('config: ')}") from None
        if not isinstance(values, list):
            raise ConfigError("grid", f"{name}: expected a list of values, got {excerpt(raw)}")
        return name, _listed(name, values)
    values = [value.strip() for value in raw.split(",")] if raw else []
    if any(value == "" for value in values):
        raise ConfigError("grid", f"{name} has an empty value; give NAME=V1,V2,… (got {excerpt(text)})")
    return name, _listed(name, values)


def axes_from_mapping(mapping: Mapping[Any, Any]) -> list[tuple[str, list[Any]]]:
    """The axes of a YAML ``grid:`` mapping: ``{base: [1e4, 1e5], dim: "64,128"}``."""
    axes = []
    for key, value in mapping.items():
        name = normalize_key(str(key))
        if isinstance(value, str):
            axes.append(parse_axis(f"{name}={value}"))
        elif isinstance(value, (list, tuple)):
            axes.append((name, _listed(name, list(value))))
        else:
            raise ConfigError("grid", f"{name}: expected a list of values, got {excerpt(value)}")
    return axes


def _listed(name: str, values: list[Any]) -> list[Any]:
    if not values:
        raise ConfigError("grid", f"{name} lists no values; give NAME=V1,V2,…")
    return values


def grid_keys(schemes: Iterable[str], settings: Sequence[Parameter]) -> tuple[dict[str, Parameter], dict[str, str]]:
    """The keys a grid over ``schemes`` may vary, each with its declaration, and the aliases of the keys
    (``rope_theta`` → ``base``): the schemes' parameters, :data:`RUN_AXES` and the check's ``settings``."""
    known: dict[str, Parameter] = {}
    aliases: dict[str, str] = {}
    for name in schemes:
        cls = get_scheme_class(name)
        for key, parameter in cls.parameters().items():
            known.setdefault(key, parameter)
        aliases.update({alias: key for alias, key in cls.aliases.items() if key not in cls.block_keys})
    run = {setting.name: setting for setting in RUN_SETTINGS}
    known.update({key: run[key] for key in RUN_AXES})
    known.update({setting.name: setting for setting in settings if setting.name not in known})
    return known, aliases


def build_grid(raw: Sequence[tuple[str, list[Any]]], base_scheme: str, settings: Sequence[Parameter]) -> Grid:
    """The grid of ``raw`` axes (name, values as given), checked against the keys they name.

    ``base_scheme`` is the scheme of the fixed options; a ``scheme`` axis names the schemes instead.

    Raises
    ------
    ConfigError
        No axis; an axis twice; an unknown name (naming the known ones); a value its key refuses by
        type, range or choice; a value twice in one axis.
    """
    if not raw:
        raise ConfigError("grid", "the grid is empty: give at least one --grid NAME=V1,V2,… (e.g. --grid base=1e4,1e5,1e6)")
    schemes = [base_scheme]
    for name, values in raw:
        if name == "scheme":
            schemes = [RUN_SETTINGS[0].coerce(value) for value in values]
            unknown = [scheme for scheme in schemes if scheme not in SCHEMES]
            if unknown:
                raise ConfigError("grid", f"scheme: {excerpt(unknown[0])} is not a scheme; the schemes: {', '.join(SCHEMES)}")
    known, aliases = grid_keys(schemes, settings)
    axes: list[Axis] = []
    for name, values in raw:
        key = aliases.get(name, name)
        if key not in known:
            owners = " or ".join(schemes)
            raise ConfigError("grid", f"unknown name {name!r}: a grid of {owners} varies one of {', '.join(known)}")
        if not values:
            raise ConfigError("grid", f"{name} lists no values; give NAME=V1,V2,…")
        if key in (axis.name for axis in axes):
            raise ConfigError("grid", f"{key} is given twice; give each name once, with all its values")
        axes.append(_axis(key, values, known[key]))
    return Grid(tuple(axes))


def _axis(name: str, values: list[Any], parameter: Parameter) -> Axis:
    coerced = []
    for value in values:
        try:
            coerced.append(parameter.coerce(value))
        except ConfigError as error:
            raise ConfigError("grid", str(error)) from None
    seen: dict[str, Any] = {}
    for value, given in zip(coerced, values):
        key = value_key(value)
        if key in seen:
            raise ConfigError("grid", f"{name} lists {excerpt(cell_value(value))} twice ({excerpt(seen[key])} and {excerpt(given)})")
        seen[key] = given
    return Axis(name, tuple(coerced), parameter)


def confirm_size(grid: Grid, confirmed: bool) -> None:
    """A grid of :data:`CONFIRM_POINTS` points or more runs only when ``confirmed`` (``--yes``)."""
    if grid.count >= CONFIRM_POINTS and not confirmed:
        raise ConfigError("grid", f"{grid.count:,} points ({grid.shape_text()}), at least 10^6: pass --yes to run them")


__all__ = [
    "CONFIRM_POINTS", "Axis", "Grid", "axes_from_mapping", "build_grid", "cell_value", "confirm_size", "grid_keys",
    "parse_axis", "value_key",
]
