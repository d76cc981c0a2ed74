"""The table ``pecli sweep`` prints without ``-o``: a row per point (a renderable; printed by the CLI)."""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from rich.markup import escape
from rich.table import Table

from pecli.render.check import verdict_text
from pecli.render.tables import format_value


def cell(value: Any) -> Any:
    """A row's value as its figure: JSON text of a list or mapping read back, other values as they are."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def details(row: Mapping[str, Any], check: str) -> str:
    """What a point's last column says: its error; for one property its key figure (``step ratio = 1``);
    for ``all`` the properties that did not pass."""
    if row.get("error"):
        return str(row["error"])
    if check != "all":
        key = row.get(f"{check}.key_figure")
        if not key:
            return ""
        return f"{str(key).replace('_', ' ')} = {format_value(cell(row.get(f'{check}.{key}')))}"
    words = []
    for verdict in ("fail", "warn", "n/a"):
        names = [column.partition(".")[0] for column, value in row.items() if column.endswith(".verdict") and value == verdict]
        if names:
            words.append(f"{verdict}: {', '.join(names)}")
    return "; ".join(words)


def sweep_table(rows: Sequence[Mapping[str, Any]], axes: Sequence[str], check: str, metric: str | None = None) -> Table:
    """One row per point: the grid values, the verdict, the ``metric`` column when one was chosen, and
    the details (:func:`details`)."""
    title = f"pecli sweep {check}: {len(rows):,} points"
    table = Table(title=title, title_justify="left", min_width=len(title))  # a narrow table keeps its title on one line
    for name in axes:
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    shown = metric if metric not in (None, "verdict") else None
    if shown is not None:  # a figure of the one property checked goes by its own name
        header = shown.removeprefix(f"{check}.") if check != "all" else shown
        table.add_column(header.replace("_", " "), justify="right", overflow="fold")
    table.add_column("details", overflow="fold")
    for row in rows:
        cells: list[Any] = [escape(format_value(cell(row.get(name)))) for name in axes]
        cells.append(verdict_text(str(row.get("verdict"))))
        if shown is not None:
            cells.append(escape(format_value(cell(row.get(shown)))))
        cells.append(escape(details(row, check)))
        table.add_row(*cells)
    return table


__all__ = ["cell", "details", "sweep_table"]
