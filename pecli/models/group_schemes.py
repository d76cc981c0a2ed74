"""Each layer group's scheme built (:attr:`~pecli.models.plan.LayerGroup.encoding`), so that options a scheme would refuse are refused
for the whole plan, by every door that reads a model: the family table while it builds a plan
(:func:`pecli.models.families.from_config.plan_of`) and :func:`pecli.models.reading.check_plan_schemes` after it.
"""

from __future__ import annotations

from typing import Any

from pecli.errors import ConfigError
from pecli.schemes import SCHEMES


def check_group_schemes(groups: Any, source: str) -> None:
    """Build the scheme of each of ``groups`` (layer groups of a plan read from ``source``) but a table whose
    values are in a checkpoint; a scheme's refusal is raised with the group and the config named.

    Raises
    ------
    ConfigError
        The scheme's own error (naming the key), with the layer group and the config it came from.
    """
    for group in groups:
        if group.options is None or SCHEMES[group.options["scheme"]].table_in_checkpoint:
            continue
        try:
            group.encoding
        except ConfigError as error:
            text = str(error).removeprefix(f"{error.key}: ")
            raise ConfigError(error.key, f"{text} (layer group {group.name} of {source})") from None


__all__ = ["check_group_schemes"]
