"""Numbers read from a command line as a C++ program reads them: ``std::stof`` and ``std::stoi``.

llama.cpp's argument parser (``common/arg.cpp``) reads a float flag such as ``--rope-freq-base`` with
``std::stof(value)`` and an integer flag such as ``--ctx-size`` with ``std::stoi(value)``. Both parse the
longest *prefix* that is a number in the C locale (``strtof``/``strtol`` with base 10) and ignore the
rest; both throw when no prefix is a number (llama.cpp then stops with "error while handling argument").
Python's ``float()`` and ``int()`` read differently: they take Unicode digits (``١٠٠٠٠``, full-width
``４``), underscores (``1_000``), and refuse trailing text. So a flag's value is read here, by the C rule:

- leading white space (C's ``isspace``: space, ``\\t\\n\\v\\f\\r``), then an optional sign;
- ``stof``: decimal digits with an optional point and exponent, a hexadecimal float (``0x1.8p3``),
  ``inf``/``infinity``/``nan``/``nan(…)``, ASCII only, any case;
- ``stoi``: decimal digits (``4096.0`` reads 4096, ``1e5`` reads 1, ``1k`` reads 1).

:func:`c_prefix` gives the number and the text left over; a caller that would rather refuse a value
llama.cpp reads only in part (a silent ``1`` for ``1_000``) says so, naming what llama.cpp would read.
"""

from __future__ import annotations

import re

#: C's white space in the "C" locale.
_SPACE = " \t\n\v\f\r"
_FLOAT = re.compile(r"[+-]?(?:"
                    r"0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
                    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                    r"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?"
                    r"|[nN][aA][nN](?:\([0-9A-Za-z_]*\))?)", re.ASCII)
_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)


def c_prefix(text: str, kind: type) -> tuple[float | int | None, str]:
    """The number ``std::stof`` (``kind`` float) or ``std::stoi`` (``kind`` int) reads from ``text``, and
    the text it leaves unread; ``(None, text)`` where it reads none (it throws ``invalid_argument``).

    The float is the double nearest the prefix (``strtof`` rounds to float32 once; the caller checks
    that a float32 holds it). A hexadecimal prefix without digits after ``0x`` reads as ``0``, as strtof
    does (``0x`` then stops after the ``0``).
    """
    stripped = text.lstrip(_SPACE)
    pattern = _FLOAT if kind is float else _INT
    found = pattern.match(stripped)
    if found is None:
        return None, text
    number = found.group(0)
    if kind is int:
        if len(number.lstrip("+-").lstrip("0")) > 30:  # past any C integer (and Python's int() digit limit)
            return (-1 if number.startswith("-") else 1) * 10 ** 30, stripped[found.end():]
        return int(number), stripped[found.end():]
    body = number.lstrip("+-")
    if body[:2].lower() == "0x":
        value = float.fromhex(number)
    elif body[:1].lower() in ("i", "n"):
        value = float(number.split("(")[0])
    else:
        value = float(number)
    return value, stripped[found.end():]


__all__ = ["c_prefix"]
