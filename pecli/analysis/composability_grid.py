"""Composability on a grid: for each axis, a fixed linear map takes E(c) to E(c + k·e_a) for every cell.

The 1-D property (:mod:`pecli.analysis.composability`) shifts p by k; on an image's (h, w) grid or a
video's (t, h, w) grid the shift is an offset vector, along one axis (k·e_a) or diagonal (1, 1[, 1]).
For axial RoPE the map is the block rotation ``⊕_i R(Δ[a_i] θ_i)``: the pairs of the shifted axis turn,
the others stay ([Fleetwood], RoPE in n dimensions). For sinusoidal-nd with ``combine="add"``,
``E(h, w) = PE(h) + PE(w)`` and a shift along h would have to be ``R_k`` on the PE(h) term and the
identity on PE(w), from their sum only: no linear map does both (on a square grid ``E(h, w) = E(w, h)``
while ``E(h + k, w) ≠ E(w + k, h)``: no map at all), but the diagonal shift ``R_k (PE(h) + PE(w))`` is one.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from pecli.analysis.cell_pairs import grid_frame, unit_offset
from pecli.analysis.composability import EXACT_FIT_WORK, FIT_SAMPLES, RESIDUAL_TOL, ShiftFits, _rotation_figures
from pecli.analysis.result import PropertyResult
from pecli.analysis.structure import SAMPLE_SEED, blas_pinned, rotation_pairs, rows_at
from pecli.errors import PecliError, PositionError
from pecli.schemes.base import Scheme

from pecli.numbers import number, position

#: Shifts k fitted along each axis when none are given (those that fit in the cells).
DEFAULT_GRID_SHIFTS = (1, 2, 4)


@blas_pinned
def check_grid_composability(scheme: Scheme, *, shifts: Sequence[int] | None = None) -> PropertyResult:
    """Fit ``E(c + Δ) ≈ M_Δ E(c)`` by least squares over the cells where both exist, for each offset Δ.

    Parameters
    ----------
    scheme:
        A vector scheme with cells (rope-nd, sinusoidal-nd, mrope).
    shifts:
        The shifts k along each axis (default 1, 2, 4); those no two cells are apart by are skipped.

    Returns
    -------
    PropertyResult
        ``pass`` when the relative residual ``||Y − X M_Δᵀ||_F / ||Y||_F`` is at most 1e-8 for every
        offset Δ = k·e_a and the diagonal (1, …, 1) (X: the rows of cells c, Y: of c + Δ). The table has
        one row per offset; ``axis_residual`` the largest residual per axis (and ``diagonal``). For schemes
        with frequency pairs, ``rotation_distance`` per offset and ``axis_rotation_distance``: the largest
        ``||M̂_i − R_i||_F / √2`` over pairs i, with R_i the rotation by ``Δ[a_i] θ_i`` of the axis a_i the
        pair turns with.

    Notes
    -----
    As in 1-D: the fit is on every pair of cells while ``pairs × width²`` is at most 2²⁷, otherwise on a
    seeded sample of pairs and measured on as many held-out ones; when the rows of X are linearly
    independent (fewer cells than components) the map is fitted on the first half of the pairs and
    measured on the second.
    """
    frame = grid_frame(scheme, 3, "composability needs at least 3 cells")
    _check_shifts(shifts)
    cells, pairs, rank = frame.cells, rotation_pairs(scheme), frame.rank
    offsets = [(name, unit_offset(rank, axis, k)) for axis, name in enumerate(frame.names) for k in (shifts or DEFAULT_GRID_SHIFTS)]
    offsets.append(("diagonal", np.ones(rank, dtype=np.int64)))
    rows, sampled, held_out, extended = [], False, False, False
    fitted_shifts: set[int] = set()
    for name, offset in offsets:
        i, j = frame.index.pairs(offset)
        if i.size < 2:
            continue
        row, was_sampled, was_extended = _fit(scheme, frame.encoding, cells, (i, j), pairs, offset)
        sampled |= was_sampled
        extended |= was_extended
        held_out |= row["held_out"]
        rows.append({"axis": name, "offset": position(offset), "cell_pairs": int(i.size), **row})
        if name != "diagonal":
            fitted_shifts.add(int(offset.max()))
    unused = [k for k in shifts or () if int(k) not in fitted_shifts]
    if unused:
        raise PecliError(f"shift {number(unused[0], 6)} fits no axis of {scheme.cells_text()} (no two pairs of cells that far apart)")
    if not rows:
        return PropertyResult(
            "composability", "n/a", f"no two pairs of cells in {scheme.cells_text()} are one offset apart: no map to fit",
            {"positions": len(cells)},
        )
    result = _result(rows, len(cells), pairs is not None, sampled, held_out)
    if extended:
        note = ("where the cell pairs one offset apart are fewer than the independent components, M_Δ is fitted "
                "on every cell c against E(c + Δ) encoded past the cells")
        result = dataclasses.replace(result, notes=(*result.notes, note))
    return result


def _check_shifts(shifts: Sequence[int] | None) -> None:
    bad = [k for k in shifts or () if int(k) != k or k < 1]
    if bad:
        raise PecliError(f"shifts must be whole numbers of at least 1, got {bad[0]}")


def _fit(
    scheme: Scheme, encoding: np.ndarray, cells: np.ndarray, pair_rows: tuple[np.ndarray, np.ndarray], pairs,
    offset: np.ndarray,
) -> tuple[dict, bool, bool]:
    """The residual of the fit for one offset (exact or sampled), with the rotation figures; whether it
    was sampled, and whether the shifted rows were encoded past the cells."""
    i, j = pair_rows
    width = encoding.shape[1]
    sampled = i.size * width * width > EXACT_FIT_WORK
    extended = False
    if sampled:  # only the chosen rows are copied
        fit = min(max(FIT_SAMPLES, 2 * width), i.size // 2)
        chosen = np.random.default_rng(SAMPLE_SEED).choice(i.size, size=min(2 * fit, i.size), replace=False)
        x, y = encoding[i[chosen]], encoding[j[chosen]]
        solution = ShiftFits(x[:fit]).solve(y[:fit])
        miss = float(np.linalg.norm(y[fit:] - x[fit:] @ solution))
        residual, held_out = miss / (float(np.linalg.norm(y[fit:])) or 1.0), True
    else:
        x, y = encoding[i], encoding[j]
        fits = ShiftFits(x)
        if fits.underdetermined and _encodes(scheme, cells + offset):  # every cell, its shift encoded past them
            x, y, extended = encoding, rows_at(scheme, cells + offset), True
            fits = ShiftFits(x)
        residual, held_out = fits.residual(y)
    row = {"residual": residual, "held_out": held_out}
    if pairs is not None:
        turns = offset[pairs.axis] if pairs.axis is not None else offset[0]
        rotation = _rotation_figures(x, y, pairs, turns)
        # the block rotation is a linear map too: where it does better than the fit, it is the map
        row["residual"] = min(residual, rotation["rotation_residual"])
        row.update(rotation)
    return row, sampled, extended


def _encodes(scheme: Scheme, positions: np.ndarray) -> bool:
    """Whether the scheme encodes ``positions`` (cells past its own grid or sequence)."""
    try:
        scheme.check_positions(positions)
    except PositionError:
        return False
    return True


def _result(rows: list[dict], positions: int, rotations: bool, sampled: bool, held_out: bool) -> PropertyResult:
    worst = max(rows, key=lambda r: r["residual"])
    per_axis: dict[str, float] = {}
    for row in rows:
        per_axis[row["axis"]] = max(per_axis.get(row["axis"], 0.0), row["residual"])
    figures: dict = {
        "positions": positions,
        "offsets": [row["offset"] for row in rows],
        "max_residual": worst["residual"],
        "axis_residual": per_axis,
    }
    if rotations:
        figures["max_rotation_distance"] = max(r["rotation_distance"] for r in rows)
        distance: dict[str, float] = {}
        for row in rows:
            distance[row["axis"]] = max(distance.get(row["axis"], 0.0), row["rotation_distance"])
        figures["axis_rotation_distance"] = distance
        figures["max_rotation_residual"] = max(r["rotation_residual"] for r in rows)
    offsets = ", ".join(row["offset"] for row in rows)
    if worst["residual"] <= RESIDUAL_TOL:
        verdict = "pass"
        reason = f"E(c + Δ) = M_Δ E(c) holds to a relative residual of {number(worst['residual'], 2)} for Δ = {offsets}"
        if rotations:
            reason += (
                f"; the fitted pair maps are the rotations of each pair's own axis within "
                f"{number(figures['max_rotation_distance'], 2)}"
            )
    else:
        verdict = "fail"
        failing = [row for row in rows if row["residual"] > RESIDUAL_TOL]
        reason = (
            f"no linear map takes E(c) to E(c + {worst['offset']}): the best least-squares fit leaves a relative "
            f"residual of {number(worst['residual'], 3)}" + (" on held-out cells" if worst["held_out"] else "")
            + (f" (fails for {len(failing)} of {len(rows)} offsets)" if len(failing) > 1 else "")
        )
        holding = [row["offset"] for row in rows if row["residual"] <= RESIDUAL_TOL]
        if holding:
            reason += f"; it holds for {', '.join(holding)}"
    notes = []
    if sampled:
        notes.append(
            f"where pairs × width² passes {EXACT_FIT_WORK:,}, M_Δ is fitted on {FIT_SAMPLES} seeded cell pairs "
            "(at least 2 per component) and measured on as many held-out ones"
        )
    elif held_out:
        notes.append(
            "underdetermined for some offsets (fewer cell pairs than independent components): M_Δ fitted on "
            "the first half of the pairs and measured on the second half"
            + ("; where the block rotation of the pairs leaves a smaller residual, that one is reported" if rotations else "")
        )
    return PropertyResult(
        "composability", verdict, reason, figures, "max_residual", table=rows, sampled=sampled, notes=tuple(notes)
    )


def grid_composability_footprint(scheme: Scheme, cells: int) -> tuple[int, int]:
    """(bytes of the encoding read, bytes of the check's own work) on ``cells`` cells, before any work.

    The work: the cell index and one offset's pairs (a few int64 per cell), and for the pairs fitted
    (every pair up to 2²⁷ / width² of them, else the sample) X, Y, Q, the fitted rows and the pair
    columns of the rotation figures: about eight (pairs, width) arrays.
    """
    width = max(int(scheme.width), 1)
    sample = 2 * max(FIT_SAMPLES, 2 * width)
    fitted = min(cells, max(EXACT_FIT_WORK // (width * width) + 1, sample))
    return 8 * cells * width, 8 * 8 * fitted * width + 8 * (int(scheme.position_rank) + 6) * cells
