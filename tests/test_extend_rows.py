"""pecli extend's row measures, from the frequencies, against the rows themselves built here.

Each case builds the N RoPE rows a·(cos pθ_i, sin pθ_i) with NumPy in the test, then measures them the
long way: every pairwise distance for the nearest neighbours, bfloat16 rows (ml_dtypes) compared with
np.unique for the collisions.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from pecli.extend.measures import BFLOAT16_ANGLE, candidate_offsets, rope_bfloat16_collisions, rope_distinguishability


def rows(theta: np.ndarray, scale: float, n: int) -> np.ndarray:
    angles = np.arange(n, dtype=np.float64)[:, None] * theta
    out = np.empty((n, 2 * theta.size))
    out[:, 0::2], out[:, 1::2] = scale * np.cos(angles), scale * np.sin(angles)
    return out


def ladder(base: float, dim: int, divide: float = 1.0) -> np.ndarray:
    return base ** (-np.arange(0, dim, 2) / dim) / divide


CASES = [  # (θ, attention factor, N): plain ladders, position interpolation that crowds rows, a 2-pair RoPE
    (ladder(10000.0, 64), 1.0, 700),
    (ladder(10000.0, 8, 512.0), 1.0, 3000),
    (ladder(10000.0, 8, 512.0), 1.2, 3000),
    (ladder(10.0, 4), 1.0, 700),
    (ladder(2.0, 4, 200.0), 1.0, 20000),
    (ladder(10.0, 2), 1.0, 3000),
]


@pytest.mark.parametrize("theta, scale, n", CASES[:4] + CASES[5:])
def test_nearest_neighbours_as_all_pairs_give_them(theta, scale, n):
    e = rows(theta, scale, n)[: min(n, 700)]
    n = e.shape[0]
    d2 = np.sum(e * e, axis=1)[:, None] + np.sum(e * e, axis=1)[None, :] - 2 * e @ e.T
    np.fill_diagonal(d2, np.inf)
    exact = np.sqrt(np.maximum(d2, 0))
    step = float(np.linalg.norm(e[1] - e[0]))
    neighbour = np.full(n, np.inf)
    neighbour[1:] = np.minimum(neighbour[1:], np.diag(exact, -1))
    neighbour[:-1] = np.minimum(neighbour[:-1], np.diag(exact, 1))
    far = exact.copy()
    index = np.arange(n)
    far[np.abs(index[:, None] - index[None, :]) <= 1] = np.inf
    local = np.count_nonzero(neighbour < far.min(axis=1) * (1 - 1e-9))  # strictly nearer, past rounding
    measured = rope_distinguishability(theta, scale, n)
    assert measured.step == pytest.approx(step, rel=1e-9)
    assert measured.norm == pytest.approx(np.linalg.norm(e[0]), rel=1e-12)
    assert measured.local_share == pytest.approx(local / n, abs=2 / n)


@pytest.mark.parametrize("theta, scale, n", CASES)
def test_bfloat16_collisions_as_np_unique_counts_them(theta, scale, n):
    e = rows(theta, scale, n)
    low = e.astype(ml_dtypes.bfloat16).astype(np.float32)
    distinct_low = np.unique(low, axis=0).shape[0]
    distinct_exact = np.unique(e, axis=0).shape[0]
    new = (n - distinct_low) - (n - distinct_exact)
    adjacent = np.flatnonzero(np.all(low[1:] == low[:-1], axis=1) & ~np.all(e[1:] == e[:-1], axis=1))
    found = rope_bfloat16_collisions(theta, scale, n)
    assert found.exact
    assert found.count == new
    assert found.first_adjacent == (int(adjacent[0]) + 1 if adjacent.size else None)
    assert found.verdict == ("fail" if new or adjacent.size else "pass")


def test_the_screen_keeps_every_offset_where_rows_can_collide():
    """δ = 2 arcsin(2^−7 / √2): two (cos, sin) that round to one bfloat16 pair are at most √2·2^−7 apart."""
    assert BFLOAT16_ANGLE == pytest.approx(2 * math.asin(2**-7.5), rel=1e-8)
    theta, n = ladder(10.0, 2), 3000
    e = rows(theta, 1.0, n).astype(ml_dtypes.bfloat16).astype(np.float32)
    _, first, counts = np.unique(e, axis=0, return_index=True, return_counts=True)
    repeated = [i for i in range(n) if not np.isin(i, first)]
    kept = set(candidate_offsets(theta, n).tolist())
    for q in repeated[:50]:
        p = int(np.flatnonzero(np.all(e[:q] == e[q], axis=1))[0])
        assert q - p in kept
