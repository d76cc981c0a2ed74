"""A user's RoPE cos and sin against the reference, streamed block by block, and the bug named.

:func:`verify_rope` compares the arrays with the reference scheme's cos and sin at the same positions,
each value held to how it is stored (:mod:`pecli.verification.stream`). When they differ, each known
cause is a candidate reference — the model's with that cause applied, its scaling kept — compared
with the arrays in a second pass in which every candidate still explaining the arrays is carried
along; the pass ends as soon as none is left. A wrong base is fitted from the arrays' own angles at
any positions (strided, late, sparse), with and without the model's scaling.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from pecli.verification.stream import (
    EPS, OFFSETS, Candidate, Fit, Rows, Wider, angle_values, as_rows, candidate, column_errors, is_bfloat16, own_precision,
    pair_columns, run_pass, stored_precision, widened,
)
from pecli.errors import PecliError
from pecli.schemes.rope import RopeScheme

#: Causes that say what is wrong on their own; a measured factor, ``base`` and ``precision`` are tested
#: only when none of them explains the arrays.
STRUCTURAL = ("layout", "rotary-dim", "position-offset", "sin-sign", "attention-scaling", "scaling")


def check_arrays(cos: Rows, sin: Rows, scheme: RopeScheme, positions: np.ndarray) -> None:
    """Refuse arrays whose shape or kind no reference can have (one line each)."""
    if cos.shape != sin.shape:
        raise PecliError(f"cos has shape {list(cos.shape)} and sin {list(sin.shape)}: they must be the same")
    if len(cos.shape) != 2 or 0 in cos.shape:
        raise PecliError(f"cos and sin must be non-empty (positions, width) arrays, got shape {list(cos.shape)}")
    if cos.shape[0] != len(positions):
        raise PecliError(f"cos and sin have {cos.shape[0]:,} rows and the positions are {len(positions):,}")
    for name, rows in (("cos", cos), ("sin", sin)):
        if rows.dtype.kind not in "fiu" and not is_bfloat16(rows.dtype):
            raise PecliError(f"{name} holds {rows.dtype} values; it must hold numbers")
    if own_precision(cos.dtype) != own_precision(sin.dtype):  # one tolerance holds both: a model computes them alike
        raise PecliError(f"cos is stored as {own_precision(cos.dtype)} and sin as {own_precision(sin.dtype)}; "
                         "give both in the dtype your model computes them in")
    width, r = cos.shape[1], scheme.rotated_dim
    if width not in (r, r // 2, scheme.dim):
        raise PecliError(f"cos and sin are {width} wide; the reference rotates {r} components ({r // 2} pairs) "
                         f"of a {scheme.dim}-wide head: give (P, {r}) caches or (P, {r // 2}) per-pair values")


def compare(cos: Rows, sin: Rows, positions: np.ndarray, proposals: list[Candidate], *, until_settled: bool = False,
            max_bytes: int | None = None, label: str = "verify") -> tuple[list[Fit | None], str]:
    """:func:`run_pass` with the stored precision recognised on the first block, started again wider
    when a later block holds values that precision cannot."""
    first = np.asarray(cos.read(0, min(cos.shape[0], 256)))
    precision = stored_precision(cos.dtype, first)
    if precision != stored_precision(sin.dtype, np.asarray(sin.read(0, min(sin.shape[0], 256)))):
        precision = own_precision(cos.dtype)
    for _ in range(3):
        try:
            return run_pass(cos, sin, positions, proposals, precision, until_settled=until_settled,
                            max_bytes=max_bytes, label=label), precision
        except Wider:
            precision = own_precision(cos.dtype) if precision != own_precision(cos.dtype) else "float64"
    raise AssertionError("the precision of the arrays kept changing")  # pragma: no cover


def verify_rope(cos, sin, scheme: RopeScheme, positions, *, max_bytes: int | None = None):
    """Compare a user's (P, W) ``cos`` and ``sin`` with ``scheme`` at integer ``positions``.

    ``W`` is the rotated dimension r (caches in either layout), r/2 (one value per pair), or the head
    dimension of a model that rotates part of it (the other components must not turn). The arrays may
    be NumPy arrays (float64, float32, float16, ml_dtypes' bfloat16) or anything with ``shape``,
    ``dtype`` and ``read(start, stop)`` giving a block of rows (:class:`~pecli.verification.stream.Rows`);
    they are compared a block of rows at a time, memory bounded by ``max_bytes`` (about 12 float64
    copies of a block are held).

    Raises
    ------
    PecliError
        Shapes that fit no layout, cos and sin of different shapes, positions of another length, values
        that are not numbers.
    """
    from pecli.verification.report import VerifyReport

    cos, sin = as_rows(cos), as_rows(sin)
    positions = np.asarray(positions, dtype=np.int64)
    check_arrays(cos, sin, scheme, positions)
    reference = candidate(scheme, positions)
    (fit,), precision = compare(cos, sin, positions, [reference], max_bytes=max_bytes, label="verify: compare")
    report = VerifyReport(fit.passes, fit.error, 0, 0, 0.0, str(cos.dtype), values=precision)
    report = located(report, cos, sin, fit, reference, precision)
    if report.match:
        return report
    causes = diagnose(cos, sin, scheme, positions, reference, precision, max_bytes)
    if causes:
        return dataclasses.replace(report, diagnosis=tuple(causes))
    return dataclasses.replace(report, notes=unexplained(fit, positions, report))


def located(report, cos: Rows, sin: Rows, fit: Fit, reference: Candidate, precision: str):
    """The report with the largest |Δ| and the worst error-to-tolerance ratio placed in their rows."""
    positions = reference.positions
    error, tol = column_errors(cos, sin, fit.error_row, reference, precision)
    dim = int(np.argmax(error[0]))
    report = dataclasses.replace(report, max_abs_error=float(error[0, dim]), worst_position=int(positions[fit.error_row]),
                                 worst_dim=dim, tolerance=float(tol[0, dim]))
    error, tol = column_errors(cos, sin, fit.ratio_row, reference, precision)
    ratio = error[0] / tol[0]
    at = int(np.argmax(ratio))
    return dataclasses.replace(report, ratio=float(ratio[at]), ratio_position=int(positions[fit.ratio_row]), ratio_dim=at,
                               ratio_tolerance=float(tol[0, at]))


def unexplained(fit: Fit, positions: np.ndarray, report) -> tuple[str, ...]:
    """Where the error starts and how it grows, when no known cause explains it."""
    notes = []
    if fit.nonfinite is not None:
        notes.append(f"cos or sin holds NaN or ±inf at position {int(positions[fit.nonfinite]):,}: such values never match")
    first = int(positions[fit.first_wrong or 0])
    text = (f"no known cause explains the arrays: they first differ at position {first:,}; the largest error, "
            f"{report.max_abs_error:.3g}, is at position {report.worst_position:,}, component {report.worst_dim}")
    rows = len(positions)
    if len(fit.blocks) >= 4:
        early = max(e for start, _, e in fit.blocks if start < rows // 4)
        late = max(e for _, stop, e in fit.blocks if stop > rows - rows // 4)
        text += f"; largest in the first quarter of the rows {early:.3g}, in the last {late:.3g}"
    return (*notes, text)


def diagnose(cos: Rows, sin: Rows, scheme: RopeScheme, positions: np.ndarray, reference: Candidate, precision: str,
             max_bytes: int | None) -> list:
    """Every known cause that explains the arrays: first the structural ones (:data:`STRUCTURAL`), then —
    only when none of them does — a measured factor, a fitted base and low-precision angles (a missing
    NTK scaling is also a base change: the scaling is named). Each stage is one pass that ends when no
    candidate is left."""
    from pecli.verification.report import Diagnosis

    for stage in (_hypotheses(cos, sin, scheme, positions, reference), _measured(cos, sin, scheme, positions, reference, precision)):
        hypotheses = list(stage)
        if not hypotheses:
            continue
        fits, _ = compare(cos, sin, positions, [h[2] for h in hypotheses], until_settled=True, max_bytes=max_bytes,
                          label="verify: diagnose")
        found: list[tuple[str, str]] = []
        for (code, message, _), fit in zip(hypotheses, fits):
            if fit is not None and fit.passes and code not in (c for c, _ in found):
                found.append((code, message))
        if found:
            codes = {code for code, _ in found}
            return [Diagnosis("attention-scaling" if code == "factor" else code, message) for code, message in found
                    if not (code == "precision" and codes & {"base", "factor"}) and not (code == "base" and "factor" in codes)]
    return []


def _hypotheses(cos, sin, scheme: RopeScheme, positions, reference: Candidate):
    """``(code, message, candidate)`` for each structural cause, in the order a cause would mask another."""
    width, r = cos.shape[1], scheme.rotated_dim
    other = "interleaved" if scheme.layout == "half" else "half"
    if width >= r and width != r // 2:
        yield ("layout", f"the arrays are in the {other} layout; the model applies {scheme.layout} "
                         f"({'rotate_half: cos = concat(c, c)' if scheme.layout == 'half' else 'pairs (2i, 2i+1): each value twice in a row'})",
               dataclasses.replace(reference, layout=other))
    if width == scheme.dim != r:
        yield ("rotary-dim", f"the arrays rotate all {width} components of the head; the model rotates {r} "
                             f"(partial_rotary_factor {scheme.partial_rotary_factor:g})",
               candidate(dataclasses.replace(scheme, partial_rotary_factor=1.0), positions))
    for k in OFFSETS:
        if positions.min() + k >= 0:
            yield ("position-offset", f"position p holds the values of position p{k:+d}",
                   dataclasses.replace(reference, positions=positions + k))
    turned = "−pθ" if reference.sign > 0 else ("+pθ, where the model turns it by −pθ (transformers' nanochat keeps "
                                                "the caches of +pθ and reverses rotate_half instead)")
    yield "sin-sign", f"sin has the opposite sign: the arrays turn each pair by {turned}", \
        dataclasses.replace(reference, sign=-reference.sign)
    scale = scheme.attention_scaling
    if scale != 1.0:
        yield ("attention-scaling", f"cos and sin miss the attention scaling {scale:.6g} of the {scheme.scaling} scaling",
               dataclasses.replace(reference, scale=1.0))
    if scheme.rope_scaling.record.scales:
        yield ("scaling", f"the {scheme.scaling} scaling was not applied: the arrays are the unscaled frequencies",
               candidate(scheme.without_extension(), positions))


def _measured(cos, sin, scheme: RopeScheme, positions, reference: Candidate, precision: str):
    """The causes measured from the arrays (a factor, a base) and low-precision angles, as
    ``(code, message, candidate)``."""
    from pecli.verification.rope_base import base_hypotheses

    scale = scheme.attention_scaling
    ratio = _common_ratio(cos, sin, reference)
    if ratio is not None and abs(ratio - 1.0) > 1e-6:
        yield ("factor", f"cos and sin carry a factor {ratio * scale:.6g} where the model's attention scaling is {scale:.6g}",
               dataclasses.replace(reference, scale=scale * ratio))
    yield from base_hypotheses(cos, sin, scheme, positions, precision)
    for name in ("bfloat16", "float16", "float32"):  # float32's rounding passes unless past the cap
        yield ("precision", f"the angles p·θ were formed in {name}: their rounding grows with the position"
                            + (", past half a radian here" if name == "float32" else ""),
               dataclasses.replace(reference, values=angle_values(_low_precision_angles(scheme, name)),
                                   slack=EPS[name]))
    for name in ("bfloat16", "float16"):
        yield ("precision", f"the angles p·θ were formed in float32 and rounded once to {name} (emb.to({name})): "
                            "their rounding grows with the position",
               dataclasses.replace(reference, values=angle_values(_rounded_angles(scheme, name)), slack=EPS[name]))


def _common_ratio(cos: Rows, sin: Rows, reference: Candidate) -> float | None:
    """The one factor between the arrays and the reference where the reference is not small, measured on
    the first rows, or None."""
    rows = min(len(reference.positions), 256)
    columns = pair_columns(cos.shape[1], reference.pairs, reference.layout)
    if columns is None:
        return None
    c, s = reference.values(reference.positions[:rows])
    values = np.concatenate([c.ravel(), s.ravel()]) * reference.scale
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        gc = widened(np.asarray(cos.read(0, rows))).astype(np.float64)[:, columns[0]]
        gs = widened(np.asarray(sin.read(0, rows))).astype(np.float64)[:, columns[0]]
        given = np.concatenate([gc.ravel(), gs.ravel()])
        large = np.abs(values) > 0.1
        if not large.any() or not np.isfinite(given).all():
            return None
        ratio = float(np.median(given[large] / values[large]))
    return ratio if math.isfinite(ratio) and ratio > 0 else None


def _low_precision_angles(scheme: RopeScheme, name: str):
    """The angles formed in ``name``: positions and inverse frequencies rounded to it, their product
    rounded again (as ``positions.to(dtype) * inv_freq.to(dtype)`` computes it); past float16's largest
    number they are ±inf, and their cos and sin NaN, as a float16 pipeline gives them."""
    from pecli.dtypes import cast

    theta = cast(scheme.inv_freq, name).astype(np.float64)

    def angles(ids: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            p = cast(np.asarray(ids, dtype=np.float64), name).astype(np.float64)
            return cast(np.outer(p, theta), name).astype(np.float64)

    return angles


def _rounded_angles(scheme: RopeScheme, name: str):
    """The angles formed in float32 (``positions.float() @ inv_freq.float()``) and then cast to ``name``
    once, as code that moves its ``freqs`` to the model's dtype before cos and sin computes them."""
    from pecli.dtypes import cast

    theta = scheme.inv_freq.astype(np.float32)

    def angles(ids: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            product = np.outer(np.asarray(ids, dtype=np.float32), theta).astype(np.float32)
            return cast(product, name).astype(np.float64)

    return angles


def error_map(cos, sin, scheme: RopeScheme, positions, rows: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """The arrays' error over the tolerance against ``scheme`` for each component, the largest of each
    band of consecutive positions (at most ``rows`` bands), and the first position of each band: the
    picture of where the error starts and how it grows with position and component."""
    from pecli.verification.stream import block_rows, columns_of

    cos, sin = as_rows(cos), as_rows(sin)
    positions = np.asarray(positions, dtype=np.int64)
    reference = candidate(scheme, positions)
    precision = stored_precision(cos.dtype, np.asarray(cos.read(0, min(cos.shape[0], 256))))
    band = max(1, -(-len(positions) // rows))
    step = band * max(1, block_rows(cos.shape[1]) // band)
    out = []
    for start in range(0, len(positions), step):
        stop = min(len(positions), start + step)
        gc = widened(np.asarray(cos.read(start, stop))).astype(np.float64)
        gs = widened(np.asarray(sin.read(start, stop))).astype(np.float64)
        error, tol = columns_of(gc, gs, positions[start:stop], reference, precision)
        ratio = error / tol
        bands = -(-ratio.shape[0] // band)
        padded = np.full((bands * band, ratio.shape[1]), -np.inf)
        padded[: ratio.shape[0]] = ratio
        out.append(padded.reshape(bands, band, -1).max(axis=1))
    return np.vstack(out), positions[::band]
