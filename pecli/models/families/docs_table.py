"""The Models page's table of families (``docs/models.md``), generated from the family table."""

from __future__ import annotations

from pecli.models.families.table import FALCON_ALIBI, FAMILIES, REFUSED


def models_table() -> str:
    """The Models page's table (Markdown, docs/models.md), from :data:`FAMILIES` and :data:`REFUSED`: a test keeps the two equal."""
    lines = ["| family | model_type | scheme | layout | keys read besides the usual |", "|---|---|---|---|---|"]
    for family in FAMILIES:
        layout = family.layout if family.scheme == "rope" else "—"
        lines.append(f"| {family.name} | {', '.join(family.model_types)} | {family.scheme} | {layout} | {family.keys_note} |")
    lines.append(f"| {FALCON_ALIBI.name} | falcon (alibi: true) | alibi | — | {FALCON_ALIBI.keys_note} |")
    for model_type, reason in REFUSED.items():
        lines.append(f"| refused | {model_type} | — | — | {reason} |")
    return "\n".join(lines)
