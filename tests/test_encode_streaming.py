"""``pecli encode`` in blocks: every fast path against the plain float64 computation, the streamed files,
the streamed summary against the whole-array one, and the memory estimate against the arrays counted by hand.

Sizes are small; block sizes are shrunk (monkeypatched) so that many block boundaries fall inside them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pecli.analysis import summary as summary_module
from pecli.analysis.summary import steps_are_equal, summarize
from pecli import encoding_files
from pecli.cli import encode as encode_module
from pecli.config import build_scheme, resolve
from pecli.dtypes import cast
from pecli.schemes.frequencies import ANCHOR, unit_phasors
from trig_reference import EPS, exact_cos_sin, float64_bound

SCHEMES = [
    ("sinusoidal", {"dim": 10}),
    ("sinusoidal", {"dim": 10, "layout": "half"}),
    ("rope", {"dim": 12}),
    ("rope", {"dim": 12, "layout": "interleaved"}),
    ("rope", {"dim": 12, "partial_rotary_factor": 0.5, "layout": "interleaved"}),
    ("rope", {"dim": 8, "scaling": "yarn", "factor": 4.0, "original_max_position": 256}),
    ("integer", {"dim": 3}),
    ("binary", {"bits": 12}),
    ("learned", {"dim": 5, "max_length": 3000}),
    ("alibi", {"heads": 3}),
    ("t5", {}),
    ("relative", {"dim": 3, "max_relative_position": 4}),
]
#: An odd length, a range that starts off the anchor grid, and ids with gaps (repeats, out of order).
POSITIONS = [
    np.arange(1001),
    np.arange(2 * ANCHOR + 37, 5 * ANCHOR + 2),
    np.array([0, 5, 5, 2999, 7, 1024, 255, 256, 257, 1500, 3, 2000] * 50),
]


def whole(part, rows):
    """The array a part's blocks make, put together (head by head for alibi's bias)."""
    blocks = list(part.blocks(rows))
    if len(part.shape) == 3 and blocks[0].values.ndim == 2 and len(blocks) > 1 and part.name == "bias":
        return np.stack([np.concatenate([b.values for b in blocks if b.segment == h]) for h in range(part.shape[0])])
    return np.concatenate([b.values for b in blocks]) if len(blocks) > 1 else blocks[0].values


# ============================================================================== fast paths against float64
@pytest.mark.parametrize("positions", POSITIONS, ids=["odd", "off-grid", "gaps"])
@pytest.mark.parametrize("sin_first", [False, True])
def test_angle_addition_matches_the_exact_phasors(positions, sin_first):
    inv_freq = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    exact = unit_phasors(positions, inv_freq, sin_first=sin_first, exact=True)
    fast = unit_phasors(positions, inv_freq, sin_first=sin_first, exact=False)
    # Both are within a few ulps of the float64 angle p·θ, whose own rounding is ulp(p·θ_0).
    tolerance = 8 * np.finfo(np.float64).eps * (positions.max() * inv_freq[0] + 1)
    np.testing.assert_allclose(fast.view(np.float64), exact.view(np.float64), rtol=0, atol=tolerance)
    # A position's value does not depend on the positions computed with it.
    np.testing.assert_array_equal(unit_phasors(positions[-7:], inv_freq, sin_first=sin_first, exact=False), fast[-7:])


def test_angle_addition_at_a_million_positions_stays_within_float32_resolution():
    positions = np.arange(1_000_000 - 700, 1_000_000 + 700)
    inv_freq = 500000.0 ** (-np.arange(0, 128, 2) / 128)
    fast = unit_phasors(positions, inv_freq, exact=False).view(np.float64)
    exact = unit_phasors(positions, inv_freq, exact=True).view(np.float64)
    assert np.abs(fast - exact).max() < 1e-9  # the float64 angle itself is only good to ~1e-10 here


@pytest.mark.parametrize("name,params", SCHEMES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEMES)])
@pytest.mark.parametrize("positions", POSITIONS, ids=["odd", "off-grid", "gaps"])
def test_parts_in_blocks_equal_the_whole_arrays(name, params, positions):
    scheme = build_scheme(name, params, length=3000)
    reference = scheme.arrays(positions)
    exact_parts = scheme.parts(positions, exact=True)
    assert [part.name for part in exact_parts] == list(reference)
    for part in exact_parts:  # exact: bit for bit, blocks of 7 rows (alibi: 7 query rows per head)
        assert whole(part, 7).shape == part.shape == reference[part.name].shape
        np.testing.assert_array_equal(whole(part, 7), reference[part.name])
    for part in scheme.parts(positions, exact=False):  # angle addition: a few float64 ulps
        np.testing.assert_allclose(whole(part, 300), reference[part.name], rtol=0, atol=1e-11)
    main = exact_parts[0]
    index = np.array([0, positions.size - 1, positions.size // 2, 1])
    rows = np.moveaxis(reference[scheme.main_key], 0, 1) if scheme.main_key == "bias" else reference[scheme.main_key]
    np.testing.assert_array_equal(main.rows_at(index), rows.reshape(positions.size, -1)[index])


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
def test_rope_shared_tables_give_the_cast_caches(dtype):
    # Several of encoding, cos, sin: one (L, r/2) table of each in the dtype, the parts copied from it.
    scheme = build_scheme("rope", {"dim": 16, "layout": "half"})
    positions = np.arange(3 * ANCHOR + 5)
    reference = {name: cast(array, dtype) for name, array in scheme.arrays(positions).items()}
    parts = scheme.parts(positions, exact=dtype == "float64", dtype=dtype, wanted=None)
    ulp = 0 if dtype == "float64" else float(np.finfo(np.float32).eps if dtype == "float32" else 2.0 ** -7)
    for part in parts[:3]:
        got = whole(part, 100)
        assert got.dtype == reference[part.name].dtype
        np.testing.assert_allclose(got.astype(np.float64), reference[part.name].astype(np.float64), rtol=0, atol=ulp)
    assert scheme.shared_bytes(positions.size, 4, None) == positions.size * 16 * 4
    assert scheme.shared_bytes(positions.size, 4, ["encoding"]) == 0


# ============================================================================== files and summaries
@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few hundred values, so that a small encoding crosses many block boundaries."""
    monkeypatch.setattr(encoding_files, "BLOCK_VALUES", 600)
    monkeypatch.setattr(summary_module, "VERIFY_VALUES", 64)


def encode_json(invoke, *args):
    result = invoke("encode", *args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)




CLI_CASES = [
    ("sinusoidal", ["--dim", "16"], "float32"),
    ("sinusoidal", ["--dim", "16", "--layout", "half"], "float64"),
    ("rope", ["--dim", "8"], "bfloat16"),
    ("integer", ["--dim", "2"], "float16"),  # collisions above 2048
    ("binary", [], "float64"),
    ("learned", ["--dim", "4"], "float32"),
    ("alibi", ["--heads", "3"], "float16"),
    ("t5", [], "float64"),
    ("relative", ["--dim", "2", "--max-relative-position", "3"], "float32"),
]


@pytest.mark.parametrize("name,extra,dtype", CLI_CASES, ids=[c[0] + "-" + c[2] for c in CLI_CASES])
def test_streamed_npy_and_summary_equal_the_whole_array(invoke, tmp_path, small_blocks, name, extra, dtype):
    vector = name not in ("alibi", "t5", "relative")
    positions = "1990:2600" if vector else "0:41"
    out = tmp_path / "x.npy"
    document = encode_json(invoke, "--scheme", name, *extra, "--positions", positions, "--dtype", dtype, "--out", out)
    spec = resolve({"scheme": name, "positions": positions, "dtype": dtype,
                    **{k.lstrip("-").replace("-", "_"): v for k, v in zip(extra[::2], extra[1::2])}}, encode_module.SETTINGS)
    expected = cast(spec.scheme.arrays(spec.positions)[spec.scheme.main_key], dtype)
    stored = np.load(out, mmap_mode="r")  # a streamed .npy maps like any other
    # float64 sinusoids: angle addition against the direct evaluation, each off by up to 2^-53·p·θ (p < 2600)
    atol = (2.0**-52 * 2600 + 2 * EPS if name == "sinusoidal" else 0) if dtype == "float64" else float(np.finfo(np.float32).eps) * 4
    np.testing.assert_allclose(np.asarray(stored, dtype=np.float64), expected.astype(np.float64), rtol=0, atol=atol)
    if dtype == "float64":  # the summary streamed is the summary of the values written, made whole
        expected = np.asarray(stored)
    facts = summarize(spec.scheme, spec.positions, expected).to_dict()
    for key in ("shape", "dtype", "bytes", "min", "max", "min_adjacent_pair", "adjacent_distance_constant"):
        assert document[key] == facts[key], key
    assert document["min_adjacent_distance"] == pytest.approx(facts["min_adjacent_distance"], rel=1e-12)
    if steps_are_equal(spec.scheme, spec.positions, dtype):  # reported once: every step is that one
        wide = expected.astype(np.float64)
        steps = np.linalg.norm(np.diff(wide, axis=0), axis=1)
        np.testing.assert_allclose(steps, document["min_adjacent_distance"], rtol=1e-6)
        assert document["adjacent_distance_constant"] is True
    if dtype == "float64" or name in ("integer", "binary", "t5"):  # same values, so the same collisions
        assert document["colliding_positions"] == facts["colliding_positions"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.npy"]


def test_collisions_counted_exactly_across_blocks(invoke, small_blocks):
    # integer, float16: above 2048 the spacing is 2 and above 4096 it is 4, so 2048 … 5119 take the even
    # values 2048 … 4096 (1025, 4095 rounding up to 4096) and the multiples of 4 from 4100 to 5120 (256):
    # 3072 positions, 1281 distinct values, 1791 repeats, spread over many blocks.
    document = encode_json(invoke, "--scheme", "integer", "--dim", "3", "--positions", "2048:5120", "--dtype", "float16")
    assert document["colliding_positions"] == 3072 - np.unique(np.arange(2048, 5120).astype(np.float16)).size == 1791
    # relative: every row is the table clipped alike far from the diagonal; rows differ near it, none repeat.
    document = encode_json(invoke, "--scheme", "relative", "--dim", "2", "--max-relative-position", "2", "--length", "300")
    assert document["colliding_positions"] == 0


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_rows_equal_in_value_are_counted_as_repeats(dtype):
    # Rows 0–1 differ only in the sign of a zero, rows 2–3 only in the payload of a NaN: equal in value,
    # each pair is one repeat. Row 4 swaps row 0's values, row 5 differs from row 0 in one high bit
    # (1 → 3): neither repeats anything. By hand: 2 repeated positions.
    nan_bits = {np.float16: (0x7E00, 0x7E01, np.uint16), np.float32: (0x7FC00000, 0x7FC00001, np.uint32),
                np.float64: (0x7FF8000000000000, 0x7FF8000000000001, np.uint64)}[dtype]
    quiet, other = (np.array(bits, dtype=nan_bits[2]).view(dtype) for bits in nan_bits[:2])
    rows = np.array([[0.0, 1.0], [-0.0, 1.0], [quiet, 2.0], [other, 2.0], [1.0, 0.0], [0.0, 3.0]], dtype=dtype)
    assert np.isnan(rows[2, 0]) and rows[2, 0].tobytes() != rows[3, 0].tobytes()
    summary = summary_module.StreamingSummary(len(rows), rows.shape, np.dtype(dtype).name, rows.nbytes)
    for start in range(0, len(rows), 2):  # three blocks: every pair of equal rows within a block
        summary.add(summary_module.Block(0, start, rows[start : start + 2]), rows[start : start + 2])
    facts = summary.finish(np.arange(len(rows)), lambda index: rows[index])
    assert facts.adjacency.colliding_positions == 2


def test_npz_parts_streamed_and_chosen(invoke, tmp_path, small_blocks):
    out = tmp_path / "r.npz"
    encode_json(invoke, "--scheme", "rope", "--dim", "8", "--length", "700", "--dtype", "float32", "--out", out)
    scheme = build_scheme("rope", {"dim": 8})
    reference = scheme.arrays(np.arange(700))
    with np.load(out) as archive:  # by default what a user loads: cos and sin, not the interleaved encoding
        assert archive.files == ["cos", "sin", "inv_freq", "positions", "metadata"]
        for name in ("cos", "sin"):
            assert archive[name].dtype == np.float32
            np.testing.assert_allclose(archive[name], reference[name], rtol=0, atol=2 * float(np.finfo(np.float32).eps))
        assert json.loads(str(archive["metadata"]))["dtype"] == "float32"
    only = tmp_path / "cs.npz"
    document = encode_json(invoke, "--scheme", "rope", "--dim", "8", "--length", "700", "--out", only, "--parts", "sin,encoding")
    assert document["main"] == "encoding"  # the summary still describes the main array
    with np.load(only) as archive:
        assert archive.files == ["encoding", "sin", "metadata"]
        for name in ("sin", "encoding"):  # float64 angle addition: the angles' rounding, 2^-53·p·θ each (p < 700)
            np.testing.assert_allclose(archive[name], reference[name], rtol=0, atol=2.0**-52 * 700 + 2 * EPS)


def test_parts_errors(invoke, tmp_path):
    result = invoke("encode", "--scheme", "rope", "--dim", "8", "--length", "4", "--out", tmp_path / "r.npz", "--parts", "tan")
    assert result.exit_code == 2 and "parts: 'tan' not among this scheme's parts: encoding, cos, sin" in result.stderr
    result = invoke("encode", "--scheme", "rope", "--dim", "8", "--length", "4", "--out", tmp_path / "r.npy", "--parts", "cos")
    assert result.exit_code == 2 and "give --out x.npz" in result.stderr


def test_progress_advances_over_the_blocks(small_blocks, tmp_path):
    from pecli.progress import Recorded, reporting

    recorder = Recorded()
    spec = resolve({"scheme": "sinusoidal", "dim": 8, "length": 1000}, encode_module.SETTINGS)
    with reporting(recorder):
        encode_module._encode(spec, None, 1 << 30, force=False, quiet=True)  # summarised only: the blocks
    assert recorder.events[0] == ("start", "encode", 14)  # 600 // 8 = 75 rows a block: 14 blocks
    assert recorder.events.count(("advance", 1)) == 14 and recorder.events[-1] == ("finish",)


@pytest.mark.parametrize("out,params", [("pe.npy", {"scheme": "sinusoidal", "dim": 64}),
                                        ("rope.npz", {"scheme": "rope", "dim": 64})])
def test_progress_follows_the_bytes_written(monkeypatch, tmp_path, out, params):
    # 40,000 × 64 float64 values: 19.5 MiB of values (twice for rope's cos and sin), in blocks of 1024 rows.
    from pecli.progress import Recorded, reporting

    monkeypatch.setattr(encoding_files, "BLOCK_VALUES", 1 << 16)
    recorder = Recorded()
    spec = resolve({**params, "length": 40000}, encode_module.SETTINGS)
    with reporting(recorder):
        encode_module._encode(spec, tmp_path / out, 1 << 30, force=False, quiet=True)
    mib = -(-40000 * 64 * 8 * (2 if out.endswith(".npz") else 1) // (1 << 20))
    assert recorder.events[0] == ("start", "encode MiB", mib) and recorder.events[-1] == ("finish",)
    steps = [event[1] for event in recorder.events if event[0] == "advance"]
    assert sum(steps) == mib and len(steps) >= mib // 2  # MiB by MiB as the blocks reach the file


# ============================================================================== memory
MIB = 1 << 20
#: The summary's last step where it stays under a block: finish_bytes(N) + 2^18 candidate values × 48 B.
VERIFY_ROWS = (1 << 18) * 48
#: Two chunks of 2^17 values at 16 B a value, filled on two threads (float64 angles and complex phasors).
FILL = 2 * (1 << 17) * 16


@pytest.mark.parametrize("params,out,expected", [
    # sinusoidal d = 512 float32 .npy: blocks of 2^20 / 512 = 2048 rows × 512 values, three of them in
    # float32 (made ahead, summarised, written): 12 MiB; two chunks of 2^17 values at 16 B a value being
    # filled (float64 angles and complex phasors): 4 MiB; the summary keying a block, 16 sampled columns
    # at 4 + 17 B and 16 B a row: 2048 × 352 B; the angle addition's 256 steps of the 256 pairs at 16 B:
    # 1 MiB; 8,192 positions × (4 B of key + 8 B of id): 96 KiB. The last step, 9 B × 8,192 + 24 B ×
    # 8,192 + 2^15 B + 12 MiB, is smaller.
    ({"scheme": "sinusoidal", "dim": 512, "length": 8192, "dtype": "float32"}, "pe.npy",
     13 * MIB + FILL + 2048 * 352 + 8192 * 12),
    # rope d = 128 float32 .npz: three 8,192-row blocks in float32 (12 MiB), the chunks being filled
    # (4 MiB), the summary keying a block (8,192 × 352 B), the steps (256 × 64 pairs × 16 B, counted as
    # 256 × 128 × 8 B: the encoding's width) and three blocks each of cos and sin copied from them (made
    # with the block ahead, handed over, written: 3 × 2 × 8,192 × 128 × 4 B = 24 MiB); 65,536 × 12 B of
    # keys and ids.
    ({"scheme": "rope", "dim": 128, "length": 65536, "dtype": "float32"}, "rope.npz",
     36 * MIB + FILL + 8192 * 352 + 256 * 128 * 8 + 65536 * 12),
    # rope d = 16 over 400,000 positions: three 65,536-row blocks (12 MiB), the chunks, the keying of a
    # block (65,536 × 352 B: every column is sampled) and cos, sin (24 MiB); the ids of a range past 2^18
    # are never made: 4 B of key a position.
    ({"scheme": "rope", "dim": 16, "length": 400000, "dtype": "float32"}, "rope-range.npz",
     36 * MIB + FILL + 65536 * 352 + 256 * 16 * 8 + 400000 * 4),
    # the same positions given as ids: 8 B more a position
    ({"scheme": "rope", "dim": 16, "positions": "0:400000", "dtype": "float32"}, "rope-ids.npz",
     36 * MIB + FILL + 65536 * 352 + 256 * 16 * 8 + 400000 * 12),
    # alibi, 4 heads × 2,000²: blocks of 512 query rows (2^20 / 2000 = 524, down to a multiple of 256) ×
    # 2,000 keys at 40 B a value (40,960,000 B); per position 4 B of key and 8 B of id, and 8 B a step
    # of the summed squared steps of the 4 segments (1,999 steps).
    ({"scheme": "alibi", "heads": 4, "length": 2000}, "alibi.npy", 512 * 2000 * 40 + 2000 * 12 + 1999 * 8),
])
def test_memory_estimate_is_the_arrays_counted_by_hand(params, out, expected):
    # The estimate is held to the arrays a run holds, counted by hand; how it compares with what a process
    # holds on a given machine is measured in benchmarks/bench_memory.py, not here.
    spec = resolve(params, encode_module.SETTINGS)
    assert encode_module.encode_run(spec, out.endswith(".npz")).memory == expected


def test_rope_archive_memory_is_flat_in_the_length():
    # cos and sin are copied from the encoding's blocks, the ids of --length are a range never made:
    # what grows with L is the summary's 4-byte row keys and its last step, by hand below.
    scheme = build_scheme("rope", {"dim": 128})
    mib = 1 << 20
    verify = summary_module.VERIFY_VALUES * encoding_files.VERIFY_BYTES_PER_VALUE  # 12 MiB of candidate rows
    # 2^20: three blocks of 8192 rows × 128 float64 (24 MiB), the chunks being filled (4 MiB), the
    # summary keying a block (8,192 rows × (16 columns × 25 B + 16 B)), the angle addition's steps
    # (256 × 128 × 8 B), three blocks of cos and of sin (48 MiB), which outweigh the last step (9 + 24
    # + 4 + 12 MiB: one share of keys, the scan, its table, rows); 4 B of key per position (4 MiB)
    block = 2 * (1 << 17) * 16 + 8192 * 416 + 256 * 128 * 8
    assert encoding_files.memory_needed(scheme, 1 << 20, "float64", None, ids_made=False) == (72 + 4) * mib + block
    # with the ids made (--positions), 8 B more per position
    assert encoding_files.memory_needed(scheme, 1 << 20, "float64", None) == (72 + 4 + 8) * mib + block
    # 2^22: the block still outweighs the last step (two shares of 2^21 keys, 18 MiB, the scan, 24 MiB,
    # its table of 2^24 flags, 16 MiB, the rows, and 40 B for each of the 2^22·(2^22 − 1)/2^32 rows
    # expected to share a key by chance: 70.1 MiB); 16 MiB of keys
    chance = int((1 << 22) * ((1 << 22) - 1) / 2**32 * 40)
    assert (18 + 24 + 16) * mib + verify + chance < 72 * mib + block
    assert encoding_files.memory_needed(scheme, 1 << 22, "float64", None, ids_made=False) == (72 + 16) * mib + block
    # 2^24 float32: 64 MiB of keys, eight shares of 2^21 keys, 2^16 chance candidates (2.5 MiB)
    chance = int((1 << 24) * ((1 << 24) - 1) / 2**32 * 40)
    needed = encoding_files.memory_needed(scheme, 1 << 24, "float32", None, ids_made=False)
    assert needed == (18 + 24 + 16 + 64) * mib + verify + chance < 150 * mib


def test_default_budget_streams_outputs_larger_than_memory():
    # 2^24 positions × 1024 float32 = 64 GiB on disk: pecli holds a block and O(L) numbers, about 1 GiB.
    scheme = build_scheme("sinusoidal", {"dim": 1024})
    needed = encoding_files.memory_needed(scheme, 1 << 24, "float32", ["encoding"])
    assert needed < 2 << 30 and needed < (1 << 24) * 1024 * 4 / 32


def test_interrupted_stream_leaves_nothing(tmp_path, monkeypatch):
    # A failure after some blocks were written: no target, no temporary file.
    spec = resolve({"scheme": "sinusoidal", "dim": 8, "length": 5000}, encode_module.SETTINGS)
    monkeypatch.setattr(encoding_files, "BLOCK_VALUES", 800)
    calls = {"n": 0}
    real = summary_module.StreamingSummary.add

    def failing(self, block, values):
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt
        real(self, block, values)

    monkeypatch.setattr(summary_module.StreamingSummary, "add", failing)
    with pytest.raises(KeyboardInterrupt):
        encode_module._encode(spec, tmp_path / "p.npy", 1 << 30, force=False, quiet=True)
    assert list(Path(tmp_path).iterdir()) == []


def test_an_output_larger_than_the_free_disk_is_refused_before_work(invoke, tmp_path, monkeypatch):
    import collections
    import shutil

    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(1 << 30, 1 << 30, 1000))
    result = invoke("encode", "--scheme", "sinusoidal", "--dim", "8", "--length", "100", "--out", tmp_path / "pe.npy")
    assert result.exit_code == 2
    assert "pe.npy would take about 6.2 KiB on disk" in result.stderr and "has 1000 B free" in result.stderr
    assert list(tmp_path.iterdir()) == []


# ============================================================================== the streamed archive
@pytest.mark.parametrize("params", [
    ["--scheme", "rope", "--dim", "12", "--partial-rotary-factor", "0.5"],
    ["--scheme", "rope", "--dim", "8", "--layout", "interleaved", "--dtype", "float32"],
    ["--scheme", "rope-nd", "--dim", "16", "--grid", "[20, 30]", "--prefix-tokens", "2"],
    ["--scheme", "sinusoidal", "--dim", "10", "--dtype", "float16"],
], ids=["rope-partial", "rope-interleaved-f32", "rope-nd-prefix", "sinusoidal-f16"])
def test_archive_members_equal_the_npy_path_and_the_formula(invoke, tmp_path, small_blocks, params):
    # Every member of the streamed .npz is what np.load reads back, its main array is the .npy path's
    # array, and rope's cos and sin (copied from the encoding's blocks) are cos and sin of p·θ_i.
    npz, npy = tmp_path / "x.npz", tmp_path / "x.npy"
    parts = ["--parts", "encoding,cos,sin,positions"] if "sinusoidal" not in params else []
    length = [] if "rope-nd" in params else ["--length", "1000"]
    encode_json(invoke, *params, *length, "--out", npz, *parts)
    encode_json(invoke, *params, *length, "--out", npy)
    import zipfile

    with zipfile.ZipFile(npz) as archive:
        assert archive.testzip() is None  # every member's CRC-32 as written
    with np.load(npz) as archive:
        main = np.load(npy)
        np.testing.assert_array_equal(archive["encoding"], main)
        if "sinusoidal" in params:
            return
        dtype = np.float32 if "float32" in params else np.float64
        # the ids, written here: 0 … 999, or the grid's 20 × 30 cells in row order as (row, column) rows
        positions = np.indices((20, 30)).reshape(2, -1) if "rope-nd" in params else np.arange(1000)
        np.testing.assert_array_equal(archive["positions"], positions)
        if "rope-nd" in params:  # two axes of 4 pairs each, θ_j = 10000^(−2j/8); rows of 2 prefix tokens first
            theta = 10000.0 ** (-np.arange(4) * 2 / 8)
            angles = np.concatenate([np.outer(positions[0], theta), np.outer(positions[1], theta)], axis=1)
            angles = np.concatenate([np.zeros((2, 8)), angles])
            layout_half = np.concatenate
        else:
            rotated = 6 if "12" in params else 8
            theta = 10000.0 ** (-np.arange(rotated // 2) * 2 / rotated)
            angles = np.outer(positions, theta)
            layout_half = np.concatenate if "interleaved" not in params else None
        expected_cos = (np.concatenate([np.cos(angles)] * 2, axis=1) if layout_half is not None
                        else np.repeat(np.cos(angles), 2, axis=1))
        expected_sin = (np.concatenate([np.sin(angles)] * 2, axis=1) if layout_half is not None
                        else np.repeat(np.sin(angles), 2, axis=1))
        atol = 1e-12 if dtype == np.float64 else 2 * float(np.finfo(np.float32).eps)
        assert archive["cos"].dtype == dtype
        np.testing.assert_allclose(archive["cos"], expected_cos, rtol=0, atol=atol)
        np.testing.assert_allclose(archive["sin"], expected_sin, rtol=0, atol=atol)


def test_verify_accepts_the_archive(invoke, tmp_path):
    out = tmp_path / "rope.npz"
    encode_json(invoke, "--scheme", "rope", "--dim", "64", "--base", "500000", "--length", "3000", "--dtype", "float32",
                "--out", out)
    result = invoke("verify", "--scheme", "rope", "--dim", "64", "--base", "500000",
                    "--cos", f"{out}:cos", "--sin", f"{out}:sin", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["match"] is True


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_file_and_the_library_hold_the_same_values(invoke, tmp_path, small_blocks, dtype):
    # One code path: what `pecli encode -o` writes is what pecli.encode returns, bit for bit, in every
    # dtype (positions past several anchors, given as a range and as ids; float64 members of 1.5 MB,
    # their blocks reserved before they are written).
    import pecli

    for where in (["--length", "3000"], ["--positions", "500:3500"]):
        start = 500 if "--positions" in where else 0
        encode_json(invoke, "--scheme", "rope", "--dim", "64", *where, "--dtype", dtype, "--out", tmp_path / "r.npz", "--force")
        library = pecli.encode("rope", range(start, start + 3000), dim=64, dtype=dtype)
        with np.load(tmp_path / "r.npz") as archive:
            np.testing.assert_array_equal(archive["cos"], library.cos)
            np.testing.assert_array_equal(archive["sin"], library.sin)
        encode_json(invoke, "--scheme", "sinusoidal", "--dim", "64", *where, "--dtype", dtype, "--out", tmp_path / "s.npy",
                    "--force")
        library = pecli.encode("sinusoidal", range(start, start + 3000), dim=64, dtype=dtype)
        np.testing.assert_array_equal(np.load(tmp_path / "s.npy"), library.encoding)


def test_crc32_of_pieces_combines_into_the_crc32_of_the_whole():
    # The standard check value: CRC-32 (ISO-HDLC) of "123456789" is 0xCBF43926 (Williams, "A painless guide
    # to CRC error detection algorithms", 1993), from the pieces' CRCs and the second piece's length.
    import zlib

    from pecli.io_stream import crc32_combine

    assert crc32_combine(zlib.crc32(b"12345"), zlib.crc32(b"6789"), 4) == 0xCBF43926
    assert crc32_combine(zlib.crc32(b"123456789"), zlib.crc32(b""), 0) == 0xCBF43926
    rng = np.random.default_rng(7)
    for first, second in [(0, 1), (3, 1000), (5000, 1 << 16), (1, 300_001)]:
        a, b = rng.bytes(first), rng.bytes(second)
        assert crc32_combine(zlib.crc32(a), zlib.crc32(b), len(b)) == zlib.crc32(a + b)


def test_archive_checksummed_block_by_block_reads_back(invoke, tmp_path, small_blocks, monkeypatch):
    # Every block's CRC-32 computed apart (on the checksum thread) and joined: zipfile checks each
    # member's CRC as it reads it whole.
    import zipfile

    import pecli.io_stream

    monkeypatch.setattr(pecli.io_stream, "CHECKSUM_APART", 1)
    out = tmp_path / "r.npz"
    encode_json(invoke, "--scheme", "rope", "--dim", "8", "--length", "3000", "--dtype", "float32", "--out", out,
                "--parts", "encoding,cos,sin,inv_freq,positions")
    with zipfile.ZipFile(out) as archive:
        assert archive.testzip() is None
    with np.load(out) as archive:
        np.testing.assert_array_equal(archive["positions"], np.arange(3000))


def test_members_past_4_gib_are_read_through_their_zip64_records(tmp_path, monkeypatch):
    # A member of 2^30 + 1 float32 values (4 GiB + 4 bytes, a sparse file: its values are never written,
    # nor its blocks reserved) and a small one after it, at an offset past 4 GiB: zipfile (hence np.load)
    # finds both from the ZIP64 records, the first member's .npy header declares its shape, the second
    # reads back whole.
    import os
    import zipfile

    import pecli.io_stream
    from pecli.io_stream import ZipLayout

    monkeypatch.setattr(pecli.io_stream, "PREALLOCATE_BYTES", 1 << 62)

    path = tmp_path / "big.npz"
    with open(path, "wb") as stream:
        layout = ZipLayout(stream.fileno())
        big = layout.reserve("big", (2**30 + 1,), np.float32)
        big.written = big.nbytes  # as if every block had been written: a hole of zeros, CRC left as is
        small = layout.reserve("small", (3,), np.float64)
        small.write(np.array([1.5, -2.0, 3.25]))
        layout.close()
    assert small.offset > 1 << 32 and os.path.getsize(path) > 1 << 32
    with zipfile.ZipFile(path) as archive:
        sizes = {info.filename: info.file_size for info in archive.infolist()}
        assert sizes["big.npy"] == 4 * (2**30 + 1) + len(big.header)
        with archive.open("big.npy") as member:
            assert np.lib.format.read_magic(member) == (1, 0)
            assert np.lib.format.read_array_header_1_0(member)[0] == (2**30 + 1,)
    with np.load(path) as archive:
        np.testing.assert_array_equal(archive["small"], [1.5, -2.0, 3.25])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("start", [0, (1 << 21) - 300, (1 << 24) - 600])
def test_encoded_files_stay_within_the_bound_far_out(invoke, tmp_path, dtype, start):
    """Every value ``encode`` writes against sin and cos of the exact angles p·θ_i (θ_i the float64
    frequencies), up to 2^24 (positions crossing anchors; sinusoidal d = 1024, rope d = 128), both by
    angle addition re-anchored every 256 positions: float32 within 1e-6; float64 within the bound
    :func:`~pecli.schemes.frequencies.unit_phasors` states, 2^-53·p·θ + 2^-52 (the float64 angle's own
    rounding, and a few roundings of values below 1)."""
    positions = np.arange(start, start + 600)

    def reference(dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        inv_freq = 1.0 / 10000.0 ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
        bound = np.full((600, dim // 2), 1e-6) if dtype == "float32" else float64_bound(positions, inv_freq)
        return (*exact_cos_sin(positions, inv_freq), bound)

    span = f"{start}:{start + 600}"
    encode_json(invoke, "--scheme", "sinusoidal", "--dim", "1024", "--positions", span, "--dtype", dtype,
                "--out", tmp_path / "pe.npy")
    cos, sin, bound = reference(1024)
    stored = np.load(tmp_path / "pe.npy").astype(np.float64)
    assert np.all(np.abs(stored[:, 0::2] - sin) <= bound) and np.all(np.abs(stored[:, 1::2] - cos) <= bound)
    encode_json(invoke, "--scheme", "rope", "--dim", "128", "--positions", span, "--dtype", dtype, "--out", tmp_path / "r.npz")
    cos, sin, bound = reference(128)
    with np.load(tmp_path / "r.npz") as archive:
        for name, half in (("cos", cos), ("sin", sin)):
            stored = archive[name].astype(np.float64)
            assert np.all(np.abs(stored[:, :64] - half) <= bound) and np.all(np.abs(stored[:, 64:] - half) <= bound), name
