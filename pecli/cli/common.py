"""What every subcommand shares: the scheme options, the config layers, errors and output.

:func:`scheme_command` gives a command every option that configures a scheme — the run keys, every
registered scheme's parameters and the command's own settings, each generated from its one declaration
(:mod:`pecli.cli.options`) — merges them with ``--config`` and ``--set``, validates everything into a
:class:`~pecli.config.Spec` and hands the command that spec. Errors of the core become one line on
stderr and exit code 2 in :func:`errors_to_exit`.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import sys
import typing
from typing import Any, Callable, Iterator

import typer

from pecli.cli.exits import Interrupted, ReaderGone
from pecli.cli.options import (
    CONFIG_PANEL, OUTPUT_PANEL, SCHEME_PANEL, ForceOption, JsonOption, QuietOption, make_option, negated,
)
from pecli.config import (
    LAYER_SETTINGS, MEMORY_SETTING, RUN_SETTINGS, Setting, Spec, group_specs, group_under_user_keys, load_yaml, merge,
    parse_sets, resolve, selected_plan,
)
from pecli.errors import PecliError
from pecli.models.sources import SOURCES
from pecli.params import Parameter
from pecli.presets import PRESET_SETTING
from pecli.schemes import SCHEMES
from pecli.schemes.base import Capability, require
from pecli.schemes.scaling.registry import SCALINGS

#: Keys that choose where options come from rather than configure anything themselves.
CONFIG_OPTIONS: dict[str, Any] = {
    "config": make_option(Parameter("config", str, help="YAML file of options ('-' reads stdin)"), panel=CONFIG_PANEL),
    **{key: make_option(Parameter(key, str, help=source.help), panel=CONFIG_PANEL) for key, source in SOURCES.items()},
    **{setting.name: make_option(setting, panel=CONFIG_PANEL) for setting in LAYER_SETTINGS},
    "preset": make_option(PRESET_SETTING, panel=CONFIG_PANEL),
    "set": typing.Annotated[
        typing.Optional[list[str]],
        typer.Option("--set", metavar="KEY=VALUE", help="override any key: key=value (repeatable)", rich_help_panel=CONFIG_PANEL, show_default=False),
    ],
}


def scheme_parameter_options(schemes: typing.Iterable[type] | None = None) -> dict[str, Any]:
    """An option per scheme parameter of ``schemes`` (default: every registered scheme), made from the
    schemes' declarations; a parameter several schemes take is one option whose help names them."""
    owners: dict[str, list[tuple[str, Parameter]]] = {}
    for cls in schemes if schemes is not None else SCHEMES.values():
        for name, parameter in cls.parameters().items():
            owners.setdefault(name, []).append((cls.name, parameter))
    return {
        name: make_option(declarations[0][1], panel=declarations[0][1].group or SCHEME_PANEL, owners=declarations)
        for name, declarations in owners.items()
    }


#: The options that name a command's outputs; every other file an option names is an input, never overwritten.
OUTPUT_KEYS = frozenset({"out", "plot"})


# -- warnings held until the command answers -------------------------------------------------------------
#: Warnings about the input (a model's config), said once the command answers: before its first output,
#: message or progress, or at its end; not at all when it refuses (an error is the only line).
_HELD: list[str] = []


def hold_warning(text: str, *, quiet: bool = False) -> None:
    """Say ``text`` on stderr when the command answers (:func:`release_warnings`), not if it fails."""
    if not quiet and text not in _HELD:
        _HELD.append(text)


def release_warnings() -> None:
    """Write the held warnings on stderr."""
    while _HELD:
        sys.stderr.write(_HELD.pop(0) + "\n")


def drop_warnings() -> None:
    """Forget the held warnings (the command refused its input)."""
    _HELD.clear()


class _Releasing:
    """A progress reporter that says the held warnings before its first bar."""

    def __init__(self, reporter: Any) -> None:
        self._reporter = reporter

    def start(self, label: str, total: int | None) -> None:
        release_warnings()
        self._reporter.start(label, total)

    def advance(self, amount: int) -> None:
        self._reporter.advance(amount)

    def finish(self) -> None:
        self._reporter.finish()


# -- errors -----------------------------------------------------------------------------------------
def fail(message: str) -> typer.Exit:
    """Print ``message`` as one line on stderr and return the exit for bad input (code 2)."""
    from pecli.cli import one_line

    drop_warnings()
    sys.stderr.write(f"pecli: error: {one_line(message)}\n")
    return typer.Exit(2)


@contextlib.contextmanager
def errors_to_exit() -> Iterator[None]:
    """Turn the core's exceptions into one line on stderr and exit code 2."""
    try:
        yield
    except PecliError as error:
        raise fail(str(error)) from None
    except MemoryError:
        raise fail("out of memory; ask for fewer positions or a smaller dimension") from None
    except BrokenPipeError:
        raise ReaderGone() from None
    except KeyboardInterrupt:
        raise Interrupted() from None


def group_heading(plan: Any, group: Any, what: str | None = None):
    """The line above one layer group's output: ``layer group NAME of SOURCE: layers …: scheme``."""
    from rich.text import Text

    what = what or ("no position encoding" if group.options is None else group.scheme)
    return Text(f"layer group {group.name} of {plan.source}: layers {group.layers_text()}: {what}", style="bold")


def check_output_flags(json: bool, quiet: bool) -> None:
    """``--quiet`` and ``--json`` exclude each other: one says print nothing, the other one document."""
    if json and quiet:
        from pecli.errors import ConfigError

        raise ConfigError("quiet", "--quiet prints nothing and --json one document: give one of them")


# -- the shared scheme options ------------------------------------------------------------------------
class SchemeCommand:
    """A command that takes the scheme options; called by Typer with every option as a keyword.

    Its signature is made when Typer asks for it, from the registry as it is then, so a scheme registered
    at run time (a plug-in, a test) has its options too.
    """

    def __init__(
        self, func: Callable[..., Any], settings: tuple[Setting, ...], *, needs: Capability | None,
        run_keys: tuple[str, ...], per_group: Callable[..., Any] | None = None,
        whole_plan: Callable[[dict[str, Any]], bool] | None = None, complete_scheme: Callable[..., list[str]] | None = None,
    ) -> None:
        functools.update_wrapper(self, func)
        self.complete_scheme = complete_scheme
        self.func, self.needs, self.per_group, self.whole_plan = func, needs, per_group, whole_plan
        # every command takes --max-memory; a command may declare its own spelling of it
        self.settings = settings if any(s.name == MEMORY_SETTING.name for s in settings) else (*settings, MEMORY_SETTING)
        self.run_keys = run_keys
        self._signature: tuple[Any, inspect.Signature] | None = None  # (the registry it was made from, it)

    def _negated(self) -> set[str]:
        """The flags spelled ``--no-NAME``, whose value arrives as True when given."""
        declarations = [p for cls in SCHEMES.values() for p in cls.parameters().values()] + list(self.settings)
        return {p.name for p in declarations if negated(p)}

    def _shared(self) -> dict[str, Any]:
        # The schemes the command accepts (its capability, the choices of its own --scheme): their parameters
        # are its options, and completion offers their values.
        accepted = next((s.choices for s in self.settings if s.name == "scheme" and s.choices), None)
        schemes = [cls for cls in SCHEMES.values()
                   if (self.needs is None or cls.has(self.needs)) and (accepted is None or cls.name in accepted)]
        offered = self.complete_scheme
        if offered is None and self.needs is not None:  # completion offers the schemes the command accepts
            from pecli.cli.completion import choices_of

            offered = choices_of(cls.name for cls in schemes)
        run = {s.name: make_option(s, panel=SCHEME_PANEL, complete=offered if s.name == "scheme" else None)
               for s in RUN_SETTINGS if s.name in self.run_keys}
        own = {s.name: make_option(s, panel=s.group or self.func.__name__.capitalize()) for s in self.settings}
        # A preset chooses the scheme: only commands that take --scheme take it.
        config = {k: v for k, v in CONFIG_OPTIONS.items() if k != "preset" or "scheme" in self.run_keys}
        return {**run, **scheme_parameter_options(schemes), **own, **config}

    @property
    def __signature__(self) -> inspect.Signature:
        # The registries the options come from (a scheme's parameters include those of the registered
        # scalings), compared by their records: asked several times per command, it has to be cheap.
        registry = (tuple(SCHEMES.items()), tuple(SCALINGS.items()))
        if self._signature is None or self._signature[0] != registry:
            self._signature = (registry, self._make_signature())
        return self._signature[1]

    def _make_signature(self) -> inspect.Signature:
        # The annotations evaluated as written: typing.get_type_hints on Python 3.10 wraps the annotation of a
        # parameter defaulting to None in Optional[…], which hides Typer's Annotated metadata (an Argument then
        # became an option: `pecli plot heatmap` was "unexpected extra argument").
        signature = inspect.signature(self.func, eval_str=True)
        own = [
            p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
            for name, p in signature.parameters.items()
            if name != "spec"
        ]
        shared = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation)
            for name, annotation in self._shared().items()
            if name not in signature.parameters  # a command may spell a shared option its own way
        ]
        return signature.replace(parameters=own + shared)

    def __call__(self, **kwargs: Any) -> Any:
        drop_warnings()  # an earlier command's, run in this process (a test, a notebook)
        try:
            return self._call(**kwargs)
        except typer.Exit as verdict:
            if verdict.exit_code == 2:  # an error is the only line: the model's warnings are not said
                drop_warnings()
            raise
        finally:
            release_warnings()

    def _call(self, **kwargs: Any) -> Any:
        with errors_to_exit():
            own_names = set(inspect.signature(self.func).parameters) - {s.name for s in self.settings}
            config_path, sets = kwargs.pop("config", None), kwargs.pop("set", None)
            own = {name: kwargs.pop(name) for name in list(kwargs) if name in own_names}
            check_output_flags(bool(own.get("json")), bool(own.get("quiet")))
            given = {name: value for name, value in kwargs.items() if value is not None}
            for name in given.keys() & self._negated():
                given[name] = not given[name]  # --no-NAME was given
            from_file = load_yaml(config_path) if config_path is not None else {}
            options = merge(from_file, given, parse_sets(sets))
            if options.get("model") is not None:  # a missing local file is said before any network access
                from pecli.weights.checkpoint import require_local

                require_local(options.get("weights"))
            plan = selected_plan(options, {s.name: s for s in self.settings})  # None where the command reads models itself
            if plan is not None:
                for warning in plan.warnings:
                    hold_warning(f"pecli: warning: {warning}", quiet=bool(own.get("quiet")))
        from pecli.io import reading

        try:
            with reading([config_path, *(value for key, value in options.items() if key not in OUTPUT_KEYS)]):
                result = self._run(options, plan, own)
        except typer.Exit as verdict:  # a check that failed (exit 1) has still answered over those lengths
            if verdict.exit_code in (0, 1):
                self._length_notes(options, plan, own)
            raise
        self._length_notes(options, plan, own)
        return result

    def _length_notes(self, options: dict[str, Any], plan: Any, own: dict[str, Any]) -> None:
        """Say, after the answer, which groups were analysed over a length the model chose (a sliding window,
        a scaling's factor × original length) rather than max_position_embeddings."""
        if plan is None or "length" not in self.run_keys or options.get("length") is not None \
                or options.get("positions") is not None or (self.whole_plan and self.whole_plan(own)):
            return
        given = {k: v for k, v in options.items() if k not in {s.name for s in self.settings}}  # the scheme's keys
        for group in (group_under_user_keys(group, given) for group in plan.groups):
            if group.analysis_note:
                message(f"pecli: layer group {group.name}: {group.analysis_note}; --length sets another",
                        quiet=bool(own.get("quiet")))

    def _run(self, options: dict[str, Any], plan: Any, own: dict[str, Any]) -> Any:
        from pecli.cli.progress import reporter_for
        from pecli.progress import reporting

        with errors_to_exit():
            several = plan is not None and (plan.single is None or plan.single.options is None)
            whole = bool(self.whole_plan and self.whole_plan(own))
            if plan is not None and self.per_group is not None and (several or whole):
                # Every layer group of the model (or the one without position encoding that was chosen);
                # a command that shows the plan itself computes none of them.
                specs = [] if whole else group_specs(options, plan, self.settings, run_keys=self.run_keys, check=self._require)
                run = functools.partial(self.per_group, plan, specs, options, **own)
            else:
                run = functools.partial(self.func, self._resolve(options, plan), **own)
            with reporting(_Releasing(reporter_for(quiet=bool(own.get("quiet") or own.get("json"))))):
                return run()

    def _resolve(self, options: dict[str, Any], plan: Any = None) -> Spec:
        spec = resolve(options, self.settings, run_keys=self.run_keys, plan=plan)
        self._require(spec)
        return spec

    def _require(self, spec: Spec) -> None:
        """The command's capability, asked of the scheme: refused with a line naming what it lacks. A logit
        scale pecli cannot recompute under the user's keys is said (what reads it leaves it out)."""
        if self.needs is not None:
            require(spec.scheme, self.needs, self.func.__name__)
        group = spec.group
        if group is not None and group.logit_scale_unknown:
            hold_warning(f"pecli: warning: layer group {group.name}: the logit scale under your keys is not known to "
                         f"pecli ({group.logit_scale_unknown}); it is left out")


def scheme_command(
    *settings: Setting, needs: Capability | None = None, run_keys: tuple[str, ...] = ("scheme", "length", "positions", "dtype"),
    per_group: Callable[..., Any] | None = None, whole_plan: Callable[[dict[str, Any]], bool] | None = None,
    complete_scheme: Callable[..., list[str]] | None = None,
) -> Callable[[Callable[..., Any]], SchemeCommand]:
    """Give a command the scheme options and call it with a validated :class:`Spec`.

    The decorated function takes ``spec`` first, then its own parameters (flags such as ``--json``,
    arguments such as a property name). ``settings`` are the command's configuration keys: each becomes
    an option made from its declaration, can come from ``--config`` or ``--set`` as well, and arrives in
    ``spec.settings``. ``needs`` limits the scheme options to the schemes with that capability;
    ``run_keys`` are the run keys (scheme, length, positions, dtype) the command reads.

    ``per_group(plan, [(group, spec or None), …], options, **own)`` answers for a model whose layer groups differ
    (``--hf-config``/``--model`` without ``--layer``/``--layer-group``) and for layers without position
    encoding (spec None); a command without it refuses those with a line naming ``--layer``.
    ``whole_plan(own)`` true sends every model to ``per_group``, whatever its groups (``inspect config``).
    ``complete_scheme(ctx, incomplete)`` offers the schemes the command accepts, when they depend on the
    line (plot's kind); without it completion offers those with ``needs``.
    """

    def decorate(func: Callable[..., Any]) -> SchemeCommand:
        return SchemeCommand(func, settings, needs=needs, run_keys=run_keys, per_group=per_group, whole_plan=whole_plan,
                             complete_scheme=complete_scheme)

    return decorate


# -- output ---------------------------------------------------------------------------------------------
def jsonable(value: Any) -> Any:
    """Plain JSON values: NumPy scalars and arrays unwrapped, non-finite floats as null, paths as text."""
    from pecli.render.tables import plain

    return plain(value)


def print_json(document: Any) -> None:
    """Print one JSON document on stdout, nothing else."""
    release_warnings()
    sys.stdout.write(json.dumps(jsonable(document), indent=2) + "\n")


def stdout_console():
    """The console of stdout: a table that cannot fit is printed whole in a pipe, never cut
    (:mod:`pecli.render.console`)."""
    from pecli.render.console import stdout_console as fitting_console

    release_warnings()

    return fitting_console()


def message(text: str, *, quiet: bool = False) -> None:
    """A message for people, on stderr (never mixed with data on stdout)."""
    release_warnings()
    if not quiet:
        sys.stderr.write(text + "\n")


__all__ = [
    "CONFIG_PANEL", "OUTPUT_PANEL", "SCHEME_PANEL",
    "ForceOption", "JsonOption", "QuietOption", "Spec", "errors_to_exit", "fail", "jsonable",
    "message", "print_json", "scheme_command", "stdout_console",
]
