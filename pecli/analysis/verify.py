"""A user's own RoPE cos/sin arrays against the reference, and what went wrong when they differ.

:func:`verify_rope` compares the arrays with the reference scheme's caches at the same positions,
holding each element to the precision of the arrays' own dtype: the angle ``p·θ_i`` of a float32
pipeline (float32 inverse frequencies times float32 positions, as transformers computes them) is off by
a few units in the last place of ``p·θ_i``, so the tolerance grows with the position. When the arrays
differ, each known cause is tested as a hypothesis — the reference recomputed with the cause applied,
held to the same tolerance — and every cause that explains the arrays is reported; when none does, the
report says where the error starts and names no cause.

Codes (see :data:`CODES`): ``layout``, ``position-offset``, ``base``, ``scaling``, ``attention-scaling``,
``rotary-dim``, ``precision``, ``sin-sign``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from pecli.errors import PecliError
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
class VerifyReport:
    """The verdict, the worst element and, when the arrays differ, the causes that explain them."""

    match: bool
    max_abs_error: float
    worst_position: int
    worst_dim: int
    tolerance: float
    dtype: str
    diagnosis: tuple[Diagnosis, ...] = ()
    notes: tuple[str, ...] = field(default=())

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


def caches(scheme: RopeScheme, positions: np.ndarray, width: int, layout: str | None = None,
           angles: Callable[[np.ndarray], np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """The reference (cos, sin) of ``scheme`` at ``positions`` shaped as the user's arrays: ``width`` r
    (the caches in ``layout``), r/2 (one value per pair), or None when neither fits."""
    half = (angles or scheme.angles)(positions)
    pairs = half.shape[1]
    if width == 2 * pairs:
        half = layout_cache(half, layout or scheme.layout)
    elif width != pairs:
        return None
    return np.cos(half) * scheme.attention_scaling, np.sin(half) * scheme.attention_scaling


def verify_rope(cos: np.ndarray, sin: np.ndarray, scheme: RopeScheme, positions: np.ndarray) -> VerifyReport:
    """Compare a user's (P, W) ``cos`` and ``sin`` with ``scheme`` at ``positions`` (see the module).

    ``W`` is the rotated dimension r (caches in either layout), r/2 (one value per pair), or the head
    dimension of a model that rotates part of it (then the ``rotary-dim`` cause is tested).

    Raises
    ------
    PecliError
        Shapes that fit no layout, cos and sin of different shapes, a positions list of another length,
        non-finite values.
    """
    cos, sin = np.asarray(cos), np.asarray(sin)
    if cos.shape != sin.shape:
        raise PecliError(f"cos has shape {list(cos.shape)} and sin {list(sin.shape)}: they must be the same")
    if cos.ndim != 2:
        raise PecliError(f"cos and sin must be (positions, width) arrays, got shape {list(cos.shape)}")
    if cos.shape[0] != len(positions):
        raise PecliError(f"cos and sin have {cos.shape[0]:,} rows and the positions are {len(positions):,}")
    if not (np.isfinite(cos.astype(np.float64)).all() and np.isfinite(sin.astype(np.float64)).all()):
        raise PecliError("cos or sin holds NaN or ±inf")
    dtype = cos.dtype if cos.dtype.kind == "f" else np.dtype(np.float64)
    width, r = cos.shape[1], scheme.rotated_dim
    full_head = width == scheme.dim and width != r
    if width not in (r, r // 2) and not full_head:
        raise PecliError(f"cos and sin are {width} wide; the reference rotates {r} components ({r // 2} pairs) "
                         f"of a {scheme.dim}-wide head: give (P, {r}) caches or (P, {r // 2}) per-pair values")
    cos64, sin64 = cos.astype(np.float64), sin.astype(np.float64)
    positions = np.asarray(positions, dtype=np.int64)
    theta_max = float(np.max(scheme.inv_freq, initial=0.0))
    tol = tolerance(positions, theta_max, dtype, scheme.attention_scaling)[:, None]

    def error_of(candidate: tuple[np.ndarray, np.ndarray] | None, slack: np.ndarray | float = 0.0) -> np.ndarray | None:
        if candidate is None or candidate[0].shape != cos64.shape:
            return None
        return np.maximum(np.abs(cos64 - candidate[0]), np.abs(sin64 - candidate[1])) - slack

    def explains(candidate: tuple[np.ndarray, np.ndarray] | None, slack: np.ndarray | float = 0.0) -> bool:
        error = error_of(candidate, slack)
        return error is not None and bool(np.all(error <= tol))

    error = error_of(_reference(scheme, positions, width, full_head))
    index = np.unravel_index(int(np.argmax(error / tol)), error.shape)
    report = VerifyReport(bool(np.all(error <= tol)), float(np.max(error)), int(positions[index[0]]), int(index[1]),
                          float(tol[index[0], 0]), str(cos.dtype))
    if report.match:
        return report
    causes = tuple(_hypotheses(scheme, positions, width, full_head, explains, cos64, sin64, tol))
    if causes:
        return dataclasses.replace(report, diagnosis=causes)
    return dataclasses.replace(report, notes=(_unexplained(error, tol, positions),))


def _reference(scheme: RopeScheme, positions: np.ndarray, width: int, full_head: bool):
    """The reference as wide as the arrays: for a head wider than the rotated part, the rotated part's
    caches followed by cos 1, sin 0 (scaled) on the components that do not turn."""
    if not full_head:
        return caches(scheme, positions, width)
    cos, sin = caches(scheme, positions, scheme.rotated_dim)
    rest = width - scheme.rotated_dim
    scale = scheme.attention_scaling
    return (np.hstack([cos, np.full((len(positions), rest), scale)]), np.hstack([sin, np.zeros((len(positions), rest))]))


def _hypotheses(scheme, positions, width, full_head, explains, cos64, sin64, tol):
    """Each known cause that explains the arrays, in the order a cause would mask another: a missing
    scaling before a base (NTK scaling is a base change), an offset before a sign."""
    found = []
    other = "interleaved" if scheme.layout == "half" else "half"
    if not full_head and width == scheme.rotated_dim and explains(caches(scheme, positions, width, other)):
        found.append(Diagnosis("layout", f"the arrays are in the {other} layout; the model applies {scheme.layout} "
                                         f"({'rotate_half: cos = concat(c, c)' if scheme.layout == 'half' else 'pairs (2i, 2i+1): each value twice in a row'})"))
    if full_head and explains(caches(_rotating(scheme, 1.0), positions, width)):
        found.append(Diagnosis("rotary-dim", f"the arrays rotate all {width} components of the head; the model rotates "
                                             f"{scheme.rotated_dim} (partial_rotary_factor {scheme.partial_rotary_factor:g})"))
    reference = _reference(scheme, positions, width, full_head)
    for k in OFFSETS:
        shifted = positions + k
        if shifted.min() >= 0 and explains(_reference(scheme, shifted, width, full_head)):
            found.append(Diagnosis("position-offset", f"position p holds the values of position p{k:+d}"))
            break
    if explains((reference[0], -reference[1])):
        found.append(Diagnosis("sin-sign", "sin has the opposite sign: the arrays turn each pair by −pθ"))
    scale = scheme.attention_scaling
    if scale != 1.0 and explains((reference[0] / scale, reference[1] / scale)):
        found.append(Diagnosis("attention-scaling", f"cos and sin miss the attention scaling {scale:.6g} of the "
                                                    f"{scheme.scaling} scaling"))
    elif not found:
        ratio = _common_ratio(cos64, sin64, reference)
        if ratio is not None and abs(ratio - 1.0) > 1e-6 and explains((reference[0] * ratio, reference[1] * ratio)):
            found.append(Diagnosis("attention-scaling", f"cos and sin carry a factor {ratio * scale:.6g} where the "
                                                        f"model's attention scaling is {scale:.6g}"))
    scaled = scheme.scaling not in ("none", None)
    if scaled and explains(_reference(scheme.without_extension(), positions, width, full_head)):
        found.append(Diagnosis("scaling", f"the {scheme.scaling} scaling was not applied: the arrays are the "
                                          "unscaled frequencies"))
    elif not found:
        base = _fitted_base(cos64, sin64, scheme, positions, width, full_head)
        if base is not None and not math.isclose(base, scheme.base, rel_tol=1e-6):
            fitted = _with_base(scheme, base)
            if explains(_reference(fitted, positions, width, full_head)):
                found.append(Diagnosis("base", f"the arrays fit base {base:,.6g}; the model's is {scheme.base:,.6g}"))
    if not found:
        for name in ("bfloat16", "float16"):
            if explains(_low_precision(scheme, positions, width, full_head, name), _value_slack(name)):
                found.append(Diagnosis("precision", f"the angles p·θ were formed in {name}: their rounding grows "
                                                    "with the position"))
                break
    return found


def _rotating(scheme: RopeScheme, fraction: float) -> RopeScheme:
    return dataclasses.replace(scheme, partial_rotary_factor=fraction)


def _with_base(scheme: RopeScheme, base: float) -> RopeScheme:
    return dataclasses.replace(scheme.without_extension(), base=float(base))


def _common_ratio(cos64, sin64, reference) -> float | None:
    """The one factor between the arrays and the reference where the reference is not small, or None."""
    values = np.concatenate([reference[0].ravel(), reference[1].ravel()])
    given = np.concatenate([cos64.ravel(), sin64.ravel()])
    large = np.abs(values) > 0.1
    if not large.any():
        return None
    return float(np.median(given[large] / values[large]))


def _fitted_base(cos64, sin64, scheme, positions, width, full_head) -> float | None:
    """The base whose ladder θ_i = b^(−2i/r) fits the arrays' angles at the first position p > 0: each
    pair's angle atan2(sin, cos) / p, where p·θ_i < π (the pairs that have not wrapped), fitted in log."""
    rows = np.flatnonzero(positions > 0)
    if rows.size == 0:
        return None
    row, p = int(rows[0]), float(positions[rows[0]])
    pairs = scheme.rotated_dim // 2
    # the column of each pair's value: one per pair, the first half (rotate_half), or every other one
    first = np.arange(0, 2 * pairs, 2) if width != pairs and scheme.layout == "interleaved" else np.arange(pairs)
    angle = np.arctan2(sin64[row, first], cos64[row, first]) / p
    index = np.arange(pairs)
    usable = (angle > 0) & (angle * p < math.pi - 0.1) & (index > 0)
    if usable.sum() < 2:
        return None
    slope = np.polyfit(index[usable], np.log(angle[usable]), 1)[0]  # ln θ_i = −(2i/r) ln b
    return float(math.exp(-slope * scheme.rotated_dim / 2.0))


def _low_precision(scheme, positions, width, full_head, name):
    """The reference with its angles formed in ``name``: positions and inverse frequencies rounded to it,
    their product rounded again (as ``positions.to(dtype) * inv_freq.to(dtype)`` computes it)."""
    from pecli.dtypes import cast

    def angles(ids: np.ndarray) -> np.ndarray:
        p = cast(np.asarray(ids, dtype=np.float64), name).astype(np.float64)
        theta = cast(scheme.inv_freq, name).astype(np.float64)
        return cast(np.outer(p, theta), name).astype(np.float64)

    if full_head:
        return None
    return caches(scheme, positions, width, angles=angles)


def _value_slack(name: str) -> float:
    """The rounding of cos and sin values computed in ``name``: two units of its precision."""
    return 2.0 * (2.0**-8 if name == "bfloat16" else 2.0**-11)


def _unexplained(error: np.ndarray, tol: np.ndarray, positions: np.ndarray) -> str:
    """Where the error starts and how it spreads, when no known cause explains it."""
    bad = error > tol
    rows, columns = np.nonzero(bad)
    first = int(positions[rows.min()])
    share = bad.mean()
    return (f"no known cause explains the arrays: they first differ at position {first} (component "
            f"{int(columns[rows == rows.min()].min())}); {100 * share:.1f}% of the values are off, the largest by "
            f"{float(error.max()):.3g}")
