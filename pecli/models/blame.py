"""Which setting makes two plans differ: the one whose value, changed alone to the model's, gives the
model's numbers.

``pecli diff`` first finds *that* two plans differ (:func:`pecli.models.plan_diff.diff_plans`); this module
finds *why*, by trial, the same way for every source of a candidate plan. A source offers a list of
:class:`Trial`: one setting of the candidate (a GGUF key, an engine flag), its value there and what the
model's side says for it, and a function that builds the candidate plan again with some of those settings
at the model's values. A difference is blamed on the settings whose trial alone makes it disappear; where no
single one does, on the smallest set found by starting from all of them and leaving out each that is
not needed. A difference no trial explains keeps the key names :mod:`pecli.models.rope_facts` found.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from pecli.errors import PecliError
from pecli.models.differences import Difference
from pecli.models.plan import PositionPlan

#: Kinds of difference that one cause can show as either (a wrong base shows as "frequencies" when the
#: candidate's frequencies are given pair by pair).
FAMILIES = {"base": "frequencies", "frequencies": "frequencies"}


class _Absent:
    """A setting that one side does not have (a key the file leaves out, a flag not given)."""

    def __repr__(self) -> str:
        return "absent"


ABSENT = _Absent()


@dataclass(frozen=True)
class Trial:
    """One setting of the candidate, tried at the model's value.

    Attributes
    ----------
    key, value :
        The setting as the candidate names it and its value there (:data:`ABSENT`: not set).
    model_key, model_value :
        What the model's side calls it and the value it would have (:data:`ABSENT`: not set).
    positional :
        The setting acts at every position (a base, the rotated components), not only past the
        pre-training length (a scaling).
    shown :
        How the model's value is said, where not as ``model_value`` itself (a tensor's factors).
    """

    key: str
    value: Any
    model_key: str
    model_value: Any
    positional: bool = False
    shown: Any = None


def blamed(found, trials: Sequence[Trial], plan_with: Callable[[Sequence[Trial]], PositionPlan]):
    """``found`` (a :class:`~pecli.models.plan_diff.PlanDiff`) with each difference that one setting, or
    a smallest set of them, explains blamed on it (see the module); ``plan_with(trials)`` is the candidate
    plan with every setting of ``trials`` at the model's value."""
    from pecli.models.plan_diff import diff_plans

    if found.same or not trials:
        return found
    cache: dict[tuple[str, ...], list[Difference] | None] = {}

    def remaining(chosen: Sequence[Trial]) -> list[Difference] | None:
        names = tuple(sorted(t.key for t in chosen))
        if names not in cache:
            try:
                cache[names] = list(diff_plans(plan_with(chosen), found.reference).differences)
            except PecliError:  # a combination the reader refuses explains nothing
                cache[names] = None
        return cache[names]

    def fixes(chosen: Sequence[Trial], difference: Difference) -> bool:
        left = remaining(chosen)
        return left is not None and not any(_same_kind(d, difference) for d in left)

    out = []
    for difference in found.differences:
        if difference.what == "layers":
            out.append(difference)
            continue
        culprits = [t for t in trials if fixes([t], difference)]
        if not culprits and fixes(trials, difference):
            culprits = list(trials)
            for trial in list(culprits):
                if len(culprits) > 1 and fixes([t for t in culprits if t is not trial], difference):
                    culprits.remove(trial)
        out.append(_rewritten(difference, culprits) if culprits else difference)
    return dataclasses.replace(found, differences=tuple(out))


def _same_kind(left: Difference, right: Difference) -> bool:
    if FAMILIES.get(left.what, left.what) != FAMILIES.get(right.what, right.what):
        return False
    return bool(_layers(left.layers) & _layers(right.layers))


def _layers(text: str) -> set[int]:
    """``"0–2, 5"`` → {0, 1, 2, 5}; ``"all"`` → every layer (as -1, which meets every set)."""
    if text == "all":
        return {-1}
    out: set[int] = set()
    for part in text.split(", "):
        first, _, last = part.partition("–")
        out.update(range(int(first), int(last or first) + 1))
    return out


def _rewritten(difference: Difference, culprits: list[Trial]) -> Difference:
    one = len(culprits) == 1
    def value(found: Any) -> Any:
        if found is ABSENT:
            return "absent"
        return f"{found.size} factors" if hasattr(found, "size") and hasattr(found, "shape") else found

    def model(trial: Trial) -> Any:
        return value(trial.model_value) if trial.shown is None else trial.shown

    what = difference.what
    if FAMILIES.get(what) == "frequencies":
        what = "base" if all("base" in t.key for t in culprits) else "frequencies"
    effect = difference.effect
    if any(t.positional for t in culprits) and FAMILIES.get(what) == "frequencies":
        effect = re.sub(r" past [\d,]+", "", effect)
        effect = re.sub(r"( \(and \d+ more runs\))?$", r" at every position\1", effect, count=1)
    return Difference(what, difference.layers, ", ".join(t.key for t in culprits),
                      ", ".join(dict.fromkeys(t.model_key for t in culprits)),
                      value(culprits[0].value) if one else [value(t.value) for t in culprits],
                      model(culprits[0]) if one else [model(t) for t in culprits], effect)


__all__ = ["ABSENT", "Trial", "blamed"]
