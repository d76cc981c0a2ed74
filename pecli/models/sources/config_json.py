"""``--hf-config FILE``: a HuggingFace ``config.json`` (or the folder holding it), read as its config class
reads it — every key it leaves out takes the class's default (:mod:`~pecli.models.sources.class_defaults`) —
and handed to the family table (:mod:`pecli.models.families`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pecli.errors import ConfigError
from pecli.params import excerpt

if TYPE_CHECKING:
    from pecli.models.plan import PositionPlan


def read(path: Any, scheme: str | None = None) -> PositionPlan:
    """The plan of the config.json at ``path`` (see :func:`read_plan`)."""
    if not isinstance(path, str) or not path:
        raise ConfigError("hf_config", f"expected the path of a config.json, got {excerpt(path)}")
    return read_plan(path, scheme)


def read_plan(path: str, scheme: str | None = None, source: str | None = None) -> PositionPlan:
    """The position plan of the ``config.json`` at ``path`` (``source``: how messages name it).

    ``scheme="rope"`` reads a Qwen-VL model as the 1-D RoPE of its text (same frequencies); by default
    it reads as ``mrope``.

    Raises
    ------
    ConfigError
        (key ``hf_config``) The file cannot be read or is not a JSON object; the model type is not in
        the family table and the config has no RoPE keys; a dimension is not a positive integer; keys
        that contradict each other (named).
    """
    return plan_of_config(read_config(path), source or path, scheme)


def read_config(path: str, source: str | None = None) -> dict[str, Any]:
    """The parsed ``config.json`` at ``path``; :class:`ConfigError` (key ``hf_config``) when it cannot be
    read or is not a JSON object (``source``: how the message names it, default the path)."""
    from pecli.config_files import read_json

    data = read_json(path, "hf_config")
    if not isinstance(data, dict):
        raise ConfigError("hf_config", f"{source or path} must hold a JSON object")
    return data


def plan_of_config(data: dict[str, Any], source: str, scheme: str | None = None) -> PositionPlan:
    """The position plan of a parsed ``config.json`` (``source``: how messages name it); its sizes are
    checked before the plan lists its layers (:func:`pecli.models.limits.check_config_sizes`), and
    :func:`~pecli.models.families.plan_of` checks the kind of each key it reads and builds each group's
    scheme before any door reads a group's numbers."""
    from pecli.models.families import plan_of
    from pecli.models.limits import check_config_sizes

    check_config_sizes(data, source)
    return plan_of(data, source, scheme)


def read_hf_config(path: str, scheme: str | None = None) -> dict[str, Any]:
    """The scheme options of a model whose layers share one position encoding (see :func:`read_plan`).

    Raises
    ------
    ConfigError
        As :func:`read_plan`; also when the model's layers differ (key ``layer``: choose one) or apply
        no position encoding.
    """
    from pecli.models.plan import one_group

    return dict(one_group(read_plan(path, scheme)).options)
