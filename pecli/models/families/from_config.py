"""A parsed ``config.json`` to its :class:`~pecli.models.plan.PositionPlan` (:func:`plan_of`): the class's
defaults filled in, the family found, its groups read, and what each group's attention adds.
"""

from __future__ import annotations

from typing import Any

from pecli.errors import ConfigError
from pecli.models.sources.class_defaults import record_of, versions, with_class_defaults
from pecli.models.families.attention import group_attention, group_window
from pecli.models.families.keys import ROPE_KEYS, Keys, refuse_unread, text_part
from pecli.models.families.record import GENERIC
from pecli.models.families.rope import mrope_options, num_layers, per_layer_rope
from pecli.models.families.stacks import whole_model
from pecli.models.families.table import REFUSED, family_of
from pecli.models.logit_scale import softmax_scale
from pecli.models.plan import PositionPlan
from pecli.params import excerpt


def plan_of(data: dict[str, Any], source: str, scheme: str | None = None) -> PositionPlan:
    """The position plan of a parsed ``config.json`` (``source`` names it in messages).

    ``scheme`` ``"rope"`` reads a Qwen-VL model (whose block has an ``mrope_section``) as the 1-D RoPE
    of its text, which has the same frequencies; otherwise such a model reads as ``mrope``.
    """
    from pecli.models.key_types import check_config_types
    from pecli.models.group_schemes import check_group_schemes

    check_config_types(data, source)  # each key of the kind transformers' classes hold it to, before it is read
    data = with_class_defaults(data)
    vision = data.get("vision_config") if isinstance(data.get("vision_config"), dict) else {}
    top_type = data.get("model_type")
    text = text_part(data)
    keys = Keys(text, source)
    text_type = text.get("model_type")
    family = family_of(text_type, keys) or family_of(top_type, keys)
    if family is not None and family.normalise is not None:
        family.normalise(keys)
    model_type = top_type if isinstance(top_type, str) else text_type
    warnings: list[str] = []
    if family is None:
        for kind in (text_type, top_type):
            if kind in REFUSED:
                raise ConfigError("hf_config", f"{source} (model_type {kind}): {REFUSED[kind]}")
        if not any(keys.has(key) for key in ROPE_KEYS):
            raise ConfigError("hf_config", f"{source} (model_type {model_type or 'unknown'}) is not in pecli's model "
                              "table and has no RoPE settings: no rope_theta, rope_scaling or rope_parameters")
        family = GENERIC
    if family.groups is not None:
        groups = family.groups(keys, family)
    else:
        block = keys.data.get("rope_parameters") or keys.data.get("rope_scaling")
        if isinstance(block, dict) and block.get("mrope_section") is not None and scheme != "rope":
            keys.get("rope_parameters", "rope_scaling")
            groups = [whole_model("all", mrope_options(keys, family, block, vision, model_type), keys)]
        else:
            groups = per_layer_rope(keys, family)
    for key in family.ignores:
        if keys.has(key) and key not in keys.from_class:
            keys.get(key)
            keys.warn(f"{key} {excerpt(keys.data[key])} is in the config, and the model's code in transformers does not "
                      "read it: neither does pecli")
    check_group_schemes(groups, source)  # the options each scheme refuses, before anything reads them
    softmax = softmax_scale(keys.data, text_type or model_type)
    rules = [group_attention(keys, family, text_type or model_type, group) for group in groups]
    groups = [group.replaced(attention_scale=rule.model_scale, attention_rule=rule, window=group_window(keys, group),
                             softmax=softmax) for group, rule in zip(groups, rules)]
    refuse_unread(keys, groups, model_type)
    if family is GENERIC:
        used = ", ".join(dict.fromkeys(k for g in groups for k in g.keys_read)) or "none"
        warnings.append(f"model_type {model_type or 'unknown'} is not in pecli's model table; read the generic keys: {used}")
    stacks = sum(len(group.layers) for group in groups) > len({layer for group in groups for layer in group.layers})
    count = None if stacks else num_layers(keys)  # an encoder and a decoder: no one count of layers
    record = record_of(text.get("model_type")) or record_of(model_type)
    defaults = f"{record['class']} ({versions()})" if record is not None else ""
    return PositionPlan(source, model_type, family.name, count, tuple(groups), tuple(warnings + keys.warnings), defaults)
