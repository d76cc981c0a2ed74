"""The registry of ``pecli check``'s properties, :data:`ANALYSES`, and running them.

A table of frozen records, each with a name, a one-line summary and a ``run(scheme, options)``
function with the same signature, so that every analysis works on every scheme through one interface.
Each check returns a :class:`~pecli.analysis.result.PropertyResult` (verdict, reason, figures).
Before any work, :func:`estimate_check_bytes` bounds the memory a set of checks will hold.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from pecli.progress import task

from pecli.analysis.composability import check_composability
from pecli.analysis.composability_grid import check_grid_composability, grid_composability_footprint
from pecli.analysis.distinguishability import check_distinguishability
from pecli.analysis.distinguishability_grid import check_grid_distinguishability, grid_distinguishability_footprint
from pecli.analysis.extrapolation import check_extrapolation
from pecli.analysis.extrapolation_grid import check_grid_extrapolation
from pecli.analysis.precision import check_precision
from pecli.analysis.relativity import check_relativity
from pecli.analysis.relativity_grid import check_grid_relativity
from pecli.analysis.result import VERDICTS, CheckReport, PropertyResult
from pecli.analysis.structure import BLOCK_BYTES, CHUNK_BYTES, encoded_bytes, has_vectors, is_shift_isometric_kind
from pecli.analysis.uniqueness import check_uniqueness
from pecli.errors import PecliError, PositionError
from pecli.schemes.base import Scheme


@dataclass(frozen=True)
class CheckOptions:
    """Everything a property check may need besides the scheme; each check reads what it uses.

    Attributes
    ----------
    length:
        Positions 0 … L − 1 (extrapolation: the test length).
    dtype:
        uniqueness: compare encodings in this dtype (default float64); precision: the low-precision
        dtype (default bfloat16).
    compute_dtype:
        precision: form the angles in this dtype (the ``computed`` case) instead of casting afterwards.
    tol:
        uniqueness: distances at or below it count as collisions.
    shifts:
        composability: the shifts k (default 1, 2, 4, 8, 64; on cells 1, 2, 4 along each axis).
    train_length:
        extrapolation along a line: T (default L // 2).
    train_grid:
        extrapolation on a grid (rope-nd, sinusoidal-nd): the training grid, a side per axis, each at
        most the scheme's grid's (default each side halved). A scheme reads the one of ``train_length``
        and ``train_grid`` that fits its positions (``compare`` sets 1-D and grid schemes side by side).
    strict:
        turn warnings into failures.
    samples:
        force sampled all-pairs scans with this many query positions.

    The scheme as trained on T positions is ``scheme.at_length(T)``.
    """

    length: int = 512
    dtype: str | None = None
    compute_dtype: str | None = None
    tol: float = 0.0
    shifts: tuple[int, ...] | None = None
    train_length: int | None = None
    train_grid: tuple[int, ...] | None = None
    strict: bool = False
    samples: int | None = None


#: What a check holds in memory: (bytes of the remembered encodings it reads, bytes of its own work).
Footprint = tuple[int, int]


@dataclass(frozen=True)
class AnalysisInfo:
    """A registered property check."""

    name: str
    summary: str
    run: Callable[[Scheme, CheckOptions], PropertyResult]
    #: The :class:`CheckOptions` fields it reads besides ``length`` and ``strict``.
    options: tuple[str, ...] = ()
    #: Its :data:`Footprint` for (scheme, options); None: a generous default (:func:`generic_footprint`).
    footprint: Callable[[Scheme, CheckOptions], Footprint] | None = None
    #: Whether it is defined for n-D schemes (positions with several coordinates, :attr:`Scheme.has_cells`);
    #: otherwise it measures positions along a line, and on such a scheme its result is ``n/a``.
    any_rank: bool = False
    #: Whether, though not of any rank, it is also defined on the cells of a grid (:attr:`Scheme.on_grid`):
    #: extrapolation, from a training grid to a larger one. ``n/a`` on other n-D positions (a sequence's ids).
    on_grids: bool = False
    #: Why it is ``n/a`` on an n-D scheme it does not apply to, when there is more to say than the rank.
    cells_reason: str = ""
    #: Whether it measures positions past what the scheme was trained on (extrapolation); the others
    #: are measured on the rows a table has when L runs past them (:func:`within_table`).
    past_training: bool = False

    def applies_to(self, scheme: Scheme) -> bool:
        """Whether the property is defined for ``scheme``'s positions."""
        return self.any_rank or not scheme.has_cells or (self.on_grids and scheme.on_grid)

    def estimate_bytes(self, scheme: Scheme, options: CheckOptions) -> int:
        """An upper estimate of the peak bytes the check holds on (scheme, options), run on its own
        (the encoding it reads included), known before any work starts."""
        return sum(self._footprint(scheme, options))

    def _footprint(self, scheme: Scheme, options: CheckOptions) -> Footprint:
        return (self.footprint or generic_footprint)(scheme, options)


# -- memory footprints: sizes of the arrays each check holds at its peak ------------------------------------
#: Bytes per row of exact grouping by hash: the hash, np.unique's sort order, index, inverse and counts.
GROUPING_BYTES_PER_ROW = 64
#: Chunks of rows (CHUNK_BYTES each) a chunked pass holds at once: the rows, their normalised copy,
#: the hash words, and the scheme's own temporaries while it encodes a chunk.
CHUNKS_HELD = 6
#: Blocks (BLOCK_BYTES each) an all-pairs scan holds at once: distances, gaps and their masked copies.
BLOCKS_HELD = 8


def _rows(scheme: Scheme, length: int) -> int:
    """Rows a check compares: positions (vector schemes) or relative distances (bias schemes, both signs)."""
    return length if has_vectors(scheme) else 2 * length - 1


def _bias_table(scheme: Scheme, length: int) -> int:
    """The bias rows of every relative distance, with the transposed copy :func:`bias_domain` keeps."""
    return 0 if has_vectors(scheme) else 3 * 8 * _rows(scheme, length) * int(scheme.channels)


def _width(scheme: Scheme) -> int:
    return max(int(scheme.width) if has_vectors(scheme) else int(scheme.channels), 1)


def _chunk(scheme: Scheme, rows: int) -> int:
    """Bytes of one chunk of a chunked pass: CHUNK_BYTES, or the whole (rows, width) array if smaller."""
    width = _width(scheme)
    return min(max(CHUNK_BYTES, 8 * 1024 * width), 8 * rows * width)


def _grouping(scheme: Scheme, rows: int) -> int:
    return GROUPING_BYTES_PER_ROW * rows + CHUNKS_HELD * _chunk(scheme, rows)


def _scan(scheme: Scheme, o: CheckOptions) -> int:
    """An all-pairs scan's blocks, unless distances depend on Δ only (then one pass over Δ)."""
    if has_vectors(scheme) and is_shift_isometric_kind(scheme) and o.samples is None:
        return 4 * 8 * o.length
    rows = _rows(scheme, o.length)
    return BLOCKS_HELD * min(BLOCK_BYTES, 8 * rows * rows) + 8 * rows * _width(scheme)


def generic_footprint(scheme: Scheme, o: CheckOptions) -> Footprint:
    """A check registered without a footprint: the encoding, two more copies of it and a scan's blocks."""
    encoding = encoded_bytes(scheme, o.length)
    return encoding, 2 * encoding + _bias_table(scheme, o.length) + BLOCKS_HELD * BLOCK_BYTES


def _uniqueness_footprint(scheme: Scheme, o: CheckOptions) -> Footprint:
    rows = _rows(scheme, o.length)
    return encoded_bytes(scheme, o.length), _bias_table(scheme, o.length) + _grouping(scheme, rows) + _scan(scheme, o)


def _distinguishability_footprint(scheme: Scheme, o: CheckOptions) -> Footprint:
    if scheme.has_cells:
        return grid_distinguishability_footprint(scheme, o.length)
    rows = _rows(scheme, o.length)
    return encoded_bytes(scheme, o.length), _bias_table(scheme, o.length) + 8 * 8 * rows + CHUNKS_HELD * _chunk(scheme, rows) + _scan(scheme, o)


def _composability_footprint(scheme: Scheme, o: CheckOptions) -> Footprint:
    from pecli.analysis.composability import EXACT_FIT_WORK, FIT_SAMPLES

    if scheme.has_cells:
        return grid_composability_footprint(scheme, o.length)
    if not has_vectors(scheme):  # the score of every distance before and after each shift, and its changes
        return 0, 16 * 8 * (2 * o.length) * int(scheme.channels) + (1 << 20)
    width = int(scheme.width)
    # exact: the fitted rows at most EXACT_FIT_WORK / width² of them, or 2·width + 65 extended; Q, Y, the
    # pair columns; sampled: 2·n rows per shift and their products.
    rows = max(min(o.length, EXACT_FIT_WORK // max(width * width, 1) + 64), 2 * width + 65)
    sampled = 2 * max(FIT_SAMPLES, 2 * width) * 4
    return 8 * rows * width, 8 * 8 * max(rows, sampled) * width


def _relativity_footprint(scheme: Scheme, o: CheckOptions) -> Footprint:
    from pecli.analysis.relativity import EXACT_PROFILE_CELLS, RELATIVITY_SAMPLES
    from pecli.analysis.relativity_grid import EXACT_PAIRS, GRID_SAMPLES

    if scheme.has_cells:
        # the scores and offset codes of the pairs measured, sorted; the queries' factors (at most
        # √EXACT_PAIRS queries exactly, else the sample) and a block of keys' factors and scores
        queries = min(o.length, max(GRID_SAMPLES, math.isqrt(EXACT_PAIRS) + 1))
        return 0, (16 * scheme.position_rank + 40) * EXACT_PAIRS + 2 * 8 * queries * int(scheme.width) + 4 * BLOCK_BYTES

    EXACT_QUERIES = int((EXACT_PROFILE_CELLS / 3) ** 0.5) + 1  # the most queries of an exact profile

    # the queries' score factors; per chunk of keys their factors (with the temporaries of computing
    # them) and the scores of every query against them; the (channels, 2L − 1) statistics
    vectors_ = has_vectors(scheme)
    channels = 1 if vectors_ else int(scheme.channels)
    width = int(scheme.width) if vectors_ else 0
    fewest_queries = min(o.length, o.samples or RELATIVITY_SAMPLES)
    keys = min(o.length, BLOCK_BYTES // (8 * channels * max(fewest_queries, 1)))
    queries = 8 * min(o.length, max(fewest_queries + 2, EXACT_QUERIES)) * width

    stats = 4 * 8 * (2 * o.length) * channels
    # a score-calling scheme builds its scores from (queries, keys) arrays of distances
    scores = min(BLOCK_BYTES, 8 * o.length * o.length * channels) * (2 if vectors_ else 4)
    return 0, queries + 6 * 8 * keys * width + scores + stats


def _extrapolation_footprint(scheme: Scheme, o: CheckOptions) -> Footprint:
    # the scheme's remembered encoding when training did not change it, else chunks encoded on demand;
    # the rows' hashes and their grouping; a chunk in a few forms (encoded, hashed, its magnitudes), or
    # two pairs of chunks where rows sharing a hash are compared
    from pecli.analysis.extrapolation import default_train_length

    rows = _rows(scheme, o.length)
    if scheme.has_cells:  # a grid's encoding, the grouping of its rows, the training mask
        return encoded_bytes(scheme, o.length), _grouping(scheme, rows) + 8 * rows
    held = 0
    if has_vectors(scheme) and 1 <= (o.train_length or default_train_length(o.length, scheme)) < o.length:
        trained = scheme.at_length(o.train_length or default_train_length(o.length, scheme))
        held = encoded_bytes(scheme, o.length) if trained == scheme else 0
    return held, _bias_table(scheme, o.length) + (8 + GROUPING_BYTES_PER_ROW) * rows + 4 * _chunk(scheme, rows)


def _precision_footprint(scheme: Scheme, o: CheckOptions) -> Footprint:
    rows = _rows(scheme, o.length)
    # two groupings (low precision and float64) one after the other, the per-row errors and both rows'
    # hashes, and a chunk in its exact, low, widened and difference forms
    return encoded_bytes(scheme, o.length), _bias_table(scheme, o.length) + _grouping(scheme, rows) + 3 * 8 * rows + 4 * _chunk(scheme, rows)


def _uniqueness(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    return check_uniqueness(scheme, o.length, dtype=o.dtype or "float64", tol=o.tol, samples=o.samples)


def _distinguishability(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    if scheme.has_cells:
        return check_grid_distinguishability(scheme, samples=o.samples)
    return check_distinguishability(scheme, o.length, samples=o.samples)


def _composability(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    if scheme.has_cells:
        return check_grid_composability(scheme, shifts=o.shifts)
    return check_composability(scheme, o.length, shifts=o.shifts)


def _relativity(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    if scheme.has_cells:
        return check_grid_relativity(scheme, samples=o.samples)
    return check_relativity(scheme, o.length, samples=o.samples)


def _extrapolation(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    if scheme.on_grid:
        return check_grid_extrapolation(scheme, train_grid=o.train_grid)
    return check_extrapolation(scheme, o.length, train_length=o.train_length)


def _precision(scheme: Scheme, o: CheckOptions) -> PropertyResult:
    return check_precision(scheme, o.length, dtype=o.dtype, compute_dtype=o.compute_dtype)


#: Every property check, by name, in the order ``check all`` runs them.
ANALYSES: dict[str, AnalysisInfo] = {
    info.name: info
    for info in (
        AnalysisInfo(
            "uniqueness", "no two positions (distances) share an encoding", _uniqueness, ("dtype", "tol", "samples"),
            _uniqueness_footprint, any_rank=True,
        ),
        AnalysisInfo(
            "distinguishability", "adjacent positions differ evenly; nearest neighbours are p ± 1", _distinguishability,
            ("samples",), _distinguishability_footprint, any_rank=True,
        ),
        AnalysisInfo(
            "composability", "a fixed linear map takes E_p to E_(p+k)", _composability, ("shifts",), _composability_footprint,
            any_rank=True,
        ),
        AnalysisInfo(
            "relativity", "the position-only score depends on n − m only", _relativity, ("samples",), _relativity_footprint,
            any_rank=True,
        ),
        AnalysisInfo(
            "extrapolation", "positions past the training length are defined, bounded, unique", _extrapolation,
            ("train_length", "train_grid"), _extrapolation_footprint, past_training=True, on_grids=True,
            cells_reason=(
                "defined for positions along a line and for the cells of a grid (trained on a smaller grid, "
                "--train-grid); {name}'s positions are the ids of {cells}, not the cells of a box, and which ids "
                "training saw along each axis is not given by its options"
            ),
        ),
        AnalysisInfo(
            "precision", "positions stay apart in a low-precision dtype", _precision, ("dtype", "compute_dtype"),
            _precision_footprint, any_rank=True,
        ),
    )
}

#: What ``pecli check`` accepts: every registered property, and ``all``.
PROPERTIES: tuple[str, ...] = (*ANALYSES, "all")


def get_analysis(name: str) -> AnalysisInfo:
    """The registered analysis ``name``."""
    try:
        return ANALYSES[name]
    except KeyError:
        raise PecliError(f"unknown property {name!r}; valid: {', '.join(PROPERTIES)}") from None


def _names(names: str | Sequence[str]) -> list[str]:
    if isinstance(names, str):
        return list(ANALYSES) if names == "all" else [names]
    return list(names)


def estimate_check_bytes(scheme: Scheme, names: str | Sequence[str], options: CheckOptions | None = None) -> int:
    """An upper estimate of the peak bytes :func:`run_checks` holds for (scheme, names, options).

    The scheme's remembered encoding (the one (L, d) array the checks share) plus the largest working
    memory of any one check. It reads only the scheme's shape (width, channels), its parameters and the
    options: nothing is encoded.
    """
    options = on_own_positions(scheme, options or CheckOptions())
    footprints = [
        get_analysis(name)._footprint(scheme, options) for name in _names(names) if get_analysis(name).applies_to(scheme)
    ]
    cells = 8 * scheme.position_rank * options.length if scheme.has_cells else 0  # an n-D scheme's ids
    if not footprints:
        return cells
    return cells + max(held for held, _ in footprints) + max(work for _, work in footprints)


def run_checks(
    scheme: Scheme, names: str | Sequence[str], options: CheckOptions | None = None, *, label: str = ""
) -> list[PropertyResult]:
    """Run the named checks (``"all"`` for every one) and return their results, ``--strict`` applied.

    Each check is reported as a :func:`pecli.progress.task` (``label`` goes before its name).
    """
    options = on_own_positions(scheme, options or CheckOptions())
    names = _names(names)
    results = []
    for number, name in enumerate(names, 1):
        analysis = get_analysis(name)
        if not analysis.applies_to(scheme):
            results.append(not_applicable(name, scheme))
            continue
        within = None if analysis.past_training else within_table(scheme, options)
        with task(f"{label}{name} ({number}/{len(names)})"):
            if within is None:
                results.append(analysis.run(scheme, options))
            else:  # a table's rows end before L: measured on them, extrapolation judges the rest
                result = analysis.run(scheme, within)
                note = f"measured on positions 0 … {within.length - 1}, the rows the table has (see extrapolation for the rest)"
                results.append(dataclasses.replace(result, notes=(*result.notes, note)))
    return [r.strict() for r in results] if options.strict else results


def within_table(scheme: Scheme, options: CheckOptions) -> CheckOptions | None:
    """``options`` cut to the rows of a scheme's table (a checkpoint's learned positions) when positions
    0 … L − 1 run past them; None when the scheme encodes them all."""
    if scheme.has_cells or not scheme.model_length or scheme.model_length >= options.length:
        return None
    try:
        scheme.check_positions(np.array([options.length - 1]))
    except PositionError:
        return dataclasses.replace(options, length=int(scheme.model_length))
    return None


def on_own_positions(scheme: Scheme, options: CheckOptions) -> CheckOptions:
    """``options`` with the length of an n-D scheme's own cells (a grid's, a sequence's), whatever was asked."""
    if not scheme.has_cells:
        return options
    return dataclasses.replace(options, length=scheme.cell_count)


def not_applicable(name: str, scheme: Scheme) -> PropertyResult:
    """The ``n/a`` result of property ``name`` on a scheme whose positions it is not defined for."""
    able = ", ".join(info.name for info in ANALYSES.values() if info.applies_to(scheme))
    reason = ANALYSES[name].cells_reason if name in ANALYSES else ""
    return PropertyResult(
        name, "n/a",
        reason.format(name=scheme.name, cells=scheme.cells_text()) or f"defined for positions along a line; {scheme.name} has {scheme.position_rank}-D positions",
        notes=(f"properties that apply to {scheme.name}: {able}",),
    )


def check_report(scheme: Scheme, names: str | Sequence[str], options: CheckOptions | None = None) -> CheckReport:
    """:func:`run_checks` with what the report says about the scheme: what ``pecli check`` prints."""
    options = on_own_positions(scheme, options or CheckOptions())
    results = run_checks(scheme, names, options)
    asked = names if isinstance(names, str) else ", ".join(names)
    return CheckReport(scheme.name, scheme.kind, scheme.params(), options.length, asked, tuple(results))


__all__ = [
    "ANALYSES", "PROPERTIES", "VERDICTS", "AnalysisInfo", "CheckOptions", "CheckReport", "PropertyResult",
    "check_report", "estimate_check_bytes", "get_analysis", "not_applicable", "run_checks",
]
