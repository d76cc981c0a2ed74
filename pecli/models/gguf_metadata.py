"""What pecli reads a GGUF file's position settings with: how llama.cpp runs each architecture
(:class:`Arch`), and the file's metadata read through one door (:class:`Metadata`) that remembers the keys it
read and the ones it defaulted, and checks each key's type as llama.cpp's loader does."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from pecli.errors import ConfigError

@dataclass(frozen=True)
class Arch:
    """How llama.cpp runs one ``general.architecture``.

    Attributes
    ----------
    model_type : str
        The HF ``model_type`` the converter reads (for messages).
    rope : str
        ``norm`` (adjacent pairs), ``neox`` (pairs half a head apart) or ``alibi``.
    permuted : bool
        The converter permutes the q/k rows (``LlamaModel.permute``): adjacent pairs in llama.cpp are HF's halves.
    swa_every : int
        ``set_swa_pattern(n)``: layer i slides when ``i % n < n − 1`` (0: no sliding layers of their own RoPE).
    swa_base : float or None
        The sliding layers' base when ``rope.freq_base_swa`` is not written (Gemma 3: llama-hparams.h's
        ``rope_freq_base_train_swa`` default, 10,000); None: the model's base.
    swa_unscaled : bool
        The sliding layers keep frequency scale 1 (``rope_freq_scale_train_swa`` left at its default, Gemma 3,
        or set to 1, OLMo 2); False: the model's scale (Gemma 2, Cohere 2, gpt-oss, Llama 4 copy it).
    swa_needs_window : bool
        Sliding layers only when ``attention.sliding_window`` is above 0 (Gemma 3's and OLMo 2's
        ``load_arch_hparams``); False: always (Gemma 2 defaults its window to 4,096).
    yarn_keys : tuple of str
        The ``rope.scaling.yarn_*`` keys the architecture's ``load_arch_hparams`` reads (DeepSeek 2: its log
        multiplier, divided by 0.1); the others keep llama-hparams.h's defaults (ext_factor unset, attention
        factor 1, β 32 and 1) whatever the file says.
    fixed_alibi_bias : float or None
        An ALiBi maximum bias llama.cpp sets whatever the file says (BLOOM: 8).
    nope_every : int
        ``hparams.n_no_rope_layer_step``: layer i applies no RoPE when ``(i + 1) % n == 0`` (SmolLM3: 4,
        set in its ``load_hparams``, read from no key; its graph's ``use_rope``); 0: every layer rotates.
    rope_on_sliding_only : bool
        The graph rotates q and k in its sliding-window layers only (Cohere 2's ``build_cohere2``: ``if
        (is_swa)`` around ``ggml_rope_ext``); its full-attention layers apply no position signal.
    whole_head : bool
        ``rope.dimension_count`` must be the head's width: the loader refuses any other ("invalid n_rot", Llama and
        Falcon, llama-model.cpp ``load_hparams``).
    window_zero_disables : bool
        ``attention.sliding_window`` 0 turns the windows off and sets ``n_no_rope_layer_step`` to the layer
        count (Llama 4's ``load_hparams``; its graph, ``llm_build_llama_iswa``, then skips RoPE on the last
        layer only, ``(il + 1) % n_layer == 0``).
    nope_temperature : tuple of float or None
        ``(attn_scale, floor_scale)`` of the temperature the graph puts on the queries of its NoPE layers,
        1 + attn_scale·ln(1 + ⌊(p + 1) / floor_scale⌋), set in code whatever the file says (Llama 4:
        0.1, 8,192 and offset 1 in ``load_arch_hparams``, src/models/llama4.cpp:15-17; the queries times
        ``inp_attn_scale``, llama4.cpp:120-121, 173-174; the values of ``llm_graph_input_attn_temp::set_input``,
        llama-graph.cpp:157-173). With ``attention.sliding_window`` 0 the three stay 0, and ``set_input``
        aborts on ``GGML_ASSERT(f_attn_temp_scale != 0.0f)`` (measured).
    """

    model_type: str
    rope: str
    permuted: bool = False
    swa_every: int = 0
    swa_base: float | None = None
    swa_unscaled: bool = False
    swa_needs_window: bool = False
    yarn_keys: tuple[str, ...] = ()
    fixed_alibi_bias: float | None = None
    nope_every: int = 0
    rope_on_sliding_only: bool = False
    window_zero_disables: bool = False
    whole_head: bool = False
    nope_temperature: tuple[float, float] | None = None

    @property
    def layout(self) -> str:
        return "half" if self.rope == "neox" or self.permuted else "interleaved"

    def note(self) -> str:
        if self.rope == "neox":
            return "llama.cpp rotates pairs (i, i + d/2) (NEOX), as HF's rotate_half"
        if self.permuted:
            return ("llama.cpp rotates adjacent pairs (NORM) of q/k rows the converter permuted: in the original "
                    "checkpoint's frame, shown here, that is HF's rotate_half over halves")
        return "llama.cpp rotates adjacent pairs (2i, 2i+1) (NORM) of weights the converter left in place"


#: The GGUF value type llama.cpp's loader requires of each kind of key (``llama-model-loader.cpp``,
#: ``GGUFMeta::GKV<T>::get_kv``: a key of another type is refused, "key … has wrong type … but expected
#: type …"): its ``float`` hparams are FLOAT32, its ``uint32_t`` ones UINT32, its strings STRING.
EXPECTED_TYPES = {"number": "FLOAT32", "count": "UINT32", "word": "STRING"}


class Metadata:
    """The file's metadata, read through one door that remembers which keys were read and which defaulted.

    ``types`` holds each key's GGUF value type (``FLOAT32``, ``BOOL``, ``ARRAY``…) when the values come from
    a file; a key of the wrong type is refused as llama.cpp's loader refuses it. Without ``types`` (values
    given as a mapping) a bool or a string where a number belongs is refused the same way.
    """

    def __init__(self, values: dict[str, Any], tensors: dict[str, np.ndarray], source: str, arch: str,
                 types: dict[str, str] | None = None) -> None:
        self.values, self.tensors, self.source, self.arch = values, tensors, source, arch
        self.types = types
        self.read: list[str] = []
        self.defaulted: list[str] = []

    def key(self, suffix: str) -> str:
        return f"{self.arch}.{suffix}"

    def get(self, suffix: str, default: Any = None, *, note_default: bool = True, kind: str | None = None) -> Any:
        name = self.key(suffix)
        if name in self.values:
            self.read.append(name)
            if kind is not None:
                self._check_type(name, kind)
            return self.values[name]
        if note_default and default is not None:
            self.defaulted.append(f"{name}={default:g}" if isinstance(default, float) else f"{name}={default}")
        return default

    def _check_type(self, name: str, kind: str) -> None:
        expected, value = EXPECTED_TYPES[kind], self.values[name]
        if self.types is not None:
            found = self.types.get(name, expected)
        else:  # a mapping's values: only what is plainly of another kind
            found = ("BOOL" if isinstance(value, bool) else "STRING" if isinstance(value, str) else
                     "ARRAY" if isinstance(value, (list, tuple)) else expected if kind != "word" else "a number")
        if found == expected:
            return
        if found == "ARRAY" and kind != "word":
            raise ConfigError("gguf", f"{name} in {self.source} must be a single number, got an array ({_excerpt(value)})")
        raise ConfigError("gguf", f"{name} in {self.source} has type {found} ({_excerpt(value)}); llama.cpp's loader "
                          f"refuses the file (it reads this key as {expected} only)")

    def number(self, suffix: str, default: float | None = None, *, note_default: bool = True) -> float | None:
        return self._number(suffix, default, note_default, "number")

    def positive(self, suffix: str, default: float | None = None) -> float | None:
        """A number above 0 (a base: 0 or below gives llama.cpp infinite or undefined frequencies)."""
        value = self.number(suffix, default)
        if value is not None and value <= 0:
            raise ConfigError("gguf", f"{self.key(suffix)} in {self.source} must be above 0, got {value:g}")
        return value

    def word(self, suffix: str, default: str | None = None) -> str | None:
        value = self.get(suffix, default, kind="word")
        return None if value is None else str(value)

    def _number(self, suffix: str, default: float | None, note_default: bool, kind: str) -> float | None:
        value = self.get(suffix, default, note_default=note_default, kind=kind)
        if value is None:
            return None
        if isinstance(value, (list, str, bytes, bool)) or not math.isfinite(float(value)):
            raise ConfigError("gguf", f"{self.key(suffix)} in {self.source} must be a finite number, got {_excerpt(value)}")
        return float(value)

    def count(self, suffix: str, default: int | None = None) -> int | None:
        value = self._number(suffix, None if default is None else float(default), True, "count")
        if value is None:
            return None
        if value < 1 or not value.is_integer():
            raise ConfigError("gguf", f"{self.key(suffix)} in {self.source} must be a positive integer, got {value:g}")
        return int(value)

    def tensor(self, name: str) -> np.ndarray | None:
        found = self.tensors.get(name)
        if found is not None:
            self.read.append(f"{name} (tensor)")
        return found


def _excerpt(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "…"


__all__ = ["Arch", "EXPECTED_TYPES", "Metadata"]
