"""Extrapolation on a grid: a scheme trained on a smaller grid of cells, run on a larger one.

The question of vision and video RoPE: a ViT trained at 14 × 14 patches run at 32 × 32 (axial 2-D RoPE,
Heo et al., "Rotary Position Embedding for Vision Transformer", ECCV 2024), a VLM fed a larger image
than in training. Training saw the cells of the box ``[0, T_0) × … × [0, T_{k−1})``; the test grid is
``[0, G_0) × … × [0, G_{k−1})`` with ``T_a ≤ G_a``. Each axis's sinusoids turn with that axis's
coordinate only (rope-nd's pairs, sinusoidal-nd's per-axis encodings), so the angles they reach are
the 1-D ones over the axis's span: the rule of :func:`pecli.analysis.extrapolation.angle_ranges_of`,
axis by axis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from pecli.analysis.cell_pairs import grid_frame
from pecli.analysis.extrapolation import AngleRanges, angle_ranges_of
from pecli.analysis.result import PropertyResult
from pecli.analysis.structure import group_rows_of
from pecli.errors import ConfigError, PecliError
from pecli.schemes.base import Scheme

from pecli.numbers import integer, number, position


def grid_text(grid: Sequence[int]) -> str:
    """``14x14``: a grid as ``--grid`` and ``--train-grid`` take it."""
    return "x".join(str(int(n)) for n in grid)


def default_train_grid(grid: Sequence[int]) -> tuple[int, ...]:
    """The training grid when none is given: each side halved, rounded down, at least 1 (16 × 12 → 8 × 6),
    as a 1-D scheme's T defaults to L // 2."""
    return tuple(max(1, int(n) // 2) for n in grid)


def checked_train_grid(
    train_grid: Sequence[int] | None, grid: Sequence[int], axis_names: Sequence[str] = ()
) -> tuple[int, ...]:
    """``train_grid`` (default :func:`default_train_grid`) once it has the test grid's rank and no side
    above the test grid's; else a :class:`~pecli.errors.ConfigError` on ``train_grid`` (naming the axis
    by ``axis_names`` where given)."""
    grid = tuple(int(n) for n in grid)
    if train_grid is None:
        return default_train_grid(grid)
    train = tuple(int(n) for n in train_grid)
    if len(train) != len(grid):
        raise ConfigError(
            "train_grid", f"{grid_text(train)} has {len(train)} axes but the grid {grid_text(grid)} has {len(grid)}"
        )
    if any(n < 1 for n in train):
        raise ConfigError("train_grid", f"every axis needs at least one cell, got {grid_text(train)}")
    larger = [axis for axis, (t, g) in enumerate(zip(train, grid)) if t > g]
    if larger:
        axis = axis_names[larger[0]] if len(axis_names) == len(grid) else f"axis {larger[0]}"
        raise ConfigError(
            "train_grid", f"{grid_text(train)} is larger than the test grid {grid_text(grid)} along {axis}; "
            "every side must be at most the grid's (--grid)",
        )
    return train


@dataclass(frozen=True)
class NewCellCollisions:
    """Collisions between the encoding of a cell outside the training box and that of any other cell."""

    #: Unordered pairs of cells with identical encodings, at least one of them new.
    pairs: int
    #: One such pair (rows of the grid, in order): the first new cell that collides and a trained cell
    #: it collides with where there is one; None without any.
    first: tuple[int, int] | None


def new_cell_collisions(encoding: np.ndarray, trained: np.ndarray) -> NewCellCollisions:
    """Exact collisions (hashed rows, :func:`~pecli.analysis.structure.group_rows_of`) on the union of
    the trained cells (``trained`` True) and the new ones, leaving out those among trained cells only:
    per group of n identical rows of which t are trained, ``n(n − 1)/2 − t(t − 1)/2`` pairs."""
    n = encoding.shape[0]
    first_index, inverse, counts = group_rows_of(n, lambda rows: encoding[rows], encoding.shape[1])
    trained_counts = np.bincount(inverse[trained], minlength=counts.size).astype(np.int64)
    counts = counts.astype(np.int64)
    pairs = int(np.sum(counts * (counts - 1) // 2 - trained_counts * (trained_counts - 1) // 2))
    if not pairs:
        return NewCellCollisions(0, None)
    shared = counts[inverse] > 1
    new = int(np.flatnonzero(shared & ~trained)[0])
    group = inverse[new]
    members = np.flatnonzero(inverse == group)
    partners = members[members != new]
    by_training = partners[np.argsort(~trained[partners], kind="stable")]  # a trained partner first
    return NewCellCollisions(pairs, tuple(sorted((int(by_training[0]), new))))


def check_grid_extrapolation(scheme: Scheme, *, train_grid: Sequence[int] | None = None) -> PropertyResult:
    """Can a scheme on a grid, trained on the cells of a smaller grid, encode the cells of its own?

    Parameters
    ----------
    scheme:
        A scheme on a grid (rope-nd, sinusoidal-nd); its ``grid`` is the test grid G.
    train_grid:
        T, the training grid: one side per axis, each at most G's (default each side of G halved,
        rounded down, at least 1).

    Returns
    -------
    PropertyResult
        Per axis a, the sinusoids turning with that coordinate
        (:meth:`~pecli.schemes.grid.OnGrid.axis_frequencies`) saw angles ``p_a θ_j`` for ``p_a < T_a``
        and reach ``(G_a − 1) θ_j``; a pair is unseen by the 1-D rule
        (:func:`~pecli.analysis.extrapolation.angle_ranges_of`: it never completed a turn, ``T_a θ_j < 2π``,
        and the test angle goes past ``T_a θ_j``). Figures: ``train_grid``, ``grid``,
        ``axis_unseen_pairs`` {axis: count}, ``first_unseen`` {axis: the first unseen pair j of that
        axis's ladder, or None}, ``axis_frequency_pairs``, ``unseen_angle_pairs`` (their total, the key
        figure, as 1-D's), ``largest_angle_overshoot`` and ``colliding_pairs``: identical encodings of a
        new cell (outside the training box) and any other cell. ``fail`` when some new cell collides,
        ``warn`` when some pair reaches unseen angles, ``pass`` otherwise; ``n/a`` when the training grid
        is the grid (nothing to extrapolate) or the scheme's encoding is not made of sinusoids of single
        coordinates.

    Notes
    -----
    The encoding's values are sines and cosines: bounded, so (unlike 1-D integer encodings) no range
    is checked. The trained scheme is the scheme itself: a grid's frequencies do not depend on its size.
    """
    if not scheme.on_grid:
        raise PecliError(f"extrapolation on a grid needs a scheme on a grid (rope-nd, sinusoidal-nd), not {scheme.name}")
    frame = grid_frame(scheme, 1, f"extrapolation on a grid needs cells; {scheme.name} has none", integer=False)
    grid = tuple(int(n) for n in scheme.axis_spans())
    names = frame.names
    train = checked_train_grid(train_grid, grid, names)
    figures: dict = {"train_grid": list(train), "grid": list(grid)}
    if train == grid:
        return PropertyResult(
            "extrapolation", "n/a",
            f"nothing to extrapolate: the training grid {grid_text(train)} is the grid; give --train-grid smaller "
            "than --grid along some axis", figures, "train_grid",
        )
    frequencies = scheme.axis_frequencies()
    if frequencies is None:
        return PropertyResult(
            "extrapolation", "n/a", f"{scheme.name}'s encoding is not made of sinusoids of one coordinate each: "
            "no angle ranges per axis to compare", figures, "train_grid",
        )
    ranges = {name: angle_ranges_of(theta, theta, t, g) for name, theta, t, g in zip(names, frequencies, train, grid)}
    overshoot = {name: float(r.overshoot.max(initial=1.0)) for name, r in ranges.items()}
    cells = frame.cells
    found = new_cell_collisions(frame.encoding, np.all(cells < np.asarray(train), axis=1))
    total = sum(r.unseen_count for r in ranges.values())
    figures.update({
        "new_cells": int(np.prod(grid)) - int(np.prod(train)),
        "axis_frequency_pairs": {name: int(r.inv_freq.size) for name, r in ranges.items()},
        "axis_unseen_pairs": {name: r.unseen_count for name, r in ranges.items()},
        "first_unseen": {name: r.first_unseen_pair for name, r in ranges.items()},
        "unseen_angle_pairs": total,
        "largest_angle_overshoot": max(overshoot.values()),
        "colliding_pairs": found.pairs,
    })
    trained_words = f"trained on {grid_text(train)}, tested on {grid_text(grid)}"
    warnings = tuple(_axis_warning(name, r, overshoot[name]) for name, r in ranges.items() if r.unseen_count)
    notes = ("per axis, the 1-D rule on that coordinate's span: angles up to T_a·θ_j count as seen, and a pair "
             "that turned fully in training (T_a·θ_j ≥ 2π) has seen every angle",)
    if found.pairs:
        a, b = (position(cells[row]) for row in found.first)
        reason = f"{trained_words}: new cells collide: {integer(found.pairs)} pairs, first cells {a} and {b}"
        return PropertyResult("extrapolation", "fail", reason, figures, "colliding_pairs", warnings=warnings, notes=notes)
    unique = "the new cells' encodings are distinct from every other cell's"
    if warnings:
        reason = f"{trained_words}: {unique}; but " + "; ".join(warnings)
        return PropertyResult("extrapolation", "warn", reason, figures, "unseen_angle_pairs", warnings=warnings, notes=notes)
    reason = f"{trained_words}: {unique}, and no pair on any axis reaches an angle training did not see"
    return PropertyResult("extrapolation", "pass", reason, figures, "unseen_angle_pairs", notes=notes)


def _axis_warning(name: str, ranges: AngleRanges, overshoot: float) -> str:
    j = ranges.first_unseen_pair
    return (
        f"along {name}, {ranges.unseen_count} of {ranges.inv_freq.size} pairs reach angles training never saw "
        f"(from pair {j}: wavelength {number(ranges.wavelength[j])} > T_{name} = {integer(ranges.train_length)}; angle up to "
        f"{number(ranges.test_max_angle[j])} rad against {number(ranges.train_max_angle[j])} in training; the worst goes "
        f"{number(overshoot, 3)}× past its training range)"
    )
