"""One difference between two position plans, and the key names that say each setting on either side."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pecli.models.plan import LayerGroup

#: Relative tolerance on frequencies and factors: float32 storage (rope_freqs, llama.cpp's 1/factor) is well inside it.
RELATIVE = 1e-6

#: Key names, most specific first, that say each setting (GGUF keys end with these after ``{arch}.``).
BASE_KEYS = ("rope.freq_base_swa", "rope_local_base_freq", "local_rope_theta", "global_rope_theta", "rope.freq_base",
             "rope_theta", "rotary_emb_base", "rope_parameters", "--rope-freq-base")
SCALING_KEYS = re.compile(r"rope_freqs|rope_factors|rope\.scaling\.(type|factor|original|yarn_ext|yarn_beta)|"
                          r"scale_linear|^rope_scaling|^rope_parameters|^--rope-scal|^--yarn|^--rope-freq-scale")
ATTENTION_KEYS = re.compile(r"attn_factor|yarn_log_multiplier|rope\.scaling\.type|^rope_scaling|^rope_parameters|^--yarn-attn")
DIM_KEYS = ("rope.dimension_count", "partial_rotary_factor", "rotary_pct", "rotary_dim", "qk_rope_head_dim", "head_dim",
            "attention.key_length", "hidden_size", "embedding_length")
CONTEXT_KEYS = ("context_length", "max_position_embeddings", "n_positions", "--ctx-size", "--max-model-len")
LAYOUT_KEYS = ("general.architecture", "model_type")
#: A HF config's keys for the base and for the scaling block, most specific first: what a difference
#: blamed on a GGUF key or an engine flag names on the model's side (:func:`model_key`).
HF_BASE_KEYS = ("rope_theta", "rotary_emb_base", "rope_parameters")
HF_SCALING_KEYS = ("rope_scaling", "rope_parameters")


@dataclass(frozen=True)
class Difference:
    """One setting on which the two plans give different numbers, for some layers."""

    what: str
    layers: str
    candidate_key: str
    reference_key: str
    candidate_value: Any
    reference_value: Any
    effect: str

    def to_dict(self, candidate: str, reference: str) -> dict[str, Any]:
        return {f"{candidate}_key": self.candidate_key, f"{reference}_key": self.reference_key,
                f"{candidate}_value": self.candidate_value, f"{reference}_value": self.reference_value,
                "effect": self.effect, "what": self.what, "layers": self.layers}


def model_key(group: LayerGroup | None, names: tuple[str, ...]) -> str:
    """The first of ``names`` the model's group read (:func:`_key`), else the first of them."""
    return (_key(group, names) if group is not None else None) or names[0]


def _key(group: LayerGroup, names: tuple[str, ...]) -> str | None:
    """The first of ``names`` (a GGUF key ends with it) among the keys the group read or defaulted."""
    seen = list(group.keys_read) + [k.split("=")[0] for k in group.keys_defaulted]
    for name in names:
        for key in seen:
            if key == name or key.endswith("." + name):
                return key
    return None
