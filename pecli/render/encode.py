"""The table ``pecli encode`` prints."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from pecli.analysis.summary import EncodeReport
from pecli.render.tables import key_value_table, number, shown_params
from pecli.schemes.positions import position_text


def encode_table(report: EncodeReport) -> Table:
    """Scheme, parameters, shape, dtype, bytes, value range, adjacent distance, collisions."""
    count, first, last = report.positions
    array = report.array
    rows: list[tuple[str, Any]] = [
        ("scheme", f"{report.scheme} ({report.kind})"),
        ("parameters", shown_params(report.params)),
        ("positions", f"{count} ({position_text(first)} … {position_text(last)})"),
        (report.main, f"shape {array.shape}, {array.dtype}, {array.bytes:,} bytes"),
        ("value range", f"[{number(array.min)}, {number(array.max)}]"),
    ]
    adjacency = array.adjacency
    if adjacency is not None:
        pair = adjacency.min_pair
        where = f" (positions {position_text(pair[0])} → {position_text(pair[1])})" if pair else ""
        if adjacency.constant:
            where = " (the same for every adjacent pair)"
        distance = adjacency.min_distance
        rows.append(("min adjacent distance", f"{number(distance)}{where}" if distance is not None else None))
        rows.append(("colliding positions", adjacency.colliding_positions))
    if report.out:
        rows.append(("written to", report.out))
    return key_value_table("pecli encode", rows)
