"""A model's position plan, from what a request names: a ``config.json`` by path, a model id, a GGUF file.

:func:`model_plan` has the source (:data:`pecli.models.sources.SOURCES`) read it and hand its settings to
the family table (:mod:`pecli.models.families`, or :mod:`pecli.models.gguf` for a GGUF file), which returns
the model's :class:`~pecli.models.plan.PositionPlan`: its layer groups, each with the pecli options that
reproduce it and the keys it was read from. :func:`selected_plan` reads the model that a request's keys name
(``hf_config``, ``model``, ``gguf``) and narrows it to the group that ``layer`` or ``layer_group``
chooses; :func:`group_options` gives one group's scheme options and :func:`check_plan_schemes` builds
every group's scheme, so that each door (a command, ``compare``'s rows, the library) refuses the same
configs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from pecli.errors import ConfigError
from pecli.params import Parameter
from pecli.models.sources import DEFAULT_SOURCE, SOURCES, read_source
from pecli.schemes import SCHEMES

if TYPE_CHECKING:
    from pecli.models.plan import LayerGroup, PositionPlan

#: Keys that name a model (its source) and select from its plan: read by :func:`selected_plan`, never scheme keys.
MODEL_KEYS = (*SOURCES, "layer", "layer_group")

#: Keys that choose one layer group of a model's position plan (with ``hf_config``, ``model`` or ``gguf``).
LAYER_SETTINGS: tuple[Parameter, ...] = (
    Parameter("layer", int, None, "one layer of the model: 0-based, as transformers' layer_idx", minimum=0,
              default_text="every layer group", group="Configuration"),
    Parameter("layer_group", str, None, "one layer group of the model by name (as inspect config lists them)",
              default_text="every layer group", group="Configuration"),
)


def model_plan(hf_config: Any, model: Any, scheme: str | None = None, gguf: Any = None) -> PositionPlan:
    """The position plan of a config.json given by path (``hf_config``) or by model id (``model``,
    resolved through the HuggingFace cache by :func:`pecli.models.sources.hub.config_path`), or of a GGUF
    file (``gguf``, :func:`pecli.models.gguf.read_gguf_plan`), each read by its source
    (:data:`~pecli.models.sources.SOURCES`); ``scheme="rope"`` reads a Qwen-VL model as 1-D RoPE (see
    :func:`~pecli.models.sources.config_json.read_plan`)."""
    given = {"hf_config": hf_config, "model": model, "gguf": gguf}
    key = next((key for key in reversed(SOURCES) if given.get(key) is not None), DEFAULT_SOURCE)
    return read_source(key, given[key], scheme)


def selected_plan(options: Mapping[str, Any], command: Mapping[str, Parameter] | None = None) -> PositionPlan | None:
    """The plan of the model that ``options`` name (``hf_config``, ``model`` or ``gguf``), narrowed to the
    group that ``layer`` or ``layer_group`` selects; None when no model is named (then a selection is an
    error). A command that takes a model key as its own setting (compare) reads the model itself."""
    command = command or {}
    if any(key in command for key in MODEL_KEYS):
        return None
    hf_config, model = options.get("hf_config"), options.get("model")
    layer = LAYER_SETTINGS[0].coerce(options["layer"]) if options.get("layer") is not None else None
    group = LAYER_SETTINGS[1].coerce(options["layer_group"]) if options.get("layer_group") is not None else None
    given = [source.option for key, source in SOURCES.items() if options.get(key) is not None]
    if hf_config is not None and model is not None:
        raise ConfigError("model", "give either --model or --hf-config, not both")
    if len(given) > 1:
        raise ConfigError("gguf", f"give either {' or '.join(given)}, not both")
    if not given:
        if layer is not None or group is not None:
            key = "layer" if layer is not None else "layer_group"
            raise ConfigError(key, "selects a layer of a model: give --hf-config or --model (or --gguf)")
        return None
    asked = options.get("scheme")  # "rope" reads a Qwen-VL model as 1-D RoPE (see read_plan)
    key = next(key for key in reversed(SOURCES) if options.get(key) is not None)
    return read_source(key, options[key], asked if isinstance(asked, str) else None).select(layer, group)


def group_options(plan: PositionPlan, group: LayerGroup, weights: Any = None) -> dict[str, Any]:
    """The scheme options of one of ``plan``'s groups; a table whose values are in the checkpoint (a
    learned one) without that checkpoint (``weights``) is refused, whichever door asks."""
    options = dict(group.options or {})
    if SCHEMES[options["scheme"]].table_in_checkpoint and weights is None:
        raise ConfigError("weights", f"{plan.source} ({plan.family}) has a learned position table in layer group "
                          f"{group.name}: its values are in the checkpoint, not the config; give it with --weights FILE")
    return options


def check_plan_schemes(plan: PositionPlan) -> None:
    """Build the scheme of every layer group of ``plan``, so that options the scheme would refuse (a base
    NaN or infinite, a partial_rotary_factor of 0 or 1.5, a head of 10⁹ components, an unknown
    rope_type in one layer type's block) are refused for the whole plan, as any command refuses the
    group it reads. A table whose values are in a checkpoint (learned), not the config, is not built here.

    Raises
    ------
    ConfigError
        The scheme's own error (naming the key), with the layer group and the config it came from.
    """
    from pecli.models.group_schemes import check_group_schemes

    check_group_schemes(plan.groups, plan.source)


__all__ = [
    "LAYER_SETTINGS", "MODEL_KEYS", "check_plan_schemes", "group_options", "model_plan", "selected_plan",
]
