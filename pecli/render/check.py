"""The tables ``pecli check`` and ``pecli compare`` print (renderables; printed only by the CLI)."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from pecli.analysis.result import CheckReport, PropertyResult
from pecli.render.tables import format_value, plain

#: Styles of the verdicts (plain text when NO_COLOR is set or stdout is not a terminal).
VERDICT_STYLES = {"pass": "green", "warn": "yellow", "fail": "bold red"}


def verdict_text(verdict: str) -> Text:
    return Text(verdict.upper(), style=VERDICT_STYLES.get(verdict, ""))


def _figure(result: PropertyResult) -> str:
    key = result.key_figure
    if not key:
        return "—"
    return f"{key} = {_value(result.figures.get(key))}"


def _value(value: Any) -> str:
    """A figure as the table shows it: the value ``--json`` holds, in short form."""
    return format_value(plain(value))


def summary_table(report: CheckReport) -> Table:
    """One row per property: verdict, key figure, reason."""
    table = Table(title=_title(report), title_justify="left")
    table.add_column("property", style="bold")
    table.add_column("verdict")
    table.add_column("key figure")
    table.add_column("reason", overflow="fold")
    for result in report.results:
        table.add_row(result.property, verdict_text(result.verdict), _figure(result), result.reason)
    return table


def _title(report: CheckReport) -> str:
    return f"pecli check {report.property}: {report.scheme} ({report.kind}), L = {report.length}"


def result_table(report: CheckReport, result: PropertyResult) -> Table:
    """A single property: verdict, reason, every figure."""
    table = Table(title=_title(report), show_header=False, title_justify="left")
    table.add_column("key", style="bold")
    table.add_column("value", overflow="fold")
    table.add_row("verdict", verdict_text(result.verdict))
    table.add_row("reason", result.reason)
    table.add_row("parameters", _value(report.params))
    for key, value in result.figures.items():
        table.add_row(key.replace("_", " "), _value(value))
    for warning in result.warnings:
        table.add_row("warning", warning)
    for note in result.notes:
        table.add_row("note", note)
    if result.sampled:
        table.add_row("sampled", "yes (see the notes)")
    return table


def detail_table(result: PropertyResult) -> Table | None:
    """The detail rows of a result (relativity: the dot-product-vs-distance table), or None."""
    rows = result.table
    if not rows:
        return None
    titles = {
        "relativity": "score S(m, m+Δ) against the distance Δ = n − m (mean and spread over m)",
        "composability": "least-squares fit of E_(p+k) ≈ M_k E_p per shift k",
    }
    table = Table(title=titles.get(result.property, result.property), title_justify="left")
    names = {"sum_cos": "Σ cos(ω_i Δ) (seed 000)", "distance": "Δ"}
    for key in rows[0]:
        table.add_column(names.get(key, key.replace("_", " ")), justify="right")
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
        for warning in result.warnings:
            parts.append(Text(f"warning ({result.property}): {warning}"))
        label = "sampled" if result.sampled else "note"
        for note in result.notes:
            parts.append(Text(f"{label} ({result.property}): {note}"))
    return Group(*parts)


#: Short column headers of the compare table, so that it fits 80 columns.
SHORT_NAMES = {
    "uniqueness": "unique", "distinguishability": "distinct", "composability": "compose",
    "relativity": "relative", "extrapolation": "extrap.", "precision": "precision",
}


def compare_renderable(document: dict[str, Any]) -> Group:
    """What ``pecli compare`` prints: the schemes' facts, their verdicts, a legend, then the footnotes."""
    facts = Table(title=f"pecli compare: L = {document['length']}", title_justify="left")
    facts.add_column("scheme", style="bold", overflow="fold")
    facts.add_column("acts on")
    facts.add_column("trainable", justify="right")
    facts.add_column("value range", overflow="fold")
    facts.add_column("max wavelength", justify="right")
    properties = document["properties"]
    verdicts = Table(title="verdicts (key figure below; \\[n]: footnote)", title_justify="left")
    verdicts.add_column("scheme", style="bold", overflow="fold")
    for name in properties:
        verdicts.add_column(SHORT_NAMES.get(name, name), overflow="fold")
    legend: dict[str, list[str]] = {}
    for row in document["rows"]:
        facts.add_row(
            row["label"], row["acts_on"], f"{row['parameter_count']:,}", format_value(row["value_range"]),
            format_value(row["max_wavelength"]),
        )
        cells = []
        for name in properties:
            result = row["results"][name]
            text = verdict_text(result["verdict"])
            key = result.get("key_figure")
            if key:
                text.append(f"\n{_short(result['figures'].get(key))}")
                names = legend.setdefault(name, [])
                if key.replace("_", " ") not in names:
                    names.append(key.replace("_", " "))
            marks = "".join(f"[{n}]" for n in row["footnotes"].get(name, []))
            if marks:
                text.append(" " + marks)
            cells.append(text)
        verdicts.add_row(row["label"], *cells)
    parts: list[Any] = [facts, verdicts]
    if legend:
        parts.append(Text("key figures: " + "; ".join(f"{SHORT_NAMES.get(k, k)} = {' / '.join(v)}" for k, v in legend.items())))
    for note in document["footnotes"]:
        parts.append(Text(f"[{note['number']}] {note['text']}"))
    return Group(*parts)


def _short(value: Any) -> str:
    """A key figure in a narrow cell: three significant digits."""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_short(v) for v in value) + "]"
    return format_value(value)
