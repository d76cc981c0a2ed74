"""A model's position plan, from what a request names: a ``config.json`` by path, a model id, a GGUF file.

:func:`model_plan` opens the source and hands its settings to the family table
(:mod:`pecli.models.families`, or :mod:`pecli.models.gguf` for a GGUF file), which returns the model's
:class:`~pecli.models.plan.PositionPlan`: its layer groups, each with the pecli options that reproduce it
and the keys it was read from. :func:`selected_plan` reads the model that a request's keys name
(``hf_config``, ``model``, ``gguf``) and narrows it to the group that ``layer`` or ``layer_group``
chooses; :func:`group_options` gives one group's scheme options and :func:`check_plan_schemes` builds
every group's scheme, so that each door (a command, ``compare``'s rows, the library) refuses the same
configs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from pecli.errors import ConfigError
from pecli.params import Parameter, excerpt
from pecli.schemes import SCHEMES

if TYPE_CHECKING:
    from pecli.models.plan import LayerGroup, PositionPlan

#: Keys that name a model and select from its plan: read by :func:`selected_plan`, never scheme keys.
MODEL_KEYS = ("hf_config", "model", "gguf", "layer", "layer_group")

#: Keys that choose one layer group of a model's position plan (with ``hf_config``, ``model`` or ``gguf``).
LAYER_SETTINGS: tuple[Parameter, ...] = (
    Parameter("layer", int, None, "one layer of the model: 0-based, as transformers' layer_idx", minimum=0,
              default_text="every layer group", group="Configuration"),
    Parameter("layer_group", str, None, "one layer group of the model by name (as inspect config lists them)",
              default_text="every layer group", group="Configuration"),
)


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

    data = read_json(path, "hf_config")
    if not isinstance(data, dict):
        raise ConfigError("hf_config", f"{path} must hold a JSON object")
    return plan_of_config(data, source or path, scheme)


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


def model_plan(hf_config: Any, model: Any, scheme: str | None = None, gguf: Any = None) -> PositionPlan:
    """The position plan of a config.json given by path (``hf_config``) or by model id (``model``,
    resolved through the HuggingFace cache by :func:`pecli.models.sources.hub.config_path`), or of a GGUF file
    (``gguf``, :func:`pecli.models.gguf.read_gguf_plan`); ``scheme="rope"`` reads a Qwen-VL model as
    1-D RoPE (see :func:`read_plan`)."""
    if gguf is not None:
        if not isinstance(gguf, str) or not gguf:
            raise ConfigError("gguf", f"expected the path of a GGUF file, got {excerpt(gguf)}")
        from pecli.models.gguf import read_gguf_plan

        return read_gguf_plan(gguf)
    if model is not None:
        if not isinstance(model, str) or not model.strip():
            raise ConfigError("model", f"expected ORG/NAME[@REVISION], got {excerpt(model)}")
        from pecli.models.sources.hub import config_path

        path = config_path(model)
        try:
            return read_plan(path, scheme, source=model)
        except ConfigError as error:
            if error.key != "hf_config":  # a key of the config itself: its own message names it
                raise
            raise ConfigError("model", f"{model}: {str(error).removeprefix('hf_config: ')}") from None
    if not isinstance(hf_config, str) or not hf_config:
        raise ConfigError("hf_config", f"expected the path of a config.json, got {excerpt(hf_config)}")
    return read_plan(hf_config, scheme)


def selected_plan(options: Mapping[str, Any], command: Mapping[str, Parameter] | None = None) -> PositionPlan | None:
    """The plan of the model that ``options`` name (``hf_config``, ``model`` or ``gguf``), narrowed to the
    group that ``layer`` or ``layer_group`` selects; None when no model is named (then a selection is an
    error). A command that takes a model key as its own setting (compare) reads the model itself."""
    command = command or {}
    if any(key in command for key in MODEL_KEYS):
        return None
    hf_config, model, gguf = options.get("hf_config"), options.get("model"), options.get("gguf")
    layer = LAYER_SETTINGS[0].coerce(options["layer"]) if options.get("layer") is not None else None
    group = LAYER_SETTINGS[1].coerce(options["layer_group"]) if options.get("layer_group") is not None else None
    given = [name for name, value in (("--hf-config", hf_config), ("--model", model), ("--gguf", gguf)) if value is not None]
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
    return model_plan(hf_config, model, asked if isinstance(asked, str) else None, gguf).select(layer, group)


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
    "LAYER_SETTINGS", "MODEL_KEYS", "check_plan_schemes", "group_options", "model_plan", "plan_of_config",
    "read_hf_config", "read_plan", "selected_plan",
]
