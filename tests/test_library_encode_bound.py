"""``pecli.encode`` refuses positions past its memory bound (``max_memory``) before it holds them: an
iterator is read a chunk at a time and refused once the ids read pass the bound; an n-D scheme's own cells
are refused from their count, before they are made. The command line checks the same way."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import pecli
from pecli.memory import parse_size


def bounded_ids(limit: int):
    """0, 1, 2, … that fails the test if more than ``limit`` of them are asked for."""
    for i in itertools.count():
        if i >= limit:
            raise AssertionError(f"encode read {limit:,} ids past its memory bound")
        yield i


def test_an_endless_iterator_is_refused_before_it_is_held():
    budget = parse_size("max_memory", "1M")  # 2^20 bytes: 131,072 ids at 8 bytes each
    with pytest.raises(ValueError, match=r"^positions: an iterator of at least [\d,]+ ids needs about .* over the budget of 1\.0 MiB"):
        # the ids read stop within one chunk (65,536) of the bound: never the millions the iterator offers
        pecli.encode("rope", bounded_ids(budget // 8 + 2 * 65_536), dim=8, max_memory="1M")


def test_an_iterator_within_the_bound_is_the_same_as_its_list():
    angles = np.outer(np.arange(10), [1.0, 0.1, 0.01, 0.001])  # base 10,000, dim 8: θ_i = 10000^(−2i/8)
    got = pecli.encode("rope", iter(range(10)), dim=8)
    np.testing.assert_allclose(got.cos, np.cos(np.concatenate([angles, angles], 1)), rtol=0, atol=1e-15)
    reals = pecli.encode("rope", (x / 2 for x in range(3)), dim=8)
    assert reals.positions.tolist() == [0.0, 0.5, 1.0]
    assert pecli.encode("rope-nd", iter([(0, 0), (1, 2)]), grid=[4, 4]).cos.shape[0] == 2


def test_a_grids_cells_are_refused_before_they_are_made(monkeypatch):
    scheme = pecli.build_scheme("rope-nd", {"grid": [8192, 8192]})

    def made(self):
        raise AssertionError("the cells were made before the memory check")

    monkeypatch.setattr(type(scheme), "cells", made)
    with pytest.raises(ValueError, match=r"^positions: rope-nd at 67,108,864 positions needs about"):
        pecli.encode(scheme, max_memory="1M")
