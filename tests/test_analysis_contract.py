"""Every registered analysis works on every registered scheme through the one interface."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from pecli.analysis.options import CheckOptions
from pecli.analysis.registry import ANALYSES, all_names, run_checks
from pecli.analysis.result import VERDICTS, PropertyResult
from pecli.analysis.relativity import score_by_distance
from pecli.analysis.structure import scan_pairs, sample_queries
from pecli.cli.common import jsonable
from pecli.config import build_scheme
from pecli.errors import PecliError
from pecli.schemes import SCHEMES

from conftest import limited_python

LENGTH = 24
#: Small widths keep the contract fast; every other parameter is the scheme's default.
SMALL = {"dim": 16}


def small_scheme(name: str, length: int = LENGTH):
    params = {k: v for k, v in SMALL.items() if k in {f for f in SCHEMES[name].parameter_names()}}
    return build_scheme(name, params, length=length)


@pytest.mark.parametrize("analysis", all_names())  # layout reads weights: tests/test_models_rope.py
@pytest.mark.parametrize("name", list(SCHEMES))
def test_every_analysis_on_every_scheme(name, analysis):
    scheme = small_scheme(name)
    options = CheckOptions(length=LENGTH)
    (result,) = run_checks(scheme, analysis, options)
    assert isinstance(result, PropertyResult)
    assert result.property == analysis
    assert result.verdict in VERDICTS
    assert isinstance(result.reason, str) and result.reason
    # a property of positions along a line does not apply to positions with several coordinates (but for
    # extrapolation on a grid)
    assert (result.verdict == "n/a") == (not ANALYSES[analysis].applies_to(scheme))
    assert result.key_figure in result.figures or result.verdict == "n/a"
    document = json.loads(json.dumps(jsonable(result.to_dict())))
    assert set(document) == {"property", "verdict", "passed", "reason", "key_figure", "figures", "table", "warnings", "sampled", "notes"}


@pytest.mark.parametrize("name", [name for name, cls in SCHEMES.items() if not cls.has_cells])
def test_distance_profile_shapes(name):
    scheme = small_scheme(name)
    profile = score_by_distance(scheme, LENGTH, max_distance=4)
    assert profile.distance.tolist() == list(range(-4, 5))
    for array in (profile.mean, profile.spread, profile.minimum, profile.maximum):
        assert array.shape == (scheme.channels, 9) and array.dtype == np.float64
    assert np.all(profile.spread >= 0)


def test_unknown_property_raises():
    with pytest.raises(PecliError, match="unknown property"):
        run_checks(small_scheme("sinusoidal"), "beauty")


def test_too_short_raises():
    with pytest.raises(PecliError):
        run_checks(small_scheme("sinusoidal", 2), "distinguishability", CheckOptions(length=2))


def test_sampled_scan_agrees_with_exact_on_sampled_rows():
    # The sampled scan examines a subset of queries exactly: its minimum is an upper bound of the exact one.
    rows = np.random.default_rng(0).standard_normal((300, 5))
    exact = scan_pairs(rows)
    sampled = scan_pairs(rows, samples=40)
    assert not exact.sampled and sampled.sampled
    assert sampled.min_distance >= exact.min_distance
    assert sampled.queries == sample_queries(300, 40).size


LONG_SEQUENCE = """
import json
from pecli.analysis.options import CheckOptions
from pecli.analysis.registry import all_names, run_checks
from pecli.config import build_scheme

length = 16384
scheme = build_scheme("rope", {"dim": 64}, length=length)
results = {r.property: r for r in run_checks(scheme, list(all_names()), CheckOptions(length=length))}
print(json.dumps({"uniqueness": [results["uniqueness"].verdict, results["uniqueness"].sampled],
                  "local_share": results["distinguishability"].figures["local_share"],
                  "relativity": [results["relativity"].verdict, results["relativity"].sampled]}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is Linux's")
def test_long_sequence_structure_without_quadratic_memory(tmp_path):
    # One moderate structural test: L = 16384, d = 64 rope. An (L, L) float64 array would be 2 GiB: the
    # checks run in a child whose address space is 1 GiB, and must still give the exact shift-invariant
    # answers (distances depend on Δ only).
    done = limited_python(LONG_SEQUENCE, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout)
    assert results["uniqueness"] == ["pass", False]
    assert results["local_share"] == 1.0
    assert results["relativity"] == ["pass", True]
