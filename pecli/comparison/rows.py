"""The rows ``pecli compare`` sets side by side: the schemes asked for, and each layer group of each model.

A scheme's row is labelled by its name and the parameters its entry gives (``rope(base=500000)``); it takes
the side-by-side dimension unless its entry gives one or its size comes from a checkpoint. A model gives a
row per layer group that encodes positions (its own dimension, from its config), labelled by the model
id or the file's name; a group without a position encoding gives no row and is named instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from pecli.errors import ConfigError
from pecli.schemes import get_scheme_class
from pecli.schemes.base import Scheme

#: Builds a row's scheme: ``build(name, params, **changes)`` (a request's ``Spec.variant``: the user's
#: scheme options applied to every scheme that takes them).
Build = Callable[..., Scheme]


@dataclass
class ComparedRows:
    """The rows, with what the table's notes say about them."""

    rows: list[tuple[str, Scheme]] = field(default_factory=list)
    #: Rows that kept a dimension of their own (an entry's ``dim``, a checkpoint, a model's config).
    own_dim: list[str] = field(default_factory=list)
    #: Model layer groups without a position encoding, so without a row: "LABEL (layers …)".
    without: list[str] = field(default_factory=list)
    #: What reading the models warned.
    warnings: list[str] = field(default_factory=list)


def compared_rows(
    entries: Iterable[tuple[str, dict[str, Any]]], models: Iterable[tuple[str | None, str | None, str | None]], *,
    build: Build, dim: int, layer: int | None = None, layer_group: str | None = None, weights: Any = None,
) -> ComparedRows:
    """The rows of ``entries`` (scheme name, own parameters) and of ``models`` ((config path, model id, GGUF
    path), one given each), at ``dim`` for every scheme without its own; ``layer``/``layer_group`` select
    the models' groups.

    Raises
    ------
    ConfigError
        A layer selected without a model (key ``layer`` or ``layer_group``); no row at all (every layer
        chosen is without a position encoding); a scheme's or a model's own error.
    """
    from pecli.models.reading import group_options, model_plan

    found, models = ComparedRows(), list(models)
    for name, params in entries:
        shown = {k: v for k, v in params.items() if not isinstance(v, (dict, list, tuple))}
        label = name + (f"({', '.join(f'{k}={v}' for k, v in shown.items())})" if shown else "")
        sized = "dim" in params or _sized_by_checkpoint(name, params, weights)
        if sized and "dim" in get_scheme_class(name).parameters():
            found.own_dim.append(label)
        found.rows.append((label, build(name, params, **({} if sized else {"dim": dim}))))
    if not models and (layer is not None or layer_group is not None):
        raise ConfigError("layer" if layer is not None else "layer_group", "selects a layer of a model: give --hf-config or --model")
    for path, model_id, gguf_path in models:
        plan = model_plan(path, model_id, gguf=gguf_path).select(layer, layer_group)
        found.warnings.extend(plan.warnings)
        name = model_id if model_id is not None else model_label(path or gguf_path)
        encoded = [group for group in plan.groups if group.options is not None]
        for group in plan.groups:
            label = name if len(encoded) == 1 and group.options is not None else f"{name} {group.name}"
            if group.options is None:
                found.without.append(f"{label} (layers {group.layers_text()})")
                continue
            options = group_options(plan, group, weights)
            found.rows.append((label, build(options.pop("scheme"), options)))
            found.own_dim.append(label)
    if not found.rows:
        raise ConfigError("layer", f"no layer chosen has a position encoding: {', '.join(found.without)}")
    return found


def model_label(path: str) -> str:
    """How a row names a model given by path: its folder's name (``Llama-3.1-8B/``), else the file's stem."""
    return Path(path).name if Path(path).is_dir() else Path(path).stem


def _sized_by_checkpoint(name: str, params: dict[str, Any], weights: Any) -> bool:
    """Whether the scheme's size comes from a checkpoint it reads (learned ``weights``): it keeps its own dim."""
    return "weights" in get_scheme_class(name).parameters() and (params.get("weights") or weights) is not None
