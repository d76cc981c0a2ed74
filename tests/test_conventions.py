"""The same numbers as the libraries people build with (issue 26): one recipe per library function.

Each test recomputes what the library function computes, in NumPy, following its source step by step in
the dtype it uses (float32 for torch code and for MAE's NumPy), and compares with what the pecli command of
the Recipes page (docs/recipes.md) writes. Tables are compared to float32 precision: a float32 angle ``p·θ`` is off by up
to ``|p·θ|·2⁻²⁴`` and its sine by as much again (:func:`assert_float32`); frequencies and ALiBi slopes to
1e-6 relative.

The conventions, and whether pecli could express them before issue 26:

====  ===================================================================  =====================
 #    library function                                                     before issue 26
====  ===================================================================  =====================
 1    MAE get_2d_sincos_pos_embed(D, G)                                     only by swapping positions
 2    MAE get_2d_sincos_pos_embed(D, G, cls_token=True)                     no (no prefix rows)
 3    MAE get_1d_sincos_pos_embed_from_grid(D, pos)                         integers only
 4    timm build_sincos2d_pos_embed(feat_shape, dim)                        no (column order)
 5    timm build_sincos2d_pos_embed(..., interleave_sin_cos=True)           yes
 6    timm build_sincos2d_pos_embed(..., reverse_coord=True)                no (column order)
 7    timm build_rotary_pos_embed(..., grid_indexing='xy')                  no (no xy indexing)
 8    timm RotaryEmbeddingCat(in_pixels=False): EVA-02, its cls token       table yes, cls token no
 9    EVA-02 with ref_feat_shape (grid 7 → 8)                               no (no factor < 1)
 10   timm RotaryEmbeddingCat(in_pixels=True) (pixel bands, [−1, 1])        no
 11   rotary-embedding-torch RotaryEmbedding(freqs_for='lang'), partial     yes
 12   rotary-embedding-torch freqs_for='pixel'                               no
 13   rotary-embedding-torch get_axial_freqs, 'lang'                        yes
 14   rotary-embedding-torch get_axial_freqs, 'pixel'                       no
 15   rotary-embedding-torch use_xpos=True (rotate_queries_and_keys)        no
 16   rotary-embedding-torch interpolate_factor                             yes
 17   x-transformers RotaryEmbedding, partial rotary_emb_dim                yes
 18   x-transformers RotaryEmbedding(use_xpos=True)                         no
 19   x-transformers ScaledSinusoidalEmbedding                              no (no scale)
 20   x-transformers AlibiPositionalBias (8 and 12 heads)                   yes
 21   torchtune RotaryPositionalEmbeddings                                  yes
 22   torchtune Llama3ScaledRoPE (llama3_1 RotaryPositionalEmbeddings)     yes
====  ===================================================================  =====================
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

F32 = np.float32
EPS32 = 2.0**-24


# -- helpers ------------------------------------------------------------------------------------------------
def assert_float32(actual: np.ndarray, expected: np.ndarray, reach: float = 1.0, scale: float = 1.0) -> None:
    """``actual`` (pecli, float64) equals ``expected`` (a float32 computation) within float32 rounding:
    angles up to ``reach`` radians, values up to ``scale`` in magnitude."""
    actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape
    tol = 8 * EPS32 * (1.0 + reach) * scale
    np.testing.assert_allclose(actual, expected, rtol=0, atol=tol)


def assert_frequencies(actual: np.ndarray, expected: np.ndarray) -> None:
    np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64), rtol=1e-6, atol=0)


@pytest.fixture
def encode(run_main, tmp_path):
    """``encode("--preset", "mae", ...)`` → the arrays ``pecli encode … --out x.npz`` wrote."""
    counter = iter(range(1000))

    def _encode(*args: object) -> dict[str, np.ndarray]:
        out = tmp_path / f"out{next(counter)}.npz"
        result = run_main("encode", *map(str, args), "--out", str(out), "--quiet")
        assert result.returncode == 0, result.stderr
        with np.load(out) as archive:
            return {name: archive[name] for name in archive.files if name != "metadata"}

    return _encode


@pytest.fixture
def save(tmp_path):
    """``save("q", array)`` → the path of ``array`` written as an .npy file."""

    def _save(name: str, array: np.ndarray) -> Path:
        path = tmp_path / f"{name}.npy"
        np.save(path, array)
        return path

    return _save


def interleaved_rotation(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """``x·cos + rotate_half(x)·sin`` with the interleaved ``rotate_half`` of rotary-embedding-torch,
    x-transformers and timm's ``rot``: (x0, x1) → (−x1, x0)."""
    pairs = x.reshape(*x.shape[:-1], -1, 2)
    rotated = np.stack([-pairs[..., 1], pairs[..., 0]], axis=-1).reshape(x.shape)
    return x * cos + rotated * sin


# -- MAE (facebookresearch/mae, util/pos_embed.py) ------------------------------------------------------------
def mae_1d(embed_dim: int, pos: np.ndarray) -> np.ndarray:
    omega = np.arange(embed_dim // 2, dtype=np.float32)
    omega /= embed_dim / 2.0
    omega = 1.0 / 10000**omega
    out = np.einsum("m,d->md", pos.reshape(-1), omega)
    return np.concatenate([np.sin(out), np.cos(out)], axis=1)


def mae_2d(embed_dim: int, grid_size: int, cls_token: bool = False) -> np.ndarray:
    grid_h = np.arange(grid_size, dtype=np.float32)
    grid_w = np.arange(grid_size, dtype=np.float32)
    grid = np.stack(np.meshgrid(grid_w, grid_h), axis=0).reshape([2, 1, grid_size, grid_size])  # w goes first
    emb = np.concatenate([mae_1d(embed_dim // 2, grid[0]), mae_1d(embed_dim // 2, grid[1])], axis=1)
    if cls_token:
        emb = np.concatenate([np.zeros([1, embed_dim]), emb], axis=0)
    return emb


def test_mae_2d_sincos(encode):  # 1
    table = encode("--preset", "mae", "--dim", 64, "--grid", "6x6", "--prefix-tokens", 0)["encoding"]
    assert_float32(table, mae_2d(64, 6), reach=5)


def test_mae_2d_sincos_cls_token(encode):  # 2
    table = encode("--preset", "mae", "--dim", 64, "--grid", "6x6")["encoding"]
    assert table.shape == (37, 64)
    assert_float32(table, mae_2d(64, 6, cls_token=True), reach=5)


def test_mae_1d_sincos_at_real_positions(encode, save):  # 3
    pos = np.array([0.0, 1.5, 3.0, 7.25, 40.0], dtype=np.float32)
    table = encode("--scheme", "sinusoidal", "--layout", "half", "--dim", 32, "--positions", save("pos", pos))["encoding"]
    assert_float32(table, mae_1d(32, pos), reach=40)


# -- timm (layers/pos_embed_sincos.py) --------------------------------------------------------------------------
def timm_freq_bands(num_bands: int, temperature: float = 10000.0) -> np.ndarray:
    exp = np.arange(0, num_bands, 1).astype(np.float32) / num_bands  # step=1
    return 1.0 / (temperature**exp)


def timm_sincos2d(feat_shape, dim, reverse_coord=False, interleave_sin_cos=False) -> np.ndarray:
    bands = timm_freq_bands(dim // 4)
    if reverse_coord:
        feat_shape = feat_shape[::-1]
    axes = [np.arange(s).astype(np.float32) for s in feat_shape]
    grid = np.stack(np.meshgrid(*axes, indexing="ij")).reshape(len(feat_shape), -1).T  # ndgrid, flatten(1), transpose
    pos2 = grid[:, :, None] * bands[None, :]
    stack_dim = 2 if interleave_sin_cos else 1
    return np.stack([np.sin(pos2), np.cos(pos2)], axis=stack_dim).reshape(grid.shape[0], -1)


def test_timm_build_sincos2d_default(encode):  # 4
    table = encode("--preset", "timm-sincos", "--dim", 32, "--grid", "4x6")["encoding"]  # [sin h|sin w|cos h|cos w]
    assert_float32(table, timm_sincos2d([4, 6], 32), reach=5)


def test_timm_build_sincos2d_interleave_sin_cos(encode):  # 5
    table = encode("--scheme", "sinusoidal-nd", "--layout", "half", "--dim", 32, "--grid", "4x6")["encoding"]
    assert_float32(table, timm_sincos2d([4, 6], 32, interleave_sin_cos=True), reach=5)


def test_timm_build_sincos2d_reverse_coord(encode):  # 6
    table = encode("--preset", "timm-sincos", "--dim", 32, "--grid", "6x4")["encoding"]
    assert_float32(table, timm_sincos2d([4, 6], 32, reverse_coord=True), reach=5)


def timm_pixel_bands(num_bands: int, max_freq: float = 224.0) -> np.ndarray:
    bands = 2 ** np.linspace(0, math.log(max_freq, 2) - 1, num_bands, dtype=np.float32)  # linear_bands=False
    return (bands * np.float32(np.pi)).astype(np.float32)


def timm_rotary(feat_shape, dim, *, in_pixels=False, ref_feat_shape=None, grid_indexing="ij"):
    """timm build_rotary_pos_embed → (sin, cos), each (H·W, dim), after build_fourier_pos_embed."""
    bands = timm_pixel_bands(dim // 4) if in_pixels else timm_freq_bands(dim // 4)
    count = int(np.prod(feat_shape))
    if grid_indexing == "xy":  # swap_shape_xy
        feat_shape = [feat_shape[1], feat_shape[0]]
        ref_feat_shape = None if ref_feat_shape is None else [ref_feat_shape[1], ref_feat_shape[0]]
    if in_pixels:
        t = [np.linspace(-1.0, 1.0, s, dtype=np.float32) for s in feat_shape]
    else:
        t = [np.arange(s).astype(np.float32) for s in feat_shape]
    if ref_feat_shape is not None:
        t = [x / np.float32(f) * np.float32(r) for x, f, r in zip(t, feat_shape, ref_feat_shape)]
    grid = np.stack(np.meshgrid(*t, indexing=grid_indexing), axis=-1)[..., None]
    pos = grid * bands
    sin = np.sin(pos).reshape(count, -1).repeat(2, axis=-1)
    cos = np.cos(pos).reshape(count, -1).repeat(2, axis=-1)
    return sin, cos


def test_timm_rotary_xy_indexing(encode):  # 7: the example, feat_shape [6, 10] with 'xy'
    arrays = encode("--scheme", "rope-nd", "--layout", "interleaved", "--dim", 16, "--grid", "10x6", "--indexing", "xy")
    sin, cos = timm_rotary([6, 10], 16, grid_indexing="xy")
    assert_float32(arrays["sin"], sin, reach=9)
    assert_float32(arrays["cos"], cos, reach=9)
    assert arrays["positions"][:, 1].tolist() == [1, 0]  # (x, y): the second token is one column to the right


def test_eva02_table_and_cls_token(encode, save):  # 8
    rng = np.random.default_rng(0)
    q = rng.standard_normal((2, 37, 32)).astype(np.float32)  # (heads, 1 cls + 6·6 patches, head dim)
    arrays = encode("--preset", "eva02", "--dim", 32, "--grid", "6x6")
    sin, cos = timm_rotary([6, 6], 32)
    assert_float32(arrays["sin"][1:], sin, reach=5)
    assert_float32(arrays["cos"][1:], cos, reach=5)
    assert arrays["cos"][0].tolist() == [1.0] * 32 and arrays["sin"][0].tolist() == [0.0] * 32
    # timm's eva.py: the rope turns q[:, npt:] (apply_rot_embed_cat), the cls token stays as it is
    expected = np.concatenate([q[:, :1], interleaved_rotation(q[:, 1:], cos, sin)], axis=1)
    result = encode("--preset", "eva02", "--dim", 32, "--grid", "6x6", "--apply", save("q", q))["result"]
    assert_float32(result, expected, reach=5, scale=float(np.abs(q).max()) * 2)


def test_eva02_ref_feat_shape(encode):  # 9: a 7 x 7 grid on the 8 x 8 of pre-training: F = 7/8
    arrays = encode("--preset", "eva02", "--dim", 32, "--grid", "7x7", "--scaling", "linear", "--factor", 0.875)
    sin, cos = timm_rotary([7, 7], 32, ref_feat_shape=[8, 8])
    assert_float32(arrays["sin"][1:], sin, reach=7)
    assert_float32(arrays["cos"][1:], cos, reach=7)


def test_timm_rotary_in_pixels(encode, save):  # 10: RotaryEmbeddingCat's default, pixel bands on [-1, 1]
    bands = timm_pixel_bands(8)
    h, w = np.linspace(-1, 1, 4, dtype=np.float32), np.linspace(-1, 1, 6, dtype=np.float32)
    cells = np.stack(np.meshgrid(h, w, indexing="ij"), axis=-1).reshape(-1, 2)
    arrays = encode("--scheme", "rope-nd", "--layout", "interleaved", "--dim", 32, "--grid", "4x6",
                    "--inv-freq", save("bands", bands), "--positions", save("cells", cells))
    sin, cos = timm_rotary([4, 6], 32, in_pixels=True)
    assert_frequencies(arrays["inv_freq"], np.tile(bands, 2))
    assert_float32(arrays["sin"], sin, reach=352)
    assert_float32(arrays["cos"], cos, reach=352)


# -- rotary-embedding-torch (lucidrains, rotary_embedding_torch.py) -----------------------------------------------
def ret_freqs(dim: int, freqs_for: str = "lang", theta: float = 10000.0, max_freq: float = 10.0) -> np.ndarray:
    if freqs_for == "lang":
        return (1.0 / (theta ** (np.arange(0, dim, 2)[: dim // 2].astype(np.float32) / dim))).astype(np.float32)
    return (np.linspace(1.0, max_freq / 2, dim // 2, dtype=np.float32) * np.float32(np.pi)).astype(np.float32)


def ret_forward(t: np.ndarray, freqs: np.ndarray) -> np.ndarray:
    """RotaryEmbedding.forward: ``einsum('..., f -> ... f')``, then each frequency twice, ``(n r)``."""
    return np.einsum("...,f->...f", t.astype(np.float32), freqs).repeat(2, axis=-1)


def ret_apply(freqs: np.ndarray, t: np.ndarray, scale=1.0) -> np.ndarray:
    """apply_rotary_emb: the first ``rot_dim`` components turn, the rest pass through."""
    rot = freqs.shape[-1]
    middle = interleaved_rotation(t[..., :rot], np.cos(freqs) * scale, np.sin(freqs) * scale)
    return np.concatenate([middle, t[..., rot:]], axis=-1)


def test_rotary_embedding_torch_lang_partial(encode, save):  # 11: RotaryEmbedding(16) on heads of 32
    q = np.random.default_rng(1).standard_normal((12, 32)).astype(np.float32)
    result = encode("--scheme", "rope", "--layout", "interleaved", "--dim", 32, "--partial-rotary-factor", 0.5,
                    "--length", 12, "--apply", save("q", q))["result"]
    expected = ret_apply(ret_forward(np.arange(12), ret_freqs(16)), q)
    assert_float32(result, expected, reach=11, scale=8)


def test_rotary_embedding_torch_pixel(encode, save):  # 12
    freqs = ret_freqs(16, "pixel")
    t = np.linspace(-1, 1, 9, dtype=np.float32)
    arrays = encode("--scheme", "rope", "--layout", "interleaved", "--dim", 16, "--inv-freq", save("f", freqs),
                    "--positions", save("t", t))
    angles = ret_forward(t, freqs)
    assert_frequencies(arrays["inv_freq"], freqs)
    assert_float32(arrays["cos"], np.cos(angles), reach=16)
    assert_float32(arrays["sin"], np.sin(angles), reach=16)


def ret_axial(freqs: np.ndarray, dims: tuple[int, int], pixel: bool) -> np.ndarray:
    """get_axial_freqs(*dims): each axis's frequencies broadcast over the grid, concatenated."""
    parts = []
    for index, size in enumerate(dims):
        pos = np.linspace(-1, 1, size, dtype=np.float32) if pixel else np.arange(size)
        axis = ret_forward(pos, freqs)
        shape = [1] * len(dims) + [axis.shape[-1]]
        shape[index] = size
        parts.append(np.broadcast_to(axis.reshape(shape), (*dims, axis.shape[-1])))
    return np.concatenate(parts, axis=-1).reshape(-1, 2 * parts[0].shape[-1])


def test_rotary_embedding_torch_axial_lang(encode):  # 13
    arrays = encode("--scheme", "rope-nd", "--layout", "interleaved", "--dim", 32, "--grid", "4x6")
    angles = ret_axial(ret_freqs(16), (4, 6), pixel=False)
    assert_float32(arrays["cos"], np.cos(angles), reach=5)
    assert_float32(arrays["sin"], np.sin(angles), reach=5)


def test_rotary_embedding_torch_axial_pixel(encode, save):  # 14
    freqs = ret_freqs(16, "pixel", max_freq=224)
    h, w = np.linspace(-1, 1, 4, dtype=np.float32), np.linspace(-1, 1, 6, dtype=np.float32)
    cells = np.stack(np.meshgrid(h, w, indexing="ij"), axis=-1).reshape(-1, 2)
    arrays = encode("--scheme", "rope-nd", "--layout", "interleaved", "--dim", 32, "--grid", "4x6",
                    "--inv-freq", save("f", freqs), "--positions", save("cells", cells))
    angles = ret_axial(freqs, (4, 6), pixel=True)
    assert_float32(arrays["cos"], np.cos(angles), reach=352)
    assert_float32(arrays["sin"], np.sin(angles), reach=352)


def xpos_zeta(dim: int) -> np.ndarray:
    return ((np.arange(0, dim, 2) + 0.4 * dim) / (1.4 * dim)).astype(np.float32)


def test_rotary_embedding_torch_xpos(encode, save):  # 15: rotate_queries_and_keys
    rng = np.random.default_rng(2)
    q, k = (rng.standard_normal((10, 16)).astype(np.float32) for _ in range(2))
    seq = np.arange(10, dtype=np.float32)
    freqs = ret_forward(seq, ret_freqs(16))
    power = (seq - len(seq) // 2) / 512  # get_scale
    scale = (xpos_zeta(16)[None, :] ** power[:, None]).repeat(2, axis=-1)
    common = ("--scheme", "rope", "--layout", "interleaved", "--dim", 16, "--xpos", 512, "--length", 10)
    arrays = encode(*common)
    assert_float32(arrays["xpos_scale"], scale, reach=1, scale=2)
    queries = encode(*common, "--apply", save("q", q))["result"]
    keys = encode(*common, "--apply", save("k", k), "--as-keys")["result"]
    assert_float32(queries, ret_apply(freqs, q, scale), reach=9, scale=12)
    assert_float32(keys, ret_apply(freqs, k, scale**-1.0), reach=9, scale=12)


def test_rotary_embedding_torch_interpolate_factor(encode):  # 16: positions / 2
    arrays = encode("--scheme", "rope", "--layout", "interleaved", "--dim", 16, "--scaling", "linear", "--factor", 2,
                    "--length", 20)
    angles = ret_forward(np.arange(20, dtype=np.float32) / 2, ret_freqs(16))
    assert_float32(arrays["cos"], np.cos(angles), reach=10)
    assert_float32(arrays["sin"], np.sin(angles), reach=10)


# -- x-transformers (lucidrains, x_transformers.py) --------------------------------------------------------------
def xt_rotary(t: np.ndarray, dim: int, xpos_scale_base: float | None = None):
    """RotaryEmbedding(dim).forward(t) → (freqs, scale), both (n, dim), interleaved."""
    inv_freq = (1.0 / (10000 ** (np.arange(0, dim, 2).astype(np.float32) / dim))).astype(np.float32)
    freqs = np.einsum("i,j->ij", t.astype(np.float32), inv_freq).repeat(2, axis=-1)
    if xpos_scale_base is None:
        return freqs, 1.0
    max_pos = t.max() + 1
    power = ((t - (max_pos // 2)) / xpos_scale_base).astype(np.float32)
    return freqs, (xpos_zeta(dim)[None, :] ** power[:, None]).repeat(2, axis=-1)


def test_x_transformers_rotary_partial(encode, save):  # 17: rotary_emb_dim 32 of a 64-wide head
    q = np.random.default_rng(3).standard_normal((16, 64)).astype(np.float32)
    freqs, _ = xt_rotary(np.arange(16), 32)
    result = encode("--scheme", "rope", "--layout", "interleaved", "--dim", 64, "--partial-rotary-factor", 0.5,
                    "--length", 16, "--apply", save("q", q))["result"]
    assert_float32(result, ret_apply(freqs, q), reach=15, scale=8)


def test_x_transformers_xpos(encode, save):  # 18: positions 3 … 12, so L = t.max() + 1 = 13
    rng = np.random.default_rng(4)
    q, k = (rng.standard_normal((10, 32)).astype(np.float32) for _ in range(2))
    t = np.arange(3, 13)
    freqs, scale = xt_rotary(t, 32, xpos_scale_base=64)
    common = ("--scheme", "rope", "--layout", "interleaved", "--dim", 32, "--xpos", 64, "--positions", "3:13")
    assert_float32(encode(*common, "--apply", save("q", q))["result"], ret_apply(freqs, q, scale), reach=12, scale=12)
    keys = encode(*common, "--apply", save("k", k), "--as-keys")["result"]
    assert_float32(keys, ret_apply(freqs, k, scale**-1.0), reach=12, scale=12)


def test_x_transformers_scaled_sinusoidal(encode):  # 19
    dim = 32
    inv_freq = (10000 ** -(np.arange(dim // 2).astype(np.float32) / (dim // 2))).astype(np.float32)
    emb = np.einsum("i,j->ij", np.arange(24, dtype=np.float32), inv_freq)
    expected = np.concatenate([np.sin(emb), np.cos(emb)], axis=-1) * np.float32(dim**-0.5)
    table = encode("--scheme", "sinusoidal", "--layout", "half", "--dim", dim, "--scale", dim**-0.5, "--length", 24)
    assert_float32(table["encoding"], expected, reach=23, scale=dim**-0.5)


def xt_alibi_slopes(heads: int) -> np.ndarray:
    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(heads).is_integer():
        return np.array(power_of_2(heads), dtype=np.float32)
    closest = 2 ** math.floor(math.log2(heads))
    return np.array(power_of_2(closest) + power_of_2(2 * closest)[0::2][: heads - closest], dtype=np.float32)


@pytest.mark.parametrize("heads", [8, 12])
def test_x_transformers_alibi(encode, heads):  # 20
    arrays = encode("--scheme", "alibi", "--heads", heads, "--length", 6)
    slopes = xt_alibi_slopes(heads)
    assert_frequencies(arrays["slopes"], slopes)
    positions = np.arange(6)
    expected = -np.abs(positions[None, :] - positions[:, None])[None] * slopes[:, None, None]  # −|j − i|·slope
    np.testing.assert_allclose(arrays["bias"], expected, rtol=1e-6, atol=0)


# -- torchtune (modules/position_embeddings.py, models/llama3_1/_position_embeddings.py) ---------------------------
def torchtune_theta(dim: int, base: float) -> np.ndarray:
    return (1.0 / (base ** (np.arange(0, dim, 2)[: dim // 2].astype(np.float32) / dim))).astype(np.float32)


def torchtune_apply(x: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """forward: pairs (x[2i], x[2i+1]) turned by the cache of ``seq_idx · theta``."""
    angles = np.einsum("i,j->ij", np.arange(x.shape[0], dtype=np.float32), theta)
    cos, sin = np.cos(angles), np.sin(angles)
    pairs = x.reshape(x.shape[0], -1, 2)
    out = np.stack([pairs[..., 0] * cos - pairs[..., 1] * sin, pairs[..., 1] * cos + pairs[..., 0] * sin], axis=-1)
    return out.reshape(x.shape)


def test_torchtune_rope(encode, save):  # 21
    x = np.random.default_rng(5).standard_normal((20, 32)).astype(np.float32)
    result = encode("--scheme", "rope", "--layout", "interleaved", "--dim", 32, "--length", 20, "--apply", save("x", x))["result"]
    assert_float32(result, torchtune_apply(x, torchtune_theta(32, 10000)), reach=19, scale=8)


def torchtune_llama3_scaling(freqs: np.ndarray) -> np.ndarray:
    scale_factor, low_freq_factor, high_freq_factor, old_context_len = 8, 1, 4, 8192
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    new_freqs = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < high_freq_wavelen:
            new_freqs.append(freq)
        elif wavelen > low_freq_wavelen:
            new_freqs.append(freq / scale_factor)
        else:
            smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            new_freqs.append((1 - smooth) * freq / scale_factor + smooth * freq)
    return np.array(new_freqs, dtype=np.float32)


def test_torchtune_llama3_scaled_rope(encode, save):  # 22
    theta = torchtune_llama3_scaling(torchtune_theta(128, 500000))
    x = np.random.default_rng(6).standard_normal((16, 128)).astype(np.float32)
    common = ("--scheme", "rope", "--layout", "interleaved", "--dim", 128, "--base", 500000, "--scaling", "llama3",
              "--factor", 8, "--low-freq-factor", 1, "--high-freq-factor", 4, "--original-max-position", 8192)
    assert_frequencies(encode(*common, "--length", 4)["inv_freq"], theta)
    result = encode(*common, "--length", 16, "--apply", save("x", x))["result"]
    assert_float32(result, torchtune_apply(x, theta), reach=15, scale=8)


# -- what the new options refuse -----------------------------------------------------------------------------------
BAD = [
    (["--scheme", "sinusoidal", "--xpos", "512"], "xpos"),
    (["--scheme", "rope", "--prefix-tokens", "1"], "prefix_tokens"),
    (["--scheme", "rope", "--dim", "8", "--inv-freq", "1,0.5,0.25"], "inv_freq"),
    (["--scheme", "rope-nd", "--dim", "8", "--inv-freq", "1,0.5,0.25"], "inv_freq"),
    (["--scheme", "rope", "--dim", "4", "--inv-freq", "1,nan"], "inv_freq"),
    (["--scheme", "rope", "--dim", "4", "--inv-freq", "1,-0.5"], "inv_freq"),
    (["--scheme", "sinusoidal", "--dim", "4", "--inv-freq", "1,0"], "inv_freq"),
    (["--scheme", "rope", "--dim", "4", "--inv-freq", "1,0.5", "--base", "500000"], "inv_freq"),
    (["--scheme", "rope", "--dim", "4", "--inv-freq", "1,0.5", "--scaling", "yarn", "--factor", "4",
      "--original-max-position", "64"], "inv_freq"),
    (["--scheme", "rope-nd", "--grid", "4x4x4", "--dim", "12", "--indexing", "xy"], "indexing"),
    (["--scheme", "rope-nd", "--scaling", "linear"], "factor"),
    (["--scheme", "rope-nd", "--factor", "0.5"], "factor"),
    (["--scheme", "rope-nd", "--scaling", "linear", "--factor", "0"], "factor"),
    (["--scheme", "sinusoidal", "--layout", "split"], "layout"),
    (["--scheme", "sinusoidal", "--scale", "0"], "scale"),
    (["--scheme", "rope", "--xpos", "0"], "xpos"),
    (["--scheme", "rope", "--dim", "8", "--xpos", "4", "--length", "100000"], None),
    (["--preset", "mae", "--scheme", "rope"], "preset"),
    (["--preset", "mea"], "preset"),
    (["--scheme", "alibi", "--positions", "[0.5, 1]"], "positions"),
]


@pytest.mark.parametrize("args,key", BAD, ids=[" ".join(args) for args, _ in BAD])
def test_bad_combinations_exit_2_with_one_line(run_main, args, key):
    result = run_main("encode", *args)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("pecli: error: "), result.stderr
    if key is not None:
        assert result.stderr.startswith(f"pecli: error: {key}: "), result.stderr


INV_FREQ_COMMANDS = {
    "wavelengths rope": ["wavelengths", "--scheme", "rope"],
    "wavelengths sinusoidal": ["wavelengths", "--scheme", "sinusoidal"],
    "wavelengths rope-nd": ["wavelengths", "--scheme", "rope-nd", "--grid", "4x4", "--dim", "32"],
    "check all": ["check", "all", "--scheme", "rope", "--length", "96"],
    "compare": ["compare", "--schemes", "rope", "--length", "96"],
}


@pytest.mark.parametrize("command", list(INV_FREQ_COMMANDS.values()), ids=list(INV_FREQ_COMMANDS))
def test_inv_freq_file_reaches_every_command(run_main, save, command):
    freqs = 1.0 / 300.0 ** (np.arange(8) / 8)  # not a ladder of any base with these pairs
    dim = [] if "--dim" in command else ["--dim", "16"]
    result = run_main(*command, *dim, "--inv-freq", save("f", freqs), "--json")
    assert result.returncode in (0, 1), result.stderr
    document = json.loads(result.stdout)
    if command[0] == "wavelengths":
        given = np.tile(freqs, 2) if "rope-nd" in command else freqs
        assert_frequencies([pair["inv_freq"] for pair in document["pairs"]], given)
        assert document["params"]["inv_freq"] == pytest.approx(list(freqs), rel=1e-15)
        if "--scheme" in command and command[command.index("--scheme") + 1] == "rope":
            # Men et al.'s bound: whether these frequencies' own B(m) = Σ cos(m θ_i) stays >= 0 up to C
            m = np.arange(document["context"] + 1)[:, None]
            assert document["summary"]["base_meets_bound"] == bool(np.cos(m * freqs).sum(axis=1).min() >= 0)
    elif command[0] == "check":
        verdicts = {entry["property"]: entry["verdict"] for entry in document["results"]}
        assert "n/a" not in verdicts.values() and verdicts["relativity"] == "pass"
    else:  # compare: the longest wavelength is the given slowest frequency's
        assert document["rows"][0]["max_wavelength"] == pytest.approx(2 * np.pi / freqs[-1], rel=1e-12)


def test_library_takes_the_same_options():
    import pecli

    assert_float32(pecli.encode(pecli.preset("mae", dim=64, grid=[6, 6])), mae_2d(64, 6, cls_token=True), reach=5)
    eva = pecli.build_scheme("rope-nd", {"dim": 32, "grid": [7, 7], "layout": "interleaved", "scaling": "linear",
                                         "factor": 0.875})
    sin, cos = timm_rotary([7, 7], 32, ref_feat_shape=[8, 8])
    assert_float32(eva.cos_sin(eva.cells())[0], cos, reach=7)
    freqs, t = ret_freqs(16, "pixel"), np.linspace(-1, 1, 9, dtype=np.float32)
    pixel = pecli.build_scheme("rope", {"dim": 16, "layout": "interleaved", "inv_freq": freqs})  # a NumPy array
    assert_float32(pixel.cos_sin(t)[0], np.cos(ret_forward(t, freqs)), reach=16)
    assert_float32(pecli.encode("rope", t, dim=16, layout="interleaved", inv_freq=freqs.tolist()),
                   pixel.encode(t), reach=16)


@pytest.mark.parametrize("name", ["rope-nd", "sinusoidal-nd"])
def test_xy_indexing_changes_the_row_order_not_the_measures(name):
    # The same encoding of the same coordinate box: xy lists the cells x fastest, ij the last coordinate
    # fastest; every check measures cells by their coordinates, so the figures agree.
    import pecli

    schemes = {indexing: pecli.build_scheme(name, {"dim": 16, "grid": [8, 4], "indexing": indexing}) for indexing in ("ij", "xy")}
    cells = {indexing: scheme.cells() for indexing, scheme in schemes.items()}
    assert cells["xy"][:3].tolist() == [[0, 0], [1, 0], [2, 0]] and cells["ij"][:3].tolist() == [[0, 0], [0, 1], [0, 2]]
    np.testing.assert_array_equal(schemes["xy"].encode(cells["ij"]), schemes["ij"].encode(cells["ij"]))
    reports = {indexing: pecli.check(scheme, "all") for indexing, scheme in schemes.items()}
    for ij, xy in zip(reports["ij"], reports["xy"]):
        assert (ij.property, ij.verdict) == (xy.property, xy.verdict)
        assert ij.figures[ij.key_figure] == pytest.approx(xy.figures[xy.key_figure], rel=1e-9, abs=1e-12)
