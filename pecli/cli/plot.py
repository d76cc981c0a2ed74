"""``pecli plot KIND``: draw a scheme as a figure and write it as .png, .svg or .pdf.

The figures are drawn by :mod:`pecli.render.plots` (imported only when a plot is drawn, with
matplotlib); this module parses the options, builds the schemes to compare, and saves the figure.
"""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from pecli.cli.common import OUTPUT_PANEL, ForceOption, JsonOption, QuietOption, message, print_json, scheme_command
from pecli.config import Setting, Spec, build_scheme
from pecli.dtypes import DTYPES
from pecli.errors import ConfigError, PecliError
from pecli.io import check_target, write_atomic
from pecli.schemes import get_scheme_class

from pecli.render.plots import FIGURE_SUFFIXES as SUFFIXES
from pecli.render.plots import PLOT_KINDS as KINDS

PLOT_PANEL = "Plot"
#: Circle plot defaults where the base matters (seed 000 draws d=2, whose only pair has ω = 1 for any base).
CIRCLE_DIM, CIRCLE_PAIR, CIRCLE_BASES, CIRCLE_POINTS = 4, 1, (1.0, 5.0, 10.0, 100.0), 8
DEFAULT_DTYPES = ("float32", "float16", "bfloat16")

SETTINGS = (
    Setting("kind", str, "heatmap", "what to draw", choices=KINDS),
    Setting("out", str, None, "output file: .png, .svg or .pdf [default: <kind>.png]"),
    Setting("dpi", int, 100, "resolution (dots per inch)", minimum=10, maximum=1200),
    Setting("size", str, None, "figure size WxH in inches, e.g. 8x5"),
    Setting("title", str, None, "figure title [default: the scheme and its parameters]"),
    Setting("head", int, None, "bias schemes: the head to draw [default: every head]", minimum=0),
    Setting("bases", tuple[float, ...], None, "circle, dot-distance: one panel or curve per base"),
    Setting("pair", int, None, "circle: the frequency pair drawn", minimum=0),
    Setting("points", int, None, "circle: how many positions (0 … N−1) to place", minimum=1),
    Setting("schemes", object, None, "dot-distance: schemes overlaid (comma-separated or a list)"),
    Setting("band", bool, None, "dot-distance: draw the range over m as a band"),
    Setting("train_length", int, None, "wavelengths, extrapolation: the training length", minimum=1),
    Setting("dtypes", object, None, "precision: dtypes compared with float64 (comma-separated or a list)"),
    Setting("computed", bool, None, "precision: form the angles in each dtype instead of rounding float64 values"),
)

#: Which plot kinds each kind-specific option applies to.
APPLIES_TO: dict[str, tuple[str, ...]] = {
    "positions": ("heatmap", "similarity"),
    "head": ("heatmap", "bias"),
    "bases": ("circle", "dot-distance"),
    "pair": ("circle",),
    "points": ("circle",),
    "schemes": ("dot-distance",),
    "band": ("dot-distance",),
    "train_length": ("wavelengths", "extrapolation"),
    "dtypes": ("precision",),
    "computed": ("precision",),
    "dtype": ("heatmap", "similarity", "precision"),
}


def _opt(*names: str, help: str) -> Any:
    return typer.Option(*names, help=help, rich_help_panel=PLOT_PANEL, show_default=False)


@scheme_command(*SETTINGS)
def plot(
    spec: Spec,
    kind: Annotated[Optional[str], typer.Argument(metavar="KIND", help=f"{', '.join(KINDS)} [default: heatmap]", show_default=False)] = None,
    out: Annotated[Optional[str], typer.Option("--out", "-o", help="output file: .png, .svg or .pdf [default: KIND.png]", rich_help_panel=OUTPUT_PANEL, show_default=False)] = None,
    dpi: Annotated[Optional[int], _opt("--dpi", help="resolution in dots per inch [default: 100]")] = None,
    size: Annotated[Optional[str], _opt("--size", help="figure size WxH in inches, e.g. 8x5")] = None,
    title: Annotated[Optional[str], _opt("--title", help="figure title [default: the scheme and its parameters]")] = None,
    head: Annotated[Optional[int], _opt("--head", help="heatmap, bias: the head of a bias scheme [default: all heads]")] = None,
    bases: Annotated[Optional[str], _opt("--bases", help="circle, dot-distance: bases to compare, e.g. 1,5,10,100")] = None,
    pair: Annotated[Optional[int], _opt("--pair", help=f"circle: frequency pair i drawn [default: {CIRCLE_PAIR}]")] = None,
    points: Annotated[Optional[int], _opt("--points", help=f"circle: positions 0 … N−1 placed [default: {CIRCLE_POINTS}]")] = None,
    schemes: Annotated[Optional[str], _opt("--schemes", help="dot-distance: schemes overlaid, e.g. sinusoidal,rope,alibi")] = None,
    band: Annotated[Optional[bool], _opt("--band/--no-band", help="dot-distance: the range over m as a band [default: on]")] = None,
    train_length: Annotated[Optional[int], _opt("--train-length", help="wavelengths, extrapolation: training length; the test length is --length [default: rope's original_max_position; extrapolation: else half of --length]")] = None,
    dtypes: Annotated[Optional[str], _opt("--dtypes", help="precision: dtypes compared with float64 [default: float32,float16,bfloat16]")] = None,
    computed: Annotated[Optional[bool], _opt("--computed/--cast", help="precision: form the angles in each dtype, or round the float64 values [default: cast]")] = None,
    force: ForceOption = False,
    json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Draw a scheme and write the figure as .png, .svg or .pdf.

    KIND is one of: heatmap (the (L, d) encoding, or the (L, L) bias of bias schemes), circle
    (positions on the sin/cos circle of one frequency pair, one panel per base), dot-distance (the
    position-only score against distance), similarity (cosine similarity between positions),
    wavelengths (per frequency pair), extrapolation (angles seen in training vs at test length), bias
    (bias against distance, one line per head), precision (error against float64 per dtype).
    """
    settings = spec.settings
    kind = settings["kind"]
    _check_applicable(kind, settings, spec)
    from pecli.render import plots

    plots.check_supported(kind, spec.scheme.name)
    target = check_target(settings["out"] or f"{kind}.png", suffixes=SUFFIXES, force=force)
    common = {
        "title": settings["title"],
        "size": plots.parse_figure_size(settings["size"]) if settings["size"] else None,
        "dpi": settings["dpi"],
    }
    figure = _draw(kind, spec, plots, common)
    write_atomic(target, lambda stream: plots.save_figure(figure, stream, target.suffix.lower()[1:]), force=force)
    notes = plots.figure_notes(figure)
    if json:
        print_json({"kind": kind, **spec.describe(), "out": str(target), "notes": notes})
    for note in notes:
        message(f"note: {note}", quiet=quiet or json)
    message(f"wrote {target}", quiet=quiet or json)


def _check_applicable(kind: str, settings: dict[str, Any], spec: Spec) -> None:
    given = {name for name in APPLIES_TO if settings.get(name) is not None}
    if spec.given_positions is not None:
        given.add("positions")
    if spec.dtype is not None:
        given.add("dtype")
    for name in sorted(given):
        if kind not in APPLIES_TO[name]:
            option = "--" + name.replace("_", "-")
            raise PecliError(f"{option} does not apply to plot {kind} (it applies to {', '.join(APPLIES_TO[name])})")


def _variant(spec: Spec, name: str | None = None, **changes: Any):
    """The spec's scheme, or scheme ``name``, rebuilt with ``changes`` and the user's applicable parameters."""
    from pecli.config import scheme_parameters

    name = name or spec.scheme.name
    cls = get_scheme_class(name)
    known = set(scheme_parameters(cls)) | set(cls.aliases)
    params = {key: value for key, value in spec.given_params.items() if key in known}
    for key, value in changes.items():
        if key in known:
            for alias, target in cls.aliases.items():
                if target == key:
                    params.pop(alias, None)
            params[key] = value
    return build_scheme(name, params, length=spec.length)


def _given(spec: Spec, *keys: str) -> bool:
    return any(key in spec.given_params for key in keys)


def _draw(kind: str, spec: Spec, plots: Any, common: dict[str, Any]):
    settings, scheme = spec.settings, spec.scheme
    if kind == "heatmap":
        return plots.heatmap_figure(scheme, spec.positions, head=settings["head"], dtype=spec.dtype, **common)
    if kind == "similarity":
        return plots.similarity_figure(scheme, spec.positions, dtype=spec.dtype, **common)
    if kind == "bias":
        return plots.bias_figure(scheme, spec.length, head=settings["head"], **common)
    if kind == "circle":
        bases = settings["bases"] or ((None,) if _given(spec, "base", "rope_theta") else CIRCLE_BASES)
        dim = {} if _given(spec, "dim", "head_dim") else {"dim": CIRCLE_DIM}
        variants = [_variant(spec, **dim, **({"base": b} if b is not None else {})) for b in bases]
        positions = range(settings["points"] or CIRCLE_POINTS)
        pair = CIRCLE_PAIR if settings["pair"] is None else settings["pair"]
        return plots.circle_figure(variants, positions, pair=pair, **common)
    if kind == "wavelengths":
        return plots.wavelengths_figure(
            scheme, context=_context(spec), train_length=settings["train_length"] or getattr(scheme, "pretraining_length", None),
            max_position_embeddings=getattr(scheme, "max_position_embeddings", None), **common,
        )
    if kind == "extrapolation":
        from pecli.analysis.extrapolation import default_train_length

        context = _context(spec)
        original = getattr(scheme, "pretraining_length", None)
        train_length = settings["train_length"] or original or default_train_length(context)
        longest = getattr(scheme, "max_position_embeddings", None)
        switched = not settings["train_length"] and train_length >= context and bool(longest) and longest > train_length
        if switched:  # an HF config: its pre-training length against its extended context
            context = longest
        if train_length >= context:
            raise ConfigError("train_length", f"must be below the test length {context} (--length), got {train_length}")
        figure = plots.extrapolation_figure(scheme, train_length=train_length, length=context, train_scheme=_pretraining(scheme), **common)
        if switched:
            plots.add_note(figure, f"tested at max_position_embeddings = {longest} (--length is below the training length {train_length})")
        return figure
    if kind == "dot-distance":
        return plots.dot_distance_figure(_overlaid(spec), spec.length, band=settings["band"] is not False, **common)
    if kind == "precision":
        names = _dtype_list(settings["dtypes"]) if settings["dtypes"] else ((spec.dtype,) if spec.dtype else DEFAULT_DTYPES)
        return plots.precision_figure(scheme, spec.length, dtypes=names, computed=bool(settings["computed"]), **common)
    raise AssertionError(kind)  # pragma: no cover  (kind is validated by its Setting)


def _pretraining(scheme):
    """The scheme as pre-training saw it when a context-extension scaling changed it, else None."""
    original = scheme.without_extension()
    return None if original is scheme else original


def _context(spec: Spec) -> int:
    """The context (test) length: rope's ``context`` when it has one, else the sequence length."""
    return int(getattr(spec.scheme, "context", None) or spec.length)


def _overlaid(spec: Spec) -> list:
    """The schemes a dot-distance plot overlays: --schemes × --bases (base only where it applies)."""
    names = _names("schemes", spec.settings["schemes"]) if spec.settings["schemes"] else [spec.scheme.name]
    out = []
    for name in names:
        cls = get_scheme_class(name)
        bases = spec.settings["bases"] if spec.settings["bases"] and "base" in {f for f in cls.__dataclass_fields__} else (None,)
        for base in bases:
            out.append(_variant(spec, name, **({"base": base} if base is not None else {})))
    return out


def _names(key: str, value: Any) -> list[str]:
    """Names from ``"a,b"`` or a YAML list ``[a, b]``."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not items or not all(isinstance(i, str) and i.strip() for i in items):
        raise ConfigError(key, f"expected comma-separated names, got {value!r}")
    return [item.strip() for item in items]


def _dtype_list(value: Any) -> tuple[str, ...]:
    names = tuple(_names("dtypes", value))
    for name in names:
        if name not in DTYPES:
            raise ConfigError("dtypes", f"unknown dtype {name!r}; valid: {', '.join(DTYPES)}")
    return names
