"""M-RoPE position ids of text–image–video sequences (pecli.schemes.multimodal).

Every expected array below is written out by hand from the rule of transformers'
``Qwen2VLModel.get_rope_index`` / ``Qwen2_5_VLModel.get_rope_index``: a text token gets (p, p, p);
a vision block starting at s gets (s + τ_i, s + j, s + k) over its merged grid in row-major order;
the next block starts at the largest id so far + 1. Rows are tokens, columns (t, h, w).
"""

from __future__ import annotations

import numpy as np
import pytest

from pecli.errors import ConfigError
from pecli.schemes import multimodal
from pecli.schemes.multimodal import (
    MAX_TOKENS,
    BlockSpan,
    TextBlock,
    VisionBlock,
    block_spans,
    format_sequence,
    parse_sequence,
    position_ids,
    token_count,
)


def ids(*rows):
    return np.array(rows, dtype=np.int64)


# --- ids worked out by hand -----------------------------------------------------------------


def test_text_image_text():
    # image 1×4×6, merge 2 → merged grid 1×2×3 starting at 3; largest id 3 + 2 = 5, so the text goes on at 6.
    expected = ids(
        (0, 0, 0), (1, 1, 1), (2, 2, 2),
        (3, 3, 3), (3, 3, 4), (3, 3, 5),
        (3, 4, 3), (3, 4, 4), (3, 4, 5),
        (6, 6, 6), (7, 7, 7),
    )
    got = position_ids("text:3,image:1x4x6,text:2", merge=2)
    assert got.dtype == np.int64 and got.shape == (11, 3)
    np.testing.assert_array_equal(got, expected)


def test_text_only_is_the_plain_range_on_every_component():
    np.testing.assert_array_equal(position_ids("text:4"), ids((0, 0, 0), (1, 1, 1), (2, 2, 2), (3, 3, 3)))


# A video of 2 frame groups, 4×4 patches, merge 2 → merged grid 2×2×2, after one text token.
VIDEO = "text:1,video:2x4x4,text:1"
QWEN2_VL_VIDEO = ids(
    (0, 0, 0),
    (1, 1, 1), (1, 1, 2), (1, 2, 1), (1, 2, 2),  # frame group 0: τ = 0
    (2, 1, 1), (2, 1, 2), (2, 2, 1), (2, 2, 2),  # frame group 1: τ = 1
    (3, 3, 3),                                   # largest id 2 → 3
)


def test_video_under_qwen2_vl_counts_frame_groups():
    np.testing.assert_array_equal(position_ids(VIDEO, temporal="index"), QWEN2_VL_VIDEO)


def test_video_under_qwen2_5_vl_counts_time():
    # second_per_grid_t 1 × tokens_per_second 2: τ = 0, 2; the largest id is then 1 + 2 = 3 → text at 4.
    expected = ids(
        (0, 0, 0),
        (1, 1, 1), (1, 1, 2), (1, 2, 1), (1, 2, 2),
        (3, 1, 1), (3, 1, 2), (3, 2, 1), (3, 2, 2),
        (4, 4, 4),
    )
    got = position_ids(VIDEO, temporal="time", second_per_grid_t=1.0, tokens_per_second=2)
    np.testing.assert_array_equal(got, expected)


def test_half_second_groups_step_the_time_by_one():
    # 0.5 s × 2 per second: τ = 0, 1, the same ids as Qwen2-VL's frame index.
    got = position_ids(VIDEO, temporal="time", second_per_grid_t=0.5, tokens_per_second=2)
    np.testing.assert_array_equal(got, QWEN2_VL_VIDEO)


def test_a_video_s_own_interval_overrides_the_default():
    got = position_ids("text:1,video:2x4x4@0.5,text:1", temporal="time", second_per_grid_t=1.0)
    np.testing.assert_array_equal(got, QWEN2_VL_VIDEO)


def test_time_is_truncated_after_the_product():
    # 3 groups of 0.75 s, 2 per second: i·1.5 = 0, 1.5, 3.0 → τ = 0, 1, 3 (not int(0.75)·2·i = 0, 0, 0
    # as in transformers 4.5x, nor int(1.5)·i = 0, 1, 2). Grid 3×1×1 at merge 2 from a 3×2×2 video.
    got = position_ids("video:3x2x2", temporal="time", second_per_grid_t=0.75, tokens_per_second=2)
    np.testing.assert_array_equal(got, ids((0, 0, 0), (1, 0, 0), (3, 0, 0)))


def test_an_image_ignores_the_time_rule():
    np.testing.assert_array_equal(position_ids("image:2x2x2", temporal="time", second_per_grid_t=5.0), ids((0, 0, 0), (1, 0, 0)))


def test_the_next_block_starts_after_the_wider_side_of_a_wide_image():
    # image 1×4×10, merge 2 → merged 1×2×5 (10 tokens) from 2: largest id 2 + 4 = 6, so the text
    # goes on at 7, not at 2 + 10 (its number of tokens) nor at 2 + 2 (its height).
    expected = ids(
        (0, 0, 0), (1, 1, 1),
        (2, 2, 2), (2, 2, 3), (2, 2, 4), (2, 2, 5), (2, 2, 6),
        (2, 3, 2), (2, 3, 3), (2, 3, 4), (2, 3, 5), (2, 3, 6),
        (7, 7, 7),
    )
    np.testing.assert_array_equal(position_ids("text:2,image:1x4x10,text:1"), expected)


def test_a_tall_image_and_two_images_side_by_side():
    # image 6×2 (merged 3×1) from 0: largest id 2; the next image (merged 1×2) starts at 3.
    expected = ids((0, 0, 0), (0, 1, 0), (0, 2, 0), (3, 3, 3), (3, 3, 4))
    np.testing.assert_array_equal(position_ids("image:6x2,image:2x4"), expected)


def test_merge_one_keeps_the_patch_grid():
    np.testing.assert_array_equal(position_ids("image:2x2", merge=1), ids((0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 1, 1)))


# --- parsing ----------------------------------------------------------------------------------

YAML_FORM = [
    {"text": 3},
    {"image": {"t": 1, "h": 8, "w": 12}},
    {"video": {"t": 2, "h": 8, "w": 8}},
    {"text": 2},
]
BLOCKS = (TextBlock(3), VisionBlock("image", 1, 8, 12), VisionBlock("video", 2, 8, 8), TextBlock(2))


@pytest.mark.parametrize("form", [
    "text:3,image:1x8x12,video:2x8x8,text:2",
    " text : 3 , image:8x12, video:2x8x8 ,text:2",
    YAML_FORM,
    [{"text": 3}, {"image": {"h": 8, "w": 12}}, {"video": "2x8x8"}, {"text": "2"}],
    ["text:3", "image:1x8x12", "video:2x8x8", "text:2"],
    BLOCKS,
    list(BLOCKS),
])
def test_every_form_reads_to_the_same_blocks(form):
    assert parse_sequence(form) == BLOCKS


def test_video_intervals_in_both_forms():
    yaml = parse_sequence([{"video": {"t": 2, "h": 8, "w": 8, "second_per_grid_t": 0.5}}])
    assert yaml == parse_sequence("video:2x8x8@0.5") == (VisionBlock("video", 2, 8, 8, 0.5),)


def test_blocks_are_hashable_and_the_compact_form_reads_back():
    blocks = parse_sequence("text:3,image:1x8x12,video:2x8x8@0.25,text:2")
    assert len({blocks, parse_sequence(format_sequence(blocks))}) == 1
    assert format_sequence(blocks) == "text:3,image:1x8x12,video:2x8x8@0.25,text:2"


def test_token_count_and_block_spans():
    # 3 + 1·4·6 + 2·4·4 + 2 = 61 tokens at merge 2.
    assert token_count(YAML_FORM, 2) == 61 == len(position_ids(YAML_FORM))
    assert block_spans(YAML_FORM, 2) == (
        BlockSpan("text", 0, 3), BlockSpan("image", 3, 27), BlockSpan("video", 27, 59), BlockSpan("text", 59, 61)
    )
    assert token_count("image:1x8x12", 4) == 6


# --- bad input: one line each, naming the block ---------------------------------------------------


@pytest.mark.parametrize("value, message", [
    ("", "sequence: is empty"),
    ("  ", "sequence: is empty"),
    ([], "sequence: is empty"),
    (5, "sequence: expected a list of blocks"),
    ("text:3,imgae:1x8x8", "sequence: block 2: unknown block kind 'imgae' (did you mean image?); must be one of text, image, video"),
    ([{"vidoe": {"t": 1, "h": 2, "w": 2}}], "block 1: unknown block kind 'vidoe' (did you mean video?)"),
    ([{"image": {"hh": 8, "w": 8}}], "block 1 (image): unknown key 'hh' (did you mean h?)"),
    ([{"video": {"h": 8, "w": 8}}], "block 1 (video): missing t"),
    ([{"text": 3, "image": "8x8"}], "block 1: expected a one-key mapping"),
    ([{"image": 8}], "block 1 (image): expected a mapping"),
    ("text3", "block 1: expected KIND:SIZE"),
    ("text:3,", "block 2: expected KIND:SIZE"),
    ("text:0", "block 1 (text): tokens must be a positive integer, got '0'"),
    ("text:2.5", "block 1 (text): tokens must be a positive integer"),
    ([{"text": True}], "block 1 (text): tokens must be a positive integer"),
    ([{"image": {"h": 0, "w": 8}}], "block 1 (image): h must be a positive integer, got 0"),
    ("text:1,video:-2x8x8", "block 2 (video): t must be a positive integer, got '-2'"),
    ("video:8x8", "block 1 (video): expected a grid TxHxW"),
    ("image:1x2x8x8", "block 1 (image): expected a grid TxHxW or HxW"),
    ("image:8x8@0.5", "block 1 (image): second_per_grid_t (@…) applies to videos only"),
    ([VisionBlock("image", 1, 8, 8, 0.5)], "block 1 (image): second_per_grid_t applies to videos only"),
    ("video:2x8x8@0", "block 1 (video): second_per_grid_t must be a positive number"),
    ("video:2x8x8@abc", "block 1 (video): second_per_grid_t must be a positive number"),
    ([VisionBlock("text", 1, 2, 2)], "block 1: a text run is a TextBlock"),
    ("text:3,image:1x7x8", "sequence: block 2 (image): h=7 is not a multiple of spatial_merge_size 2"),
    ("video:2x8x5", "sequence: block 1 (video): w=5 is not a multiple of spatial_merge_size 2"),
    (f"text:{MAX_TOKENS},text:1", f"sequence: holds {MAX_TOKENS + 1} tokens, more than 2^24"),
    ("video:1025x256x256", f"sequence: holds {1025 * 128 * 128} tokens, more than 2^24"),
])
def test_bad_sequences_are_one_line_naming_the_block(value, message):
    with pytest.raises(ConfigError) as error:
        position_ids(value)
    text = str(error.value)
    assert message in text and "\n" not in text, text


@pytest.mark.parametrize("kwargs, message", [
    ({"temporal": "tim"}, "temporal: must be one of index, time; got 'tim' (did you mean time?)"),
    ({"merge": 0}, "spatial_merge_size: must be >= 1"),
    ({"second_per_grid_t": 0}, "second_per_grid_t: must be > 0"),
    ({"tokens_per_second": -2}, "tokens_per_second: must be > 0"),
    ({"temporal": "time", "second_per_grid_t": 1e300}, "sequence: block 1 (video): temporal ids reach 2^53"),
])
def test_bad_arguments_are_one_line(kwargs, message):
    with pytest.raises(ConfigError) as error:
        position_ids("video:3x2x2", **kwargs)
    assert message in str(error.value) and "\n" not in str(error.value), str(error.value)


def test_parsing_alone_checks_the_merge_only_when_given_one():
    assert parse_sequence("image:1x7x8") == (VisionBlock("image", 1, 7, 8),)
    with pytest.raises(ConfigError, match="h=7 is not a multiple of spatial_merge_size 2"):
        parse_sequence("image:1x7x8", merge=2)


# --- the vectorised layout agrees with a token-by-token loop ------------------------------------


def loop_ids(blocks, merge, temporal, second_per_grid_t, tokens_per_second):
    """The rule, one token at a time, as transformers' get_rope_index walks it."""
    rows, start = [], 0
    for block in blocks:
        if isinstance(block, TextBlock):
            rows += [(start + p,) * 3 for p in range(block.tokens)]
        else:
            interval = block.second_per_grid_t or second_per_grid_t
            for i in range(block.t):
                tau = int(i * interval * tokens_per_second) if temporal == "time" and block.kind == "video" else i
                for j in range(block.h // merge):
                    for k in range(block.w // merge):
                        rows.append((start + tau, start + j, start + k))
        start = max(max(row) for row in rows) + 1
    return np.array(rows, dtype=np.int64)


@pytest.mark.parametrize("chunk_rows", [multimodal.CHUNK_ROWS, 7])
def test_vectorised_ids_match_the_token_loop(chunk_rows, monkeypatch):
    monkeypatch.setattr(multimodal, "CHUNK_ROWS", chunk_rows)  # 7: blocks cut across passes
    rng = np.random.default_rng(0)
    for _ in range(30):
        merge = int(rng.integers(1, 4))
        blocks = []
        for _ in range(int(rng.integers(1, 7))):
            kind = str(rng.choice(["text", "image", "video"]))
            if kind == "text":
                blocks.append(TextBlock(int(rng.integers(1, 5))))
            else:
                t, h, w = (int(x) for x in rng.integers(1, 5, size=3))
                interval = float(rng.choice([0.25, 0.5, 0.75, 1.0, 1.5])) if kind == "video" and rng.random() < 0.5 else None
                blocks.append(VisionBlock(kind, t, h * merge, w * merge, interval))
        for temporal in ("index", "time"):
            got = position_ids(tuple(blocks), merge=merge, temporal=temporal, second_per_grid_t=0.5, tokens_per_second=2)
            np.testing.assert_array_equal(got, loop_ids(blocks, merge, temporal, 0.5, 2))


def test_a_large_video_across_many_passes():
    got = position_ids("text:10,video:4x512x512,text:10", temporal="time")  # 4·256·256 = 2^18 video tokens
    assert got.shape == (2**18 + 20, 3)
    # τ of the last group is 3·1·2 = 6 < 255 = w' − 1, so the text after it starts at 10 + 256.
    np.testing.assert_array_equal(got[-1], [10 + 256 + 9] * 3)
    np.testing.assert_array_equal(got[-11], [10 + 6, 10 + 255, 10 + 255])
    np.testing.assert_array_equal(got[10 + 2 * 256 * 256], [10 + 4, 10, 10])  # first token of group 2: τ = 2·1·2
