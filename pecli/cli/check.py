"""``pecli check PROPERTY``: measure a property of a scheme and give a verdict (exit 0 pass, 1 fail)."""

from __future__ import annotations

from typing import Annotated

import typer

from pecli.cli import completion
from pecli.analysis.options import CHECK_PANEL, check_parameters  # noqa: F401 (CHECK_PANEL: re-exported)
from pecli.cli.common import JsonOption, QuietOption, group_heading, print_json, scheme_command, stdout_console
from pecli.config import Spec
from pecli.errors import ConfigError

#: The check options (:data:`pecli.checks.SETTINGS`), from their declarations alone: ``check --help``
#: loads no analysis.
SETTINGS = tuple(check_parameters().values())


def every_group(plan, specs, options, prop: str = "all", json: bool = False, quiet: bool = False) -> None:
    """``check`` of a model whose layer groups differ: the property in every group, a block each (JSON:
    ``layer_groups``); exit 1 when it fails in any group. Layers without position encoding are listed."""
    from pecli.analysis.registry import ANALYSES
    from pecli.checks import prepared_check

    if prop in ANALYSES and not ANALYSES[prop].in_all:  # a property of weights (layout): of one group's
        raise ConfigError("layer", f"check {prop} reads one layer group's weights; {plan.source} has {len(specs)}: "
                          "choose one with --layer N or --layer-group NAME")
    if all(spec is None for _, spec in specs):
        raise ConfigError("layer", f"layers {specs[0][0].layers_text()} of {plan.source} apply no position encoding: nothing to check")
    runs = [(group, None if spec is None else prepared_check(spec, prop)) for group, spec in specs]  # every refusal first
    reports = [(group, None if run is None else run()) for group, run in runs]
    if json:
        print_json({"source": plan.source, "model_type": plan.model_type, "property": prop,
                    "passed": all(r.passed for _, r in reports if r is not None),
                    "layer_groups": [{"name": g.name, "layers": list(g.layers),
                                      **(r.to_dict() if r is not None else {"scheme": "none", "passed": None})}
                                     for g, r in reports]})
    elif not quiet:
        from pecli.render.check import check_renderable

        console = stdout_console()
        for group, report in reports:
            console.print(group_heading(plan, group, "no position encoding: nothing to check" if report is None else None))
            if report is not None:
                console.print(check_renderable(report))
    if not all(r.passed for _, r in reports if r is not None):
        raise typer.Exit(1)


@scheme_command(*SETTINGS, run_keys=("scheme", "length"), per_group=every_group)
def check(
    spec: Spec,
    prop: Annotated[str, typer.Argument(metavar="PROPERTY", autocompletion=completion.properties, help="a registered property (uniqueness, distinguishability, composability, relativity, extrapolation, precision), all, or layout (of --weights) [default: all]", show_default=False)] = "all",
    json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Measure a property of an encoding and give a verdict: exit 0 when it holds, 1 when it does not.

    Properties: uniqueness, distinguishability, composability, relativity, extrapolation, precision, or
    all of them. Each prints the measured figures, the verdict and the reason in words. --dtype sets the
    dtype of uniqueness (default float64) and of precision (default bfloat16). layout reads the q/k
    projections of --weights and says whether they were trained in the configured RoPE layout. A model
    whose layer groups differ (--hf-config) is checked group by group.
    """
    from pecli.checks import prepared_check

    report = prepared_check(spec, prop)()
    if json:
        print_json(report.to_dict())
    elif not quiet:  # --quiet: the exit code is the answer
        from pecli.render.check import check_renderable

        stdout_console().print(check_renderable(report))
    if not report.passed:
        raise typer.Exit(1)
