"""``check layout``: whether a checkpoint's q/k weights were trained in the configured RoPE layout.

A property of weights, not of the scheme: it reads the projections of ``weights`` (:mod:`pecli.weights.usage`
measures them) with the rotary scheme's frequency pairs, and is asked for by name (never in ``all``).
The evidence is :func:`~pecli.weights.usage.layout_evidence`'s: a rotation inside a pair's plane applied to
both q and k leaves every score unchanged, so a true pair's norm is free of its arbitrary orientation
and follows a smooth spectrum over the pairs, while a wrong pairing joins rows of two pairs and comes
out ragged (Barbero et al., "Round and round we go! What makes rotary positional encodings useful?",
ICLR 2025, measure the same per-pair usage).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pecli.analysis.result import PropertyResult
from pecli.errors import ConfigError
from pecli.weights.usage import DECISIVE_RATIO, LAYOUTS, layout_evidence, open_projections, pairs_layout, projection_bytes
from pecli.schemes.base import Capability, Scheme, require

if TYPE_CHECKING:
    from pecli.analysis.footprints import Footprint
    from pecli.analysis.options import CheckOptions
    from pecli.weights.usage import Checkpoint, Projections

#: How each layout pairs the components of a head of d rotated components.
PAIRING = {"half": "(i, i + d/2)", "interleaved": "(2i, 2i + 1)"}


def layout_projections(scheme: Scheme, options: CheckOptions) -> tuple[Checkpoint, list[Projections]]:
    """The checkpoint of ``options.weights`` and its q/k projections, for rotary ``scheme``; the errors
    name what is missing (a scheme that does not rotate, no ``--weights``, no file, no projections)."""
    require(scheme, Capability.ROTARY, "check layout")
    if not options.weights:
        raise ConfigError("weights", "check layout reads the q/k projections of a checkpoint: give its file (weights=, --weights FILE)")
    return open_projections(options.weights)


def layout_footprint(scheme: Scheme, options: CheckOptions) -> Footprint:
    """Nothing shared; its work is one projection at a time (:func:`~pecli.weights.usage.projection_bytes`)."""
    return 0, projection_bytes(*layout_projections(scheme, options))


def run_layout(scheme: Scheme, options: CheckOptions) -> PropertyResult:
    """The record's ``run``: the q/k weights of ``options.weights`` against ``scheme``'s layout."""
    checkpoint, _ = layout_projections(scheme, options)
    pairs = scheme.frequency_pairs()
    return check_layout(checkpoint, head_dim=scheme.width, rotated_dim=2 * pairs.count, configured=pairs_layout(pairs))


def check_layout(checkpoint: Checkpoint, *, head_dim: int, rotated_dim: int, configured: str) -> PropertyResult:
    """Whether the q/k weights were trained in the ``configured`` layout.

    ``pass`` when the smoother reading (:func:`~pecli.weights.usage.layout_evidence`) is the configured
    layout, ``fail`` when it is the other one, ``warn`` when neither reading is
    :data:`~pecli.weights.usage.DECISIVE_RATIO` times smoother.
    """
    evidence = layout_evidence(checkpoint, head_dim=head_dim, rotated_dim=rotated_dim)
    found, ratio = evidence.smoother, evidence.ratio
    other = next(layout for layout in LAYOUTS if layout != found)
    figures = {
        "configured_layout": configured, "found_layout": found if evidence.decided else None,
        "roughness_half": evidence.roughness["half"], "roughness_interleaved": evidence.roughness["interleaved"],
        "ratio": ratio, "layers": evidence.layers, "pairs": evidence.pairs, "head_dim": head_dim,
    }
    smoother = (f"the per-pair usage spectra are {ratio:.3g}× smoother read in {found} pairs {PAIRING[found]} "
                f"than in {other} pairs {PAIRING[other]} ({evidence.layers} layers)")
    if not evidence.decided:
        reason = f"the weights do not tell: {smoother}, less than the {DECISIVE_RATIO:g}× that decides"
        return PropertyResult("layout", "warn", reason, figures, "ratio")
    if found == configured:
        return PropertyResult("layout", "pass", f"trained in the {found} layout, as configured: {smoother}", figures, "ratio")
    fix = f"pecli permute --from {found} --to {configured}"
    reason = f"trained in the {found} layout, but the configuration says {configured}: {smoother}; convert with {fix}"
    return PropertyResult("layout", "fail", reason, figures, "ratio")


__all__ = ["PAIRING", "check_layout", "layout_footprint", "layout_projections", "run_layout"]
