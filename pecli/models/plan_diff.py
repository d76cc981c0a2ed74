"""Two position plans compared layer group by layer group: where do they give different numbers?

:func:`diff_plans` pairs the groups of a *reference* plan (a model's config.json, or the older of two
configs) with those of a *candidate* (a GGUF file, an engine's settings, the newer config) layer by
layer, builds both schemes and compares what reaches attention:

- the layout (which components form a pair) and the number of rotated components;
- the inverse frequencies, pair by pair, within :data:`~pecli.models.differences.RELATIVE` (1e-6) — at the pre-training context
  and, for scalings that depend on the context (LongRoPE, dynamic NTK), at the model's longest;
- the attention factor on cos and sin (its square scales the logits) and the logit scale where plans
  carry one;
- the context the model runs to (``max_position_embeddings``, GGUF's ``context_length``);
- ALiBi's heads, T5's buckets: the scheme options themselves.

Each difference names the key on each side (read from the group's ``keys_read`` and
``keys_defaulted``: a GGUF file's ``llama.rope.freq_base``, a config's ``rope_theta``), the two values,
and its effect said as the candidate against the reference ("pairs 35–63 rotate 8× faster past
8,192"). Both plans are in the frame of the original checkpoint (see :mod:`pecli.models.gguf`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pecli.models.differences import LAYOUT_KEYS, RELATIVE, Difference, _key
from pecli.models.plan import LayerGroup, PositionPlan, ranges_text
from pecli.models.rope_facts import _logit_scale, rope_differences


@dataclass(frozen=True, repr=False)
class PlanDiff:
    """The differences between a candidate plan and a reference plan; ``same`` when there are none."""

    candidate: PositionPlan
    reference: PositionPlan
    candidate_name: str
    reference_name: str
    differences: tuple[Difference, ...] = field(default=())

    @property
    def same(self) -> bool:
        return not self.differences

    def to_dict(self) -> dict[str, Any]:
        """``{"same", "differences": [{"<candidate>_key", "<reference>_key", "<candidate>_value",
        "<reference>_value", "effect", "what", "layers"}], "candidate", "reference"}``."""
        return {"same": self.same,
                "differences": [d.to_dict(self.candidate_name, self.reference_name) for d in self.differences],
                "candidate": {"name": self.candidate_name, "source": self.candidate.source},
                "reference": {"name": self.reference_name, "source": self.reference.source}}

    def lines(self) -> list[str]:
        """One line per difference: ``layers: what: key = value (candidate) vs key = value (reference): effect``."""
        return [f"layers {d.layers}: {d.what}: {self.candidate_name} {d.candidate_key} = {_text(d.candidate_value)}, "
                f"{self.reference_name} {d.reference_key} = {_text(d.reference_value)}: {d.effect}"
                for d in self.differences]

    def __repr__(self) -> str:
        """The verdict and a line per difference (the plans themselves are fields)."""
        head = (f"<PlanDiff: {self.candidate_name} {self.candidate.source} against {self.reference_name} "
                f"{self.reference.source}: {'same' if self.same else f'{len(self.differences)} difference' + ('s' if len(self.differences) > 1 else '')}>")
        return "\n".join([head, *(f"  {line}" for line in self.lines())])

    __str__ = __repr__


def diff_plans(candidate: PositionPlan, reference: PositionPlan, candidate_name: str = "gguf",
               reference_name: str = "hf") -> PlanDiff:
    """Compare ``candidate`` against ``reference`` group by group (see the module)."""
    found: list[Difference] = []
    if candidate.num_layers and reference.num_layers and candidate.num_layers != reference.num_layers:
        found.append(Difference("layers", "all", _key(candidate.groups[0], ("block_count", "num_hidden_layers", "n_layer", "num_layers")) or "layers",
                                _key(reference.groups[0], ("num_hidden_layers", "n_layer", "num_layers")) or "layers",
                                candidate.num_layers, reference.num_layers, "the two files describe different models"))
    for ours, theirs, layers in paired_groups(candidate, reference):
        found.extend(diff_groups(ours, theirs, ranges_text(layers)))
    return PlanDiff(candidate, reference, candidate_name, reference_name, tuple(found))


def paired_groups(candidate: PositionPlan, reference: PositionPlan) -> list[tuple[LayerGroup, LayerGroup, list[int]]]:
    """The pairs of groups that hold the same layers, each with those layers (a plan without a layer
    count pairs its one group with every group of the other, but two groups that each have a namesake in the
    other plan are not paired: an encoder–decoder's ``encoder`` and ``decoder`` hold the same layer indices)."""
    count = min(n for n in (candidate.num_layers, reference.num_layers, 1 << 30) if n)
    names = [g.name for g in reference.groups]
    if count == 1 << 30 and len(set(names)) == len(names) and names == [g.name for g in candidate.groups]:
        # stacks numbered from 0 each (an encoder and a decoder): the groups pair by name
        return [(a, b, list(b.layers or a.layers)) for a, b in zip(candidate.groups, reference.groups)]
    if count == 1 << 30 or not all(g.layers for g in candidate.groups + reference.groups):
        ours, theirs = {g.name for g in candidate.groups}, {g.name for g in reference.groups}
        return [(a, b, list(b.layers or a.layers)) for a in candidate.groups for b in reference.groups
                if (not a.layers or not b.layers or set(a.layers) & set(b.layers))
                and not (a.name != b.name and a.name in theirs and b.name in ours)]  # each has its own match
    pairs: dict[tuple[int, int], list[int]] = {}
    for layer in range(count):
        a = next((i for i, g in enumerate(candidate.groups) if layer in g.layers), None)
        b = next((i for i, g in enumerate(reference.groups) if layer in g.layers), None)
        if a is not None and b is not None:
            pairs.setdefault((a, b), []).append(layer)
    return [(candidate.groups[a], reference.groups[b], layers) for (a, b), layers in pairs.items()]


#: The M-RoPE options that change its numbers (the others describe the images and videos it is given).
MROPE_KEYS = ("dim", "base", "mrope_section", "mrope_interleaved", "spatial_merge_size", "temporal", "tokens_per_second")
#: What a difference in an mrope option does (other options number the image and video positions).
MROPE_EFFECTS = {"base": "the pairs turn at other frequencies", "dim": "other components rotate",
                 "mrope_section": "other pairs follow the time, height and width coordinates",
                 "mrope_interleaved": "other pairs follow the time, height and width coordinates"}


def diff_groups(ours: LayerGroup, theirs: LayerGroup, layers: str) -> list[Difference]:
    """The differences between two groups holding ``layers``."""
    if ours.scheme != theirs.scheme:
        return [Difference("encoding", layers, _key(ours, LAYOUT_KEYS) or "scheme", _key(theirs, LAYOUT_KEYS) or "scheme",
                           ours.scheme, theirs.scheme, f"the layers apply {ours.scheme}, not {theirs.scheme}")]
    if ours.options is None:  # no position encoding; a factor on the logits still (Llama 4's NoPE temperature)
        return _logit_scale(ours, theirs, layers)
    if not ours.rotary:
        return [Difference(key, layers, key, key, ours.options.get(key), theirs.options.get(key), "a different bias or table")
                for key in sorted(set(ours.options) | set(theirs.options)) if ours.options.get(key) != theirs.options.get(key)]
    if ours.scheme_class.position_rank > 1:  # M-RoPE: its pairs turn at base^(−2i/d), dealt to t, h, w by its sections
        return [Difference(key, layers, key, key, ours.options.get(key), theirs.options.get(key), MROPE_EFFECTS.get(
                    key, "the images' and videos' positions are numbered otherwise"))
                for key in MROPE_KEYS if ours.options.get(key) != theirs.options.get(key)]
    return rope_differences(ours, theirs, layers)


def _text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(map(_text, value))
    if isinstance(value, float):
        return f"{int(value):,}" if value.is_integer() and abs(value) < 1e15 else f"{value:.6g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


__all__ = ["Difference", "PlanDiff", "RELATIVE", "diff_plans", "diff_groups", "paired_groups"]
