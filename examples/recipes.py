"""The Recipes page's measured differences: each library convention pecli reproduces, computed by the
library's own formula, against what the page's ``pecli encode`` command writes.

Run it from the repository's root (it reads the formulas from the test suite, which needs the ``test``
extra): ``python examples/recipes.py``. The formulas are tests/test_conventions.py's transcriptions of
each library's source into NumPy, step by step and in the dtype the library computes in (float32); the
inputs are those of ``examples/recipe_inputs.py``. For each convention it prints the largest absolute
difference over every compared array: float32 rounding, of the order of ``|p·θ|·2⁻²⁴``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import shlex
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from recipe_inputs import inputs  # noqa: E402


def _formulas():
    spec = importlib.util.spec_from_file_location("conventions", HERE.parent / "tests" / "test_conventions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


F = _formulas()
X = inputs()


@dataclass(frozen=True)
class Recipe:
    """A library call, the pecli command that gives its numbers, and those numbers by the library's
    formula, keyed by the name of the ``.npz`` part they are compared with."""

    number: int
    library: str
    command: str
    expected: Callable[[], dict[str, np.ndarray]]


def _with_cls(sin: np.ndarray, cos: np.ndarray) -> dict[str, np.ndarray]:
    """timm's patch tables, after the cls token's row, which the rope leaves as it is (cos 1, sin 0)."""
    return {"sin": np.concatenate([np.zeros((1, sin.shape[1])), sin]),
            "cos": np.concatenate([np.ones((1, cos.shape[1])), cos])}


def _eva():
    sin, cos = F.timm_rotary([16, 16], 64)
    q = X["eva-q"]
    return {"result": np.concatenate([q[:1], F.interleaved_rotation(q[1:], cos, sin)])}


def _xpos(dim: int, t: np.ndarray, scale_base: float, x: np.ndarray, keys: bool):
    freqs, scale = F.xt_rotary(t, dim, xpos_scale_base=scale_base)
    return {"result": F.ret_apply(freqs, x, scale ** (-1.0 if keys else 1.0))}


def _cos_sin(angles: np.ndarray) -> dict[str, np.ndarray]:
    return {"cos": np.cos(angles), "sin": np.sin(angles)}


def _llama3(x: np.ndarray):
    theta = F.torchtune_llama3_scaling(F.torchtune_theta(128, 500000))
    return {"result": F.torchtune_apply(x, theta)}


_ALIBI = "pecli encode --scheme alibi --heads {} --length 16"
_LLAMA3 = ("pecli encode --scheme rope --layout interleaved --dim 128 --base 500000 --scaling llama3 --factor 8 "
           "--low-freq-factor 1 --high-freq-factor 4 --original-max-position 8192 --length 16 --apply x128.npy --out x128-llama3.npy")

RECIPES = [
    Recipe(1, "MAE get_2d_sincos_pos_embed(768, 14)", "pecli encode --preset mae --prefix-tokens 0",
           lambda: {"encoding": F.mae_2d(768, 14)}),
    Recipe(2, "MAE get_2d_sincos_pos_embed(768, 14, cls_token=True)", "pecli encode --preset mae",
           lambda: {"encoding": F.mae_2d(768, 14, cls_token=True)}),
    Recipe(3, "MAE get_1d_sincos_pos_embed_from_grid(768, pos)",
           'pecli encode --scheme sinusoidal --layout half --dim 768 --positions "[0, 1.5, 3, 7.25, 40]"',
           lambda: {"encoding": F.mae_1d(768, np.array([0, 1.5, 3, 7.25, 40], dtype=np.float32))}),
    Recipe(4, "timm build_sincos2d_pos_embed([14, 14], dim=768)", "pecli encode --preset timm-sincos",
           lambda: {"encoding": F.timm_sincos2d([14, 14], 768)}),
    Recipe(5, "timm build_sincos2d_pos_embed([14, 14], dim=768, interleave_sin_cos=True)",
           "pecli encode --scheme sinusoidal-nd --layout half --dim 768 --grid 14x14",
           lambda: {"encoding": F.timm_sincos2d([14, 14], 768, interleave_sin_cos=True)}),
    Recipe(6, "timm build_sincos2d_pos_embed([12, 16], dim=768, reverse_coord=True)",
           "pecli encode --preset timm-sincos --grid 16x12",
           lambda: {"encoding": F.timm_sincos2d([12, 16], 768, reverse_coord=True)}),
    Recipe(7, "timm build_rotary_pos_embed([6, 10], dim=64, in_pixels=False, grid_indexing='xy')",
           "pecli encode --scheme rope-nd --layout interleaved --dim 64 --grid 10x6 --indexing xy",
           lambda: dict(zip(("sin", "cos"), F.timm_rotary([6, 10], 64, grid_indexing="xy")))),
    Recipe(8, "EVA-02 (timm RotaryEmbeddingCat(64, in_pixels=False, feat_shape=[16, 16]), cls token kept)",
           "pecli encode --preset eva02 --apply eva-q.npy --out eva-q-rot.npy", _eva),
    Recipe(9, "EVA-02 at 448 px: RotaryEmbeddingCat(..., feat_shape=[32, 32], ref_feat_shape=[16, 16])",
           "pecli encode --preset eva02 --grid 32x32 --scaling linear --factor 2",
           lambda: _with_cls(*F.timm_rotary([32, 32], 64, ref_feat_shape=[16, 16]))),
    Recipe(10, "timm RotaryEmbeddingCat(64, in_pixels=True, feat_shape=[16, 16])",
           "pecli encode --scheme rope-nd --layout interleaved --dim 64 --grid 16x16 --inv-freq pixel-bands.npy "
           "--positions pixel-cells.npy",
           lambda: dict(zip(("sin", "cos"), F.timm_rotary([16, 16], 64, in_pixels=True)))),
    Recipe(11, "rotary-embedding-torch RotaryEmbedding(dim=32) on heads of 64",
           "pecli encode --scheme rope --layout interleaved --dim 64 --partial-rotary-factor 0.5 --length 16 "
           "--apply q.npy --out q-rot.npy",
           lambda: {"result": F.ret_apply(F.ret_forward(np.arange(16), F.ret_freqs(32)), X["q"])}),
    Recipe(12, "rotary-embedding-torch RotaryEmbedding(16, freqs_for='pixel', max_freq=10)",
           "pecli encode --scheme rope --layout interleaved --dim 16 --inv-freq pixel-freqs.npy "
           "--positions pixel-t.npy",
           lambda: _cos_sin(F.ret_forward(X["pixel-t"], X["pixel-freqs"]))),
    Recipe(13, "rotary-embedding-torch RotaryEmbedding(16).get_axial_freqs(4, 6)",
           "pecli encode --scheme rope-nd --layout interleaved --dim 32 --grid 4x6",
           lambda: _cos_sin(F.ret_axial(F.ret_freqs(16), (4, 6), pixel=False))),
    Recipe(14, "rotary-embedding-torch RotaryEmbedding(16, freqs_for='pixel', max_freq=224).get_axial_freqs(4, 6)",
           "pecli encode --scheme rope-nd --layout interleaved --dim 32 --grid 4x6 --inv-freq axial-freqs.npy "
           "--positions axial-cells.npy",
           lambda: _cos_sin(F.ret_axial(X["axial-freqs"], (4, 6), pixel=True))),
    Recipe(15, "rotary-embedding-torch RotaryEmbedding(64, use_xpos=True).rotate_queries_and_keys (keys)",
           "pecli encode --scheme rope --layout interleaved --dim 64 --xpos 512 --length 16 --apply k.npy --as-keys --out k-xpos.npy",
           lambda: _xpos(64, np.arange(16), 512, X["k"], keys=True)),
    Recipe(16, "rotary-embedding-torch RotaryEmbedding(64, interpolate_factor=2)",
           "pecli encode --scheme rope --layout interleaved --dim 64 --scaling linear --factor 2 --length 64",
           lambda: _cos_sin(F.ret_forward(np.arange(64, dtype=np.float32) / 2, F.ret_freqs(64)))),
    Recipe(17, "x-transformers RotaryEmbedding(32) (rotary_emb_dim=32, heads of 64)",
           "pecli encode --scheme rope --layout interleaved --dim 64 --partial-rotary-factor 0.5 --length 16 "
           "--apply q.npy --out q-rot-xt.npy",
           lambda: {"result": F.ret_apply(F.xt_rotary(np.arange(16), 32)[0], X["q"])}),
    Recipe(18, "x-transformers RotaryEmbedding(64, use_xpos=True, scale_base=64), positions 3 … 18 (queries)",
           "pecli encode --scheme rope --layout interleaved --dim 64 --xpos 64 --positions 3:19 --apply q.npy --out q-xpos.npy",
           lambda: _xpos(64, np.arange(3, 19), 64, X["q"], keys=False)),
    Recipe(19, "x-transformers ScaledSinusoidalEmbedding(512) (its scale at its initial value, 512^−½)",
           "pecli encode --scheme sinusoidal --layout half --dim 512 --scale 0.04419417382415922 --length 64",
           lambda: {"encoding": _scaled_sinusoidal(512, 64)}),
    Recipe(20, "x-transformers AlibiPositionalBias(heads=8) and (heads=12)",
           _ALIBI.format(8) + "\n" + _ALIBI.format(12),
           lambda: {"slopes": F.xt_alibi_slopes(8)}),
    Recipe(21, "torchtune RotaryPositionalEmbeddings(dim=64)",
           "pecli encode --scheme rope --layout interleaved --dim 64 --length 16 --apply q.npy --out q-torchtune.npy",
           lambda: {"result": F.torchtune_apply(X["q"], F.torchtune_theta(64, 10000))}),
    Recipe(22, "torchtune Llama3ScaledRoPE(dim=128, base=500000, scale_factor=8) (llama3_1)", _LLAMA3,
           lambda: _llama3(X["x128"])),
]


def _scaled_sinusoidal(dim: int, length: int) -> np.ndarray:
    """x-transformers ScaledSinusoidalEmbedding: [sin | cos] of ``t · 10000^(−i/(d/2))``, times ``d^−½``."""
    inv_freq = (10000 ** -(np.arange(dim // 2).astype(np.float32) / (dim // 2))).astype(np.float32)
    angles = np.einsum("i,j->ij", np.arange(length, dtype=np.float32), inv_freq)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=-1) * np.float32(dim**-0.5)


def pecli_encode(command: str, folder: Path) -> dict[str, np.ndarray]:
    """Run ``pecli encode …`` in this process with ``--out`` an .npz in ``folder``; its arrays by name."""
    from pecli.cli import run

    out = folder / "out.npz"
    args = shlex.split(command)[1:]
    if "--out" in args:  # the page's file name: here, an .npz of every part
        del args[args.index("--out"):args.index("--out") + 2]
    args += ["--out", str(out), "--force", "--quiet"]
    with contextlib.redirect_stdout(io.StringIO()):
        code = run(args)
    if code != 0:
        raise SystemExit(f"{command}: exit code {code}")
    with np.load(out) as archive:
        return {name: archive[name] for name in archive.files if name != "metadata"}


def difference(recipe: Recipe, folder: Path) -> float:
    """The largest |pecli − library| over the recipe's arrays (every command of a multi-line recipe)."""
    worst = 0.0
    for line in recipe.command.splitlines():
        arrays = pecli_encode(line, folder)
        heads = int(line.split("--heads ")[1].split()[0]) if "--heads" in line else None
        expected = {"slopes": F.xt_alibi_slopes(heads)} if heads else recipe.expected()
        for name, value in expected.items():
            got = np.asarray(arrays[name], dtype=np.float64)
            worst = max(worst, float(np.abs(got - np.asarray(value, dtype=np.float64)).max()))
    return worst


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        for name, array in X.items():
            np.save(f"{name}.npy", array)
        print(f"{'#':>2}  {'max |pecli − library|':>21}  library call")
        for recipe in RECIPES:
            print(f"{recipe.number:>2}  {difference(recipe, Path(folder)):>21.1e}  {recipe.library}")


if __name__ == "__main__":
    main()
