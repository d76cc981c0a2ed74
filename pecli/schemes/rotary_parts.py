"""The ``encoding``, ``cos`` and ``sin`` parts of a rotary scheme (rope, the axial schemes), made from
its phasors block by block, for ``pecli encode`` and :func:`pecli.encode`."""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterator

import numpy as np

from pecli.dtypes import numpy_dtype
from pecli.schemes.frequencies import fill_rows
from pecli.schemes.parts import Block, Part, row_part
from pecli.schemes.rotary_layout import layout_cache, pair_slices


#: Parts made from the same cos and sin values (``pecli encode`` shares them when it writes several).
TRIGONOMETRIC_PARTS: frozenset[str] = frozenset({"encoding", "cos", "sin"})


def shares_tables(wanted: Any) -> bool:
    """Whether several of :data:`TRIGONOMETRIC_PARTS` are ``wanted`` (None: every part)."""
    return wanted is None or len(TRIGONOMETRIC_PARTS & set(wanted)) > 1


def rotary_parts(
    positions: np.ndarray, phasors: Callable[[np.ndarray], np.ndarray], dim: int, rotated: int, layout: str,
    dtype: str | None, wanted: Any, chunks: Callable[[np.ndarray], Callable[[int, int], np.ndarray]] | None = None,
) -> list[Part]:
    """The ``encoding``, ``cos`` and ``sin`` parts of a rotary scheme, from its phasors.

    ``phasors(ids)`` is the (n, r/2) complex ``exp(i·angle)`` of each pair (scaled); ``layout`` says
    where pair j's components are (``half``: j and j + r/2; ``interleaved``: 2j and 2j + 1). The
    caches are in the layout's convention, the encoding has each pair on its components and zeros past
    ``rotated``. When several of the three are ``wanted`` in a ``dtype``, cos and sin of every angle are
    computed once into (L, r/2) tables in that dtype and each part is made by copying from them;
    otherwise each part computes its blocks' phasors itself — the encoding's in ``dtype``, a chunk of
    rows at a time on both cores (:func:`~pecli.schemes.frequencies.fill_rows`), its phasors from
    ``chunks(ids)`` when given (a function of a chunk's start and stop giving ``phasors`` of those ids,
    the same values with what the chunks share made once:
    :func:`~pecli.schemes.frequencies.phasor_chunks`).
    """
    n = len(positions)
    first, second = pair_slices(rotated, layout)

    def encoding(cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
        out = np.empty((cos.shape[0], dim), dtype=cos.dtype)
        out[:, rotated:] = 0  # the components no pair rotates (partial rotary); every other one is set below
        out[:, first] = cos
        out[:, second] = sin
        return out

    builders = {
        "encoding": (dim, encoding),
        "cos": (rotated, lambda cos, sin: layout_cache(cos, layout)),
        "sin": (rotated, lambda cos, sin: layout_cache(sin, layout)),
    }
    if dtype is not None and shares_tables(wanted):
        tables = functools.cache(lambda: _trigonometric_tables(positions, phasors, numpy_dtype(dtype)))

        def shared(name: str) -> Part:
            width, build = builders[name]

            def blocks(rows: int) -> Iterator[Block]:
                cos, sin = tables()
                for start in range(0, n, rows):
                    yield Block(0, start, build(cos[start : start + rows], sin[start : start + rows]))

            def rows_at(index: np.ndarray) -> np.ndarray:
                cos, sin = tables()
                return build(cos[index], sin[index]).reshape(len(index), -1)

            return Part(name, (n, width), blocks, width, rows_at if name == "encoding" else None)

        return [shared(name) for name in builders]

    out_dtype = np.dtype(np.float64) if dtype is None else numpy_dtype(dtype)

    def encoding_rows(ids: np.ndarray) -> np.ndarray:
        chunk = chunks(ids) if chunks is not None else (lambda start, stop: phasors(ids[start:stop]))

        def fill(start: int, stop: int, out: np.ndarray) -> None:
            z = chunk(start, stop)
            out[:, rotated:] = 0
            out[:, first], out[:, second] = z.real, z.imag  # each value rounded once to the dtype

        return fill_rows(len(ids), dim, out_dtype, fill)

    def rows_of(build: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
        def rows(ids: np.ndarray) -> np.ndarray:
            z = phasors(ids)
            return build(z.real, z.imag)

        return rows

    return [
        row_part(name, positions, encoding_rows if name == "encoding" else rows_of(build), (width,), main=name == "encoding")
        for name, (width, build) in builders.items()
    ]


def _trigonometric_tables(
    positions: np.ndarray, phasors: Callable[[np.ndarray], np.ndarray], dtype: np.dtype, rows: int = 1 << 14,
) -> tuple[np.ndarray, np.ndarray]:
    """The (L, r/2) tables of (scaled) cos and sin, in ``dtype``, filled ``rows`` positions at a time."""
    first = phasors(positions[:1])
    cos = np.empty((len(positions), first.shape[1]), dtype=dtype)
    sin = np.empty_like(cos)
    with np.errstate(over="ignore"):
        for start in range(0, len(positions), rows):
            z = phasors(positions[start : start + rows])
            cos[start : start + rows] = z.real
            sin[start : start + rows] = z.imag
    return cos, sin


__all__ = ["TRIGONOMETRIC_PARTS", "rotary_parts", "shares_tables"]
