"""Curves of the attention logit's position-only part: against distance, per head, per dtype.

The numbers are the core's: :func:`pecli.analysis.relativity.score_by_distance`, the schemes' own
``bias``, and :func:`pecli.analysis.precision.precision_profile`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from pecli.numbers import integer, number
from pecli.errors import PecliError
from pecli.render.figures.canvas import (
    MAX_CURVE_POINTS, MAX_LINES, Drawing, describe, describe_all, downsample, number_text, stride_note, varied,
)
from pecli.render.figures.matrices import bias_quantity, channel_title, check_head
from pecli.schemes import Scheme
from pecli.schemes.base import Capability

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

DEFAULT_DTYPES = ("float32", "float16", "bfloat16")


# -- dot product against distance ---------------------------------------------------------------------------
def score_label(schemes: Sequence[Scheme]) -> str:
    """The y label of a score curve: what the score is when every scheme is of one family."""
    if all(scheme.has(Capability.ROTARY) for scheme in schemes):
        return r"$(R_m\mathbf{1})\cdot(R_{m+\Delta}\mathbf{1})$, mean over m"
    if all(scheme.has(Capability.BIAS) for scheme in schemes):
        return "bias(Δ), mean over m"
    if all(scheme.has(Capability.VECTORS) and not scheme.has(Capability.ROTARY) for scheme in schemes):
        return r"$E_m \cdot E_{m+\Delta}$, mean over m"
    return "position-only score, mean over m"


def draw_dot_distance(
    axes: "Axes", schemes: Sequence[Scheme], length: int, *, band: bool = True,
    query_scales: Sequence[Callable[[np.ndarray], np.ndarray] | None] = (),
) -> Drawing:
    """The position-only score against the distance Δ, one curve per scheme (and per head), overlaid.

    The numbers are :func:`pecli.analysis.relativity.score_by_distance`: for each Δ the mean over the
    query positions m of ``score(m, m + Δ)``, and with ``band`` its range over m (zero width for a
    scheme whose score depends on Δ only). ``query_scales[k]``, a model's factor on the query at each
    position (its logit scale), multiplies scheme k's scores, as the model's attention does (None or
    absent: none).
    """
    from pecli.analysis.relativity import score_by_distance

    if not schemes:
        raise PecliError("dot-distance: no scheme to draw")
    several = len(schemes) > 1
    changes = varied(schemes)
    sampled = banded = False
    notes: list[str] = []
    scales = list(query_scales) + [None] * (len(schemes) - len(query_scales))
    # A bias (ALiBi's −slope·Δ, T5's buckets) is on another scale than a dot product: beside one it gets
    # the right-hand axis, else it squashes the other curves flat.
    biases = [s for s in schemes if s.has(Capability.BIAS)]
    split = bool(biases) and len(biases) < len(schemes)
    right = axes.twinx() if split else None
    drawn_curves: list[tuple[str, np.ndarray]] = []
    for index, scheme in enumerate(schemes):
        target = right if split and scheme.has(Capability.BIAS) else axes
        profile = score_by_distance(scheme, length, query_scale=scales[index])
        sampled = sampled or bool(profile.sampled)
        distance = np.asarray(profile.distance)
        mean, low, high = (np.asarray(a) for a in (profile.mean, profile.minimum, profile.maximum))
        keep, step = downsample(np.arange(distance.size), MAX_CURVE_POINTS)
        channels = mean.shape[0]
        drawn = range(min(channels, MAX_LINES))
        for channel in drawn:
            if several:  # one colour per scheme; its heads fade
                color, alpha = f"C{index % 10}", 1.0 - 0.6 * channel / channels
                label = _legend_label(scheme, changes) if channel == 0 else None
            else:  # one colour per head
                color, alpha = f"C{channel % 10}", 1.0
                label = f"head {channel}" if channels > 1 else None
            curve = mean[channel, keep]
            same = _equal_curve(drawn_curves, curve)
            if label is not None and same is not None:  # drawn on top of an equal curve: dashed, and said
                label += f" (the same curve as {same})"
            drawn_curves.append((scheme.name if several else f"head {channel}", curve))
            target.plot(distance[keep], curve, color=color, alpha=alpha, linewidth=1.2, label=label,
                        linestyle="--" if same is not None else "-")
            if band:
                lower, upper = low[channel, keep], high[channel, keep]
                if np.any(upper - lower > 1e-9 * max(1.0, float(np.abs(upper).max()))):
                    target.fill_between(distance[keep], lower, upper, color=color, alpha=0.15, linewidth=0)
                    banded = True
        notes.extend(_scheme_notes(scheme, distance.size, keep.size, step, channels, len(drawn), several))
    scaled = [scheme for scheme, scale in zip(schemes, scales) if scale is not None]
    if scaled:
        names = ", ".join(dict.fromkeys(scheme.name for scheme in scaled))
        whose = "the scores" if len(scaled) == len(schemes) else f"the {names} scores"
        notes.append(f"{whose} carry the model's factor on each query besides cos and sin (its logit scale)")
    axes.axhline(0, color="0.7", linewidth=0.8)
    axes.set_xlabel("distance Δ (tokens)")
    axes.grid(True, alpha=0.3)
    notes += _label_axes(axes, right, schemes, biases)
    if band and not banded:
        notes.append("no band: the score does not vary with m at any distance (it depends on Δ only)")
    if sampled:
        notes.append("the mean and range over m are taken over a sample of query positions")
    title = f"{describe_all(schemes)}: score against distance, L = {integer(length)}" + (" (band: range over m)" if banded else "")
    if right is not None:
        title += f"; {', '.join(dict.fromkeys(s.name for s in biases))} on the right axis"
    return Drawing(title, list(dict.fromkeys(notes)), schemes=list(schemes))


def _equal_curve(drawn: list[tuple[str, np.ndarray]], curve: np.ndarray) -> str | None:
    """The name of an earlier curve ``curve`` equals (it would hide it), or None."""
    atol = 1e-12 * max(1.0, float(np.abs(curve).max()))
    return next((name for name, other in drawn if other.shape == curve.shape
                 and np.allclose(other, curve, rtol=1e-9, atol=atol)), None)


def _label_axes(axes: "Axes", right: "Axes | None", schemes: Sequence[Scheme], biases: list[Scheme]) -> list[str]:
    """The y labels, and one legend for both axes drawn above every curve; the note on the right axis."""
    others = [s for s in schemes if not (right is not None and s.has(Capability.BIAS))]
    axes.set_ylabel(score_label(others) + (" (left axis)" if right is not None else ""))
    handles, labels = axes.get_legend_handles_labels()
    notes = []
    if right is not None:
        names = ", ".join(dict.fromkeys(s.name for s in biases))
        right.set_ylabel(f"{score_label(biases)} (right axis: {names})")
        more = right.get_legend_handles_labels()
        handles, labels = handles + more[0], labels + more[1]
        notes.append(f"{names} on the right-hand axis, on its own scale: a bias added to the logits, "
                     "not a dot product of the encodings")
        axes.set_zorder(right.get_zorder() + 1)  # the left axes, and so the legend, above the right one's curves
        axes.patch.set_visible(False)
    if any(labels):
        axes.legend(handles, labels, fontsize=8, framealpha=0.95)
    return notes


def _legend_label(scheme: Scheme, changes: dict[str, list]) -> str:
    """A curve's legend entry: the whole scheme when schemes differ, else only what varies (``base=100``)."""
    if "scheme" in changes or not changes:
        return describe(scheme)
    values = scheme.params()
    return " ".join(f"{name}={number_text(values[name])}" for name in changes)


def _scheme_notes(scheme: Scheme, total: int, shown: int, step: int, channels: int, drawn: int, several: bool) -> list[str]:
    """What a dot-distance curve of ``scheme`` leaves out, and what its score is when not a logit."""
    notes = []
    if step > 1:
        notes.append(stride_note(f"distances of {scheme.name}", shown, total, step))
    if channels > drawn:
        notes.append(f"{scheme.name}: first {drawn} of {channels} heads drawn")
    if scheme.score_caveat is not None and several:
        notes.append(f"{scheme.name}: the curve is {scheme.score_caveat}")
    if scheme.has(Capability.ROTARY):
        notes.append(f"{scheme.name}: q = k = all-ones (RoFormer's long-term decay): twice the sum over pairs of "
                     "cos(Δ·θ) × attention scaling², + the unrotated components")
    return notes


# -- bias ----------------------------------------------------------------------------------------------
def draw_bias(axes: "Axes", scheme: Scheme, length: int, *, head: int | None = None) -> Drawing:
    """The bias against the relative distance ``Δ = j − i`` in ``−(L−1) … L−1``, one line per head.

    A piecewise-constant bias (buckets, clipping) is drawn as steps; the distance beyond which it
    stops changing (:meth:`~pecli.schemes.Scheme.bias_limit`) is marked on both sides.
    """
    check_head(scheme, head)
    channels = scheme.channels
    delta_all = np.arange(-(length - 1), length, dtype=np.int64)
    delta, step = downsample(delta_all, MAX_CURVE_POINTS)
    bias = scheme.bias(delta)
    heads = [head] if head is not None else list(range(min(channels, MAX_LINES)))
    drawstyle = "steps-mid" if scheme.piecewise_constant_bias else "default"
    for h in heads:
        named = channels > 1 or scheme.channel_quantity(h) is not None  # one unnamed head needs no legend
        axes.plot(delta, bias[h], drawstyle=drawstyle, linewidth=1.2, label=channel_title(scheme, h, 4) if named else None)
    axes.set_xlabel("relative distance Δ = j − i (tokens; key minus query)")
    axes.set_ylabel(scheme.bias_label)
    axes.axvline(0, color="0.7", linewidth=0.8)
    _mark_limit(axes, scheme)
    if any(axes.get_legend_handles_labels()[1]):
        axes.legend(fontsize=8, ncol=2 if len(heads) > 8 else 1)
    axes.grid(True, alpha=0.3)
    notes = []
    if step > 1:
        notes.append(stride_note("distances", delta.size, delta_all.size, step))
    if head is None and len(heads) < channels:
        notes.append(f"first {len(heads)} of {channels} heads drawn; choose one with --head")
    return Drawing(f"{describe(scheme)}: {bias_quantity(scheme)} against distance, L = {integer(length)}", notes)


def _mark_limit(axes: "Axes", scheme: Scheme) -> None:
    """Dotted lines at ±the distance beyond which the bias no longer changes, labelled on the + side."""
    limit = scheme.bias_limit()
    if limit is None:
        return
    distance, label, side = limit
    for edge in (-distance, distance):
        axes.axvline(edge, color="C3", linewidth=0.8, linestyle=":")
    bottom, top = axes.get_ylim()
    y, align = (top, "top") if side == "top" else (bottom, "bottom")
    axes.text(distance, y, f" {label}", color="C3", fontsize=8, va=align)


# -- precision --------------------------------------------------------------------------------------------
#: ``compute_dtype`` of :func:`draw_precision` that forms the angles in each compared dtype.
EACH = "each"
#: Line styles of the dtypes' curves, so that a curve lying on another stays visible.
DTYPE_STYLES = ("-", "--", "-.", ":")


def draw_precision(
    axes: "Axes", scheme: Scheme, length: int, *, dtypes: Sequence[str] = DEFAULT_DTYPES, compute_dtype: str | None = None
) -> Drawing:
    """The largest absolute error of each position's row against float64, one curve per dtype.

    The numbers are :func:`pecli.analysis.precision.precision_profile`: the float64 encoding rounded
    to each dtype, or with ``compute_dtype`` the angles formed in that dtype first (as a model that
    builds its cache in bfloat16 does; :data:`EACH`: in each compared dtype). The error of a row
    jumps between 0 and its bound from one position to the next (an exact bias such as ALiBi's m·Δ
    rounds exactly at some Δ only), so each dtype is drawn as the worst error up to that distance from
    the first position (solid) over the raw errors (faint). The first position (or distance Δ) that
    collides with its neighbour is marked.
    """
    from pecli.analysis.precision import precision_profile

    over_distance = scheme.has(Capability.BIAS)
    notes: list[str] = []
    exact = []
    low, high = np.inf, 0.0
    for index, dtype in enumerate(dtypes):
        angles = dtype if compute_dtype == EACH else compute_dtype
        profile = precision_profile(scheme, length, dtype=dtype, compute_dtype=angles)
        positions, error = np.asarray(profile.positions), np.asarray(profile.error, dtype=np.float64)
        if profile.note:
            notes.append(profile.note)
        if not np.any(error > 0):
            exact.append(dtype)
            continue
        color, style, order = f"C{index % 10}", DTYPE_STYLES[index % len(DTYPE_STYLES)], 3 + len(dtypes) - index
        keep, step = downsample(np.arange(positions.size), MAX_CURVE_POINTS)
        raw, worst = _strided_max(error, keep), _strided_max(_worst_so_far(positions, error), keep)
        if step > 1:
            notes.append(f"{dtype}: largest error of each run of {step} positions drawn ({keep.size} of {positions.size})")
        axes.plot(positions[keep], np.where(raw > 0, raw, np.nan), color=color, linewidth=0.5, alpha=0.3, zorder=order)
        axes.plot(positions[keep], np.where(worst > 0, worst, np.nan), color=color, linestyle=style, linewidth=1.6,
                  zorder=order + len(dtypes), label=f"{dtype}: max {number(profile.max_error, 3)}, {profile.collisions} collision(s)")
        low, high = min(low, float(raw[raw > 0].min())), max(high, float(raw.max()))
        first = profile.first_adjacent_collision
        if first is not None:
            where = f"Δ = {first}".replace("-", "−") if over_distance else f"position {first}"
            axes.axvline(first, color=color, linestyle=":", linewidth=1,
                         label=f"{dtype}: first {'distance' if over_distance else 'position'} equal to its neighbour, {where}")
    axes.set_yscale("log")
    if high > 0:
        _whole_decades(axes, low, high)
    axes.set_xlabel("relative distance Δ (tokens)" if over_distance else "position (tokens)")
    axes.set_ylabel("|error| vs float64 (solid: worst so far; faint: each row)")
    axes.grid(True, which="major", alpha=0.3)
    if axes.get_legend_handles_labels()[1]:
        axes.legend(fontsize=8, loc="lower right")
    if exact:
        notes.append(f"exact in {', '.join(exact)} (error 0 everywhere, nothing to draw on a log scale)")
    if compute_dtype is None:
        how = "float64 values rounded to each dtype"
    elif compute_dtype == EACH:
        how = "angles formed in each dtype"
    else:
        how = f"angles formed in {compute_dtype}, rounded to each dtype"
    return Drawing(f"{describe(scheme)}: precision over {length} positions, {how}", list(dict.fromkeys(notes)))


def _worst_so_far(positions: np.ndarray, error: np.ndarray) -> np.ndarray:
    """The largest error of the rows from the one nearest position 0 (Δ = 0) out to each row."""
    order = np.argsort(np.abs(positions), kind="stable")
    worst = np.empty_like(error)
    worst[order] = np.maximum.accumulate(error[order])
    return worst


def _strided_max(values: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """The largest value of each run that starts at an index of ``keep`` (so that spikes survive a stride)."""
    if keep.size == values.size:
        return values
    return np.maximum.reduceat(values, keep)


def _whole_decades(axes: "Axes", low: float, high: float) -> None:
    """Log y limits on whole powers of ten, labelled only there (no "4×10⁰" on minor ticks)."""
    from matplotlib.ticker import LogLocator, NullFormatter

    bottom, top = 10.0 ** np.floor(np.log10(low)), 10.0 ** np.ceil(np.log10(high))
    if top <= bottom:
        top = bottom * 10
    axes.set_ylim(bottom, top * 1.05)
    axes.yaxis.set_major_locator(LogLocator(base=10, numticks=12))
    axes.yaxis.set_minor_formatter(NullFormatter())
