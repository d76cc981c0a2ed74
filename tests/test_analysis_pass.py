"""The pass over the rows with its reused arrays: block and chunk boundaries, known values worked out by hand."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from pecli.analysis import relativity, structure
from pecli.analysis.options import CheckOptions
from pecli.analysis.registry import run_checks
from pecli.analysis.precision import check_precision
from pecli.analysis.relativity import score_by_distance
from pecli.analysis.structure import all_distinct, collisions_of, row_hashes
from pecli.config import build_scheme


def test_collisions_of_rows_with_distinct_hashes_and_with_repeats():
    rows = np.array([[1.0, 0.0], [2.0, 0.0], [-0.0, 3.0], [1.0, 0.0], [1.0, 0.0], [0.0, 3.0]])
    distinct = rows[:3]
    assert all_distinct(row_hashes(distinct))
    assert collisions_of(3, lambda index: distinct[index], 2, row_hashes(distinct)) == structure.Collisions(0, 0, None, None)
    # rows 3 and 4 repeat row 0, row 5 repeats row 2 (−0.0 = 0.0): pairs {0,3}, {0,4}, {3,4}, {2,5}
    found = collisions_of(6, lambda index: rows[index], 2, row_hashes(rows))
    assert not all_distinct(row_hashes(rows))
    assert (found.pairs, found.repeated, found.first, found.first_adjacent) == (4, 3, (0, 3), 4)


def test_rope_key_factors_written_into_a_buffer():
    # dim 2: θ_0 = 1, so position p holds (cos p, sin p) and its factors are (cos p − sin p, sin p + cos p)
    scheme = build_scheme("rope", {"dim": 2}, length=8)
    positions = np.arange(3, 6)
    rows = scheme.encode(positions)
    buffer = np.full((3, 2), np.nan)
    _, keys = scheme.score_factors_of_rows(positions, rows, out=buffer)
    assert keys is buffer
    expected = [[math.cos(p) - math.sin(p), math.sin(p) + math.cos(p)] for p in (3, 4, 5)]
    np.testing.assert_allclose(buffer, expected, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(buffer, scheme.score_factors_of_rows(positions, rows)[1])


def test_partial_rope_key_factors_keep_ones_on_the_unrotated_tail():
    scheme = build_scheme("rope", {"dim": 8, "partial_rotary_factor": 0.5}, length=8)
    positions = np.arange(4)
    buffer = np.zeros((4, 8))
    _, keys = scheme.score_factors_of_rows(positions, scheme.encode(positions), out=buffer)
    np.testing.assert_array_equal(keys[:, 4:], 1.0)
    np.testing.assert_array_equal(keys, scheme.score_factors_of_rows(positions, scheme.encode(positions))[1])


@pytest.mark.parametrize("block_rows", [None, 2049])
def test_first_adjacent_collision_at_a_block_start(monkeypatch, block_rows):
    # float16 holds every integer up to 2048 and rounds 2049 to 2048 (a tie, to even): computed in
    # float16, position 2049 takes 2048's angles, so rows 2048 and 2049 are the first adjacent pair
    # equal in float16 while different in float64 — with blocks of 2049 rows, the first row of a block
    if block_rows is not None:
        monkeypatch.setattr(structure, "CHUNK_BYTES", block_rows * 8 * 16 * 8)
        assert structure.block_rows(8) == block_rows
    scheme = build_scheme("rope", {"dim": 8}, length=4200)  # a second block as long as the first
    result = check_precision(scheme, 4200, compute_dtype="float16", dtype="float32")
    assert result.figures["first_adjacent_collision"] == 2049


def test_relativity_profile_over_keys_that_straddle_blocks_and_chunks(monkeypatch):
    # rope scores through the factors u = (1, 1) on every pair: S(m, m + Δ) = Σ_i 2 cos(θ_i Δ)
    length = 3000
    scheme = build_scheme("rope", {"dim": 8}, length=length)
    whole = score_by_distance(scheme, length, samples=20)
    monkeypatch.setattr(relativity, "BLOCK_BYTES", 8 * 22 * 700)  # chunks of 700 keys, blocks of 1024 rows
    assert relativity.DistanceScores(scheme, length, samples=20).key_step == 700
    chunked = score_by_distance(scheme, length, samples=20)
    theta = 10000.0 ** (-np.arange(0, 8, 2) / 8)
    expected = 2 * np.cos(np.outer(chunked.distance, theta)).sum(axis=1)
    np.testing.assert_allclose(chunked.mean[0], expected, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(chunked.count, whole.count)
    np.testing.assert_array_equal(chunked.mean, whole.mean)
    np.testing.assert_array_equal(chunked.spread, whole.spread)


def test_precision_past_float16s_range_in_the_shared_pass_warns_nothing():
    # positions above 65,504 (float16's largest finite value) become inf in float16: an infinite error,
    # reported in the result, with no RuntimeWarning of NumPy's printed on the way
    scheme = build_scheme("rope", {"dim": 8}, length=70000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result, = run_checks(scheme, ["precision"], CheckOptions(length=70000, compute_dtype="float16", dtype="float32"))
    assert result.verdict == "fail"
    assert result.figures["first_adjacent_collision"] == 2049
    assert result.figures["max_error"] == math.inf


def test_nearest_position_is_a_neighbour_from_the_distances_from_origin():
    # f(Δ) = [0, 1, 3, 0.5, 2] over L = 5: position p reaches Δ ≤ max(p, 4 − p) = 4, 3, 2, 3, 4; only
    # p = 2 (Δ ≤ 2: f(2) = 3 > f(1) = 1) has its nearest next to it; p = 0's nearest is Δ = 3 away
    assert structure.local_nearest_shift_isometric(np.array([0.0, 1.0, 3.0, 0.5, 2.0])) == (1, (0, 3))
    assert structure.local_nearest_shift_isometric(np.array([0.0, 1.0, 2.0, 3.0])) == (4, None)
    # L = 3: p = 1 reaches Δ = 1 only; p = 0 and 2 reach Δ = 2 at the same distance as Δ = 1: not strictly nearer
    assert structure.local_nearest_shift_isometric(np.array([0.0, 1.0, 1.0])) == (1, (0, 2))


@pytest.mark.parametrize(("length", "reach", "queries"), [(7, 6, [0, 2, 6]), (7, 3, [0, 2, 6]), (1, 0, [0]), (50, 10, [0, 13, 14, 49])])
def test_distance_counts_are_the_queries_with_a_key_at_each_distance(length, reach, queries):
    # the count at Δ, by hand: the queries m with a key m + Δ among 0 … L − 1
    expected = [sum(0 <= m + delta < length for m in queries) for delta in range(-reach, reach + 1)]
    assert relativity.distance_counts(np.array(queries), length, reach).tolist() == expected


def test_relativity_counts_every_query_once_per_distance():
    # L = 5 with every query: Δ = ±k is reached by the 5 − k queries whose key m + Δ is in range
    profile = score_by_distance(build_scheme("rope", {"dim": 4}, length=5), 5)
    assert profile.count.tolist() == [1, 2, 3, 4, 5, 4, 3, 2, 1]
    sampled = score_by_distance(build_scheme("rope", {"dim": 4}, length=3000), 3000, samples=20, max_distance=2999)
    queries = structure.sample_queries(3000, 20)
    assert sampled.count[sampled.at(0)] == queries.size
    assert sampled.count[sampled.at(2999)] == 1 and sampled.count[sampled.at(-2999)] == 1  # queries 0 and L − 1 only
    assert sampled.count[sampled.at(5)] == int(np.sum(queries + 5 < 3000))
