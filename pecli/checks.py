"""The request of ``pecli check``: its settings, and the validated call that measures a property.

:data:`SETTINGS` are the keys a check reads besides the scheme (``dtype``, ``train_length``,
``shifts``, …) for every command that runs checks (``check``, ``sweep``): the declarations of the
fields of :class:`~pecli.analysis.options.CheckOptions`, made once there. :func:`prepared_check`
validates a :class:`~pecli.config.Spec` against a property's record (:data:`~pecli.analysis.registry.ANALYSES`:
what it applies to, the options it reads, its memory) before any work, then returns the call that
measures it. Refusals raise :class:`~pecli.errors.ConfigError` naming the key; nothing here knows the
command line, nor any property by name.
"""

from __future__ import annotations

from typing import Any, Callable

from pecli.analysis.registry import ANALYSES, all_names, check_report, estimate_check_bytes, not_applicable, properties
from pecli.analysis.result import CheckReport
from pecli.analysis.options import CHECK_PANEL, check_options, check_parameters
from pecli.config import Spec
from pecli.errors import ConfigError
from pecli.params import Parameter, choice_error

#: The check options' declarations, in ``--help``'s order (the fields of CheckOptions).
SETTINGS: tuple[Parameter, ...] = tuple(check_parameters().values())


def prepared_check(spec: Spec, prop: str) -> Callable[[], CheckReport]:
    """Validate the request and its memory, before any work; return the call that measures it.

    Raises
    ------
    ConfigError
        An unknown property, a property not defined for the scheme's positions, an option that no
        selected property reads, a training extent of the wrong shape, more samples than positions.
    PecliError
        The check would need more memory than ``spec.memory_budget``, or what it reads is missing
        (``layout``: a rotary scheme and ``--weights``).
    """
    if prop not in properties():
        raise choice_error("property", prop, properties())
    if prop in ANALYSES and not ANALYSES[prop].applies_to(spec.scheme):
        result = not_applicable(prop, spec.scheme)
        raise ConfigError("property", f"{prop} is {result.reason}; {result.notes[0]}")
    given = {**spec.settings, "dtype": spec.dtype}
    options = check_options(given, length=spec.length, query_scale=spec.query_scale)
    if options.samples is not None and options.samples > spec.length:
        raise ConfigError("samples", f"asks for {options.samples:,} query positions; there are {spec.length:,} (--length)")
    _check_applicable(prop, given)
    _check_training_extent(spec.scheme, spec.settings)
    spec.check_memory(estimate_check_bytes(spec.scheme, prop, options), f"check {prop}")
    return lambda: check_report(spec.scheme, prop, options)


def _check_applicable(name: str, given: dict[str, Any]) -> None:
    """An option that no selected property reads (by the records' declarations) is an error, not
    silently ignored; the message names the properties that read it."""
    asked = all_names() if name == "all" else (name,)
    read = {option.name for prop in asked for option in ANALYSES[prop].options}
    for option in check_parameters().values():
        users = [info.name for info in ANALYSES.values() if option.name in info.option_names]
        if not users or option.name in read or given.get(option.name) in (None, option.default):
            continue
        flag = "--" + option.name.replace("_", "-")
        raise ConfigError(option.name, f"{flag} does not apply to {name} (it applies to {', '.join(users)}{_own(option)})")


def _own(option: Parameter) -> str:
    """``; scheme learned takes it as a parameter of its own`` when schemes do (a checkpoint's table)."""
    from pecli.schemes import SCHEMES

    takers = [scheme for scheme, cls in SCHEMES.items() if option.name in cls.parameters()]
    return f"; scheme {', '.join(takers)} takes it as a parameter of its own" if takers else ""


def _check_training_extent(scheme: Any, settings: dict[str, Any]) -> None:
    """A training length on a grid, or a training grid along a line, is an error naming the other one."""
    if scheme.on_grid and settings.get("train_length") is not None:
        raise ConfigError("train_length", f"{scheme.name} is trained on a grid of cells, not a length: give --train-grid "
                                          f"(e.g. {'x'.join(str(max(1, n // 2)) for n in scheme.axis_spans())})")
    if not scheme.has_cells and settings.get("train_grid") is not None:
        raise ConfigError("train_grid", f"{scheme.name} has positions along a line: give --train-length")
    if scheme.has_cells and not scheme.on_grid:
        given = next((key for key in ("train_length", "train_grid") if settings.get(key) is not None), None)
        if given is not None:
            raise ConfigError(given, f"--{given.replace('_', '-')} does not apply to {scheme.name}: extrapolation is "
                                     f"{not_applicable('extrapolation', scheme).reason}")


__all__ = ["CHECK_PANEL", "SETTINGS", "prepared_check"]
