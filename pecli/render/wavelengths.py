"""The tables ``pecli wavelengths`` prints."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from pecli.wavelengths.bound_search import BaseBound
from pecli.wavelengths.spectrum import PairRow, WavelengthReport
from pecli.numbers import number, tokens
from pecli.render.tables import format_value, key_value_table
from pecli.schemes.scaling.registry import scales

#: Longest table drawn in full; longer ones show their first and last rows.
MAX_ROWS = 80


def wavelengths_tables(report: WavelengthReport, *, wide: bool = False) -> list[Text | Table]:
    """The title line, the per-pair table and the summary table of a ``wavelengths`` report; ``wide``
    adds the columns that do not fit 80 characters (longrope's two factor sets). The title is a line of
    its own, wrapped at the terminal's width rather than at the narrow table's."""
    table = pairs_table(report, wide=wide)
    title, table.title = Text(str(table.title)), None
    return [title, table, summary_table(report)]


def pairs_table(report: WavelengthReport, *, wide: bool = False) -> Table:
    """One row per frequency pair; the columns of a scaling, of longrope and of T only where they apply.

    Every column holds numbers or single words and is never wrapped; the default columns fit 80
    characters (at most 9 characters a number), ``wide`` adds longrope's short and long factors.
    """
    spectrum = report.spectrum
    pairs = spectrum.pairs
    scaled = scales(spectrum.summary.scaling) or any(p.regime != "unchanged" for p in pairs)
    factors = wide and any(p.short_factor is not None for p in pairs)
    trained = spectrum.train_length is not None
    on_axes = any(p.axis is not None for p in pairs)

    table = Table(title=_title(report), title_justify="left")
    columns = [("i", "right")] + ([("axis", "center")] if on_axes else [])
    columns += [("θ\nrad/tok", "right"), ("λ\ntokens", "right"), ("turns\nin C" if not on_axes else "turns\nin span", "right")]
    if trained:
        columns.append(("turned\nin T", "center"))
    if scaled:
        columns += [("θ/θ₀", "right"), ("scaling\ndid", "left")]
    if factors:
        columns += [("short\nfactor", "right"), ("long\nfactor", "right")]
    for header, justify in columns:
        table.add_column(header, justify=justify, no_wrap=True)
    shown: list[PairRow | None] = list(pairs) if len(pairs) <= MAX_ROWS else [*pairs[: MAX_ROWS // 2], None, *pairs[-MAX_ROWS // 2 :]]
    if len(pairs) > MAX_ROWS:  # the rows left out are named, with where to find them
        first, last = pairs[MAX_ROWS // 2].index, pairs[-MAX_ROWS // 2 - 1].index
        table.caption = f"pairs {first}–{last} not shown; --json lists every pair"
        table.caption_justify = "left"
    for pair in shown:
        if pair is None:
            table.add_row(f"{first}–{last}", *(["⋮"] * (len(table.columns) - 1)))
            continue
        row = [str(pair.index), *([pair.axis] if on_axes else [])]
        row += [number(pair.inv_freq), _tokens(pair.wavelength, short=True), number(pair.rotations)]
        if trained:
            row.append("yes" if pair.completed_in_training else "no")
        if scaled:
            row += [number(pair.ratio), pair.regime]
        if factors:
            row += [format_value(pair.short_factor), format_value(pair.long_factor)]
        table.add_row(*row)
    return table


def _title(report: WavelengthReport) -> str:
    spectrum = report.spectrum
    params = report.scheme.params()
    ladder = "given frequencies" if params.get("inv_freq") is not None else f"base {format_value(params.get('base'))}"
    title = f"{spectrum.scheme}: dim {params.get('dim')}, {ladder}"
    if spectrum.summary.axes:  # turns over the span of each pair's coordinate in the scheme's cells
        spans = ", ".join(f"{a.axis} spans {a.span:,}" for a in spectrum.summary.axes)
        title += f", over {report.scheme.cells_text()} ({spans})"
    else:
        title += f", context C = {spectrum.context:,}"
    if spectrum.train_length is not None:
        source = {"given": "--train-length", None: ""}.get(report.train_length_from, report.train_length_from)
        title += f", training length T = {spectrum.train_length:,} ({source + '; ' if source else ''}turned in T: with the pre-training θ₀)"
    return title


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
        if summary.effective_base is not None:
            rows.append(("effective base", summary.effective_base))
    rows.append(("attention scaling (cos and sin)", summary.attention_scaling))
    for share in summary.axes or ():
        rows.append((
            f"axis {share.axis} (spans {share.span:,})",
            f"{len(share.pairs)} pairs: {index_runs(share.pairs)}; λ {_tokens(share.smallest_wavelength, short=True)}"
            f" … {_tokens(share.largest_wavelength, short=True)}",
        ))
    if summary.yarn_correction_range is not None:
        rows.append(("yarn correction range (pairs)", list(summary.yarn_correction_range)))
    if summary.longrope_switch is not None:
        rows.append(("longrope", f"{summary.longrope_factors_in_use} factors in use; {summary.longrope_switch}"))
    if summary.dynamic_base_by_length is not None:
        rows.append(("dynamic NTK base by length", ", ".join(
            f"{r.length:,}: {number(r.base)}" for r in summary.dynamic_base_by_length
        )))
    bound = summary.base_lower_bound
    if bound is not None:
        if report.scheme.params().get("inv_freq") is not None:
            verdict = (f"the given frequencies {'keep' if summary.base_meets_bound else 'do not keep'} "
                       f"B(m) = Σ cos(m θ_i) ≥ 0 up to {bound.context:,}")
        else:
            verdict = f"this base {'meets it' if summary.base_meets_bound else 'does not meet it'}"
        rows.append((f"base lower bound for {bound.context:,} tokens (Men et al. 2024)", f"{_bound_text(bound)}; {verdict}"))
    suggestion = report.suggested_base
    if suggestion is not None:
        rows.append((f"suggested base for {suggestion.context:,} tokens", _bound_text(suggestion)))
    for note in summary.notes:
        rows.append(("note", note))
    return key_value_table("summary", rows)


def index_runs(indices: tuple[int, ...]) -> str:
    """Pair indices in short form: runs of equal steps as ``0–15`` (step 1) or ``1, 4 … 58`` (step 3)."""
    if not indices:
        return "none"
    parts, start = [], 0
    while start < len(indices):
        step = indices[start + 1] - indices[start] if start + 1 < len(indices) else 1
        end = start
        while end + 1 < len(indices) and indices[end + 1] - indices[end] == step:
            end += 1
        first, last = indices[start], indices[end]
        if end - start < 2:
            parts += [str(i) for i in indices[start : end + 1]]
        elif step == 1:
            parts.append(f"{first}–{last}")
        else:
            parts.append(f"{first}, {indices[start + 1]} … {last}")
        start = end + 1
    return ", ".join(parts)


def _tokens(value: float | None, *, short: bool = False) -> str:
    """A wavelength in tokens: one decimal below a million, else four significant digits."""
    if value is None:
        return "∞" if short else "∞ (not rotated)"
    return tokens(value, 1)


def _bound_text(bound: BaseBound) -> str:
    """Men et al.'s bound, the robust figure first: the condition is not monotone in the base, so the
    smallest passing bases form a window with failing bases above it; what is said of the bases above
    the window is only what was checked (a failing base, the next passing one)."""
    if bound.smallest_base is None:
        return f"no base satisfies it (d = {bound.dim})"
    text = f"every base above {_base(bound.every_base_above)} passes"
    window = bound.smallest_window
    if window is None or window[1] is None:
        return text + f"; the smallest passing base is {_base(bound.smallest_base)}"
    low, high = window
    text += f"; the smallest passing bases are {tokens(low)} to {tokens(high)}"
    if bound.failing_above_window is not None:
        text += f"; {tokens(bound.failing_above_window)} fails"
        if bound.next_passing is not None:
            text += f", {tokens(bound.next_passing)} passes again"
    return text


def _base(value: float | None) -> str:
    if value is None:
        return "—"
    return tokens(value)
