"""Men et al.'s base bound: B(m) = Σ_i cos(m θ_i) ≥ 0 for every m ≤ L, checked against a direct evaluation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pecli.wavelengths.base_bound import base_lower_bound
from pecli.wavelengths.bound_search import DecayScan, long_term_decay, long_term_decay_holds


def decay(base: float, dim: int, m: np.ndarray) -> np.ndarray:
    """B(m) at the positions ``m``, one cosine per (m, i): written apart from the code under test."""
    theta = base ** (-np.arange(0, dim, 2) / dim)
    angles = np.outer(m, theta)
    return np.cos(angles, out=angles).sum(axis=1)  # in place: the same numbers, no second (L, d/2) array


#: Where float32 cosines decide the sign of B(m) (:func:`passes`): farther than this from 0. Their error is
#: under 1e-4: each angle reduced to [−π, π] in float64 (off by about 1e-11 at m·θ ≤ 32768), then rounded
#: to float32 (2e-7) and its cosine taken in float32 (under 1e-7), at most 128 terms.
FLOAT32_DECIDES = 1e-3


def passes(base: float, dim: int, context: int, block: int = 4096) -> bool:
    """Whether B(m) ≥ 0 for every m = 0 … context, as :func:`decay` evaluates it in float64 for every m.

    The same verdict at a fifth of the cost: an m whose B(m) in float32 lies farther than
    :data:`FLOAT32_DECIDES` from 0 has that sign in float64 too; the others are evaluated by :func:`decay`.
    """
    theta = base ** (-np.arange(0, dim, 2) / dim)
    for start in range(0, context + 1, block):
        m = np.arange(start, min(start + block, context + 1), dtype=np.float64)
        angles = np.outer(m, theta)
        angles -= 2 * np.pi * np.rint(angles / (2 * np.pi))
        rough = np.cos(angles.astype(np.float32)).sum(axis=1, dtype=np.float64)
        if (rough < -FLOAT32_DECIDES).any():
            return False
        close = np.abs(rough) <= FLOAT32_DECIDES
        if close.any() and decay(base, dim, m[close]).min() < 0:
            return False
    return True


def two_digits(value: float) -> float:
    return float(f"{value:.2g}")


def test_long_term_decay_is_the_cosine_sum():
    # B(m) = Σ_{i<d/2} cos(m·b^(−2i/d)); for d = 4, b = 100: θ = (1, 0.1), so B(10) = cos 10 + cos 1.
    values = long_term_decay(100.0, 4, 40)
    assert values[10] == pytest.approx(math.cos(10) + math.cos(1), abs=1e-12)
    assert values[0] == pytest.approx(2.0)
    assert values.shape == (41,)


def test_hand_checkable_d4():
    # d = 4, L = 2: θ = (1, b^(−1/2)). B(1) = cos 1 + cos(b^(−1/2)) > 0 always; B(2) = cos 2 + cos(2/√b) ≥ 0
    # iff 2/√b ≤ arccos(−cos 2), i.e. b ≥ 4/arccos(−cos 2)² = 3.06929, and every larger base passes too.
    edge = 4.0 / math.acos(-math.cos(2.0)) ** 2
    bound = base_lower_bound(2, 4)
    low, high = bound.smallest_window
    assert low == pytest.approx(edge, rel=2e-6) and high is None
    assert bound.smallest_base == 3.07 == bound.every_base_above


def test_no_base_passes_at_d_2():
    # d = 2: B(m) = cos m, negative at m = 2 whatever the base.
    bound = base_lower_bound(50, 2)
    assert (bound.smallest_base, bound.smallest_window, bound.every_base_above) == (None, None, None)


def test_1k_is_the_published_4300():
    # Men et al. 2024, Table 1 (d = 128): 4.3e3 for 1K. The printed base is a short number that passes.
    bound = base_lower_bound(1024, 128)
    assert bound.smallest_base == 4300.0
    assert passes(4300.0, 128, 1024)


def test_4k_window_holds_the_published_2_7e4():
    # Table 1: 2.7e4 for 4K. Only a narrow window around 26,96x passes; 27,000 itself fails.
    bound = base_lower_bound(4096, 128)
    low, high = bound.smallest_window
    assert 26_950 < low < 26_960 < high < 26_980
    assert two_digits(bound.smallest_base) == 2.7e4 and low <= bound.smallest_base <= high
    assert passes((low + high) / 2, 128, 4096) and passes(bound.smallest_base, 128, 4096)
    assert not passes(low * (1 - 1e-4), 128, 4096)
    assert not passes(high * (1 + 1e-4), 128, 4096)
    assert not passes(27_000.0, 128, 4096)


def test_32k_smallest_window_and_the_robust_figure():
    # Table 1 gives 6.4e5 for 32K, yet 640,000 fails (B(m) < 0 for some m ≤ 32768); the lowest window found
    # is at 6.30e5, within the table's 2 %. The robust figure lies above every failure found.
    bound = base_lower_bound(32768, 128)
    low, high = bound.smallest_window
    assert bound.smallest_base == pytest.approx(6.4e5, rel=0.02)
    assert passes((low + high) / 2, 128, 32768)
    assert not passes(low * (1 - 1e-4), 128, 32768) and not passes(high * (1 + 1e-4), 128, 32768)
    assert not passes(640_000.0, 128, 32768)
    assert bound.every_base_above > 640_000
    for factor in (1.0, 1.003, 1.1, 2.0):
        assert passes(bound.every_base_above * factor, 128, 32768)


def test_every_base_above_passes_on_a_sample():
    bound = base_lower_bound(4096, 128)
    assert bound.every_base_above > 40_000  # 40,000 fails for 4K
    assert not passes(40_000.0, 128, 4096)
    for base in np.geomspace(bound.every_base_above, bound.checked_up_to, 7):
        assert passes(base, 128, 4096)


def test_holds_agrees_with_direct_evaluation_across_windows():
    # One scanner for all bases, so the witness offsets of earlier failures are used on later bases.
    scan = DecayScan(128, 4096)
    for base in np.geomspace(2.6e4, 4.2e4, 60):
        assert scan.holds(base) == passes(base, 128, 4096), base
    assert long_term_decay_holds(26_960.0, 128, 4096) and not long_term_decay_holds(27_000.0, 128, 4096)


def test_holds_many_agrees_with_direct_evaluation_across_windows():
    # Bases settled together, in batches smaller than the list (and a repeated base): each verdict is the
    # direct one; the windows near 2.7e4 pass and fail in turn.
    scan = DecayScan(128, 4096)
    scan.BATCH_VALUES = 7 * scan.block * scan.starts.size
    bases = [*np.geomspace(2.6e4, 4.2e4, 40), 26_960.0, 27_000.0, 26_960.0]
    expected = [passes(base, 128, 4096) for base in bases]
    assert scan.holds_many(bases) == expected
    assert True in expected and False in expected


def test_as_dict_keeps_the_keys_and_adds_the_window():
    document = base_lower_bound(1024, 128).as_dict()
    assert {"context", "dim", "smallest_base", "every_base_above", "steps_per_decade", "checked_up_to"} <= set(document)
    assert document["smallest_window"][0] <= document["smallest_base"] <= document["smallest_window"][1]


@pytest.mark.parametrize("context", [4096, 32768])
def test_what_is_said_above_the_smallest_window_is_true_of_the_bases(context):
    # The wording once called the smallest window isolated; at 32K bases 631,100–633,300 pass just above
    # it. What is said now — the window's bases pass, the named base above it fails, the next named one
    # passes — is checked here by the direct evaluation, over the window every 1/50 of its width.
    bound = base_lower_bound(context, 128)
    low, high = bound.smallest_window
    assert all(passes(base, 128, context) for base in np.linspace(low, high, 51))
    assert bound.failing_above_window is not None and not passes(bound.failing_above_window, 128, context)
    assert bound.next_passing is not None and passes(bound.next_passing, 128, context)
    assert high < bound.failing_above_window < bound.next_passing < bound.every_base_above
