"""The position settings of a HuggingFace model ``config.json``, as pecli keys.

:func:`read_plan` opens the file and hands it to the family table (:mod:`pecli.models.families`), which
returns the model's :class:`~pecli.models.plan.PositionPlan`: its layer groups, each with the pecli
options that reproduce it and the keys it was read from. :func:`read_hf_config` is the one-group
shortcut: the options of a model whose layers all share one encoding.
"""

from __future__ import annotations

from typing import Any

from pecli.errors import ConfigError
from pecli.models.plan import PositionPlan, one_group


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
    from pecli.config_files import read_json
    from pecli.models.families import plan_of
    from pecli.models.limits import check_config_sizes

    data = read_json(path, "hf_config")
    if not isinstance(data, dict):
        raise ConfigError("hf_config", f"{path} must hold a JSON object")
    check_config_sizes(data, source or path)  # before the plan lists its layers
    return plan_of(data, source or path, scheme)


def read_hf_config(path: str, scheme: str | None = None) -> dict[str, Any]:
    """The scheme options of a model whose layers share one position encoding (see :func:`read_plan`).

    Raises
    ------
    ConfigError
        As :func:`read_plan`; also when the model's layers differ (key ``layer``: choose one) or apply
        no position encoding.
    """
    return dict(one_group(read_plan(path, scheme)).options)
