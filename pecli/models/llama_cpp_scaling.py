"""llama.cpp's words for RoPE scaling types, and what llama.cpp and its converter do with each type.

llama.cpp names a scaling type in two places: a GGUF file's ``{arch}.rope.scaling.type``
(``LLAMA_ROPE_SCALING_TYPES`` in ``src/llama-model.cpp``: none, linear, yarn, longrope; a file without the
key reads as linear) and the ``--rope-scaling`` flag (``common/arg.cpp``: none, linear, yarn). The type it
runs decides two things (``llama_context``'s constructor): ``none`` forces the frequency scale to 1, and an
unset ext_factor is 1 for ``yarn`` (its ramp), else 0. ``convert_hf_to_gguf.py`` writes a HF type as that
word and its factor (linear, yarn — yarn with its original length, β and extrapolation factor), as per-pair
divisors in ``rope_freqs`` (llama3), as the short and long factor tensors (longrope), or not at all (no
scaling, dynamic NTK: llama.cpp has no dynamic type).

Each entry is keyed by pecli's record of the type (:mod:`pecli.schemes.scaling`): the rest of the llama.cpp
modules ask an entry (:func:`of_word` for llama.cpp's words, :func:`of_hf` for a HF block's type), never a name.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from pecli.errors import ConfigError
from pecli.schemes.scaling.linear import LINEAR
from pecli.schemes.scaling.llama3 import LLAMA3
from pecli.schemes.scaling.longrope import LONGROPE
from pecli.schemes.scaling.ntk import DYNAMIC
from pecli.schemes.scaling.record import ScalingType
from pecli.schemes.scaling.registry import find_scaling
from pecli.schemes.scaling.unscaled import NO_SCALING
from pecli.schemes.scaling.yarn import YARN


class Converted(Enum):
    """What ``convert_hf_to_gguf.py`` writes for a HF scaling type (``TextModel.set_gguf_parameters``)."""

    #: No ``rope.scaling.type`` (llama.cpp reads linear, scale 1).
    NOTHING = "nothing"
    #: The type's llama.cpp word and its factor (and YaRN's keys), when the block gives a factor.
    TYPE = "type and factor"
    #: Per-pair divisors θ_i / θ'_i in the ``rope_freqs`` tensor (``LlamaModel.generate_extra_tensors``).
    DIVISORS = "rope_freqs"
    #: The short and long factors in ``rope_factors_short``/``rope_factors_long`` (``Phi3MiniModel``).
    FACTOR_TENSORS = "rope_factors_short, rope_factors_long"

    @property
    def tensors(self) -> tuple[str, ...]:
        """The GGUF tensors the converter writes (none: it writes keys only, or nothing)."""
        return tuple(self.value.split(", ")) if self in (Converted.DIVISORS, Converted.FACTOR_TENSORS) else ()


@dataclass(frozen=True)
class LlamaCppScaling:
    """What llama.cpp calls one scaling type and does with it.

    Attributes
    ----------
    record : ScalingType
        pecli's record of the type.
    word : str or None
        llama.cpp's name for it (``rope.scaling.type``, ``--rope-scaling``); None where llama.cpp has none.
    flag : bool
        Whether ``--rope-scaling`` takes the word.
    ramps : bool
        Whether llama.cpp runs it along YaRN's ramp: an unset ext_factor is 1, and the converter writes its
        original length, β and extrapolation factor.
    converted : Converted
        What the converter writes for a HF block of the type.
    """

    record: ScalingType
    word: str | None
    converted: Converted
    flag: bool = False
    ramps: bool = False

    @property
    def scales(self) -> bool:
        """Whether the type changes the frequencies (``none``: llama.cpp forces the scale to 1)."""
        return self.record.scales


#: Every scaling type llama.cpp or its converter knows, in llama.cpp's order (``llama_rope_scaling_type``).
LLAMA_CPP_SCALINGS = (
    LlamaCppScaling(NO_SCALING, "none", Converted.NOTHING, flag=True),
    LlamaCppScaling(LINEAR, "linear", Converted.TYPE, flag=True),
    LlamaCppScaling(YARN, "yarn", Converted.TYPE, flag=True, ramps=True),
    LlamaCppScaling(LONGROPE, "longrope", Converted.FACTOR_TENSORS),
    LlamaCppScaling(DYNAMIC, None, Converted.NOTHING),
    LlamaCppScaling(LLAMA3, None, Converted.DIVISORS),
)

#: The words a GGUF file's ``rope.scaling.type`` may hold.
GGUF_WORDS = tuple(entry.word for entry in LLAMA_CPP_SCALINGS if entry.word)
#: The words ``--rope-scaling`` takes.
FLAG_WORDS = tuple(entry.word for entry in LLAMA_CPP_SCALINGS if entry.flag)
#: The type llama.cpp's loader reads where a file has no ``rope.scaling.type`` (``load_hparams``).
UNWRITTEN = LINEAR


def word_of(record: ScalingType) -> str:
    """llama.cpp's word for ``record``'s type (one it has a word for)."""
    return next(entry.word for entry in LLAMA_CPP_SCALINGS if entry.record is record and entry.word)


def of_word(word: object) -> LlamaCppScaling | None:
    """The entry of llama.cpp's word ``word`` (a file's ``rope.scaling.type``, a ``--rope-scaling`` value), None
    for a word llama.cpp does not know."""
    return next((entry for entry in LLAMA_CPP_SCALINGS if entry.word is not None and entry.word == word), None)


def file_scaling(word: object, key: str, source: str) -> LlamaCppScaling:
    """The entry of a file's ``rope.scaling.type`` ``word`` (its full ``key`` in ``source``); ConfigError (key
    ``gguf``) for a word llama.cpp does not know."""
    entry = of_word(word)
    if entry is None:
        raise ConfigError("gguf", f"{key} is {word!r} in {source}; llama.cpp knows {', '.join(GGUF_WORDS)}")
    return entry


def written_as(tensor: str) -> LlamaCppScaling | None:
    """The entry whose HF blocks the converter writes as the GGUF tensor ``tensor`` (``rope_freqs``: llama3),
    None for a tensor it writes for none."""
    return next((entry for entry in LLAMA_CPP_SCALINGS if tensor in entry.converted.tensors), None)


def of_hf(rope_type: object) -> LlamaCppScaling | None:
    """The entry of a HF block's type (as :func:`~pecli.schemes.scaling.rope_type.hf_rope_type` reads it, HF's
    aliases taken: ``default``, legacy ``su``), None for a type the converter does not know (pecli's static ntk)."""
    record = find_scaling(rope_type)
    return next((entry for entry in LLAMA_CPP_SCALINGS if entry.record is record), None)


__all__ = ["Converted", "FLAG_WORDS", "GGUF_WORDS", "LLAMA_CPP_SCALINGS", "LlamaCppScaling", "UNWRITTEN", "file_scaling", "of_hf",
           "of_word", "word_of", "written_as"]
