"""The tables ``pecli check`` and ``pecli compare`` print (renderables; printed only by the CLI)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rich.console import Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from pecli.comparison.table import ACTS_ON, Comparison
from pecli.analysis.result import CheckReport, PropertyResult
from pecli.numbers import integer, number, tokens
from pecli.render.tables import KEY_WIDTH, format_value, plain, shown_params

#: Styles of the verdicts (plain text when NO_COLOR is set or stdout is not a terminal).
VERDICT_STYLES = {"pass": "green", "warn": "yellow", "fail": "bold red", "n/a": "dim"}


def verdict_text(verdict: str) -> Text:
    return Text(verdict.upper(), style=VERDICT_STYLES.get(verdict, ""))


def _figure(result: PropertyResult) -> str:
    key = result.key_figure
    if not key:
        return "—"
    return f"{key.replace('_', ' ')} = {_value(result.figures.get(key))}"


def _value(value: Any) -> str:
    """A figure as the table shows it: the value ``--json`` holds, in short form (``[h, w]`` is text,
    not Rich markup)."""
    return escape(format_value(plain(value)))


#: Widest the key-figure column gets before its words wrap.
KEY_FIGURE_WIDTH = 18


def summary_table(report: CheckReport) -> Table:
    """One row per property: verdict, key figure, reason."""
    table = Table(title=_title(report), title_justify="left")
    table.add_column("property", style="bold", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    table.add_column("key figure", max_width=KEY_FIGURE_WIDTH)
    table.add_column("reason", overflow="fold")
    for result in report.results:
        table.add_row(result.property, verdict_text(result.verdict), _figure(result), result.reason)
    return table


def _title(report: CheckReport) -> str:
    return f"pecli check {report.property}: {report.scheme} ({report.kind}), L = {integer(report.length)}"


def result_table(report: CheckReport, result: PropertyResult) -> Table:
    """A single property: verdict, reason, every figure."""
    table = Table(title=_title(report), show_header=False, title_justify="left")
    table.add_column("key", style="bold", max_width=KEY_WIDTH)
    table.add_column("value", overflow="fold")
    table.add_row("verdict", verdict_text(result.verdict))
    table.add_row("reason", result.reason)
    table.add_row("parameters", _value(shown_params(report.params)))
    for key, value in result.figures.items():
        table.add_row(key.replace("_", " "), _value(value))
    for warning in new_warnings(result):
        table.add_row("warning", warning)
    for note in result.notes:
        table.add_row("note", note)
    if result.sampled:
        table.add_row("sampled", "yes (see the notes)")
    return table


def new_warnings(result: PropertyResult) -> list[str]:
    """The warnings the reason does not already say (a WARN's reason often is its warning): said once."""
    reason = " ".join(result.reason.split())
    return [w for w in result.warnings if " ".join(w.split()) not in reason]


def detail_table(result: PropertyResult) -> Table | None:
    """The detail rows of a result (relativity: the dot-product-vs-distance table), or None."""
    rows = result.table
    if not rows:
        return None
    titles = {
        "relativity": "score S(m, m+Δ) against the distance Δ = n − m (mean and spread over m)",
        "composability": "least-squares fit of E_(p+k) ≈ M_k E_p per shift k",
    }
    if "offset" in rows[0]:  # positions with several coordinates
        titles["relativity"] = "score S(m, n) against the offset n − m (mean and spread over the pairs)"
        titles["composability"] = "least-squares fit of E(c + Δ) ≈ M_Δ E(c) per offset Δ"
    table = Table(title=titles.get(result.property, result.property), title_justify="left")
    names = {"sum_cos": "Σ cos(ω_i Δ)\n(Conditions)", "distance": "Δ"}
    for key in rows[0]:
        table.add_column(names.get(key, key.replace("_", " ")), justify="right", no_wrap=True)
    for row in rows:
        table.add_row(*(_value(value) for value in row.values()))
    return table


def check_renderable(report: CheckReport) -> Group:
    """What ``pecli check`` prints: the summary (``all``) or the single result with its detail table."""
    results = report.results
    if len(results) == 1:
        parts: list[Any] = [result_table(report, results[0])]
        detail = detail_table(results[0])
        if detail is not None:
            parts.append(detail)
        return Group(*parts)
    parts = [summary_table(report)]
    for result in results:
        for warning in new_warnings(result):
            parts.append(Text(f"warning ({result.property}): {warning}"))
    # a note several properties share (the n/a ones') is printed once, naming them all
    notes: dict[tuple[str, str], list[str]] = {}
    for result in results:
        label = "sampled" if result.sampled else "note"
        for note in result.notes:
            notes.setdefault((label, note), []).append(result.property)
    parts += [Text(f"{label} ({', '.join(names)}): {note}") for (label, note), names in notes.items()]
    return Group(*parts)


#: Short column headers of the compare table, so that it fits 80 columns.
SHORT_NAMES = {
    "uniqueness": "unique", "distinguishability": "distinct", "composability": "compose",
    "relativity": "relative", "extrapolation": "extrap.", "precision": "precision",
}
#: Significant digits of a key figure in the narrow cells of the compare table.
CELL_DIGITS = 3


def compare_renderable(comparison: Comparison, *, notes: Sequence[str] = ()) -> Group:
    """What ``pecli compare`` prints: the schemes' facts, their verdicts with the key figure of each, the
    legend of the key figures, ``notes`` (how the schemes were set side by side), then the footnotes."""
    properties = list(comparison.rows[0].results) if comparison.rows else []
    parts: list[Any] = [facts_table(comparison), Verdicts(comparison, properties)]
    legend = legend_table(comparison, properties)
    if legend.row_count:
        parts.append(legend)
    parts += [Text(f"note: {note}") for note in notes]
    parts += [Text(f"[{note['number']}] {note['text']}") for note in comparison.footnotes]
    return Group(*parts)


def facts_table(comparison: Comparison) -> Table:
    """One row per scheme: where it acts, its trainable parameters, its value range, its longest wavelength."""
    table = Table(title=f"pecli compare: L = {integer(comparison.length)}", title_justify="left")
    table.add_column("scheme", style="bold", no_wrap=True)
    for header in ("acts on", "trainable", "min value", "max value", "max λ"):
        table.add_column(header, justify="left" if header == "acts on" else "right", no_wrap=True)
    for row in comparison.rows:
        low, high = row.value_range
        table.add_row(
            row_label(row.label), ACTS_ON.get(row.scheme.kind, row.scheme.kind), f"{int(row.scheme.parameter_count):,}",
            format_value(plain(low)), format_value(plain(high)), wavelength(row.max_wavelength),
        )
    return table


def wavelength(value: float | None) -> str:
    """A wavelength in whole tokens (four significant digits from a million on); — for none."""
    if value is None:
        return "—"
    return tokens(value)


class Verdicts:
    """The verdicts of ``pecli compare`` as wide as the console lets them be: one table while every property's
    column fits, else the properties in their order over as many tables as needed, each repeating the scheme
    column, so that no number or header is ever cut and no line runs past the width, whatever the number of
    properties. On a terminal pecli's console lays a table too wide out itself (narrower borders, else a block
    per row: :mod:`pecli.render.console`), so there the verdicts stay one table."""

    def __init__(self, comparison: Comparison, properties: list[str]) -> None:
        self.comparison, self.properties = comparison, properties

    def fitted(self, console: Any) -> list[Table]:
        """The tables to print on ``console`` (pecli's :class:`~pecli.render.console.FittingConsole` asks)."""
        if console.is_terminal:
            return [verdicts_table(self.comparison, self.properties)]
        return self.tables(console, console.options)

    def tables(self, console: Any, options: Any) -> list[Table]:
        chunks = fitting_chunks(self.comparison, self.properties, console, options)
        return [verdicts_table(self.comparison, chunk, continued=number_ > 0) for number_, chunk in enumerate(chunks)]

    def __rich_console__(self, console: Any, options: Any) -> Any:
        yield from self.tables(console, options)


def fitting_chunks(comparison: Comparison, properties: list[str], console: Any, options: Any) -> list[list[str]]:
    """``properties`` cut, in order, into the fewest runs whose table fits ``options.max_width`` (a property
    too wide even alone gets a table of its own)."""
    from rich.measure import Measurement

    chunks: list[list[str]] = [[]]
    unbounded = options.update(max_width=10**6)  # Measurement.get caps what it returns at the width it is given
    for name in properties:
        trial = chunks[-1] + [name]
        width = Measurement.get(console, unbounded, verdicts_table(comparison, trial)).maximum
        if chunks[-1] and width > options.max_width:
            chunks.append([name])
        else:
            chunks[-1] = trial
    return chunks


def verdicts_table(comparison: Comparison, properties: list[str], *, continued: bool = False) -> Table:
    """One row per scheme, one column per property: the verdict, its key figure below, footnote marks."""
    title = None if continued else "verdicts (key figure below each; \\[n]: footnote)"  # continued: its header says
    table = Table(title=title, title_justify="left")
    table.add_column("scheme", style="bold", no_wrap=True)
    for name in properties:
        dtypes = measured_dtypes(comparison, name)
        header = SHORT_NAMES.get(name, name) + (f"\n{dtypes[0]}" if len(dtypes) == 1 else "")
        table.add_column(header, no_wrap=True)
    for row in comparison.rows:
        cells = []
        for name in properties:
            result = row.results[name]
            text = verdict_text(result.verdict)
            marks = "".join(f"[{n}]" for n in row.footnotes.get(name, []))
            if marks:
                text.append(" " + marks)
            if result.key_figure:
                text.append(f"\n{cell_value(result.figures.get(result.key_figure))}")
            cells.append(text)
        table.add_row(row_label(row.label), *cells)
    return table


def legend_table(comparison: Comparison, properties: list[str]) -> Table:
    """Which key figure each verdict cell shows: per property (in the columns' order) the figure's name,
    and where the schemes differ, which schemes each name belongs to (in the rows' order)."""
    table = Table(title="key figures", title_justify="left", box=None, show_header=False, padding=(0, 1))
    table.add_column("property", no_wrap=True)
    table.add_column("figure")
    for name in properties:
        owners: dict[str, list[str]] = {}
        for row in comparison.rows:
            result = row.results[name]
            key = result.key_figure
            if key:
                dtype = result.figures.get("dtype") if name == "precision" else None
                owners.setdefault(key.replace("_", " ") + (f" in {dtype}" if dtype else ""), []).append(row.label)
        if len(owners) == 1:
            table.add_row(SHORT_NAMES.get(name, name), next(iter(owners)))
        elif owners:
            table.add_row(SHORT_NAMES.get(name, name), "; ".join(f"{key} ({', '.join(rows)})" for key, rows in owners.items()))
    return table


def measured_dtypes(comparison: Comparison, name: str) -> list[str]:
    """The dtypes property ``name`` measured the rows in (precision: bfloat16 unless --dtype says), once each."""
    if name != "precision":
        return []
    return list(dict.fromkeys(str(row.results[name].figures["dtype"]) for row in comparison.rows
                              if row.results[name].figures.get("dtype")))


#: Longest line of a row label before it breaks after a hyphen.
LABEL_WIDTH = 16


def row_label(label: str) -> str:
    """A row's label for a narrow column: a long name without spaces (a model's file name) breaks after
    its hyphens into lines of at most :data:`LABEL_WIDTH` characters where it can
    (``meta-llama--`` / ``llama-3.1-8b``), never inside a word."""
    if len(label) <= LABEL_WIDTH or " " in label:
        return label
    lines = [""]
    for piece in re.findall(r"[^-]*-+|[^-]+$", label):
        if lines[-1] and len(lines[-1]) + len(piece) > LABEL_WIDTH:
            lines.append("")
        lines[-1] += piece
    return "\n".join(lines)


def cell_value(value: Any) -> str:
    """A key figure in a narrow cell: three significant digits, a list as one word."""
    value = plain(value)
    if isinstance(value, float):
        return number(value, CELL_DIGITS)
    return format_value(value, narrow=True)
