"""Measurements of positional encodings: pure functions over schemes and arrays.

The property checks of ``pecli check`` live in one registry, :data:`ANALYSES`
(:mod:`pecli.analysis.registry`): a table of frozen records, each with a name, a one-line summary and
a ``run(scheme, options)`` function with the same signature, so that every analysis works on every
scheme through one interface::

    from pecli.analysis import CheckOptions, run_checks
    results = run_checks(scheme, "all", CheckOptions(length=1024))

Each check returns a :class:`~pecli.analysis.result.PropertyResult` (verdict, reason, figures). The
options a check reads are declared once, as the fields of :class:`CheckOptions`
(:mod:`pecli.analysis.options`); each record names those it reads. ``all`` runs every property of the
scheme (:func:`all_names`); ``layout`` reads a checkpoint's weights and is asked for by name.
Before any work, :func:`estimate_check_bytes` bounds the memory a set of checks will hold.

The registry's names are loaded on first use: ``pecli encode`` needs only
:mod:`pecli.analysis.summary`, and importing the package does not import every analysis.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "ANALYSES", "PROPERTIES", "VERDICTS", "AnalysisInfo", "CheckOptions", "CheckReport", "Footprint",
    "PropertyResult", "all_names", "check_report", "estimate_check_bytes", "generic_footprint", "get_analysis",
    "not_applicable", "on_own_positions", "properties", "run_checks", "within_table",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("pecli.analysis.registry"), name)
    raise AttributeError(f"module 'pecli.analysis' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
