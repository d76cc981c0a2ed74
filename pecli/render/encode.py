"""The table ``pecli encode`` prints."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from pecli.render.tables import key_value_table


def encode_table(document: dict[str, Any]) -> Table:
    """Scheme, parameters, shape, dtype, bytes, value range, adjacent distance, collisions."""
    positions = document["positions"]
    rows = [
        ("scheme", f"{document['scheme']} ({document['kind']})"),
        ("parameters", document["params"]),
        ("positions", f"{positions['count']} ({positions['first']} … {positions['last']})"),
        (document["main"], f"shape {tuple(document['shape'])}, {document['dtype']}, {document['bytes']:,} bytes"),
        ("value range", f"[{document['min']:.6g}, {document['max']:.6g}]"),
    ]
    if "min_adjacent_distance" in document:
        pair = document["min_adjacent_pair"]
        where = f" (positions {pair[0]} → {pair[1]})" if pair else ""
        if document.get("adjacent_distance_constant"):
            where = " (the same for every adjacent pair)"
        distance = document["min_adjacent_distance"]
        rows.append(("min adjacent distance", f"{distance:.6g}{where}" if distance is not None else None))
        rows.append(("colliding positions", document["colliding_positions"]))
    if document.get("out"):
        rows.append(("written to", document["out"]))
    return key_value_table("pecli encode", rows)
