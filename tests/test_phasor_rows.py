"""Rows made from the angle addition's phasors: the float32 rows are the float64 rows rounded once, whether
a block's pairs are made in place (sinusoidal's interleaved (sin, cos): the product cast in NumPy's buffer)
or through a float64 chunk (halves, a scale, float16)."""

from __future__ import annotations

import numpy as np
import pytest

from pecli.config import build_scheme
from pecli.schemes.frequencies import ANCHOR, phasor_chunks, unit_phasors

#: Consecutive ids off the anchor grid across several anchors, and ids with gaps (the direct path).
IDS = [np.arange(3 * ANCHOR - 37, 7 * ANCHOR + 11), np.array([5, 900, 901, 70000, 3, 3])]


@pytest.mark.parametrize("ids", IDS, ids=["consecutive", "gaps"])
@pytest.mark.parametrize("params", [{"dim": 64}, {"dim": 64, "layout": "half"}, {"dim": 64, "scale": 0.5}],
                         ids=["interleaved", "half", "scaled"])
def test_float32_rows_are_the_float64_rows_rounded_once(ids, params):
    scheme = build_scheme("sinusoidal", params)
    wide = scheme.row_encoder(ids, exact=False, dtype="float64")(ids)
    narrow = scheme.row_encoder(ids, exact=False, dtype="float32")(ids)
    assert narrow.dtype == np.float32
    np.testing.assert_array_equal(narrow, wide.astype(np.float32))


@pytest.mark.parametrize("ids", IDS, ids=["consecutive", "gaps"])
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_chunks_written_into_an_array_hold_the_phasors(ids, dtype):
    # phasor_chunks(…)(start, stop, out) writes unit_phasors of those ids into out (cast once for complex64)
    inv_freq = 1.0 / 10000.0 ** (np.arange(0, 16, 2) / 16)
    chunk = phasor_chunks(ids, inv_freq, sin_first=True, exact=False)
    out = np.zeros((len(ids) - 3, inv_freq.size), dtype=dtype)
    assert chunk(2, len(ids) - 1, out) is out
    expected = unit_phasors(ids[2:-1], inv_freq, sin_first=True, exact=False)
    np.testing.assert_array_equal(out, expected.astype(dtype))


def test_only_the_angle_addition_of_consecutive_ids_holds_no_chunk():
    # What lets sinusoidal's in-place rows take larger chunks: nothing of the chunk's size is held.
    inv_freq = np.array([1.0, 0.01])
    assert phasor_chunks(IDS[0], inv_freq, exact=False).holds_chunk is False
    assert phasor_chunks(IDS[1], inv_freq, exact=False).holds_chunk is True
    assert phasor_chunks(IDS[0], inv_freq, exact=True).holds_chunk is True
