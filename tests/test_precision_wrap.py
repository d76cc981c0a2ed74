"""Precision's phase error wraps only the values that may be a column's largest (``wrapped_max``): its
result must be the definition's, ``|remainder(t, 2π) − π|`` of every value and the largest per column,
bit for bit — the definition evaluated here in full with NumPy."""

import numpy as np
import pytest

from pecli.analysis.encoding_pass import Accumulator, lanes
from pecli.analysis.precision import wrapped_max


def wrapped_in_full(shifted: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.abs(np.remainder(shifted, 2 * np.pi) - np.pi).max(axis=0)


@pytest.mark.parametrize("seed", range(12))
def test_wrapped_max_is_the_definition_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    rows, columns = int(rng.integers(1, 600)), int(rng.integers(1, 40))
    shifted = rng.normal(size=(rows, columns)) * 10.0 ** rng.uniform(-3, 7)
    if seed % 3 == 0:  # values a hair from multiples of 2π, where the floor of t/2π may be off by one
        shifted = np.round(shifted / (2 * np.pi)) * (2 * np.pi) + rng.normal(size=shifted.shape) * 1e-9
    if seed % 4 == 0:  # a column of ties
        shifted[:, 0] = shifted[0, 0]
    if seed % 5 == 0:  # values that are not finite
        shifted[rng.integers(0, rows), rng.integers(0, columns)] = [np.nan, np.inf, -np.inf][seed % 3]
    with np.errstate(invalid="ignore"):
        assert np.array_equal(wrapped_max(shifted.copy()), wrapped_in_full(shifted), equal_nan=True)


def test_rope_phases_at_large_angles():
    # float32 rows of rope at positions near 2^22: angles up to 4e6 rad, phase errors near 1e-7
    inv_freq = 1.0 / 10000.0 ** (np.arange(0, 128, 2) / 128)
    angles = np.outer(np.arange((1 << 22) - 2048, 1 << 22, dtype=np.float64), inv_freq)
    low_cos, low_sin = (np.cos(angles).astype(np.float32).astype(np.float64),
                        np.sin(angles).astype(np.float32).astype(np.float64))
    shifted = np.arctan2(low_sin, low_cos) - angles + np.pi
    assert np.array_equal(wrapped_max(shifted.copy()), wrapped_in_full(shifted))


class Work(Accumulator):
    def __init__(self, name: str, cost: float) -> None:
        self.key, self.cost = name, cost


def test_lanes_put_the_costly_accumulators_apart_and_keep_light_work_on_one_thread():
    precision, relativity, hashes, steps = Work("precision", 8), Work("relativity", 8), Work("hashes", 1), Work("steps", 1)
    first, second = lanes([hashes, precision, steps, relativity])
    assert {precision, relativity} - set(first) and {precision, relativity} - set(second)
    assert sorted(a.key for a in first + second) == ["hashes", "precision", "relativity", "steps"]
    # precision alone with its hashes: one thread (the other would get too little to be worth it)
    assert lanes([precision, hashes]) == [[precision, hashes]]
