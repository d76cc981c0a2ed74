"""Option values converted as Click converted them, without building a Pydantic adapter per option.

From release 0.29 Typer converts each parameter's value through a Pydantic ``TypeAdapter``, built the
first time the parameter is processed; Click processes every parameter of the command that runs,
given or not, so a run of a pecli command (about sixty options) imports Pydantic and builds sixty
adapters before doing anything. Measured on Typer 0.29.2 (``benchmarks/bench_startup.py``, two runs of
9, each command in a fresh interpreter, as a ratio to ``import numpy, typer, rich, yaml`` in the same
run): ``wavelengths --scheme rope --json`` is 1.03–1.05× the imports with these converters and
1.44–1.61× with Typer's (CPU 1.07–1.10× against 1.58–1.65×), over the 1.2× goal; ``encode --json``
1.18–1.26× against 1.37–1.58×. Run by run, pecli's conversion takes 0.69–0.76× the time of Typer's.
That is why pecli keeps them, while ``--help`` is Typer's own.

pecli's options are plain values — strings, integers, floats, flags and repeatable strings — that
pecli validates itself (:mod:`pecli.config`). :func:`plain_values` gives each such parameter of a
command a converter of its own, which does what Click's ``STRING``, ``INT``, ``FLOAT`` and ``BOOL``
types did in Typer 0.28 (the same values, the same error: ``'x' is not a valid int.``); anything else
(a path argument,
a value of another type) keeps Typer's conversion, built when it is first needed. On a Typer without
per-parameter converters (before 0.29) nothing changes.
"""

from __future__ import annotations

from typing import Any, Callable

#: Strings Click's ``BOOL`` type read as a flag's value ("" is off).
BOOL_STATES = {"1": True, "0": False, "yes": True, "no": False, "true": True, "false": False, "on": True,
               "off": False, "t": True, "f": False, "y": True, "n": False, "": False}


def _boolean(text: str) -> bool:
    try:
        return BOOL_STATES[text.strip().lower()]
    except KeyError:
        raise ValueError(text) from None


#: What Click called each plain type in its error messages, and how it converted a string.
PLAIN: dict[Any, tuple[str, Callable[[str], Any]]] = {
    str: ("str", str),
    int: ("int", int),
    float: ("float", float),
    bool: ("boolean", _boolean),
    list[str]: ("str", str),
}


class PlainValue:
    """The converter of one parameter (Typer's ``RuntimeParam`` contract: ``coerce(value, param, ctx)``):
    ``convert`` a string, or fail naming the type as Click did (``word``); values of other kinds go to
    Typer's own converter for the parameter's ``descriptor``."""

    def __init__(self, word: str, convert: Callable[[str], Any], descriptor: Any) -> None:
        self.word, self.convert, self.descriptor = word, convert, descriptor
        self.fallback: Any = None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        several = param.multiple or param.nargs == -1
        if value is None:
            return () if several else None
        if several:
            if isinstance(value, str):
                return self._typers(value, param, ctx)
            return [self._one(item, param, ctx) for item in value]
        return self._one(value, param, ctx)

    def _one(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, bool) and self.convert is _boolean:
            return value
        if not isinstance(value, str):
            return self._typers(value, param, ctx)
        try:
            return self.convert(value)
        except ValueError:
            from typer import BadParameter

            raise BadParameter(f"{value!r} is not a valid {self.word}.", ctx=ctx, param=param) from None

    def _typers(self, value: Any, param: Any, ctx: Any) -> Any:
        """A value of another kind than the command line gives: Typer's own conversion."""
        if self.fallback is None:
            from typer._coercion import build_runtime_param

            self.fallback = build_runtime_param(self.descriptor)
        return self.fallback.coerce(value, param=param, ctx=ctx)


def plain_values(params: list[Any]) -> None:
    """Give each parameter whose values are plain (:data:`PLAIN`) a :class:`PlainValue` converter, where
    Typer converts parameter by parameter (0.29 and later); leave the others to Typer."""
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or not hasattr(type(param), "get_runtime_param") or getattr(param, "_runtime_param", 0) is not None:
            continue
        info = descriptor.parameter_info
        plain = PLAIN.get(descriptor.annotation)
        special = (
            descriptor.file_annotation is not None or getattr(info, "parser", None) is not None
            or getattr(info, "min", None) is not None or getattr(info, "max", None) is not None
            or getattr(info, "formats", None) is not None
        )
        if plain is None or special or descriptor.choices is not None:
            continue
        param._runtime_param = PlainValue(*plain, descriptor)
