"""What ``pecli extend`` prints: the candidates ranked side by side, the chosen one's reason and patch, and
what an engine needs to serve it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from pecli.extend.report import Candidate, ExtensionReport

#: How the table names the failed conditions (``--json`` has them in full).
SHORT_FAILS = {"unseen-angles": "unseen", "distinguishability": "distinct", "bfloat16": "bf16"}
LEGEND = ("unseen: pairs that never turned fully in training whose span at the target is past training's; "
          "in range: the longest context without such pairs; shift: octaves the pairs that turned fully in "
          "training move, on average; near: spacing of adjacent positions against training's; logit: what q·k/√d "
          "is multiplied by; cost: the ranking's octaves (shift, spacing, logit scale off YaRN's, +1 for *); "
          "fails: unseen (unseen-angles), distinct (distinguishability) or bf16 (new bfloat16 collisions) at the target; *: frequencies change with the length; "
          "†: the recipe the family shipped (--pick shipped); ‡: --method and --factor (--pick given)")


def extend_renderable(report: ExtensionReport, picked: Candidate, serving: Any = None) -> Group:
    """The candidates side by side, then the chosen one's reason, its patch and the engine's flags."""
    table = Table(title=report.table_title(), title_justify="left", show_edge=False)
    for header in ("#", "method", "unseen", "in range", "shift", "near", "logit", "cost", "fails"):
        table.add_column(header, justify="left" if header in ("method", "fails") else "right", no_wrap=header != "fails")
    for c in report.candidates:
        m = c.measures
        reach = "all" if m["angles_in_range_up_to"] is None else f"{m['angles_in_range_up_to']:,}"
        name = (c.label or c.method) + ("*" if m["length_dependent"] else "") + {"ranked": "", "given": " ‡",
                                                                                "shipped": " †"}[c.origin]
        figures = (m["trained_pair_shift"], m["local_resolution"], m["logit_scale"], m["cost"])
        table.add_row(str(c.rank), name, str(m["unseen_pairs"]), reach, *(f"{x:.3g}" for x in figures),
                      ", ".join(SHORT_FAILS.get(f, f) for f in c.failed) or "none")
    parts = [table, Text(LEGEND),
             Text(f"critical dimension (Liu et al. 2023): {report.critical_dimension} of {report.base.dim}")]
    parts += [Text(f"note: {note}") for note in report.notes]
    parts += [Text(f"{picked.label or picked.method} (rank {picked.rank}): {picked.why}"),
              Syntax(json.dumps(picked.config_patch, indent=2), "json", theme="ansi_dark", background_color="default")]
    if serving is not None:
        parts += _serving_lines(serving)
    return Group(*parts)


def _serving_lines(serving: Any) -> list:
    if serving.unsupported is not None:
        lines = [Text(f"{serving.engine}: {serving.unsupported}")]
    elif serving.edit_config is not None:
        lines = [Text(f"{serving.engine}: serves {serving.served:,} tokens with the patch merged into config.json")]
    else:
        served = "refused as given" if serving.served is None else f"serves {serving.served:,} tokens"
        lines = [Text(f"{serving.engine} ({served}):"), Text("\n".join(serving.command_lines()))]
    return lines + [Text(f"warning: {warning}") for warning in serving.warnings]
