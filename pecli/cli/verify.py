"""``pecli verify``: a user's own RoPE cos/sin arrays against the model, and the bug named."""

from __future__ import annotations

import numpy as np

from pecli.cli.common import JsonOption, QuietOption, print_json, scheme_command, stdout_console
from pecli.config import Setting, Spec
from pecli.errors import ConfigError
from pecli.schemes.base import Capability

VERIFY_PANEL = "Verify"
#: Copies of the arrays the comparison holds at once (the arrays, the reference, a candidate, errors).
WORKING_COPIES = 12

SETTINGS = (
    Setting("scheme", str, "rope", "the reference scheme", choices=("rope",)),
    Setting("cos", str, None, "your cos array: .npy, shape (P, r) in either layout or (P, r/2)", group=VERIFY_PANEL),
    Setting("sin", str, None, "your sin array, the same shape as --cos", group=VERIFY_PANEL),
)


@scheme_command(*SETTINGS, needs=Capability.ROTARY, run_keys=("scheme", "positions"))
def verify(
    spec: Spec,
    json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Check your own RoPE cos/sin arrays against the model's: exit 0 when they match, 1 when they differ.

    The reference is what every command takes (--hf-config or --model, with --layer for a model whose
    layers differ, or --scheme rope --dim … --base … --scaling …); the arrays are --cos and --sin at
    --positions (default 0 … P − 1). Each element is held to the precision of the arrays' own dtype,
    with the angle rounding of a float32 pipeline allowed to grow with the position. When they differ,
    each known cause is tested — layout, position-offset, base, scaling, attention-scaling, rotary-dim,
    precision, sin-sign — and those that explain the arrays are named; when none does, none is named.
    """
    from pecli.analysis.verify import verify_rope
    from pecli.io import load_array

    settings = spec.settings
    for key in ("cos", "sin"):
        if not settings[key]:
            raise ConfigError(key, f"give your {key} array: --{key} FILE.npy")
    budget = spec.memory_budget // WORKING_COPIES
    cos, sin = (load_array(settings[key], key=key, max_bytes=budget) for key in ("cos", "sin"))
    given = spec.where.given  # the ids given with --positions, even 0 … L − 1
    positions = np.arange(cos.shape[0] if cos.ndim else 0, dtype=np.int64) if given is None else given
    scheme = spec.scheme
    if scheme.reads_context and given is None:  # dynamic and longrope: the sequence reaches the last position
        scheme = scheme.at_length(int(positions.max()) + 1 if positions.size else 1)
    report = verify_rope(cos, sin, scheme, positions)
    if json:
        print_json(report.to_dict())
    elif not quiet:
        stdout_console().print(verify_table(report))
    if not report.match:
        import typer

        raise typer.Exit(1)


def verify_table(report):
    """The verdict, the worst element and the diagnosis as a two-column table."""
    from pecli.render.tables import key_value_table, number

    rows = [("verdict", "MATCH" if report.match else "DIFFER"), ("dtype", report.dtype),
            ("max abs error", number(report.max_abs_error)),
            ("worst", f"position {report.worst_position:,}, component {report.worst_dim}"),
            ("tolerance there", number(report.tolerance))]
    rows += [(f"cause: {d.code}", d.message) for d in report.diagnosis]
    rows += [("note", note) for note in report.notes]
    return key_value_table("pecli verify", rows)
