"""An engine's run held against the model: ``pecli diff --runtime E --args "…"``.

:func:`engine_diff` runs the engine's record on the model's config and flags and compares what its code
builds with what transformers builds (:func:`pecli.models.plan_diff.diff_plans`, group by group); the
engine's refusal, and a served context other than the one the config declares, are differences too.
Each of the engine's departures comes with its effect and the way to get the model's numbers on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from pecli.engines.base import Engine, EngineRun, declared_context, text_of
from pecli.models.differences import Difference
from pecli.models.plan import PositionPlan
from pecli.models.plan_diff import PlanDiff, diff_plans


@dataclass(frozen=True)
class EngineDiff:
    """The differences between what an engine computes and the model, with the engine's departures."""

    run: EngineRun
    reference: PositionPlan
    found: PlanDiff | None
    extra: tuple[Difference, ...] = ()

    @property
    def engine(self) -> Engine:
        return self.run.engine

    @property
    def candidate(self) -> PositionPlan:
        return self.run.plan if self.run.plan is not None else self.reference

    @property
    def differences(self) -> tuple[Difference, ...]:
        return (self.found.differences if self.found is not None else ()) + self.extra

    @property
    def same(self) -> bool:
        return not self.differences

    def lines(self) -> list[str]:
        """The differences (``layers …: what: …``), then each departure with its remedy."""
        found = PlanDiff(self.candidate, self.reference, "runtime", "hf", self.differences).lines()
        if not self.same:
            found += [departure.line(self.engine) for departure in self.run.departures]
        return found

    def to_dict(self) -> dict[str, Any]:
        document = PlanDiff(self.candidate, self.reference, "runtime", "hf", self.differences).to_dict()
        document["engine"] = {"name": self.engine.name, "version": self.engine.version, "source": self.engine.source}
        document.update({"accepted": self.run.accepted, "refused": self.run.refused, "served": self.run.served,
                         "positions": self.run.positions,
                         "departures": [d.to_dict() for d in self.run.departures]})
        return document


def engine_diff(engine: Engine, config: Mapping[str, Any], args: str, reference: PositionPlan,
                source: str = "config.json") -> EngineDiff:
    """What ``engine`` computes for ``config`` under ``args``, against ``reference`` (the model's plan)."""
    run = engine.run(config, args, source=source)
    if not run.accepted:
        refused = Difference("accepted", "all", engine.name, "config.json", "refused", "loaded",
                             f"{engine.title} {engine.version} refuses it: {run.refused}")
        return EngineDiff(run, reference, None, (refused,))
    found = engine.blamed(diff_plans(run.plan, reference, "runtime", "hf"), reference, args)
    extra: tuple[Difference, ...] = tuple(
        Difference(departure.what, departure.layers, engine.name, "config.json", engine.title, "transformers",
                   departure.effect) for departure in run.departures if departure.beyond_numbers)
    declared = declared_context(text_of(config)[1])
    if run.served is not None and declared is not None and run.served != declared and engine.caps_context:
        extra += (Difference("served context", "all", engine.name, "max_position_embeddings", run.served, declared,
                            f"{engine.title} serves {run.served:,} tokens where the config declares {declared:,}"),)
    return EngineDiff(run, reference, found, extra)


def engine_diff_unread(engine: Engine, config: Mapping[str, Any], args: str, unread: Exception,
                       source: str = "config.json") -> EngineDiff:
    """What ``engine`` computes for a ``config`` pecli does not read as transformers does (``unread``, its refusal:
    a rope type only engines build, ``deepseek_yarn``, ``telechat3-yarn``), where the engine's own reading loads it:
    the engine's scaling per group against the config's block, said as one difference (nothing to compare numbers
    with). Where the engine's reading fails too, ``unread`` is raised as it was."""
    from pecli.errors import ConfigError

    try:
        run = engine.run(config, args, source=source)
    except ConfigError:
        raise unread from None
    _, text = text_of(config)
    block = next((text[k] for k in ("rope_parameters", "rope_scaling") if isinstance(text.get(k), dict)), None)
    reference = PositionPlan(f"{source} (not read)", text.get("model_type"), "config.json", None, ())
    said = f"pecli reads config.json as transformers does and not this one ({unread})"
    if not run.accepted:
        refused = Difference("accepted", "all", engine.name, "config.json", "refused", "not read",
                             f"{engine.title} {engine.version} refuses it: {run.refused}; {said}")
        return EngineDiff(run, reference, None, (refused,))
    found = tuple(
        Difference("not read", group.layers_text(), "rope_scaling", "rope_scaling",
                   (group.encoding.rope_scaling.to_hf() if getattr(group.encoding, "rope_scaling", None) else None),
                   block, f"{engine.title} {engine.version} builds this from it; {said}: no transformers numbers to "
                   "hold it against")
        for group in run.plan.groups if group.rotary)
    return EngineDiff(run, reference, None, found or (Difference(
        "not read", "all", engine.name, "config.json", "loaded", "not read", f"{engine.title} {engine.version} loads it; "
        f"{said}"),))


__all__ = ["EngineDiff", "engine_diff", "engine_diff_unread"]
