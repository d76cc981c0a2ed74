"""Presets: the conventions of the libraries people build with, each a set of scheme options.

``--preset mae`` (YAML ``preset: mae``) expands to the options that reproduce MAE's 2-D sin-cos table;
options given alongside it win (``--preset mae --grid 16x16``), as options on the command line win
over a ``--config`` file. Each record names the library function it reproduces; tests/test_conventions.py
recomputes that function's formula in NumPy and compares.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from pecli.errors import ConfigError
from pecli.params import Parameter


@dataclass(frozen=True)
class Preset:
    """A library's convention: the options that give its numbers.

    Attributes
    ----------
    name:
        What ``--preset`` takes.
    source:
        The library function reproduced, with the sizes of its most common call.
    options:
        The options it expands to (YAML keys), the scheme among them.
    """

    name: str
    source: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """``sinusoidal-nd, dim 768, grid 14x14, …``: the options as ``--help`` lists them."""
        parts = [str(self.options["scheme"])]
        for key, value in self.options.items():
            if key != "scheme":
                shown = "x".join(map(str, value)) if isinstance(value, (list, tuple)) else value
                parts.append(f"{key.replace('_', '-')} {shown}")
        return ", ".join(parts)


#: Every preset, by name.
PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in (
        Preset("mae", "MAE get_2d_sincos_pos_embed(768, 14, cls_token=True) (He et al. 2022, util/pos_embed.py)", {
            "scheme": "sinusoidal-nd", "dim": 768, "grid": [14, 14], "combine": "concat", "layout": "half",
            "indexing": "xy", "prefix_tokens": 1,
        }),
        Preset("timm-sincos", "timm build_sincos2d_pos_embed([14, 14], dim=768), its defaults (layers/pos_embed_sincos.py)", {
            "scheme": "sinusoidal-nd", "dim": 768, "grid": [14, 14], "combine": "concat", "layout": "split",
            "indexing": "ij",
        }),
        Preset("eva02", "EVA-02's rotary table: timm RotaryEmbeddingCat(64, in_pixels=False, feat_shape=[16, 16]) "
               "of ViT-B/14 at 224, applied after the cls token (models/eva.py)", {
            "scheme": "rope-nd", "dim": 64, "grid": [16, 16], "layout": "interleaved", "indexing": "ij",
            "prefix_tokens": 1,
        }),
    )
}

#: The ``preset`` key: every command that builds a scheme takes it.
PRESET_SETTING = Parameter(
    "preset", str, None,
    "a library's convention, expanded to its options (options given with it win): "
    + "; ".join(f"{preset.name} = {preset.summary()}" for preset in PRESETS.values()),
    choices=tuple(PRESETS), group="Configuration",
)


def expand_preset(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with its ``preset`` replaced by the preset's options, under those given.

    Raises
    ------
    ConfigError
        An unknown preset, or a ``scheme`` other than the preset's.
    """
    options = dict(options)
    name = options.pop("preset", None)
    if name is None:
        return options
    preset = PRESETS[PRESET_SETTING.coerce(name)]
    scheme = options.get("scheme")
    if scheme is not None and scheme != preset.options["scheme"]:
        raise ConfigError("preset", f"{preset.name} is a {preset.options['scheme']} convention; scheme {scheme!r} "
                          "contradicts it (leave --scheme out)")
    return {**preset.options, **options}


__all__ = ["PRESETS", "PRESET_SETTING", "Preset", "expand_preset"]
