"""A user's M-RoPE position ids (t, h, w) against the model's rule for text, image and video tokens.

The rule is Hugging Face transformers' ``get_rope_index`` of Qwen2-VL, Qwen2.5-VL and Qwen3-VL, as
:func:`pecli.schemes.multimodal.position_ids` writes it for the scheme's ``sequence``: a text token
gets (p, p, p); an image's or a video's merged patches get (s + τ_i, s + j, s + k); each block starts
past the largest id before it. Ids are whole numbers: they must be equal. When they differ, the first
wrong token is named (its block, its place in the block, what it holds and what the rule gives), and
each known mistake is tested as a whole: 1-D positions on all three components, blocks after an image
or a video starting at the token count, the other rule for a video's temporal ids, h and w swapped.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from pecli.errors import PecliError

AXES = ("t", "h", "w")


def _as_ids(values, tokens: int) -> np.ndarray:
    """The user's ids as int64 (3, N): (3, N), or HF's (3, 1, N) for a batch of one."""
    ids = np.asarray(values)
    if ids.ndim == 3 and ids.shape[:2] == (3, 1):
        ids = ids[:, 0, :]
    if ids.ndim != 2 or ids.shape[0] != 3:
        raise PecliError(f"position_ids: shape {list(ids.shape)}; give (3, N) ids, rows t, h, w (or HF's (3, 1, N))")
    if ids.dtype.kind not in "iuf" or (ids.dtype.kind == "f" and not np.array_equal(ids, np.round(ids))):
        raise PecliError(f"position_ids: holds {ids.dtype} values that are not all whole numbers")
    if ids.shape[1] != tokens:
        raise PecliError(f"position_ids: ids for {ids.shape[1]:,} tokens; the sequence has {tokens:,} "
                         "(give it with --sequence, after the spatial merge)")
    return ids.astype(np.int64)


def _token_starts(expected: np.ndarray, spans) -> np.ndarray:
    """The ids a careless implementation gives: each block's own ids, moved to start at its first
    token's index (as if the block before it used one id per token)."""
    out = expected.copy()
    for span in spans:
        rows = slice(span.first_row, span.stop_row)
        out[:, rows] += span.first_row - expected[:, span.first_row].min()
    return out


def _where(token: int, spans, expected: np.ndarray) -> str:
    """``token 12 (image 1 of the sequence's blocks, its token 3)``."""
    for number, span in enumerate(spans, start=1):
        if span.first_row <= token < span.stop_row:
            return f"token {token:,} (block {number}, {span.kind}, its token {token - span.first_row:,})"
    return f"token {token:,}"


def verify_position_ids(values, scheme):
    """Compare a user's (3, N) M-RoPE position ids with ``scheme``'s rule for its ``sequence``.

    Raises
    ------
    PecliError
        Ids of another shape or count than the sequence's tokens, or not whole numbers.
    """
    from pecli.verification.report import Diagnosis, VerifyReport
    from pecli.schemes import multimodal

    expected = np.asarray(scheme.cells(), dtype=np.int64).T
    spans = multimodal.block_spans(scheme.sequence, scheme.spatial_merge_size)
    ids = _as_ids(values, expected.shape[1])
    wrong = ids != expected
    difference = np.abs(ids - expected)
    axis, token = np.unravel_index(int(np.argmax(difference)), difference.shape)
    report = VerifyReport(not wrong.any(), float(difference.max()), int(token), int(axis), 0.0, str(np.asarray(values).dtype))
    if report.match:
        return report
    first = int(np.argmax(wrong.any(axis=0)))
    got, want = tuple(int(v) for v in ids[:, first]), tuple(int(v) for v in expected[:, first])
    note = (f"the first wrong id is {_where(first, spans, expected)}: (t, h, w) = {got}, the rule gives {want}; "
            f"{int(wrong.any(axis=0).sum()):,} of {ids.shape[1]:,} tokens differ")
    causes = [Diagnosis(code, message) for code, message, candidate in _mistakes(scheme, expected, spans)
              if np.array_equal(ids, candidate)]
    return dataclasses.replace(report, diagnosis=tuple(causes), notes=(note,))


def _mistakes(scheme, expected: np.ndarray, spans):
    """``(code, message, ids)`` for each known mistake."""
    from pecli.schemes import multimodal

    tokens = expected.shape[1]
    yield ("vision-rule", "the ids are 1-D positions 0 … N − 1 on all three components: the image and video tokens "
                          "did not get their (t, h, w) grid ids", np.tile(np.arange(tokens), (3, 1)))
    if any(span.kind != "text" for span in spans[:-1]):
        yield ("block-start", "each block after an image or a video starts at its first token's index; the rule starts "
                              "it past the largest id before it", _token_starts(expected, spans))
    if any(span.kind == "video" for span in spans):
        other = "time" if scheme.temporal == "index" else "index"
        rule = {"merge": scheme.spatial_merge_size, "temporal": other, "second_per_grid_t": scheme.second_per_grid_t,
                "tokens_per_second": scheme.tokens_per_second}
        named = {"index": "the frame group's index (Qwen2-VL)", "time": "its time × tokens_per_second (Qwen2.5-VL)"}
        yield ("temporal-rule", f"a video's temporal ids follow {named[other]}; the model's is {named[scheme.temporal]}",
               multimodal.position_ids(scheme.sequence, **rule).T)
    yield "axes", "the h and w ids are swapped (rows before columns in the grid)", expected[[0, 2, 1]]
