"""Shell completion: Typer's own (``pecli --install-completion``, ``--show-completion``), with the values
pecli knows offered for the options and arguments that take them — scheme names, choices, properties,
plot kinds, and the layer groups of the model named on the same line.

A completing shell runs ``pecli`` with ``_PECLI_COMPLETE`` set and the line in the environment; the lazy
group of commands loads only the module of the command on that line.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable

#: The environment variable Click's completion protocol sets for ``pecli``.
COMPLETE_VAR = "_PECLI_COMPLETE"


def matching(values: Iterable[str], incomplete: str) -> list[str]:
    return [value for value in values if value.startswith(incomplete)]


def choices_of(choices: Iterable[str]) -> Callable[[str], list[str]]:
    """A completer offering ``choices``."""
    fixed = tuple(choices)

    def complete(incomplete: str) -> list[str]:
        return matching(fixed, incomplete)

    return complete


def schemes(incomplete: str) -> list[str]:
    from pecli.schemes import SCHEMES

    return matching(SCHEMES, incomplete)


def scheme_lists(incomplete: str) -> list[str]:
    """``--schemes rope,ali`` → ``rope,alibi``: the last name of a comma list."""
    from pecli.schemes import SCHEMES

    head, _, last = incomplete.rpartition(",")
    return [f"{head},{name}" if head else name for name in matching(SCHEMES, last)]


def properties(incomplete: str) -> list[str]:
    from pecli.analysis.registry import properties

    return matching(list(properties()), incomplete)


def sweep_checks(incomplete: str) -> list[str]:
    """What ``sweep`` runs: the properties and ``all`` (not ``layout``, which reads weights)."""
    from pecli.analysis.registry import all_names

    return matching([*all_names(), "all"], incomplete)


def plot_kinds(incomplete: str) -> list[str]:
    from pecli.render.figures import PLOTS

    return matching(PLOTS, incomplete)


def plot_schemes(ctx: Any, incomplete: str) -> list[str]:
    """The schemes the plot kind named earlier on the line draws (heatmap's without one)."""
    from pecli.render.figures import PLOTS
    from pecli.schemes import SCHEMES

    params = getattr(ctx, "params", {}) or {}
    # While completing, Click leaves the positional KIND among the unparsed words.
    words = [params.get("kind"), *(getattr(ctx, "args", None) or [])]
    kind = next((word for word in words if word in PLOTS), "heatmap")
    return matching([name for name, cls in SCHEMES.items() if PLOTS[kind].accepts(cls)], incomplete)


def layer_groups(ctx: Any, incomplete: str) -> list[str]:
    """The layer groups of the model that ``--hf-config`` or ``--model`` names earlier on the line (none
    when it cannot be read: completion never fails)."""
    params = getattr(ctx, "params", {}) or {}
    try:
        from pecli.config import model_plan

        plan = model_plan(params.get("hf_config"), params.get("model"))
    except Exception:  # noqa: BLE001 - a half-typed line: offer nothing rather than an error
        return []
    return matching([group.name for group in plan.groups], incomplete)


#: Completers by option name (beyond the choices an option declares).
BY_NAME: dict[str, Callable[..., list[str]]] = {"scheme": schemes, "schemes": scheme_lists, "layer_group": layer_groups}


def completer_for(name: str, choices: Iterable[str]) -> Callable[..., list[str]] | None:
    """The completer of option ``name`` whose declared choices are ``choices`` (None: nothing to offer)."""
    choices = tuple(choices)
    if choices:  # a command that takes only some schemes (verify, inspect) offers only those
        return choices_of(choices)
    return BY_NAME.get(name)


def request_is_broken(environ: dict[str, str] | None = None) -> bool:
    """Whether a completion request lacks what its shell's protocol needs (bash: ``COMP_WORDS`` and a
    whole-number ``COMP_CWORD``): such a request gets no completion, quietly, rather than an error."""
    environ = os.environ if environ is None else environ
    mode = environ.get(COMPLETE_VAR)
    if mode is None:
        return False
    if "bash" in mode or "COMP_CWORD" in environ and "fish" not in mode:
        try:
            int(environ.get("COMP_CWORD", ""))
        except ValueError:
            return True
        return "COMP_WORDS" not in environ
    return False

