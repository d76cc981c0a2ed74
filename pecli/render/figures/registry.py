"""The kinds of ``pecli plot``: one :class:`PlotKind` record each, in :data:`PLOTS`.

A record says everything the command needs about a kind: its name, a one-line summary, the
capability a scheme needs for it (:class:`~pecli.schemes.Capability`; None: every scheme), its own
options declared as :class:`~pecli.params.Parameter` (which kinds read an option is derived from the
records), the run keys it honours (``positions``, ``dtype``), its default size, and its draw function.
:func:`figure` builds the Figure of a kind from a :class:`PlotRequest` and a
:class:`~pecli.render.figures.canvas.Style`, and returns it with its notes.

The draw function of a record takes the blank Figure and the request and returns a
:class:`~pecli.render.figures.canvas.Drawing`; it only reads the request (defaults, variants of the
scheme) and calls one of the composable drawing functions of :mod:`~pecli.render.figures.matrices`,
:mod:`~pecli.render.figures.frequencies` or :mod:`~pecli.render.figures.scores`, which draw on an
Axes (or on a Figure, for kinds with several panels) and can be used on their own.

How to add a plot kind
----------------------
Write a drawing function ``draw_thing(axes, scheme, …) -> Drawing`` next to its family (it draws on
the Axes it is given and returns its suggested title and notes, never storing anything on the
Figure); declare any new option once as a module-level :class:`~pecli.params.Parameter` below; then
add one :class:`PlotKind` to :data:`PLOTS` with a small function that reads the request and calls
``draw_thing``. The command's choices, its settings, the check of which options apply to which kind
and the refusal of schemes without the capability all follow from the record. (Until the options of
``pecli plot`` are generated from the declarations, a new option also needs its ``typer.Option`` in
:func:`pecli.cli.plot.plot`.)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

import numpy as np

from pecli.numbers import integer
from pecli.dtypes import DTYPES
from pecli.errors import ConfigError, PecliError
from pecli.params import Parameter
from pecli.render.figures.canvas import DEFAULT_SIZE, Drawing, Style, finish, new_figure
from pecli.render.figures.matrices import draw_bias_heatmap, draw_encoding_heatmap, draw_similarity, draw_similarity_grid
from pecli.render.figures.scores import DEFAULT_DTYPES, EACH, draw_bias, draw_dot_distance, draw_precision
from pecli.render.side_by_side import SIDE_BY_SIDE_DIM, one_dim_note
from pecli.schemes import SCHEMES, Scheme, get_scheme_class
from pecli.schemes.base import Capability

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

#: Circle defaults where the base matters (the Conditions article draws d=2, whose only pair has ω = 1 for any base).
CIRCLE_DIM, CIRCLE_PAIR, CIRCLE_BASES, CIRCLE_POINTS = 4, 1, (1.0, 5.0, 10.0, 100.0), 8
#: More points than a circle can show apart (beyond this the ring is solid); keeps memory bounded.
MAX_CIRCLE_POINTS = 100_000
#: Run keys (not plot options) that only some kinds honour.
RUN_KEYS = ("positions", "dtype")

# -- the options of the kinds, each declared once (None: not given; the kind fills its default) ---------
HEAD = Parameter("head", int, None, "the head of a bias scheme to draw", minimum=0, default_text="every head")
BASES = Parameter("bases", tuple[float, ...], None, "one panel or curve per base", exclusive_minimum=0)
PAIR = Parameter("pair", int, None, "the frequency pair drawn", minimum=0, default_text=str(CIRCLE_PAIR))
POINTS = Parameter(
    "points", int, None, "how many positions (0 to N − 1) to place", minimum=1, maximum=MAX_CIRCLE_POINTS,
    default_text=str(CIRCLE_POINTS),
)
CELL = Parameter("cell", tuple[int, ...], None, "the grid cell compared with every cell, e.g. 3,5", minimum=0,
                 default_text="the centre")
SCHEMES_OPTION = Parameter("schemes", object, None, "schemes overlaid (comma-separated or a list)")
BAND = Parameter("band", bool, None, "draw the range over m as a band", default_text="true")
TRAIN_LENGTH = Parameter("train_length", int, None, "the training length", minimum=1)
CONTEXT = Parameter("context", int, None, "context length C, the serving context marked as a line (as pecli wavelengths)",
                    minimum=1, default_text="--length, itself max_position_embeddings with --hf-config")
DTYPES_OPTION = Parameter(
    "dtypes", object, None, "dtypes compared with float64 (comma-separated or a list)", default_text=",".join(DEFAULT_DTYPES)
)
WEIGHTS = Parameter("weights", str, None, "the checkpoint of the q/k projections (.safetensors or its index)")
COMPUTE_DTYPE = Parameter(
    "compute_dtype", str, None,
    f"form the angles in this dtype ({EACH}: in each of --dtypes) instead of rounding float64 values, as check's",
    choices=(*DTYPES, EACH),
)


@dataclass(frozen=True)
class PlotRequest:
    """What to draw: the scheme as configured, its length or positions, the dtype and the kind's options.

    Attributes
    ----------
    scheme, length:
        The scheme and the sequence length L.
    positions:
        Position ids given explicitly; None means 0 … L − 1.
    dtype:
        The dtype asked for (``--dtype``), or None.
    options:
        The plot options by name; None (or absent) where not given.
    given_params:
        The scheme parameters as the user gave them, so that kinds drawing variants of the scheme (other
        bases, other schemes) keep them.
    max_bytes:
        The memory budget of work the kind sizes from what it reads (a checkpoint's tensors); None: no bound.
    query_scale:
        The model's factor on the query at each position besides cos and sin (its logit scale), which
        the scores a kind draws carry; None: none.
    """

    scheme: Scheme
    length: int
    positions: np.ndarray | None = None
    dtype: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    given_params: Mapping[str, Any] = field(default_factory=dict)
    max_bytes: int | None = None
    query_scale: Callable[[np.ndarray], np.ndarray] | None = None

    def option(self, name: str) -> Any:
        return self.options.get(name)

    @property
    def position_ids(self) -> np.ndarray:
        return self.positions if self.positions is not None else np.arange(self.length, dtype=np.int64)

    @property
    def context(self) -> int:
        """The context (test) length: the scheme's own context length when it has one, else L."""
        return int(self.scheme.context_length or self.length)

    def gave(self, parameter: str) -> bool:
        """Whether the user gave scheme parameter ``parameter``, under its name or an alias."""
        aliases = type(self.scheme).aliases
        return any(aliases.get(key, key) == parameter for key in self.given_params)

    def variant(self, name: str | None = None, **changes: Any) -> Scheme:
        """Scheme ``name`` (default: this one) from the user's parameters that apply to it and ``changes``
        (:func:`pecli.config.variant`)."""
        from pecli.schemes.build import variant

        return variant(name or self.scheme.name, self.given_params, self.length, **changes)


@dataclass(frozen=True)
class PlotKind:
    """One kind of figure: what it needs and how it is drawn.

    Attributes
    ----------
    name, summary:
        The kind as typed, and one line for ``--help``.
    needs:
        The capability a scheme needs (None: every scheme can be drawn).
    options:
        The kind's own options.
    reads:
        The run keys of :data:`RUN_KEYS` the kind honours.
    draw:
        ``draw(figure, request) -> Drawing``: draws on the blank Figure.
    size:
        Default figure size in inches.
    on_grid:
        Whether it draws the cells of a grid (rope-nd, sinusoidal-nd) instead of positions along a line.
    """

    name: str
    summary: str
    needs: Capability | None
    options: tuple[Parameter, ...]
    draw: Callable[["Figure", PlotRequest], Drawing]
    reads: tuple[str, ...] = ()
    size: tuple[float, float] = DEFAULT_SIZE
    on_grid: bool = False

    @property
    def option_names(self) -> tuple[str, ...]:
        return tuple(option.name for option in self.options)

    def accepts(self, scheme: Scheme | type[Scheme]) -> bool:
        positions = scheme.on_grid if self.on_grid else not scheme.has_cells
        return positions and (self.needs is None or scheme.has(self.needs))

    def check(self, scheme: Scheme) -> None:
        """Raise :class:`PecliError`, naming the schemes it can draw, unless the kind can draw ``scheme``."""
        if scheme.has_cells and not self.on_grid:
            able = [name for name, kind in PLOTS.items() if kind.accepts(scheme)]
            others = f"kinds that draw it: {', '.join(able)}" if able else "no plot kind draws it yet; see pecli wavelengths"
            raise PecliError(
                f"plot {self.name} draws positions along a line; {scheme.name} has {scheme.position_rank}-D positions ({others})"
            )
        if not self.accepts(scheme):
            raise PecliError(
                f"plot {self.name} does not support scheme {scheme.name!r} ({scheme.kind}); "
                f"it supports: {', '.join(supported_schemes(self.name))}"
            )


# -- from a request to a drawing, per kind --------------------------------------------------------------
def _frequency_drawing(name: str) -> Callable[..., Drawing]:
    """The drawing function ``name`` of :mod:`~pecli.render.figures.frequencies`, imported when one is drawn (with
    :mod:`pecli.wavelengths` under it: ``pecli plot --help`` draws nothing)."""
    from pecli.render.figures import frequencies

    return getattr(frequencies, name)


def _heatmap(figure: "Figure", request: PlotRequest) -> Drawing:
    scheme, head = request.scheme, request.option("head")
    if scheme.has(Capability.BIAS):
        return draw_bias_heatmap(figure, scheme, request.position_ids, head=head)
    if head is not None:
        raise ConfigError("head", f"applies to bias schemes (alibi, t5, relative), not {scheme.name!r}")
    return draw_encoding_heatmap(figure.add_subplot(), scheme, request.position_ids, dtype=request.dtype)


def _circle(figure: "Figure", request: PlotRequest) -> Drawing:
    fixed = request.gave("inv_freq")  # given frequencies: one panel, at their own dimension
    if fixed and request.option("bases"):
        raise ConfigError("bases", "draws one panel per base; --inv-freq gives the frequencies themselves: leave one out")
    bases = request.option("bases") or ((None,) if request.gave("base") or fixed else CIRCLE_BASES)
    dim = {} if request.gave("dim") or fixed else {"dim": CIRCLE_DIM}
    variants = [request.variant(**dim, **({"base": base} if base is not None else {})) for base in bases]
    pair = request.option("pair")
    positions = range(request.option("points") or CIRCLE_POINTS)
    return _frequency_drawing("draw_circles")(figure, variants, positions, pair=CIRCLE_PAIR if pair is None else pair)


def _dot_distance(figure: "Figure", request: PlotRequest) -> Drawing:
    """Every overlaid scheme at one dimension (:mod:`pecli.render.side_by_side`), with a note saying so."""
    schemes = overlaid(request)
    # The model's attention scales its own scheme's queries (any base); another scheme drawn beside it is not the model's.
    scales = [request.query_scale if scheme.name == request.scheme.name else None for scheme in schemes]
    drawing = draw_dot_distance(figure.add_subplot(), schemes, request.length, band=request.option("band") is not False,
                                query_scales=scales)
    if len({s.name for s in schemes}) > 1 and any("dim" in s.params() for s in schemes):
        dim = request.given_params.get("dim", SIDE_BY_SIDE_DIM)
        drawing.notes.append(one_dim_note(int(dim), given="dim" in request.given_params))
    return drawing


def _similarity(figure: "Figure", request: PlotRequest) -> Drawing:
    return draw_similarity(figure.add_subplot(), request.scheme, request.position_ids, dtype=request.dtype)


def _similarity_grid(figure: "Figure", request: PlotRequest) -> Drawing:
    return draw_similarity_grid(figure.add_subplot(), request.scheme, request.option("cell"), dtype=request.dtype)


def _wavelengths(figure: "Figure", request: PlotRequest) -> Drawing:
    """At ``--context`` C when given, the scheme taken as configured at C (a dynamic scaling's base for
    C), as ``pecli wavelengths --context`` takes it; else at its own context length or L."""
    scheme, given = request.scheme, request.option("context")
    if given is not None:
        scheme = scheme.at_length(given)
    drawing = _frequency_drawing("draw_wavelengths")(
        figure.add_subplot(), scheme, context=given or request.context,
        train_length=request.option("train_length") or scheme.training_length, model_length=scheme.model_length,
    )
    return dataclasses.replace(drawing, schemes=[scheme])  # what was drawn: the scheme at C


def _extrapolation(figure: "Figure", request: PlotRequest) -> Drawing:
    """Trained on --train-length (or the model's own training length, as ``check extrapolation``: a
    scaling's pre-training length, else ``max_position_embeddings``; else half the length), tested at
    the context length.

    An HF config's pre-training length is at least --length when --length was not raised: then the test
    length is the model's own context (``max_position_embeddings``), with a note.
    """
    from pecli.analysis.extrapolation import default_train_length

    scheme, context, given = request.scheme, request.context, request.option("train_length")
    train_length = given or default_train_length(context, scheme)  # as check extrapolation takes it
    longest = scheme.model_length
    switched = not given and train_length >= context and bool(longest) and longest > train_length
    if switched:
        context = longest
    if not given and train_length >= context:
        raise ConfigError("length", f"nothing to extrapolate: the model was trained on {integer(train_length)} positions and "
                          f"L = {integer(context)} goes no further; give --length above {integer(train_length)}")
    if train_length >= context:
        raise ConfigError("train_length", f"must be below the test length {context} (--length), got {train_length}")
    pretraining = scheme.without_extension()
    drawing = _frequency_drawing("draw_extrapolation")(
        figure.add_subplot(), scheme, train_length=train_length, length=context,
        train_scheme=None if pretraining is scheme else pretraining,
    )
    if switched:
        drawing.notes.append(f"tested at max_position_embeddings = {longest} (--length is below the training length {train_length})")
    return drawing


def _bias(figure: "Figure", request: PlotRequest) -> Drawing:
    return draw_bias(figure.add_subplot(), request.scheme, request.length, head=request.option("head"))


def _precision(figure: "Figure", request: PlotRequest) -> Drawing:
    given = request.option("dtypes")
    dtypes = dtype_list(given) if given is not None else ((request.dtype,) if request.dtype else DEFAULT_DTYPES)
    return draw_precision(figure.add_subplot(), request.scheme, request.length, dtypes=dtypes,
                          compute_dtype=request.option("compute_dtype"))


def _rope_usage(figure: "Figure", request: PlotRequest) -> Drawing:
    from pecli.weights.usage import usage_of
    from pecli.render.figures.usage import draw_rope_usage

    return draw_rope_usage(figure, usage_of(request.option("weights"), request.scheme, request.max_bytes))


#: Every plot kind, in the order the help lists them.
PLOTS: dict[str, PlotKind] = {
    kind.name: kind
    for kind in (
        PlotKind("heatmap", "the (L, d) encoding, or the (L, L) bias of bias schemes", None, (HEAD,), _heatmap,
                 reads=RUN_KEYS, size=(8.0, 5.5)),
        PlotKind("circle", "positions on the sin/cos circle of one frequency pair, one panel per base",
                 Capability.FREQUENCIES, (BASES, PAIR, POINTS), _circle, size=(8.0, 8.0)),
        PlotKind("dot-distance", "the position-only score against distance", None, (SCHEMES_OPTION, BASES, BAND), _dot_distance),
        PlotKind("similarity", "cosine similarity between positions", Capability.VECTORS, (), _similarity,
                 reads=RUN_KEYS, size=(6.5, 5.5)),
        PlotKind("similarity-2d", "cosine similarity of one grid cell to every cell, as an image", Capability.VECTORS,
                 (CELL,), _similarity_grid, reads=("dtype",), size=(6.5, 5.5), on_grid=True),
        PlotKind("wavelengths", "per frequency pair", Capability.FREQUENCIES, (CONTEXT, TRAIN_LENGTH), _wavelengths),
        PlotKind("extrapolation", "angles seen in training vs at test length", Capability.FREQUENCIES, (TRAIN_LENGTH,),
                 _extrapolation),
        PlotKind("bias", "bias against distance, one line per head", Capability.BIAS, (HEAD,), _bias),
        PlotKind("precision", "error against float64 per dtype", None, (DTYPES_OPTION, COMPUTE_DTYPE), _precision,
                 reads=("dtype",)),
        PlotKind("rope-usage", "a checkpoint's q/k norm per layer and frequency pair", Capability.ROTARY, (WEIGHTS,),
                 _rope_usage, size=(10.0, 5.0)),
    )
}


# -- looking up, checking, drawing --------------------------------------------------------------------
def lookup(kind: str) -> PlotKind:
    """The record of ``kind``; :class:`ConfigError` listing the kinds if there is none."""
    if kind not in PLOTS:
        raise ConfigError("kind", f"unknown plot kind {kind!r}; kinds: {', '.join(PLOTS)}")
    return PLOTS[kind]


def supported_schemes(kind: str) -> tuple[str, ...]:
    """Names of the registered schemes that plot ``kind`` can draw."""
    record = lookup(kind)
    return tuple(name for name, cls in SCHEMES.items() if record.accepts(cls))


def plot_options() -> tuple[Parameter, ...]:
    """Every kind's options, each once, in the order of :data:`PLOTS`; the help says which kinds read it."""
    options: dict[str, Parameter] = {}
    for record in PLOTS.values():
        for option in record.options:
            options.setdefault(option.name, option)
    return tuple(dataclasses.replace(o, help=f"{', '.join(applies_to(o.name))}: {o.help}") for o in options.values())


def applies_to(name: str) -> tuple[str, ...]:
    """The kinds that read option (or run key) ``name``."""
    return tuple(kind for kind, record in PLOTS.items() if name in record.option_names or name in record.reads)


def check_applicable(kind: str, given: set[str]) -> None:
    """Raise :class:`PecliError` if an option or run key in ``given`` does not apply to ``kind``."""
    for name in sorted(given):
        kinds = applies_to(name)
        if kind not in kinds:
            option = "--" + name.replace("_", "-")
            raise PecliError(f"{option} does not apply to plot {kind} (it applies to {', '.join(kinds)})")


def figure(kind: str, request: PlotRequest, style: Style = Style()) -> tuple["Figure", list[str]]:
    """The Figure of plot ``kind`` for ``request`` in ``style``, and its notes (what was left out)."""
    canvas, drawing = draw(kind, request, style)
    return canvas, drawing.notes


def draw(kind: str, request: PlotRequest, style: Style = Style()) -> tuple["Figure", Drawing]:
    """The finished Figure of plot ``kind`` and its :class:`Drawing`, whose notes are each given once and
    whose ``schemes`` are every scheme drawn (the request's scheme when the kind draws only it)."""
    record = lookup(kind)
    record.check(request.scheme)
    canvas = new_figure(style.size or record.size, style.dpi)
    with np.errstate(over="ignore"):  # see save_figure: matplotlib's log axes near float64's end
        drawing = record.draw(canvas, request)
    finish(canvas, drawing, style.title)
    return canvas, Drawing(drawing.title, drawing.unique_notes, list(drawing.schemes) or [request.scheme])


def draw_panels(kind: str, panels: list[tuple[str, PlotRequest | None]], style: Style = Style()) -> tuple["Figure", list[Drawing]]:
    """One figure with a panel per ``(label, request)`` (a model's layer groups), stacked; a panel whose
    request is None says that its layers have no position encoding. Each panel is titled with its
    label and its drawing's title; the figure grows by the kind's height per panel."""
    record = lookup(kind)
    width, height = style.size or record.size
    canvas = new_figure((width, height * len(panels)), style.dpi)
    drawings = []
    for sub, (label, request) in zip(canvas.subfigures(len(panels), 1) if len(panels) > 1 else [canvas], panels):
        if request is None:
            sub.suptitle(f"{label}: no position encoding", fontsize=11)
            continue
        record.check(request.scheme)
        with np.errstate(over="ignore"):  # see save_figure
            drawing = record.draw(sub, request)
        titled = Drawing(f"{label} — {drawing.title}", drawing.unique_notes, list(drawing.schemes) or [request.scheme])
        finish(sub, titled, None if style.title is None else f"{style.title} — {label}")
        drawings.append(Drawing(drawing.title, titled.notes, titled.schemes))
    return canvas, drawings


# -- options given as lists ------------------------------------------------------------------------------
def overlaid(request: PlotRequest) -> list[Scheme]:
    """The schemes a dot-distance plot overlays: --schemes × --bases (a base only where the scheme has one),
    every scheme that has a dimension at the same one (``--dim``, else :data:`SIDE_BY_SIDE_DIM`)."""
    given = request.option("schemes")
    names = name_list("schemes", given) if given else [request.scheme.name]
    bases = request.option("bases")
    one_dim = {} if len(set(names)) < 2 or request.gave("dim") else {"dim": SIDE_BY_SIDE_DIM}
    out = []
    for name in names:
        for base in bases if bases and "base" in get_scheme_class(name).parameters() else (None,):
            out.append(request.variant(name, **one_dim, **({"base": base} if base is not None else {})))
    return out


def name_list(key: str, value: Any) -> list[str]:
    """Names from ``"a,b"`` or a YAML list ``[a, b]``."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not items or not all(isinstance(i, str) and i.strip() for i in items):
        raise ConfigError(key, f"expected comma-separated names, got {value!r}")
    return [item.strip() for item in items]


def dtype_list(value: Any) -> tuple[str, ...]:
    """dtype names from ``"a,b"`` or a list, each one pecli knows."""
    from pecli.dtypes import DTYPES

    names = tuple(name_list("dtypes", value))
    for name in names:
        if name not in DTYPES:
            raise ConfigError("dtypes", f"unknown dtype {name!r}; valid: {', '.join(DTYPES)}")
    return names
