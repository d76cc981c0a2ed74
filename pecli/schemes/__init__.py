"""The registry of positional-encoding schemes: one table, one record per scheme.

Every scheme is a frozen dataclass of its parameters with the interface of
:class:`pecli.schemes.base.Scheme`; :data:`SCHEMES` maps each name to its class and
:func:`get_scheme_class` looks one up (with a clear error listing the valid names).
"""

from __future__ import annotations

from pecli.params import choice_error
from pecli.schemes.alibi import AlibiScheme
from pecli.schemes.axial import RopeNDScheme
from pecli.schemes.base import KINDS, Scheme
from pecli.schemes.positions import as_positions
from pecli.schemes.binary import BinaryScheme
from pecli.schemes.integer import IntegerScheme
from pecli.schemes.learned import LearnedScheme
from pecli.schemes.mrope import MRopeScheme
from pecli.schemes.relative import RelativeScheme
from pecli.schemes.rope import RopeScheme
from pecli.schemes.sinusoidal import SinusoidalScheme
from pecli.schemes.sinusoidal_nd import SinusoidalNDScheme
from pecli.schemes.t5 import T5Scheme

#: Every registered scheme, by name, in the order tables list them.
SCHEMES: dict[str, type[Scheme]] = {
    cls.name: cls
    for cls in (
        IntegerScheme,
        BinaryScheme,
        SinusoidalScheme,
        LearnedScheme,
        RelativeScheme,
        T5Scheme,
        AlibiScheme,
        RopeScheme,
        SinusoidalNDScheme,
        RopeNDScheme,
        MRopeScheme,
    )
}


def get_scheme_class(name: str) -> type[Scheme]:
    """The scheme class registered under ``name``."""
    try:
        return SCHEMES[name]
    except KeyError:
        raise choice_error("scheme", name, SCHEMES) from None


__all__ = ["KINDS", "SCHEMES", "Scheme", "as_positions", "get_scheme_class"]
