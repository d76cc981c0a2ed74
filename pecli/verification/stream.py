"""One pass over a user's cos/sin arrays, block by block, against one or more candidate references.

The arrays are read a block of rows at a time (:class:`Rows`: an array in memory, or a file read in
place by the command line), so the memory held is a few blocks whatever the length.

Tolerance
---------
Each value is held to how it is **stored** and to the rounding of the **angles of a float32 pipeline**:

``tol(p, i) = min(CAP·s, (ANGLE_ULPS·ε_a·|p|·θ_i + VALUE_ULPS·ε_v + ε_w)·max(1, s))``

- ``ε_v`` is the unit in the last place at 1.0 of the precision the values are stored in: float64
  2⁻⁵², float32 2⁻²³, float16 2⁻¹⁰, bfloat16 2⁻⁷. Arrays stored wider than their values (float32 arrays
  whose values are all bfloat16 or float16 numbers, float64 arrays of float32 numbers) are held to the
  narrower precision: a bfloat16 model's cos and sin saved widened to float32 are bfloat16 values.
- ``ε_a`` is the precision the angles ``p·θ_i`` of a correct pipeline are formed in: float32 (2⁻²³)
  for values stored in float32 or narrower — transformers forms them in float32 whatever the model's
  dtype, then casts cos and sin — and float64 for float64 values. :data:`ANGLE_ULPS` units of
  ``p·θ_i`` cover inverse frequencies a few units off after their scaling, the position and the
  product rounded. Angles formed in float16 or bfloat16 are not allowed for: that is a bug
  (``precision``), tested as a cause.
- ``ε_w`` is the rounding of the comparison itself: 2⁻²³ when it runs in float32 (values stored in
  float32 or narrower: the reference rounded to float32, then scaled), 10⁻¹² in float64 (the
  reference's cos and sin by angle addition are within a few float64 ulps).
- ``s`` is the attention scaling of the reference (cos and sin are ``s·cos``, ``s·sin``).
- ``CAP`` bounds the allowance well under the largest possible error (2 s, cos or sin of the opposite
  angle): past the position where float32 angles may be off by half a radian, no growth of the
  tolerance can make all-zero or random values pass.

The largest |Δ| of a pass is located in the working precision (for float32 values, to within 2⁻²⁴ of
the float64 difference); the report then recomputes that element's error in float64.

Non-finite values never pass: a NaN or ±inf in a block (the user's or a candidate's, e.g. float16
angles overflowing past 65,504) makes that block a mismatch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import numpy as np

from pecli.errors import PecliError

#: Units in the last place of ``p·θ_i`` (in the angles' precision) a correct pipeline may be off by.
ANGLE_ULPS = 8.0
#: Offsets tried by the ``position-offset`` hypothesis (a rotary and an M-RoPE table).
OFFSETS = (1, -1, 2, -2, 3, -3)
#: Units in the last place at 1.0 of the stored precision a value may be off by (rounded once when
#: stored, after cos and sin computed a little wider).
VALUE_ULPS = 1.0
#: The largest allowance, as a fraction of the amplitude s: well under the largest possible error 2s.
CAP = 0.5
#: Units in the last place at 1.0 of each precision the values can be stored in.
EPS = {"float64": 2.0**-52, "float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}
#: Values per array read and compared at once (a block of rows).
BLOCK_VALUES = 1 << 19


class Rows(Protocol):
    """A (P, W) array read a block of rows at a time."""

    shape: tuple[int, ...]
    dtype: np.dtype

    def read(self, start: int, stop: int) -> np.ndarray: ...


class ArrayRows:
    """:class:`Rows` over an array already in memory (or memory-mapped)."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array
        self.shape, self.dtype = array.shape, array.dtype

    def read(self, start: int, stop: int) -> np.ndarray:
        return self.array[start:stop]


def as_rows(values) -> Rows:
    """``values`` as :class:`Rows`: kept when it already reads blocks, else viewed as an array (a
    leading batch of one, as transformers returns cos and sin, dropped)."""
    if hasattr(values, "read") and hasattr(values, "shape") and hasattr(values, "dtype"):
        return values
    array = np.asarray(values)
    while array.ndim > 2 and array.shape[0] == 1:
        array = array[0]
    return ArrayRows(array)


def is_bfloat16(dtype: np.dtype) -> bool:
    """ml_dtypes' bfloat16, or the raw 2-byte type NumPy saves it as (``<V2`` in an .npy header)."""
    return dtype.name == "bfloat16" or (dtype.kind == "V" and dtype.itemsize == 2 and dtype.fields is None)


def widened(block: np.ndarray) -> np.ndarray:
    """A block of values as float32 (bfloat16, float16, integers: exactly) or float64, its NaNs quiet
    (:func:`pecli.io.quiet_nans`)."""
    from pecli.io import quiet_nans

    with np.errstate(invalid="ignore"):  # a signalling NaN widened is a quiet NaN, no warning
        if is_bfloat16(block.dtype):
            import ml_dtypes

            return block.view(ml_dtypes.bfloat16).astype(np.float32)
        if block.dtype.kind == "f" and block.dtype.itemsize <= 4:
            return quiet_nans(block.astype(np.float32, copy=False))
        return quiet_nans(block.astype(np.float64, copy=False))


def representable(block: np.ndarray, precision: str) -> bool:
    """Whether every value of a widened block is a number of ``precision`` (NaN never is)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if precision == "bfloat16" and block.dtype == np.float32:
            return not bool((block.view(np.uint32) & 0xFFFF).any())
        if precision in ("float64",) or (precision == "float32" and block.dtype == np.float32):
            return True
        from pecli.dtypes import numpy_dtype

        return bool(np.array_equal(block.astype(numpy_dtype(precision)).astype(block.dtype), block, equal_nan=True))


def stored_precision(dtype: np.dtype, first: np.ndarray) -> str:
    """The precision the values are stored in: the dtype's, or a narrower one that holds every value of
    the first block (checked again on every block: :class:`Wider`)."""
    own = own_precision(dtype)
    if own == "bfloat16" or dtype.kind in "iub":
        return own
    block = widened(first)
    for name in {"float64": ("bfloat16", "float16", "float32"), "float32": ("bfloat16", "float16")}.get(own, ()):
        if first.size and representable(block, name):
            return name
    return own


def own_precision(dtype: np.dtype) -> str:
    """The precision of the dtype itself (integers: float64)."""
    if is_bfloat16(dtype):
        return "bfloat16"
    return {2: "float16", 4: "float32"}.get(dtype.itemsize, "float64") if dtype.kind == "f" else "float64"


class Wider(Exception):
    """A block holds values the precision recognised on the first block cannot: start again."""

    def __init__(self, precision: str) -> None:
        self.precision = precision


def angle_eps(precision: str) -> float:
    """The precision a correct pipeline forms the angles in: float32, or float64 for float64 values."""
    return EPS["float64"] if precision == "float64" else EPS["float32"]


@dataclass(frozen=True)
class Candidate:
    """cos and sin as a reference would give them: ``values(ids)`` the per-pair cos and sin (unscaled),
    times ``scale``, sin times ``sign``, laid out in ``layout`` over the first 2·pairs columns (or one
    column a pair when the arrays have that width), the columns past them not turning (cos ``scale``,
    sin 0). ``theta`` (|θ_i| per pair) sizes the angle allowance."""

    values: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
    theta: np.ndarray
    positions: np.ndarray
    layout: str
    scale: float = 1.0
    sign: float = 1.0
    #: Added to the value term: the rounding of values computed in a low precision (``precision``).
    slack: float = 0.0

    @property
    def pairs(self) -> int:
        return int(self.theta.size)


def candidate(scheme: Any, positions: np.ndarray) -> Candidate:
    """The cos and sin a RoPE ``scheme`` gives at ``positions``."""
    inv_freq = scheme.inv_freq
    return Candidate(phasor_values(inv_freq), np.abs(inv_freq), positions, scheme.layout, scheme.attention_scaling,
                     float(getattr(scheme, "sign", 1.0)))  # nanochat's sin is that of −pθ


def phasor_values(inv_freq: np.ndarray) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """cos and sin of ``p·θ_i`` for integer ids, from the angle-addition phasors (a few float64 ulps)."""
    from pecli.schemes.frequencies import unit_phasors

    def values(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        z = unit_phasors(np.asarray(ids, dtype=np.int64), inv_freq, exact=False)
        return z.real, z.imag

    return values


def angle_values(angles: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """cos and sin of the angles ``angles(ids)`` (e.g. formed in a low precision)."""

    def values(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(invalid="ignore", over="ignore"):
            a = angles(ids)
            return np.cos(a), np.sin(a)

    return values


@dataclass(frozen=True)
class Allowance:
    """The tolerance's terms (see the module): per unit of ``|p|·θ_i``, the constant, the cap."""

    angle: float
    value: float
    cap: float
    work: type

    @classmethod
    def of(cls, precision: str, scale: float, slack: float = 0.0) -> Allowance:
        amplitude = max(1.0, abs(scale))
        work = np.float64 if precision == "float64" else np.float32
        compare = EPS["float32"] if work is np.float32 else 1e-12  # float64: the phasors' few ulps, and then some
        value = (VALUE_ULPS * EPS[precision] + compare + slack) * amplitude + 1e-300
        return cls(ANGLE_ULPS * angle_eps(precision) * amplitude, value, CAP * abs(scale) if scale else CAP, work)

    def pairs(self, ids: np.ndarray, theta: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """(n, pairs) tolerances at ``ids``."""
        out = np.multiply(np.abs(ids).astype(self.work)[:, None], (self.angle * theta).astype(self.work)[None, :], out=out)
        out += self.work(self.value)
        return np.minimum(out, self.work(max(self.cap, self.value)), out=out)


def pair_columns(width: int, pairs: int, layout: str) -> list[slice] | None:
    """The two column slices holding each pair's values (one when the arrays have a column a pair), or
    None when the pairs do not fit in ``width``."""
    if width == pairs:
        return [slice(0, pairs)]
    if 2 * pairs > width:
        return None
    if layout == "half":
        return [slice(0, pairs), slice(pairs, 2 * pairs)]
    return [slice(0, 2 * pairs, 2), slice(1, 2 * pairs, 2)]


@dataclass
class Fit:
    """How far the arrays are from one candidate, accumulated block by block.

    ``error``/``error_row``: the largest |Δ| and its row; ``ratio``/``ratio_row``: the largest error over
    the tolerance and its row; ``first_wrong``: the first row past the tolerance; ``nonfinite``: the
    first row holding NaN or ±inf (the arrays' or the candidate's)."""

    error: float = -math.inf
    error_row: int = 0
    ratio: float = -math.inf
    ratio_row: int = 0
    first_wrong: int | None = None
    nonfinite: int | None = None
    #: (first row, last row + 1, largest error) of each block.
    blocks: list[tuple[int, int, float]] = field(default_factory=list)

    @property
    def passes(self) -> bool:
        return self.first_wrong is None and self.ratio <= 1.0


def _pair_errors(gc: np.ndarray, gs: np.ndarray, c: np.ndarray, s: np.ndarray, columns: list[slice],
                 out: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """Per row and pair, the largest |Δ| of the pair's cos and sin values (NaN propagates)."""
    first = True
    for given, expected in ((gc, c), (gs, s)):
        for where in columns:
            target = out if first else scratch
            np.subtract(given[:, where], expected, out=target)
            np.abs(target, out=target)
            if not first:
                np.maximum(out, scratch, out=out)
            first = False
    return out


def _update(fit: Fit, start: int, error: np.ndarray, ratio: np.ndarray) -> None:
    """Fold one block's (n, k) errors and ratios into ``fit``."""
    k = ratio.shape[1]
    at = int(np.argmax(ratio))
    worst = float(ratio.flat[at])
    at_error = int(np.argmax(error))
    largest = float(error.flat[at_error])
    if math.isnan(worst) or math.isnan(largest):
        bad = np.isnan(ratio).any(axis=1) | np.isnan(error).any(axis=1)
        row = start + int(np.argmax(bad))
        fit.nonfinite = row if fit.nonfinite is None else min(fit.nonfinite, row)
        fit.first_wrong = row if fit.first_wrong is None else min(fit.first_wrong, row)
        worst, largest = math.inf, math.inf
    if worst > fit.ratio:
        fit.ratio, fit.ratio_row = worst, start + at // k
    if largest > fit.error:
        fit.error, fit.error_row = largest, start + at_error // k
    if worst > 1.0 and fit.first_wrong is None:
        fit.first_wrong = start + int(np.argmax(~(ratio <= 1.0).all(axis=1)))
    if fit.blocks and fit.blocks[-1][0] == start:
        first, stop, before = fit.blocks[-1]
        fit.blocks[-1] = (first, stop, max(before, largest))
    else:
        fit.blocks.append((start, start + ratio.shape[0], largest))


def compare_block(gc: np.ndarray, gs: np.ndarray, proposal: Candidate, allowance: Allowance, fit: Fit,
                  start: int) -> bool:
    """Compare one block of widened rows (from row ``start``) with ``proposal``; False when its pairs do
    not fit the width."""
    rows, width = gc.shape
    ids = proposal.positions[start: start + rows]
    columns = pair_columns(width, proposal.pairs, proposal.layout)
    if columns is None:
        return False
    work = allowance.work
    c, s = proposal.values(ids)
    c, s = c.astype(work), s.astype(work)  # then scaled in the working precision: within ε_w
    if proposal.scale != 1.0:
        c *= work(proposal.scale)
    if proposal.scale * proposal.sign != 1.0:
        s *= work(proposal.scale * proposal.sign)
    error = np.empty((rows, proposal.pairs), dtype=work)
    scratch = np.empty_like(error)
    _pair_errors(gc, gs, c, s, columns, error, scratch)
    tol = allowance.pairs(ids, proposal.theta, out=scratch)
    ratio = np.divide(error, tol, out=tol)
    _update(fit, start, error, ratio)
    if len(columns) == 2 and width > 2 * proposal.pairs:  # the components that do not turn
        tail = np.maximum(np.abs(gc[:, 2 * proposal.pairs:] - work(proposal.scale)), np.abs(gs[:, 2 * proposal.pairs:]))
        _update(fit, start, tail, tail / work(allowance.value))
    return True


def block_rows(width: int, max_bytes: int | None = None) -> int:
    """Rows per block: :data:`BLOCK_VALUES` values, fewer when ``max_bytes`` is small (about 12 float64
    copies of a block are alive at once)."""
    values = BLOCK_VALUES if max_bytes is None else max(width, min(BLOCK_VALUES, max_bytes // 96))
    return max(1, values // max(width, 1))


def run_pass(cos: Rows, sin: Rows, positions: np.ndarray, proposals: list[Candidate], precision: str,
             *, until_settled: bool = False, max_bytes: int | None = None, label: str = "verify") -> list[Fit | None]:
    """Compare the arrays with every proposal, block by block (see the module for the tolerance).

    With ``until_settled``, a proposal stops being compared once it fails, and the pass ends when every
    proposal has failed. Returns a :class:`Fit` per proposal (None: its pairs do not fit the width).

    Raises
    ------
    Wider
        A block holds values the recognised ``precision`` cannot (the caller starts again).
    """
    from pecli.progress import task

    rows, width = cos.shape
    step = block_rows(width, max_bytes)
    fits: list[Fit | None] = [Fit() for _ in proposals]
    allowances = [Allowance.of(precision, p.scale, p.slack) for p in proposals]
    narrower = precision != own_precision(cos.dtype) or precision != own_precision(sin.dtype)
    with np.errstate(invalid="ignore", over="ignore"), task(label, total=rows if rows > 4 * step else None) as bar:
        for start in range(0, rows, step):
            stop = min(rows, start + step)
            gc, gs = widened(np.asarray(cos.read(start, stop))), widened(np.asarray(sin.read(start, stop)))
            if narrower and not (representable(gc, precision) and representable(gs, precision)):
                raise Wider(precision)
            work = allowances[0].work if allowances else np.float64
            gc, gs = gc.astype(work, copy=False), gs.astype(work, copy=False)
            live = 0
            for k, proposal in enumerate(proposals):
                fit = fits[k]
                if fit is None or (until_settled and not fit.passes):
                    continue
                if not compare_block(gc, gs, proposal, allowances[k], fit, start):
                    fits[k] = None
                    continue
                live += fit.passes
            bar.advance(stop - start)
            if until_settled and not live:
                break
    return fits


def column_errors(cos: Rows, sin: Rows, row: int, proposal: Candidate, precision: str) -> tuple[np.ndarray, np.ndarray]:
    """One row's error and tolerance per column (component), in float64: where in the row the worst is."""
    gc = widened(np.asarray(cos.read(row, row + 1))).astype(np.float64)
    gs = widened(np.asarray(sin.read(row, row + 1))).astype(np.float64)
    return columns_of(gc, gs, proposal.positions[row: row + 1], proposal, precision)


def columns_of(gc: np.ndarray, gs: np.ndarray, ids: np.ndarray, proposal: Candidate,
               precision: str) -> tuple[np.ndarray, np.ndarray]:
    """(n, W) errors and tolerances per column of widened rows against ``proposal``."""
    rows, width = gc.shape
    columns = pair_columns(width, proposal.pairs, proposal.layout)
    if columns is None:
        raise PecliError(f"the arrays are {width} wide, narrower than the reference's {proposal.pairs} pairs")
    allowance = Allowance.of(precision, proposal.scale, proposal.slack)
    with np.errstate(invalid="ignore", over="ignore"):
        c, s = proposal.values(ids)
        c, s = c * proposal.scale, s * (proposal.scale * proposal.sign)
        error = np.full((rows, width), allowance.value * 0.0)
        tol = np.full((rows, width), allowance.value)
        pair_tol = allowance.pairs(ids, proposal.theta).astype(np.float64)
        for where in columns:
            error[:, where] = np.maximum(np.abs(gc[:, where] - c), np.abs(gs[:, where] - s))
            tol[:, where] = pair_tol
        if len(columns) == 2 and width > 2 * proposal.pairs:
            tail = slice(2 * proposal.pairs, width)
            error[:, tail] = np.maximum(np.abs(gc[:, tail] - proposal.scale), np.abs(gs[:, tail]))
        error[~np.isfinite(error)] = np.inf
    return error, tol
