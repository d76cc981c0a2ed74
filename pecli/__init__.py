"""pecli: compute, measure and picture the positional encodings of transformers.

The library API, for notebooks and scripts (nothing here needs the command line)::

    import pecli

    rope = pecli.build_scheme("rope", {"dim": 128, "base": 500000})
    E = pecli.encode("sinusoidal", range(16), dim=8).encoding     # (16, 8) float64
    caches = pecli.encode(rope, range(4096), dtype="float32")      # caches.cos, caches.sin: (4096, 128)
    mae = pecli.encode(pecli.preset("mae")).encoding               # MAE's (197, 768) table
    results = pecli.run_checks(rope, "all", pecli.CheckOptions(length=4096))
    table = pecli.spectrum(rope, context=8192, train_length=4096)  # per-pair wavelengths
    side_by_side = pecli.compare([rope, pecli.build_scheme("alibi")], length=1024)
    rows = pecli.sweep("distinguishability", {"base": [1e4, 1e6]}, scheme="rope", length=4096).rows
    figure, notes = pecli.plot("dot-distance", rope, length=2048)
    plan = pecli.model_plan("config.json")                       # a model's layer groups (a folder, a .gguf)
    sliding = pecli.model_scheme("config.json", layer=0)          # the scheme of one layer
    report = pecli.verify(rope, cos=my_cos, sin=my_sin)            # your arrays against the scheme's
    found = pecli.diff("config.json", "model.gguf")                # does the GGUF encode positions as the model?

``pecli.SCHEMES`` is the registry of schemes and ``pecli.ANALYSES`` that of the properties. Names are
imported on first use, so ``import pecli`` stays light.
"""

from __future__ import annotations

import importlib
from typing import Any, Iterable

__version__ = "0.1.0"

#: Public names and the module each comes from (imported when first used).
_EXPORTS = {
    "SCHEMES": "pecli.schemes",
    "Capability": "pecli.schemes.base",
    "Scheme": "pecli.schemes.base",
    "ANALYSES": "pecli.analysis.registry",
    "CheckOptions": "pecli.analysis.options",
    "PropertyResult": "pecli.analysis.result",
    "run_checks": "pecli.analysis.registry",
    "spectrum": "pecli.wavelengths.spectrum",
    "base_lower_bound": "pecli.wavelengths.base_bound",
    "compare": "pecli.comparison.table",
    "Comparison": "pecli.comparison.table",
    "sweep": "pecli.sweeps",
    "VectorEncoding": "pecli.schemes.encoded",
    "RotaryEncoding": "pecli.schemes.encoded",
    "BiasEncoding": "pecli.schemes.encoded",
    "BucketEncoding": "pecli.schemes.encoded",
    "RelativeEncoding": "pecli.schemes.encoded",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'pecli' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


def model_plan(config: Any, *, scheme: Any = None):
    """The :class:`~pecli.models.plan.PositionPlan` of a HuggingFace model: its layer groups, each with
    its layers, the scheme options that reproduce it (None: no position encoding) and the keys read.

    ``config`` is the path of a ``config.json``, of the model's folder (its ``config.json``, as
    ``from_pretrained`` takes it) or of a GGUF file (``.gguf``, as ``--gguf`` reads it; needs
    ``pecli[gguf]``), or a parsed ``config.json``; ``scheme="rope"`` (or a rope scheme object, or its
    class) reads a Qwen-VL model as the 1-D RoPE of its text. Raises :class:`~pecli.errors.ConfigError`
    as the command line does (one line naming the key), also when a group's options are ones its scheme
    refuses (every group's scheme is built to see).
    """
    from pecli.models.reading import check_plan_schemes
    from pecli.models.sources import read_source, source_of_path
    from pecli.models.sources.config_json import plan_of_config

    scheme = getattr(scheme, "name", scheme)
    if isinstance(config, dict):
        plan = plan_of_config(config, "config", scheme)
    else:
        plan = read_source(source_of_path(config), str(config), scheme)
    check_plan_schemes(plan)  # a base of NaN and the like: refused as every command refuses it
    return plan


def _plan_of(model: Any, argument: str):
    """A plan given as one (returned as it is), else read by :func:`model_plan`."""
    from pecli.models.plan import PositionPlan

    if isinstance(model, PositionPlan):
        return model
    if not isinstance(model, (dict, str)) and not hasattr(model, "__fspath__"):
        raise TypeError(f"{argument} is a model: the path of a config.json, a model folder or a .gguf, a parsed "
                        f"config or a PositionPlan, not {type(model).__name__}")
    return model_plan(model)


def diff(reference: Any, candidate: Any):
    """Whether ``candidate`` encodes positions as ``reference`` does, group by group, as ``pecli diff``:
    each a ``config.json`` (or a model folder), a GGUF file, a parsed config or a
    :class:`~pecli.models.plan.PositionPlan`.

    Returns a :class:`~pecli.models.plan_diff.PlanDiff`: ``same``, and ``differences``, each with the key
    on either side, both values and its effect (``lines()`` as the command prints them). A GGUF
    candidate's side is named ``gguf`` against ``hf``; two configs' ``new`` against ``old``.
    """
    from pecli.models.plan_diff import diff_plans
    from pecli.models.sources import source_of_path

    gguf = source_of_path(candidate) == "gguf"
    return diff_plans(_plan_of(candidate, "candidate"), _plan_of(reference, "reference"),
                      "gguf" if gguf else "new", "hf" if gguf else "old")


def verify(scheme: Any, positions: Any = None, *, max_memory: Any = None, **arrays: Any):
    """Check your own position-encoding arrays against ``scheme``, as ``pecli verify``: ``cos`` and ``sin``
    (rope: (P, r) in either layout, or (P, r/2)), ``inv_freq``, ``slopes`` or ``bias`` (alibi), ``table``
    (sinusoidal), ``buckets`` (t5) or ``position_ids`` (mrope), each an array or the path of an ``.npy``
    file, at ``positions`` (default 0 … P − 1).

    ``scheme`` is a scheme object (:func:`build_scheme`, :func:`model_scheme`). Each value is held to how
    it is stored (float32, float16, bfloat16), and when the arrays differ each known cause is tested and
    those that explain them are named. Returns a :class:`~pecli.verification.report.VerifyReport`:
    ``match``, the largest error and where, ``diagnosis`` (each with its ``code``: layout, base,
    precision, …); in a notebook it shows as a table.
    """
    import os

    from pecli.verification.arrays import position_ids, verify_arrays
    from pecli.io import load_array
    from pecli.memory import memory_budget
    from pecli.schemes import Scheme

    if not isinstance(scheme, Scheme):
        raise TypeError(f"verify() takes a scheme object as scheme (pecli.build_scheme, pecli.model_scheme), "
                        f"got {type(scheme).__name__}")
    budget = memory_budget(max_memory)
    loaded = {key: load_array(value, key=key, max_bytes=budget) if isinstance(value, (str, os.PathLike)) else value
              for key, value in arrays.items()}
    ids = None if positions is None else position_ids(positions)
    return verify_arrays(scheme, ids, max_bytes=budget, **loaded)


def extension_report(config: Any, target: Any, **options: Any):
    """The RoPE changes that take a model to ``target`` tokens, measured and ranked, as ``pecli extend``:
    ``config`` is the path of a ``config.json`` (or the model's folder) as :func:`model_plan` takes it, or
    its parsed contents; ``options`` as :func:`pecli.extend.report.extension_report`
    (``train_length``, ``method`` and ``factor``, ``pick``, ``max_bytes``)."""
    import os

    from pecli.extend.report import extension_report as report

    if isinstance(config, (str, os.PathLike)):
        from pecli.config_files import read_json

        source = str(config)
        config = read_json(source, "hf_config")
        return report(config, target, source, **options)
    return report(config, target, **options)


def model_scheme(config: str | dict[str, Any], *, layer: int | None = None, group: str | None = None, length: int | None = None):
    """The scheme of one layer group of a HuggingFace model (``layer`` 0-based, or ``group`` by name; neither
    for a model whose layers all share one encoding), built as ``pecli --hf-config`` builds it, at ``length``
    positions (default the command line's, :data:`pecli.schemes.build.DEFAULT_LENGTH`)."""
    from pecli.models.plan import one_group
    from pecli.models.reading import group_options

    plan = model_plan(config).select(layer, group)
    chosen = one_group(plan)
    group_options(plan, chosen)  # a table whose values are in the checkpoint is refused here
    return chosen.encoding.at_length(_default_length(length))


def build_scheme(name: Any, params: dict[str, Any] | None = None, *, length: int | None = None):
    """Build a registered scheme from its name and parameters, validated as the command line does.

    Parameters the user leaves out that depend on the sequence length (binary ``bits``, learned
    ``max_length``) are filled from ``length`` (default the command line's,
    :data:`pecli.schemes.build.DEFAULT_LENGTH`); ``scheme.at_length(n)`` gives the same scheme at
    another length. ``name`` may be a scheme object instead: the result is that scheme with ``params``
    changed (``build_scheme(rope, {"base": 500000})``), its other parameters as it has them, those
    it filled from a length filled from ``length``.
    """
    from collections.abc import Mapping

    from pecli.schemes.build import build_scheme as _build
    from pecli.schemes import Scheme

    length = _default_length(length)

    if params is not None and not isinstance(params, Mapping):
        raise TypeError(f"build_scheme() takes the parameters as a mapping of name to value, got {type(params).__name__}")
    if isinstance(name, Scheme):
        kept = {key: value for key, value in name.params().items() if key not in name.length_filled}
        return _build(name.name, {**kept, **(params or {})}, length=length)
    return _build(name, params or {}, length=length)


def preset(name: str, *, length: int | None = None, **params: Any):
    """The scheme of a library's convention (``"mae"``, ``"timm-sincos"``, ``"eva02"``; see
    :data:`pecli.presets.PRESETS`), with ``params`` overriding its options as options given on the command
    line do: ``pecli.preset("mae", grid=[16, 16])``."""
    from pecli.presets import expand_preset

    options = expand_preset({"preset": name, **params})
    return build_scheme(options.pop("scheme"), options, length=length)


def check(scheme, prop: str = "all", *, max_memory: Any = None, **options: Any):
    """Measure property ``prop`` (or ``"all"``) of ``scheme``; keyword options as :class:`CheckOptions`.

    ``scheme`` is a scheme object or a registered name (built with its defaults at ``length``). A check
    that would need more than ``max_memory`` bytes (``"2G"``; default a quarter of RAM, as on the
    command line) is refused before any work, with a ValueError naming ``length``.

    Returns a :class:`~pecli.analysis.result.CheckReport`: the scheme, the length, the worst verdict,
    and one :class:`PropertyResult` (verdict, reason, figures) per property, which it iterates and
    indexes over as a list. In a notebook it shows as a table; ``.to_frame()`` gives a DataFrame.
    """
    from pecli.analysis.options import CheckOptions
    from pecli.analysis.registry import check_report, estimate_check_bytes, properties
    from pecli.schemes import Scheme

    if isinstance(scheme, str):
        scheme = build_scheme(scheme, length=_library_length(options.get("length", _check_length())))
    elif not isinstance(scheme, Scheme):
        raise TypeError(f"check() takes a scheme or the name of one as scheme, got {type(scheme).__name__}")
    if prop not in properties():
        raise ValueError(f"prop must be one of {', '.join(properties())}, got {prop!r}")
    checked = CheckOptions(**options)
    _within_budget(estimate_check_bytes(scheme, prop, checked), max_memory, "length",
                   f"check {prop} at length {checked.length:,}")
    return check_report(scheme, prop, checked)


def _default_length(length: int | None) -> int:
    """``length``, or where it is None the length a run uses when nothing gives one (declared once, in
    :mod:`pecli.schemes.build`; imported here when needed, so that ``import pecli`` stays light)."""
    if length is not None:
        return length
    from pecli.schemes.build import DEFAULT_LENGTH

    return DEFAULT_LENGTH


def _check_length() -> int:
    """The length ``check`` measures at when none is given: :class:`CheckOptions`' declared default."""
    import dataclasses

    from pecli.analysis.options import CheckOptions

    return next(field.default for field in dataclasses.fields(CheckOptions) if field.name == "length")


def _library_length(length: Any) -> int:
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise ValueError(f"length must be a positive integer, got {length!r}")
    return length


def _within_budget(needed: float, max_memory: Any, argument: str, what: str) -> None:
    """Refuse, with a ValueError naming ``argument``, work that needs more than the memory budget
    (``max_memory``, else the command line's default: :func:`pecli.config.memory_budget`)."""
    from pecli.memory import memory_budget
    from pecli.io import size_text

    budget = memory_budget(max_memory)
    if needed > budget:
        raise ValueError(f"{argument}: {what} needs about {size_text(needed)} of memory, over the budget of "
                         f"{size_text(budget)}; ask for less, or pass max_memory= (e.g. max_memory='16G')")


def _count(positions: Any) -> int | None:
    """How many positions ``positions`` holds, when it says so without being read (a range, a list, an
    array); None for an iterator."""
    try:
        return int(getattr(positions, "size", None) if hasattr(positions, "__array__") else len(positions))
    except OverflowError:  # a range longer than an index can be
        return 1 << 63
    except TypeError:
        return None


#: Positions read at a time from an iterator (:func:`_positions_within_budget`).
_CHUNK = 1 << 16


def _positions_within_budget(positions: Any, count: int | None, max_memory: Any) -> Any:
    """``positions`` as an array; an iterator (``count`` None: its length unknown) is read a chunk at a time
    and refused, with the ValueError of :func:`_within_budget`, as soon as the ids read pass the memory budget
    at 8 bytes each, so that an endless or huge iterator is never held whole before the check (an array or a
    sequence was counted before this)."""
    import itertools

    import numpy as np

    if count is not None:
        return np.asarray(positions if hasattr(positions, "__array__") else list(positions))
    iterator, chunks, held = iter(positions), [], 0
    while True:
        chunk = list(itertools.islice(iterator, _CHUNK))
        if not chunk:
            break
        chunks.append(np.asarray(chunk))
        held += chunks[-1].size
        _within_budget(8.0 * held, max_memory, "positions", f"an iterator of at least {held:,} ids")
    if not chunks:
        return np.asarray([])
    return chunks[0] if len(chunks) == 1 else np.concatenate(chunks)


def _cell_ids(built: Any, values: Any, max_memory: Any) -> Any:
    """The ids an n-D scheme encodes, ``values`` or (None) its own cells, within the memory budget: the cells'
    count is checked before they are made."""
    if values is None:
        cells = built.cell_count or 0
        _within_budget(built.estimate_bytes(cells), max_memory, "positions", f"{built.name} at {cells:,} positions")
    ids = built.cells() if values is None else built.positions_of(values)
    _within_budget(built.estimate_bytes(len(ids)), max_memory, "positions", f"{built.name} at {len(ids):,} positions")
    return ids


def encode(scheme: Any, positions: Iterable[Any] | None = None, *, dtype: str | None = None, max_memory: Any = None,
           **params: Any):
    """The arrays of a scheme at ``positions``, each under its name: ``encode("rope", range(8), dim=4).cos``.

    ``scheme`` is a registered name (built from ``params``, its length-dependent defaults from the
    positions) or a scheme object, e.g. from :func:`build_scheme` or :func:`model_scheme` (then
    ``params`` must be empty). An n-D scheme takes positions of shape (N, k), and by default encodes
    its own cells: ``encode("rope-nd", grid=[14, 14])``. rope, rope-nd, sinusoidal and sinusoidal-nd take
    real-valued positions too (``encode("rope", [-1.0, -0.5, 0.0], dim=8)``). Rows of prefix tokens
    (``prefix_tokens``) come first.

    Returns one of :mod:`pecli.schemes.encoded`'s results, its fields the arrays ``pecli encode --out
    x.npz`` writes: :class:`~pecli.schemes.encoded.RotaryEncoding` (rope, rope-nd, mrope: ``cos`` and
    ``sin`` (L, r) in the layout's convention, as HuggingFace's rotary modules return them, ``inv_freq``,
    and ``encoding`` on first use), :class:`~pecli.schemes.encoded.VectorEncoding` (additive schemes:
    ``encoding`` (L, d)), :class:`~pecli.schemes.encoded.BiasEncoding` (alibi: ``bias`` (H, L, L) and
    ``slopes``), :class:`~pecli.schemes.encoded.BucketEncoding` (t5: ``buckets``) or
    :class:`~pecli.schemes.encoded.RelativeEncoding`; each with its ``scheme`` and ``positions``.
    ``np.asarray(result)`` is the array ``encode`` returned before it named them (``encoding``, ``bias``,
    ``buckets``, ``embeddings``).

    Every field is an array already written when ``encode`` returns; reading it (``result.cos``,
    ``result["cos"]``) costs nothing. The one lazy array is a rotary result's ``encoding`` (the
    interleaved (N, d) matrix ``check`` measures, made from ``cos`` and ``sin`` on first use and kept):
    it holds their values a third time, and most callers want the caches. Arrays of 32 MiB and more
    are written into the memory of earlier results that nothing reads any more (no slice, view or
    exported buffer of them is alive), so that ``encode`` in a loop does not pay the kernel's first
    touch of fresh memory on every call; the pool keeps at most an eighth of the machine's memory idle
    (``pecli.schemes.encoded.BUFFERS.clear()`` frees it).

    ``dtype`` (float64, float32, float16, bfloat16) is the dtype of the float arrays (``inv_freq`` stays
    float64). Angles are formed in float64 and the values cast once at the end; the rotary caches and
    sinusoidal tables of integer positions come from angle addition, as ``pecli encode`` writes them:
    float64 values within ``2⁻⁵³·|p·θ| + 2⁻⁵²`` of cos and sin of the exact angle (the rounding of a
    float64 angle of that size), and each value in a narrower dtype within half a unit in the last place
    at 1.0 of ``dtype`` (float32: 2⁻²⁴ ≈ 6e-8) of them (:mod:`pecli.schemes.encoded`). transformers' float32 rotary modules form the angles in float32:
    off by up to 0.06 at a million positions.

    An encoding that would take more than ``max_memory`` bytes (``"2G"``; default a quarter of RAM, as
    on the command line; the arrays at float64, ALiBi's (H, L, L) bias, T5's (L, L) buckets) is refused
    before it is computed, with a ValueError naming ``positions``: positions given as an iterator are read
    a chunk at a time and refused once the ids read pass the budget (8 bytes each), an n-D scheme's own
    cells from their count, before they are made.
    """
    import numpy as np

    from pecli.schemes import Scheme, as_positions, get_scheme_class
    from pecli.schemes.positions import positions_length

    given = isinstance(scheme, Scheme)
    if given and params:
        raise TypeError(f"encode() takes parameters with a scheme name, not with a built scheme: {', '.join(params)}")
    if dtype is not None:
        from pecli.dtypes import DTYPES

        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    cls = type(scheme) if given else get_scheme_class(scheme)
    count = _count(positions)
    if count is not None:  # the ids alone, before a range of 2**40 is listed
        _within_budget(8.0 * count, max_memory, "positions", f"{count:,} positions")
    if isinstance(positions, range) and not cls.has_cells and count:
        # The encoding's memory, refused before the ids are made (a range is never listed).
        last = max(positions[0], positions[-1])
        built = scheme if given else build_scheme(scheme, params, length=max(1, last + 1))
        _within_budget(built.estimate_bytes(count), max_memory, "positions", f"{built.name} at {count:,} positions")
        return built.encoded(as_positions(np.arange(positions.start, positions.stop, positions.step, dtype=np.int64),
                                          real=cls.real_positions), dtype=dtype)
    values = None if positions is None else _positions_within_budget(positions, count, max_memory)
    if cls.has_cells:
        built = scheme if given else build_scheme(scheme, params)
        return built.encoded(_cell_ids(built, values, max_memory), dtype=dtype)
    if values is None:
        raise TypeError("encode() needs positions for a scheme along a line, e.g. range(512)")
    ids = as_positions(values, real=cls.real_positions)
    built = scheme if given else build_scheme(scheme, params, length=positions_length(ids))
    _within_budget(built.estimate_bytes(len(ids)), max_memory, "positions", f"{built.name} at {len(ids):,} positions")
    return built.encoded(ids, dtype=dtype)


def plot(kind: str, scheme, *, length: int | None = None, dtype: str | None = None, title: str | None = None, **options: Any):
    """Draw plot ``kind`` of ``scheme`` over positions 0 … length − 1 (default the command line's length,
    :data:`pecli.schemes.build.DEFAULT_LENGTH`): ``(Figure, notes)``.

    ``options`` are the kind's own (``bases``, ``pair``, ``head``, …; see ``pecli plot --help``), given
    as Python values; the notes say what the figure leaves out. Save with ``figure.savefig(path)``.
    """
    from pecli.render.figures import PlotRequest, Style, figure

    # The scheme as it would be built for this length (rope's context, learned's rows), and its own
    # parameters as the ones given, so that kinds drawing variants of it (other bases, other schemes) keep
    # them — as ``pecli plot`` does with the options typed.
    length = _default_length(length)
    scheme = scheme.at_length(int(length))
    given = {key: value for key, value in scheme.params().items()
             if value is not None and key not in getattr(scheme, "length_filled", ())}
    return figure(kind, PlotRequest(scheme, int(length), None, dtype, options, given), Style(title=title))


__all__ = ["__version__", "build_scheme", "check", "diff", "encode", "extension_report", "model_plan", "model_scheme", "plot",
           "preset", "verify", *_EXPORTS]
