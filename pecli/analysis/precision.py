"""Precision: what float16, bfloat16 or float32 do to an encoding, against float64.

Two cases are kept apart (DESIGN.md, "Conventions worth getting right"):

``cast``
    the encoding is computed exactly (angles in float64) and the result is rounded to ``dtype``;
``computed``
    positions and inverse frequencies are held in ``compute_dtype``, the angles ``p · θ_i`` are formed
    and rounded there, cos/sin are rounded there, and the result is rounded to ``dtype`` — what a model
    that builds its RoPE cache in bfloat16 does. bfloat16 has 8 significant bits, so it cannot tell 256
    from 257: positions above a few hundred collapse onto each other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pecli.analysis.result import PropertyResult
from pecli.analysis.structure import (
    bias_domain, chunked_task, chunks, collisions_of, has_vectors, rotation_pairs, row_hashes, vectors,
)
from pecli.dtypes import DTYPES, cast
from pecli.errors import PecliError
from pecli.schemes.base import Scheme
from pecli.schemes.frequencies import FrequencyPairs
from pecli.schemes.positions import position_label, position_text

#: dtype the precision check uses when none is given.
DEFAULT_DTYPE = "bfloat16"


@dataclass(frozen=True)
class PrecisionProfile:
    """Errors and collisions of an encoding held in a low-precision dtype.

    Attributes
    ----------
    case:
        ``"cast"`` (exact, then rounded) or ``"computed"`` (angles formed in ``compute_dtype``).
    positions:
        (n,) the positions 0 … L − 1; for bias schemes the relative distances Δ compared.
    error:
        (n,) largest absolute error of each position's row against float64.
    max_error:
        The largest of them.
    collisions:
        Rows equal to an earlier row in the low-precision result (n minus the distinct rows).
    collisions_float64:
        The same count in float64 (collisions the encoding has anyway, like T5's shared buckets).
    first_adjacent_row:
        The first row that equals the previous row in low precision while they differ in float64; None
        if there is none. :attr:`first_adjacent_collision` is its position.
    phase_error:
        (n_pairs,) largest absolute error, over positions, of the angle ``atan2`` reads back from each
        (sin, cos) pair, wrapped to [−π, π] — sinusoidal and rotary schemes only, otherwise None.
    """

    case: str
    dtype: str
    compute_dtype: str | None
    positions: np.ndarray
    error: np.ndarray
    max_error: float
    collisions: int
    collisions_float64: int
    first_adjacent_row: int | None
    phase_error: np.ndarray | None
    note: str | None = None

    @property
    def first_adjacent_collision(self) -> int | list[int] | None:
        """The position of :attr:`first_adjacent_row` (a grid cell's coordinates on a grid), or None."""
        return None if self.first_adjacent_row is None else position_label(self.positions[self.first_adjacent_row])

    @property
    def first_adjacent_previous(self) -> int | list[int] | None:
        """The position of the row before :attr:`first_adjacent_row`, or None."""
        return None if self.first_adjacent_row is None else position_label(self.positions[self.first_adjacent_row - 1])


def _check_dtype(key: str, name: str | None) -> None:
    if name is not None and name not in DTYPES:
        raise PecliError(f"{key}: must be one of {', '.join(DTYPES)}, got {name!r}")


def computed_encoding(scheme: Scheme, pairs: FrequencyPairs, positions: np.ndarray, compute_dtype: str) -> np.ndarray:
    """The encoding with positions, θ_i, angles and cos/sin each rounded to ``compute_dtype`` (float64 out).

    ``angle = round(round(p) · round(θ_i))`` (a float64 product of two numbers of at most 24 significant
    bits is exact, so rounding it once is the correctly rounded low-precision product), then
    ``round(cos(angle))`` and ``round(sin(angle))``, scaled by the pairs' ``attention_scaling`` (rounded too;
    a context-extension scaling of rope sets it, sinusoidal's ``scale``) and by xPos's per-position factors.
    """
    def low(x):
        return cast(np.asarray(x, dtype=np.float64), compute_dtype).astype(np.float64)

    angle = low(low(pairs.coordinates(positions)) * low(pairs.inv_freq))
    sin, cos = low(np.sin(angle)), low(np.cos(angle))
    scaling = low(float(pairs.attention_scaling))
    if pairs.magnitudes is not None:  # xPos: each position's own factor, itself rounded
        scaling = low(scaling * low(pairs.magnitudes(positions)))
    out = np.zeros((len(positions), scheme.width))
    if pairs.sin_first:
        first, second = sin, cos
    else:
        first, second = cos, sin
    if np.any(scaling != 1.0):
        first, second = low(first * scaling), low(second * scaling)
    out[:, pairs.first], out[:, pairs.second] = first, second
    return out


def precision_profile(
    scheme: Scheme, length: int, *, dtype: str = DEFAULT_DTYPE, compute_dtype: str | None = None
) -> PrecisionProfile:
    """Round the encoding of positions 0 … L − 1 to ``dtype`` (case ``cast``) or compute it in
    ``compute_dtype`` (case ``computed``), and compare with float64.

    Parameters
    ----------
    scheme:
        Any registered scheme (bias schemes: the bias of each relative distance).
    length:
        L.
    dtype:
        Output dtype: float16, bfloat16 (through ``ml_dtypes``), float32 or float64.
    compute_dtype:
        If given, the dtype the angles are formed in (schemes without angles: the dtype the values
        are computed in, which is the same as casting to it first).
    """
    _check_dtype("dtype", dtype)
    _check_dtype("compute_dtype", compute_dtype)
    if length < 1:
        raise PecliError("precision needs at least one position")
    note = None
    if has_vectors(scheme):
        positions = scheme.sequence_positions(0, length)
        table = vectors(scheme, length)
        pairs = rotation_pairs(scheme)
    else:
        domain = bias_domain(scheme, length)
        positions, table, pairs = domain.deltas, domain.rows, None
        note = domain.note
    if compute_dtype is not None and pairs is None:
        note = f"no angles to form: computing in {compute_dtype} is rounding the values to it"

    def low_of(rows: slice | np.ndarray) -> np.ndarray:
        """The low-precision rows of the case asked for."""
        if compute_dtype is not None and pairs is not None:
            return cast(computed_encoding(scheme, pairs, positions[rows], compute_dtype), dtype)
        if compute_dtype is not None:
            return cast(cast(table[rows], compute_dtype).astype(np.float64), dtype)
        return cast(table[rows], dtype)

    n, width = len(positions), table.shape[1]
    error = np.zeros(n)
    # each row's hash, low and exact, taken in this pass: the collisions then need no second one
    low_hashes, exact_hashes = np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.uint64)
    phase = np.zeros(pairs.inv_freq.size) if pairs is not None else None
    first, second = (_as_slice(pairs.first), _as_slice(pairs.second)) if pairs is not None else (None, None)
    first_adjacent = None
    parts = list(chunks(n, 4 * max(width, 1)))
    with chunked_task("precision", len(parts)) as bar:
        for part in parts:
            # one row before the chunk, so that adjacent pairs across chunk boundaries are compared too
            rows = slice(max(part.start - 1, 0), part.stop)
            exact, low = table[rows], low_of(rows)
            wide = low.astype(np.float64)
            own = part.start - rows.start
            low_hashes[part], exact_hashes[part] = row_hashes(low[own:]), row_hashes(exact[own:])
            if width:
                with np.errstate(invalid="ignore"):
                    difference = np.subtract(wide[own:], exact[own:])
                np.abs(difference, out=difference)
                largest = difference.max(axis=1)
                largest[np.isnan(largest)] = np.inf  # a NaN or infinite value is an infinite error
                error[part] = largest
            if first_adjacent is None:
                first_adjacent = _first_adjacent_collision(wide, exact, low_hashes[rows], rows.start)
            if pairs is not None and part.stop > part.start:
                a, b = wide[own:, first], wide[own:, second]
                sin, cos = (a, b) if pairs.sin_first else (b, a)
                gap = np.arctan2(sin, cos)  # the angle read back, then its distance to the true one
                gap -= pairs.angles(positions[part])
                gap += np.pi
                np.remainder(gap, 2 * np.pi, out=gap)
                gap -= np.pi
                np.abs(gap, out=gap)
                phase = np.maximum(phase, gap.max(axis=0))
            bar.advance()
    found = collisions_of(n, low_of, width, low_hashes)
    found_exact = collisions_of(n, lambda rows: table[rows], width, exact_hashes)
    return PrecisionProfile(
        "computed" if compute_dtype is not None else "cast", dtype, compute_dtype, positions, error,
        float(error.max()) if error.size else 0.0, found.repeated, found_exact.repeated, first_adjacent,
        phase if n else None, note,
    )


def _first_adjacent_collision(wide: np.ndarray, exact: np.ndarray, hashes: np.ndarray, start: int) -> int | None:
    """The first position of rows ``start …`` equal in low precision (``wide``) to the one before it but
    not in float64 (``exact``); only rows whose low-precision ``hashes`` agree can be equal."""
    k = np.flatnonzero(hashes[1:] == hashes[:-1])
    if not k.size:
        return None
    introduced = k[np.all(wide[k + 1] == wide[k], axis=1) & ~np.all(exact[k + 1] == exact[k], axis=1)]
    return int(start + introduced[0] + 1) if introduced.size else None


def _as_slice(index: np.ndarray) -> slice | np.ndarray:
    """``index`` as a slice when it steps evenly (a view instead of a copy), else unchanged."""
    index = np.asarray(index)
    if index.size < 2:
        return slice(int(index[0]), int(index[0]) + 1) if index.size == 1 else index
    step = int(index[1] - index[0])
    if step > 0 and np.array_equal(np.diff(index), np.full(index.size - 1, step)):
        return slice(int(index[0]), int(index[-1]) + 1, step)
    return index


def check_precision(
    scheme: Scheme, length: int, *, dtype: str | None = None, compute_dtype: str | None = None
) -> PropertyResult:
    """Do positions stay apart in ``dtype``? ``fail`` when it makes distinct positions collide.

    Figures: ``case``, ``max_error`` (against float64), ``collisions`` (new ones, beyond those the
    float64 encoding has), ``first_adjacent_collision`` and, for sinusoidal/rotary schemes,
    ``max_phase_error`` with the pair where it is largest.
    """
    dtype = dtype or DEFAULT_DTYPE
    with np.errstate(over="ignore", invalid="ignore"):  # float16 overflow is reported, not warned about
        profile = precision_profile(scheme, length, dtype=dtype, compute_dtype=compute_dtype)
    new = profile.collisions - profile.collisions_float64
    where = f"computed in {compute_dtype}, stored in {dtype}" if compute_dtype else f"computed in float64, cast to {dtype}"
    figures = {
        "case": profile.case,
        "dtype": dtype,
        "compute_dtype": compute_dtype,
        "positions": length,
        "max_error": profile.max_error,
        "collisions": new,
        "collisions_float64": profile.collisions_float64,
        "first_adjacent_collision": profile.first_adjacent_collision,
    }
    if profile.phase_error is not None:
        worst = int(np.argmax(profile.phase_error))
        figures["max_phase_error"] = float(profile.phase_error[worst])
        figures["max_phase_error_pair"] = worst
        figures["phase_error"] = profile.phase_error.tolist()
    notes = (profile.note,) if profile.note else ()
    unit = "positions" if has_vectors(scheme) else "distances"
    if new > 0 or profile.first_adjacent_collision is not None:
        reason = f"{where}: {new} {unit} collide with an earlier one"
        if profile.first_adjacent_collision is not None:
            p, previous = position_text(profile.first_adjacent_collision), position_text(profile.first_adjacent_previous)
            low = compute_dtype or dtype
            if has_vectors(scheme):
                reason += f"; the first adjacent pair is {previous} and {p} ({low} rounds them to one value)"
            else:
                reason += f"; the first adjacent pair of distances is {previous} and {p}: their biases round to one {low} value"
        reason += f"; largest error {profile.max_error:.3g}"
        if not np.isfinite(profile.max_error):
            reason += f" ({compute_dtype or dtype} overflows: positions beyond its largest finite value)"
        return PropertyResult("precision", "fail", reason, figures, "collisions", notes=notes)
    reason = f"{where}: no new collisions among {len(profile.positions)} {unit}; largest error {profile.max_error:.3g}"
    if profile.phase_error is not None:
        reason += f", largest phase error {figures['max_phase_error']:.3g} rad (pair {figures['max_phase_error_pair']})"
    if not np.isfinite(profile.max_error):  # e.g. xPos factors past the dtype's range: ±inf, yet no collision
        warning = f"some values overflow {compute_dtype or dtype} (stored as ±inf): they are beyond its largest finite value"
        return PropertyResult("precision", "warn", f"{reason}; but {warning}", figures, "max_error", warnings=(warning,), notes=notes)
    return PropertyResult("precision", "pass", reason, figures, "max_error", notes=notes)
