"""``pecli.encode``'s named results and its ``dtype=`` fast path, against the formulas written out here."""

from __future__ import annotations

import numpy as np
import pytest
from trig_reference import exact_cos_sin, float64_bound

import pecli


def hf_cos_sin(positions: np.ndarray, dim: int, base: float = 10000.0) -> tuple[np.ndarray, np.ndarray]:
    """HuggingFace's default RoPE in float64: inv_freq = 1 / base^(2i/d), emb = concat(freqs, freqs)."""
    inv_freq = 1.0 / base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    freqs = np.outer(positions.astype(np.float64), inv_freq)
    emb = np.concatenate([freqs, freqs], axis=1)
    return np.cos(emb), np.sin(emb)


def within_half_a_unit_at_one(low: np.ndarray, exact: np.ndarray) -> bool:
    """Every value of ``low`` is within half a unit in the last place at 1.0 of its dtype (float32: 2^-24)
    of ``exact``: the rounding of a value of magnitude at most 1, and the float64 angles' own rounding."""
    return bool(np.all(np.abs(low.astype(np.float64) - exact) <= np.finfo(low.dtype).eps / 2))


def test_rope_gives_hf_cos_and_sin_by_name():
    positions = np.array([0, 1, 7, 4095, 70000, 1_000_003])  # not consecutive: angle addition per anchor
    result = pecli.encode("rope", positions, dim=16)
    cos, sin = hf_cos_sin(positions, 16)
    # HF's float64 angles are rounded as pecli's are, each by up to 2^-53·p·θ: 1.1e-10 at a million
    np.testing.assert_allclose(result.cos, cos, rtol=0, atol=2.0**-52 * 1_000_003 + 1e-15)
    np.testing.assert_allclose(result.sin, sin, rtol=0, atol=2.0**-52 * 1_000_003 + 1e-15)
    # against cos and sin of the exact angles p·θ_i: the bound pecli states
    inv_freq = 1.0 / 10000.0 ** (np.arange(0, 16, 2, dtype=np.float64) / 16)
    exact_cos, exact_sin = exact_cos_sin(positions, inv_freq)
    bound = float64_bound(positions, inv_freq)
    assert np.all(np.abs(result.cos[:, :8] - exact_cos) <= bound) and np.all(np.abs(result.cos[:, 8:] - exact_cos) <= bound)
    assert np.all(np.abs(result.sin[:, :8] - exact_sin) <= bound) and np.all(np.abs(result.sin[:, 8:] - exact_sin) <= bound)
    np.testing.assert_array_equal(result.positions, positions)
    assert result.inv_freq.dtype == np.float64 and result.cos.dtype == np.float64


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_rope_in_a_narrow_dtype_is_within_half_a_unit_of_the_float64_angles(dtype):
    positions = np.concatenate([np.arange(300), np.arange(1_048_000, 1_048_576)])
    result = pecli.encode("rope", positions, dim=128, dtype=dtype)
    cos, sin = hf_cos_sin(positions, 128)
    assert result.cos.dtype == np.dtype(dtype) and result.cos.shape == (positions.size, 128)
    assert within_half_a_unit_at_one(result.cos, cos) and within_half_a_unit_at_one(result.sin, sin)


def test_rope_interleaved_repeats_each_value_and_scales_both():
    # linear scaling by 2 halves θ_i; no attention scaling. Interleaved caches repeat each angle twice.
    result = pecli.encode("rope", range(5), dim=8, layout="interleaved", scaling="linear", factor=2.0)
    angles = np.outer(np.arange(5.0), 1.0 / 10000 ** (np.arange(0, 8, 2) / 8) / 2)
    np.testing.assert_allclose(result.cos[:, 0::2], np.cos(angles), atol=1e-15)
    np.testing.assert_array_equal(result.cos[:, 0::2], result.cos[:, 1::2])
    np.testing.assert_allclose(result.sin[:, 1::2], np.sin(angles), atol=1e-15)


def test_rope_encoding_and_the_old_array_are_the_rotated_reference():
    scheme = pecli.build_scheme("rope", {"dim": 8, "partial_rotary_factor": 0.5})
    result = pecli.encode(scheme, range(6))
    # half layout of r = 4 rotated components: (cos pθ_0, cos pθ_1, sin pθ_0, sin pθ_1, 0, 0, 0, 0)
    angles = np.outer(np.arange(6.0), 1.0 / 10000 ** (np.arange(0, 4, 2) / 4))
    expected = np.concatenate([np.cos(angles), np.sin(angles), np.zeros((6, 4))], axis=1)
    np.testing.assert_allclose(result.encoding, expected, atol=1e-15)
    np.testing.assert_array_equal(np.asarray(result), result.encoding)  # what encode returned before
    assert result.shape == (6, 8) and result[2, 1] == result.encoding[2, 1] and result["cos"] is result.cos
    assert list(result.as_dict()) == ["encoding", "cos", "sin", "inv_freq", "positions"]


def test_sinusoidal_table_in_float32():
    # Vaswani et al.: PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(…)
    result = pecli.encode("sinusoidal", np.arange(2000), dim=64, dtype="float32")
    angles = np.outer(np.arange(2000.0), 1.0 / 10000 ** (np.arange(0, 64, 2) / 64))
    exact = np.empty((2000, 64))
    exact[:, 0::2], exact[:, 1::2] = np.sin(angles), np.cos(angles)
    assert type(result).__name__ == "VectorEncoding" and result.encoding.dtype == np.float32
    assert within_half_a_unit_at_one(result.encoding, exact)


def test_alibi_bias_in_float32():
    # Press et al.: 8 heads, slopes 2^-1 … 2^-8; bias[h, i, j] = −m_h·|j − i|
    result = pecli.encode("alibi", range(6), heads=8, dtype="float32")
    slopes = 2.0 ** -np.arange(1, 9)
    distance = np.abs(np.arange(6)[None, :] - np.arange(6)[:, None])
    np.testing.assert_array_equal(result.bias, (-slopes[:, None, None] * distance).astype(np.float32))
    assert result.bias.dtype == np.float32 and result.bias[0, 0, 3] == -1.5
    np.testing.assert_array_equal(result.slopes, slopes.astype(np.float32))


def test_t5_buckets_stay_integers_and_relative_names_its_arrays():
    buckets = pecli.encode("t5", range(4), dtype="float32")
    assert buckets.buckets.dtype == np.int64 and buckets.buckets.shape == (4, 4)
    relative = pecli.encode("relative", range(3), dim=4, max_relative_position=1, dtype="float32")
    np.testing.assert_array_equal(relative.index, [[1, 2, 2], [0, 1, 2], [0, 0, 1]])  # clip(j − i, ±1) + 1
    assert relative.embeddings.dtype == np.float32 and relative.embeddings.shape == (3, 3, 4)


def test_a_scheme_object_wherever_a_name_is():
    rope = pecli.build_scheme("rope", {"dim": 16, "base": 10000.0})
    changed = pecli.build_scheme(rope, {"base": 500000})
    assert changed.base == 500000 and changed.dim == 16 and pecli.build_scheme(rope) == rope
    config = {"model_type": "qwen2_vl", "hidden_size": 1536, "num_attention_heads": 12, "rope_theta": 1e6,
              "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}, "max_position_embeddings": 32768}
    by_name = pecli.model_plan(config, scheme="rope")
    assert pecli.model_plan(config, scheme=rope).groups[0].options == by_name.groups[0].options


def test_a_dtype_pecli_does_not_know_is_refused():
    with pytest.raises(ValueError, match="dtype must be one of"):
        pecli.encode("rope", range(3), dim=4, dtype="int8")


def test_named_results_keep_the_conventions_of_issue_26():
    """xPos's factors, prefix tokens and real positions reach pecli.encode's named arrays (computed by hand)."""
    import pecli

    # xPos (Sun et al. 2022): ζ_i = (2i + 0.4r)/(1.4r), queries × ζ_i^((p − L//2)/B); r = 8, B = 16, L = 4
    result = pecli.encode(pecli.build_scheme("rope", {"dim": 8, "xpos": 16, "layout": "half"}, length=4), range(4))
    zeta = (2 * np.arange(4) + 0.4 * 8) / (1.4 * 8)
    factors = zeta[None, :] ** ((np.arange(4)[:, None] - 2) / 16)
    np.testing.assert_allclose(result.xpos_scale, np.concatenate([factors, factors], axis=1), rtol=1e-14)
    theta = 10000.0 ** (-np.arange(0, 8, 2) / 8)
    np.testing.assert_allclose(result.encoding[:, :4], np.cos(np.arange(4)[:, None] * theta) * factors, rtol=1e-13)
    # a cls token before a 2 × 2 grid: the identity rotation in its row of cos and sin
    grid = pecli.encode(pecli.build_scheme("rope-nd", {"dim": 8, "grid": [2, 2], "prefix_tokens": 1}), dtype="float32")
    assert grid.cos.shape == (5, 8) and grid.cos.dtype == np.float32
    assert np.all(grid.cos[0] == 1) and np.all(grid.sin[0] == 0)
    # real-valued positions, in float32 from float64 angles
    real = pecli.encode("rope", [-1.0, 0.5], dim=8, dtype="float32")
    np.testing.assert_allclose(real.cos[:, :4], np.cos(np.array([[-1.0], [0.5]]) * theta), atol=6e-8)


# ============================================================================== reused memory
@pytest.fixture
def pooled(monkeypatch):
    """Arrays of 1 KiB and more come from the buffer pool (normally 32 MiB), an empty pool to start."""
    from pecli.schemes import encoded

    monkeypatch.setattr(encoded, "POOLED_BYTES", 1024)
    encoded.BUFFERS.clear()
    yield encoded.BUFFERS
    encoded.BUFFERS.clear()


def address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def collect_until_gone(refs: list) -> None:
    """What ``refs`` (weak references) point to freed, as ``gc.collect()`` frees it: by reference counting
    already, else by a collection of the young generations (this test made it), else by a full one. A full
    collection walks every object the worker holds (0.3 s past half a million): only when needed."""
    import gc

    for generation in (1, 2):
        if all(ref() is None for ref in refs):
            return
        gc.collect(generation)
    assert all(ref() is None for ref in refs), "a dropped result outlived a full collection"


def test_a_dropped_result_lends_its_memory_to_the_next(pooled):
    import weakref

    first = pecli.encode("rope", np.arange(300), dim=16)
    where = {address(first.cos), address(first.sin)}
    refs = [weakref.ref(first), weakref.ref(first.cos), weakref.ref(first.sin)]
    del first
    collect_until_gone(refs)
    second = pecli.encode("rope", np.arange(300, 600), dim=16)
    assert {address(second.cos), address(second.sin)} == where
    cos, sin = hf_cos_sin(np.arange(300, 600), 16)  # written in full: nothing left of the first result
    np.testing.assert_allclose(second.cos, cos, atol=1e-12)
    np.testing.assert_allclose(second.sin, sin, atol=1e-12)


def test_memory_still_readable_is_never_lent(pooled):
    # A slice, a reshaped view and a buffer export of the caches outlive the result: the next results
    # must get other memory, and the values read through them stay those of positions 0 … 299.
    import weakref

    result = pecli.encode("rope", np.arange(300), dim=16)
    row, flat, exported = result.cos[5:7], result.sin.reshape(-1), memoryview(result.cos)
    refs = [weakref.ref(result)]
    del result
    collect_until_gone(refs)
    later = [pecli.encode("rope", np.arange(1000, 1300), dim=16) for _ in range(3)]
    cos, sin = hf_cos_sin(np.arange(300), 16)
    np.testing.assert_allclose(row, cos[5:7], atol=1e-12)
    np.testing.assert_allclose(flat, sin.reshape(-1), atol=1e-12)
    np.testing.assert_allclose(np.asarray(exported), cos, atol=1e-12)
    assert all(not np.shares_memory(r.cos, row) and not np.shares_memory(r.sin, flat) for r in later)


def test_reading_cos_and_sin_makes_nothing_else():
    result = pecli.encode("rope", np.arange(50), dim=8)
    assert result["cos"] is result.cos and result["sin"] is result.sin
    assert "encoding" not in vars(result)  # the interleaved encoding is made on first use only
    assert result["encoding"].shape == (50, 8) and "encoding" in vars(result)


def test_fresh_pool_memory_is_mapped_off_the_page_boundary():
    # A buffer the pool maps anew: writable, of the size asked for, its first byte BUFFER_OFFSET bytes
    # past a page boundary where the system maps memory (arrays on the boundary fill 40 % slower).
    import mmap

    from pecli.schemes import encoded

    buffer = encoded.fresh_buffer(3 << 20)
    assert buffer.nbytes == 3 << 20 and buffer.flags.writeable
    buffer[:] = 7
    assert int(buffer.sum(dtype=np.int64)) == 7 * (3 << 20)
    if hasattr(mmap, "MAP_POPULATE"):
        assert address(buffer) % mmap.PAGESIZE == encoded.BUFFER_OFFSET
