"""Results that show themselves in a notebook: an HTML table in Jupyter, a pandas DataFrame on request.

:class:`Tabular` is a mixin for the library's result classes (check results and reports, comparisons,
spectra, model plans, verify and extend reports): each says what its rows are (:meth:`Tabular.table_rows`)
and gets ``_repr_html_`` (Jupyter's rich display) and ``to_frame()``. Nothing here imports more than the
standard library (:mod:`html` when a table is drawn); pandas is imported by ``to_frame()`` only.
"""

from __future__ import annotations

import math
from typing import Any


class Tabular:
    """A result with rows: ``_repr_html_`` renders them as a table under a title, ``to_frame()`` returns
    them as a pandas DataFrame (one column per key of the rows, values as they are)."""

    def table_title(self) -> str:
        """The line above the table."""
        return type(self).__name__

    def table_rows(self) -> list[dict[str, Any]]:
        """The rows, each a dict with the same keys."""
        raise NotImplementedError

    def _repr_html_(self) -> str:
        return html_table(self.table_title(), self.table_rows())

    def __repr__(self) -> str:
        """A short plain-text summary (outside a notebook): the title, then the first rows' leading
        columns; ``to_frame()`` and the fields hold everything."""
        return text_summary(type(self).__name__, self.table_title(), self.table_rows())

    __str__ = __repr__

    def to_frame(self):
        """The rows as a :class:`pandas.DataFrame` (pandas is needed only here)."""
        try:
            import pandas
        except ModuleNotFoundError:
            raise ModuleNotFoundError("to_frame() needs pandas: pip install pandas") from None
        return pandas.DataFrame(self.table_rows())


#: What a plain-text summary shows at most: rows, characters a line, characters a cell's line, lines a cell.
SUMMARY_ROWS, SUMMARY_WIDTH, SUMMARY_CELL, SUMMARY_CELL_LINES = 12, 100, 40, 4


def text_summary(kind: str, title: str, rows: list[dict[str, Any]]) -> str:
    """``<Kind: title>`` over the first :data:`SUMMARY_ROWS` rows, as many leading columns as fit in
    :data:`SUMMARY_WIDTH` characters, and a line saying what was left out. A long cell wraps at spaces onto
    at most :data:`SUMMARY_CELL_LINES` lines of :data:`SUMMARY_CELL` characters (a word is never split;
    past the last line, `` …``)."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    shown_rows = rows[:SUMMARY_ROWS]
    grid = [[_cell_lines(row.get(c)) for c in columns] for row in shown_rows]
    widths = [max([len(str(c)), *(len(text) for line in grid for text in line[i])]) for i, c in enumerate(columns)]
    kept, used = 0, 2
    while kept < len(columns) and used + widths[kept] <= SUMMARY_WIDTH:
        used += widths[kept] + 2
        kept += 1
    kept = max(kept, 1) if columns else 0
    lines = [f"<{kind}: {title}>"]
    if kept:
        lines.append("  " + "  ".join(str(c).ljust(w) for c, w in zip(columns[:kept], widths)).rstrip())
        for line in grid:
            for k in range(max(len(cell) for cell in line[:kept])):
                lines.append("  " + "  ".join((cell[k] if k < len(cell) else "").ljust(w)
                                              for cell, w in zip(line[:kept], widths)).rstrip())
    left = [f"{len(rows) - len(shown_rows)} more rows"] if len(rows) > len(shown_rows) else []
    left += [f"columns {', '.join(map(str, columns[kept:]))}"] if kept < len(columns) else []
    if left:
        lines.append(f"  ({' and '.join(left)}: .to_frame() has them all)")
    return "\n".join(lines)


def _cell_lines(value: Any) -> list[str]:
    """A cell's text wrapped at spaces, whole words only (a name or number is never cut)."""
    import textwrap

    text = cell_text(value).replace("\n", " ")
    if len(text) <= SUMMARY_CELL:
        return [text]
    lines = textwrap.wrap(text, SUMMARY_CELL, break_long_words=False, break_on_hyphens=False) or [""]
    if len(lines) > SUMMARY_CELL_LINES:
        lines = [*lines[: SUMMARY_CELL_LINES - 1], lines[SUMMARY_CELL_LINES - 1] + " …"]
    return lines


def html_table(title: str, rows: list[dict[str, Any]]) -> str:
    """An HTML table of ``rows`` (columns: the keys of all rows, in order of first appearance)."""
    import html  # here, not at import: it costs every command's start-up a millisecond
    columns = list(dict.fromkeys(key for row in rows for key in row))
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell_text(row.get(c)))}</td>" for c in columns) + "</tr>" for row in rows
    )
    return (f"<div><p><b>{html.escape(title)}</b></p><table><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table></div>")


def cell_text(value: Any) -> str:
    """A value as a table shows it: floats to 6 significant digits, nothing for None."""
    if value is None:
        return ""
    if isinstance(value, float):
        return str(value) if not math.isfinite(value) else f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(cell_text(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={cell_text(v)}" for k, v in value.items())
    return str(value)
