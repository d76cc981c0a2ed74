"""``pecli compare``: every property of several schemes, one row each, with the articles' claims set against them."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from pecli.analysis.options import check_options, check_parameters
from pecli.cli.common import (
    CONFIG_PANEL, JsonOption, QuietOption, hold_warning, print_json, scheme_command, stdout_console,
)
from pecli.config import LAYER_SETTINGS, Setting, Spec, scheme_entries
from pecli.errors import ConfigError

#: The schemes compared when none are given: the eight base families.
BASE_SCHEMES = ("integer", "binary", "sinusoidal", "learned", "relative", "t5", "alibi", "rope")

SETTINGS = (
    Setting(
        "schemes", object, ",".join(BASE_SCHEMES),
        "schemes compared: comma-separated names (in YAML also mappings with their own parameters)",
        default_text="the eight base schemes",
    ),
    *(check_parameters()[name] for name in ("dtype", "train_length", "train_grid", "strict")),  # as check's
    Setting("hf_config", object, None, "add a HuggingFace config.json (or model folder): a row per layer group (repeatable)"),
    Setting("model", object, None, "add a HuggingFace model ORG/NAME[@REVISION]: a row per layer group (repeatable)"),
    Setting("gguf", object, None, "add a GGUF file: a row per layer group (repeatable)"),
    *LAYER_SETTINGS,
)


GgufFiles = Annotated[Optional[list[str]], typer.Option("--gguf", metavar="FILE", help="add a GGUF file: a row per layer group (repeatable)",
                                                        rich_help_panel=CONFIG_PANEL, show_default=False)]


@scheme_command(*SETTINGS, run_keys=("length",))
def compare(
    spec: Spec,
    hf_config: Annotated[Optional[list[str]], typer.Option("--hf-config", metavar="FILE", help="add a HuggingFace config.json (or model folder): a row per layer group (repeatable)", rich_help_panel=CONFIG_PANEL, show_default=False)] = None,
    model: Annotated[Optional[list[str]], typer.Option("--model", metavar="ORG/NAME", help="add a HuggingFace model ORG/NAME[@REVISION]: a row per layer group (repeatable)", rich_help_panel=CONFIG_PANEL, show_default=False)] = None,
    gguf: GgufFiles = None, json: JsonOption = False, quiet: QuietOption = False,
) -> None:
    """Measure every property of several schemes: one row per scheme, one column per verdict.

    Each row also gives the parameter count, where the scheme acts (input, q,k or logits), the value
    range and the largest wavelength. Scheme options (--base, --heads, --set key=value) reach every
    compared scheme that takes them; every scheme with a dimension gets the same one (--dim, default
    128) unless its own entry or config.json sets it. Where a measurement disagrees with a claim of the articles pecli
    comes from, a footnote says so.
    """
    from pecli.comparison.rows import compared_rows
    from pecli.comparison.table import compare as run_comparison
    from pecli.render.side_by_side import SIDE_BY_SIDE_DIM, one_dim_note

    settings = spec.settings
    if spec.length < 3:
        raise ConfigError("length", f"must be >= 3, got {spec.length}")
    given_dim = "dim" in spec.given_params
    dim = int(spec.given_params["dim"]) if given_dim else SIDE_BY_SIDE_DIM
    models = [(path, None, None) for path in _paths(settings["hf_config"])] + [
        (None, model_id, None) for model_id in _paths(settings["model"], "model")] + [
        (None, None, path) for path in _paths(settings["gguf"], "gguf")]
    entries = scheme_entries(settings["schemes"]) if not models or settings["schemes"] != SETTINGS[0].default else []
    found = compared_rows(entries, models, build=spec.variant, dim=dim, layer=settings["layer"],
                          layer_group=settings["layer_group"], weights=spec.given_params.get("weights"))
    for warning in found.warnings:
        hold_warning(f"pecli: warning: {warning}", quiet=quiet)  # said if compare answers
    rows, own_dim, without = found.rows, found.own_dim, found.without
    train_grid = settings["train_grid"]
    if train_grid is not None and not any(scheme.on_grid for _, scheme in rows):
        raise ConfigError("train_grid", "no compared scheme is on a grid (rope-nd, sinusoidal-nd); --train-length is the training length along a line")
    options = check_options({**settings, "dtype": spec.dtype}, length=spec.length)
    from pecli.analysis.registry import estimate_check_bytes  # here: --help loads no analysis
    needed = max((estimate_check_bytes(scheme, "all", options) for _, scheme in rows), default=0)
    spec.check_memory(needed, "compare")
    comparison = run_comparison(
        rows, length=spec.length, train_length=settings["train_length"], train_grid=train_grid, dtype=spec.dtype,
        strict=bool(settings["strict"]),
    )
    if json:
        print_json(comparison.to_dict())
    elif not quiet:
        from pecli.render.check import compare_renderable

        with_dim = any("dim" in scheme.params() for _, scheme in rows)
        notes = [one_dim_note(dim, given=given_dim, own=own_dim)] if with_dim else []
        if without:
            notes.append("no position encoding, so no row: " + ", ".join(without))
        on_cells = [row for row in comparison.rows if row.scheme.has_cells]
        if on_cells:
            not_applicable = any(result.verdict == "n/a" for row in on_cells for result in row.results.values())
            notes.append(("N/A: a property not defined for that scheme's positions; " if not_applicable else "")
                         + "; ".join(_own_positions(row) for row in on_cells))
        stdout_console().print(compare_renderable(comparison, notes=notes))


def _own_positions(row: Any) -> str:
    """How an n-D row was measured: on its own cells, and extrapolated from which training grid."""
    scheme = row.scheme
    words = f"{row.label} is measured on its own {scheme.cell_count:,} positions ({scheme.cells_text()})"
    extrapolation = row.results["extrapolation"]
    if extrapolation.verdict != "n/a" and "train_grid" in extrapolation.figures:
        words += f", extrapolated from a {'x'.join(map(str, extrapolation.figures['train_grid']))} training grid"
    return words


def _paths(value: Any, key: str = "hf_config") -> list[str]:
    """Config paths (or model ids) from one string or a list of strings."""
    if value is None:
        return []
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(item, str) and item for item in items):
        what = ("a model id ORG/NAME, or a list of ids" if key == "model" else "the path of a GGUF file, or a list of paths"
                if key == "gguf" else "the path of a config.json, or a list of paths")
        raise ConfigError(key, f"expected {what}")
    return list(items)
