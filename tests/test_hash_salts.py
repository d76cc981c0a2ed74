"""The row hashes' salts: SplitMix64, written out here with Python's integers, and its published outputs."""

from __future__ import annotations

import numpy as np

from pecli.analysis import structure
from pecli.analysis.summary import _repeating_keys

MASK = 2**64 - 1


def splitmix64_reference(seed: int, count: int) -> list[int]:
    """Vigna's splitmix64.c, one output at a time."""
    state, out = seed, []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        out.append(z ^ (z >> 31))
    return out


def test_splitmix64_published_outputs_for_seed_zero() -> None:
    assert [int(v) for v in structure.splitmix64(0, 4)] == [
        0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F, 0xF88BB8A8724C81EC,
    ]


def test_splitmix64_matches_its_definition() -> None:
    for seed in (0, 1, structure.SAMPLE_SEED, 2**64 - 1):
        assert [int(v) for v in structure.splitmix64(seed, 300)] == splitmix64_reference(seed, 300)


def test_salts_are_odd_splitmix64_outputs() -> None:
    salts = structure._odd_salts(37)
    assert [int(v) for v in salts] == [v | 1 for v in splitmix64_reference(structure.SAMPLE_SEED, 37)]
    assert not salts.flags.writeable


def test_repeating_keys_each_once_sorted() -> None:
    keys = np.array([7, 3, 7, 9, 3, 3, 1, 2**32 - 1, 2**32 - 1, 5], dtype=np.uint32)
    found = _repeating_keys(keys, lambda: None)
    assert found.dtype == np.uint32
    assert found.tolist() == [3, 7, 2**32 - 1]
    assert _repeating_keys(np.arange(10, dtype=np.uint32), lambda: None).size == 0


def test_distinct_anchor_ids_sorted_once() -> None:
    from pecli.schemes.frequencies import _distinct

    assert _distinct(np.array([5, -3, 5, 0, -3, 9], dtype=np.int64)).tolist() == [-3, 0, 5, 9]
    assert _distinct(np.array([4], dtype=np.int64)).tolist() == [4]


CODE = ("import runpy, sys\n"
        "sys.argv = ['pecli', *sys.argv[1:]]\n"
        "try:\n"
        "    runpy.run_module('pecli', run_name='__main__')\n"
        "except SystemExit as stop:\n"
        "    assert not stop.code, stop.code\n"
        "print(sorted(m for m in ('numpy.random', 'numpy.ma') if m in sys.modules))\n")


def test_encode_loads_neither_numpy_random_nor_numpy_ma(tmp_path):
    # float16 rope rows repeat: the summary finds repeating keys and recomputes candidate rows (ids with gaps)
    import os
    import subprocess
    import sys

    for args in (["--scheme", "sinusoidal", "--dim", "64", "--length", "5000", "--out", str(tmp_path / "s.npy")],
                 ["--scheme", "rope", "--dim", "16", "--length", "70000", "--dtype", "float16", "--out", str(tmp_path / "r.npz")]):
        result = subprocess.run([sys.executable, "-c", CODE, "encode", *args, "--quiet"], capture_output=True, text=True,
                                timeout=120, cwd=tmp_path, env=os.environ.copy())
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout
