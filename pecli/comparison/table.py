"""Every property of several schemes side by side, with the articles' claims set against the measurements.

``pecli compare`` prints this; a notebook calls :func:`compare` directly::

    from pecli import build_scheme, compare
    table = compare([build_scheme("sinusoidal", {"dim": 64}), build_scheme("rope", {"dim": 64})], length=1024)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from pecli.numbers import integer
from pecli.analysis.options import CheckOptions
from pecli.analysis.registry import all_names, on_own_positions, run_checks
from pecli.analysis.result import PropertyResult
from pecli.comparison.claims import claims_for, disagreement
from pecli.analysis.encoding_pass import Extents, encoding_rows
from pecli.analysis.registry import shared_rows
from pecli.wavelengths.spectrum import wavelengths_of
from pecli.analysis.structure import bias_domain
from pecli.notebook import Tabular
from pecli.schemes.base import Capability, Scheme

#: Where each kind of scheme enters the attention computation.
ACTS_ON = {"additive": "input", "rotary": "q,k", "bias": "logits"}


@dataclass(frozen=True)
class ComparedScheme:
    """One row of a comparison: a scheme, its facts and the result of every property check."""

    label: str
    scheme: Scheme
    value_range: tuple[float, float]
    max_wavelength: float | None
    results: dict[str, PropertyResult]
    #: Footnote numbers by property, where a measurement disagrees with an article's claim.
    footnotes: dict[str, list[int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "scheme": self.scheme.name,
            "params": self.scheme.params(),
            "kind": self.scheme.kind,
            "acts_on": ACTS_ON.get(self.scheme.kind, self.scheme.kind),
            "parameter_count": int(self.scheme.parameter_count),
            "value_range": list(self.value_range),
            "max_wavelength": self.max_wavelength,
            "results": {name: result.to_dict() for name, result in self.results.items()},
            "footnotes": self.footnotes,
        }


@dataclass(frozen=True, repr=False)
class Comparison(Tabular):
    """The rows of :func:`compare` and the footnotes they point to."""

    length: int
    rows: list[ComparedScheme]
    footnotes: list[dict[str, Any]]

    def table_title(self) -> str:
        return f"pecli compare, L = {integer(self.length)}"

    def table_rows(self) -> list[dict[str, Any]]:
        """A row per scheme: its kind, then the verdict of every property."""
        return [{"scheme": row.label, "kind": row.scheme.kind, **{name: r.verdict for name, r in row.results.items()}}
                for row in self.rows]

    def to_dict(self) -> dict[str, Any]:
        """The document ``pecli compare --json`` prints."""
        return {
            "length": self.length, "properties": list(all_names()), "rows": [row.to_dict() for row in self.rows],
            "footnotes": self.footnotes,
        }


def compare(
    schemes: Sequence[Scheme | tuple[str, Scheme]], *, length: int, train_length: int | None = None,
    dtype: str | None = None, strict: bool = False, train_grid: Sequence[int] | None = None,
) -> Comparison:
    """Run every property check on every scheme at positions 0 … length − 1 (an n-D scheme: at its own
    cells, with ``n/a`` for the properties its positions do not have).

    Parameters
    ----------
    schemes:
        The schemes, each optionally with the label its row shows (default: the scheme's name).
    length, train_length, dtype, strict, train_grid:
        As for :func:`pecli.analysis.registry.run_checks` (:class:`~pecli.analysis.options.CheckOptions`): the
        schemes on a grid read ``train_grid``, the others ``train_length``.

    Returns
    -------
    Comparison
        One row per scheme; a footnote wherever a measured verdict disagrees with what an article
        claims (:mod:`pecli.comparison.claims`).
    """
    rows, footnotes = [], []
    options = CheckOptions(
        length=length, dtype=dtype, train_length=train_length, strict=strict,
        train_grid=None if train_grid is None else tuple(int(n) for n in train_grid),
    )
    for number, entry in enumerate(schemes, 1):
        label, scheme = entry if isinstance(entry, tuple) else (entry.name, entry)
        progress = f"{label} ({number}/{len(schemes)}): "
        # the value range comes from the pass over the rows the checks share (no (L, d) array)
        with shared_rows(scheme, "all", on_own_positions(scheme, options), label=progress, extra=[Extents()]):
            results = {r.property: r for r in run_checks(scheme, "all", options, label=progress)}
            span = value_range(scheme, length)
        marks: dict[str, list[int]] = {}
        for prop, claim in claims_for(scheme.name).items():
            words = disagreement(claim, results[prop].verdict)
            if words:
                number = len(footnotes) + 1
                footnotes.append({
                    "number": number, "scheme": scheme.name, "property": prop, "source": claim.source,
                    "claim": claim.quote, "claimed": claim.holds, "measured": results[prop].verdict,
                    "text": f"{label}, {prop}: {claim.source}: “{claim.quote}”; {words}: {results[prop].reason}",
                })
                marks.setdefault(prop, []).append(number)
        rows.append(ComparedScheme(label, scheme, span, max_wavelength(scheme), results, marks))
    return Comparison(length, rows, footnotes)


def value_range(scheme: Scheme, length: int) -> tuple[float, float]:
    """The smallest and largest value of the encoding (vectors) or of the bias over 0 … length − 1 (an
    n-D scheme: over its cells)."""
    length = scheme.cell_count if scheme.has_cells else length
    if scheme.has(Capability.VECTORS):
        extent, = encoding_rows(scheme, length).measure(Extents())
        return extent.low + 0.0, extent.high + 0.0
    values = bias_domain(scheme, length).rows
    return float(np.min(values)) + 0.0, float(np.max(values)) + 0.0


def max_wavelength(scheme: Scheme) -> float | None:
    """The longest finite wavelength ``2π/θ_i`` of a scheme with frequency pairs, else None."""
    if not scheme.has(Capability.FREQUENCIES):
        return None
    finite = wavelengths_of(scheme.frequency_pairs().inv_freq)
    finite = finite[np.isfinite(finite)]
    return float(finite.max()) if finite.size else None
