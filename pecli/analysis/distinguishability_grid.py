"""Distinguishability on a grid: neighbouring cells differ noticeably along every axis, and each cell's
nearest other cell is one of its axis neighbours.

The 1-D property (:mod:`pecli.analysis.distinguishability`) steps from p to p + 1; a cell c of an image's
(h, w) grid or a video's (t, h, w) grid has a neighbour ``c ± e_a`` along each axis a, and the step
``||E(c + e_a) − E(c)||`` is measured per axis: an axis whose steps are tiny (Qwen2-VL's w pairs turn
slowest) or uneven shows in its own figures. The thresholds are the 1-D ones, the step ratio per axis.
"""

from __future__ import annotations

import itertools

import numpy as np

from pecli.analysis.cell_pairs import GridFrame, grid_frame, is_full_grid, unit_offset
from pecli.analysis.distinguishability import MAX_STEP_RATIO, MIN_LOCAL_SHARE, MIN_RELATIVE_STEP
from pecli.analysis.result import PropertyResult
from pecli.analysis.structure import (
    BLOCK_BYTES, CHUNK_BYTES, DEFAULT_SAMPLES, EXACT_PAIRS, EXACT_WORK, SAMPLE_SEED, blas_pinned, chunks, row_norms, sample_queries,
)
from pecli.schemes.base import Scheme

from pecli.numbers import number, position

#: Random cell pairs on which distances are compared with those of the same offset from a corner.
ISOMETRY_SAMPLES = 512


@blas_pinned
def check_grid_distinguishability(scheme: Scheme, *, samples: int | None = None) -> PropertyResult:
    """Measure the steps between neighbouring cells along each axis and how local nearest cells are.

    Parameters
    ----------
    scheme:
        A vector scheme with cells (rope-nd, sinusoidal-nd, mrope).
    samples:
        Force a sampled nearest-cell scan with this many query cells.

    Returns
    -------
    PropertyResult
        Figures: ``min_step``, ``max_step`` over every axis and the pair of cells with the smallest step;
        ``axis_min_step``, ``axis_max_step``, ``axis_step_ratio``, ``axis_min_step_pair``: per axis (that
        two cells step along) its smallest and largest step ``||E(c + e_a) − E(c)||``, their ratio and the
        pair with the smallest; ``step_ratio``, the largest ratio of any axis; ``local_share``, the share
        of cells whose nearest other cell is strictly one of their axis neighbours ``c ± e_a``. ``pass`` when the smallest step is at least 1e-6 of
        the largest row norm, every axis's ratio is at most 1.5 and the local share at least 0.99.

    Notes
    -----
    When the cells fill a box and ``||E(c) − E(c′)||`` depends on ``c′ − c`` only (rope-nd, whose
    rotations are orthogonal, and sinusoidal-nd concat; confirmed on sampled pairs), the distance of every
    offset Δ is measured once from a corner and a cell's nearest cells follow exactly from the offsets
    that stay in the grid. Otherwise the all-pairs scan is blockwise, sampled at large grids. Cells with
    no axis neighbour among the cells (an M-RoPE sequence's text tokens, which step along (1, 1, 1)) are
    left out of the local share.
    """
    frame = grid_frame(scheme, 3, "distinguishability needs at least 3 cells")
    neighbours = [frame.index.pairs(unit_offset(frame.rank, axis)) for axis in range(frame.rank)]
    if not any(i.size for i, _ in neighbours):  # a text-only M-RoPE sequence: its tokens step along (1, 1, 1)
        return PropertyResult(
            "distinguishability", "n/a",
            f"no two cells are next to each other along an axis in {scheme.cells_text()}: no step to measure",
            {"positions": len(frame.cells), "axes": list(frame.names)},
        )
    axis_steps = {name: _axis_steps(frame.encoding, frame.cells, i, j) for name, (i, j) in zip(frame.names, neighbours)}
    measured = {name: steps for name, steps in axis_steps.items() if steps is not None}
    notes: list[str] = []
    local, queries, example, sampled = _nearest_cells(frame, neighbours, samples, notes)
    figures = _step_figures(frame, measured, local / queries, example)
    verdict, reason = _verdict(figures, measured, float(row_norms(frame.encoding).max()) or 1.0)
    skipped = [name for name, steps in axis_steps.items() if steps is None]
    if skipped:
        notes.append(f"no two cells are neighbours along {', '.join(skipped)}: no step measured there")
    return PropertyResult(
        "distinguishability", verdict, reason, figures, "step_ratio", sampled=sampled, notes=tuple(notes)
    )


def _nearest_cells(frame: GridFrame, neighbours, samples: int | None, notes: list[str]):
    """How many cells have an axis neighbour as their strictly nearest cell, of how many, an example of one
    that has not, and whether it was sampled: exact from one distance per offset where distances depend on
    the offset only, else an all-pairs scan (sampled at large grids)."""
    encoding, cells = frame.encoding, frame.cells
    if samples is None and is_full_grid(cells) and _is_offset_isometric(encoding, cells):
        local, queries, example = _local_nearest_isometric(encoding, cells)
        notes.append("distances depend on the offset c′ − c only: nearest cells exact from one distance per offset")
        return local, queries, example, False
    return _scan_nearest(encoding, cells, neighbours, samples, notes)


def _step_figures(frame: GridFrame, measured: dict, share: float, example) -> dict:
    """The figures of the check: the steps over every axis and per axis, and the local share."""
    smallest = min(measured, key=lambda name: measured[name]["min_step"])
    ratios = [steps["step_ratio"] for steps in measured.values()]
    return {
        "positions": len(frame.cells),
        "axes": list(frame.names),
        "min_step": measured[smallest]["min_step"],
        "min_step_pair": measured[smallest]["min_step_pair"],
        "max_step": max(steps["max_step"] for steps in measured.values()),
        "step_ratio": None if None in ratios else max(ratios),
        "axis_min_step": {name: steps["min_step"] for name, steps in measured.items()},
        "axis_max_step": {name: steps["max_step"] for name, steps in measured.items()},
        "axis_step_ratio": {name: steps["step_ratio"] for name, steps in measured.items()},
        "axis_min_step_pair": {name: steps["min_step_pair"] for name, steps in measured.items()},
        "local_share": share,
        "non_local_example": example,
    }


def _verdict(figures: dict, measured: dict, scale: float) -> tuple[str, str]:
    """pass when the smallest step is noticeable against the largest row norm ``scale``, every axis's steps
    are even and nearest cells are local; else fail, with each problem said."""
    min_step, share, example = figures["min_step"], figures["local_share"], figures["non_local_example"]
    noticeable = min_step > MIN_RELATIVE_STEP * scale
    uneven = [name for name, steps in measured.items() if not (steps["step_ratio"] or np.inf) <= MAX_STEP_RATIO]
    is_local = share >= MIN_LOCAL_SHARE
    if noticeable and not uneven and is_local:
        per_axis = ", ".join(
            f"{name} {number(steps['min_step'])} … {number(steps['max_step'])}" for name, steps in measured.items()
        )
        return "pass", (
            f"steps between neighbouring cells: {per_axis} (largest ratio on an axis {number(figures['step_ratio'])}); "
            f"{share:.1%} of cells are nearest to an axis neighbour"
        )
    problems = []
    if not noticeable:
        a, b = figures["min_step_pair"]
        problems.append(f"cells {position(a)} and {position(b)} are only {number(min_step, 3)} apart")
    if noticeable and uneven:
        problems.append("; ".join(
            f"steps along {name} range over {number(measured[name]['min_step'])} … {number(measured[name]['max_step'])}"
            + (f" (ratio {number(measured[name]['step_ratio'], 3)})" if measured[name]["step_ratio"] else "")
            for name in uneven
        ))
    if not is_local:
        words = f"only {share:.1%} of cells have an axis neighbour c ± e_a as their strictly nearest cell"
        if example is not None:
            words += f" (cell {position(example[0])} is no farther from {position(example[1])})"
        problems.append(words)
    return "fail", "; ".join(problems)


def _pair_distances(encoding: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """``||E_j − E_i||`` for each row pair, chunk by chunk."""
    out = np.empty(i.size)
    for part in chunks(i.size, encoding.shape[1]):
        out[part] = np.linalg.norm(encoding[j[part]] - encoding[i[part]], axis=1)
    return out


def _axis_steps(encoding: np.ndarray, cells: np.ndarray, i: np.ndarray, j: np.ndarray) -> dict | None:
    """The smallest and largest step between neighbours along one axis, or None without neighbours."""
    if i.size == 0:
        return None
    steps = _pair_distances(encoding, i, j)
    small = int(np.argmin(steps))
    low, high = float(steps[small]), float(steps.max())
    return {
        "min_step": low,
        "max_step": high,
        "step_ratio": high / low if low > 0 else None,
        "min_step_pair": [cells[i[small]].tolist(), cells[j[small]].tolist()],
    }


def _grid_rows(cells: np.ndarray, spans: np.ndarray) -> np.ndarray:
    """Rows of cells of a full grid in row-major order."""
    strides = np.r_[np.cumprod(spans[1:][::-1])[::-1], 1]
    return cells @ strides


def _corner_partners(cells: np.ndarray, offsets: np.ndarray, spans: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each offset Δ, a corner cell c₀ with c₀ + Δ in the grid (c₀ = 0 on axes where Δ ≥ 0, the last
    cell where Δ < 0), and c₀ + Δ."""
    corner = np.where(offsets < 0, spans - 1, 0)
    return corner, corner + offsets


def _is_offset_isometric(encoding: np.ndarray, cells: np.ndarray) -> bool:
    """True when ``||E(c′) − E(c)||`` equals the distance between a corner cell and the same offset from
    it, on seeded random pairs: then every distance is one of the offsets' distances."""
    spans = cells.max(axis=0) + 1
    rng = np.random.default_rng(SAMPLE_SEED)
    a, b = rng.integers(0, len(cells), (2, ISOMETRY_SAMPLES))
    corner, partner = _corner_partners(cells, cells[b] - cells[a], spans)
    direct = np.linalg.norm(encoding[b] - encoding[a], axis=1)
    from_corner = np.linalg.norm(encoding[_grid_rows(partner, spans)] - encoding[_grid_rows(corner, spans)], axis=1)
    largest = max(abs(float(encoding.max())), abs(float(encoding.min())))
    scale = max(largest, 1e-300) * np.sqrt(encoding.shape[1])
    return bool(np.allclose(direct, from_corner, rtol=1e-7, atol=1e-9 * scale))


def offset_distances(encoding: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """``f(Δ) = ||E(c₀ + Δ) − E(c₀)||`` for every offset Δ of a full grid, as an array of shape
    ``(2G_0 − 1, …)`` indexed by ``Δ + G − 1``.

    One pass over the grid per sign pattern of the axes after the first (Δ_0 ≥ 0, from the corner with
    0 on the positive axes and the last cell on the negative ones); the offsets with Δ_0 < 0 are the
    mirror images, ``f(−Δ) = f(Δ)``.
    """
    spans = cells.max(axis=0) + 1
    k = len(spans)
    f = np.full(tuple(2 * spans - 1), np.nan)
    for signs in itertools.product((1, -1), repeat=k - 1):
        negative = np.array([False, *(s < 0 for s in signs)])
        corner = np.where(negative, spans - 1, 0)
        corner_row = encoding[int(_grid_rows(corner[None, :], spans)[0])]
        for part in chunks(len(cells), encoding.shape[1]):
            distance = np.linalg.norm(encoding[part] - corner_row, axis=1)
            at = cells[part] - corner + spans - 1
            f[tuple(at.T)] = distance
    mirrored = f[(slice(None, None, -1),) * k]
    return np.where(np.isnan(f), mirrored, f)


def _local_nearest_isometric(encoding: np.ndarray, cells: np.ndarray) -> tuple[int, int, list | None]:
    """Cells whose nearest other cell is strictly an axis neighbour, exact, when distances depend on the
    offset only.

    Every cell has a neighbour along each axis of two or more cells, at distance ``f(e_a) = f(−e_a)``,
    so its nearest neighbour is at ``m = min_a f(e_a)`` and it is non-local iff some other offset Δ
    with ``f(Δ) ≤ m`` stays in the grid from it. The cells from which Δ stays in the grid form a box
    anchored at a corner; per orthant of offsets these boxes are unioned by a running OR along each
    axis (a cell is covered when some marked box corner dominates it). Work O(2^k · cells).
    """
    spans = cells.max(axis=0) + 1
    k = len(spans)
    f = offset_distances(encoding, cells)
    centre = tuple(spans - 1)
    steps = [centre[:a] + (centre[a] + 1,) + centre[a + 1 :] for a in range(k) if spans[a] > 1]
    nearest = min(f[step] for step in steps)
    bad = f <= nearest
    bad[centre] = False
    for step in steps:
        bad[step] = False
        bad[tuple(2 * np.array(centre) - np.array(step))] = False
    if not bad.any():
        return len(cells), len(cells), None
    covered = np.zeros(tuple(spans), dtype=bool)
    for signs in itertools.product((1, -1), repeat=k):
        corners = bad
        for axis, sign in enumerate(signs):  # to the box corner t_a = G_a − 1 − |Δ_a|, in flipped coordinates
            g = int(spans[axis])
            if sign > 0:
                corners = np.flip(np.take(corners, np.arange(g - 1, 2 * g - 1), axis=axis), axis=axis)
            else:
                negative = np.take(corners, np.arange(0, g - 1), axis=axis)
                pad = [(0, 0)] * k
                pad[axis] = (0, 1)
                corners = np.pad(negative, pad)
        for axis in range(k):  # every cell a marked corner dominates
            corners = np.flip(np.logical_or.accumulate(np.flip(corners, axis), axis=axis), axis)
        for axis, sign in enumerate(signs):
            if sign < 0:
                corners = np.flip(corners, axis)
        covered |= corners
    first = np.argwhere(covered)[0]
    offsets = np.argwhere(bad) - (spans - 1)
    inside = np.all((first + offsets >= 0) & (first + offsets < spans), axis=1)
    choice = offsets[inside][int(np.argmin(f[tuple((offsets[inside] + spans - 1).T)]))]
    example = [first.tolist(), (first + choice).tolist()]
    return len(cells) - int(covered.sum()), len(cells), example


def _scan_nearest(
    encoding: np.ndarray, cells: np.ndarray, neighbours: list[tuple[np.ndarray, np.ndarray]], samples: int | None,
    notes: list[str],
) -> tuple[int, int, list | None, bool]:
    """Nearest cells by a blockwise all-pairs scan over the cells that have an axis neighbour; sampled
    when the scan would pass :data:`EXACT_WORK` or ``samples`` is given."""
    n, width = encoding.shape
    columns = []  # per axis and direction, each cell's neighbour row or −1
    for i, j in neighbours:
        after, before = np.full(n, -1), np.full(n, -1)
        after[i], before[j] = j, i
        columns += [after, before]
    around = np.stack(columns, axis=1)
    candidates = np.flatnonzero(np.any(around >= 0, axis=1))
    exact = samples is None and n * n * width <= EXACT_WORK and n * n <= EXACT_PAIRS
    queries = candidates if exact else candidates[sample_queries(candidates.size, samples or DEFAULT_SAMPLES)]
    squared = np.einsum("ij,ij->i", encoding, encoding)
    block = max(1, BLOCK_BYTES // (8 * n))
    local, example = 0, None
    for start in range(0, queries.size, block):
        q = queries[start : start + block]
        r = np.arange(q.size)
        d2 = np.add.outer(squared[q], squared)
        d2 -= 2.0 * (encoding[q] @ encoding.T)
        np.maximum(d2, 0.0, out=d2)
        d2[r, q] = np.inf
        near = around[q]
        adjacent = np.full(q.size, np.inf)
        for column in near.T:
            has = column >= 0
            adjacent[has] = np.minimum(adjacent[has], d2[r[has], column[has]])
            d2[r[has], column[has]] = np.inf
        good = adjacent < d2.min(axis=1)
        local += int(np.count_nonzero(good))
        if example is None and not good.all():
            bad = int(np.flatnonzero(~good)[0])
            example = [cells[q[bad]].tolist(), cells[int(np.argmin(d2[bad]))].tolist()]
    if not exact:
        notes.append(f"nearest cells of {queries.size} sampled cells (seeded) against all {n}")
    if candidates.size < n:
        notes.append(
            f"{n - candidates.size} of {n} cells have no axis neighbour among the cells (text tokens step along "
            "(1, 1, 1)): left out of the local share"
        )
    return local, int(queries.size), example, not exact


def grid_distinguishability_footprint(scheme: Scheme, cells: int) -> tuple[int, int]:
    """(bytes of the encoding read, bytes of the check's own work) on ``cells`` cells, before any work.

    The work: the cell index and each axis's neighbour pairs (a few int64 per cell and axis), the offset
    distances of an exact grid (2^k per cell, with their mirror, mask and the offsets of a failing one),
    the scan's blocks and the chunks of the step norms.
    """
    k = int(scheme.position_rank)
    width = max(int(scheme.width), 1)
    per_cell = 8 * ((2**k) * (3 + k) + 6 * k + 6)
    blocks = 4 * min(BLOCK_BYTES, 8 * cells * cells)
    return 8 * cells * width, per_cell * cells + blocks + 6 * min(CHUNK_BYTES, 8 * cells * width)
