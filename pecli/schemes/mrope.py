"""Multimodal RoPE (M-RoPE) of Qwen2-VL, Qwen2.5-VL and Qwen3-VL: text, image and video tokens in one
sequence, each position a (temporal, height, width) triple ([Common-PE]: "the direct extension in
multimodal large models")."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from pecli.errors import ConfigError
from pecli.params import param
from pecli.schemes.axial import AxialRotaryScheme
from pecli.schemes.base import MAX_WIDTH
from pecli.schemes.frequencies import check_float32_base, geometric_inv_freq
# pecli.schemes.multimodal (the sequence's blocks and their ids) is imported where a sequence is read: every
# command's options are made from this class, most runs never build an M-RoPE scheme, and start-up counts.

#: The example sequence of a scheme given none: a few text tokens around an 8 × 12-patch image.
DEFAULT_SEQUENCE = "text:3,image:1x8x12,text:2"
AXES = ("t", "h", "w")


@dataclass(frozen=True)
class MRopeScheme(AxialRotaryScheme):
    """RoPE whose frequency pairs are split between the temporal, height and width ids of each token.

    Notes
    -----
    ``θ_i = base^(−2i/d)`` for i = 0 … d/2 − 1 as in 1-D RoPE; each token has three ids (t, h, w)
    (:func:`pecli.schemes.multimodal.position_ids`: text tokens (p, p, p), image and video patches
    their merged-grid cell offset by the block's start). ``mrope_section = [s_t, s_h, s_w]``
    (Σ = d/2) says which id turns each pair, as HuggingFace's ``apply_multimodal_rotary_pos_emb``:

    - contiguous (Qwen2-VL, Qwen2.5-VL): pairs 0 … s_t − 1 take t, the next s_h take h, the last s_w
      take w (for [16, 24, 24]: 0–15 t, 16–39 h, 40–63 w), the halves of ``cos``/``sin`` alike;
    - ``mrope_interleaved`` (Qwen3-VL, ``apply_interleaved_mrope``): pair i takes h when i ≡ 1 (mod 3)
      and i < 3 s_h, w when i ≡ 2 (mod 3) and i < 3 s_w, and t otherwise.

    Pairs sit at components (i, i + d/2) (``rotate_half``). A text-only sequence is 1-D RoPE exactly.
    ``temporal="time"`` numbers a video's frame groups by ``second_per_grid_t × tokens_per_second``
    (Qwen2.5-VL) instead of 0, 1, 2, … (Qwen2-VL).

    References
    ----------
    Wang et al., "Qwen2-VL: Enhancing Vision-Language Model's Perception of the World at Any
    Resolution", 2024; HuggingFace transformers, ``Qwen2VLModel.get_rope_index``.
    """

    name: ClassVar[str] = "mrope"
    summary: ClassVar[str] = "multimodal RoPE (Qwen2-VL): pairs split between temporal, height and width ids"
    position_rank: ClassVar[int] = 3
    layout: ClassVar[str] = "half"
    aliases: ClassVar[dict[str, str]] = {"rope_theta": "base", "head_dim": "dim"}

    dim: int = param(128, "head dimension (even)", minimum=2, maximum=MAX_WIDTH)
    base: float = param(1000000.0, "base of the frequencies (rope_theta; Qwen2-VL: 1e6)", exclusive_minimum=0)
    mrope_section: tuple[int, ...] | None = param(
        None, "frequency pairs per id: t,h,w (sum dim/2)", minimum=0,
        default_text="the models' split: 16,24,24 at dim 128 (Qwen2-VL), interleaved 24,20,20 (Qwen3-VL)",
    )
    mrope_interleaved: bool = param(False, "pairs cycle t, h, w (Qwen3-VL) instead of taking contiguous sections")
    sequence: Any = param(
        DEFAULT_SEQUENCE, "the tokens: text:N, image:TxHxW, video:TxHxW blocks, comma-separated (YAML: a list)",
        default_text="3 text tokens, a 1x8x12 image, 2 text tokens",
    )
    spatial_merge_size: int = param(2, "patches merged per token along h and w", minimum=1)
    temporal: str = param(
        "index", "video frame groups' t ids: index (Qwen2-VL) or time (Qwen2.5-VL)", choices=("index", "time"),
    )
    second_per_grid_t: float = param(1.0, "time: seconds per frame group of a video", exclusive_minimum=0)
    tokens_per_second: float = param(2.0, "time: temporal ids per second of video", exclusive_minimum=0)

    def __post_init__(self) -> None:
        from pecli.schemes import multimodal

        self._require_even("dim", self.dim)
        check_float32_base(self.base)
        object.__setattr__(self, "sequence", multimodal.parse_sequence(self.sequence, merge=self.spatial_merge_size))
        if self.mrope_section is None:
            object.__setattr__(self, "mrope_section", default_sections(self.dim // 2, self.mrope_interleaved))
        sections = self.mrope_section
        if len(sections) != 3:
            raise ConfigError("mrope_section", f"needs 3 numbers (t, h, w), got {list(sections)}")
        if sum(sections) != self.dim // 2:
            raise ConfigError(
                "mrope_section", f"{list(sections)} sums to {sum(sections)}; the sections must sum to dim/2 = {self.dim // 2}"
            )
        if self.mrope_interleaved:
            counts = np.bincount(self.pair_axis, minlength=3).tolist()
            if counts != list(sections):
                raise ConfigError(
                    "mrope_section", f"interleaved, {list(sections)} gives t, h, w {counts} pairs: h and w take "
                    f"every third pair below 3·s, so 3·s_h and 3·s_w must fit in dim/2 = {self.dim // 2}",
                )
        multimodal.check_sequence(self.sequence, self.spatial_merge_size)

    def params(self) -> dict[str, Any]:
        from pecli.schemes import multimodal

        out = super().params()
        out["sequence"] = multimodal.format_sequence(self.sequence)
        return out

    @property
    def axis_names(self) -> tuple[str, ...]:
        return AXES

    @property
    def inv_freq(self) -> np.ndarray:
        return geometric_inv_freq(self.dim, self.base)

    @property
    def pair_axis(self) -> np.ndarray:
        return mrope_pair_axis(self.mrope_section, self.mrope_interleaved)

    @property
    def _rule(self) -> dict[str, Any]:
        return {
            "merge": self.spatial_merge_size, "temporal": self.temporal, "second_per_grid_t": self.second_per_grid_t,
            "tokens_per_second": self.tokens_per_second,
        }

    @cached_property
    def _cells(self) -> np.ndarray:
        from pecli.schemes import multimodal

        ids = multimodal.position_ids(self.sequence, **self._rule)
        ids.setflags(write=False)
        return ids

    @property
    def cell_count(self) -> int:
        from pecli.schemes import multimodal

        return multimodal.token_count(self.sequence, self.spatial_merge_size)

    def axis_spans(self) -> np.ndarray:
        from pecli.schemes import multimodal

        return multimodal.last_ids(self.sequence, **self._rule) + 1

    def cells(self) -> np.ndarray:
        return self._cells

    def cells_text(self) -> str:
        from pecli.schemes import multimodal

        return f"the sequence {multimodal.format_sequence(self.sequence)}"


def default_sections(pairs: int, interleaved: bool = False) -> tuple[int, int, int]:
    """The sections of the models, in their proportions for any number of pairs.

    Contiguous, Qwen2-VL's: a quarter for t, the rest halved between h and w (h takes the odd one):
    64 pairs → (16, 24, 24), 8 → (2, 3, 3). Interleaved, Qwen3-VL's: 5/16 each for h and w, the rest
    for t: 64 → (24, 20, 20).
    """
    if interleaved:
        h = 5 * pairs // 16
        return pairs - 2 * h, h, h
    t = pairs // 4
    h = (pairs - t + 1) // 2
    return t, h, pairs - t - h


def mrope_pair_axis(section: tuple[int, ...], interleaved: bool = False) -> np.ndarray:
    """The id (0: t, 1: h, 2: w) each frequency pair takes, for ``mrope_section`` ``section``.

    Contiguous: ``[0]*s_t + [1]*s_h + [2]*s_w`` (Qwen2-VL's split of ``cos`` by sections). Interleaved
    (Qwen3-VL's ``apply_interleaved_mrope``): t everywhere, then h at pairs 1, 4, 7, … below 3 s_h and w
    at pairs 2, 5, 8, … below 3 s_w.
    """
    section = tuple(int(s) for s in section)
    if not interleaved:
        return np.repeat(np.arange(3, dtype=np.int64), section)
    axis = np.zeros(sum(section), dtype=np.int64)
    for which in (1, 2):
        axis[which : 3 * section[which] : 3] = which
    return axis
