"""The request of ``pecli check``: its settings, and the validated call that measures a property.

:data:`SETTINGS` declares the keys a check reads besides the scheme (``dtype``, ``train_length``,
``shifts``, …), once, for every command that runs checks (``check``, ``sweep``).
:func:`prepared_check` validates a :class:`~pecli.config.Spec` against a property and bounds its memory
before any work, then returns the call that measures it. Refusals raise
:class:`~pecli.errors.ConfigError` naming the key; nothing here knows the command line.
"""

from __future__ import annotations

from typing import Any, Callable

from pecli.analysis import ANALYSES, CheckOptions, CheckReport, check_report, estimate_check_bytes, not_applicable
from pecli.config import Setting, Spec
from pecli.dtypes import DTYPES
from pecli.errors import ConfigError
from pecli.params import choice_error

CHECK_PANEL = "Check"

SETTINGS = (
    Setting("dtype", str, None, "uniqueness: compare the encodings in this dtype; precision: the low-precision dtype",
            choices=DTYPES, default_text="float64 for uniqueness, bfloat16 for precision", group=CHECK_PANEL),
    Setting("train_length", int, None, "extrapolation: training length T", minimum=1,
            default_text="the model's own training length, else L // 2", group=CHECK_PANEL),
    Setting("train_grid", tuple[int, ...], None, "extrapolation on a grid: training cells per axis, H,W or T,H,W (also 14x14)",
            minimum=1, default_text="each side of --grid halved", group=CHECK_PANEL),
    Setting("tol", float, 0.0, "uniqueness: encodings within this Euclidean distance collide (0: exact in --dtype)",
            minimum=0, group=CHECK_PANEL),
    Setting("shifts", tuple[float, ...], None, "composability: shifts k", default_text="1,2,4,8,64", group=CHECK_PANEL),
    Setting("compute_dtype", str, None, "precision: compute the angles in this dtype instead of casting the exact result",
            choices=DTYPES, group=CHECK_PANEL),
    Setting("strict", bool, False, "turn warnings (unseen angles, untrained buckets) into failures", group=CHECK_PANEL),
    Setting("samples", int, None, "sample this many query positions in all-pairs scans", minimum=2,
            default_text="exact when cheap", group=CHECK_PANEL),
    Setting("weights", str, None, "layout: the checkpoint of the q/k projections (learned: of the position table)",
            group=CHECK_PANEL),
)

#: The property of weights rather than of a scheme: routed to :mod:`pecli.models.usage`, not in ``all``.
LAYOUT = "layout"


def prepared_check(spec: Spec, prop: str) -> Callable[[], CheckReport]:
    """Validate the request and its memory, before any work; return the call that measures it.

    Raises
    ------
    ConfigError
        An unknown property, a property not defined for the scheme's positions, an option that no
        selected property reads, a training extent of the wrong shape, more samples than positions.
    PecliError
        The check would need more memory than ``spec.memory_budget``.
    """
    if prop not in (*ANALYSES, "all", LAYOUT):
        raise choice_error("property", prop, (*ANALYSES, "all", LAYOUT))
    if prop in ANALYSES and not ANALYSES[prop].applies_to(spec.scheme):
        result = not_applicable(prop, spec.scheme)
        raise ConfigError("property", f"{prop} is {result.reason}; {result.notes[0]}")
    settings = spec.settings
    options = CheckOptions(
        length=spec.length,
        dtype=spec.dtype,
        compute_dtype=settings["compute_dtype"],
        tol=float(settings["tol"] or 0.0),
        shifts=_shifts(settings["shifts"]),
        train_length=settings["train_length"],
        train_grid=settings["train_grid"],
        strict=bool(settings["strict"]),
        samples=settings["samples"],
        query_scale=_query_scale(spec),
    )
    if settings["samples"] is not None and settings["samples"] > spec.length:
        raise ConfigError("samples", f"asks for {settings['samples']:,} query positions; there are {spec.length:,} (--length)")
    _check_applicable(prop, {**settings, "dtype": spec.dtype})
    _check_training_extent(spec.scheme, settings)
    if prop == LAYOUT:
        return lambda: _layout_report(spec)
    spec.check_memory(estimate_check_bytes(spec.scheme, prop, options), f"check {prop}")
    return lambda: check_report(spec.scheme, prop, options)


def _query_scale(spec: Spec) -> Callable[[Any], Any] | None:
    """The factor a model's attention applies to each query besides cos and sin (the group's attention
    scale: DeepSeek's mscale², Qwen's log-n), for the checks that reason about scores; None without one."""
    group = spec.plan.single if spec.plan is not None else None
    scale = group.attention_scale if group is not None else None
    return None if scale is None or scale.is_unit else scale.at


def _layout_report(spec: Spec) -> CheckReport:
    """``check layout``: the q/k weights of ``--weights`` against the layout of the rotary scheme."""
    from pecli.checkpoint import Checkpoint
    from pecli.models.usage import check_layout, find_projections, pairs_layout, projection_bytes
    from pecli.schemes.base import Capability, require

    require(spec.scheme, Capability.ROTARY, "check layout")
    if not spec.settings.get("weights"):
        raise ConfigError("weights", "check layout reads the q/k projections of a checkpoint: give --weights FILE")
    checkpoint = Checkpoint(spec.settings["weights"])
    spec.check_memory(projection_bytes(checkpoint, find_projections(checkpoint)), "check layout")
    pairs = spec.scheme.frequency_pairs()
    result = check_layout(checkpoint, head_dim=spec.scheme.width, rotated_dim=2 * pairs.count,
                          configured=pairs_layout(pairs))
    scheme = spec.scheme
    return CheckReport(scheme.name, scheme.kind, scheme.params(), spec.length, LAYOUT, (result,))


def _check_applicable(name: str, given: dict[str, Any]) -> None:
    """An option that no selected property reads is an error, not silently ignored."""
    if given.get("weights") is not None and name != LAYOUT:
        raise ConfigError("weights", f"--weights with a rotary scheme applies to check layout, not {name} "
                                     "(with the learned scheme it is the checkpoint of its table)")
    if name in ("all", LAYOUT):
        return
    for option in ("dtype", "tol", "shifts", "compute_dtype", "train_length", "train_grid", "samples"):
        if given.get(option) in (None, 0.0) or option in ANALYSES[name].options:
            continue
        users = [info.name for info in ANALYSES.values() if option in info.options]
        flag = "--" + option.replace("_", "-")
        raise ConfigError(option, f"{flag} does not apply to {name} (it applies to {', '.join(users)})")


def _check_training_extent(scheme: Any, settings: dict[str, Any]) -> None:
    """A training length on a grid, or a training grid along a line, is an error naming the other one."""
    if scheme.on_grid and settings.get("train_length") is not None:
        raise ConfigError("train_length", f"{scheme.name} is trained on a grid of cells, not a length: give --train-grid "
                                          f"(e.g. {'x'.join(str(max(1, n // 2)) for n in scheme.axis_spans())})")
    if not scheme.has_cells and settings.get("train_grid") is not None:
        raise ConfigError("train_grid", f"{scheme.name} has positions along a line: give --train-length")
    if scheme.has_cells and not scheme.on_grid:
        given = next((key for key in ("train_length", "train_grid") if settings.get(key) is not None), None)
        if given is not None:
            raise ConfigError(given, f"--{given.replace('_', '-')} does not apply to {scheme.name}: extrapolation is "
                                     f"{not_applicable('extrapolation', scheme).reason}")


def _shifts(value: Any) -> tuple[int, ...] | None:
    if not value:
        return None
    out = []
    for item in value:
        if float(item) != int(item) or item < 1:
            raise ConfigError("shifts", f"must be positive whole numbers, got {item:g}")
        out.append(int(item))
    return tuple(out)


__all__ = ["CHECK_PANEL", "LAYOUT", "SETTINGS", "prepared_check"]
