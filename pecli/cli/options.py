"""Command-line options made from the declarations of the core: nothing here restates a parameter.

Every scheme parameter is declared once, as a :class:`~pecli.params.Parameter` on its scheme (or on
its RoPE scaling type); every command setting likewise in its command module. This module turns those
records into Typer options: ``max_relative_position`` becomes ``--max-relative-position``, a list
becomes a comma list, a flag ``--name`` (``--no-name`` where it is on by default), and the help text states the default (per scheme,
where schemes differ). What is only presentation — short flags, the off-spelling of a flag, the panel
an option is listed in — lives in the small tables below.
"""

from __future__ import annotations

from typing import Annotated, Any, Callable, Iterable, Optional

import typer

from pecli.cli.completion import completer_for
from pecli.params import Parameter

SCHEME_PANEL = "Scheme"
CONFIG_PANEL = "Configuration"
OUTPUT_PANEL = "Output"

#: One-letter spellings; each means the same key in every command.
SHORT_FLAGS: dict[str, str] = {
    "scheme": "-s",
    "schemes": "-S",
    "dim": "-d",
    "length": "-L",
    "max_relative_position": "-K",
    "train_length": "-T",
    "config": "-c",
    "out": "-o",
}

#: Flags whose "off" spelling is a word of its own.
FLAG_SPELLINGS: dict[str, str] = {"bidirectional": "--bidirectional/--causal"}

#: Help for a parameter that several schemes declare with scheme-specific wording.
SHARED_HELP: dict[str, str] = {
    "dim": "vector size: the model dimension (rope: the head dimension)",
    "base": "base of the frequencies θ_i = base^(−2i/d) (alias rope_theta)",
    "layout": "interleaved: pairs (2i, 2i+1); half: pairs (i, i + d/2), HF's rotate_half; split (sinusoidal-nd): "
              "the sines of every axis, then the cosines",
    "inv_freq": "the inverse frequency of each pair (radians per unit of position) in place of the base's ladder: "
                "rope r/2, sinusoidal d/2, rope-nd d/(2k) or d/2 numbers; inline or an .npy or text file",
    "indexing": "ij: coordinates (h, w), grid H,W; xy: coordinates (x, y), grid W,H, x first (numpy.meshgrid, "
                "MAE, timm grid_indexing); the rows run along the image's rows either way",
    "prefix_tokens": "rows without a position before the cells' (cls, register tokens): zeros (sinusoidal-nd), "
                     "the identity rotation (rope-nd)",
    "scale": "multiply the table by this (x-transformers' scaled sinusoid: dim^-0.5)",
    "factor": "scaling factor s (context ratio; rope-nd linear: coordinates c → c/s, s may be below 1)",
    "seed": "seed of the table's initialisation",
    "std": "standard deviation of the initialisation",
}


def option_name(name: str) -> str:
    return "--" + name.replace("_", "-")


def negated(parameter: Parameter) -> bool:
    """Whether a flag is spelled ``--no-NAME`` (on by default): giving it means NAME = false."""
    return parameter.base_type is bool and parameter.name not in FLAG_SPELLINGS and (
        parameter.default is True or parameter.default_text == "true"
    )


def _typer_type(parameter: Parameter) -> Any:
    kind = parameter.base_type
    if parameter.is_list or kind not in (int, float, bool, str):
        return str  # lists as "1,2,4"; anything else is parsed by Parameter.coerce
    return kind


def _default_text(declarations: list[tuple[str, Parameter]]) -> str | None:
    """``512`` when every scheme agrees, else ``512 sinusoidal, learned; 128 rope``."""
    by_default: dict[str, list[str]] = {}
    for owner, parameter in declarations:
        text = parameter.describe_default()
        if text is not None:
            by_default.setdefault(text, []).append(owner)
    if not by_default:
        return None
    if len(by_default) == 1 and len(declarations) == sum(map(len, by_default.values())):
        return next(iter(by_default))
    return "; ".join(f"{text} {', '.join(owners)}" for text, owners in by_default.items())


def make_option(
    parameter: Parameter, *, panel: str, owners: Iterable[tuple[str, Parameter]] = (), help: str | None = None,
    complete: Callable[..., list[str]] | None = None,
) -> Any:
    """The Typer option of one declaration: an ``Annotated`` type whose value is None when not given.

    ``owners`` are the (scheme, declaration) pairs of a parameter several schemes take, so that the
    help can name them and their defaults; ``complete`` the values completion offers, when the command
    accepts fewer than the declaration (the schemes with the capability it needs).
    """
    declarations = list(owners) or [("", parameter)]
    names = [FLAG_SPELLINGS.get(parameter.name, option_name(parameter.name))]
    kind = _typer_type(parameter)
    if kind is bool and "/" not in names[0]:
        # One spelling, the one that changes something: --name where the default is off, --no-name where it
        # is on (a second form would widen every --help table past 80 columns); --set NAME=… sets either way.
        names[0] = f"--no-{names[0][2:]}" if negated(parameter) else names[0]
    if parameter.name in SHORT_FLAGS:
        names.append(SHORT_FLAGS[parameter.name])
    text = help or (SHARED_HELP.get(parameter.name) if len(declarations) > 1 else None) or parameter.help
    if len(declarations) > 1:
        text += f" ({', '.join(owner for owner, _ in declarations)})"
    choices = list(dict.fromkeys(c for _, declared in declarations for c in (declared.choices or ())))
    if choices:  # every scheme's (layout: split is sinusoidal-nd's)
        text += f"; one of {', '.join(choices)}"
    if parameter.is_list:
        text += ", comma-separated"
    default = _default_text(declarations)
    if kind is bool and negated(parameter):  # the flag turns it off: say what it stops
        head, colon, rest = text.partition(": ")
        head, rest = (head + colon, rest) if colon and " " not in head else ("", text)  # "yarn: …" keeps its kind
        text, default = f"{head}do not {rest[0].lower()}{rest[1:]} (on without this flag)", None
    if default is not None:
        text += f" [default: {default}]"
    metavar = "LIST" if parameter.is_list else None  # a flag shows none (pecli.cli.help)
    complete = None if kind is bool else complete or completer_for(parameter.name, choices)
    info = typer.Option(*names, help=text, rich_help_panel=panel, show_default=False, metavar=metavar, autocompletion=complete)
    return Annotated[Optional[kind], info]


def plain_flag(*names: str, help: str, panel: str = OUTPUT_PANEL) -> Any:
    """An on/off flag without a ``--no-`` form (``--json``, ``--force``)."""
    return Annotated[bool, typer.Option(*names, help=help, rich_help_panel=panel, show_default=False)]


JsonOption = plain_flag("--json", help="print one JSON document on stdout, nothing else")
QuietOption = plain_flag("--quiet", "-q", help="print nothing on success; the exit code is the answer")
ForceOption = plain_flag("--force", "-f", help="overwrite an existing output file")
