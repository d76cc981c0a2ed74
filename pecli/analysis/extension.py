"""``pecli extend``'s answer: each context-extension candidate measured at the target N, and ranked.

The candidates and their config patches are :mod:`pecli.models.extension`'s; each patch is merged into
the model's config and read back with pecli's own reader, so the scheme measured is the scheme the patch
gives. Measured at N, against the model's pre-training (frequencies θ_i over L₀ positions):

``unseen_pairs``, ``angles_in_range_up_to``
    The pairs that never completed a turn in pre-training and whose angle at position N − 1 goes past
    any angle pre-training gave them (:func:`pecli.analysis.extrapolation.angle_ranges_of`); and the
    longest context in which no pair does: min over those pairs of ⌊L₀ θ_i / θ'_i⌋ + 1 (None: every
    context). Past Liu et al.'s critical dimension (2023, "Scaling Laws of RoPE-based Extrapolation")
    the pairs have not turned fully in training; this is the length their angles stay known.
``trained_pair_shift``
    Mean over the pairs that turned fully in pre-training (wavelength ≤ L₀) of |log₂(θ'_i / θ_i)|, in
    octaves: 0 leaves what the model learned to read from them untouched; position interpolation moves
    each by log₂ s.
``local_resolution``
    The distance between the rotations of adjacent positions, ‖R(θ')·1 − 1‖ over ‖R(θ)·1 − 1‖ (without
    the attention factor): below 1 nearby positions are closer together than in training (Peng et al.
    2023: position interpolation's loss of high-frequency information).
``distinguishability``, ``precision_bfloat16``
    pecli's checks at N (``pecli check distinguishability`` and ``precision --dtype bfloat16``).

The ranking (written out on pecli extend's documentation page, "How pecli extend ranks"): first the
candidates with fewest failed conditions at N — no unseen angles, positions distinguishable, no new
bfloat16 collisions; then those whose frequencies do not change with the sequence length (dynamic NTK
and LongRoPE do: a key cached at one length was rotated with other frequencies than a query at
another); then the smallest ``trained_pair_shift``; then :data:`~pecli.models.extension.METHODS` order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pecli.analysis.extrapolation import angle_ranges_of
from pecli.analysis.spectrum import BOUND_CONTEXT_LIMIT, critical_dimension
from pecli.errors import ConfigError
from pecli.notebook import Tabular
from pecli.models.extension import METHODS, ExtensionBase, candidate_patches, extension_base, patched
from pecli.progress import task

#: The checks measured at N, with the options that make them.
CHECKS = (("distinguishability", {}), ("precision", {"dtype": "bfloat16"}))


@dataclass(frozen=True)
class Candidate:
    """One way to reach N: its config patch, what pecli measured at N, its rank and why."""

    method: str
    config_patch: dict[str, Any]
    measures: dict[str, Any]
    failed: tuple[str, ...]
    rank: int = 0
    why: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "method": self.method, "config_patch": self.config_patch,
                "measures": self.measures, "failed": list(self.failed), "why": self.why}


@dataclass(frozen=True)
class ExtensionReport(Tabular):
    """``pecli extend``'s document: the target, the model as trained, the candidates best first."""

    target: int
    base: ExtensionBase
    critical_dimension: int
    candidates: tuple[Candidate, ...]
    notes: tuple[str, ...] = field(default=())

    def candidate(self, method: str | None = None) -> Candidate:
        """The candidate of ``method`` (default: the first ranked)."""
        if method is None:
            return self.candidates[0]
        for candidate in self.candidates:
            if candidate.method == method:
                return candidate
        offered = ", ".join(c.method for c in self.candidates)
        raise ConfigError("pick", f"{method} is not among this model's candidates ({offered})")

    def table_title(self) -> str:
        return f"pecli extend: {self.base.pretraining} (pre-training) / {self.base.served} → {self.target} tokens"

    def table_rows(self) -> list[dict[str, Any]]:
        """A row per candidate, best first: its rank, method, measures and failed conditions."""
        return [{"rank": c.rank, "method": c.method, **c.measures, "failed": list(c.failed)} for c in self.candidates]

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


def extension_report(config: dict[str, Any], target: Any, source: str = "config", *,
                     max_bytes: int | None = None) -> ExtensionReport:
    """The candidates for reaching ``target`` tokens from the model of ``config``, measured and ranked.

    ``max_bytes`` bounds the memory of the checks at N, before any work (default: a quarter of RAM).

    Raises
    ------
    ConfigError
        ``target`` not an integer above the context the model serves; a model pecli extend cannot
        change (see :func:`pecli.models.extension.extension_base`).
    """
    from pecli.analysis import CheckOptions, estimate_check_bytes
    from pecli.config import check_memory

    start = extension_base(config, source)
    target = _target(target, start)
    model = _scheme_of(config, source, target)
    needed = max(estimate_check_bytes(model, name, CheckOptions(length=target, **options)) for name, options in CHECKS)
    check_memory(needed, max_bytes, f"extend to {target} tokens")
    notes = []
    bound = None
    if target <= BOUND_CONTEXT_LIMIT:
        from pecli.analysis.spectrum import base_lower_bound

        with task("Men et al.'s base bound"):
            bound = base_lower_bound(target, start.dim).smallest_base
        if bound is not None and bound <= start.base:
            notes.append(f"rope_theta {start.base:g} already meets Men et al.'s bound for {target} tokens "
                         f"({bound:g}): no base increase is proposed")
    else:
        notes.append(f"Men et al.'s bound is not computed past {BOUND_CONTEXT_LIMIT} tokens: no base candidate")
    left_out = [method for method in METHODS if not start.takes(method) and method != "longrope"]
    if left_out:
        notes.append(f"{', '.join(left_out)} left out: the model's code in transformers takes rope_type "
                     f"{' or '.join(start.accepted or ())} only")
    if start.longrope is not None:
        notes.append(f"LongRoPE's factors were searched for {start.served} tokens; past it they are used as they are")
    trained = _pretrained_inv_freq(config, start)
    measured = []
    patches = candidate_patches(start, target, base_for_target=bound)
    for number, (method, patch) in enumerate(patches.items(), 1):
        with task(f"{method} ({number}/{len(patches)})"):
            measured.append(_measure(method, patch, config, start, target, trained))
    return ExtensionReport(target, start, critical_dimension(trained, start.pretraining), tuple(ranked(measured)), tuple(notes))


def _target(value: Any, start: ExtensionBase) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ConfigError("target", f"expected a number of tokens, got {value!r}")
    try:
        number = float(value) if not isinstance(value, int) else value
    except ValueError:
        raise ConfigError("target", f"expected a number of tokens, got {value!r}") from None
    if not math.isfinite(number) or number != int(number):
        raise ConfigError("target", f"expected a whole number of tokens, got {value!r}")
    target = int(number)
    if target <= start.served:
        raise ConfigError("target", f"{target} is not past the {start.served} tokens {start.source} already serves "
                          "(max_position_embeddings)")
    if target > 1 << 40:
        raise ConfigError("target", f"{target} is past 2^40 tokens")
    return target


def _scheme_of(config: dict[str, Any], source: str, length: int):
    """The scheme pecli reads from ``config`` (one RoPE setting), at ``length``."""
    from pecli.config import build_scheme
    from pecli.models.families import plan_of

    plan = plan_of(config, source)
    options = dict(next(group for group in plan.groups if group.options is not None).options)
    return build_scheme(options.pop("scheme"), options, length=length).at_length(length)


def _pretrained_inv_freq(config: dict[str, Any], start: ExtensionBase) -> np.ndarray:
    scheme = _scheme_of(config, start.source, start.pretraining)
    return np.asarray(scheme.without_extension().frequency_pairs().inv_freq, dtype=np.float64)


def _measure(method: str, patch: dict[str, Any], config: dict[str, Any], start: ExtensionBase, target: int,
             trained: np.ndarray) -> Candidate:
    """Read ``patch`` back through pecli's config reader and measure the scheme it gives at N."""
    from pecli.analysis import CheckOptions, run_checks

    scheme = _scheme_of(patched(config, patch), start.source, target)
    pairs = scheme.frequency_pairs()
    inv_freq = np.asarray(pairs.inv_freq, dtype=np.float64)
    ranges = angle_ranges_of(inv_freq, trained, start.pretraining, target)
    results = {name: run_checks(scheme, name, CheckOptions(length=target, **options))[0] for name, options in CHECKS}
    measures = {
        "unseen_pairs": ranges.unseen_count,
        "angles_in_range_up_to": in_range_up_to(inv_freq, trained, start.pretraining),
        "trained_pair_shift": trained_pair_shift(inv_freq, trained, start.pretraining),
        "local_resolution": adjacent_step(inv_freq) / adjacent_step(trained),
        "attention_factor": float(pairs.attention_scaling),
        "effective_base": float(pairs.base),
        "length_dependent": bool(scheme.reads_context),
        "distinguishability": results["distinguishability"].verdict,
        "precision_bfloat16": results["precision"].verdict,
        "bfloat16_collisions": results["precision"].figures.get("collisions"),
    }
    failed = []
    if measures["unseen_pairs"]:
        failed.append("unseen-angles")
    if results["distinguishability"].verdict == "fail":
        failed.append("distinguishability")
    if results["precision"].verdict == "fail":
        failed.append("bfloat16")
    return Candidate(method, patch, measures, tuple(failed))


def in_range_up_to(inv_freq: np.ndarray, trained: np.ndarray, pretraining: int) -> int | None:
    """The longest context whose angles stay within pre-training's on every pair that did not turn fully
    in it: min over those pairs of ⌊L₀ θ_i / θ'_i⌋ + 1 (an angle up to L₀ θ_i counts as seen, as in
    :func:`~pecli.analysis.extrapolation.angle_ranges_of`); None when every pair turned fully."""
    partial = (pretraining * trained < 2 * math.pi) & (inv_freq > 0)
    if not partial.any():
        return None
    return int(np.min(np.floor(pretraining * trained[partial] / inv_freq[partial] * (1 + 1e-12)))) + 1


def trained_pair_shift(inv_freq: np.ndarray, trained: np.ndarray, pretraining: int) -> float:
    """Mean |log₂(θ'_i / θ_i)| over the pairs that turned fully in pre-training (L₀ θ_i ≥ 2π), octaves."""
    full = (pretraining * trained >= 2 * math.pi) & (inv_freq > 0)
    if not full.any():
        return 0.0
    return float(np.mean(np.abs(np.log2(inv_freq[full] / trained[full]))))


def adjacent_step(inv_freq: np.ndarray) -> float:
    """‖R(θ)·1 − 1‖ for one step of position: √(Σ_i 2 (2 − 2 cos θ_i)) over the rotated components."""
    return float(np.sqrt(np.sum(4.0 - 4.0 * np.cos(inv_freq))))


def ranked(candidates: list[Candidate]) -> list[Candidate]:
    """The candidates best first, with their rank and the reason (see the module notes for the rule)."""
    def key(c: Candidate) -> tuple[Any, ...]:
        return (len(c.failed), c.measures["length_dependent"], round(c.measures["trained_pair_shift"], 9),
                METHODS.index(c.method))

    order = sorted(candidates, key=key)
    out = []
    for rank, candidate in enumerate(order, 1):
        out.append(Candidate(candidate.method, candidate.config_patch, candidate.measures, candidate.failed, rank,
                             _why(candidate, order[rank] if rank < len(order) else None)))
    return out


def _why(candidate: Candidate, below: Candidate | None) -> str:
    """What holds or fails at N, and what puts the candidate above the next one."""
    m = candidate.measures
    parts = ["holds every condition at N" if not candidate.failed else "fails " + ", ".join(candidate.failed)]
    parts.append("frequencies change with the sequence length" if m["length_dependent"] else "fixed frequencies")
    parts.append(f"shifts the fully-turned pairs by {m['trained_pair_shift']:.3g} octave on average")
    if below is not None:
        n = below.measures
        if len(candidate.failed) < len(below.failed):
            parts.append(f"above {below.method}: fewer failed conditions")
        elif m["length_dependent"] != n["length_dependent"]:
            parts.append(f"above {below.method}: its frequencies do not depend on the length")
        elif round(m["trained_pair_shift"], 9) < round(n["trained_pair_shift"], 9):
            parts.append(f"above {below.method}: a smaller shift ({n['trained_pair_shift']:.3g})")
        else:
            parts.append(f"above {below.method}: the method order")
    return "; ".join(parts)
