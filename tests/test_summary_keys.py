"""The encode summary's lean state: 32-bit row keys found repeating a share at a time, steps folded as
they come, ids of a range never made — every count against one worked out by hand or by plain NumPy.

Sizes are small; block, chunk, share and scan sizes are shrunk (monkeypatched) so that every boundary
falls many times inside them.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from pecli import encoding_files
from pecli.analysis import summary as summary_module
from pecli.analysis.structure import row_hashes
from pecli.cli import encode as encode_module
from pecli.config import build_scheme, resolve
from pecli.schemes.frequencies import ANCHOR
from pecli.schemes.parts import Block


@pytest.fixture
def tiny(monkeypatch):
    """Blocks of 600 values, chunks of 512 positions, shares of 256 keys, scans of 700 keys."""
    monkeypatch.setattr(encoding_files, "BLOCK_VALUES", 600)
    monkeypatch.setattr(encoding_files, "RANGE_CHUNK", 512)
    monkeypatch.setattr(summary_module, "VERIFY_VALUES", 64)
    monkeypatch.setattr(summary_module, "SHARE_KEYS", 256)
    monkeypatch.setattr(summary_module, "SCAN_KEYS", 700)


def test_planted_repeats_counted_exactly_through_the_range_path(invoke, tiny):
    # integer, dim 3, float16, positions 0 … 5999 (a range: its ids are never made). float16 holds every
    # integer up to 2048 (2049 values). From 2049 to 4095 its spacing is 2: even p stay (2050 … 4094,
    # 1023 values), odd p tie and round to the neighbour with an even significand, a multiple of 4 — 2049
    # to 2048, 4095 to 4096 (one new value). From 4096 on the spacing is 4: p ≡ 2 (mod 4) ties to a
    # multiple of 8, so p ends on the multiples of 4 from 4096 to 6000 (5998 and 5999 → 6000): 476 new
    # values past 4096. Distinct rows: 2049 + 1024 + 476 = 3549, so 6000 − 3549 = 2451 positions repeat.
    spec = resolve({"scheme": "integer", "dim": 3, "length": 6000, "dtype": "float16"}, encode_module.SETTINGS)
    assert not encode_module.encode_run(spec, False).ids_made
    result = invoke("encode", "--scheme", "integer", "--dim", "3", "--length", "6000", "--dtype", "float16", "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["colliding_positions"] == 2451
    assert document["min_adjacent_distance"] == 0.0 and document["max"] == 6000.0
    # the same count with the ids given (an array), and as plain NumPy counts the distinct float16 values
    result = invoke("encode", "--scheme", "integer", "--dim", "3", "--positions", "0:6000", "--dtype", "float16", "--json")
    assert json.loads(result.stdout)["colliding_positions"] == 2451
    assert 6000 - np.unique(np.arange(6000).astype(np.float16)).size == 2451


def test_rows_sharing_a_key_by_chance_are_compared_in_full(monkeypatch):
    # Keys of 2 bits: most different rows share one, so nearly every row is a candidate and the count
    # rests on the comparison in full. 30 different rows, then 12 copies of rows 3, 3, 7, 29, … : 12 of
    # the 42 rows repeat an earlier one, by construction.
    monkeypatch.setattr(summary_module, "row_keys", lambda rows: (row_hashes(rows) & np.uint64(3)).astype(np.uint32))
    monkeypatch.setattr(summary_module, "SHARE_KEYS", 4)
    monkeypatch.setattr(summary_module, "SCAN_KEYS", 5)
    monkeypatch.setattr(summary_module, "VERIFY_VALUES", 9)
    rng = np.random.default_rng(7)
    distinct = rng.permutation(30 * 3).reshape(30, 3).astype(np.float32)
    copies = distinct[[3, 3, 7, 29, 0, 0, 0, 15, 16, 3, 28, 1]]
    rows = np.concatenate([distinct, copies])
    summary = summary_module.StreamingSummary(len(rows), rows.shape, "float32", rows.nbytes)
    for start in range(0, len(rows), 5):
        summary.add(Block(0, start, rows[start : start + 5]), rows[start : start + 5])
    assert summary.hashes.dtype == np.uint32 and summary.hashes.max() <= 3
    facts = summary.finish(np.arange(len(rows)), lambda index: rows[index])
    assert facts.adjacency.colliding_positions == 12


@pytest.mark.parametrize("count", [1, 2, 1000, 5000])
def test_shared_keys_are_those_plain_numpy_finds(monkeypatch, count):
    # Shares of 64 keys (16 passes at most) and scans of 300: the rows whose key repeats, grouped by key,
    # each group in row order, as np.unique's counts say.
    monkeypatch.setattr(summary_module, "SHARE_KEYS", 64)
    monkeypatch.setattr(summary_module, "SCAN_KEYS", 300)
    rng = np.random.default_rng(count)
    keys = rng.integers(0, 2**32, size=count, dtype=np.uint64).astype(np.uint32)
    if count > 10:  # planted repeats, at the ends of the key space too
        keys[rng.integers(0, count, count // 10)] = keys[rng.integers(0, count, count // 10)]
        keys[:3], keys[-2:] = 0, 2**32 - 1
    order, starts = summary_module.shared_keys(keys)
    values, counts = np.unique(keys, return_counts=True)
    repeating = values[counts > 1]
    expected = np.concatenate([np.flatnonzero(keys == value) for value in repeating]) if repeating.size else np.zeros(0)
    np.testing.assert_array_equal(order, expected)
    np.testing.assert_array_equal(keys[order[starts]], repeating)


def test_folded_steps_give_numpy_s_smallest_and_largest():
    # Steps folded block by block in any order: the smallest is np.argmin's (the first of equal ones, a
    # NaN before any number), the largest np.max's.
    rng = np.random.default_rng(3)
    for steps in (rng.integers(1, 5, 200).astype(np.float64), np.r_[3.0, 1.0, 2.0, 1.0], np.r_[2.0, np.nan, 1.0, np.nan]):
        extremes = summary_module.StepExtremes()
        cuts = sorted({0, len(steps), *rng.integers(0, len(steps), 5).tolist()})
        pieces = list(zip(cuts[:-1], cuts[1:]))
        for begin, end in reversed(pieces):
            extremes.fold(begin, steps[begin:end])
        assert extremes.at == int(np.argmin(steps))
        np.testing.assert_equal([extremes.low, extremes.high], [steps[np.argmin(steps)], np.max(steps)])


RANGED = [
    ("rope", {"dim": 12}, "float32"),
    ("rope", {"dim": 8, "scaling": "yarn", "factor": 4.0, "original_max_position": 256}, "float64"),
    ("rope", {"dim": 12, "partial_rotary_factor": 0.5, "layout": "interleaved"}, "float16"),
    ("sinusoidal", {"dim": 10}, "float32"),
    ("integer", {"dim": 3}, "float64"),
    ("binary", {"bits": 13}, "float64"),
    ("learned", {"dim": 5, "max_length": 6000}, "float32"),
]


@pytest.mark.parametrize("name,params,dtype", RANGED, ids=[f"{n}-{d}" for n, _, d in RANGED])
def test_range_parts_are_the_parts_of_the_ids(monkeypatch, name, params, dtype):
    # A range that starts off the phasors' anchor grid, in chunks of 320 positions and blocks of 64 rows:
    # every part's values and the main part's rows_at equal those of the ids made whole.
    monkeypatch.setattr(encoding_files, "RANGE_CHUNK", 320)
    scheme = build_scheme(name, params, length=6000)
    ids = range(2 * ANCHOR + 37, 2 * ANCHOR + 37 + 2000)
    assert encoding_files.ranged(scheme)

    def make(positions):
        return scheme.parts(positions, exact=dtype == "float64", dtype=dtype, wanted=[scheme.main_key])

    lazy, made = encoding_files.range_parts(ids, make), make(np.arange(ids.start, ids.stop))
    assert [p.name for p in lazy] == [p.name for p in made]
    for got, want in zip(lazy, made):
        assert got.shape == want.shape
        blocks = list(got.blocks(64))
        # one after another (the ids' member comes a chunk at a time, the others in blocks of 64 rows)
        assert [b.start for b in blocks] == np.cumsum([0] + [len(b.values) for b in blocks[:-1]]).tolist()
        np.testing.assert_array_equal(np.concatenate([b.values for b in blocks]),
                                      np.concatenate([b.values for b in want.blocks(64)]))
        if got.rows_at is not None:
            assert [b.start for b in blocks] == list(range(0, len(ids), 64))
    index = np.array([0, 1999, 320, 319, 1000, 5])
    np.testing.assert_array_equal(lazy[0].rows_at(index), made[0].rows_at(index))


def test_range_of_an_unknown_position_is_refused_before_work(invoke):
    # learned has rows for positions below max_length only: the last id of the range is checked first.
    result = invoke("encode", "--scheme", "learned", "--dim", "4", "--max-length", "300000", "--length", "300001")
    assert result.exit_code == 2
    assert "position 300000 has no row in a table of 300000" in result.stderr


@pytest.mark.parametrize("repeats", [False, True])
def test_finding_repeating_keys_shows_progress_past_a_size(monkeypatch, repeats):
    # From PROGRESS_KEYS keys on (lowered to 1000 here) the shares and the scan's chunks are a task:
    # 3000 keys in shares of 256 → 16 shares (the most), chunks of 700 → 5; 21 steps, all advanced.
    from pecli.progress import Recorded, reporting

    monkeypatch.setattr(summary_module, "PROGRESS_KEYS", 1000)
    monkeypatch.setattr(summary_module, "SHARE_KEYS", 256)
    monkeypatch.setattr(summary_module, "SCAN_KEYS", 700)
    rows = np.arange(3000, dtype=np.float64)[:, None] % (2000 if repeats else 3000)
    summary = summary_module.StreamingSummary(len(rows), rows.shape, "float64", rows.nbytes)
    summary.add(Block(0, 0, rows), rows)
    recorder = Recorded()
    with reporting(recorder):
        facts = summary.finish(np.arange(len(rows)), lambda index: rows[index])
    assert facts.adjacency.colliding_positions == (1000 if repeats else 0)  # rows 2000 … 2999 repeat 0 … 999
    assert recorder.events[0] == ("start", "collisions", 21) and recorder.events[-1] == ("finish",)
    assert sum(event[1] for event in recorder.events if event[0] == "advance") == 21
