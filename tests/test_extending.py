"""Extending pecli is one record in one place: a toy scheme, a toy RoPE scaling and a toy property,
registered in-process, appear in ``--help``, ``check all`` and ``compare`` with nothing else changed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest

from pecli.analysis.registry import ANALYSES, AnalysisInfo, all_names
from pecli.analysis.result import PropertyResult
from pecli.params import Parameter, param
from pecli.schemes import SCHEMES
from pecli.schemes.base import AdditiveScheme, Capability
from pecli.schemes.positions import as_positions
from pecli.schemes.scaling.keys import FACTOR
from pecli.schemes.scaling.record import ScalingType, scaled_frequencies
from pecli.schemes.scaling.registry import SCALINGS


@dataclass(frozen=True)
class RampScheme(AdditiveScheme):
    """A toy additive scheme: ``E[p, k] = slope · p / (k + 1)``."""

    name: ClassVar[str] = "ramp"
    summary: ClassVar[str] = "slope·p/(k+1) in component k (a test's toy)"

    dim: int = param(4, "number of components", minimum=1)
    slope: float = param(0.5, "growth per position of component 0", exclusive_minimum=0)

    @property
    def width(self) -> int:
        return self.dim

    def encode(self, positions: Any) -> np.ndarray:
        p = as_positions(positions).astype(np.float64)
        return self.slope * p[:, None] / np.arange(1, self.dim + 1)


def _halved(scaling, model):
    """A toy scaling: θ_i / (s · halving)."""
    inv_freq = model.theta / (scaling.factor * scaling.value("halving"))
    return scaled_frequencies(model, scaling, inv_freq, regimes=("scaled",) * model.pairs, factor=scaling.factor)


HALVING = Parameter("halving", float, None, "halved: an extra divisor", minimum=1, default_text="2", group="RoPE scaling")


def _norm_is_bounded(scheme, options) -> PropertyResult:
    """A toy property: the largest vector norm over 0 … L − 1 is at most 1e6."""
    from pecli.analysis.structure import vectors

    largest = float(np.linalg.norm(vectors(scheme, options.length), axis=1).max()) if scheme.has(Capability.VECTORS) else 0.0
    verdict = "pass" if largest <= 1e6 else "fail"
    return PropertyResult("bounded", verdict, f"largest norm {largest:.3g}", {"largest_norm": largest}, "largest_norm")


@pytest.fixture
def extended(monkeypatch):
    monkeypatch.setitem(SCHEMES, "ramp", RampScheme)
    monkeypatch.setitem(
        SCALINGS, "halved",
        ScalingType("halved", "θ_i / (s · halving)", (FACTOR, HALVING), _halved, required=("factor",), defaults={"halving": 2.0}),
    )
    monkeypatch.setitem(ANALYSES, "bounded", AnalysisInfo("bounded", "vectors stay below a norm of 1e6", _norm_is_bounded))


def test_a_new_scheme_and_scaling_have_options(extended, invoke):
    help_text = invoke("encode", "--help").stdout
    assert "--slope" in help_text and "ramp" in help_text
    assert "--halving" in help_text and "halved" in help_text
    # and the options work: 0.5·3/(k+1) at p = 3, component k = 1 → 0.75
    result = invoke("encode", "--scheme", "ramp", "--slope", "0.5", "--length", "4", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["params"] == {"dim": 4, "slope": 0.5}


def test_a_new_scheme_and_property_in_check_all(extended, invoke):
    result = invoke("check", "all", "--scheme", "ramp", "--set", "slope=2", "--length", "16", "--json")
    document = json.loads(result.stdout)
    assert [r["property"] for r in document["results"]] == [*all_names()]
    bounded = next(r for r in document["results"] if r["property"] == "bounded")
    assert bounded["figures"]["largest_norm"] == pytest.approx(2 * 15 * np.sqrt(sum(1 / k**2 for k in range(1, 5))))
    assert invoke("check", "bounded", "--scheme", "ramp", "--length", "8", "--quiet").exit_code == 0


def test_a_new_scaling_in_check_and_compare(extended, invoke):
    # θ = (1, 0.01) for d = 4, base 10000; halved by 2 · 5 → (0.1, 0.001)
    result = invoke("wavelengths", "--scheme", "rope", "--dim", "4", "--scaling", "halved", "--factor", "2", "--halving", "5", "--json")
    assert result.exit_code == 0, result.output
    assert [row["inv_freq"] for row in json.loads(result.stdout)["pairs"]] == pytest.approx([0.1, 0.001])
    result = invoke("compare", "--schemes", "ramp,rope", "--scaling", "halved", "--factor", "2", "--length", "16", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    assert [row["scheme"] for row in rows] == ["ramp", "rope"]
    assert rows[1]["params"]["scaling"] == "halved" and rows[1]["params"]["halving"] is None
    assert set(rows[0]["results"]) == set(all_names())
