"""The figures of ``pecli plot``: one function per kind, each returning a :class:`matplotlib.figure.Figure`.

matplotlib is imported here only inside the functions that draw (through :func:`new_figure`), never at
module import, so that ``import pecli.cli`` stays fast. Figures are built on
:class:`matplotlib.figure.Figure` with an Agg canvas, never through pyplot's global state; the caller
saves them (:func:`save_figure`).

Every function takes schemes (and positions or lengths) and calls the core for the numbers: the schemes
themselves (``encode``, ``angles``, ``inv_freq``, ``bias``) and the analyses of :mod:`pecli.analysis`.
Inputs too large to draw point by point are downsampled by a regular stride, and the figure says so in
a note under the axes (see :func:`figure_notes`), never silently.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Sequence

import numpy as np

from pecli.analysis.spectrum import wavelengths_of
from pecli.errors import ConfigError, PecliError
from pecli.schemes import SCHEMES, Scheme, as_positions

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

#: The kinds of ``pecli plot``, in the order the help lists them.
PLOT_KINDS = ("heatmap", "circle", "dot-distance", "similarity", "wavelengths", "extrapolation", "bias", "precision")

#: File formats a figure can be saved in (by ``--out`` suffix).
FIGURE_SUFFIXES = (".png", ".svg", ".pdf")

#: Default figure size in inches (width, height), per kind.
DEFAULT_SIZES: dict[str, tuple[float, float]] = {
    "heatmap": (8.0, 5.5),
    "circle": (8.0, 8.0),
    "dot-distance": (8.0, 5.0),
    "similarity": (6.5, 5.5),
    "wavelengths": (8.0, 5.0),
    "extrapolation": (8.0, 5.0),
    "bias": (8.0, 5.0),
    "precision": (8.0, 5.0),
}
DEFAULT_DPI = 100

#: Most rows (positions) and columns (components) a heatmap draws; beyond, a regular stride.
MAX_HEATMAP_ROWS = 1024
MAX_HEATMAP_COLUMNS = 1024
#: Most positions per side of an (L, L) matrix (similarity, bias heatmap of one head).
MAX_MATRIX_SIDE = 1024
#: Most positions per side of each panel of a grid of heads, and most heads in the grid.
MAX_GRID_SIDE = 256
MAX_GRID_HEADS = 16
#: Most heads drawn as separate lines (bias, dot-distance).
MAX_LINES = 16
#: Most points of a curve (distances, positions); beyond, a regular stride.
MAX_CURVE_POINTS = 8192
#: Most points labelled with their position on the circle plot.
MAX_LABELLED_POINTS = 32
#: Largest figure side in pixels (Agg's own limit is 2^16).
MAX_PIXELS = 16384


# -- which scheme each kind supports --------------------------------------------------------------------
def _has_frequencies(cls: type[Scheme]) -> bool:
    return hasattr(cls, "inv_freq") and hasattr(cls, "angles")


def _has_vectors(cls: type[Scheme]) -> bool:
    return cls.kind in ("additive", "rotary")


def _is_bias(cls: type[Scheme]) -> bool:
    return cls.kind == "bias"


_SUPPORTS: dict[str, Callable[[type[Scheme]], bool]] = {
    "heatmap": lambda cls: True,
    "circle": _has_frequencies,
    "dot-distance": lambda cls: True,
    "similarity": _has_vectors,
    "wavelengths": _has_frequencies,
    "extrapolation": _has_frequencies,
    "bias": _is_bias,
    "precision": lambda cls: True,
}


def supported_schemes(kind: str) -> tuple[str, ...]:
    """Names of the registered schemes that plot ``kind`` can draw."""
    check_kind(kind)
    return tuple(name for name, cls in SCHEMES.items() if _SUPPORTS[kind](cls))


def check_kind(kind: str) -> None:
    """Raise :class:`ConfigError` (listing the kinds) unless ``kind`` is a plot kind."""
    if kind not in PLOT_KINDS:
        raise ConfigError("kind", f"unknown plot kind {kind!r}; kinds: {', '.join(PLOT_KINDS)}")


def check_supported(kind: str, scheme_name: str) -> None:
    """Raise :class:`PecliError` (listing what is supported) unless plot ``kind`` can draw the scheme."""
    supported = supported_schemes(kind)
    if scheme_name not in supported:
        raise PecliError(
            f"plot {kind} does not support scheme {scheme_name!r} ({SCHEMES[scheme_name].kind}); "
            f"it supports: {', '.join(supported)}"
        )


# -- figures: creating, annotating, saving --------------------------------------------------------------
def parse_figure_size(value: Any) -> tuple[float, float]:
    """``"8x6"`` → ``(8.0, 6.0)`` inches."""
    text = str(value).strip().lower().replace("×", "x")
    parts = text.split("x")
    try:
        width, height = (float(part) for part in parts)
    except ValueError:
        raise ConfigError("size", f"expected WxH in inches, such as 8x5, got {value!r}") from None
    if not (0 < width <= 100 and 0 < height <= 100):
        raise ConfigError("size", f"width and height must be in (0, 100] inches, got {value!r}")
    return width, height


def new_figure(kind: str, size: tuple[float, float] | None = None, dpi: float = DEFAULT_DPI) -> "Figure":
    """An empty constrained-layout Figure on an Agg canvas (no pyplot)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    width, height = size or DEFAULT_SIZES[kind]
    if max(width, height) * dpi > MAX_PIXELS:
        raise ConfigError("dpi", f"{width:g}x{height:g} inches at {dpi:g} dpi exceeds {MAX_PIXELS} pixels a side")
    figure = Figure(figsize=(width, height), dpi=dpi, layout="constrained")
    FigureCanvasAgg(figure)
    figure._pecli_notes = []  # type: ignore[attr-defined]
    return figure


def add_note(figure: "Figure", note: str) -> None:
    """Add a note (downsampling, clipping…) in small print under the axes."""
    notes = figure._pecli_notes  # type: ignore[attr-defined]
    notes.append(note)
    figure.supxlabel("\n".join(f"note: {n}" for n in notes), fontsize=8, color="0.3")


def figure_notes(figure: "Figure") -> list[str]:
    """The notes a figure carries (what was downsampled or left out)."""
    return list(getattr(figure, "_pecli_notes", []))


def set_title(figure: "Figure", default: str, title: str | None) -> None:
    """``title`` if given, else ``default`` ("scheme params: what"), broken after the scheme when long."""
    if title is None and len(default) > 80 and ": " in default:
        import textwrap

        head, tail = default.split(": ", 1)
        default = "\n".join([*textwrap.wrap(head + ":", 95), *textwrap.wrap(tail, 95)])
    figure.suptitle(title if title is not None else default, fontsize=11)


def save_figure(figure: "Figure", stream: BinaryIO, fmt: str) -> None:
    """Write ``figure`` to ``stream`` as ``png``, ``svg`` or ``pdf``, without timestamps."""
    import matplotlib

    metadata: dict[str, Any] = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[fmt]
    with matplotlib.rc_context({"svg.hashsalt": "pecli", "svg.fonttype": "path"}):
        figure.savefig(stream, format=fmt, metadata=metadata)


# -- describing ---------------------------------------------------------------------------------------
def _number(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def describe(scheme: Scheme, *, skip: Sequence[str] = ()) -> str:
    """``"rope dim=128 base=10000 layout=half"``: the scheme and its parameters, for titles and legends.

    The first three parameters are always shown; the others only where they differ from their default
    (a scaling's ``factor``, say), and rope's ``context`` only for the scalings that read it.
    """
    parts = [scheme.name]
    for index, (name, parameter) in enumerate(scheme.parameters().items()):
        value = getattr(scheme, name)
        if name in skip or value is None or isinstance(value, (dict, list, tuple)):
            continue
        if index >= 3 and value == parameter.default:
            continue
        if name == "context" and getattr(scheme, "scaling", None) not in ("dynamic", "longrope"):
            continue
        parts.append(f"{name}={_number(value)}")
    return " ".join(parts)


def downsample(values: np.ndarray, limit: int) -> tuple[np.ndarray, int]:
    """Every ``step``-th value so that at most ``limit`` remain; returns (values, step)."""
    step = max(1, math.ceil(values.size / limit))
    return values[::step], step


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _stride_note(what: str, shown: int, total: int, step: int) -> str:
    return f"{what}: every {_ordinal(step)} of {total} drawn ({shown} shown)"


def _grid(count: int) -> tuple[int, int]:
    columns = math.ceil(math.sqrt(count))
    return math.ceil(count / columns), columns


def _position_axis(positions: np.ndarray) -> tuple[float, float] | None:
    """(first, last) if positions are evenly spaced (then axes show position ids), else None."""
    if positions.size < 2:
        return float(positions[0]), float(positions[0])
    steps = np.diff(positions)
    if np.all(steps == steps[0]) and steps[0] > 0:
        return float(positions[0]), float(positions[-1])
    return None


def _extent(rows: np.ndarray, columns: tuple[float, float]) -> tuple[tuple[float, float, float, float], bool]:
    """imshow extent with position ids on the rows when they are evenly spaced."""
    span = _position_axis(rows)
    left, right = columns
    if span is None:
        return (left, right, rows.size - 0.5, -0.5), False
    first, last = span
    half = (last - first) / max(rows.size - 1, 1) / 2 if rows.size > 1 else 0.5
    return (left, right, last + half, first - half), True


def _square_extent(positions: np.ndarray) -> tuple[tuple[float, float, float, float], bool]:
    """imshow extent of an (n, n) matrix over positions: position ids when evenly spaced, else rows."""
    span = _position_axis(positions)
    if span is None:
        return (-0.5, positions.size - 0.5, positions.size - 0.5, -0.5), False
    first, last = span
    half = (last - first) / (positions.size - 1) / 2 if positions.size > 1 else 0.5
    return (first - half, last + half, last + half, first - half), True


def _diverging(matrix: np.ndarray) -> dict[str, Any]:
    finite = matrix[np.isfinite(matrix)]
    if finite.size and finite.min() < 0 < finite.max():
        limit = float(np.abs(finite).max())
        return {"cmap": "RdBu_r", "vmin": -limit, "vmax": limit}
    return {"cmap": "viridis"}


# -- heatmap -------------------------------------------------------------------------------------------
def heatmap_figure(
    scheme: Scheme,
    positions: Any,
    *,
    head: int | None = None,
    dtype: str | None = None,
    title: str | None = None,
    size: tuple[float, float] | None = None,
    dpi: float = DEFAULT_DPI,
) -> "Figure":
    """The (L, d) encoding matrix (additive, rotary) or the (L, L) bias of one head or of every head (bias).

    Parameters
    ----------
    scheme, positions
        What to draw; positions beyond :data:`MAX_HEATMAP_ROWS` are drawn with a stride.
    head
        Bias schemes: the head (channel) to draw; ``None`` draws a grid of every head (up to
        :data:`MAX_GRID_HEADS`).
    dtype
        Cast the encoding to this dtype before drawing (what a model in that dtype sees).
    """
    positions = as_positions(positions)
    if scheme.kind == "bias":
        return _bias_heatmap(scheme, positions, head=head, title=title, size=size, dpi=dpi)
    if head is not None:
        raise ConfigError("head", f"applies to bias schemes (alibi, t5, relative), not {scheme.name!r}")
    figure = new_figure("heatmap", size, dpi)
    shown, step = downsample(positions, MAX_HEATMAP_ROWS)
    matrix = _block_means(scheme, positions, step, dtype)
    columns, column_step = downsample(np.arange(matrix.shape[1]), MAX_HEATMAP_COLUMNS)
    matrix = matrix[:, columns]
    axes = figure.add_subplot()
    extent, by_position = _extent(shown, (-0.5 * column_step, columns[-1] + 0.5 * column_step))
    image = axes.imshow(matrix, aspect="auto", interpolation="antialiased", extent=extent, **_diverging(matrix))
    axes.set_xlabel("component (dimension index)")
    axes.set_ylabel("position (tokens)" if by_position else "row of --positions")
    unit = "value" if scheme.kind == "additive" else "value (rotated reference vector: cos pθ, sin pθ)"
    figure.colorbar(image, ax=axes, label=unit)
    what = "encoding" if scheme.kind == "additive" else "rotary encoding"
    dtype_note = f", {dtype}" if dtype and dtype != "float64" else ""
    set_title(figure, f"{describe(scheme)}: {what}, {positions.size} positions{dtype_note}", title)
    if step > 1:
        add_note(figure, f"positions: each row is the mean of {step} consecutive positions of {positions.size} "
                         "(sampling every row instead would alias the fast components)")
    if column_step > 1:
        add_note(figure, _stride_note("components", columns.size, scheme.width, column_step))
    return figure


def _block_means(scheme: Scheme, positions: np.ndarray, step: int, dtype: str | None) -> np.ndarray:
    """The encoding at ``positions`` (cast to ``dtype``), averaged over blocks of ``step`` rows."""
    from pecli.dtypes import cast

    rows = []
    chunk = step * max(1, (1 << 16) // step)  # whole blocks, about 65k positions at a time
    for start in range(0, positions.size, chunk):
        part = scheme.encode(positions[start : start + chunk])
        if dtype is not None and dtype != "float64":
            part = cast(part, dtype).astype(np.float64)
        blocks = -(-part.shape[0] // step)
        padded = np.full((blocks * step, part.shape[1]), np.nan)
        padded[: part.shape[0]] = part
        rows.append(np.nanmean(padded.reshape(blocks, step, -1), axis=1))
    return np.concatenate(rows)


def _bias_label(scheme: Scheme) -> str:
    return {
        "alibi": "bias −m_h·|i−j| (logit units)",
        "t5": "bucket index (each bucket has a learned bias)",
        "relative": "q·a[clip(j−i)] (reference query)",
    }.get(scheme.name, "bias (logit units)")


def _bias_heatmap(scheme, positions, *, head, title, size, dpi) -> "Figure":
    channels = scheme.channels
    if head is not None and not 0 <= head < channels:
        raise ConfigError("head", f"must be between 0 and {channels - 1} ({scheme.name} has {channels} head(s)), got {head}")
    heads = [head] if head is not None else list(range(min(channels, MAX_GRID_HEADS)))
    limit = MAX_MATRIX_SIDE if len(heads) == 1 else MAX_GRID_SIDE
    shown, step = downsample(positions, limit)
    delta = shown[None, :] - shown[:, None]
    bias = scheme.bias(delta)
    figure = new_figure("heatmap", size, dpi)
    rows, columns = _grid(len(heads))
    panels = figure.subplots(rows, columns, squeeze=False)
    image = None
    for index, axes in enumerate(panels.flat):
        if index >= len(heads):
            axes.set_visible(False)
            continue
        h = heads[index]
        extent, by_position = _square_extent(shown)
        # Each head on its own colour scale: ALiBi's slopes span 2^-1 … 2^-8, so a shared scale would
        # leave the gentle heads one flat colour.
        limits = _diverging(bias[h])
        limits.setdefault("vmin", float(np.min(bias[h])))
        limits.setdefault("vmax", float(np.max(bias[h])))
        image = axes.imshow(bias[h], aspect="auto", interpolation="nearest", extent=extent, **limits)
        if len(heads) > 1:
            figure.colorbar(image, ax=axes, fraction=0.046, pad=0.02).ax.tick_params(labelsize=7)
        if len(heads) > 1:
            slope = f", m={scheme.slopes[h]:.3g}" if scheme.name == "alibi" else ""
            axes.set_title(f"head {h}{slope}", fontsize=9)
        unit = " (tokens)" if len(heads) == 1 else ""
        if len(heads) == 1 or index + columns >= len(heads):
            axes.set_xlabel(f"key position j{unit}" if by_position else "key row of --positions")
        if len(heads) == 1 or index % columns == 0:
            axes.set_ylabel(f"query position i{unit}" if by_position else "query row of --positions")
    if len(heads) == 1:
        figure.colorbar(image, ax=panels.ravel().tolist(), label=_bias_label(scheme))
    else:
        add_note(figure, f"colour: {_bias_label(scheme)}, one scale per head")
    which = f"head {head}" if head is not None else (f"{len(heads)} heads" if len(heads) > 1 else "one head")
    set_title(figure, f"{describe(scheme)}: (L, L) bias, {which}, {positions.size} positions (tokens)", title)
    if step > 1:
        add_note(figure, _stride_note("positions", shown.size, positions.size, step))
    if len(heads) < channels and head is None:
        add_note(figure, f"first {len(heads)} of {channels} heads drawn; choose one with --head")
    return figure


# -- circle --------------------------------------------------------------------------------------------
def circle_figure(
    schemes: Sequence[Scheme],
    positions: Any,
    *,
    pair: int = 1,
    title: str | None = None,
    size: tuple[float, float] | None = None,
    dpi: float = DEFAULT_DPI,
) -> "Figure":
    """Positions on the (sin, cos) plane of frequency pair ``pair``, one panel per scheme (per base).

    Point p of a panel is ``(sin(p ω_pair), cos(p ω_pair))`` with the scheme's ``ω_pair`` (for rope,
    ``θ_pair``; its rotation of (1, 0) is (cos, sin), the same point with the axes swapped). Seed 000 draws
    pair 0, where ``ω_0 = base^0 = 1`` for every base; a higher pair shows the base.
    """
    positions = as_positions(positions)
    if not schemes:
        raise PecliError("circle: no scheme to draw")
    figure = new_figure("circle", size, dpi)
    rows, columns = _grid(len(schemes))
    panels = figure.subplots(rows, columns, squeeze=False)
    shown, step = downsample(positions, MAX_CURVE_POINTS)
    circle = np.linspace(0, 2 * np.pi, 361)
    for index, axes in enumerate(panels.flat):
        if index >= len(schemes):
            axes.set_visible(False)
            continue
        scheme = schemes[index]
        inv_freq = scheme.inv_freq
        if not 0 <= pair < inv_freq.size:
            raise ConfigError("pair", f"must be between 0 and {inv_freq.size - 1} for {describe(scheme)} ({inv_freq.size} pairs), got {pair}")
        angles = scheme.angles(shown)[:, pair]
        x, y = np.sin(angles), np.cos(angles)
        axes.plot(np.sin(circle), np.cos(circle), color="0.85", linewidth=1, zorder=0)
        points = axes.scatter(x, y, c=shown, cmap="viridis", s=60 if shown.size <= 64 else 12, zorder=2)
        if shown.size <= MAX_LABELLED_POINTS:
            for p, px, py in zip(shown, x, y):
                axes.annotate(str(p), (px, py), xytext=(4, 4), textcoords="offset points", fontsize=8)
        base = getattr(scheme, "base", None)
        omega = inv_freq[pair]
        label = f"base={_number(float(base))}: " if base is not None else ""
        axes.set_title(f"{label}$\\omega_{{{pair}}}$ = {omega:.4g} rad/token", fontsize=10)
        axes.set_xlabel(f"$\\sin(p\\,\\omega_{{{pair}}})$")
        axes.set_ylabel(f"$\\cos(p\\,\\omega_{{{pair}}})$")
        axes.set_xlim(-1.3, 1.3)
        axes.set_ylim(-1.3, 1.3)
        axes.set_aspect("equal")
    if shown.size > MAX_LABELLED_POINTS:
        figure.colorbar(points, ax=panels.ravel().tolist(), label="position (tokens)", shrink=0.8)
    first = schemes[0]
    dim = getattr(first, "rotated_dim", first.width)
    skip = ("base",) if len(schemes) > 1 else ()
    default = (
        f"{describe(first, skip=skip)}: positions {shown[0]}–{shown[-1]} on the circle of pair {pair} "
        f"of {dim // 2} ($\\omega_{{{pair}}}$ = base$^{{-{2 * pair}/{dim}}}$)"
    )
    set_title(figure, default, title)
    if step > 1:
        add_note(figure, _stride_note("positions", shown.size, positions.size, step))
    return figure


# -- similarity ----------------------------------------------------------------------------------------
def cosine_similarity(vectors: np.ndarray) -> np.ndarray:
    """The (n, n) cosine similarity of the rows of ``vectors``; NaN where a row is all zeros."""
    norms = np.linalg.norm(vectors, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        unit = vectors / norms[:, None]
    unit[norms == 0] = np.nan
    return np.clip(unit @ unit.T, -1.0, 1.0)


def similarity_figure(
    scheme: Scheme,
    positions: Any,
    *,
    dtype: str | None = None,
    title: str | None = None,
    size: tuple[float, float] | None = None,
    dpi: float = DEFAULT_DPI,
) -> "Figure":
    """The (L, L) cosine similarity between the encodings of every two positions."""
    check_supported("similarity", scheme.name)
    positions = as_positions(positions)
    shown, step = downsample(positions, MAX_MATRIX_SIDE)
    vectors = scheme.encode(shown)
    if dtype is not None and dtype != "float64":
        from pecli.dtypes import cast

        vectors = cast(vectors, dtype).astype(np.float64)
    similarity = cosine_similarity(vectors)
    figure = new_figure("similarity", size, dpi)
    axes = figure.add_subplot()
    extent, by_position = _square_extent(shown)
    image = axes.imshow(similarity, interpolation="nearest", extent=extent, cmap="RdBu_r", vmin=-1, vmax=1)
    axes.set_xlabel("position q (tokens)" if by_position else "row of --positions")
    axes.set_ylabel("position p (tokens)" if by_position else "row of --positions")
    figure.colorbar(image, ax=axes, label="cosine similarity of E_p and E_q")
    dtype_note = f", {dtype}" if dtype and dtype != "float64" else ""
    set_title(figure, f"{describe(scheme)}: cosine similarity, {positions.size} positions{dtype_note}", title)
    if step > 1:
        add_note(figure, _stride_note("positions", shown.size, positions.size, step))
    zero = int(np.count_nonzero(np.linalg.norm(vectors, axis=1) == 0))
    if zero:
        add_note(figure, f"{zero} position(s) encode to the zero vector: similarity undefined (blank)")
    return figure


# -- wavelengths ---------------------------------------------------------------------------------------
def wavelengths_figure(
    scheme: Scheme,
    *,
    context: int | None = None,
    train_length: int | None = None,
    max_position_embeddings: int | None = None,
    title: str | None = None,
    size: tuple[float, float] | None = None,
    dpi: float = DEFAULT_DPI,
) -> "Figure":
    """Wavelength ``2π/ω_i`` of every frequency pair on a log scale, with the lengths as lines.

    With a context-extension scaling (``scheme.original_inv_freq`` present and different), the original
    wavelengths are drawn too; ``max_position_embeddings`` adds a line for the model's own context.
    """
    check_supported("wavelengths", scheme.name)
    inv_freq = np.asarray(scheme.inv_freq, dtype=np.float64)
    original = getattr(scheme, "original_inv_freq", None)
    if original is not None:
        original = np.asarray(original, dtype=np.float64)
        if original.shape == inv_freq.shape and np.array_equal(original, inv_freq):
            original = None
    pairs = np.arange(inv_freq.size)
    rotating = inv_freq > 0
    wavelengths = wavelengths_of(inv_freq)
    figure = new_figure("wavelengths", size, dpi)
    axes = figure.add_subplot()
    if original is not None:
        axes.plot(pairs, wavelengths_of(original), marker=".", linestyle="--", color="0.55", label="original (unscaled)")
        axes.plot(pairs[rotating], wavelengths[rotating], marker=".", color="C0", label="in use (scaled)")
    else:
        axes.plot(pairs[rotating], wavelengths[rotating], marker=".", color="C0", label=r"wavelength $2\pi/\omega_i$")
    axes.set_yscale("log")
    axes.set_xlabel("frequency pair i")
    axes.set_ylabel("wavelength (tokens)")
    if context is not None:
        axes.axhline(context, color="C3", linewidth=1, label=f"context length {context}")
        longer = rotating & (wavelengths > context)
        if np.any(longer):
            axes.plot(pairs[longer], wavelengths[longer], linestyle="none", marker="o", markersize=6,
                      markerfacecolor="none", color="C3",
                      label=f"{int(longer.sum())} pair(s) never complete a turn within {context}")
    if train_length is not None:
        axes.axhline(train_length, color="C2", linewidth=1, linestyle=":", label=f"training length {train_length}")
    if max_position_embeddings is not None and max_position_embeddings != context:
        axes.axhline(max_position_embeddings, color="C4", linewidth=1, linestyle="-.",
                     label=f"max_position_embeddings {max_position_embeddings}")
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize=8, loc="upper left")
    shown = wavelengths[rotating]
    span = f"wavelengths {shown.min():.4g} … {shown.max():.4g} tokens" if shown.size else "no rotating pair"
    set_title(figure, f"{describe(scheme)}: {span}", title)
    if not np.all(rotating):
        idle = pairs[~rotating]
        add_note(figure, f"pairs {idle[0]}–{idle[-1]} do not rotate (frequency 0, infinite wavelength) and are not drawn")
    return figure


# -- dot product against distance ---------------------------------------------------------------------------
def _score_label(schemes: Sequence[Scheme]) -> str:
    kinds = {scheme.kind for scheme in schemes}
    if kinds == {"additive"}:
        return "E_m · E_(m+Δ), mean over m"
    if kinds == {"rotary"}:
        return "(R_m 1)·(R_(m+Δ) 1), mean over m"
    if kinds == {"bias"}:
        return "bias(Δ), mean over m"
    return "position-only score, mean over m"


def dot_distance_figure(
    schemes: Sequence[Scheme],
    length: int,
    *,
    band: bool = True,
    title: str | None = None,
    size: tuple[float, float] | None = None,
    dpi: float = DEFAULT_DPI,
) -> "Figure":
    """The position-only score against the distance Δ, one curve per scheme (and per head), overlaid.

    The numbers are :func:`pecli.analysis.relativity.score_by_distance`: for each Δ the mean over the
    query positions m of ``score(m, m + Δ)``, and with ``band`` its range over m (zero width for a
    scheme whose score depends on Δ only).
    """
    from pecli.analysis.relativity import score_by_distance

    if not schemes:
        raise PecliError("dot-distance: no scheme to draw")
    figure = new_figure("dot-distance", size, dpi)
    axes = figure.add_subplot()
    several = len(schemes) > 1
    sampled = banded = False
    for index, scheme in enumerate(schemes):
        profile = score_by_distance(scheme, length)
        sampled = sampled or bool(profile.sampled)
        distance = np.asarray(profile.distance)
        keep, step = downsample(np.arange(distance.size), MAX_CURVE_POINTS)
        channels = np.asarray(profile.mean).shape[0]
        drawn = range(min(channels, MAX_LINES))
        for channel in drawn:
            if several:  # one colour per scheme; its heads fade
                color, alpha = f"C{index % 10}", 1.0 - 0.6 * channel / channels
                label = describe(scheme) if channel == 0 else None
            else:  # one colour per head
                color, alpha = f"C{channel % 10}", 1.0
                label = f"head {channel}" if channels > 1 else None
            axes.plot(distance[keep], np.asarray(profile.mean)[channel, keep], color=color, alpha=alpha, linewidth=1.2, label=label)
            if band:
                low, high = np.asarray(profile.minimum)[channel, keep], np.asarray(profile.maximum)[channel, keep]
                if np.any(high - low > 1e-9 * max(1.0, float(np.abs(high).max()))):
                    axes.fill_between(distance[keep], low, high, color=color, alpha=0.15, linewidth=0)
                    banded = True
        if step > 1:
            add_note(figure, _stride_note(f"distances of {scheme.name}", keep.size, distance.size, step))
        if channels > len(drawn):
            add_note(figure, f"{scheme.name}: first {len(drawn)} of {channels} heads drawn")
        if scheme.name == "t5" and several:
            add_note(figure, "t5: the curve is the bucket index (each bucket's bias is learned), not a logit")
        if scheme.kind == "rotary":
            add_note(figure, f"{scheme.name}: q = k = all-ones (RoFormer's long-term decay): 2·Σ cos(Δθ_i) "
                             "× attention scaling², + the unrotated components")
    axes.axhline(0, color="0.7", linewidth=0.8)
    axes.set_xlabel("distance Δ (tokens)")
    axes.set_ylabel(_score_label(schemes))
    axes.grid(True, alpha=0.3)
    if any(axes.get_legend_handles_labels()[1]):
        axes.legend(fontsize=8)
    what = describe(schemes[0]) if not several else ", ".join(scheme.name for scheme in schemes)
    set_title(figure, f"{what}: score against distance, L = {length}" + (" (band: range over m)" if banded else ""), title)
    if band and not banded:
        add_note(figure, "no band: the score does not vary with m at any distance (it depends on Δ only)")
    if sampled:
        add_note(figure, "the mean and range over m are taken over a sample of query positions")
    return figure


# -- extrapolation ----------------------------------------------------------------------------------------
def extrapolation_figure(
    scheme: Scheme,
    *,
    train_length: int,
    length: int,
    train_scheme: Scheme | None = None,
    title: str | None = None,
    size: tuple[float, float] | None = None,
    dpi: float = DEFAULT_DPI,
) -> "Figure":
    """Per frequency pair, the largest angle seen in training against the largest reached at test length.

    The numbers are :func:`pecli.analysis.extrapolation.angle_ranges`. Pairs that training never
    took through a full turn and that the test positions take further (``unseen``) are drawn in red:
    their angles at test time are out of distribution.
    """
    from matplotlib.patches import Patch

    from pecli.analysis.extrapolation import angle_ranges

    check_supported("extrapolation", scheme.name)
    ranges = angle_ranges(scheme, train_length, length, train_scheme=train_scheme)
    pairs = np.arange(ranges.inv_freq.size)
    unseen = np.asarray(ranges.unseen, dtype=bool)
    figure = new_figure("extrapolation", size, dpi)
    axes = figure.add_subplot()
    test_colors = np.where(unseen, "C3", "0.78")
    axes.bar(pairs, ranges.test_max_angle, width=0.85, color=test_colors)
    axes.bar(pairs, ranges.train_max_angle, width=0.5, color="C0")
    axes.axhline(2 * np.pi, color="0.2", linestyle="--", linewidth=1)
    axes.set_yscale("log")
    axes.set_xlabel("frequency pair i")
    axes.set_ylabel("largest angle p·θ_i (radians)")
    handles = [
        Patch(color="C0", label=f"seen in training: (T−1)·θ_i, T = {train_length}"),
        Patch(color="0.78", label=f"reached at test length L = {length}, within the training range"),
        Patch(color="C3", label=f"reached at L, never seen in training ({int(unseen.sum())} pair(s))"),
        axes.lines[0],
    ]
    axes.lines[0].set_label("one full turn, 2π")
    axes.legend(handles=handles, fontsize=8, loc="upper right")
    axes.grid(True, axis="y", alpha=0.3)
    if ranges.first_unseen_pair is not None:
        axes.axvline(ranges.first_unseen_pair - 0.5, color="C3", linestyle=":", linewidth=1)
    first = ranges.first_unseen_pair
    verdict = f"pairs from i = {first} are out of distribution" if first is not None else "no pair leaves the training range"
    set_title(figure, f"{describe(scheme)}: trained on {train_length}, tested on {length}; {verdict}", title)
    idle = pairs[np.asarray(ranges.inv_freq) == 0]
    if idle.size:
        add_note(figure, f"pairs {idle[0]}–{idle[-1]} do not rotate (θ = 0) and have no bar")
    if train_scheme is not None:
        add_note(figure, f"training angles from the unscaled scheme: {describe(train_scheme)}")
    return figure


# -- precision --------------------------------------------------------------------------------------------
def precision_figure(
    scheme: Scheme,
    length: int,
    *,
    dtypes: Sequence[str] = ("float32", "float16", "bfloat16"),
    computed: bool = False,
    title: str | None = None,
    size: tuple[float, float] | None = None,
    dpi: float = DEFAULT_DPI,
) -> "Figure":
    """The largest absolute error of each position's row against float64, one curve per dtype.

    The numbers are :func:`pecli.analysis.precision.precision_profile`: the float64 encoding rounded
    to each dtype, or with ``computed`` the angles formed in that dtype (as a model that builds its
    cache in bfloat16 does). The first position that collides with its neighbour is marked.
    """
    from pecli.analysis.precision import precision_profile

    figure = new_figure("precision", size, dpi)
    axes = figure.add_subplot()
    zero_everywhere = []
    for index, dtype in enumerate(dtypes):
        profile = precision_profile(scheme, length, dtype=dtype, compute_dtype=dtype if computed else None)
        positions, error = np.asarray(profile.positions), np.asarray(profile.error, dtype=np.float64)
        keep, step = downsample(np.arange(positions.size), MAX_CURVE_POINTS)
        if step > 1:  # the largest error of each stride, so that spikes survive the downsampling
            ends = np.append(keep[1:], positions.size)
            error_shown = np.array([error[a:b].max() for a, b in zip(keep, ends)])
            add_note(figure, f"{dtype}: largest error of each run of {step} positions drawn ({keep.size} of {positions.size})")
        else:
            error_shown = error[keep]
        color = f"C{index % 10}"
        if not np.any(error_shown > 0):
            zero_everywhere.append(dtype)
            continue
        axes.plot(positions[keep], np.where(error_shown > 0, error_shown, np.nan), color=color, linewidth=1,
                  label=f"{dtype}: max {profile.max_error:.3g}, {profile.collisions} collision(s)")
        if profile.first_adjacent_collision is not None:
            axes.axvline(profile.first_adjacent_collision, color=color, linestyle=":", linewidth=1,
                         label=f"{dtype}: first position equal to its neighbour, {profile.first_adjacent_collision}")
        if profile.note:
            add_note(figure, profile.note)
    axes.set_yscale("log")
    bias = scheme.kind == "bias"
    axes.set_xlabel("relative distance Δ (tokens)" if bias else "position (tokens)")
    axes.set_ylabel("largest |error| of the row vs float64")
    axes.grid(True, which="major", alpha=0.3)
    if axes.get_legend_handles_labels()[1]:
        axes.legend(fontsize=8, loc="lower right")
    how = "angles formed in each dtype" if computed else "float64 values rounded to each dtype"
    set_title(figure, f"{describe(scheme)}: precision over {length} positions, {how}", title)
    if zero_everywhere:
        add_note(figure, f"exact in {', '.join(zero_everywhere)} (error 0 everywhere, nothing to draw on a log scale)")
    return figure


# -- bias ----------------------------------------------------------------------------------------------
def bias_figure(
    scheme: Scheme,
    length: int,
    *,
    head: int | None = None,
    title: str | None = None,
    size: tuple[float, float] | None = None,
    dpi: float = DEFAULT_DPI,
) -> "Figure":
    """The bias against the relative distance ``Δ = j − i`` in ``−(L−1) … L−1``, one line per head."""
    check_supported("bias", scheme.name)
    channels = scheme.channels
    if head is not None and not 0 <= head < channels:
        raise ConfigError("head", f"must be between 0 and {channels - 1} ({scheme.name} has {channels} head(s)), got {head}")
    delta_all = np.arange(-(length - 1), length, dtype=np.int64)
    delta, step = downsample(delta_all, MAX_CURVE_POINTS)
    bias = scheme.bias(delta)
    heads = [head] if head is not None else list(range(min(channels, MAX_LINES)))
    figure = new_figure("bias", size, dpi)
    axes = figure.add_subplot()
    drawstyle = "steps-mid" if scheme.name in ("t5", "relative") else "default"
    for h in heads:
        label = f"head {h}, m={scheme.slopes[h]:.4g}" if scheme.name == "alibi" else (f"head {h}" if channels > 1 else None)
        axes.plot(delta, bias[h], drawstyle=drawstyle, linewidth=1.2, label=label)
    axes.set_xlabel("relative distance Δ = j − i (tokens; key minus query)")
    axes.set_ylabel(_bias_label(scheme))
    axes.axvline(0, color="0.7", linewidth=0.8)
    if scheme.name == "relative":
        k = scheme.max_relative_position
        for edge in (-k, k):
            axes.axvline(edge, color="C3", linewidth=0.8, linestyle=":")
        axes.text(k, axes.get_ylim()[1], f" ±K = {k}: clipped beyond", color="C3", fontsize=8, va="top")
    if scheme.name == "t5":
        axes.axvline(scheme.max_distance, color="C3", linewidth=0.8, linestyle=":")
        axes.axvline(-scheme.max_distance, color="C3", linewidth=0.8, linestyle=":")
        axes.text(scheme.max_distance, axes.get_ylim()[0], f" max_distance {scheme.max_distance}", color="C3", fontsize=8, va="bottom")
    if any(axes.get_legend_handles_labels()[1]):
        axes.legend(fontsize=8, ncol=2 if len(heads) > 8 else 1)
    axes.grid(True, alpha=0.3)
    set_title(figure, f"{describe(scheme)}: bias against distance, L = {length}", title)
    if step > 1:
        add_note(figure, _stride_note("distances", delta.size, delta_all.size, step))
    if head is None and len(heads) < channels:
        add_note(figure, f"first {len(heads)} of {channels} heads drawn; choose one with --head")
    return figure


__all__ = [
    "DEFAULT_DPI", "DEFAULT_SIZES", "FIGURE_SUFFIXES", "PLOT_KINDS", "add_note", "bias_figure", "check_kind",
    "check_supported", "circle_figure", "cosine_similarity", "describe", "dot_distance_figure", "downsample",
    "extrapolation_figure", "figure_notes", "heatmap_figure", "new_figure", "precision_figure", "parse_figure_size", "save_figure", "similarity_figure", "supported_schemes",
    "wavelengths_figure",
]
