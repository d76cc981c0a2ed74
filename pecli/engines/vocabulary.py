"""The rope-type words an engine's own code compares, said as pecli's scaling records.

An engine's code holds tables of the ``rope_type`` strings it accepts (vLLM's ``get_rope`` dispatch, the
types mlx-lm's model files check, vLLM's types whose factor its derived length skips). pecli holds each such
table as a :class:`RopeTypes`: the scaling records (:data:`~pecli.schemes.scaling.registry.SCALINGS`) whose
HF spelling (:attr:`~pecli.schemes.scaling.record.ScalingType.hf_name`) the engine's table names, and the
engine's words that name no pecli type (vLLM's ``deepseek_yarn``) or another spelling of one (legacy
``su``), each declared once per engine module in its :class:`Vocabulary` with the engine file and line it
comes from. A config's word is looked up by its HF spelling only, never through pecli's own aliases, as
the engine compares the string.

So a renamed pecli type fails at import (its record's name is gone) or in the vocabulary tests (its HF
spelling no longer the engine's), and an engine word that a new pecli type takes over is refused at
import, rather than a table silently answering otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from pecli.schemes.scaling.record import ScalingType
from pecli.schemes.scaling.registry import SCALINGS


def hf_record(word: Any) -> ScalingType | None:
    """The scaling record whose HF spelling is ``word`` (``default`` is no scaling), None for any other word:
    a config's word as an engine compares it, without pecli's own aliases or pecli names."""
    if not isinstance(word, str):
        return None
    return next((record for record in SCALINGS.values() if record.hf_name == word), None)


@dataclass(frozen=True)
class RopeTypes:
    """The rope types one table of an engine's code names: pecli's records and the engine's own words."""

    records: tuple[ScalingType, ...]
    words: frozenset[str] = frozenset()

    def holds(self, word: Any) -> bool:
        """Whether the engine's table names ``word`` (a config's ``rope_type`` as written)."""
        if isinstance(word, str) and word in self.words:
            return True
        found = hf_record(word)
        return found is not None and any(record is found for record in self.records)

    @property
    def spellings(self) -> frozenset[str]:
        """Every word the table names (the records' HF spellings and the engine's own words)."""
        return frozenset({record.hf_name for record in self.records} | self.words)


@dataclass(frozen=True)
class Vocabulary:
    """An engine's rope-type words that are not pecli's HF spellings: {word: where its code says it}."""

    engine: str
    words: Mapping[str, str]

    def __post_init__(self) -> None:
        taken = sorted(word for word in self.words if hf_record(word) is not None)
        if taken:
            raise RuntimeError(f"{self.engine}'s own rope-type words {taken} are now pecli scaling types: say them "
                               "as records in its tables")

    def types(self, *named: ScalingType | str) -> RopeTypes:
        """The table naming ``named``: records, and words of this vocabulary (another word is refused at import)."""
        words = frozenset(name for name in named if isinstance(name, str))
        unknown = sorted(words - set(self.words))
        if unknown:
            raise RuntimeError(f"{unknown} are neither pecli scaling records nor words of {self.engine}'s vocabulary")
        return RopeTypes(tuple(name for name in named if isinstance(name, ScalingType)), words)


def looked_up(table: tuple[tuple[RopeTypes, Any], ...], word: Any, default: Any = None) -> Any:
    """The value ``table`` ((types, value) pairs, an engine's dispatch on the rope type) gives ``word``."""
    return next((value for types, value in table if types.holds(word)), default)


__all__ = ["RopeTypes", "Vocabulary", "hf_record", "looked_up"]
