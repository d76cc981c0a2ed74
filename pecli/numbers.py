"""How pecli writes a number for people: one style, in tables, titles, reasons and messages.

- A **count or a length** (an integer: positions, tokens, pairs, points) is written whole, with
  thousands separated from 10,000 on: ``2048``, ``32,768``, ``131,072``. Never an exponent.
- A **measured float** gets four significant digits; whole values below 10⁷ are written as counts
  (``65,536``), anything else with the shortest exponent Python can read back (``6.575e4``,
  ``1.05e-14``: no ``+`` and no leading zero, as in ``6.575e+04``).
- A **length measured in tokens** (a wavelength, a base) is a float too, but people read it against
  counts: below 10⁶ it is written in tokens with separators (``62,832``, or ``14,899.8`` with one
  decimal), from 10⁶ on as a measured float (``5.063e6``), so that one column never holds both
  ``5,063,256`` and ``2.047e7``.

``--json`` keeps every digit; these functions are for text only. The core's reason strings use them
too, so this module imports nothing beyond the standard library.
"""

from __future__ import annotations

import math

#: Significant digits of a measured float.
DIGITS = 4
#: From this magnitude on, a count is written with thousands separators.
SEPARATED_FROM = 10_000
#: From this magnitude on, a whole float is no longer written as a count.
WHOLE_BELOW = 10**7
#: From this magnitude on, a length in tokens is written as a measured float (with an exponent).
TOKENS_BELOW = 10**6


def integer(value: int) -> str:
    """A count: ``57,360``, thousands separated from 10⁴ on (``2048`` stays one short word).

    Raises
    ------
    TypeError
        ``value`` is not an integer (a whole float is a measured value: use :func:`number`).
    """
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"value: expected an integer, got {type(value).__name__}")
    value = int(value)
    return f"{value:,}" if abs(value) >= SEPARATED_FROM else str(value)


def exponent(text: str) -> str:
    """``text`` (a ``%g``/``%e`` rendering) with its exponent in short form: ``6.575e+04`` → ``6.575e4``."""
    mantissa, mark, power = text.partition("e")
    return f"{mantissa}e{int(power)}" if mark else text


def number(value: float, digits: int = DIGITS) -> str:
    """A measured float: whole values below 10⁷ as counts (``131,072``), others with ``digits``
    significant digits and a short exponent (``1.743e-14``, ``1.95e4``), never wider than
    ``digits + 6`` characters; ``inf``, ``-inf`` and ``nan`` as Python writes them."""
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    if value == int(value) and abs(value) < WHOLE_BELOW:
        return integer(int(value))
    return exponent(f"{value:.{digits}g}")


def tokens(value: float, decimals: int = 0) -> str:
    """A length in tokens (a wavelength, a base): below 10⁶ with separators and ``decimals`` decimals
    (``62,832``, ``14,899.8``), from 10⁶ on as :func:`number` (``5.063e6``)."""
    value = float(value)
    if not math.isfinite(value) or abs(value) >= TOKENS_BELOW:
        return number(value)
    return f"{value:,.{decimals}f}"


def position(value) -> str:
    """A position in words: an id as a count (``12,000``), a real-valued one with six significant
    digits (``0.5``), a grid cell as its coordinates (``(2, 5)``); NumPy scalars and arrays alike."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(position(v) for v in value) + ")"
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        value = int(value)
    return integer(value) if isinstance(value, int) else number(value, 6)


__all__ = ["DIGITS", "exponent", "integer", "number", "position", "tokens"]
