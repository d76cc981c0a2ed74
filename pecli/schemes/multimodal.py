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
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

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


Block = TextBlock | VisionBlock


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
        items: list[Any] = value.split(",") if value.strip() else []
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        example = "'text:3,image:1x8x12,text:2'"
        raise ConfigError(key, f"expected a list of blocks or a string like {example}, got {excerpt(value)}")
    if not items:
        raise ConfigError(key, "is empty; give at least one block, e.g. 'text:3,image:1x8x12,text:2'")
    blocks = tuple(_parse_block(item, key, number) for number, item in enumerate(items, start=1))
    if merge is not None:
        check_sequence(blocks, merge, key)
    return blocks


def check_sequence(blocks: tuple[Block, ...], merge: int, key: str = "sequence") -> int:
    """Check that every grid of parsed ``blocks`` divides by ``merge``, and the tokens fit :data:`MAX_TOKENS`.

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
                    problem = f"{axis}={size} is not a multiple of spatial_merge_size {merge}"
                    raise ConfigError(key, f"{_label(number, block.kind)}: {problem}")
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
        example = "{text: 3} or {image: {h: 8, w: 12}}"
        raise ConfigError(key, f"{_label(number)}: expected a one-key mapping such as {example}, got {excerpt(item)}")
    ((kind, body),) = item.items()
    kind = _kind(kind, key, number)
    if kind == "text":
        return TextBlock(_size(body, key, _label(number, kind), "tokens"))
    if isinstance(body, str):
        return _vision_from_compact(kind, body.strip(), key, number)
    if not isinstance(body, Mapping):
        example = "{t: …, h: …, w: …}"
        raise ConfigError(key, f"{_label(number, kind)}: expected a mapping {example}, got {excerpt(body)}")
    return _vision_from_mapping(kind, body, key, number)


def _kind(kind: Any, key: str, number: int) -> str:
    if kind not in BLOCK_KINDS:
        raise ConfigError(key, f"{_label(number)}: {_unknown(kind, 'block kind', BLOCK_KINDS)}")
    return kind


def _size(value: Any, key: str, label: str, name: str) -> int:
    """``value`` as a positive integer, or a ConfigError ``KEY: LABEL: NAME must be a positive integer``."""
    if type(value) is int:  # the common case, without coerce's general path
        size = value
    elif isinstance(value, str) and value.strip().isdecimal():
        size = int(value)
    else:
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
        example = "text:3 or image:1x8x12"
        raise ConfigError(key, f"{_label(number)}: expected KIND:SIZE such as {example}, got {excerpt(item)}")
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
    if _well_formed(block):
        return block
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


def _well_formed(block: Block) -> bool:
    """Whether a built block passes every check of parsing (a fast test; failures are then explained)."""
    if isinstance(block, TextBlock):
        return type(block.tokens) is int and block.tokens >= 1
    sizes = (block.t, block.h, block.w)
    if not (block.kind in ("image", "video") and all(type(size) is int and size >= 1 for size in sizes)):
        return False
    interval = block.second_per_grid_t
    return interval is None or (block.kind == "video" and type(interval) is float and 0 < interval < math.inf)


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


class _Layout(NamedTuple):
    """Per block, as arrays: where its rows stop, its first row and first id, its merged grid
    (1 × 1 for text) and, for videos under the time rule, its second_per_grid_t (0 elsewhere)."""

    stops: np.ndarray
    first_rows: np.ndarray
    starts: np.ndarray
    heights: np.ndarray
    widths: np.ndarray
    text: np.ndarray
    intervals: np.ndarray


def _last_temporal_id(groups: int, interval: float, tokens_per_second: float, number: int) -> int:
    """τ of the last of ``groups`` temporal groups: ``groups − 1``, or its time under the time rule."""
    if not interval:
        return groups - 1
    # The float64 product (i · second_per_grid_t) · tokens_per_second, as _fill_rows computes it.
    time = (groups - 1) * interval * tokens_per_second
    if not time < MAX_ID:
        label = _label(number, "video")
        raise ConfigError("sequence", f"{label}: temporal ids reach 2^53; lower second_per_grid_t or tokens_per_second")
    return int(time)


def _layout(
    blocks: tuple[Block, ...], merge: int, temporal: str, second_per_grid_t: float, tokens_per_second: float
) -> _Layout:
    """Lay the blocks out: each starts at the largest id before it + 1."""
    facts = []  # (tokens, start id, merged height, merged width, interval) per block
    start = 0
    for number, block in enumerate(blocks, start=1):
        if isinstance(block, TextBlock):
            facts.append((block.tokens, start, 1, 1, 0.0))
            start += block.tokens
            continue
        timed = temporal == "time" and block.kind == "video"
        interval = (second_per_grid_t if block.second_per_grid_t is None else block.second_per_grid_t) if timed else 0.0
        height, width = block.h // merge, block.w // merge
        facts.append((block.t * height * width, start, height, width, interval))
        start += max(_last_temporal_id(block.t, interval, tokens_per_second, number) + 1, height, width)
        if start >= MAX_ID:
            label = _label(number, block.kind)
            raise ConfigError("sequence", f"{label}: position ids reach 2^53; lower second_per_grid_t")
    counts, starts, heights, widths, intervals = zip(*facts)
    stops = np.cumsum(counts, dtype=np.int64)
    as_ints = [np.asarray(values, dtype=np.int64) for values in (starts, heights, widths)]
    text = np.array([isinstance(block, TextBlock) for block in blocks])
    first_rows = stops - np.asarray(counts, dtype=np.int64)
    return _Layout(stops, first_rows, *as_ints, text, np.asarray(intervals, dtype=np.float64))


#: Rows filled per pass: the temporaries of a pass stay small (a few MB) whatever the length.
CHUNK_ROWS = 2**16


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
    transformers releases have differed in details this rule fixes: some cast ``second_per_grid_t``
    to an integer before the product (so intervals below one second collapsed every temporal id to
    0; the float product is the Qwen team's reference), and for Qwen2.5-VL images some used
    ``τ_i = 0`` and others ``i`` — the same for single-group images (``t = 1``), the only ones the
    image processor makes. The product is computed in float64 here; a float32 product may differ by
    one where ``i · second_per_grid_t · tokens_per_second`` lies within float32 rounding of an integer.

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
    layout = _layout(blocks, merge, temporal, second_per_grid_t, tokens_per_second)
    total = int(layout.stops[-1])
    ids = np.empty((total, 3), dtype=np.int64)
    for first in range(0, total, CHUNK_ROWS):
        stop = min(first + CHUNK_ROWS, total)
        _fill_rows(ids[first:stop], np.arange(first, stop, dtype=np.int64), layout, tokens_per_second)
    return ids


def last_ids(
    blocks: Any, *, merge: int = 2, temporal: str = "index", second_per_grid_t: float = 1.0, tokens_per_second: float = 2,
) -> np.ndarray:
    """The (t, h, w) ids of the last token, computed from the layout alone: each block starts past the
    largest id before it and a block's last token holds its largest id on every component, so these are
    the largest ids of the whole sequence (arguments as :func:`position_ids`)."""
    blocks = parse_sequence(blocks, merge=merge)
    layout = _layout(blocks, merge, temporal, second_per_grid_t, tokens_per_second)
    out = np.empty((1, 3), dtype=np.int64)
    _fill_rows(out, layout.stops[-1:] - 1, layout, tokens_per_second)
    return out[0]


def _fill_rows(out: np.ndarray, rows: np.ndarray, layout: _Layout, tokens_per_second: float) -> None:
    """Write the ids of ``rows`` into ``out``: (s + p) ×3 for text, (s + τ_i, s + j, s + k) for vision."""
    block = np.searchsorted(layout.stops, rows, side="right")
    local = rows - layout.first_rows[block]
    start = layout.starts[block]
    group, grid_column = np.divmod(local, layout.widths[block])
    index, grid_row = np.divmod(group, layout.heights[block])  # a text token is its own group: index = local
    interval = layout.intervals[block]
    timed = interval > 0
    if timed.any():
        index = np.where(timed, (index * interval * tokens_per_second).astype(np.int64), index)
    text = layout.text[block]
    out[:, 0] = start + index
    out[:, 1] = start + np.where(text, local, grid_row)
    out[:, 2] = start + np.where(text, local, grid_column)


__all__ = [
    "BLOCK_KINDS", "MAX_TOKENS", "TEMPORAL_RULES", "Block", "BlockSpan", "TextBlock", "VisionBlock",
    "block_spans", "check_sequence", "format_sequence", "parse_sequence", "position_ids", "token_count",
]
