"""Extrapolation: what happens to positions (distances) past the training length T.

[Conditions] and [Fleetwood] (binary: trained on 256 positions with 8 bits, position 300 needs 9),
[Common-PE], [EulerBlind] and [PE-explained] (learned tables are undefined past max_len), [EulerBlind]
(ALiBi extrapolates best). The labels are the articles of the References page (docs/references.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
import numpy as np

from pecli.analysis.result import PropertyResult
from pecli.wavelengths.spectrum import wavelengths_of
from pecli.analysis.encoding_pass import Accumulator, Block, EncodingRows, RowHashes, Scratch, encoding_rows, same_encoding
from pecli.analysis.structure import bias_domain, has_vectors, row_blocks, rotation_pairs, rows_at
from pecli.errors import PecliError, PositionError
from pecli.schemes.base import Capability, Scheme, require
from pecli.numbers import integer, number, position

#: The position [Conditions] takes as its example of a binary overflow after training on 256 positions.
SEED_EXAMPLE_POSITION = 300
#: Slack, as a share of the training range, before values count as outside it.
RANGE_SLACK = 0.01


@dataclass(frozen=True)
class AngleRanges:
    """Angles per frequency pair at training and at test positions.

    Attributes
    ----------
    inv_freq:
        θ_i the test scheme uses (its frequency pairs' ``inv_freq``, scalings included).
    train_inv_freq:
        θ_i of the trained scheme (the same unless a scaled scheme is compared with its original).
    train_max_angle:
        ``(T − 1) · θ_i`` (training), radians.
    test_max_angle:
        ``(L − 1) · θ_i`` (test), radians.
    wavelength:
        ``2π / θ_i`` positions (inf where θ_i = 0).
    unseen:
        Pairs whose test positions reach angles (modulo full turns) that training never reached:
        training covered less than a full turn (``(T − 1) θ_i^train < 2π``) and the test angle goes past
        it. Without scaling these are the pairs whose wavelength exceeds about T.
    first_unseen_pair:
        Index of the first unseen pair, or None.
    """

    train_length: int
    length: int
    inv_freq: np.ndarray
    train_inv_freq: np.ndarray
    train_max_angle: np.ndarray
    test_max_angle: np.ndarray
    wavelength: np.ndarray
    unseen: np.ndarray
    first_unseen_pair: int | None

    @property
    def unseen_count(self) -> int:
        return int(np.count_nonzero(self.unseen))

    @property
    def overshoot(self) -> np.ndarray:
        """Per pair, how far past its training range the test angle goes: ``(L − 1) θ_i / (T θ_i^train)``
        for unseen pairs, 1 for the others."""
        seen_up_to = self.train_length * self.train_inv_freq
        return np.where(self.unseen, self.test_max_angle / np.where(seen_up_to > 0, seen_up_to, 1.0), 1.0)


def angle_ranges(scheme: Scheme, train_length: int, length: int, *, train_scheme: Scheme | None = None) -> AngleRanges:
    """The :class:`AngleRanges` of a sinusoidal or rotary scheme trained on T positions, tested on L.

    Parameters
    ----------
    scheme:
        A scheme with frequency pairs (sinusoidal, rope and variants); its θ_i are used as they are,
        context extension scalings included.
    train_length, length:
        T and L, with L > T ≥ 1.
    train_scheme:
        The scheme training used, when it differs (a scaled RoPE compared with the unscaled original);
        default ``scheme``.
    """
    require(scheme, Capability.FREQUENCIES, "angle ranges")
    if not 1 <= train_length < length:
        raise PecliError(f"train_length must be in 1 … length − 1 ({integer(length - 1)}), got {integer(train_length)}")
    inv_freq = scheme.frequency_pairs().inv_freq
    train_inv_freq = (train_scheme or scheme).frequency_pairs().inv_freq
    return angle_ranges_of(inv_freq, train_inv_freq, train_length, length)


def angle_ranges_of(inv_freq: np.ndarray, train_inv_freq: np.ndarray, train_length: int, length: int) -> AngleRanges:
    """The :class:`AngleRanges` of sinusoids turning at ``inv_freq`` θ_i over positions 0 … L − 1, whose
    training turned them at ``train_inv_freq`` over positions 0 … T − 1 (1 ≤ T ≤ L; T = L: none unseen).

    The rule of :func:`angle_ranges`, for any coordinate: on a grid, one axis's pairs over its span.
    """
    inv_freq = np.asarray(inv_freq, dtype=np.float64)
    train_inv_freq = np.asarray(train_inv_freq, dtype=np.float64)
    train_max = (train_length - 1) * train_inv_freq
    test_max = (length - 1) * inv_freq
    wavelength = wavelengths_of(inv_freq)
    # Training covered the angles of positions 0 … T−1; an angle up to T·θ (where the next position
    # would be) counts as seen, so that position interpolation by exactly L/T, which maps L − 1 to
    # T − T/L, is in range. A pair whose wavelength fits in T (T·θ ≥ 2π) has seen every angle.
    seen_up_to = train_length * train_inv_freq
    unseen = (seen_up_to < 2 * math.pi) & (test_max > seen_up_to * (1 + 1e-12))
    first = int(np.argmax(unseen)) if unseen.any() else None
    return AngleRanges(train_length, length, inv_freq, train_inv_freq, train_max, test_max, wavelength, unseen, first)


def default_train_length(length: int, scheme: Scheme | None = None) -> int:
    """T when none is given: the model's own training length where the scheme knows it (a scaling's
    pre-training length, else the model's ``max_position_embeddings``), whatever L is; else half of L
    (512 → 256, [Conditions]'s binary example)."""
    own = None if scheme is None else scheme.training_length
    return int(own) if own is not None else max(1, length // 2)


def check_extrapolation(scheme: Scheme, length: int, *, train_length: int | None = None) -> PropertyResult:
    """Can the scheme, as trained on T positions, encode positions T … L − 1, and how?

    Parameters
    ----------
    scheme:
        The scheme at test length L.
    length:
        L.
    train_length:
        T < L (default L // 2, or a scaled RoPE's pre-training length below L).

    The scheme as trained is ``scheme.at_length(T)``: parameters filled from the length (binary
    ``bits``, learned ``max_length``) are filled from T, those the user gave stay.

    Returns
    -------
    PropertyResult
        ``fail`` when positions past T are undefined (learned past max_length, binary past 2**bits), when
        vector values leave the range training saw (integer: grows without bound), or when new positions
        collide; ``warn`` for sinusoidal/rotary pairs that reach unseen angles (see :func:`angle_ranges`),
        bias distances that get untrained buckets or indices, and encodings that depend on the length;
        ``pass`` otherwise. Bias schemes: T5 and Shaw map unseen distances onto the last bucket / the clip
        seen in training (the resolution lost is reported); ALiBi continues its monotone penalty (the
        largest unseen bias is reported). ``n/a`` when the model's own training length (a scaling's
        original length, a checkpoint table's rows) already covers L: nothing past training is measured.
    """
    if train_length is None and scheme.training_length is not None and scheme.training_length >= length:
        own = scheme.training_length
        return PropertyResult(
            "extrapolation", "n/a",
            f"nothing to extrapolate: the model was trained on {integer(own)} positions and L = {integer(length)} goes no further; "
            f"give --length above {integer(own)}", {"train_length": own, "length": length}, "train_length",
        )
    train_length = default_train_length(length, scheme) if train_length is None else int(train_length)
    if not 1 <= train_length < length:
        raise PecliError(f"train_length must be below the length {integer(length)} (and at least 1), got {integer(train_length)}; pass --length")
    trained = scheme.at_length(train_length)
    if has_vectors(scheme):
        return _vector_extrapolation(scheme, trained, train_length, length)
    return _bias_extrapolation(trained, train_length, length)


def _first_undefined(scheme: Scheme, start: int, stop: int) -> int | None:
    """The first position in [start, stop) the scheme cannot encode (positions past it assumed undefined too)."""
    try:
        scheme.check_positions(np.arange(start, stop))
        return None
    except PositionError:
        pass
    low, high = start, stop - 1  # invariant: high is undefined
    while low < high:
        middle = (low + high) // 2
        try:
            scheme.check_positions(np.array([middle]))
            low = middle + 1
        except PositionError:
            high = middle
    return high


def _vector_extrapolation(scheme: Scheme, trained: Scheme, train_length: int, length: int) -> PropertyResult:
    figures: dict = {"train_length": train_length, "length": length}
    fixed_by_training = {k: v for k, v in trained.params().items() if k in type(trained).length_defaults}
    if fixed_by_training:  # what the scheme looked like when trained (binary bits, learned rows)
        figures["trained_with"] = fixed_by_training
    first = _first_undefined(trained, train_length, length)
    if first is not None:
        try:
            trained.check_positions(np.array([first]))
        except PositionError as error:
            why = str(error)
        if first < SEED_EXAMPLE_POSITION < length:
            try:
                trained.check_positions(np.array([SEED_EXAMPLE_POSITION]))
            except PositionError as error:
                why += f"; e.g. {str(error).split(': ', 1)[-1]}"
        figures.update({"defined": False, "first_undefined": first, "undefined_positions": length - first})
        return PropertyResult("extrapolation", "fail", f"undefined past training: {why}", figures, "first_undefined")
    if trained.kind == "additive" and trained.parameter_count > 0:
        # A trained table (learned): rows T … L−1 exist but training never updated them.
        figures.update({"defined": True, "first_undefined": None, "untrained_rows": length - train_length})
        table = ", ".join(f"{k} {v}" for k, v in fixed_by_training.items()) or "its size"
        reason = (
            f"positions {integer(train_length)} … {integer(length - 1)} have rows in the table ({table}) that training never "
            "updated: they hold their random initialisation"
        )
        return PropertyResult("extrapolation", "fail", reason, figures, "untrained_rows")
    rows = encoding_rows(trained, length, stream=None if same_encoding(trained, scheme) else True)
    spans, _ = rows.measure(*extrapolation_rows(trained, train_length, length))
    low, high = spans.seen_low, spans.seen_high
    new_low, new_high = spans.new_low, spans.new_high
    slack = RANGE_SLACK * ((high - low) or 1.0)
    bounded = new_low >= low - slack and new_high <= high + slack
    found = rows.collisions("float64")
    figures.update({
        "defined": True, "first_undefined": None, "train_range": [low, high], "test_range": [new_low, new_high],
        "bounded": bounded, "colliding_pairs": found.pairs,
    })
    warnings: list[str] = []
    frozen = np.flatnonzero((spans.seen_spread == 0) & (spans.spread > 0))
    figures["components_constant_in_training"] = int(frozen.size)
    pairs = rotation_pairs(scheme)
    if frozen.size and pairs is None:
        warnings.append(
            f"{frozen.size} component(s) never changed in training but change past it (first: component "
            f"{int(frozen[0])}, constant {number(float(rows[0:1][0, frozen[0]]))} on positions 0 … {integer(train_length - 1)})"
        )
    if pairs is not None:
        warnings += _unseen_angles(scheme, trained, figures)
    warnings += _length_dependence(scheme.at_length(length), trained, rows, figures)
    if not bounded:
        far = spans.farthest
        reason = (
            f"unbounded: values reach [{number(new_low)}, {number(new_high)}] at positions {integer(train_length)} … {integer(length - 1)} "
            f"(largest at {position(far)}), training saw [{number(low)}, {number(high)}]"
        )
        return PropertyResult("extrapolation", "fail", reason, figures, "test_range", warnings=tuple(warnings))
    if found.pairs:
        a, b = found.first
        reason = f"new positions collide: {integer(found.pairs)} pairs, first positions {position(a)} and {position(b)}"
        return PropertyResult("extrapolation", "fail", reason, figures, "colliding_pairs", warnings=tuple(warnings))
    reason = (
        f"positions {integer(train_length)} … {integer(length - 1)} are defined, unique and within the training range "
        f"[{number(low)}, {number(high)}]"
    )
    key = "unseen_angle_pairs" if pairs is not None else "test_range"
    if warnings:
        return PropertyResult("extrapolation", "warn", reason + "; but " + "; ".join(warnings), figures, key, warnings=tuple(warnings))
    return PropertyResult("extrapolation", "pass", reason, figures, key)


def _unseen_angles(scheme: Scheme, trained: Scheme, figures: dict) -> list[str]:
    """The warning, if any, that frequency pairs reach angles training never saw (pre-training saw the
    frequencies without any context-extension scaling); ``figures`` gets the angle figures."""
    train_length, length = figures["train_length"], figures["length"]
    ranges = angle_ranges(scheme, train_length, length, train_scheme=trained.without_extension())
    figures["unseen_angle_pairs"] = ranges.unseen_count
    figures["first_unseen_pair"] = ranges.first_unseen_pair
    figures["frequency_pairs"] = int(ranges.inv_freq.size)
    overshoot = ranges.overshoot
    figures["largest_angle_overshoot"] = float(overshoot.max())
    if not ranges.unseen_count:
        return []
    i = ranges.first_unseen_pair
    worst = int(np.argmax(overshoot))
    return [
        f"{ranges.unseen_count} of {ranges.inv_freq.size} frequency pairs reach angles training never saw "
        f"(from pair {i}: wavelength {number(ranges.wavelength[i])} > T = {integer(train_length)}; angle up to "
        f"{number(ranges.test_max_angle[i])} rad against {number(ranges.train_max_angle[i])} in training; the "
        f"worst, pair {worst}, goes {number(overshoot[worst], 3)}× past its training range)"
    ]


def _length_dependence(at_length: Scheme, trained: Scheme, rows: EncodingRows, figures: dict) -> list[str]:
    """The warning, if any, that a position encodes differently at length L than at T (``figures`` gets
    ``length_dependence``: the largest difference, or None when even the width changes)."""
    if at_length.params() == trained.params():
        return []
    train_length, length = figures["train_length"], figures["length"]
    changed = [k for k, v in at_length.params().items() if trained.params().get(k) != v]
    other_width = rows_at(at_length, np.zeros(1, dtype=np.int64)).shape[1]
    if other_width != rows.width:
        figures["length_dependence"] = None
        return [
            f"the encoding's width depends on the length: {rows.width} at {integer(train_length)}, "
            f"{other_width} at {integer(length)} ({', '.join(changed)})"
        ]
    # the same encoding function gives the same values: their largest difference is 0 without computing it
    difference = 0.0 if same_encoding(at_length, trained) else _largest_difference(at_length, rows, train_length)
    figures["length_dependence"] = difference
    if difference > 0:
        return [
            f"the same position encodes differently at length {integer(length)} than at {integer(train_length)} "
            f"(largest difference {number(difference)}, via {', '.join(changed)})"
        ]
    return []


def _largest_difference(scheme: Scheme, rows: EncodingRows, count: int) -> float:
    """``max |E'_p − E_p|`` over p < count, E' the encoding of ``scheme``, E the ``rows``, by blocks."""
    largest = 0.0
    for part in row_blocks(count, rows.width):
        positions = np.arange(part.start, part.stop, dtype=np.int64)
        largest = max(largest, float(np.max(np.abs(rows_at(scheme, positions) - rows[part]))))
    return largest


def extrapolation_rows(trained: Scheme, train_length: int, length: int) -> list[Accumulator]:
    """What extrapolation measures in the pass over the trained scheme's rows: the value ranges on
    both sides of T (:class:`Spans`) and the rows' hashes."""
    return [Spans(train_length), RowHashes(length, "float64")]


@dataclass(frozen=True)
class ValueSpans:
    """Value ranges of an encoding on the training positions (``seen``) and past them (``new``)."""

    seen_low: float
    seen_high: float
    new_low: float
    new_high: float
    #: (width,) per-component ranges (max − min) on the training positions and on all positions.
    seen_spread: np.ndarray
    spread: np.ndarray
    #: The position past training whose largest |value| is largest.
    farthest: int


class Spans(Accumulator):
    """:class:`ValueSpans` of the rows, on either side of the training length T."""

    cost = 1.9  # a minimum and a maximum per column, each row's largest magnitude past T (0.65 s at 2^22, a hash 0.34)

    def __init__(self, train_length: int) -> None:
        self.key = ("spans", int(train_length))
        self.train_length = int(train_length)
        self.low: dict[str, np.ndarray] = {}
        self.high: dict[str, np.ndarray] = {}
        self.farthest, self.farthest_value = self.train_length, -np.inf
        self.scratch = Scratch()

    def add(self, block: Block) -> None:
        cut = min(max(self.train_length - block.start, 0), block.values.shape[0])
        for side, rows in (("seen", block.values[:cut]), ("new", block.values[cut:])):
            if not rows.shape[0]:
                continue
            if side not in self.low:
                self.low[side], self.high[side] = np.full(rows.shape[1], np.inf), np.full(rows.shape[1], -np.inf)
            np.minimum(self.low[side], rows.min(axis=0), out=self.low[side])
            np.maximum(self.high[side], rows.max(axis=0), out=self.high[side])
        if cut < block.values.shape[0]:
            magnitude = np.abs(block.values[cut:], out=self.scratch(block.values[cut:].shape)).max(axis=1)
            at = int(np.argmax(magnitude))
            if magnitude[at] > self.farthest_value:
                self.farthest, self.farthest_value = block.start + cut + at, float(magnitude[at])

    def result(self) -> ValueSpans:
        self.scratch = Scratch()
        low, high = self.low, self.high
        spread = np.maximum(high["seen"], high["new"]) - np.minimum(low["seen"], low["new"])
        return ValueSpans(
            float(low["seen"].min()), float(high["seen"].max()), float(low["new"].min()), float(high["new"].max()),
            high["seen"] - low["seen"], spread, self.farthest,
        )


def _bias_extrapolation(scheme: Scheme, train_length: int, length: int) -> PropertyResult:
    domain = bias_domain(scheme, length)
    distance = np.abs(domain.deltas)
    seen_rows, new_rows = domain.rows[distance < train_length], domain.rows[distance >= train_length]
    new_deltas = domain.deltas[distance >= train_length]
    seen_keys = {row.tobytes() for row in (seen_rows + 0.0)}
    new_keys = [row.tobytes() for row in (new_rows + 0.0)]
    fresh = np.array([key not in seen_keys for key in new_keys])
    distinct_new = len(set(new_keys))
    figures = {
        "train_length": train_length,
        "length": length,
        "side": domain.side,
        "unseen_distances": int(new_rows.shape[0]),
        "distinct_unseen_biases": distinct_new,
        "unseen_biases_not_in_training": int(np.count_nonzero(fresh)),
        "largest_unseen_bias": float(new_rows.flat[np.argmax(np.abs(new_rows))]),
    }
    notes = (domain.note,) if domain.note else ()
    span = f"|Δ| = {integer(train_length)} … {integer(length - 1)}"
    if not fresh.any():
        resolution = (
            f"all {integer(new_rows.shape[0])} unseen distances ({span}) share {distinct_new} "
            f"bias{'es' if distinct_new > 1 else ''} seen in training"
        )
        return PropertyResult(
            "extrapolation", "pass", f"unseen distances map onto values seen in training: {resolution} (resolution lost)",
            figures, "distinct_unseen_biases", notes=notes,
        )
    if scheme.parameter_count > 0:  # learned biases: a bucket or index never seen in training is untrained
        first = int(new_deltas[np.argmax(fresh)])
        warning = (
            f"{integer(int(fresh.sum()))} unseen distances (from Δ = {integer(first)}) use buckets/indices never seen in training: "
            "their learned biases are untrained"
        )
        return PropertyResult(
            "extrapolation", "warn", warning, figures, "unseen_biases_not_in_training", warnings=(warning,), notes=notes,
        )
    if domain.side == "both":
        monotone = _monotone_both(domain)
    else:
        steps = np.diff(domain.rows, axis=0)
        monotone = bool(np.all(steps <= 0) or np.all(steps >= 0))
    if monotone:
        reason = (
            f"continues its monotone penalty past T: unseen distances ({span}) get biases down to "
            f"{number(figures['largest_unseen_bias'])}, so far tokens are only attended less"
        )
        return PropertyResult("extrapolation", "pass", reason, figures, "largest_unseen_bias", notes=notes)
    warning = f"{integer(int(fresh.sum()))} unseen distances get biases never seen in training, not monotone in the distance"
    return PropertyResult("extrapolation", "warn", warning, figures, "unseen_biases_not_in_training", warnings=(warning,), notes=notes)


def _monotone_both(domain) -> bool:
    """Monotone in |Δ| on each side separately."""
    ok = True
    for side in (domain.deltas >= 0, domain.deltas <= 0):
        rows = domain.rows[side][np.argsort(np.abs(domain.deltas[side]), kind="stable")]
        steps = np.diff(rows, axis=0)
        ok &= bool(np.all(steps <= 0) or np.all(steps >= 0))
    return ok
