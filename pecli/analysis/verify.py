"""A user's own RoPE cos/sin arrays against the reference, and what went wrong when they differ.

:func:`verify_rope` compares the arrays with the reference scheme's caches at the same positions,
holding each element to the precision of the arrays' own dtype: the angle ``p·θ_i`` of a float32
pipeline (float32 inverse frequencies times float32 positions, as transformers computes them) is off by
a few units in the last place of ``p·θ_i``, so the tolerance grows with the position. When the arrays
differ, each known cause is tested as a hypothesis — the reference recomputed with the cause applied,
held to the same tolerance — and every cause that explains the arrays is reported; when none does, the
report says where the error starts and names no cause.

Codes (see :data:`CODES`): ``layout``, ``position-offset``, ``base``, ``scaling``, ``attention-scaling``,
``rotary-dim``, ``precision``, ``sin-sign``; for ALiBi's slopes and bias ``slope-rule``, ``order`` (and
``sign`` for a bias); for a
sinusoidal table ``layout``, ``spacing``, ``position-offset``, ``base``; for T5 buckets ``direction``
and ``sign``.

:func:`verify_inv_freq` and :func:`verify_slopes` hold a vector of values (RoPE's inverse frequencies,
ALiBi's slopes) to the same standard.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from pecli.errors import PecliError
from pecli.notebook import Tabular
from pecli.schemes.rope import RopeScheme, layout_cache

#: What each diagnosis code means.
CODES = {
    "layout": "the arrays are in the other layout (interleaved vs rotate_half)",
    "position-offset": "every position holds the values of another one, k places away",
    "base": "the frequencies follow another base",
    "scaling": "the context-extension scaling was not applied",
    "attention-scaling": "cos and sin miss the attention scaling, or carry another factor",
    "rotary-dim": "the whole head rotates where the model rotates only part of it",
    "precision": "the angles were formed in bfloat16 or float16",
    "sin-sign": "sin has the opposite sign (a rotation by −pθ)",
    "slope-rule": "ALiBi slopes from 2^(−8k/n) for a head count n that is not a power of two",
    "order": "the values are in reverse order",
    "spacing": "sinusoidal frequencies spaced base^(−i/(d/2−1)) (tensor2tensor) instead of base^(−2i/d), or the reverse",
    "direction": "T5 buckets of the other stack: bidirectional (encoder) where causal (decoder) is meant, or the reverse",
    "sign": "relative positions taken as query − key instead of key − query",
}
#: Units in the last place of p·θ that a correct pipeline may be off by (inverse frequencies a few ulps
#: off after their scaling, times the position, then cos and sin), besides the values' own rounding.
ANGLE_ULPS = 8.0
#: Offsets tried by the ``position-offset`` hypothesis.
OFFSETS = (1, -1, 2, -2, 3, -3)


@dataclass(frozen=True)
class Diagnosis:
    code: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True)
class VerifyReport(Tabular):
    """The verdict, the worst element and, when the arrays differ, the causes that explain them."""

    match: bool
    max_abs_error: float
    #: The worst element: its position and component (a vector of values has no position: None).
    worst_position: int | None
    worst_dim: int
    tolerance: float
    dtype: str
    diagnosis: tuple[Diagnosis, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def table_title(self) -> str:
        return "pecli verify: " + ("MATCH" if self.match else "DIFFER")

    def table_rows(self) -> list[dict[str, Any]]:
        """The worst element, then a row per cause named and per note."""
        rows = [{"item": "max abs error", "value": self.max_abs_error},
                {"item": "worst", "value": f"value {self.worst_dim}" if self.worst_position is None
                 else f"position {self.worst_position}, component {self.worst_dim}"},
                {"item": "tolerance there", "value": self.tolerance}, {"item": "dtype", "value": self.dtype}]
        rows += [{"item": f"cause: {d.code}", "value": d.message} for d in self.diagnosis]
        return rows + [{"item": "note", "value": note} for note in self.notes]

    def to_dict(self) -> dict[str, Any]:
        return {"match": self.match, "max_abs_error": self.max_abs_error,
                "worst": {"position": self.worst_position, "dim": self.worst_dim}, "tolerance": self.tolerance,
                "dtype": self.dtype, "diagnosis": [d.to_dict() for d in self.diagnosis], "notes": list(self.notes)}


def tolerance(positions: np.ndarray, theta_max: float, dtype: np.dtype, scale: float = 1.0) -> np.ndarray:
    """Per position, the largest error a correct pipeline in ``dtype`` may carry: :data:`ANGLE_ULPS` units
    of ``p·θ_max`` plus two units of the values, in the dtype's precision (float64 at least 1e-12)."""
    eps = float(np.finfo(dtype).eps) if np.dtype(dtype).kind == "f" else 2.0**-52
    eps = max(eps, 2.0**-52)
    return (ANGLE_ULPS * eps * np.abs(positions.astype(np.float64)) * theta_max + 2.0 * eps) * max(1.0, abs(scale)) + 1e-12


@dataclass(frozen=True)
class Candidate:
    """cos and sin as a scheme would give them: each pair's angle ``angles(ids)`` at ``positions``,
    times ``scale``, sin times ``sign``, the pairs laid out in ``layout`` over the first 2·pairs columns
    (or one column a pair when the arrays have that width), the columns past them not turning (cos
    ``scale``, sin 0)."""

    angles: Callable[[np.ndarray], np.ndarray]
    positions: np.ndarray
    layout: str
    scale: float = 1.0
    sign: float = 1.0


def candidate(scheme: RopeScheme, positions: np.ndarray) -> Candidate:
    """The cos and sin ``scheme`` gives at ``positions``."""
    return Candidate(scheme.angles, positions, scheme.layout, scheme.attention_scaling)


#: Values compared at once: rows of about this many values.
BLOCK_VALUES = 1 << 19


@dataclass(frozen=True)
class Fit:
    """How far the arrays are from a candidate: the largest error over the tolerance, where, and its size."""

    ratio: float
    row: int
    column: int
    error: float
    #: The first row whose error exceeds the tolerance, or None.
    first_wrong: int | None = None


def blocks(cos: np.ndarray, sin: np.ndarray, tol: np.ndarray, proposal: Candidate, slack: float = 0.0, *,
           step: int | None = None):
    """``(start, error, ratio)`` for blocks of rows of the arrays against ``proposal``: each element's
    error and its error over the tolerance; nothing when the proposal is wider than the arrays."""
    rows, width = cos.shape
    pairs = proposal.angles(proposal.positions[:1]).shape[1]
    one_a_pair = width == pairs
    if not one_a_pair and 2 * pairs > width:
        return
    step = step or max(1, BLOCK_VALUES // max(width, 1))
    for start in range(0, rows, step):
        stop = min(rows, start + step)
        angle = proposal.angles(proposal.positions[start:stop])
        c, s = np.cos(angle) * proposal.scale, np.sin(angle) * (proposal.scale * proposal.sign)
        error = np.empty((stop - start, width))
        if one_a_pair:
            columns = [slice(0, pairs)]
        elif proposal.layout == "half":
            columns = [slice(0, pairs), slice(pairs, 2 * pairs)]
        else:
            columns = [slice(0, 2 * pairs, 2), slice(1, 2 * pairs, 2)]
        for where in columns:
            np.maximum(np.abs(cos[start:stop, where] - c), np.abs(sin[start:stop, where] - s), out=error[:, where])
        if not one_a_pair and width > 2 * pairs:  # the components that do not turn
            tail = slice(2 * pairs, width)
            np.maximum(np.abs(cos[start:stop, tail] - proposal.scale), np.abs(sin[start:stop, tail]), out=error[:, tail])
        yield start, error, (error - slack) / tol[start:stop, None]


def fit(cos: np.ndarray, sin: np.ndarray, tol: np.ndarray, proposal: Candidate, slack: float = 0.0) -> Fit | None:
    """The arrays against ``proposal``, in blocks of rows (memory bounded); None when its width cannot be
    the arrays' (more pairs than columns)."""
    best = None
    for start, error, ratio in blocks(cos, sin, tol, proposal, slack):
        best = best or Fit(-math.inf, 0, 0, 0.0)
        index = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
        wrong = best.first_wrong
        if wrong is None and ratio[index] > 1.0:
            wrong = start + int(np.argmax(ratio.max(axis=1) > 1.0))
        if ratio[index] > best.ratio:
            best = Fit(float(ratio[index]), start + int(index[0]), int(index[1]), float(error[index]), wrong)
        elif wrong != best.first_wrong:
            best = dataclasses.replace(best, first_wrong=wrong)
    return best


def verify_rope(cos: np.ndarray, sin: np.ndarray, scheme: RopeScheme, positions: np.ndarray) -> VerifyReport:
    """Compare a user's (P, W) ``cos`` and ``sin`` with ``scheme`` at ``positions`` (see the module).

    ``W`` is the rotated dimension r (caches in either layout), r/2 (one value per pair), or the head
    dimension of a model that rotates part of it (the other components must not turn; the
    ``rotary-dim`` cause is tested).

    Raises
    ------
    PecliError
        Shapes that fit no layout, cos and sin of different shapes, a positions list of another length,
        non-finite values.
    """
    cos, sin = np.asarray(cos), np.asarray(sin)
    if cos.shape != sin.shape:
        raise PecliError(f"cos has shape {list(cos.shape)} and sin {list(sin.shape)}: they must be the same")
    if cos.ndim != 2 or cos.size == 0:
        raise PecliError(f"cos and sin must be non-empty (positions, width) arrays, got shape {list(cos.shape)}")
    if cos.shape[0] != len(positions):
        raise PecliError(f"cos and sin have {cos.shape[0]:,} rows and the positions are {len(positions):,}")
    if cos.dtype.kind not in "fiu" or sin.dtype.kind not in "fiu":
        raise PecliError(f"cos and sin hold {cos.dtype} and {sin.dtype} values; they must be numbers")
    if not (np.isfinite(cos).all() and np.isfinite(sin).all()):
        raise PecliError("cos or sin holds NaN or ±inf")
    dtype = cos.dtype if cos.dtype.kind == "f" else np.dtype(np.float64)
    width, r = cos.shape[1], scheme.rotated_dim
    if width not in (r, r // 2, scheme.dim):
        raise PecliError(f"cos and sin are {width} wide; the reference rotates {r} components ({r // 2} pairs) "
                         f"of a {scheme.dim}-wide head: give (P, {r}) caches or (P, {r // 2}) per-pair values")
    positions = np.asarray(positions, dtype=np.int64)
    theta_max = float(np.max(scheme.inv_freq, initial=0.0))
    tol = tolerance(positions, theta_max, dtype, scheme.attention_scaling)
    reference = candidate(scheme, positions)
    found = fit(cos, sin, tol, reference)
    report = VerifyReport(found.ratio <= 1.0, found.error, int(positions[found.row]), found.column,
                          float(tol[found.row]), str(cos.dtype))
    if report.match:
        return report

    def explains(proposal: Candidate | None, slack: float = 0.0) -> bool:
        result = None if proposal is None else fit(cos, sin, tol, proposal, slack)
        return result is not None and result.ratio <= 1.0

    causes = tuple(_hypotheses(scheme, positions, width, explains, reference, cos, sin))
    if causes:
        return dataclasses.replace(report, diagnosis=causes)
    return dataclasses.replace(report, notes=(_unexplained(cos, sin, tol, reference, positions),))


def _hypotheses(scheme, positions, width, explains, reference, cos, sin):
    """Each known cause that explains the arrays, in the order a cause would mask another: a missing
    scaling before a base (NTK scaling is a base change)."""
    found = []
    other = "interleaved" if scheme.layout == "half" else "half"
    if width >= scheme.rotated_dim and width != scheme.rotated_dim // 2 and explains(dataclasses.replace(reference, layout=other)):
        found.append(Diagnosis("layout", f"the arrays are in the {other} layout; the model applies {scheme.layout} "
                                         f"({'rotate_half: cos = concat(c, c)' if scheme.layout == 'half' else 'pairs (2i, 2i+1): each value twice in a row'})"))
    if width == scheme.dim != scheme.rotated_dim and explains(candidate(_rotating(scheme, 1.0), positions)):
        found.append(Diagnosis("rotary-dim", f"the arrays rotate all {width} components of the head; the model rotates "
                                             f"{scheme.rotated_dim} (partial_rotary_factor {scheme.partial_rotary_factor:g})"))
    for k in OFFSETS:
        shifted = positions + k
        if shifted.min() >= 0 and explains(dataclasses.replace(reference, positions=shifted)):
            found.append(Diagnosis("position-offset", f"position p holds the values of position p{k:+d}"))
            break
    if explains(dataclasses.replace(reference, sign=-1.0)):
        found.append(Diagnosis("sin-sign", "sin has the opposite sign: the arrays turn each pair by −pθ"))
    scale = scheme.attention_scaling
    if scale != 1.0 and explains(dataclasses.replace(reference, scale=1.0)):
        found.append(Diagnosis("attention-scaling", f"cos and sin miss the attention scaling {scale:.6g} of the "
                                                    f"{scheme.scaling} scaling"))
    elif not found:
        ratio = _common_ratio(cos, sin, reference)
        if ratio is not None and abs(ratio - 1.0) > 1e-6 and explains(dataclasses.replace(reference, scale=scale * ratio)):
            found.append(Diagnosis("attention-scaling", f"cos and sin carry a factor {ratio * scale:.6g} where the "
                                                        f"model's attention scaling is {scale:.6g}"))
    if scheme.scaling not in ("none", None) and explains(candidate(scheme.without_extension(), positions)):
        found.append(Diagnosis("scaling", f"the {scheme.scaling} scaling was not applied: the arrays are the "
                                          "unscaled frequencies"))
    elif not found:
        base = _fitted_base(cos, sin, scheme, positions, width)
        if base is not None and not math.isclose(base, scheme.base, rel_tol=1e-6) \
                and explains(candidate(_with_base(scheme, base), positions)):
            found.append(Diagnosis("base", f"the arrays fit base {base:,.6g}; the model's is {scheme.base:,.6g}"))
    if not found:
        for name in ("bfloat16", "float16"):
            if explains(dataclasses.replace(reference, angles=_low_precision_angles(scheme, name)), _value_slack(name)):
                found.append(Diagnosis("precision", f"the angles p·θ were formed in {name}: their rounding grows "
                                                    "with the position"))
                break
    return found


def _rotating(scheme: RopeScheme, fraction: float) -> RopeScheme:
    return dataclasses.replace(scheme, partial_rotary_factor=fraction)


def _with_base(scheme: RopeScheme, base: float) -> RopeScheme:
    return dataclasses.replace(scheme.without_extension(), base=float(base))


def _common_ratio(cos, sin, reference: Candidate) -> float | None:
    """The one factor between the arrays and the reference where the reference is not small, measured on
    the first rows, or None."""
    rows = min(len(reference.positions), 256)
    angle = reference.angles(reference.positions[:rows])
    values = np.concatenate([np.cos(angle).ravel(), np.sin(angle).ravel()]) * reference.scale
    pairs = angle.shape[1]
    columns = slice(0, pairs) if reference.layout == "half" or cos.shape[1] == pairs else slice(0, 2 * pairs, 2)
    given = np.concatenate([np.asarray(cos[:rows, columns], np.float64).ravel(), np.asarray(sin[:rows, columns], np.float64).ravel()])
    large = np.abs(values) > 0.1
    if not large.any() or given.shape != values.shape:
        return None
    return float(np.median(given[large] / values[large]))


def _fitted_base(cos, sin, scheme, positions, width) -> float | None:
    """The base whose ladder θ_i = b^(−2i/r) fits the arrays' angles at the first position p > 0: each
    pair's angle atan2(sin, cos) / p, where p·θ_i < π (the pairs that have not wrapped), fitted in log."""
    rows = np.flatnonzero(positions > 0)
    if rows.size == 0:
        return None
    row, p = int(rows[0]), float(positions[rows[0]])
    pairs = scheme.rotated_dim // 2
    # the column of each pair's value: one per pair, the first half (rotate_half), or every other one
    first = np.arange(0, 2 * pairs, 2) if width != pairs and scheme.layout == "interleaved" else np.arange(pairs)
    angle = np.arctan2(np.asarray(sin[row, first], np.float64), np.asarray(cos[row, first], np.float64)) / p
    index = np.arange(pairs)
    usable = (angle > 0) & (angle * p < math.pi - 0.1) & (index > 0)
    if usable.sum() < 2:
        return None
    slope = np.polyfit(index[usable], np.log(angle[usable]), 1)[0]  # ln θ_i = −(2i/r) ln b
    return float(f"{math.exp(-slope * scheme.rotated_dim / 2.0):.6g}")  # bases people set are short numbers


def _low_precision_angles(scheme: RopeScheme, name: str) -> Callable[[np.ndarray], np.ndarray]:
    """The angles formed in ``name``: positions and inverse frequencies rounded to it, their product
    rounded again (as ``positions.to(dtype) * inv_freq.to(dtype)`` computes it)."""
    from pecli.dtypes import cast

    theta = cast(scheme.inv_freq, name).astype(np.float64)

    def angles(ids: np.ndarray) -> np.ndarray:
        p = cast(np.asarray(ids, dtype=np.float64), name).astype(np.float64)
        return cast(np.outer(p, theta), name).astype(np.float64)

    return angles


def _value_slack(name: str) -> float:
    """The rounding of cos and sin values computed in ``name``: two units of its precision."""
    return 2.0 * (2.0**-8 if name == "bfloat16" else 2.0**-11)


def _unexplained(cos, sin, tol, reference: Candidate, positions: np.ndarray) -> str:
    """Where the error starts and how large it gets, when no known cause explains it."""
    found = fit(cos, sin, tol, reference)
    text = (f"no known cause explains the arrays: they first differ at position {int(positions[found.first_wrong or 0])}; "
            f"the largest error, {found.error:.3g}, is at position {int(positions[found.row])}, component {found.column}")
    quarter = len(positions) // 4
    if quarter:  # how it grows with the position
        first, last = (fit(cos[rows], sin[rows], tol[rows], dataclasses.replace(reference, positions=reference.positions[rows]))
                       for rows in (slice(0, quarter), slice(len(positions) - quarter, None)))
        text += f"; largest in the first quarter of the positions {first.error:.3g}, in the last {last.error:.3g}"
    return text


# -- vectors of values: inverse frequencies, slopes ----------------------------------------------------------
def _vector_report(given: np.ndarray, expected: np.ndarray, dtype: np.dtype,
                   hypotheses: list[tuple[str, str, Callable[[], np.ndarray | None], float]]) -> VerifyReport:
    """``given`` against ``expected``, each value to four units of ``dtype`` relative (float64 at least);
    when they differ, each hypothesis ``(code, message, candidate, relative slack)`` whose candidate
    matches is a cause."""
    eps = max(float(np.finfo(dtype).eps) if dtype.kind == "f" else 0.0, 2.0**-52)

    def error(candidate: np.ndarray, slack: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        scale = np.maximum(np.abs(candidate), np.finfo(np.float64).tiny)
        return np.abs(given - candidate), (4.0 * eps + slack) * scale + 1e-300

    difference, tol = error(expected)
    worst = int(np.argmax(difference / tol))
    report = VerifyReport(bool(np.all(difference <= tol)), float(difference.max(initial=0.0)), None, worst,
                          float(tol[worst]), str(dtype))
    if report.match:
        return report
    causes = []
    for code, message, make, slack in hypotheses:
        candidate = make()
        if candidate is not None and candidate.shape == given.shape:
            found, allowed = error(candidate, slack)
            if np.all(found <= allowed):
                causes.append(Diagnosis(code, message))
    if causes:
        return dataclasses.replace(report, diagnosis=tuple(causes))
    return dataclasses.replace(report, notes=(f"no known cause explains the values: the first that differs is "
                                              f"number {int(np.argmax(difference > tol))}",))


def _checked_vector(values: np.ndarray, what: str) -> tuple[np.ndarray, np.dtype]:
    values = np.asarray(values)
    if values.ndim != 1 or values.size == 0:
        raise PecliError(f"{what} must be a non-empty vector, got shape {list(values.shape)}")
    if values.dtype.kind not in "fiu" or not np.isfinite(values).all():
        raise PecliError(f"{what} must hold finite numbers")
    return values.astype(np.float64), (values.dtype if values.dtype.kind == "f" else np.dtype(np.float64))


def verify_inv_freq(values: np.ndarray, scheme: RopeScheme) -> VerifyReport:
    """A user's inverse frequencies against the scheme's (one per rotated pair, or one per pair of the
    whole head: the ``rotary-dim`` cause)."""
    given, dtype = _checked_vector(values, "the inverse frequencies")
    pairs = scheme.rotated_dim // 2
    if given.size not in (pairs, scheme.dim // 2):
        raise PecliError(f"{given.size} inverse frequencies; the reference has {pairs} (one per rotated pair)")
    if given.size != pairs:  # the whole head: only the rotary-dim cause can explain it
        whole = _rotating(scheme, 1.0).inv_freq
        report = VerifyReport(False, math.inf, None, 0, 0.0, str(dtype))
        if np.allclose(given, whole, rtol=4 * max(float(np.finfo(dtype).eps), 2.0**-52), atol=0):
            return dataclasses.replace(report, diagnosis=(Diagnosis(
                "rotary-dim", f"one frequency for each of the {given.size} pairs of the head; the model rotates "
                              f"{pairs} pairs (partial_rotary_factor {scheme.partial_rotary_factor:g})"),))
        return dataclasses.replace(report, notes=(f"{given.size} values where the model has {pairs}, and not the "
                                                  "frequencies of the whole head either",))
    base = _fitted_inv_freq_base(given, scheme.rotated_dim)
    hypotheses = [
        ("scaling", f"the {scheme.scaling} scaling was not applied: these are the unscaled frequencies",
         lambda: scheme.without_extension().inv_freq if scheme.scaling not in ("none", None) else None, 0.0),
        ("base", f"the values fit base {base:,.6g}; the model's is {scheme.base:,.6g}" if base else "",
         lambda: _with_base(scheme, base).inv_freq if base and not math.isclose(base, scheme.base, rel_tol=1e-9) else None, 0.0),
        ("order", "the frequencies are in reverse order (slowest first)", lambda: scheme.inv_freq[::-1], 0.0),
        ("precision", "the frequencies were rounded to bfloat16", lambda: _rounded(scheme.inv_freq, "bfloat16"), 2.0**-8),
        ("precision", "the frequencies were rounded to float16", lambda: _rounded(scheme.inv_freq, "float16"), 2.0**-11),
    ]
    report = _vector_report(given, scheme.inv_freq, dtype, hypotheses)
    if any(d.code == "scaling" for d in report.diagnosis):  # a missing NTK scaling is also a base change: say the cause
        report = dataclasses.replace(report, diagnosis=tuple(d for d in report.diagnosis if d.code != "base"))
    return report


def _fitted_inv_freq_base(given: np.ndarray, rotated: int) -> float | None:
    """The base of the ladder θ_i = b^(−2i/r) that fits ``given`` in log, or None."""
    index = np.arange(given.size)
    usable = given > 0
    if usable.sum() < 2:
        return None
    slope = np.polyfit(index[usable], np.log(given[usable]), 1)[0]
    return float(f"{math.exp(-slope * rotated / 2.0):.6g}") if slope < 0 else None  # bases people set are short numbers


def _rounded(values: np.ndarray, name: str) -> np.ndarray:
    from pecli.dtypes import cast

    return cast(values, name).astype(np.float64)


def verify_slopes(values: np.ndarray, scheme: Any) -> VerifyReport:
    """A user's ALiBi slopes against the scheme's (Press et al.'s rule for any head count)."""
    given, dtype = _checked_vector(values, "the slopes")
    if given.size != scheme.heads:
        raise PecliError(f"{given.size} slopes; the reference has {scheme.heads} heads")
    heads = scheme.heads
    geometric = np.power(2.0, -8.0 * np.arange(1, heads + 1) / heads)
    hypotheses = [
        ("slope-rule", f"the slopes are 2^(−8k/{heads}) for k = 1 … {heads}; for {heads} heads, not a power of two, "
                       "the reference code takes those of the power of two below, then every other one of twice it",
         lambda: geometric if heads & (heads - 1) else None, 0.0),
        ("order", "the slopes are in reverse order", lambda: scheme.slopes[::-1], 0.0),
        ("precision", "the slopes were rounded to bfloat16 (as Falcon keeps them)", lambda: _rounded(scheme.slopes, "bfloat16"), 2.0**-8),
    ]
    return _vector_report(given, scheme.slopes, dtype, hypotheses)


# -- tables: sinusoidal encodings, T5 buckets -------------------------------------------------------------
def verify_table(table: np.ndarray, scheme: Any, positions: np.ndarray) -> VerifyReport:
    """A user's (P, d) sinusoidal table against ``scheme.encode(positions)``, each value to its dtype's
    precision with the angle rounding of ``p·ω_0`` allowed to grow with the position."""
    table = np.asarray(table)
    if table.size == 0 or table.ndim != 2 or table.shape != (len(positions), scheme.dim):
        raise PecliError(f"the table has shape {list(table.shape)}; the reference is ({len(positions):,}, {scheme.dim}) "
                         "(a row per position, the model dimension wide)")
    if table.dtype.kind not in "fiu" or not np.isfinite(table).all():
        raise PecliError("the table must hold finite numbers")
    dtype = table.dtype if table.dtype.kind == "f" else np.dtype(np.float64)
    given = table.astype(np.float64)
    tol = tolerance(np.asarray(positions), 1.0, dtype)[:, None]

    def error(candidate: Any, ids: np.ndarray = positions) -> np.ndarray:
        return np.abs(given - candidate.encode(ids))

    difference = error(scheme)
    row, column = np.unravel_index(int(np.argmax(difference / tol)), difference.shape)
    report = VerifyReport(bool(np.all(difference <= tol)), float(difference.max()), int(positions[row]), int(column),
                          float(tol[row, 0]), str(dtype))
    if report.match:
        return report
    other_layout = "half" if scheme.layout == "interleaved" else "interleaved"
    other_spacing = "tensor2tensor" if scheme.spacing == "vaswani" else "vaswani"
    causes = []
    for code, message, candidate in (
        ("layout", f"the table is in the {other_layout} layout; the model's is {scheme.layout}",
         dataclasses.replace(scheme, layout=other_layout)),
        ("spacing", f"the frequencies are spaced as {other_spacing}; the model's are {scheme.spacing}",
         dataclasses.replace(scheme, spacing=other_spacing) if scheme.dim >= 4 else None),
    ):
        if candidate is not None and np.all(error(candidate) <= tol):
            causes.append(Diagnosis(code, message))
    for k in OFFSETS:
        if positions.min() + k >= 0 and np.all(error(scheme, positions + k) <= tol):
            causes.append(Diagnosis("position-offset", f"row p holds position p{k:+d} (fairseq's models start at 2)"))
            break
    if not causes:
        base = _fitted_table_base(given, scheme, positions)
        if base is not None and not math.isclose(base, scheme.base, rel_tol=1e-9) \
                and np.all(error(dataclasses.replace(scheme, base=base)) <= tol):
            causes.append(Diagnosis("base", f"the table fits base {base:,.6g}; the model's is {scheme.base:,.6g}"))
    if causes:
        return dataclasses.replace(report, diagnosis=tuple(causes))
    return dataclasses.replace(report, notes=(f"no known cause explains the table: it first differs at position "
                                              f"{int(positions[int(np.argmax((difference > tol).any(axis=1)))])}",))


def _fitted_table_base(given: np.ndarray, scheme: Any, positions: np.ndarray) -> float | None:
    """The base whose frequencies fit the table's angles at its first position p > 0, in the model's
    layout and spacing (a sine and a cosine per frequency), or None."""
    rows = np.flatnonzero(positions > 0)
    if rows.size == 0:
        return None
    p, half = float(positions[rows[0]]), scheme.dim // 2
    row = given[rows[0]]
    sines, cosines = (row[:half], row[half:]) if scheme.layout == "half" else (row[0::2], row[1::2])
    angle = np.arctan2(sines, cosines) / p
    index = np.arange(half)
    usable = (angle > 0) & (angle * p < math.pi - 0.1) & (index > 0)
    if usable.sum() < 2:
        return None
    slope = np.polyfit(index[usable], np.log(angle[usable]), 1)[0]
    per_step = (scheme.dim // 2 - 1) if scheme.spacing == "tensor2tensor" else scheme.dim / 2
    return float(f"{math.exp(-slope * per_step):.6g}")


def verify_buckets(buckets: np.ndarray, scheme: Any, positions: np.ndarray) -> VerifyReport:
    """A user's (P, P) T5 bucket table (query i, key j) against the T5 rule for ``j − i``; exact."""
    from pecli.schemes.t5 import t5_buckets

    buckets = np.asarray(buckets)
    if buckets.size == 0 or buckets.ndim != 2 or buckets.shape != (len(positions), len(positions)):
        raise PecliError(f"the buckets have shape {list(buckets.shape)}; the reference is ({len(positions):,}, "
                         f"{len(positions):,}): a row per query position, a column per key position")
    if buckets.dtype.kind not in "iu" and not (buckets.dtype.kind == "f" and np.all(buckets == np.round(buckets))):
        raise PecliError("the buckets must be whole numbers")
    delta = positions[None, :] - positions[:, None]

    def rule(relative: np.ndarray, bidirectional: bool) -> np.ndarray:
        return t5_buckets(relative, buckets=scheme.buckets, max_distance=scheme.max_distance, bidirectional=bidirectional)

    expected = rule(delta, scheme.bidirectional)
    wrong = buckets != expected
    row, column = np.unravel_index(int(np.argmax(wrong)), wrong.shape)
    report = VerifyReport(not wrong.any(), float(np.abs(buckets - expected).max()), int(positions[row]), int(column), 0.0,
                          str(buckets.dtype))
    if report.match:
        return report
    causes = []
    if np.array_equal(buckets, rule(delta, not scheme.bidirectional)):
        kind = "bidirectional (encoder)" if not scheme.bidirectional else "causal (decoder)"
        causes.append(Diagnosis("direction", f"the buckets are {kind}; the model's stack is the other one"))
    if np.array_equal(buckets, rule(-delta, scheme.bidirectional)):
        causes.append(Diagnosis("sign", "the relative position was taken as query − key; T5 buckets key − query"))
    if causes:
        return dataclasses.replace(report, diagnosis=tuple(causes))
    return dataclasses.replace(report, notes=(f"no known cause explains the buckets: {int(wrong.sum()):,} of "
                                              f"{wrong.size:,} differ",))


def error_map(cos: np.ndarray, sin: np.ndarray, scheme: RopeScheme, positions: np.ndarray,
              rows: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """The arrays' error over the tolerance against ``scheme``, the largest of each band of consecutive
    positions (at most ``rows`` bands), and the first position of each band: the picture of where the
    error starts and how it grows with position and component."""
    cos, sin = np.asarray(cos), np.asarray(sin)
    positions = np.asarray(positions, dtype=np.int64)
    dtype = cos.dtype if cos.dtype.kind == "f" else np.dtype(np.float64)
    tol = tolerance(positions, float(np.max(scheme.inv_freq, initial=0.0)), dtype, scheme.attention_scaling)
    band = max(1, -(-len(positions) // rows))
    step = band * max(1, BLOCK_VALUES // max(cos.shape[1] * band, 1))
    out = []
    for _, _, ratio in blocks(cos, sin, tol, candidate(scheme, positions), step=step):
        bands = -(-ratio.shape[0] // band)
        padded = np.full((bands * band, ratio.shape[1]), -np.inf)
        padded[: ratio.shape[0]] = ratio
        out.append(padded.reshape(bands, band, -1).max(axis=1))
    return np.vstack(out), positions[::band]


def verify_bias(bias: np.ndarray, scheme: Any) -> VerifyReport:
    """A user's ALiBi bias against the scheme's slopes: (H, L, L) for query i and key j, or (H, 1, L) as
    BLOOM and Falcon broadcast it (the query is then the last position).

    A bias enters a softmax over the keys, so a constant per head and query changes nothing: each row is
    compared after subtracting its value at the query's own key — the paper's ``m·(j − i)`` under a
    causal mask, BLOOM's ``m·j`` and pecli's ``−m·|i − j|`` all pass. For keys after the query the row
    must be symmetric (a bidirectional bias) unless those keys are masked (``-inf``), which is accepted.
    """
    bias = np.asarray(bias)
    if bias.ndim != 3 or bias.shape[0] != scheme.heads or bias.shape[1] not in (1, bias.shape[2]) or bias.size == 0:
        raise PecliError(f"the bias has shape {list(bias.shape)}; the reference is ({scheme.heads}, L, L) or "
                         f"({scheme.heads}, 1, L): a head, a query, a key")
    if bias.dtype.kind not in "fiu" or np.isnan(bias).any():
        raise PecliError("the bias must hold numbers (masked keys as -inf)")
    dtype = bias.dtype if bias.dtype.kind == "f" else np.dtype(np.float64)
    keys = bias.shape[2]
    queries = np.arange(keys) if bias.shape[1] == keys else np.array([keys - 1])
    given = bias.astype(np.float64)
    own = given[:, np.arange(len(queries)), queries][:, :, None]  # each row's value at the query's own key
    relative = given - own
    distance = np.abs(np.arange(keys)[None, :] - queries[:, None]).astype(np.float64)
    visible = np.isfinite(given)
    eps = max(float(np.finfo(dtype).eps) if dtype.kind == "f" else 0.0, 2.0**-52)

    def error(slopes: np.ndarray, slack: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        expected = -slopes[:, None, None] * distance[None]
        tol = (4.0 * eps + slack) * (np.abs(expected) + np.abs(own)) + 1e-12
        return np.where(visible, np.abs(relative - expected), 0.0), tol

    difference, tol = error(scheme.slopes)
    index = np.unravel_index(int(np.argmax(difference / tol)), difference.shape)
    report = VerifyReport(bool(np.all(difference <= tol)), float(difference.max()), int(queries[index[1]]),
                          int(index[2]), float(tol[index]), str(dtype))
    if report.match:
        return report
    heads = scheme.heads
    causes = []
    for code, message, slopes, slack in (
        ("slope-rule", f"the slopes are 2^(−8k/{heads}); for {heads} heads, not a power of two, the reference "
                       "code takes those of the power of two below, then every other one of twice it",
         np.power(2.0, -8.0 * np.arange(1, heads + 1) / heads) if heads & (heads - 1) else None, 0.0),
        ("order", "the heads' slopes are in reverse order", scheme.slopes[::-1], 0.0),
        ("sign", "the bias grows with distance: +m·|i − j| where ALiBi subtracts it", -scheme.slopes, 0.0),
        ("precision", "the slopes were rounded to bfloat16 (as Falcon keeps them)", _rounded(scheme.slopes, "bfloat16"), 2.0**-7),
    ):
        if slopes is not None:
            found, allowed = error(slopes, slack)
            if np.all(found <= allowed):
                causes.append(Diagnosis(code, message))
    if causes:
        return dataclasses.replace(report, diagnosis=tuple(causes))
    return dataclasses.replace(report, notes=(f"no known cause explains the bias: head {int(index[0])} differs first",))


#: The arrays each scheme is verified from, and the function that verifies them (named by the inputs).
INPUTS: dict[str, tuple[tuple[str, ...], ...]] = {
    "rope": (("cos", "sin"), ("inv_freq",)), "alibi": (("slopes",), ("bias",)), "sinusoidal": (("table",),),
    "t5": (("buckets",),),
}
#: Inputs that are vectors of values, without positions.
VECTORS = ("inv_freq", "slopes")


def verify_arrays(scheme: Any, positions: np.ndarray | None = None, **arrays: Any) -> VerifyReport:
    """Verify the arrays given by name (``cos`` and ``sin``, ``inv_freq``, ``slopes``, ``bias``,
    ``table`` or ``buckets``, as :data:`INPUTS` pairs them with schemes) against ``scheme``, at
    ``positions`` (default 0 … P − 1 for the arrays that have a row per position).

    Raises
    ------
    PecliError
        Inputs that do not go with the scheme, positions given for a vector of values, and each
        function's own refusals.
    """
    names = tuple(sorted(arrays))
    sets = INPUTS.get(scheme.name, ())
    chosen = next((keys for keys in sets if tuple(sorted(keys)) == names), None)
    if chosen is None:
        flag = lambda key: "--" + key.replace("_", "-")  # noqa: E731
        wanted = " or ".join(" and ".join(map(flag, keys)) for keys in sets) or "nothing pecli verifies"
        raise PecliError(f"{scheme.name} is verified from {wanted}" + (f", not {', '.join(map(flag, names))}" if names else ""))
    if chosen[0] in VECTORS + ("bias",):
        if positions is not None:
            raise PecliError(f"{chosen[0]}: holds no positions; leave --positions out")
        check = {"inv_freq": verify_inv_freq, "slopes": verify_slopes, "bias": verify_bias}[chosen[0]]
        return check(arrays[chosen[0]], scheme)
    first = np.asarray(arrays[chosen[0]])
    ids = np.arange(first.shape[0] if first.ndim else 0) if positions is None else np.asarray(positions)
    ids = ids.astype(np.int64)
    if chosen == ("cos", "sin"):
        if scheme.reads_context and positions is None:  # dynamic and longrope: the sequence reaches the last id
            scheme = scheme.at_length(int(ids.max()) + 1 if ids.size else 1)
        return verify_rope(arrays["cos"], arrays["sin"], scheme, ids)
    return (verify_table if chosen == ("table",) else verify_buckets)(first, scheme, ids)
