"""The record every property check returns: a verdict, the measured figures and the reason in words."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pecli.numbers import integer
from pecli.notebook import Tabular

#: The verdicts. ``warn`` passes (exit 0) but names something a user should know; ``--strict``
#: turns it into a failure. ``n/a``: nothing was measured — the property is not defined for the scheme's
#: positions (a property of positions along a line, asked of a grid), or there is nothing to measure at
#: this length (extrapolation within the model's own training length); it neither passes nor fails a run.
VERDICTS = ("pass", "warn", "fail", "n/a")


@dataclass(frozen=True, repr=False)
class PropertyResult(Tabular):
    """The outcome of one property check on one scheme.

    Attributes
    ----------
    property:
        The property's registry name (``uniqueness``, ``distinguishability``, …).
    verdict:
        ``pass``, ``warn``, ``fail`` or ``n/a``.
    reason:
        One sentence in words that says why, with the deciding numbers.
    figures:
        The measured figures, by stable snake_case name (JSON-friendly values).
    key_figure:
        The name of the one figure a summary row (``pecli compare``) shows.
    table:
        Optional rows of a detail table (the dot-product-vs-distance table of relativity), each a dict
        with the same keys.
    warnings:
        Findings that do not fail the property (unseen angles at extrapolation, for instance).
    sampled:
        True when some figure was estimated from a sample of positions rather than computed over all of
        them; ``notes`` then says which.
    notes:
        Anything else the reader needs: the method, what was sampled, what was extended.
    """

    property: str
    verdict: str
    reason: str
    figures: dict[str, Any] = field(default_factory=dict)
    key_figure: str | None = None
    table: list[dict[str, Any]] | None = None
    warnings: tuple[str, ...] = ()
    sampled: bool = False
    notes: tuple[str, ...] = ()

    def table_title(self) -> str:
        return f"{self.property}: {self.verdict.upper()}: {self.reason}"

    def table_rows(self) -> list[dict[str, Any]]:
        """A row per measured figure."""
        return [{"figure": name, "value": value} for name, value in self.figures.items()]

    @property
    def passed(self) -> bool:
        """True unless the verdict is ``fail``."""
        return self.verdict != "fail"

    def strict(self) -> PropertyResult:
        """The same result with a warning turned into a failure (``--strict``)."""
        if self.verdict != "warn":
            return self
        return PropertyResult(
            self.property, "fail", self.reason + " (a failure under --strict)", self.figures, self.key_figure,
            self.table, self.warnings, self.sampled, self.notes,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict with stable keys."""
        return {
            "property": self.property,
            "verdict": self.verdict,
            "passed": self.passed,
            "reason": self.reason,
            "key_figure": self.key_figure,
            "figures": dict(self.figures),
            "table": self.table,
            "warnings": list(self.warnings),
            "sampled": self.sampled,
            "notes": list(self.notes),
        }


@dataclass(frozen=True, repr=False)
class CheckReport(Tabular):
    """What ``pecli check`` reports: the results of the selected properties on one scheme.

    Attributes
    ----------
    scheme, kind, params:
        The scheme's name, kind and parameters (JSON-friendly).
    length:
        L, the positions 0 … L − 1 measured.
    property:
        What was asked for: a property's name or ``all``.
    results:
        One :class:`PropertyResult` per property, in the order they ran; the report iterates and
        indexes over them as a list would.
    """

    scheme: str
    kind: str
    params: dict[str, Any]
    length: int
    property: str
    results: tuple[PropertyResult, ...]

    def table_title(self) -> str:
        return f"{self.scheme} ({self.kind}), L = {integer(self.length)}: {self.verdict.upper()}"

    def table_rows(self) -> list[dict[str, Any]]:
        """A row per property: its verdict, key figure and reason."""
        return [{"property": r.property, "verdict": r.verdict, "key_figure": r.key_figure,
                 "value": r.figures.get(r.key_figure) if r.key_figure else None, "reason": r.reason}
                for r in self.results]

    @property
    def passed(self) -> bool:
        """True unless some result failed."""
        return all(result.passed for result in self.results)

    def __iter__(self):
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __getitem__(self, index: int) -> PropertyResult:
        """The results by position (``report[0]``), as the list :func:`run_checks` returns."""
        return self.results[index]

    @property
    def verdict(self) -> str:
        """The worst verdict of the results: ``fail``, else ``warn``, else ``pass``."""
        verdicts = {result.verdict for result in self.results}
        return next((v for v in ("fail", "warn") if v in verdicts), "pass")

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``pecli check --json``."""
        return {
            "scheme": self.scheme,
            "kind": self.kind,
            "params": dict(self.params),
            "length": self.length,
            "property": self.property,
            "verdict": self.verdict,
            "passed": self.passed,
            "results": [result.to_dict() for result in self.results],
        }
