"""Rich tables built as renderables (printed by the CLI, testable without a terminal)."""

from __future__ import annotations

import math
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from pecli.numbers import DIGITS, integer, number  # noqa: F401  (tables' numbers: one style, pecli.numbers)

if TYPE_CHECKING:  # rich's tables load when a table is made, not for --json (which needs only plain())
    from rich.table import Table


def plain(value: Any) -> Any:
    """``value`` as the JSON output holds it: NumPy scalars and arrays as Python values, tuples as
    lists and non-finite floats as None, so that a table shows what ``--json`` shows."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, PurePath):
        return str(value)
    return value


def format_value(value: Any, *, narrow: bool = False) -> str:
    """A short human form of a value: floats with :data:`DIGITS` significant digits, lists joined
    (without spaces when ``narrow``, so that a list stays one word in a narrow cell). In a dict's
    ``key=value`` a list keeps its spaces: a long one (longrope's factors) wraps between its numbers, where
    as one word a 60-column terminal folded it through a number (``2.6``/``2``)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return number(value)
    if isinstance(value, (int, np.integer)):
        return integer(int(value))
    if isinstance(value, (list, tuple)):
        items = [format_value(v, narrow=narrow) for v in value[:8]] + (["…"] if len(value) > 8 else [])
        return "[" + ("," if narrow else ", ").join(items) + "]"
    if isinstance(value, dict):
        return ", ".join(f"{k}={format_value(v, narrow=not isinstance(v, (list, tuple)))}"
                         for k, v in value.items() if v is not None)
    return str(value)


def shown_params(params: dict[str, Any]) -> dict[str, Any]:
    """A scheme's parameters as tables show them: frequencies given with ``inv_freq`` as their count
    (every value is in ``--json``), and no ``base``, which then makes none of them."""
    if params.get("inv_freq") is None:
        return params
    shown = {key: value for key, value in params.items() if key != "base"}
    shown["inv_freq"] = f"{len(params['inv_freq'])} given"
    return shown


#: Widest the name column of a two-column table gets before its names wrap.
KEY_WIDTH = 30


def key_value_table(title: str, rows: Iterable[tuple[str, Any]]) -> Table:
    """A two-column table of named facts."""
    from rich.table import Table

    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column("property", style="bold", max_width=KEY_WIDTH)
    table.add_column("value", overflow="fold")
    for key, value in rows:
        table.add_row(key, format_value(value))
    return table
