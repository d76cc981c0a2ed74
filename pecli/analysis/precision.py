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
from pecli.analysis.encoding_pass import Accumulator, Block, EncodingRows, RowHashes, Scratch, encoding_rows, sampled_hashes
from pecli.analysis.structure import bias_domain, collisions_of, has_vectors, rotation_pairs, turning
from pecli.dtypes import DTYPES, cast
from pecli.errors import PecliError
from pecli.schemes.base import Scheme
from pecli.schemes.frequencies import FrequencyPairs
from pecli.schemes.positions import position_label
from pecli.numbers import integer, number, position

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
        (sin, cos) pair against the angle ``±p·θ_i`` it was made from, wrapped to [−π, π] — sinusoidal
        and rotary schemes only, otherwise None.
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
    ``round(cos(angle))`` and ``round(sin(angle))`` (the sine negated for pairs that turn by −pθ_i),
    scaled by the pairs' ``attention_scaling`` (rounded too;
    a context-extension scaling of rope sets it, sinusoidal's ``scale``) and by xPos's per-position factors.
    """
    def low(x):
        return cast(np.asarray(x, dtype=np.float64), compute_dtype).astype(np.float64)

    angle = low(low(pairs.coordinates(positions)) * low(pairs.inv_freq))
    sin, cos = low(np.sin(angle)), low(np.cos(angle))
    if turning(scheme) < 0:  # pairs turning by −pθ_i: sin(−a) = −sin(a), rounded alike
        np.negative(sin, out=sin)
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
        rows = encoding_rows(scheme, length)
        wanted = precision_rows(scheme, length, dtype, compute_dtype)
    else:
        domain = bias_domain(scheme, length)
        rows, note = EncodingRows.of_table(scheme, domain.rows), domain.note
        wanted = [RoundingErrors(Rounding(scheme, domain.deltas, dtype, compute_dtype), rows.length), RowHashes(rows.length)]
    rounding = wanted[0].rounding
    if compute_dtype is not None and rounding.pairs is None:
        note = f"no angles to form: computing in {compute_dtype} is rounding the values to it"
    errors, _ = rows.measure(*wanted, label="precision")
    n = rows.length
    found = collisions_of(n, lambda index: rounding.low(rows[index], index), rows.width, errors.low_hashes)
    found_exact = rows.collisions("float64")
    return PrecisionProfile(
        "computed" if compute_dtype is not None else "cast", dtype, compute_dtype, rounding.positions, errors.error,
        float(errors.error.max()) if errors.error.size else 0.0, found.repeated, found_exact.repeated,
        errors.first_adjacent, errors.phase if n else None, note,
    )


def precision_rows(scheme: Scheme, length: int, dtype: str | None, compute_dtype: str | None) -> list[Accumulator]:
    """What precision measures in the pass over a vector scheme's rows: each row's rounding errors in
    ``dtype`` (computed in ``compute_dtype``), and the rows' float64 hashes."""
    rounding = Rounding(scheme, scheme.sequence_positions(0, length), dtype or DEFAULT_DTYPE, compute_dtype)
    return [RoundingErrors(rounding, length), RowHashes(length, "float64")]


class Rounding:
    """How the low-precision rows of the case asked for are made from the float64 ones."""

    def __init__(self, scheme: Scheme, positions: np.ndarray, dtype: str, compute_dtype: str | None) -> None:
        self.scheme, self.positions, self.dtype, self.compute_dtype = scheme, positions, dtype, compute_dtype
        self.pairs = rotation_pairs(scheme) if has_vectors(scheme) else None
        #: +1, or −1 for pairs that turn by −pθ_i: the sign of the angle the rows were made from
        self.sign = turning(scheme)

    def low(self, exact: np.ndarray, rows: slice | np.ndarray) -> np.ndarray:
        """Rows ``rows`` in low precision, from their float64 values ``exact``."""
        if self.compute_dtype is not None and self.pairs is not None:
            return cast(computed_encoding(self.scheme, self.pairs, self.positions[rows], self.compute_dtype), self.dtype)
        if self.compute_dtype is not None:
            return cast(cast(exact, self.compute_dtype).astype(np.float64), self.dtype)
        return cast(exact, self.dtype)


@dataclass
class RowErrors:
    """Per row, the largest error in low precision and the hash of the low-precision row; per frequency
    pair, the largest phase error; the first adjacent pair of rows that low precision makes equal."""

    error: np.ndarray
    low_hashes: np.ndarray
    phase: np.ndarray | None
    first_adjacent: int | None = None


class RoundingErrors(Accumulator):
    """:class:`RowErrors` of the rows, block by block."""

    cost = 8.8  # the cast, its errors and each pair's phase (arctan2): 3.0 CPU seconds at 2^22 × 128, a hash 0.34

    def __init__(self, rounding: Rounding, n: int) -> None:
        self.key = ("precision", rounding.dtype, rounding.compute_dtype)
        self.rounding = rounding
        pairs = rounding.pairs
        phase = np.zeros(pairs.inv_freq.size) if pairs is not None else None
        self.out = RowErrors(np.zeros(n), np.empty(n, dtype=np.uint64), phase)
        self.pair_columns = (_as_slice(pairs.first), _as_slice(pairs.second)) if pairs is not None else None
        self._last: tuple[np.ndarray, np.ndarray] | None = None  # the previous row: (exact, low widened)
        # the widened rows; their differences, then the phases; the phases' wrapping (reused block to block)
        self.wide, self.difference, self.wrapping = Scratch(), Scratch(), Scratch()
        self.shifted, self.angles = Scratch(), Scratch()

    def add(self, block: Block) -> None:
        part = slice(block.start, block.stop)
        with np.errstate(over="ignore", invalid="ignore"):  # past the dtype's range: reported, not warned about
            exact, low = block.values, self.rounding.low(block.values, part)
        wide, difference = self.wide(exact.shape), self.difference(exact.shape)
        np.copyto(wide, low)  # widened exactly: equal low-precision rows are equal here, and only they
        out = self.out
        out.low_hashes[part] = sampled_hashes(wide)
        if exact.shape[1]:
            with np.errstate(invalid="ignore"):
                np.subtract(wide, exact, out=difference)
            np.abs(difference, out=difference)
            largest = difference.max(axis=1)
            largest[np.isnan(largest)] = np.inf  # a NaN or infinite value is an infinite error
            out.error[part] = largest
        if out.first_adjacent is None and self._last is not None and _introduced(self._last[1], wide[0], self._last[0], exact[0]):
            out.first_adjacent = block.start
        if out.first_adjacent is None:
            out.first_adjacent = _first_adjacent_collision(wide, exact, out.low_hashes[part], block.start)
        self._last = (exact[-1], wide[-1].copy())  # the scratch rows are the next block's
        if self.pair_columns is not None:
            self._phase(wide, part, difference)

    def _phase(self, wide: np.ndarray, part: slice, scratch: np.ndarray) -> None:
        pairs, (first, second) = self.rounding.pairs, self.pair_columns
        a, b = wide[:, first], wide[:, second]
        sin, cos = (a, b) if pairs.sin_first else (b, a)
        shifted, angles = self.shifted(sin.shape), self.angles(sin.shape)  # contiguous, reused
        np.arctan2(sin, cos, out=shifted)  # the angle read back, then its distance to the true one
        positions = self.rounding.positions[part]
        if positions.ndim == 1:  # pairs.angles, written in place: p·θ_i, float64
            np.multiply(positions.astype(np.float64)[:, None], pairs.inv_freq, out=angles)
        else:
            angles[...] = pairs.angles(positions)
        if self.rounding.sign < 0:
            np.negative(angles, out=angles)
        shifted -= angles
        shifted += np.pi
        # |shifted| is at most π plus the largest |angle| plus π: the angles' extremes are the block's
        # first or last position's, times the largest θ_i (no pass over the values for it)
        reach = float(np.max(np.abs(positions))) * float(np.max(np.abs(pairs.inv_freq), initial=0.0)) if positions.size else 0.0
        self.out.phase = np.maximum(self.out.phase, wrapped_max(shifted, self.wrapping(shifted.shape), largest=reach + 2 * np.pi))

    def result(self) -> RowErrors:
        self.wide, self.difference, self.wrapping = Scratch(), Scratch(), Scratch()
        self.shifted, self.angles = Scratch(), Scratch()
        return self.out


#: Bound on the rounding of :func:`wrapped_max`'s estimate of ``remainder(t, 2π)``, relative to the
#: largest |t| (plus an absolute floor): the product ``2π·k`` and the two subtractions, each within half
#: a float64 unit of a number at most |t| + 2π.
WRAP_ROUNDING = 2.0**-49


def wrapped_max(shifted: np.ndarray, scratch: np.ndarray | None = None, largest: float | None = None) -> np.ndarray:
    """``np.abs(np.remainder(shifted, 2π) − π).max(axis=0)`` (each angle's distance wrapped to [−π, π]),
    bit for bit, with ``np.remainder`` (about 10 ns a value here) evaluated on few values.

    ``t − 2π·floor(t/2π)`` estimates each remainder within :data:`WRAP_ROUNDING`·max|t| (a wrong floor
    near a multiple of 2π moves the estimate to the other end of the range, where the distance to π
    differs by as little); each column's largest distance is then among the values whose estimate is
    within twice that of the column's largest estimate, and only those are wrapped exactly. Columns
    holding a value that is not finite are wrapped in full. ``scratch``: an array of ``shifted``'s shape
    for the estimates (a pass reuses one). ``largest``: a bound on max|t| known beforehand (a larger
    bound only wraps more values exactly); None: measured.
    """
    two_pi = 2 * np.pi
    with np.errstate(invalid="ignore", over="ignore"):  # values not finite are wrapped as the definition does, below
        estimate = np.multiply(shifted, 1 / two_pi, out=scratch)
        np.floor(estimate, out=estimate)
        estimate *= two_pi
        np.subtract(shifted, estimate, out=estimate)
        estimate -= np.pi
        np.abs(estimate, out=estimate)
        best = estimate.max(axis=0)
    finite = np.isfinite(best)
    if not finite.all():  # NaN or ±inf somewhere: those columns as the definition computes them
        out = np.full(shifted.shape[1], -np.inf)
        whole = np.abs(np.remainder(shifted[:, ~finite], two_pi) - np.pi).max(axis=0)
        out[~finite] = whole
        if finite.any():
            out[finite] = wrapped_max(shifted[:, finite])
        return out
    if largest is None:
        largest = max(float(shifted.max()), -float(shifted.min()))  # max |t|, with no array of |t|
    slack = 2 * WRAP_ROUNDING * (largest + two_pi)
    rows, columns = np.nonzero(estimate >= best - slack)
    exact = np.remainder(shifted[rows, columns], two_pi)
    exact -= np.pi
    np.abs(exact, out=exact)
    out = np.full(shifted.shape[1], -np.inf)
    np.maximum.at(out, columns, exact)
    return out


def _introduced(wide_before: np.ndarray, wide: np.ndarray, exact_before: np.ndarray, exact: np.ndarray) -> bool:
    """Whether a row equals the one before it in low precision but not in float64."""
    return bool(np.all(wide == wide_before)) and not bool(np.all(exact == exact_before))


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
        reason = f"{where}: {integer(new)} {unit} collide with an earlier one"
        if profile.first_adjacent_collision is not None:
            p, previous = position(profile.first_adjacent_collision), position(profile.first_adjacent_previous)
            low = compute_dtype or dtype
            if has_vectors(scheme):
                reason += f"; the first adjacent pair is {previous} and {p} ({low} rounds them to one value)"
            else:
                reason += f"; the first adjacent pair of distances is {previous} and {p}: their biases round to one {low} value"
        reason += f"; largest error {number(profile.max_error, 3)}"
        if not np.isfinite(profile.max_error):
            reason += f" ({compute_dtype or dtype} overflows: positions beyond its largest finite value)"
        return PropertyResult("precision", "fail", reason, figures, "collisions", notes=notes)
    reason = f"{where}: no new collisions among {integer(len(profile.positions))} {unit}; largest error {number(profile.max_error, 3)}"
    if profile.phase_error is not None:
        reason += f", largest phase error {number(figures['max_phase_error'], 3)} rad (pair {figures['max_phase_error_pair']})"
    if not np.isfinite(profile.max_error):  # e.g. xPos factors past the dtype's range: ±inf, yet no collision
        warning = f"some values overflow {compute_dtype or dtype} (stored as ±inf): they are beyond its largest finite value"
        return PropertyResult("precision", "warn", f"{reason}; but {warning}", figures, "max_error", warnings=(warning,), notes=notes)
    return PropertyResult("precision", "pass", reason, figures, "max_error", notes=notes)
