"""The numbers two RoPE layer groups hand to attention, compared (the RoPE half of :mod:`pecli.models.plan_diff`)."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from pecli.models.plan import LayerGroup
from pecli.models.differences import (
    ATTENTION_KEYS, BASE_KEYS, CONTEXT_KEYS, DIM_KEYS, LAYOUT_KEYS, RELATIVE, SCALING_KEYS, Difference, _key,
)


def scheme_of(group: LayerGroup, context: int | None = None) -> Any:
    """The group's rope scheme (:attr:`LayerGroup.encoding`), at the current sequence length ``context``
    (None: its own)."""
    return group.encoding if context is None else group.encoding.at_length(context)


def rope_differences(ours: LayerGroup, theirs: LayerGroup, layers: str) -> list[Difference]:
    """Layout, rotated components, frequencies, attention factor and context of two RoPE groups."""
    a, b = scheme_of(ours), scheme_of(theirs)
    found: list[Difference] = []
    if a.layout != b.layout:
        found.append(Difference("layout", layers, _key(ours, LAYOUT_KEYS) or "layout", _key(theirs, LAYOUT_KEYS) or "layout",
                                a.layout, b.layout, "the pairs are made of other components: every rotation mixes the wrong ones"))
    if a.rotated_dim != b.rotated_dim:
        found.append(Difference("rotated components", layers, _key(ours, DIM_KEYS) or "dim", _key(theirs, DIM_KEYS) or "dim",
                                a.rotated_dim, b.rotated_dim, f"{a.rotated_dim} components rotate instead of {b.rotated_dim}"))
        found.extend(_setting_differences(ours, theirs, a, b, layers))
    else:
        found.extend(_frequency_differences(ours, theirs, a, b, layers))
    if not _close(a.attention_scaling, b.attention_scaling):
        ratio = (a.attention_scaling / b.attention_scaling) ** 2
        found.append(Difference("attention factor", layers, _scaling_key(ours, ATTENTION_KEYS), _scaling_key(theirs, ATTENTION_KEYS),
                                round(a.attention_scaling, 9), round(b.attention_scaling, 9),
                                f"cos and sin carry {a.attention_scaling:.6g} where the model's carry "
                                f"{b.attention_scaling:.6g}: the logits are {ratio:.4g}× the model's"))
    found.extend(_logit_scale(ours, theirs, layers))
    length_a, length_b = a.max_position_embeddings, b.max_position_embeddings
    if length_a and length_b and length_a != length_b:
        found.append(Difference("context", layers, _key(ours, CONTEXT_KEYS) or "context", _key(theirs, CONTEXT_KEYS) or "context",
                                length_a, length_b, f"the default context is {length_a:,} positions, not {length_b:,}"))
    return found


def _setting_differences(ours: LayerGroup, theirs: LayerGroup, a: Any, b: Any, layers: str) -> list[Difference]:
    """Base and scaling compared as settings, for groups whose rotated components differ (their frequencies
    cannot be held pair against pair, but a base or a scaling that differs still does: it was left unsaid)."""
    found = []
    if not _close(a.base, b.base):
        found.append(Difference("base", layers, _key(ours, BASE_KEYS) or "base", _key(theirs, BASE_KEYS) or "base",
                                a.base, b.base, f"the pairs turn at the frequencies of base {_number(a.base)}, not "
                                                f"{_number(b.base)}"))
    if a.rope_scaling.rope_type != b.rope_scaling.rope_type:
        found.append(Difference("scaling", layers, _scaling_key(ours, SCALING_KEYS), _scaling_key(theirs, SCALING_KEYS),
                                a.rope_scaling.rope_type, b.rope_scaling.rope_type,
                                f"the frequencies are scaled by {a.rope_scaling.rope_type}, not {b.rope_scaling.rope_type}"))
    return found


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() and abs(value) < 1e15 else f"{value:.6g}"


def _logit_scale(ours: LayerGroup, theirs: LayerGroup, layers: str) -> list[Difference]:
    """The factor each side's attention applies to the logits besides cos and sin (``attention_scale``:
    DeepSeek's mscale², Llama 4's temperature), compared where it can differ: the first position, the
    pre-training length and the model's context."""
    a, b = ours.attention_scale, theirs.attention_scale
    probes = sorted({0, 8191, 131071, *(g.context - 1 for g in (ours, theirs) if g.context)})
    left, right = a.at(probes), b.at(probes)
    if np.allclose(left, right, rtol=RELATIVE, atol=0):
        return []
    where = int(np.argmax(np.abs(left / right - 1)))
    return [Difference("logit scale", layers, _scaling_key(ours, ATTENTION_KEYS), _scaling_key(theirs, ATTENTION_KEYS),
                       a.text(), b.text(), f"the logits are {left[where] / right[where]:.4g}× the model's at position "
                                            f"{probes[where]:,}")]


def _frequency_differences(ours: LayerGroup, theirs: LayerGroup, a: Any, b: Any, layers: str) -> list[Difference]:
    """The frequencies at the pre-training context, and past it for scalings that read the context."""
    original = b.pretraining_length or a.pretraining_length
    contexts = [None]
    if (a.reads_context or b.reads_context) and original:
        longest = max(a.max_position_embeddings or 0, b.max_position_embeddings or 0, original + 1)
        contexts = [original, longest]
    for context in contexts:
        left = scheme_of(ours, context).inv_freq if context else a.inv_freq
        right = scheme_of(theirs, context).inv_freq if context else b.inv_freq
        if not np.allclose(left, right, rtol=RELATIVE, atol=0):
            return [_blame(ours, theirs, a, b, layers, frequency_effect(left, right, original, context))]
    return []


def _blame(ours: LayerGroup, theirs: LayerGroup, a: Any, b: Any, layers: str, effect: str) -> Difference:
    """The frequencies differ: the bases' keys when the bases differ, else the scalings'."""
    base_a, base_b = ours.options.get("base"), theirs.options.get("base")
    if base_a is not None and base_b is not None and not _close(float(base_a), float(base_b)):
        return Difference("base", layers, _key(ours, BASE_KEYS) or "base", _key(theirs, BASE_KEYS) or "base",
                          float(base_a), float(base_b), effect)
    return Difference("frequencies", layers, _scaling_key(ours, SCALING_KEYS), _scaling_key(theirs, SCALING_KEYS),
                      scaling_text(ours), scaling_text(theirs), effect)


def _scaling_key(group: LayerGroup, pattern: Any) -> str:
    names = [k.split("=")[0] for k in list(group.keys_read) + list(group.keys_defaulted)]
    found = [name.removesuffix(" (tensor)") for name in dict.fromkeys(names) if pattern.search(name.split(".", 1)[-1])
             or pattern.search(name)]
    return ", ".join(found) or "(no scaling key)"


def scaling_text(group: LayerGroup | Mapping[str, Any]) -> str:
    """A group's scaling in words, as its typed scaling (:attr:`LayerGroup.encoding`) holds it: ``llama3 ×8
    from 8,192``, ``none``, ``per-pair frequencies``. Only the keys the config gives are said (a llama3 block
    without an original length says none), under the scaling's own name (a legacy ``su`` block is longrope,
    as transformers' ``Phi3Config`` renames it).

    ``group`` may still be a group's options (the engines' and GGUF's blame pass them): they are read as
    the group they describe.
    """
    if not isinstance(group, LayerGroup):
        group = LayerGroup("", (), group)
    scheme = group.encoding
    words = "per-pair frequencies" if getattr(scheme, "given_inv_freq", None) is not None else ""
    scaling = getattr(scheme, "rope_scaling", None)
    if scaling is None or not scaling.record.scales:
        return words or "none"
    given = scaling.values
    text = scaling.rope_type + (f" ×{float(given['factor']):g}" if given.get("factor") is not None else "")
    if given.get("original_max_position_embeddings") is not None:
        text += f" from {int(given['original_max_position_embeddings']):,}"
    return f"{words}, {text}" if words else text


def frequency_effect(ours: np.ndarray, theirs: np.ndarray, original: int | None, context: int | None) -> str:
    """``pairs 35–63 rotate 8× faster past 8,192; pairs 29–34 1.1–7.3× faster`` (ours against theirs)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(theirs > 0, ours / theirs, np.inf)
    runs: list[tuple[int, int, str]] = []
    flat = [any(0 <= j < len(ratio) and j != i and abs(ratio[j] / ratio[i] - 1) < 0.01 for j in (i - 1, i + 1))
            for i in range(len(ratio))]
    for i, r in enumerate(ratio):
        kind = "faster" if r > 1 + RELATIVE else "slower" if r < 1 - RELATIVE else ""
        # a plateau (a constant ratio, as a divided band) is its own run, apart from a ramp beside it
        joins = i > 0 and flat[i] == flat[i - 1] and (not flat[i] or abs(r / ratio[i - 1] - 1) < 0.01)
        if kind and runs and runs[-1][2] == kind and runs[-1][1] == i - 1 and joins:
            runs[-1] = (runs[-1][0], i, kind)
        elif kind:
            runs.append((i, i, kind))
    parts = []
    for first, last, kind in runs[:3]:
        values = ratio[first:last + 1] if kind == "faster" else 1 / ratio[first:last + 1]
        low, high = float(np.min(values)), float(np.max(values))
        size = f"{_factor(low)}×" if high / low < 1.01 else f"{_factor(low)}–{_factor(high)}×"
        pairs = f"pair {first}" if first == last else f"pairs {first}–{last}"
        parts.append(f"{pairs} rotate{'s' if first == last else ''} {size} {kind}")
    where = f" past {original:,}" if original and not context else f" at a context of {context:,}" if context else ""
    more = f" (and {len(runs) - 3} more runs)" if len(runs) > 3 else ""
    return "; ".join(parts) + where + more


def _factor(value: float) -> str:
    """A ratio in three figures, or four where three would round it to 1 (``1.004``, not ``1``)."""
    text = f"{value:.3g}"
    return f"{value:.4g}" if text == "1" else text


def _close(x: float, y: float) -> bool:
    return abs(x - y) <= RELATIVE * max(abs(x), abs(y))


__all__ = ["frequency_effect", "rope_differences", "scaling_text", "scheme_of"]
