"""Multimodal sequences (text, images, videos) and their three-component M-RoPE position ids.

A sequence is a tuple of blocks: :class:`TextBlock` (a run of text tokens) and :class:`VisionBlock`
(an image or a video, given by its patch grid ``t × h × w`` *before* the spatial merge). It is written
in YAML as a list of one-key mappings::

    sequence:
      - text: 3
      - image: {t: 1, h: 8, w: 12}      # t defaults to 1 for an image
      - video: {t: 2, h: 8, w: 8, second_per_grid_t: 0.5}
      - text: 2

or on the command line in a compact form: ``text:3,image:1x8x12,video:2x8x8,text:2`` (an image may
be ``HxW``; a video may carry its own interval as ``video:2x8x8@0.5``).

The vision start and end markers of a real prompt (``<|vision_start|>``, ``<|vision_end|>``) are
ordinary text tokens for the position ids: write them as text blocks. The prompt
``<text ×3> <vision_start> <image> <vision_end> <text ×2>`` is ``text:4,image:…,text:3``.

The rule of the ids is the one of Hugging Face transformers' ``Qwen2VLModel.get_rope_index``
(Qwen2-VL) and ``Qwen2_5_VLModel.get_rope_index`` (Qwen2.5-VL); see :func:`position_ids`.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple, Union

import numpy as np

from pecli.errors import ConfigError
from pecli.params import coerce, excerpt

#: The kinds of block a sequence may hold.
BLOCK_KINDS = ("text", "image", "video")
#: The rules for the temporal component of video ids: Qwen2-VL's frame index, Qwen2.5-VL's time.
TEMPORAL_RULES = ("index", "time")
#: Most tokens a sequence may hold (after the spatial merge).
MAX_TOKENS = 2**24
#: Position ids stay below this bound so that every id and every product leading to it is exact.
MAX_ID = 2**53
#: The keys of an image's and of a video's mapping in the YAML form.
IMAGE_KEYS = ("t", "h", "w")
VIDEO_KEYS = ("t", "h", "w", "second_per_grid_t")


@dataclass(frozen=True)
class TextBlock:
    """A run of ``tokens`` text tokens: each gets the same id on the t, h and w components."""

    tokens: int
    kind: ClassVar[str] = "text"


@dataclass(frozen=True)
class VisionBlock:
    """An image or a video given by its patch grid ``t × h × w`` before the spatial merge.

    It holds ``t · (h / merge) · (w / merge)`` tokens. ``second_per_grid_t`` (videos only) is the time
    in seconds between two temporal patches; ``None`` takes the default of :func:`position_ids`.
    """

    kind: str
    t: int
    h: int
    w: int
    second_per_grid_t: float | None = None


Block = Union[TextBlock, VisionBlock]


class BlockSpan(NamedTuple):
    """The rows ``first_row … stop_row − 1`` of a position-id array that belong to one block."""

    kind: str
    first_row: int
    stop_row: int


# ---------------------------------------------------------------------------------------------
# Parsing


def parse_sequence(value: Any, key: str = "sequence", *, merge: int | None = None) -> tuple[Block, ...]:
    """Read a sequence given in the YAML form, the compact form or as blocks; check every block.

    Parameters
    ----------
    value
        A list of one-key mappings (``{"text": 3}``, ``{"image": {"t": 1, "h": 8, "w": 12}}``,
        ``{"video": {"t": 2, "h": 8, "w": 8, "second_per_grid_t": 0.5}}``), a compact string
        (``"text:3,image:1x8x12,video:2x8x8,text:2"``), a list of compact items, or blocks.
    key
        The configuration key that errors name.
    merge
        The spatial merge size. When given, the grids are also checked against it and the total
        number of tokens against :data:`MAX_TOKENS` (see :func:`check_sequence`).

    Returns
    -------
    tuple of TextBlock and VisionBlock

    Raises
    ------
    ConfigError
        One line naming the block at fault: an unknown kind (with a "did you mean"), a size that is
        not a positive integer, a malformed compact item, an empty sequence.
    """
    if isinstance(value, str):
        items: list[Any] = value.split(",")
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        raise ConfigError(key, f"expected a list of blocks or a string like 'text:3,image:1x8x12,text:2', got {excerpt(value)}")
    if not items or items == [""]:
        raise ConfigError(key, "is empty; give at least one block, e.g. 'text:3,image:1x8x12,text:2'")
    blocks = tuple(_parse_block(item, key, number) for number, item in enumerate(items, start=1))
    if merge is not None:
        check_sequence(blocks, merge, key)
    return blocks


def check_sequence(blocks: tuple[Block, ...], merge: int, key: str = "sequence") -> int:
    """Check that every grid of parsed ``blocks`` divides by ``merge`` and the tokens fit :data:`MAX_TOKENS`.

    Returns
    -------
    int
        The number of tokens of the sequence.

    Raises
    ------
    ConfigError
        ``sequence: block 2 (image): h=7 is not a multiple of spatial_merge_size 2``, or too many tokens.
    """
    merge = coerce("spatial_merge_size", merge, int, minimum=1)
    for number, block in enumerate(blocks, start=1):
        if isinstance(block, VisionBlock):
            for axis, size in (("h", block.h), ("w", block.w)):
                if size % merge:
                    raise ConfigError(
                        key, f"{_label(number, block.kind)}: {axis}={size} is not a multiple of spatial_merge_size {merge}"
                    )
    total = sum(_block_tokens(block, merge) for block in blocks)
    if total > MAX_TOKENS:
        raise ConfigError(key, f"holds {total} tokens, more than 2^24 = {MAX_TOKENS}")
    return total


def format_sequence(blocks: tuple[Block, ...]) -> str:
    """The compact form of ``blocks``, which :func:`parse_sequence` reads back to the same blocks."""
    items = []
    for block in blocks:
        if isinstance(block, TextBlock):
            items.append(f"text:{block.tokens}")
            continue
        interval = "" if block.second_per_grid_t is None else f"@{block.second_per_grid_t!r}"
        items.append(f"{block.kind}:{block.t}x{block.h}x{block.w}{interval}")
    return ",".join(items)


def _label(number: int, kind: str | None = None) -> str:
    return f"block {number}" if kind is None else f"block {number} ({kind})"


def _unknown(value: Any, what: str, choices: tuple[str, ...]) -> str:
    """``unknown WHAT 'x' (did you mean y?); must be one of a, b, c``: pecli's choice_error wording."""
    guess = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.6) if isinstance(value, str) else []
    hint = f" (did you mean {guess[0]}?)" if guess else ""
    return f"unknown {what} {excerpt(value)}{hint}; must be one of {', '.join(choices)}"


def _parse_block(item: Any, key: str, number: int) -> Block:
    if isinstance(item, (TextBlock, VisionBlock)):
        return _rebuilt(item, key, number)
    if isinstance(item, str):
        return _parse_compact(item.strip(), key, number)
    if not isinstance(item, Mapping) or len(item) != 1:
        raise ConfigError(
            key, f"{_label(number)}: expected a one-key mapping such as {{text: 3}} or {{image: {{h: 8, w: 12}}}}, got {excerpt(item)}"
        )
    ((kind, body),) = item.items()
    kind = _kind(kind, key, number)
    if kind == "text":
        return TextBlock(_size(body, key, _label(number, kind), "tokens"))
    if isinstance(body, str):
        return _vision_from_compact(kind, body.strip(), key, number)
    if not isinstance(body, Mapping):
        raise ConfigError(key, f"{_label(number, kind)}: expected a mapping {{t: …, h: …, w: …}}, got {excerpt(body)}")
    return _vision_from_mapping(kind, body, key, number)


def _kind(kind: Any, key: str, number: int) -> str:
    if kind not in BLOCK_KINDS:
        raise ConfigError(key, f"{_label(number)}: {_unknown(kind, 'block kind', BLOCK_KINDS)}")
    return kind


def _size(value: Any, key: str, label: str, name: str) -> int:
    """``value`` as a positive integer, or a ConfigError ``KEY: LABEL: NAME must be a positive integer``."""
    try:
        size = coerce(name, value, int)
    except ConfigError:
        size = 0
    if size < 1:
        raise ConfigError(key, f"{label}: {name} must be a positive integer, got {excerpt(value)}")
    return size


def _interval(value: Any, key: str, label: str) -> float:
    try:
        interval = coerce("second_per_grid_t", value, float)
    except ConfigError:
        interval = -1.0
    if not interval > 0:
        raise ConfigError(key, f"{label}: second_per_grid_t must be a positive number, got {excerpt(value)}")
    return interval


def _vision_from_mapping(kind: str, body: Mapping, key: str, number: int) -> VisionBlock:
    label = _label(number, kind)
    allowed = IMAGE_KEYS if kind == "image" else VIDEO_KEYS
    for name in body:
        if name not in allowed:
            raise ConfigError(key, f"{label}: {_unknown(name, 'key', allowed)}")
    missing = [name for name in ("h", "w") if name not in body] + ([] if kind == "image" or "t" in body else ["t"])
    if missing:
        raise ConfigError(key, f"{label}: missing {', '.join(missing)} (the patch grid before merging)")
    interval = body.get("second_per_grid_t")
    return VisionBlock(
        kind,
        _size(body.get("t", 1), key, label, "t"),
        _size(body["h"], key, label, "h"),
        _size(body["w"], key, label, "w"),
        None if interval is None else _interval(interval, key, label),
    )


def _parse_compact(item: str, key: str, number: int) -> Block:
    kind, colon, body = item.partition(":")
    if not colon:
        raise ConfigError(key, f"{_label(number)}: expected KIND:SIZE such as text:3 or image:1x8x12, got {excerpt(item)}")
    kind = _kind(kind.strip(), key, number)
    if kind == "text":
        return TextBlock(_size(body.strip(), key, _label(number, kind), "tokens"))
    return _vision_from_compact(kind, body.strip(), key, number)


def _vision_from_compact(kind: str, body: str, key: str, number: int) -> VisionBlock:
    label = _label(number, kind)
    grid, at, interval = body.partition("@")
    sizes = [size.strip() for size in grid.split("x")]
    shapes = "TxHxW or HxW" if kind == "image" else "TxHxW"
    if len(sizes) not in ((2, 3) if kind == "image" else (3,)):
        raise ConfigError(key, f"{label}: expected a grid {shapes}, got {excerpt(body)}")
    if at and kind == "image":
        raise ConfigError(key, f"{label}: second_per_grid_t (@…) applies to videos only, got {excerpt(body)}")
    if len(sizes) == 2:
        sizes.insert(0, "1")
    t, h, w = (_size(size, key, label, name) for size, name in zip(sizes, "thw"))
    return VisionBlock(kind, t, h, w, _interval(interval.strip(), key, label) if at else None)


def _rebuilt(block: Block, key: str, number: int) -> Block:
    """An already-built block, checked as a parsed one would be."""
    if isinstance(block, TextBlock):
        return TextBlock(_size(block.tokens, key, _label(number, "text"), "tokens"))
    kind = _kind(block.kind, key, number)
    if kind == "text":
        raise ConfigError(key, f"{_label(number)}: a text run is a TextBlock, not a VisionBlock")
    body = {"t": block.t, "h": block.h, "w": block.w}
    if block.second_per_grid_t is not None:
        if kind == "image":
            raise ConfigError(key, f"{_label(number, kind)}: second_per_grid_t applies to videos only")
        body["second_per_grid_t"] = block.second_per_grid_t
    return _vision_from_mapping(kind, body, key, number)


# ---------------------------------------------------------------------------------------------
# Token counts and position ids


def _block_tokens(block: Block, merge: int) -> int:
    if isinstance(block, TextBlock):
        return block.tokens
    return block.t * (block.h // merge) * (block.w // merge)


def token_count(blocks: Any, merge: int) -> int:
    """The number of tokens of a sequence: text runs plus ``t · (h/merge) · (w/merge)`` per image or video.

    ``blocks`` is anything :func:`parse_sequence` reads; the sequence is checked against ``merge``.
    """
    return check_sequence(parse_sequence(blocks), merge)


def block_spans(blocks: Any, merge: int) -> tuple[BlockSpan, ...]:
    """Which rows of :func:`position_ids` belong to which block: ``(kind, first_row, stop_row)`` per block."""
    blocks = parse_sequence(blocks, merge=merge)
    stops = np.cumsum([_block_tokens(block, merge) for block in blocks]).tolist()
    return tuple(BlockSpan(block.kind, stop - _block_tokens(block, merge), stop) for block, stop in zip(blocks, stops))


def _temporal_offsets(block: VisionBlock, label: str, temporal: str, second_per_grid_t: float, tokens_per_second: float) -> np.ndarray:
    """The temporal id of each of the block's ``t`` patch groups, relative to the block's start."""
    index = np.arange(block.t, dtype=np.int64)
    if temporal == "index" or block.kind == "image":
        return index
    interval = second_per_grid_t if block.second_per_grid_t is None else block.second_per_grid_t
    if not (block.t - 1) * interval * tokens_per_second < MAX_ID:  # the same float64 product as below
        raise ConfigError("sequence", f"{label}: temporal ids reach 2^53; lower second_per_grid_t or tokens_per_second")
    # HF: (arange(t) * second_per_grid_t * tokens_per_second).long(): a float product truncated
    # toward zero, i.e. floored, since every factor is >= 0.
    return (index.astype(np.float64) * interval * tokens_per_second).astype(np.int64)


def _plan(blocks: tuple[Block, ...], merge: int, temporal: str, second_per_grid_t: float, tokens_per_second: float) -> tuple:
    """Per block: its token count, its temporal offsets (None for text) and its start id; and the ids used."""
    counts, offsets, starts = [], [], []
    start = 0
    for number, block in enumerate(blocks, start=1):
        starts.append(start)
        counts.append(_block_tokens(block, merge))
        if isinstance(block, TextBlock):
            offsets.append(None)
            start += block.tokens
            continue
        times = _temporal_offsets(block, _label(number, block.kind), temporal, second_per_grid_t, tokens_per_second)
        offsets.append(times)
        start += max(int(times[-1]) + 1, block.h // merge, block.w // merge)
        if start >= MAX_ID:
            raise ConfigError(
                "sequence", f"{_label(number, block.kind)}: position ids reach 2^53; lower second_per_grid_t or tokens_per_second"
            )
    return counts, offsets, starts


def position_ids(
    blocks: Any,
    *,
    merge: int = 2,
    temporal: str = "index",
    second_per_grid_t: float = 1.0,
    tokens_per_second: float = 2,
) -> np.ndarray:
    """M-RoPE position ids of a multimodal sequence: int64 of shape (L, 3), columns (t, h, w).

    The rule of Hugging Face transformers' ``Qwen2VLModel.get_rope_index`` (Qwen2-VL, Wang et al.
    2024) and ``Qwen2_5_VLModel.get_rope_index`` (Qwen2.5-VL, Bai et al. 2025):

    - Blocks are laid out in order. A block starts at ``s = m + 1``, where ``m`` is the largest id of
      the block before it (``s = 0`` for the first block).
    - A text run of ``n`` tokens gets ``(s + p, s + p, s + p)`` for ``p = 0 … n − 1``.
    - An image or a video with patch grid ``t × h × w`` holds the merged grid
      ``t × h' × w'``, ``h' = h / merge``, ``w' = w / merge``; its tokens, in row-major (t, h, w) order,
      get ``(s + τ_i, s + j, s + k)`` for temporal group ``i``, row ``j`` and column ``k``, where

      - ``τ_i = i`` with ``temporal="index"`` (Qwen2-VL), and for images in both rules;
      - ``τ_i = ⌊i · second_per_grid_t · tokens_per_second⌋`` with ``temporal="time"`` (Qwen2.5-VL
        videos): the product is taken in floating point, then truncated (HF's ``.long()``). The
        block's own ``second_per_grid_t`` overrides the default.

      Its largest id is ``s + max(τ_{t−1}, h' − 1, w' − 1)``, so the next block starts at
      ``s + max(τ_{t−1} + 1, h', w')``, not after the image's number of tokens.

    Notes
    -----
    Transformers 4.5x cast ``second_per_grid_t`` to an integer *before* the product, so that
    intervals below one second collapsed every temporal id to 0 (fixed in transformers PR #48669,
    which restored the float product above, the one of the Qwen team's reference code). Releases
    around 4.5x also gave images ``τ_i = 0`` in Qwen2.5-VL instead of ``i``; the two agree for the
    single-group images (``t = 1``) that the image processor produces. The product is computed in
    float64 here; HF's float32 may differ by one where ``i · second_per_grid_t · tokens_per_second``
    lies within float32 rounding of an integer.

    Parameters
    ----------
    blocks
        The sequence, in any form :func:`parse_sequence` reads.
    merge
        ``spatial_merge_size``: image and video grids are merged ``merge × merge`` into one token.
    temporal
        ``"index"`` (Qwen2-VL) or ``"time"`` (Qwen2.5-VL).
    second_per_grid_t
        Seconds between two temporal patch groups of a video, for videos that give none.
    tokens_per_second
        Temporal ids per second of video (``vision_config.tokens_per_second``, 2 in Qwen2.5-VL).

    Returns
    -------
    numpy.ndarray
        int64 of shape (L, 3), L = :func:`token_count`.

    Raises
    ------
    ConfigError
        A bad sequence (see :func:`parse_sequence`, :func:`check_sequence`) or a bad argument.
    """
    merge = coerce("spatial_merge_size", merge, int, minimum=1)
    temporal = coerce("temporal", temporal, str, choices=TEMPORAL_RULES)
    second_per_grid_t = coerce("second_per_grid_t", second_per_grid_t, float, exclusive_minimum=0)
    tokens_per_second = coerce("tokens_per_second", tokens_per_second, float, exclusive_minimum=0)
    blocks = parse_sequence(blocks, merge=merge)
    counts, offsets, starts = _plan(blocks, merge, temporal, second_per_grid_t, tokens_per_second)
    total = sum(counts)
    first_rows = np.cumsum([0, *counts[:-1]])
    # Every row first gets its text id, start + (row − first row of its block); vision rows are then overwritten.
    shift = np.repeat(np.asarray(starts, dtype=np.int64) - first_rows, counts)
    ids = np.empty((total, 3), dtype=np.int64)
    ids[:] = (np.arange(total, dtype=np.int64) + shift)[:, None]
    for block, count, times, start, first in zip(blocks, counts, offsets, starts, first_rows.tolist()):
        if times is not None:
            _fill_grid(ids[first : first + count], times, block.h // merge, block.w // merge, start)
    return ids


def _fill_grid(rows: np.ndarray, times: np.ndarray, height: int, width: int, start: int) -> None:
    """Write ``(start + τ_i, start + j, start + k)`` into ``rows`` in row-major (i, j, k) order."""
    grid = rows.reshape(len(times), height, width, 3)
    grid[..., 0] = (start + times)[:, None, None]
    grid[..., 1] = (start + np.arange(height, dtype=np.int64))[None, :, None]
    grid[..., 2] = (start + np.arange(width, dtype=np.int64))[None, None, :]


__all__ = [
    "BLOCK_KINDS", "MAX_TOKENS", "TEMPORAL_RULES", "Block", "BlockSpan", "TextBlock", "VisionBlock",
    "block_spans", "check_sequence", "format_sequence", "parse_sequence", "position_ids", "token_count",
]
