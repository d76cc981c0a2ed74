"""The tables ``pecli wavelengths`` prints."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from pecli.analysis.spectrum import BaseBound, PairRow, WavelengthReport
from pecli.render.tables import format_value, key_value_table

#: Longest table drawn in full; longer ones show their first and last rows.
MAX_ROWS = 80


def wavelengths_tables(report: WavelengthReport) -> list[Table]:
    """The per-pair table and the summary table of a ``wavelengths`` report."""
    return [pairs_table(report), summary_table(report)]


def pairs_table(report: WavelengthReport) -> Table:
    """One row per frequency pair; the columns of a scaling, of longrope and of T only where they apply."""
    spectrum = report.spectrum
    pairs = spectrum.pairs
    scaled = spectrum.summary.scaling not in ("none", None) or any(p.regime != "unchanged" for p in pairs)
    longrope = any(p.short_factor is not None for p in pairs)
    trained = spectrum.train_length is not None

    params = report.scheme.params()
    title = f"{spectrum.scheme}: dim {params.get('dim')}, base {format_value(params.get('base'))}, context C = {spectrum.context:,}"
    if trained:
        title += f", training length T = {spectrum.train_length:,}"
    table = Table(title=title, title_justify="left")
    table.add_column("i", justify="right", no_wrap=True, min_width=2)
    for header in ("θ rad/tok", "λ tokens", "turns in C"):
        table.add_column(header, justify="right", no_wrap=True)
    if trained:
        table.add_column("turned in T (θ₀)", justify="center", no_wrap=True)
    if scaled:
        table.add_column("θ/θ₀", justify="right", no_wrap=True)
        table.add_column("scaling did", no_wrap=True)
    if longrope:
        table.add_column("short", justify="right", no_wrap=True, min_width=5)
        table.add_column("long", justify="right", no_wrap=True, min_width=5)
    shown: list[PairRow | None] = list(pairs) if len(pairs) <= MAX_ROWS else [*pairs[: MAX_ROWS // 2], None, *pairs[-MAX_ROWS // 2 :]]
    for pair in shown:
        if pair is None:
            table.add_row(*(["…"] * len(table.columns)))
            continue
        row = [str(pair.index), f"{pair.inv_freq:.4g}", _tokens(pair.wavelength), f"{pair.rotations:.4g}"]
        if trained:
            row.append("yes" if pair.completed_in_training else "no")
        if scaled:
            row += [f"{pair.ratio:.4g}", pair.regime]
        if longrope:
            row += [format_value(pair.short_factor), format_value(pair.long_factor)]
        table.add_row(*row)
    return table


def summary_table(report: WavelengthReport) -> Table:
    """Wavelength extremes, critical dimension, scaling facts and Men et al.'s bounds."""
    summary = report.spectrum.summary
    rows: list[tuple[str, Any]] = [
        ("largest wavelength", _tokens(summary.largest_wavelength)),
        ("smallest wavelength", _tokens(summary.smallest_wavelength)),
    ]
    if summary.theoretical_context_limit is not None:
        rows.append(("theoretical context limit (longest wavelength)", _tokens(summary.theoretical_context_limit)))
    if summary.critical_dimension is not None:
        rows.append((
            "critical dimension (Liu et al. 2023)",
            f"{summary.critical_dimension} of {2 * summary.pairs}: "
            f"{summary.pairs_not_completed_in_training} pairs never turned fully in training",
        ))
    if summary.scaling is not None:
        rows.append(("scaling", summary.scaling))
        rows.append(("effective base", summary.effective_base))
    rows.append(("attention scaling (cos and sin)", summary.attention_scaling))
    if summary.yarn_correction_range is not None:
        rows.append(("yarn correction range (pairs)", list(summary.yarn_correction_range)))
    if summary.longrope_switch is not None:
        rows.append(("longrope", f"{summary.longrope_factors_in_use} factors in use; {summary.longrope_switch}"))
    if summary.dynamic_base_by_length is not None:
        rows.append(("dynamic NTK base by length", ", ".join(
            f"{r.length:,}: {r.base:.6g}" for r in summary.dynamic_base_by_length
        )))
    bound = summary.base_lower_bound
    if bound is not None:
        verdict = "meets it" if summary.base_meets_bound else "does not meet it"
        rows.append((
            f"base lower bound for {bound.context:,} tokens (Men et al. 2024)",
            f"{_bound_text(bound)}; this base {verdict}",
        ))
    suggestion = report.suggested_base
    if suggestion is not None:
        rows.append((f"suggested base for {suggestion.context:,} tokens", _bound_text(suggestion)))
    for note in summary.notes:
        rows.append(("note", note))
    return key_value_table("summary", rows)


def _tokens(value: float | None) -> str:
    if value is None:
        return "∞ (not rotated)"
    return f"{value:,.1f}" if value < 1e6 else f"{value:.4g}"


def _bound_text(bound: BaseBound) -> str:
    if bound.smallest_base is None:
        return f"no base satisfies it (d = {bound.dim})"
    return (
        f"smallest found {bound.smallest_base:.6g} (grid of {bound.steps_per_decade} per decade); "
        f"every base above {bound.every_base_above:.6g}"
    )
