"""``pecli extend``'s answer: each context-extension candidate measured at the target N, and ranked.

The candidates and their config patches are :mod:`pecli.extend.patches`'s; each patch is merged into
the model's config and read back with pecli's own reader, so the scheme measured is the scheme the patch
gives. Measured at N, against the model's pre-training (frequencies θ_i over L₀ positions), every
figure from the candidate's frequencies θ'_i and attention factor:

``angles_in_range_up_to``, ``unseen_pairs``
    For the pairs that never completed a turn in pre-training (L₀ θ_i < 2π), a context of c tokens
    spans the angles c·θ'_i, pre-training spanned L₀·θ_i: the longest context within it is
    min_i ⌊L₀ θ_i / θ'_i⌋ (None: every pair turned fully; position interpolation reaches exactly N).
    Past Liu et al.'s critical dimension (2023, "Scaling Laws of RoPE-based Extrapolation") the pairs
    have not turned fully in training. ``unseen_pairs`` counts those pairs whose bound is below N.
``trained_pair_shift``
    Mean over the pairs that turned fully in pre-training (wavelength ≤ L₀) of |log₂(θ'_i / θ_i)|, in
    octaves: 0 leaves what the model learned to read from them untouched; position interpolation moves
    each by log₂ s.
``local_resolution``
    The distance between the rotations of adjacent positions, ‖R(θ')·1 − 1‖ over ‖R(θ)·1 − 1‖ (without
    the attention factor): below 1 nearby positions are closer together than in training (Peng et al.
    2023: position interpolation's loss of high-frequency information).
``logit_scale``
    What the candidate multiplies q·k/√d by (:func:`logit_scale`).
``distinguishability``, ``precision_bfloat16``
    The verdicts of ``pecli check distinguishability`` and ``precision --dtype bfloat16`` at N, computed
    from the frequencies (:mod:`pecli.extend.measures`: exact, but for the bfloat16 collision
    count when more than 64 offsets can collide, which is then a lower bound).

The ranking (written out on pecli extend's documentation page, "How pecli extend ranks"): first the
candidates with fewest failed conditions at N — no unseen angles, positions distinguishable, no new
bfloat16 collisions; then the smallest ``cost``, in octaves: the shift of the fully-turned pairs, plus
how far adjacent positions are crowded (|log₂ local_resolution|), plus how far the logit scale is from
YaRN's fitted temperature for s, (0.1 ln s + 1)² (Peng et al. 2023, §3.4), plus one octave when the
frequencies change with the sequence length (dynamic NTK, LongRoPE: a key cached at one length was
rotated with other frequencies than a query at another); then the methods' order
(:func:`~pecli.extend.patches.methods`, from the scaling records).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pecli.wavelengths.spectrum import BOUND_CONTEXT_LIMIT, critical_dimension
from pecli.errors import ConfigError
from pecli.extend.patches import (
    ExtensionBase, candidate_patches, dropped_keys, extension_base, method_patch, methods, patched, recipe,
    shipped_recipes, whole_tokens,
)
from pecli.models.families.keys import at_path
from pecli.notebook import Tabular
from pecli.progress import task
from pecli.schemes.scaling.registry import scaling_type
from pecli.schemes.scaling.yarn import yarn_get_mscale
from pecli.numbers import number

#: Memory of the row measures: per position, a byte (collided rows) and the bfloat16 codes of up to three
#: pairs (4 bytes each) and their comparison; besides, blocks of 2^20 offsets.
ROW_BYTES_PER_POSITION = 24
ROW_WORKING_BYTES = 96 << 20
#: The octaves a length-dependent candidate is charged (see the module notes).
LENGTH_DEPENDENT_COST = 1.0


@dataclass(frozen=True)
class Candidate:
    """One way to reach N: its config patch, what pecli measured at N, its rank and why.

    ``origin`` is ``"ranked"`` (a method with s = N / L₀), ``"given"`` (``--method``/``--factor``) or
    ``"shipped"`` (a recipe the model's family published); ``label`` names it in tables.
    """

    method: str
    config_patch: dict[str, Any]
    measures: dict[str, Any]
    failed: tuple[str, ...]
    rank: int = 0
    why: str = ""
    origin: str = "ranked"
    label: str = ""
    dropped: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """What ``--pick`` calls it: the method, ``given`` or ``shipped``."""
        return self.method if self.origin == "ranked" else self.origin

    def to_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "method": self.method, "origin": self.origin, "label": self.label or self.method,
                "config_patch": self.config_patch, "measures": self.measures, "failed": list(self.failed),
                "dropped_keys": list(self.dropped), "why": self.why}


@dataclass(frozen=True, repr=False)
class ExtensionReport(Tabular):
    """``pecli extend``'s document: the target, the model as trained, the candidates best first."""

    target: int
    base: ExtensionBase
    critical_dimension: int
    candidates: tuple[Candidate, ...]
    notes: tuple[str, ...] = field(default=())

    def candidate(self, name: str | None = None) -> Candidate:
        """The candidate called ``name`` (a method, ``given`` or ``shipped``); default: the given recipe
        if there is one, else the first ranked."""
        if name is None:
            given = [c for c in self.candidates if c.origin == "given"]
            return given[0] if given else self.candidates[0]
        for candidate in self.candidates:
            if candidate.key == name:
                return candidate
        offered = ", ".join(c.key for c in self.candidates)
        raise ConfigError("pick", f"{name} is not among this model's candidates ({offered})")

    def table_title(self) -> str:
        b = self.base
        return (f"pecli extend: trained on {b.pretraining:,}, serves {b.served:,} (max_position_embeddings) "
                f"→ {self.target:,} tokens")

    def table_rows(self) -> list[dict[str, Any]]:
        """A row per candidate, best first: its rank, method, measures and failed conditions."""
        return [{"rank": c.rank, "method": c.label or c.method, **c.measures, "failed": list(c.failed)}
                for c in self.candidates]

    def to_dict(self) -> dict[str, Any]:
        b = self.base
        return {
            "target": self.target,
            "trained": {"source": b.source, "max_position_embeddings": b.served, "pretraining_length": b.pretraining,
                        "rope_theta": b.base, "rotary_dim": b.dim, "scaling": b.scaling,
                        "critical_dimension": self.critical_dimension},
            "candidates": [candidate.to_dict() for candidate in self.candidates],
            "notes": list(self.notes),
        }


def logit_scale(block: dict[str, Any] | None, attention_factor: float, model_type: Any = None) -> float:
    """What the model of ``model_type`` multiplies q·k/√d by under the scaling ``block``, with cos/sin
    scaled by ``attention_factor``: its square (cos and sin carry it on both q and k) times the factor the
    model's attention applies (:func:`pecli.models.logit_scale.attention_side`: DeepSeek's mscale²)."""
    from pecli.models.logit_scale import attention_side

    return float(attention_factor) ** 2 * attention_side(model_type, block).factor


def extension_report(config: dict[str, Any], target: Any, source: str = "config", *, max_bytes: int | None = None,
                     train_length: Any = None, method: str | None = None, factor: Any = None,
                     pick: str | None = None) -> ExtensionReport:
    """The candidates for reaching ``target`` tokens from the model of ``config``, measured and ranked.

    ``train_length`` sets L₀; ``method`` with ``factor`` adds a given recipe (``origin`` "given");
    ``pick`` is checked against the candidates before anything is measured. ``max_bytes`` bounds the
    memory of the measures at N (one byte per position and a fixed working set), before any work.

    Raises
    ------
    ConfigError
        ``target`` not a whole number of tokens above the context the model serves; ``train_length``,
        ``method``, ``factor`` or ``pick`` invalid; a model pecli extend cannot change (see
        :func:`pecli.extend.patches.extension_base`).
    """
    from pecli.memory import check_memory

    start = extension_base(config, source, train_length)  # a config that is not a mapping is refused there
    target = _target(target, start)
    given = _given(start, target, method, factor)
    check_memory(ROW_BYTES_PER_POSITION * target + ROW_WORKING_BYTES, max_bytes, f"extend to {target:,} tokens")
    _pick_possible(pick, start, config, given is not None)
    notes, bound = _base_bound(start, target)
    patches = candidate_patches(start, target, base_for_target=bound)
    plans = [(m, patch, "ranked", m) for m, patch in patches.items()]
    if given is not None:
        plans.append((method, given, "given", f"{method} ×{number(float(factor), 6)}"))
    for recipe in shipped_recipes(config, start):
        plans.append((recipe.method, recipe.patch(start, target), "shipped", recipe.name))
        notes.append(f"{recipe.name} shipped a recipe, {recipe.method} ×{number(recipe.factor, 6)} ({recipe.published}): "
                     f"measured at the target as \"{recipe.name}\" (--pick shipped)")
    if pick is not None:
        keys = [key if origin == "ranked" else origin for key, _, origin, _ in plans]
        if pick not in keys:
            raise ConfigError("pick", f"{pick} is not among this model's candidates ({', '.join(keys)})")
    notes += _model_notes(start)
    trained = _pretrained_inv_freq(config, start)
    measured = [_measure(m, patch, config, start, target, trained, origin, label)
                for m, patch, origin, label in plans]
    return ExtensionReport(target, start, critical_dimension(trained, start.pretraining), tuple(ranked(measured)),
                           tuple(notes))


def _pick_possible(pick: str | None, start: ExtensionBase, config: dict[str, Any], given: bool) -> None:
    """Refuse, before the base bound is searched, a pick no candidate of this model can answer."""
    raising = [m for m in methods() if recipe(m).raises_base]
    if pick is None or pick in raising:  # base: known once the bound is (it may be left out)
        return
    possible = {m for m in methods() if start.offers(m)} - set(raising)
    if given:
        possible.add("given")
    if shipped_recipes(config, start):
        possible.add("shipped")
    if pick not in possible:
        raise ConfigError("pick", f"{pick} is not among this model's candidates ({', '.join(sorted(possible))}, "
                          f"{' or '.join(raising)} when Men et al.'s bound is above its base)")


def _given(start: ExtensionBase, target: int, method: str | None, factor: Any) -> dict[str, Any] | None:
    """The patch of ``--method`` with ``--factor`` (both or neither), checked before any work."""
    if method is None and factor is None:
        return None
    if method is None or factor is None:
        raise ConfigError("method" if method is None else "factor", "--method and --factor go together")
    if isinstance(factor, str):
        try:
            factor = float(factor)
        except ValueError:
            raise ConfigError("factor", f"expected a number, got {factor!r}") from None
    return method_patch(start, str(method), factor, target)


def _base_bound(start: ExtensionBase, target: int) -> tuple[list[str], float | None]:
    """Men et al.'s bound for N: the base every larger base passes (the robust one) is the candidate's."""
    if target > BOUND_CONTEXT_LIMIT:
        return [f"Men et al.'s bound is not computed past {BOUND_CONTEXT_LIMIT:,} tokens: no base candidate"], None
    from pecli.wavelengths.base_bound import base_lower_bound

    with task("Men et al.'s base bound"):
        bound = base_lower_bound(target, start.dim)
    robust = bound.every_base_above
    notes = []
    if robust is not None and bound.smallest_base is not None and robust > bound.smallest_base:
        notes.append(f"base: Men et al.'s bound for {target:,} tokens, every base above {robust:,.0f} (the smallest "
                     f"passing base, {bound.smallest_base:,.0f}, sits in a window with failing bases above it)")
    if robust is not None and robust <= start.base:
        notes.append(f"rope_theta {number(start.base, 6)} already meets Men et al.'s bound for {target:,} tokens "
                     f"({number(robust, 6)}): no base increase is proposed")
    return notes, robust


def _model_notes(start: ExtensionBase) -> list[str]:
    notes = []
    left_out = [method for method in methods() if not start.takes(method) and not recipe(method).reuses]
    if left_out:
        notes.append(f"{', '.join(left_out)} left out: the model's code in transformers takes rope_type "
                     f"{' or '.join(start.accepted or ())} only")
    if scaling_type(start.scaling).per_pair_factors:
        notes.append(f"LongRoPE's factors were searched for {start.served:,} tokens; past it they are used as they are")
    return notes


def _target(value: Any, start: ExtensionBase) -> int:
    target = whole_tokens("target", value)
    if target <= start.served:
        raise ConfigError("target", f"{target:,} is not past the {start.served:,} tokens {start.source} already "
                          "serves (max_position_embeddings)")
    return target


def _scheme_of(config: dict[str, Any], source: str, length: int):
    """The scheme pecli reads from ``config`` (one RoPE setting), at ``length``."""
    from pecli.models.families.from_config import plan_of

    plan = plan_of(config, source)
    return next(group for group in plan.groups if group.options is not None).encoding.at_length(length)


def _pretrained_inv_freq(config: dict[str, Any], start: ExtensionBase) -> np.ndarray:
    scheme = _scheme_of(config, start.source, start.pretraining)
    return np.asarray(scheme.without_extension().frequency_pairs().inv_freq, dtype=np.float64)


def _scaling_block(patch: dict[str, Any], start: ExtensionBase) -> dict[str, Any] | None:
    node = at_path(patch, start.path)
    return node.get("rope_parameters", node.get("rope_scaling"))


def _measure(method: str, patch: dict[str, Any], config: dict[str, Any], start: ExtensionBase, target: int,
             trained: np.ndarray, origin: str = "ranked", label: str = "") -> Candidate:
    """Read ``patch`` back through pecli's config reader and measure the scheme it gives at N."""
    from pecli.extend.measures import rope_bfloat16_collisions, rope_distinguishability

    scheme = _scheme_of(patched(config, _frequency_keys(patch, start, method)), start.source, target)
    pairs = scheme.frequency_pairs()
    inv_freq = np.asarray(pairs.inv_freq, dtype=np.float64)
    attention = float(pairs.attention_scaling)
    with task(f"{label or method}: distances", total=2 * max(target - 1, 1)) as bar:
        distinct = rope_distinguishability(inv_freq, attention, target, bar.advance)
        collisions = rope_bfloat16_collisions(inv_freq, attention, target, bar.advance)
    reach = in_range_up_to(inv_freq, trained, start.pretraining)
    measures = {
        "unseen_pairs": unseen_pairs(inv_freq, trained, start.pretraining, target),
        "angles_in_range_up_to": reach,
        "trained_pair_shift": trained_pair_shift(inv_freq, trained, start.pretraining),
        "local_resolution": adjacent_step(inv_freq) / adjacent_step(trained),
        "attention_factor": attention,
        "logit_scale": logit_scale(_scaling_block(patch, start), attention, start.model_type),
        "effective_base": float(pairs.base),
        "length_dependent": bool(scheme.reads_context),
        "distinguishability": distinct.verdict,
        "local_share": distinct.local_share,
        "precision_bfloat16": collisions.verdict,
        "bfloat16_collisions": collisions.count,
        "bfloat16_collisions_exact": collisions.exact,
    }
    measures["cost"] = cost_of(measures, start.factor(target))
    failed = []
    if measures["unseen_pairs"]:
        failed.append("unseen-angles")
    if distinct.verdict == "fail":
        failed.append("distinguishability")
    if collisions.verdict == "fail":
        failed.append("bfloat16")
    return Candidate(method, patch, measures, tuple(failed), origin=origin, label=label or method,
                     dropped=dropped_keys(start, method))


def _frequency_keys(patch: dict[str, Any], start: ExtensionBase, method: str) -> dict[str, Any]:
    """``patch`` without ``mscale_all_dim`` where only the attention reads it (every type whose record does
    not take the key: all but yarn): the frequencies do not depend on it, :func:`logit_scale` reads it from
    the patch itself."""
    from pecli.schemes.scaling.registry import extension_types

    block = _scaling_block(patch, start)
    if not isinstance(block, dict) or "mscale_all_dim" not in block or "mscale_all_dim" in extension_types()[method].key_names:
        return patch
    keys = {k: v for k, v in block.items() if k != "mscale_all_dim"}
    node = dict(at_path(patch, start.path))
    node["rope_parameters" if "rope_parameters" in node else "rope_scaling"] = keys
    for key in reversed(start.path):
        node = {key: node}
    return node


def _partial(inv_freq: np.ndarray, trained: np.ndarray, pretraining: int) -> np.ndarray:
    return (pretraining * trained < 2 * math.pi) & (inv_freq > 0)


def in_range_up_to(inv_freq: np.ndarray, trained: np.ndarray, pretraining: int) -> int | None:
    """The longest context c whose span c·θ'_i stays within pre-training's L₀·θ_i on every pair that did
    not turn fully in it: min over those pairs of ⌊L₀ θ_i / θ'_i⌋; None when every pair turned fully."""
    partial = _partial(inv_freq, trained, pretraining)
    if not partial.any():
        return None
    return int(np.min(np.floor(pretraining * trained[partial] / inv_freq[partial] * (1 + 1e-12))))


def unseen_pairs(inv_freq: np.ndarray, trained: np.ndarray, pretraining: int, target: int) -> int:
    """The pairs that did not turn fully in pre-training whose span at N, N·θ'_i, is past L₀·θ_i."""
    partial = _partial(inv_freq, trained, pretraining)
    reach = np.floor(pretraining * trained[partial] / inv_freq[partial] * (1 + 1e-12))
    return int(np.count_nonzero(reach < target))


def trained_pair_shift(inv_freq: np.ndarray, trained: np.ndarray, pretraining: int) -> float:
    """Mean |log₂(θ'_i / θ_i)| over the pairs that turned fully in pre-training (L₀ θ_i ≥ 2π), octaves."""
    full = (pretraining * trained >= 2 * math.pi) & (inv_freq > 0)
    if not full.any():
        return 0.0
    return float(np.mean(np.abs(np.log2(inv_freq[full] / trained[full]))))


def adjacent_step(inv_freq: np.ndarray) -> float:
    """‖R(θ)·1 − 1‖ for one step of position: √(Σ_i 2 (2 − 2 cos θ_i)) over the rotated components."""
    return float(np.sqrt(np.sum(4.0 - 4.0 * np.cos(inv_freq))))


def yarn_temperature(factor: float) -> float:
    """YaRN's logit scale for an extension by s: (0.1 ln s + 1)² (Peng et al. 2023, §3.4, fitted on LLaMA)."""
    return yarn_get_mscale(factor) ** 2


def cost_of(measures: dict[str, Any], factor: float) -> float:
    """The ranking's cost in octaves: shift + |log₂ local_resolution| + |log₂(logit_scale / (0.1 ln s + 1)²)|
    + one octave for frequencies that change with the length (the module notes say why)."""
    spacing = abs(math.log2(measures["local_resolution"])) if measures["local_resolution"] > 0 else math.inf
    logit = abs(math.log2(measures["logit_scale"] / yarn_temperature(factor)))
    extra = LENGTH_DEPENDENT_COST if measures["length_dependent"] else 0.0
    return float(measures["trained_pair_shift"] + spacing + logit + extra)


def ranked(candidates: list[Candidate]) -> list[Candidate]:
    """The candidates best first, with their rank and the reason (see the module notes for the rule)."""
    built = methods()

    def key(c: Candidate) -> tuple[Any, ...]:
        return (len(c.failed), round(c.measures["cost"], 9), built.index(c.method),
                ("ranked", "shipped", "given").index(c.origin))

    order = sorted(candidates, key=key)
    out = []
    for rank, c in enumerate(order, 1):
        out.append(Candidate(c.method, c.config_patch, c.measures, c.failed, rank,
                             _why(c, order[rank] if rank < len(order) else None), c.origin, c.label, c.dropped))
    return out


def _why(candidate: Candidate, below: Candidate | None) -> str:
    """What holds or fails at N, the cost's parts, what it drops, and what puts it above the next one."""
    m = candidate.measures
    parts = ["holds every condition at N" if not candidate.failed else "fails " + ", ".join(candidate.failed)]
    spacing = abs(math.log2(m["local_resolution"])) if m["local_resolution"] > 0 else math.inf
    parts.append(f"cost {number(m['cost'], 3)} octaves (shift {number(m['trained_pair_shift'], 3)}, spacing {number(spacing, 3)}, "
                 f"logit scale {number(m['logit_scale'])}" + (", length-dependent +1" if m["length_dependent"] else "") + ")")
    if candidate.dropped:
        longrope = [k for k in candidate.dropped if k.endswith("_factor")]
        words = f"drops the model's {', '.join(candidate.dropped)}"
        if longrope:
            words += " (the LongRoPE factors it was fine-tuned with)"
        parts.append(words)
    if below is not None:
        n = below.measures
        name = below.label or below.method
        if len(candidate.failed) < len(below.failed):
            parts.append(f"above {name}: fewer failed conditions")
        elif round(m["cost"], 9) < round(n["cost"], 9):
            parts.append(f"above {name}: a lower cost ({number(n['cost'], 3)})")
        else:
            parts.append(f"above {name}: the method order")
    return "; ".join(parts)
