"""Relativity on a grid: the position-only score depends on the offset vector n − m only.

For positions with several coordinates (an image's (h, w), a video's (t, h, w), a multimodal token's
three ids), relativity means ``S(m, n) = f(n − m)`` for the offset *vector*: [Fleetwood] warns that
rotating one pair by x and y together "mixes the x and y offsets", which this test catches.
"""

from __future__ import annotations

import numpy as np

from pecli.analysis.cell_pairs import grid_frame
from pecli.analysis.result import PropertyResult
from pecli.analysis.structure import BLOCK_BYTES, EXACT_WORK, blas_pinned, chunked_task, sample_queries
from pecli.schemes.base import Scheme

from pecli.numbers import number, position

#: Relative spread counted as "offset only", as for 1-D positions.
SPREAD_TOL = 1e-9
#: Query cells sampled when the exact computation is too large.
GRID_SAMPLES = 128
#: (query, key) pairs whose scores are grouped at once; above it queries are sampled.
EXACT_PAIRS = 1 << 22


@blas_pinned
def offset_profile(scheme: Scheme, *, samples: int | None = None) -> dict:
    """Statistics of ``S(m, n)`` grouped by the offset vector ``n − m`` over the scheme's cells.

    Every query cell against every cell when the pairs are at most 2²² (and the multiply-adds at most
    4·10⁹); otherwise ``samples`` (default 128) seeded query cells, the first and last included, fewer
    where the pairs would pass 2²². Memory: about 16·k + 40 bytes per pair measured (k coordinates).
    Returns the distinct offsets (G, k), and per offset the mean, min, max and number of pairs.
    """
    cells = scheme.cells()
    n = len(cells)
    exact = samples is None and n * n <= EXACT_PAIRS and n * n * max(int(scheme.width), 1) <= EXACT_WORK
    # sampled: as many query cells as keep the pairs within EXACT_PAIRS (so memory is bounded), at least 2
    queries = np.arange(n) if exact else sample_queries(n, max(2, min(samples or GRID_SAMPLES, EXACT_PAIRS // n)))
    # keys per block: their scores against every query, and their factors with the temporaries of
    # computing them (about six (keys, width) arrays), within BLOCK_BYTES
    key_step = max(1, BLOCK_BYTES // (8 * (4 * queries.size + 6 * max(int(scheme.width), 1))))
    offset_rows, scores = [], []
    parts = range(0, n, key_step)
    factored = scheme.score_factors(cells[:1]) is not None
    query_factors = scheme.score_factors(cells[queries])[0] if factored else None
    with chunked_task("relativity", len(parts)) as bar:
        for start in parts:
            keys = np.arange(start, min(start + key_step, n))
            if factored:
                block = query_factors @ scheme.score_factors(cells[keys])[1].T
            else:
                block = np.asarray(scheme.score(cells[queries][:, None, :], cells[keys][None, :, :]))[0]
            offset_rows.append((cells[keys][None, :, :] - cells[queries][:, None, :]).reshape(-1, cells.shape[1]))
            scores.append(block.ravel())
            bar.advance()
    # group the pairs by offset vector: sort the rows, a group starts where any coordinate changes
    offsets, score = np.concatenate(offset_rows), np.concatenate(scores)
    del offset_rows, scores
    order = np.lexsort(offsets.T[::-1])
    offsets, score = offsets[order], score[order]
    starts = np.flatnonzero(np.r_[True, np.any(offsets[1:] != offsets[:-1], axis=1)])
    count = np.diff(np.r_[starts, score.size])
    offsets = offsets[starts]
    return {
        "offsets": offsets,
        "mean": np.add.reduceat(score, starts) / count,
        "min": np.minimum.reduceat(score, starts),
        "max": np.maximum.reduceat(score, starts),
        "count": count,
        "sampled": not exact,
        "queries": int(queries.size),
    }


def check_grid_relativity(scheme: Scheme, *, samples: int | None = None) -> PropertyResult:
    """Does ``S(m, n)`` depend on the offset vector ``n − m`` only, and on each axis's offset alone?

    Returns
    -------
    PropertyResult
        ``pass`` when the largest spread of S over the pairs sharing an offset vector, divided by the
        largest |S|, is at most 1e-9. Figures: that spread, the worst offset, and per axis the largest
        spread among the non-zero offsets along that axis only (``axis_spread``). The table lists offsets 0 … 4
        along each axis.
    """
    frame = grid_frame(scheme, 2, "relativity on a grid needs a scheme with at least 2 cells", integer=False)
    profile = offset_profile(scheme, samples=samples)
    offsets, low, high = profile["offsets"], profile["min"], profile["max"]
    scale = float(np.max(np.abs(np.concatenate([low, high])))) or 1.0
    spread = high - low
    worst = int(np.argmax(spread))
    relative = float(spread[worst]) / scale
    names = frame.names
    per_axis = {}
    table = []
    for axis, name in enumerate(names):
        along = np.all(np.delete(offsets, axis, axis=1) == 0, axis=1) & (offsets[:, axis] != 0)
        per_axis[name] = float(spread[along].max()) / scale if along.any() else 0.0
        for step in range(5):
            wanted = np.zeros(len(names), dtype=np.int64)
            wanted[axis] = step
            at = np.flatnonzero(np.all(offsets == wanted, axis=1))
            if at.size and (step or axis == 0):
                i = int(at[0])
                table.append({
                    "offset": position(offsets[i]), "mean": float(profile["mean"][i]),
                    "spread": float(spread[i]), "pairs": int(profile["count"][i]),
                })
    worst_offset = [int(v) for v in offsets[worst]]
    figures = {
        "positions": len(frame.cells),
        "axes": list(names),
        "offsets": int(len(offsets)),
        "max_spread": float(spread[worst]),
        "relative_spread": relative,
        "worst_offset": worst_offset,
        "axis_spread": per_axis,
        "score_scale": scale,
        "queries": profile["queries"],
    }
    notes = []
    if profile["sampled"]:
        notes.append(f"S(m, n) measured for {profile['queries']} sampled query cells m (seeded) against every cell")
    axes = "(" + ", ".join(f"Δ{name}" for name in names) + ")"
    if relative <= SPREAD_TOL:
        reason = f"S(m, n) depends on the offset {axes} only: largest spread over pairs with one offset is {number(relative, 2)} of the score scale"
        verdict = "pass"
    else:
        i = worst
        reason = (
            f"S(m, n) changes with the cells, not only their offset: at offset {position(offsets[i])} "
            f"it ranges over [{number(low[i])}, {number(high[i])}] (spread {number(relative, 3)} of the score scale)"
        )
        verdict = "fail"
    return PropertyResult(
        "relativity", verdict, reason, figures, "relative_spread", table=table, sampled=profile["sampled"],
        notes=tuple(notes),
    )
