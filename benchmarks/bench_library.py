"""Library benchmark: ``pecli.encode`` in-process against the code people call instead, in one run.

Run from the repository root with a Python that has torch and transformers (any other Python runs
only the NumPy references)::

    PYTHONPATH=. /path/to/venv-with-transformers/bin/python benchmarks/bench_library.py
    python benchmarks/bench_library.py --transformers-python /path/to/venv-with-transformers/bin/python
    python benchmarks/bench_library.py --length 65536 --repeat 9     # quicker; no torch: NumPy rows only

Without torch here, ``--transformers-python`` (default ``$PECLI_TRANSFORMERS_PYTHON``) runs this script
again under that interpreter, this repository on its path; without either the rope rows are skipped.

What is measured
----------------
Each row is a pair of calls in the same process, one after the other, ``--repeat`` times (after one
untimed call of each, which pays for the process's first touch of the output's memory): the ratio
printed is the median of the pairs' ratios (pecli's time over the reference's), with the smallest and
largest beside it, so that a slow moment of a shared machine weighs on both sides of a pair.

1. ``rope``: ``pecli.encode("rope", np.arange(L), dim=128, dtype="float32")`` and reading its ``cos`` and
   ``sin`` (``result["cos"]``, ``result["sin"]``: (L, 128) float32 each) against transformers'
   ``LlamaRotaryEmbedding`` forward on position ids 0 … L − 1 (float32 cos and sin, shape (1, L, 128)),
   on torch's default threads. Target: ≤ 1.0×. Also printed: the largest error of each against cos
   and sin of the float64 angles (transformers forms the angles in float32).
   ``rope loop``: the same two calls as a loop keeps them, ``result = …`` replacing the previous
   result only once the call returns (so a call runs while the previous result is alive), ``--repeat``
   pairs after one untimed pair. Targets: the median of the pairs' ratios ≤ 0.5×, the largest ≤ 1.0×.
2. ``sinusoidal``: ``pecli.encode("sinusoidal", np.arange(L), dim=512, dtype="float32").encoding``
   against the NumPy a user would write (float64 angles, sin and cos into an interleaved float64
   matrix, cast to float32).
3. ``alibi``: ``pecli.encode("alibi", np.arange(n), heads=16, dtype="float32").bias`` (H, n, n) against
   ``−m·|j − i|`` broadcast in float64 and cast.

This file is not collected by pytest; it times nothing in the test suite.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from typing import Callable

import numpy as np

import pecli


def seconds(call: Callable[[], object]) -> float:
    gc.collect()
    started = time.perf_counter()
    result = call()
    elapsed = time.perf_counter() - started
    del result
    return elapsed


def paired(ours: Callable[[], object], reference: Callable[[], object], repeat: int) -> tuple[float, float, float]:
    """Median, smallest and largest ratio of ``ours`` over ``reference``, pair by pair (one untimed run each first)."""
    seconds(ours), seconds(reference)
    ratios = []
    for _ in range(repeat):
        ratios.append(seconds(ours) / seconds(reference))
    return statistics.median(ratios), min(ratios), max(ratios)


def rerun_with_transformers(python: str | None, argv: list[str] | None) -> bool:
    """Run this script again under ``python`` (with this repository first on its path); False when there
    is no such interpreter."""
    import os
    import subprocess
    from pathlib import Path

    python = python or os.environ.get("PECLI_TRANSFORMERS_PYTHON")
    if not python or not Path(python).exists():
        return False
    root = str(Path(__file__).resolve().parents[1])
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    given, rest = list(sys.argv[1:] if argv is None else argv), []
    while given:
        word = given.pop(0)
        if word == "--transformers-python":
            given = given[1:]
        elif not word.startswith("--transformers-python="):
            rest.append(word)
    subprocess.run([python, __file__, *rest], env=environment, check=False)
    return True


def transformers_rope(length: int) -> Callable[[], object] | None:
    """``LlamaRotaryEmbedding(config)(x, position_ids)`` for positions 0 … L − 1, or None without torch."""
    try:
        import torch
        from transformers import LlamaConfig
        from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
    except ImportError:
        return None
    config = LlamaConfig(hidden_size=128 * 32, num_attention_heads=32, head_dim=128, max_position_embeddings=length)
    module = LlamaRotaryEmbedding(config)
    x = torch.zeros(1, 1, 128, dtype=torch.float32)
    positions = torch.arange(length).unsqueeze(0)

    def forward() -> object:
        with torch.no_grad():
            return module(x, positions)

    return forward


def loop_pairs(length: int, forward: Callable[[], object], repeat: int) -> tuple[float, float, float]:
    """``rope loop``: median, smallest and largest ratio of pecli's call (with reading cos and sin) over
    transformers' forward, each result kept until the next call of its side returns."""
    kept: dict[str, object] = {}

    def ours() -> None:
        result = pecli.encode("rope", np.arange(length), dim=128, dtype="float32")
        kept["ours"] = (result, result["cos"], result["sin"])

    def reference() -> None:
        kept["reference"] = forward()

    def timed(call: Callable[[], None]) -> float:
        started = time.perf_counter()
        call()
        return time.perf_counter() - started

    timed(ours), timed(reference)
    ratios = [timed(ours) / timed(reference) for _ in range(repeat)]
    return statistics.median(ratios), min(ratios), max(ratios)


def largest_errors(length: int, forward: Callable[[], object] | None) -> str:
    """Largest |error| of pecli's and transformers' float32 caches against cos/sin of float64 angles."""
    inv_freq = 1.0 / 10000.0 ** (np.arange(0, 128, 2, dtype=np.float64) / 128)
    rows = np.unique(np.linspace(0, length - 1, 4096).astype(np.int64))  # spread over 0 … L − 1, the last included
    angles = np.outer(rows.astype(np.float64), inv_freq)
    exact = np.concatenate([np.cos(angles), np.cos(angles)], axis=1), np.concatenate([np.sin(angles), np.sin(angles)], axis=1)
    ours = pecli.encode("rope", rows, dim=128, dtype="float32")
    words = f"pecli {max(np.abs(ours.cos - exact[0]).max(), np.abs(ours.sin - exact[1]).max()):.2e}"
    if forward is not None:
        cos, sin = (t[0].numpy()[rows].astype(np.float64) for t in forward())
        words += f", transformers {max(np.abs(cos - exact[0]).max(), np.abs(sin - exact[1]).max()):.2e}"
    return words


def sinusoid_snippet(length: int, dim: int) -> Callable[[], object]:
    def snippet() -> object:
        inv_freq = 1.0 / np.power(10000.0, np.arange(0, dim, 2, dtype=np.float64) / dim)
        angles = np.outer(np.arange(length, dtype=np.float64), inv_freq)
        pe = np.empty((length, dim), dtype=np.float64)
        pe[:, 0::2] = np.sin(angles)
        pe[:, 1::2] = np.cos(angles)
        return pe.astype(np.float32)

    return snippet


def alibi_snippet(n: int, heads: int) -> Callable[[], object]:
    slopes = np.asarray(pecli.build_scheme("alibi", {"heads": heads}).slopes)

    def snippet() -> object:
        distance = np.abs(np.arange(n)[None, :] - np.arange(n)[:, None]).astype(np.float64)
        return (-slopes[:, None, None] * distance).astype(np.float32)

    return snippet


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--length", type=int, default=1 << 20, help="rope's L (default 2**20)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--transformers-python", default=None, help="run under this Python (with torch) when torch is absent here")
    args = parser.parse_args(argv)
    L = args.length
    rows = []
    forward = transformers_rope(L)
    if forward is None and rerun_with_transformers(args.transformers_python, argv):
        return 0

    def ours() -> object:
        result = pecli.encode("rope", np.arange(L), dim=128, dtype="float32")
        return result, result["cos"], result["sin"]

    if forward is not None:
        rows.append(("rope", f"encode(rope, dim=128, float32) + cos, sin vs LlamaRotaryEmbedding, L={L}",
                     paired(ours, forward, args.repeat), 1.0))
        rows.append(("rope loop", "the same, each result kept until the next call returns (median ≤ 0.5×, largest ≤ 1.0×)",
                     loop_pairs(L, forward, args.repeat), 0.5))
    else:
        print("torch/transformers not importable here: the rope rows need them (see the module's docstring)", file=sys.stderr)
    length = max(L // 4, 1)
    sinusoidal = lambda: pecli.encode("sinusoidal", np.arange(length), dim=512, dtype="float32")  # noqa: E731
    rows.append(("sinusoidal", f"encode(sinusoidal, dim=512, float32) vs NumPy, L={length}",
                 paired(sinusoidal, sinusoid_snippet(length, 512), args.repeat), None))
    n = 4096 if L >= 1 << 16 else 1024
    alibi = lambda: pecli.encode("alibi", np.arange(n), heads=16, dtype="float32")  # noqa: E731
    rows.append(("alibi", f"encode(alibi, heads=16, float32) vs NumPy, n={n}", paired(alibi, alibi_snippet(n, 16), args.repeat), None))
    print(f"{'row':<11}{'ratio':>7}{'min':>7}{'max':>7}  target  what")
    for name, what, (median, low, high), target in rows:
        good = target is None or (median <= target and (name != "rope loop" or high <= 1.0))
        mark = "" if target is None else (f" ≤ {target}× " + ("pass" if good else "FAIL"))
        print(f"{name:<11}{median:>6.2f}×{low:>6.2f}×{high:>6.2f}×  {mark:<9} {what}")
    print(f"largest error against float64 angles (rope, L={L}): {largest_errors(L, forward)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
