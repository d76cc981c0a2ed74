"""Composability: a fixed linear map takes the encoding of p to that of p + k, for every p.

[Fleetwood] (and [EulerBlind]) derive it for the sinusoidal encoding: ``PE_{p+k} = M_k PE_p`` with ``M_k`` block
diagonal, each block ``[[cos ω_i k, sin ω_i k], [−sin ω_i k, cos ω_i k]]`` — a rotation.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from pecli.analysis.result import PropertyResult
from pecli.analysis.structure import (
    SAMPLE_SEED, blas_pinned, has_vectors, rotation_blocks, rotation_pairs, rows_at, turning, vectors,
)
from pecli.errors import PecliError, PositionError
from pecli.schemes.base import Scheme
from pecli.numbers import integer, number

#: Shifts k fitted when none are given.
DEFAULT_SHIFTS = (1, 2, 4, 8, 64)
#: Relative residual at or below which the fit counts as exact (numerical precision).
RESIDUAL_TOL = 1e-8
#: Least-squares work (fitted rows × width²) up to which M_k is fitted on every position.
EXACT_FIT_WORK = 1 << 27
#: Positions (at least; 2 per component for wide encodings) M_k is fitted on above that, and as many
#: held-out positions it is measured on.
FIT_SAMPLES = 2048


@blas_pinned
def check_composability(scheme: Scheme, length: int, *, shifts: Sequence[int] | None = None) -> PropertyResult:
    """Fit ``E_{p+k} ≈ M_k E_p`` by least squares over all p and report the relative residual.

    Parameters
    ----------
    scheme:
        Any registered scheme.
    length:
        Positions 0 … L − 1 (extended, for schemes that can encode more, when fewer than twice the
        width: with fewer positions than components any table fits exactly).
    shifts:
        The shifts k (default 1, 2, 4, 8, 64, those below L − 1).

    Returns
    -------
    PropertyResult
        ``pass`` when the relative residual ``||Y − X M_kᵀ||_F / ||Y||_F`` is at most 1e-8 for every k
        (X = E[0:L−k], Y = E[k:L]). For sinusoidal and rotary schemes the figures add
        ``rotation_distance``: the largest ``||M̂_i − R_i(k)||_F / √2`` over frequency pairs i, where
        M̂_i is the 2×2 map fitted on pair i alone and R_i(k) the rotation of [Fleetwood] and [EulerBlind], and
        ``rotation_residual``, the residual of [Fleetwood]'s block-diagonal rotation itself.

    Notes
    -----
    When the fit is underdetermined (the rows of X are linearly independent, as for a random table with
    max_length ≤ d) and the scheme cannot encode more positions, M_k is fitted on the first half of the
    rows and judged on the second half: a map that only interpolates its own rows is not a shift map.
    Bias schemes have no per-position vectors: their logit term is a function of Δ = n − m by
    construction, which is checked exactly (``S(m + k, n + k) = S(m, n)``).
    """
    if length < 3:
        raise PecliError("composability needs at least 3 positions")
    shifts = _shifts(shifts, length)
    if not has_vectors(scheme):
        return _bias_composability(scheme, length, shifts)
    notes: list[str] = []
    pairs = rotation_pairs(scheme)
    if (length - max(shifts)) * scheme.width**2 > EXACT_FIT_WORK:
        return _sampled_composability(scheme, length, shifts, pairs)
    fit_length = length
    rows = _fit_rows(scheme, fit_length, shifts, pairs)
    wanted = 2 * scheme.width + max(shifts) + 1
    if any(r["held_out"] for r in rows) and wanted > length:
        try:
            scheme.check_positions(np.arange(length, wanted))
        except PositionError:
            pass
        else:  # more positions than independent components make the fit determined
            fit_length = wanted
            rows = _fit_rows(scheme, fit_length, shifts, pairs)
            notes.append(f"fitted over positions 0 … {integer(wanted - 1)}: with only {integer(length)}, any table fits exactly")
    if any(r["held_out"] for r in rows):
        notes.append(
            "underdetermined (fewer positions than independent components): M_k fitted on the first half of "
            "the positions and measured on the second half"
        )
    return _result(rows, fit_length, shifts, pairs, notes, sampled=False)


def _result(rows: list[dict], positions: int, shifts: tuple[int, ...], pairs, notes: list[str], *, sampled: bool) -> PropertyResult:
    """The verdict and reason from one row of figures per shift."""
    worst = max(rows, key=lambda r: r["residual"])
    figures: dict = {"positions": positions, "shifts": list(shifts), "max_residual": worst["residual"]}
    if pairs is not None:
        figures["max_rotation_distance"] = max(r["rotation_distance"] for r in rows)
        figures["max_rotation_residual"] = max(r["rotation_residual"] for r in rows)
    if worst["residual"] <= RESIDUAL_TOL:
        reason = f"E_(p+k) = M_k E_p holds to a relative residual of {number(worst['residual'], 2)} for k = {_join(shifts)}"
        if pairs is not None:
            reason += (
                f"; the fitted pair maps are the block-diagonal rotation of [Fleetwood] within "
                f"{number(figures['max_rotation_distance'], 2)}"
            )
        verdict = "pass"
    else:
        reason = (
            f"no linear map takes E_p to E_(p+{worst['shift']}): the best least-squares fit leaves a relative "
            f"residual of {number(worst['residual'], 3)}" + (" on held-out positions" if worst["held_out"] else "")
        )
        verdict = "fail"
    return PropertyResult(
        "composability", verdict, reason, figures, "max_residual", table=rows, sampled=sampled, notes=tuple(notes)
    )


def _sampled_composability(scheme: Scheme, length: int, shifts: tuple[int, ...], pairs) -> PropertyResult:
    """Fit M_k on a seeded sample of positions and measure it on as many held-out ones.

    M_k is d × d, so a fit on n ≫ d positions whose rows span the encoding's space determines it; the
    held-out positions then test it on rows it was not fitted to. Work O(n · d²) per shift, whatever L;
    only the sampled rows (and their shifts) are encoded.
    """
    rows_used = length - max(shifts)
    # as many held-out positions as fitted ones: with fewer positions than that, half of them each
    fit = min(max(FIT_SAMPLES, 2 * scheme.width), rows_used // 2)
    chosen = np.random.default_rng(SAMPLE_SEED).choice(rows_used, size=min(2 * fit, rows_used), replace=False)
    fitted, held = np.sort(chosen[:fit]), np.sort(chosen[fit:])
    needed = np.unique(np.concatenate([np.concatenate([fitted, held]) + k for k in (0, *shifts)]))
    table = rows_at(scheme, needed)  # one encode call: a learned table is built once

    def at(positions: np.ndarray) -> np.ndarray:
        return table[np.searchsorted(needed, positions)]

    x_fit, x_held = at(fitted), at(held)
    fits = ShiftFits(x_fit)
    rows = []
    for k in shifts:
        y_fit, y_held = at(fitted + k), at(held + k)
        solution = fits.solve(y_fit)
        miss = float(np.linalg.norm(y_held - x_held @ solution))
        row = {"shift": k, "residual": miss / (float(np.linalg.norm(y_held)) or 1.0), "held_out": True}
        if pairs is not None:
            row.update(_rotation_figures(np.concatenate([x_fit, x_held]), np.concatenate([y_fit, y_held]), pairs, turning(scheme) * k))
        rows.append(row)
    notes = [
        f"M_k fitted on {integer(fitted.size)} seeded positions and measured on {integer(held.size)} held-out ones "
        f"(of {integer(rows_used)}); the pair maps are fitted on both sets"
    ]
    if fitted.size < scheme.width:
        notes.append(f"fewer fitted positions than components ({scheme.width}): a map that only reproduces them "
                     "does not carry over to the held-out ones")
    return _result(rows, length, shifts, pairs, notes, sampled=True)


def _fit_rows(scheme: Scheme, fit_length: int, shifts: tuple[int, ...], pairs) -> list[dict]:
    """One row of figures per shift; every fit is over the same positions p = 0 … fit_length − 1 − max(k)."""
    encoding = vectors(scheme, fit_length)
    rows_used = fit_length - max(shifts)
    fits = ShiftFits(encoding[:rows_used])
    rows = []
    for k in shifts:
        residual, held_out = fits.residual(encoding[k : k + rows_used])
        row = {"shift": k, "residual": residual, "held_out": held_out}
        if pairs is not None:
            row.update(_rotation_figures(encoding[:-k], encoding[k:], pairs, turning(scheme) * k))
        rows.append(row)
    return rows


class ShiftFits:
    """Least squares ``Y ≈ X Mᵀ`` for several right-hand sides Y with one factorisation of X.

    ``X = Q R`` (Householder), ``R = U S Vᵀ``; singular values below ``max(shape) · eps · s_max`` are
    dropped and the minimum-norm solution taken, as numpy's ``lstsq`` does.
    """

    def __init__(self, x: np.ndarray) -> None:
        self.x = x
        self._half: ShiftFits | None = None
        self.q, r = np.linalg.qr(x)
        self.u, self.s, self.vt = np.linalg.svd(r, full_matrices=False)
        cutoff = max(x.shape) * np.finfo(np.float64).eps * (self.s[0] if self.s.size else 0.0)
        self.rank = int(np.count_nonzero(self.s > cutoff))

    @property
    def underdetermined(self) -> bool:
        """True when the rows of X are independent: then any Y is fitted exactly and proves nothing."""
        return self.rank >= self.x.shape[0]

    def solve(self, y: np.ndarray) -> np.ndarray:
        r = self.rank
        projected = (y.T @ self.q).T  # Qᵀ Y, written so that BLAS sees the long axis as the inner one
        return self.vt[:r].T @ ((self.u[:, :r].T @ projected) / self.s[:r, None])

    def residual(self, y: np.ndarray) -> tuple[float, bool]:
        """Relative residual ``||Y − X M̂ᵀ||_F / ||Y||_F``; held out (fit on the first half of the rows,
        measured on the second) when the fit is underdetermined."""
        if not self.underdetermined:
            fitted = self.x @ self.solve(y)
            return float(np.linalg.norm(y - fitted)) / (float(np.linalg.norm(y)) or 1.0), False
        half = self.x.shape[0] // 2
        if self._half is None:
            self._half = ShiftFits(self.x[:half])
        solution = self._half.solve(y[:half])
        rest = y[half:]
        return float(np.linalg.norm(rest - self.x[half:] @ solution)) / (float(np.linalg.norm(rest)) or 1.0), True


def _shifts(shifts: Sequence[int] | None, length: int) -> tuple[int, ...]:
    if shifts:
        bad = [k for k in shifts if int(k) != k or k < 1 or k > length - 2]
        if bad:
            raise PecliError(f"shifts must be whole numbers in 1 … {length - 2} (L − 2), got {bad[0]}")
        return tuple(sorted({int(k) for k in shifts}))
    chosen = tuple(k for k in DEFAULT_SHIFTS if k <= length - 2)
    return chosen or (1,)


def _join(values: Sequence[int]) -> str:
    return ", ".join(str(v) for v in values)


def _rotation_figures(x: np.ndarray, y: np.ndarray, pairs, shift: float) -> dict:
    """Per-pair 2×2 fits against the rotation blocks, and the residual of the rotation itself.

    ``x`` holds rows E_p and ``y`` the rows E_(p+k) of the same positions p; ``shift`` is the angle
    the pairs turn by from one to the other, in units of θ_i: k, or −k for pairs that turn by −pθ_i
    (:func:`~pecli.analysis.structure.turning`).
    """
    rotation = rotation_blocks(pairs, shift)  # (n, 2, 2), acting on column vectors (first, second)
    xa, xb = x[:, pairs.first], x[:, pairs.second]  # (rows, n)
    ya, yb = y[:, pairs.first], y[:, pairs.second]

    def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.einsum("rn,rn->n", a, b)

    gram = np.stack([np.stack([dot(xa, xa), dot(xa, xb)], -1), np.stack([dot(xb, xa), dot(xb, xb)], -1)], -2)
    cross = np.stack([np.stack([dot(xa, ya), dot(xa, yb)], -1), np.stack([dot(xb, ya), dot(xb, yb)], -1)], -2)
    determinant = np.linalg.det(gram)
    scale = np.einsum("naa->n", gram) ** 2
    usable = determinant > 1e-12 * scale  # pairs whose two columns are independent (θ_i ≠ 0)
    distance = 0.0
    if usable.any():
        fitted = np.transpose(np.linalg.solve(gram[usable], cross[usable]), (0, 2, 1))  # M̂ with y = M̂ x
        distance = float(np.max(np.linalg.norm(fitted - rotation[usable], axis=(1, 2)) / np.sqrt(2.0)))
    pa = rotation[:, 0, 0] * xa + rotation[:, 0, 1] * xb
    pb = rotation[:, 1, 0] * xa + rotation[:, 1, 1] * xb
    miss = np.sqrt(np.sum((ya - pa) ** 2) + np.sum((yb - pb) ** 2))
    residual = float(miss) / (float(np.sqrt(np.sum(ya**2) + np.sum(yb**2))) or 1.0)
    return {"rotation_distance": distance, "rotation_residual": residual, "pairs_compared": int(usable.sum())}


def _bias_composability(scheme: Scheme, length: int, shifts: tuple[int, ...]) -> PropertyResult:
    deltas = np.arange(-(length - 1), length)
    base = np.asarray(scheme.score(np.zeros_like(deltas) + (length - 1), deltas + (length - 1)), dtype=np.float64)
    worst = 0.0
    for k in shifts:
        moved = np.asarray(scheme.score(np.zeros_like(deltas) + (length - 1 + k), deltas + (length - 1 + k)))
        worst = max(worst, float(np.max(np.abs(moved - base))))
    scale = float(np.abs(base).max()) or 1.0
    figures = {"distances": int(deltas.size), "shifts": list(shifts), "max_residual": worst / scale}
    if worst / scale <= RESIDUAL_TOL:
        reason = (
            "no per-position vector: the logit term is a function of Δ = n − m, unchanged when both positions "
            f"shift by k = {_join(shifts)} (largest change {number(worst, 2)})"
        )
        return PropertyResult("composability", "pass", reason, figures, "max_residual")
    reason = f"the logit term changes by up to {number(worst, 3)} when both positions shift"
    return PropertyResult("composability", "fail", reason, figures, "max_residual")
