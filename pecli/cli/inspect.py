"""``pecli inspect rope``: which rotary frequency pairs a checkpoint's q and k projections use."""

from __future__ import annotations

from typing import Annotated

import typer

from pecli.cli.common import JsonOption, QuietOption, print_json, scheme_command, stdout_console
from pecli.config import Setting, Spec
from pecli.errors import ConfigError
from pecli.params import choice_error
from pecli.schemes import SCHEMES
from pecli.schemes.base import Capability

INSPECT_PANEL = "Inspect"
#: The schemes that rotate q and k.
ROTARY_SCHEMES = tuple(name for name, cls in SCHEMES.items() if cls.has(Capability.ROTARY))
#: What ``inspect`` can look at.
SUBJECTS = ("rope", "config")

SETTINGS = (
    Setting("scheme", str, "rope", "the rotary scheme the weights were trained with", choices=ROTARY_SCHEMES),
    Setting("weights", str, None, "the checkpoint: a .safetensors file or a sharded checkpoint's index .json",
            group=INSPECT_PANEL),
)


def show_plan(plan, specs, options, subject: str = "rope", json: bool = False, quiet: bool = False) -> None:
    """``inspect config``: the model's position plan, group by group (also what ``inspect rope`` says of
    a model whose layers differ: choose one)."""
    if subject != "config":
        from pecli.models.plan import one_group

        one_group(plan)  # several groups, or none with RoPE: the line that says to choose
    else:
        from pecli.config import check_plan_schemes

        check_plan_schemes(plan)  # what every other command would refuse, refused here too
        _ignored_keys(plan, options, quiet)
    if json:
        print_json(plan.to_dict())
    elif not quiet:
        stdout_console().print(plan_text(plan))


def _ignored_keys(plan, options, quiet: bool) -> None:
    """Say on stderr that the plan is the model's as read: scheme keys given over it do not change it."""
    from pecli.cli.common import hold_warning
    from pecli.config import canonical_keys
    from pecli.schemes.build import accepted_keys

    mine = {s.name for s in SETTINGS}
    given = [k for k in canonical_keys(options) if k not in mine and any(
        k in accepted_keys(SCHEMES[g.scheme]) for g in plan.groups if g.options is not None)]
    if given:
        hold_warning(f"pecli: warning: inspect config shows the model's plan as read; {', '.join(given)} not applied",
                     quiet=quiet)


@scheme_command(*SETTINGS, needs=Capability.ROTARY, run_keys=("scheme",), per_group=show_plan,
                whole_plan=lambda own: own.get("subject") == "config")
def inspect(
    spec: Spec,
    subject: Annotated[str, typer.Argument(metavar="WHAT", help="rope: the per-pair usage of the q/k projections; "
                                           "config: a model's position plan, layer by layer")] = "rope",
    json: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Which RoPE frequencies a model uses: per layer and pair i, the norm of the q and k projection rows feeding i.

    Reads --weights (a .safetensors checkpoint or its index) tensor by tensor; the head dimension, base,
    scaling and layout come from --model or --hf-config (or --scheme rope --dim …). Heads are split by
    the head dimension, keys by their own (grouped-query) heads. Prints one row per pair with its
    wavelength and its share of the squared norm, then per layer the share held by the slower half of
    the pairs: trained models put most of it in the low frequencies (Barbero et al. 2024, "Round and
    round we go! What makes rotary positional encodings useful?").
    """
    if subject not in SUBJECTS:
        raise choice_error("what", subject, SUBJECTS)
    if subject == "config":
        raise ConfigError("hf_config", "inspect config reads a model: give --hf-config FILE, --model ORG/NAME or --gguf FILE")
    usage = measure_usage(spec)
    if json:
        print_json(usage.to_dict())
    elif not quiet:
        console = stdout_console()
        console.print(pairs_table(usage))
        console.print(layers_table(usage))


def measure_usage(spec: Spec):
    """The :class:`~pecli.weights.usage.RopeUsage` of ``spec.settings['weights']`` read with ``spec.scheme``'s pairs."""
    from pecli.weights.usage import usage_of

    return usage_of(spec.settings.get("weights"), spec.scheme, spec.memory_budget)


# -- tables ---------------------------------------------------------------------------------------------
def plan_text(plan):
    """The plan as lines: the model, then per group its layers, its scheme and settings, the keys read
    and the keys whose default applied."""
    from rich.text import Text

    text = Text()
    layers = f", {plan.num_layers} layers" if plan.num_layers else ""
    text.append(f"{plan.source}: model_type {plan.model_type or 'unknown'}, family {plan.family}{layers}\n", style="bold")
    if plan.defaults_from:
        text.append(f"keys the file leaves out: the defaults of {plan.defaults_from}\n")
    for group in plan.groups:
        text.append(f"\n{group.name}", style="bold")
        text.append(f": layers {group.layers_text()}\n")
        text.append(f"  {settings_text(group.options)}\n")
        if group.note:
            text.append(f"  {group.note}\n")
        if group.window is not None:
            key, size = group.window
            shape = "chunks of" if key == "attention_chunk_size" else "a sliding window of"
            text.append(f"  attention: {shape} {size:,} tokens ({key})\n")
        if group.softmax is not None:
            text.append(f"  softmax scale (the attention's scaling): {group.softmax.text(group.softmax_position_part)}\n")
        scale = group.logit_scale
        if not scale.is_unit:
            text.append(f"  logit scale of the position settings: {scale.text()}{logit_sources(group)}\n")
        text.append(f"  read: {', '.join(group.keys_read) or 'no key'}\n")
        if group.keys_defaulted:
            text.append(f"  defaulted: {', '.join(group.keys_defaulted)}\n")
    for warning in plan.warnings:
        text.append(f"\nwarning: {warning}\n")
    text.rstrip()
    return text


def logit_sources(group) -> str:
    """Where a constant logit scale comes from: the rotary attention factor on cos and sin (q and k: its
    square) and the factor the attention module applies itself; "" for a rule, which says its own."""
    from pecli.numbers import number

    scale, side = group.logit_scale, group.attention_scale
    if not scale.constant:
        return ""
    parts = []
    rotary = scale.factor / side.factor if side.factor else 1.0
    if abs(rotary - 1) > 1e-12:
        parts.append(f"the rotary attention factor {number(rotary ** 0.5)} on cos and sin, squared")
    if abs(side.factor - 1) > 1e-12:
        block = (group.options or {}).get("rope_scaling") or {}
        rule = "mscale(factor, mscale_all_dim)² " if "factor" in block else ""
        parts.append(f"the attention's own {rule}{number(side.factor)}")
    return f" ({'; '.join(parts)})" if parts else ""


def settings_text(options) -> str:
    """``rope: dim 256, base 10,000, layout half, rope_scaling {rope_type: linear, factor: 8}``."""
    from pecli.numbers import integer, number

    if options is None:
        return "no position encoding"
    def value(v):
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k}: {value(x)}" for k, x in v.items() if not isinstance(x, list)) + "}"
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return integer(v) if isinstance(v, int) else number(v, 6)  # settings as given: up to 6 digits
        return str(v)
    rest = ", ".join(f"{key} {value(v)}" for key, v in options.items() if key != "scheme")
    return f"{options['scheme']}: {rest}" if rest else str(options["scheme"])



#: Longest table drawn in full; longer ones show their first and last rows.
MAX_ROWS = 80


def _shown(rows: list) -> list:
    return rows if len(rows) <= MAX_ROWS else [*rows[: MAX_ROWS // 2], None, *rows[-MAX_ROWS // 2 :]]


def pairs_table(usage):
    """One row per pair: θ_i, wavelength, mean q and k norm over layers and heads, share of the squared norm."""
    from rich.table import Table

    from pecli.render.tables import number

    table = Table(
        title=(f"rope usage of {usage.checkpoint}: {len(usage.layers)} layers, {usage.heads} q heads, "
               f"{usage.kv_heads} kv heads, head_dim {usage.head_dim}, {usage.layout} layout"),
        title_justify="left",
    )
    for header in ("i", "θ\nrad/tok", "λ\ntokens", "q norm", "k norm", "q share", "k share"):
        table.add_column(header, justify="right", no_wrap=True)
    q, k = usage.layer_pair("q").mean(axis=0), usage.layer_pair("k").mean(axis=0)
    q_share, k_share = usage.pair_share("q"), usage.pair_share("k")
    for i in _shown(list(range(usage.pairs))):
        if i is None:
            table.add_row(*(["…"] * 7))
            continue
        table.add_row(str(i), number(usage.inv_freq[i]), number(usage.wavelengths[i]), number(q[i]), number(k[i]),
                      f"{100 * q_share[i]:.1f}%", f"{100 * k_share[i]:.1f}%")
    return table


def layers_table(usage):
    """Per layer: the share of the squared norm in the slower half of the pairs, and the busiest pair."""
    from rich.table import Table

    half = usage.pairs // 2
    table = Table(title=f"per layer: share in the slow pairs i ≥ {half} (long wavelengths)", title_justify="left")
    for header in ("layer", "q slow share", "k slow share", "q busiest i", "k busiest i"):
        table.add_column(header, justify="right", no_wrap=True)
    q_low, k_low = usage.low_frequency_share("q"), usage.low_frequency_share("k")
    q_top, k_top = usage.layer_pair("q").argmax(axis=1), usage.layer_pair("k").argmax(axis=1)
    for n in _shown(list(range(len(usage.layers)))):
        if n is None:
            table.add_row(*(["…"] * 5))
            continue
        table.add_row(str(usage.layers[n]), f"{100 * q_low[n]:.1f}%", f"{100 * k_low[n]:.1f}%", str(q_top[n]), str(k_top[n]))
    return table
