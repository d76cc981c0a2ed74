"""A change over a model's layer group — a user's keys, an engine's flags, or its model file computing otherwise
than transformers — applied through the group's scheme, with where each changed setting came from.

A user's key (``--factor 80`` over a model), an engine's flag (llama.cpp's ``--rope-freq-base``) or its code
(vLLM's LongRoPE picking one factor set) changes some settings of a group read from the model. :func:`changed`
is the one way such a change reaches a group: the changes are layered over the group's own settings as its
scheme takes a user's keys (:func:`pecli.schemes.build.layered`: a key replaces the model's, a ``rope_scaling``
block the whole scaling, None returns the setting to its default), the scheme is built from them there (the
group's :attr:`~pecli.models.plan.LayerGroup.encoding`, checked as every scheme is), and each setting they change
is recorded as coming from what changed it (:meth:`~pecli.models.plan.LayerGroup.sources_of`: the user's key, the
engine's flag or its code, and the :class:`~pecli.models.plan.Origin`). The group's options, what plans print, say
the same settings in the model's own keys, in the model's order. :func:`user_changed` is the user's door: the same
change, and the attention's factor recomputed for the new scaling as the model's code computes it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from pecli.models.plan import LayerGroup, Origin, Source, stamped


def changed(group: LayerGroup, changes: Mapping[str, Any], *, by: str | Mapping[str, str], origin: Origin,
            note: str | None = None, dropped: tuple[str, ...] = ()) -> LayerGroup:
    """``group`` with ``changes`` over its settings (see the module).

    Parameters
    ----------
    group : LayerGroup
        A group with position encoding.
    changes : mapping
        Scheme keys as the group's options spell them (``base``, ``rope_scaling``, ``layout``, …); None
        removes the key (its default applies).
    by : str or mapping
        What made the change, as its sources name it (a flag, or the engine's module: ``vLLM: …``); a mapping
        names it per changed setting (the user's key as given).
    origin : Origin
        :attr:`Origin.ENGINE_FLAG` for a flag, :attr:`Origin.MODEL_CODE` for the engine's model file,
        :attr:`Origin.USER` for a user's key.
    note : str or None
        The group's note afterwards (None: kept).
    dropped : tuple of str
        Keys of the group's own removed before the changes apply, so that those the changes set again come
        after the model's (llama.cpp's base and scaling, said anew from what it runs).

    Raises
    ------
    ConfigError
        The scheme's refusal of a changed value, naming its key.
    """
    from pecli.schemes.build import build_scheme, layered

    own = {key: value for key, value in group.options.items() if key != "scheme" and key not in dropped}
    options = changed_options(group, changes, dropped)
    scheme = build_scheme(group.scheme, layered(group.scheme_class, own, changes))
    kept = tuple(source for source in group.sources if source.setting not in changes and source.setting not in dropped)
    made = stamped([Source(setting, by if isinstance(by, str) else by.get(setting, setting), origin)
                    for setting in changes], options)
    result = dataclasses.replace(group, options=options, note=group.note if note is None else note, sources=kept + made)
    result.__dict__["encoding"] = scheme
    return result


def changed_options(group: LayerGroup, changes: Mapping[str, Any], dropped: tuple[str, ...] = ()) -> dict[str, Any]:
    """The options :func:`changed` gives ``group`` (the model's keys in their order, ``dropped`` left out, then
    each change: a key replaced where it is, a new one after them, None removing it), without building its scheme
    (an engine's trials compare them)."""
    options: dict[str, Any] = {key: value for key, value in group.options.items() if key not in dropped}
    for key, value in changes.items():
        if value is None:
            options.pop(key, None)
        else:
            options[key] = value
    return options


def user_changed(group: LayerGroup, changes: Mapping[str, Any], *, by: Mapping[str, str] | None = None,
                 affected: bool = True, whole: bool = False, attention: Mapping[str, Any] | None = None) -> LayerGroup:
    """``group`` under a user's scheme keys (:func:`changed`, origin :attr:`Origin.USER`), its
    :attr:`~pecli.models.plan.LayerGroup.attention_scale` the model's code's for the new scaling (DeepSeek at
    ``--factor 80``: the softmax scale × mscale(80, mscale_all_dim)², as ``DeepseekV3Attention`` computes it).

    A scaling changed where pecli has no :attr:`~pecli.models.plan.LayerGroup.attention_rule` for the group
    leaves the logit scale unknown (:attr:`~pecli.models.plan.LayerGroup.logit_scale_unknown`), unless
    ``affected`` is False (the model's attention applies no factor of its scaling's: not an MLA model, no
    ``llama_4_scaling_beta``). ``whole``: the user gave a scaling block, the whole scaling as in a config file
    (none of the model's block's keys carry over). ``by``: the key the user gave per changed setting (default: the
    setting's name). ``attention``: the user's keys only the attention reads under the new scaling type
    (:func:`~pecli.models.logit_scale.attention_only_changes`: DeepSeek's ``mscale_all_dim`` beside linear), in the
    block the attention's factor is computed from, as a config's block gives them.
    """
    result = changed(group, changes, by=by or {}, origin=Origin.USER) if changes else group
    before, after = _hf_scaling(group), _hf_scaling(result)
    rule = group.attention_rule
    if before == after and not attention and not (whole and rule is not None and rule.config_keys):
        return result
    if attention and after is not None:
        after = {**after, **attention}
    if rule is not None and rule.block == before and rule.model_scale == group.attention_scale:
        unsure = rule.unsure(after, whole)
        if unsure:
            return result.replaced(logit_scale_unknown=unsure)
        return result.replaced(attention_scale=rule.scale(after, whole))
    if not affected and group.attention_scale.is_unit:
        return result
    return result.replaced(logit_scale_unknown="pecli recomputes it for a changed scaling only in a plan read "
                           "from a config.json as is")


def _hf_scaling(group: LayerGroup) -> dict[str, Any] | None:
    """A rotary group's typed scaling in HF's form ({} for none); None for any other group."""
    if not group.rotary:
        return None
    scaling = getattr(group.encoding, "rope_scaling", None)
    return scaling.to_hf() if scaling is not None else {}


__all__ = ["changed", "changed_options", "user_changed"]
