"""The analyses at scale, checked at small sizes: how memory estimates grow, budgets, chunked and sampled paths."""

from __future__ import annotations

import numpy as np
import pytest

from pecli.analysis.options import CheckOptions
from pecli.analysis.registry import all_names, estimate_check_bytes, run_checks
from pecli.analysis import composability, relativity, structure
from pecli.analysis.precision import check_precision
from pecli.config import build_scheme
from pecli.progress import Recorded, reporting

# How the estimates compare with the memory a process holds is measured in benchmarks/bench_memory.py
# (it depends on NumPy's temporaries, hence on the machine and the versions); here they are held to
# what they must grow with.


def test_estimates_grow_linearly_with_the_length():
    scheme = build_scheme("rope", {"dim": 128}, length=1 << 20)
    big = estimate_check_bytes(scheme, "all", CheckOptions(length=1 << 20))
    bigger = estimate_check_bytes(scheme, "all", CheckOptions(length=1 << 21))
    assert big < 3 << 30 and bigger < 2.2 * big


def test_sampled_composability_says_so_and_keeps_the_verdicts(monkeypatch):
    monkeypatch.setattr(composability, "EXACT_FIT_WORK", 1)
    monkeypatch.setattr(composability, "FIT_SAMPLES", 64)
    rope = composability.check_composability(build_scheme("rope", {"dim": 8}, length=600), 600)
    assert rope.verdict == "pass" and rope.sampled
    assert "held-out" in rope.notes[0] and rope.figures["max_rotation_distance"] < 1e-8
    binary = composability.check_composability(build_scheme("binary", {}, length=600), 600)
    assert binary.verdict == "fail" and binary.sampled


def test_exact_composability_is_unchanged_below_the_budget():
    result = composability.check_composability(build_scheme("sinusoidal", {"dim": 8}, length=256), 256)
    assert not result.sampled and result.figures["positions"] == 256


def test_all_pairs_work_is_capped_by_operations(monkeypatch):
    rows = np.random.default_rng(0).normal(size=(300, 3))
    assert not structure.scan_pairs(rows).sampled
    monkeypatch.setattr(structure, "EXACT_PAIRS", 300 * 300 - 1)
    assert structure.scan_pairs(rows).sampled
    monkeypatch.setattr(relativity, "EXACT_PROFILE_CELLS", 10)
    profile = relativity.score_by_distance(build_scheme("binary", {}, length=300), 300)
    assert profile.sampled


def test_chunked_precision_matches_across_chunk_boundaries(monkeypatch):
    scheme = build_scheme("rope", {"dim": 8}, length=4000)
    whole = check_precision(scheme, 4000, compute_dtype="bfloat16")
    monkeypatch.setattr(structure, "CHUNK_BYTES", 1)  # chunks of 1024 rows
    chunked = check_precision(scheme, 4000, compute_dtype="bfloat16")
    assert chunked.to_dict() == whole.to_dict()


def test_each_property_reports_progress():
    recorder = Recorded()
    with reporting(recorder):
        run_checks(build_scheme("sinusoidal", {"dim": 8}, length=64), "all", CheckOptions(length=64))
    assert [label.split(" ")[0] for label, _ in recorder.started] == list(all_names())
