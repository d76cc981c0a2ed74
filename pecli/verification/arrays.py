"""A user's own position-encoding arrays against the reference, and what went wrong when they differ.

RoPE's cos and sin are compared by :func:`~pecli.verification.rope.verify_rope` (streamed block by
block, each value held to how it is stored: :mod:`pecli.verification.stream`). When the arrays
differ, each known cause is tested as a hypothesis — the reference recomputed with the cause applied,
held to the same tolerance — and every cause that explains the arrays is reported; when none does, the
report says where the error starts and names no cause. A report gives the largest |Δ| and where it is,
and separately the worst error-to-tolerance ratio and where (they need not be the same element).

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
from typing import Any, Callable

import numpy as np

from pecli.errors import PecliError
from pecli.verification.stream import ANGLE_ULPS, OFFSETS
from pecli.verification.report import Diagnosis, VerifyReport  # noqa: F401 (the results, re-exported)
from pecli.schemes.positions import MAX_ID
from pecli.schemes.rope import RopeScheme

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
    "vision-rule": "M-RoPE ids that are 1-D positions on all three components",
    "block-start": "M-RoPE blocks after an image or a video starting at the token count",
    "temporal-rule": "a video's temporal ids following the other Qwen-VL rule (frame index vs time)",
    "axes": "M-RoPE h and w ids swapped",
}


def _rotating(scheme: RopeScheme, fraction: float) -> RopeScheme:
    return dataclasses.replace(scheme, partial_rotary_factor=fraction)


def _with_base(scheme: RopeScheme, base: float) -> RopeScheme:
    return dataclasses.replace(scheme.without_extension(), base=float(base))


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
    worst, at_ratio = int(np.argmax(difference)), int(np.argmax(difference / tol))
    report = VerifyReport(bool(np.all(difference <= tol)), float(difference.max(initial=0.0)), None, worst,
                          float(tol[worst]), str(dtype), ratio=float(difference[at_ratio] / tol[at_ratio]),
                          ratio_dim=at_ratio, ratio_tolerance=float(tol[at_ratio]))
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
         lambda: scheme.without_extension().inv_freq if scheme.rope_scaling.record.scales else None, 0.0),
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
    eps = max(float(np.finfo(dtype).eps), 2.0**-52)
    tol = (ANGLE_ULPS * eps * np.abs(np.asarray(positions, dtype=np.float64)) + 2.0 * eps)[:, None] + 1e-12

    def error(candidate: Any, ids: np.ndarray = positions) -> np.ndarray:
        return np.abs(given - candidate.encode(ids))

    difference = error(scheme)
    row, column = np.unravel_index(int(np.argmax(difference)), difference.shape)
    at_ratio = np.unravel_index(int(np.argmax(difference / tol)), difference.shape)
    report = VerifyReport(bool(np.all(difference <= tol)), float(difference.max()), int(positions[row]), int(column),
                          float(tol[row, 0]), str(dtype), ratio=float((difference / tol)[at_ratio]),
                          ratio_position=int(positions[at_ratio[0]]), ratio_dim=int(at_ratio[1]),
                          ratio_tolerance=float(tol[at_ratio[0], 0]))
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
    index = np.unravel_index(int(np.argmax(difference)), difference.shape)
    at_ratio = np.unravel_index(int(np.argmax(difference / tol)), difference.shape)
    report = VerifyReport(bool(np.all(difference <= tol)), float(difference.max()), int(queries[index[1]]),
                          int(index[2]), float(tol[index]), str(dtype), ratio=float(difference[at_ratio] / tol[at_ratio]),
                          ratio_position=int(queries[at_ratio[1]]), ratio_dim=int(at_ratio[2]),
                          ratio_tolerance=float(tol[at_ratio]))
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
    "t5": (("buckets",),), "mrope": (("position_ids",),),
}
#: Inputs that are vectors of values, without positions.
VECTORS = ("inv_freq", "slopes")


#: Float64 copies of a whole input the comparison holds at its peak (the array widened, the reference, the
#: difference and its masks; T5's buckets: the relative positions, the rule's buckets, their difference and
#: the two variants tested as causes).
WHOLE_COPIES = {"buckets": 6, "bias": 10, "table": 6}
#: The same for the small inputs (vectors of values, M-RoPE's ids).
SMALL_COPIES = 12
#: cos and sin: rows read at once whatever the budget (the first rows of both, where the stored precision is
#: recognised) and bytes per value they hold (both, widened to float64); bytes per value of a block of the
#: pass (:func:`pecli.verification.stream.block_rows`), which holds a row at least.
SAMPLE_ROWS, SAMPLE_BYTES_PER_VALUE, PASS_BYTES_PER_VALUE = 256, 16, 96
#: Bytes held per position for cos and sin: the int64 ids and two float64 copies of them.
ID_BYTES = 24


def memory_needed(name: str, shape: tuple[int, ...]) -> int:
    """Bytes verifying input ``name`` of ``shape`` holds at least: the whole array's working copies
    (:data:`WHOLE_COPIES`, :data:`SMALL_COPIES`), or for ``cos`` and ``sin`` (read a block of rows at a time,
    the blocks fitted to the budget) the ids, and the larger of the first :data:`SAMPLE_ROWS` rows and a
    block of one row."""
    values = int(np.prod(shape, dtype=np.float64)) if len(shape) else 1
    if name in ("cos", "sin"):
        rows = shape[0] if shape else 0
        width = values // max(rows, 1)
        sample = SAMPLE_BYTES_PER_VALUE * width * min(max(rows, 1), SAMPLE_ROWS)
        return ID_BYTES * rows + max(sample, PASS_BYTES_PER_VALUE * width)
    return 8 * values * WHOLE_COPIES.get(name, SMALL_COPIES)


def check_memory_of(shapes: dict[str, tuple[int, ...]], max_bytes: int | None) -> None:
    """Refuse, before any work, inputs whose verification needs more than ``max_bytes``, naming the
    smallest budget it can keep (:func:`memory_needed`; cos and sin count once)."""
    if max_bytes is None:
        return
    names = [name for name in shapes if name != "sin" or "cos" not in shapes]
    need = sum(memory_needed(name, tuple(shapes[name])) for name in names)
    if need > max_bytes:
        from pecli.io import size_text

        what = " and ".join(f"{'cos and sin' if name == 'cos' and 'sin' in shapes else name} of shape "
                            f"{list(shapes[name])}" for name in names)
        raise PecliError(f"verifying {what} needs about {size_text(need)} of memory, over the budget of "
                         f"{size_text(max_bytes)}; give a budget of {size_text(need)} or more (--max-memory, "
                         "max_memory=) or fewer positions")


def verify_arrays(scheme: Any, positions: np.ndarray | None = None, *, max_bytes: int | None = None,
                  **arrays: Any) -> VerifyReport:
    """Verify the arrays given by name (``cos`` and ``sin``, ``inv_freq``, ``slopes``, ``bias``,
    ``table`` or ``buckets``, as :data:`INPUTS` pairs them with schemes) against ``scheme``, at
    ``positions`` (default 0 … P − 1 for the arrays that have a row per position). A scaling that reads
    the sequence length (dynamic NTK, LongRoPE) takes it from the positions, as transformers does: the
    largest id + 1.

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
    check_memory_of({name: tuple(getattr(array, "shape", np.shape(array))) for name, array in arrays.items()}, max_bytes)
    if chosen[0] in VECTORS + ("bias", "position_ids"):
        if positions is not None:
            raise PecliError(f"{chosen[0]}: holds no positions; leave --positions out")
        from pecli.verification.mrope import verify_position_ids

        check = {"inv_freq": verify_inv_freq, "slopes": verify_slopes, "bias": verify_bias,
                 "position_ids": verify_position_ids}[chosen[0]]
        return check(arrays[chosen[0]], scheme)
    if chosen == ("cos", "sin"):
        from pecli.verification.stream import as_rows

        arrays = {name: as_rows(arrays[name]) for name in chosen}
    first = arrays[chosen[0]] if chosen == ("cos", "sin") else np.asarray(arrays[chosen[0]])
    shape = tuple(getattr(first, "shape", np.shape(first)))
    ids = np.arange(shape[0] if shape else 0) if positions is None else position_ids(positions)
    if chosen == ("cos", "sin"):
        if scheme.reads_context:  # dynamic and longrope: the sequence reaches the last id (HF: max id + 1)
            scheme = scheme.at_length(int(ids.max()) + 1 if ids.size else 1)
        from pecli.verification.rope import verify_rope

        report = verify_rope(arrays["cos"], arrays["sin"], scheme, ids, max_bytes=max_bytes)
        for rows in arrays.values():  # an archive's member read in place: its CRC-32 held to the archive's
            check = getattr(rows, "check_integrity", None)
            if check is not None:
                check()
        return report
    return (verify_table if chosen == ("table",) else verify_buckets)(first, scheme, ids)


def position_ids(positions: Any) -> np.ndarray:
    """Positions as int64 ids: whole numbers, 0 or more (verify holds arrays to integer position ids)."""
    given = np.asarray(positions)
    if given.ndim != 1 or given.dtype.kind not in "iuf":
        raise PecliError(f"positions: give a list of whole numbers, got shape {list(given.shape)} of {given.dtype}")
    if given.dtype.kind == "f" and not (np.isfinite(given).all() and np.array_equal(given, np.round(given))):
        bad = given[~(np.isfinite(given) & (given == np.round(given)))][0]
        raise PecliError(f"positions: {bad:g} is not a whole number; verify compares arrays at integer position ids")
    if given.size and given.min() < 0:
        raise PecliError(f"positions: {given.min():g} is negative; position ids start at 0")
    if given.size and given.max() >= MAX_ID:  # as_positions' bound: float64 holds every whole number below it
        raise PecliError(f"positions: {int(given.max()):,} is not below 2^53 = {MAX_ID:,}, from where float64 "
                         "does not hold every whole number (nor the angles p·θ); verify compares positions below 2^53, "
                         "as every command encodes them")
    return given.astype(np.int64)
