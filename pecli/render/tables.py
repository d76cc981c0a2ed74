"""Rich tables built as renderables (printed by the CLI, testable without a terminal)."""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np
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
    return value


def format_value(value: Any) -> str:
    """A short human form of a value: floats with 6 significant digits, lists joined."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        if len(value) > 8:
            return "[" + ", ".join(format_value(v) for v in value[:8]) + ", …]"
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return ", ".join(f"{k}={format_value(v)}" for k, v in value.items() if v is not None)
    return str(value)


def key_value_table(title: str, rows: Iterable[tuple[str, Any]]) -> Table:
    """A two-column table of named facts."""
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column("property", style="bold")
    table.add_column("value")
    for key, value in rows:
        table.add_row(key, format_value(value))
    return table
