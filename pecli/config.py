"""YAML files, command-line options and ``--set`` overrides → one validated, typed scheme spec.

Keys are the long option names in snake_case (``max_relative_position``); a few aliases people
already type are accepted (``rope_theta`` for ``base``). The layers merge in order — the YAML file,
then the options given on the command line, then ``--set key=value`` — and the result is validated
against the chosen scheme's parameters: an unknown key, a wrong type or an out-of-range value raises
:class:`~pecli.errors.ConfigError` naming the key and what is allowed.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

import numpy as np

from pecli.config_files import parse_yaml, read_yaml_mapping
from pecli.dtypes import DTYPES
from pecli.errors import ConfigError
from pecli.params import Parameter, choice_error, coerce, excerpt
from pecli.position_options import MAX_POSITIONS, parse_positions  # noqa: F401 (parse_positions re-exported)
from pecli.schemes import SCHEMES, Scheme, get_scheme_class
from pecli.memory import check_memory, default_memory_budget, memory_budget, parse_size  # noqa: F401 (re-exported)
from pecli.schemes.build import (
    DEFAULT_LENGTH, accepted_keys, build_scheme, layered, normalize_key, scheme_parameters, variant,
)
from pecli.schemes.positions import Positions, positions_length
from pecli.models.reading import (  # noqa: F401 (re-exported: the commands read models through the request)
    LAYER_SETTINGS, MODEL_KEYS, check_plan_schemes, group_options, model_plan, selected_plan,
)
from pecli.models.sources import DEFAULT_SOURCE, SOURCES
from pecli.models.logit_scale import attention_only_changes
from pecli.models.sources.config_json import read_hf_config, read_plan  # noqa: F401 (re-exported, as above)

if TYPE_CHECKING:
    from pecli.models.plan import LayerGroup, PositionPlan, Source

DEFAULT_SCHEME = "sinusoidal"


#: A key that a command accepts besides the scheme's parameters: declared like a scheme parameter.
Setting = Parameter


#: Keys every command that builds a scheme accepts.
RUN_SETTINGS: tuple[Setting, ...] = (
    Setting("scheme", str, DEFAULT_SCHEME, "the scheme: " + ", ".join(SCHEMES)),
    Setting("length", int, None, "number of positions L (positions 0 to L − 1)", minimum=1, maximum=MAX_POSITIONS, default_text=f"{DEFAULT_LENGTH}, or a model's max_position_embeddings"),
    Setting("positions", object, None, "position ids: start:stop[:step], an .npy file, or a list; rope, rope-nd, "
            "sinusoidal, sinusoidal-nd take real numbers too"),
    Setting("dtype", str, None, "dtype of the output", choices=tuple(DTYPES), default_text="float64"),
)


@dataclass(frozen=True)
class Spec:
    """A validated request: which scheme, at which positions, in which dtype, plus command settings."""

    scheme: Scheme
    length: int
    #: The positions encoded: 0 … length − 1 unless ``positions`` gave ids (of the scheme's rank).
    where: Positions
    dtype: str | None
    settings: Mapping[str, Any]
    #: The scheme parameters as the user gave them, before length-dependent defaults were filled in.
    given_params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    #: The model's position plan narrowed to the group this spec computes (None without a model).
    plan: PositionPlan | None = None
    #: The settings the user's keys changed over the model's group (origin *user override*).
    overrides: tuple[Source, ...] = ()
    #: The model's group under the user's keys (:func:`pecli.models.group_change.user_changed`): its logit scale
    #: is the model's code's for them.
    user_group: LayerGroup | None = None

    @property
    def group(self) -> LayerGroup | None:
        """The model's one group as this spec computes it: under the user's keys where they changed it."""
        return self.user_group if self.user_group is not None else self.plan.single if self.plan is not None else None

    @property
    def memory_budget(self) -> int:
        """Bytes the command may hold: ``max_memory``, else a quarter of the machine's memory."""
        return memory_budget(self.settings.get("max_memory"))

    def check_memory(self, needed: float, what: str = "this") -> None:
        """Refuse, before any work, what would need more than :attr:`memory_budget` bytes."""
        check_memory(needed, self.memory_budget, what)

    def sources_of(self, setting: str) -> tuple[Source, ...]:
        """Where setting ``setting`` of the scheme came from: the user's key where the user changed it over
        the model (:attr:`overrides`), else the model's group's (:meth:`LayerGroup.sources_of
        <pecli.models.plan.LayerGroup.sources_of>`); () without a model."""
        mine = tuple(source for source in self.overrides if source.setting == setting)
        group = self.plan.single if self.plan is not None else None
        return mine or (group.sources_of(setting) if group is not None else ())

    def variant(self, name: str | None = None, params: Mapping[str, Any] | None = None, **changes: Any) -> Scheme:
        """Scheme ``name`` (default: this spec's) built with the user's parameters it takes; see :func:`variant`."""
        return variant(name or self.scheme.name, self.given_params, self.length, params, **changes)

    @property
    def count(self) -> int:
        """Number of positions, known before any array is built (for memory estimates)."""
        return self.where.count

    @property
    def at_own_positions(self) -> bool:
        """True when the positions are the scheme's own: 0 … L − 1, or every cell of an n-D scheme in order."""
        if self.where.given is None:
            return True
        own = self.scheme.cells() if self.scheme.has_cells else np.arange(self.length)
        return self.where.given.shape == own.shape and bool(np.array_equal(self.where.given, own))

    @property
    def given_positions(self) -> np.ndarray | None:
        """The ids given with ``positions``, or None for the scheme's own (0 … length − 1, every cell)."""
        return None if self.at_own_positions else self.where.given

    @property
    def positions(self) -> np.ndarray:
        """The position ids, int64 — float64 for real-valued positions (rope, sinusoidal and their n-D
        forms) — of shape (N,), or (N, rank) for a scheme on a grid."""
        return self.where.ids

    @property
    def query_scale(self) -> Callable[[np.ndarray], np.ndarray] | None:
        """The factor the model's attention applies to the query at each position besides cos and sin (its
        layer group's logit scale: DeepSeek's mscale², Qwen's log-n), for what reasons about scores; None
        without a model, or when the factor is 1."""
        group = self.group
        scale = group.attention_scale if group is not None and not group.logit_scale_unknown else None
        return None if scale is None or scale.is_unit else scale.at

    @property
    def output_dtype(self) -> str:
        """The requested dtype, float64 when none was given."""
        return self.dtype or "float64"

    def describe(self) -> dict[str, Any]:
        """JSON-friendly description (scheme name and parameters, length, dtype)."""
        return {"scheme": self.scheme.name, "params": self.scheme.params(), "length": self.length, "dtype": self.output_dtype}


# -- reading the layers ---------------------------------------------------------------------------
def load_yaml(path: str) -> dict[str, Any]:
    """Read a YAML mapping of options from ``path`` (``-`` reads stdin); see :mod:`pecli.config_files`."""
    return {normalize_key(str(key)): value for key, value in read_yaml_mapping(path).items()}


def parse_sets(pairs: list[str] | None) -> dict[str, Any]:
    """Parse ``--set key=value`` pairs; values are read as YAML scalars or lists."""
    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError("set", f"expected key=value, got {excerpt(pair)}")
        try:
            value = parse_yaml(raw, f"--set {key.strip()}") if raw.strip() else ""
        except ConfigError as error:
            if "not valid YAML" not in str(error):
                raise
            value = raw
        name = normalize_key(key.strip())
        if name in out and not _same_value(out[name], value):  # as an option given twice, or a YAML key
            raise ConfigError(name, f"--set gives it twice ({excerpt(out[name])}, then {excerpt(value)}); keep one")
        out[name] = value
    return out


def merge(*layers: Mapping[str, Any] | None) -> dict[str, Any]:
    """Merge option layers, later ones winning.

    An explicit ``null`` (YAML ``key: null``, ``--set key=null``) overrides too: it asks for the default
    (``rope_scaling: null`` switches a model's scaling off). Options not given on the command line must
    be left out of their layer, not passed as None.
    """
    merged: dict[str, Any] = {}
    for layer in layers:
        merged.update(canonical_keys(layer or {}))
    return merged


def canonical_keys(layer: Mapping[str, Any]) -> dict[str, Any]:
    """One layer's keys with aliases resolved (``rope_theta`` → ``base``), so that a later layer's
    ``base`` overrides an earlier ``rope_theta``; an alias and its key with different values in the
    same layer are an error."""
    aliases = {alias: name for cls in SCHEMES.values() for alias, name in cls.aliases.items()}
    out: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, value in layer.items():
        key = normalize_key(str(key))
        name = aliases.get(key, key)
        if name in out and not _same_value(out[name], value):
            raise ConfigError(key, f"gives {value!r} but {spelled[name]} gives {out[name]!r}: keep one of them")
        out[name], spelled[name] = value, key
    return out


def _same_value(a: Any, b: Any) -> bool:
    """Equal, or the same number however YAML spelled it (``1e6`` is a string to YAML 1.1)."""
    if a == b:
        return True
    try:
        return float(a) == float(b)
    except (TypeError, ValueError, OverflowError):
        return False


# -- building ------------------------------------------------------------------------------------
def scheme_entries(value: Any, key: str = "schemes") -> list[tuple[str, dict[str, Any]]]:
    """(name, own parameters) per entry of ``"a,b"``, a YAML list of names, or a list of mappings with a
    ``scheme`` key and that entry's own parameters; [] for None."""
    if value is None:
        return []
    items = [part.strip() for part in value.split(",") if part.strip()] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not items:
        raise ConfigError(key, f"expected comma-separated scheme names or a list of scheme mappings, got {excerpt(value)}")
    entries = []
    for item in items:
        if isinstance(item, str) and item.strip():
            entries.append((item.strip(), {}))
        elif isinstance(item, Mapping) and isinstance(item.get("scheme"), str):
            entries.append((item["scheme"], {normalize_key(str(k)): v for k, v in item.items() if k != "scheme"}))
        else:
            raise ConfigError(key, f"each entry must be a scheme name or a mapping with a 'scheme' key, got {excerpt(item)}")
    for name, _ in entries:
        if name not in SCHEMES:
            raise choice_error(key, name, SCHEMES)
    return entries


# -- the request pipeline: gather → expand sources → split keys → build and place -------------------------
def resolve(
    options: Mapping[str, Any], settings: tuple[Setting, ...] = (), *,
    run_keys: tuple[str, ...] = tuple(s.name for s in RUN_SETTINGS), plan: PositionPlan | None = None,
) -> Spec:
    """Validate merged options into a :class:`Spec`.

    ``options`` holds the scheme's parameters, the ``run_keys`` of :data:`RUN_SETTINGS` the command
    reads and the command's own ``settings``; anything else is an error that lists the valid keys.
    ``plan`` is the model's plan already narrowed to one group, when the caller has read it (else the
    model that ``options`` names is read here).

    The stages, each a function of its own: the caller gathers the layers (:func:`merge` of a YAML
    file, the options given, ``--set``); :func:`expand_sources` replaces a preset and a model by the
    options they stand for; :func:`split_keys` sorts the keys into the command's settings and the
    scheme's parameters; :func:`build_and_place` builds the scheme and places it at its positions.
    """
    command = command_settings(settings, run_keys)
    given = options
    options, plan = expand_sources(options, command, plan)
    keys = split_keys(options, command)
    users = {k: v for k, v in given.items() if k not in command}
    overrides = user_overrides(users, plan)
    group = user_group(plan, users) if overrides else None
    if keys.cls.has_cells:
        return dataclasses.replace(_resolve_cells(keys, settings), plan=plan, overrides=overrides, user_group=group)
    # analysed over the user's scaling's factor × original length, as the model would run under it
    analysed = plan if group is None else dataclasses.replace(plan, groups=(group,))
    return dataclasses.replace(build_and_place(keys, settings, analysed), plan=plan, overrides=overrides, user_group=group)


def user_group(plan: PositionPlan | None, given: Mapping[str, Any]) -> LayerGroup | None:
    """The model's one group under the user's keys ``given``, its logit scale recomputed from the model's rule
    for the changed scaling (:func:`group_under_user_keys`); None without one."""
    from pecli.models.logit_scale import BETA_SCALED_TYPES, SOFTMAX_MSCALE_TYPES

    group = plan.single if plan is not None else None
    if group is None or group.options is None:
        return None
    return group_under_user_keys(group, given, affected=plan.model_type in SOFTMAX_MSCALE_TYPES | BETA_SCALED_TYPES)


def group_specs(
    options: Mapping[str, Any], plan: PositionPlan, settings: tuple[Setting, ...] = (), *,
    run_keys: tuple[str, ...] = tuple(s.name for s in RUN_SETTINGS), check: Callable[[Spec], None] | None = None,
) -> list[tuple[LayerGroup, Spec | None]]:
    """Every layer group of a model with its :class:`Spec` (None: the group has no position encoding):
    the one fan-out of the commands that answer group by group; ``check(spec)`` runs on each spec as it
    is made (a command's capability), so that the first group's refusal is the one said.

    A checkpoint (``weights``) is the table of the scheme that reads one: the groups of other schemes go
    without it (Whisper's sinusoidal encoder beside its learned decoder), unless the command itself
    reads checkpoints (``check layout``'s q/k projections).
    """
    reads_checkpoints = bool({s.name for s in settings} & set(CHECKPOINT_KEYS))
    specs: list[tuple[LayerGroup, Spec | None]] = []
    for group in plan.groups:
        if group.options is None:
            specs.append((group, None))
            continue
        own = {**options, "layer": None, "layer_group": group.name}
        if not SCHEMES[group.scheme].table_in_checkpoint and not reads_checkpoints:
            own = {k: v for k, v in own.items() if k not in CHECKPOINT_KEYS}
        spec = resolve(own, settings, run_keys=run_keys, plan=plan.select(group=group.name))
        if check is not None:
            check(spec)
        specs.append((group, spec))
    return specs


def command_settings(settings: tuple[Setting, ...], run_keys: tuple[str, ...]) -> dict[str, Setting]:
    """The keys a command takes besides the scheme's parameters: its ``run_keys`` and its own settings."""
    return {s.name: s for s in (*RUN_SETTINGS, *settings) if s.name in run_keys or s in settings}


def expand_sources(
    options: Mapping[str, Any], command: Mapping[str, Setting], plan: PositionPlan | None = None,
) -> tuple[dict[str, Any], PositionPlan | None]:
    """Stage 2: the options with what a preset and a model stand for written out, and the model's plan.

    A preset becomes its scheme and options (the user's keys win); a model's chosen layer group becomes
    its scheme options (the user's keys win; another scheme is an error); a checkpoint given without a
    scheme is read as its position table (the scheme whose table is in a checkpoint). The keys that name
    a model are removed unless the command reads the model itself.
    """
    if options.get("preset") is not None and "scheme" not in command:
        raise ConfigError("preset", "chooses one scheme and its options; this command takes no --scheme (compare: list "
                          "the schemes with --schemes)")
    if "preset" in options:
        from pecli.presets import expand_preset  # here: most runs name no preset, and start-up counts

        options = expand_preset(options)
    plan = plan if plan is not None else selected_plan(options, command)
    model_key = next((key for key in SOURCES if options.get(key) is not None), DEFAULT_SOURCE)
    options = {k: v for k, v in options.items() if k not in MODEL_KEYS or k in command}
    if options.get("scheme") is None:  # absent or null: the default
        options.pop("scheme", None)
    if plan is not None:
        return _with_model_options(options, plan, model_key), plan
    if options.get("weights") is not None and "scheme" not in options and command.get("scheme") is RUN_SETTINGS[0]:
        # A checkpoint's position table (unless the command has its own default scheme).
        options["scheme"] = next(name for name, cls in SCHEMES.items() if cls.table_in_checkpoint)
    return options, None


def _with_model_options(options: dict[str, Any], plan: PositionPlan, model_key: str) -> dict[str, Any]:
    from pecli.models.plan import one_group

    group = one_group(plan)
    from_model = group_options(plan, group, options.get("weights"))
    asked = options.get("scheme")
    if asked not in (None, from_model["scheme"]):
        raise ConfigError(model_key, f"{plan.source} uses {from_model['scheme']} in layer group {group.name}, not scheme {asked!r}")
    cls = get_scheme_class(from_model["scheme"])
    own = accepted_keys(cls)
    model = {k: v for k, v in from_model.items() if k != "scheme"}
    changes, _ = attention_only_changes(plan.model_type, cls, model, {k: v for k, v in options.items() if k in own})
    return {"scheme": from_model["scheme"], **layered(cls, model, changes),
            **{k: v for k, v in options.items() if k not in own and k != "scheme"}}


def group_under_user_keys(group: LayerGroup, options: Mapping[str, Any], affected: bool = True) -> LayerGroup:
    """``group`` of a model with the scheme keys among the command's ``options`` layered over its own
    (:func:`pecli.models.group_change.user_changed`: the length it is analysed over, its logit scale, the model's
    under the user's scaling; ``affected``: whether the model's attention applies a factor of its scaling's)."""
    from pecli.models.group_change import user_changed

    if group.options is None:
        return group
    cls = get_scheme_class(group.scheme)
    changes = {k: v for k, v in canonical_keys(options).items() if k in accepted_keys(cls)}
    if not changes:
        return group
    model_type = group.attention_rule.model_type if group.attention_rule is not None else None
    own = {k: v for k, v in group.options.items() if k != "scheme"}
    kept, attention = attention_only_changes(model_type, cls, own, changes)
    return user_changed(group, kept, affected=affected, whole=_gives_block(changes, cls), attention=attention)


def _gives_block(options: Mapping[str, Any], cls: type[Scheme]) -> bool:
    """Whether the user's ``options`` give a block of ``cls`` (``rope_scaling``): the whole scaling, in
    whose place none of the model's block's keys stay."""
    return any(normalize_key(str(key)) in cls.block_keys for key in options)


def user_overrides(options: Mapping[str, Any], plan: PositionPlan | None) -> tuple[Source, ...]:
    """The settings the user's keys change over the model's layer group (``--base``, ``--set rope_theta=…``,
    a ``rope_scaling`` block in a YAML file), each a :class:`~pecli.models.plan.Source` of origin *user
    override* naming the key as given; () without a model, or for a group without position encoding."""
    from pecli.models.plan import Origin, Source

    group = plan.single if plan is not None else None
    if group is None or group.options is None:
        return ()
    cls = get_scheme_class(group.scheme)
    own = accepted_keys(cls)
    model = {k: v for k, v in group.options.items() if k != "scheme"}
    given = {key: value for key, value in options.items() if key in own}
    kept, attention = attention_only_changes(plan.model_type, cls, model, given)
    found = [Source(setting, str(key), Origin.USER, repr(value))
             for key, given in kept.items()
             for setting, value in layered(cls, {key: given}).items()]
    found += [Source(setting, next((str(key) for key in given if normalize_key(str(key)) == setting),
                                   next(iter(given))), Origin.USER, repr(value)) for setting, value in attention.items()]
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class SortedKeys:
    """A request's keys sorted (stage 3 of :func:`resolve`)."""

    #: The scheme's name and class.
    scheme: str
    cls: type[Scheme]
    #: The command's settings, coerced (None left out).
    chosen: dict[str, Any]
    #: The scheme parameters as given: of this scheme, and of the schemes a ``schemes`` setting lists.
    params: dict[str, Any]
    #: Those this scheme takes.
    own: dict[str, Any]


def split_keys(options: Mapping[str, Any], command: Mapping[str, Setting]) -> SortedKeys:
    """Stage 3: the scheme chosen, and the options sorted into the command's settings and the scheme's
    parameters; a key that is neither is an error naming the scheme that takes it, or the closest key.

    A command may declare its own ``scheme`` setting, with its own default (inspect: rope); one that draws
    several schemes (``schemes``) accepts the parameters of each of them.
    """
    name = command["scheme"].coerce(options.get("scheme", command["scheme"].default)) if "scheme" in command else DEFAULT_SCHEME
    cls = get_scheme_class(name)
    listed = options.get("schemes", command["schemes"].default) if "schemes" in command else None
    overlaid = [cls] + [SCHEMES[other] for other, _ in scheme_entries(listed)]
    parameter_names = set().union(*(accepted_keys(c) for c in overlaid))
    own_names = accepted_keys(cls)
    chosen: dict[str, Any] = {}
    params: dict[str, Any] = {}
    for key, value in options.items():
        # A checkpoint key configures the scheme when it takes it (learned: its table), else the command. A
        # key both take whose value is a list is the scheme's: verify's --inv-freq names your file, and the
        # list a model's group gives (a GGUF file's rope_freqs), or --set inv_freq=[…], is the reference's.
        shared_list = key in command and key in parameter_names and command[key].type is str \
            and isinstance(value, (list, tuple))
        if key in command and not (key in CHECKPOINT_KEYS and key in own_names) and not shared_list:
            if value is not None:
                chosen[key] = command[key].coerce(value)
        elif key in parameter_names:
            params[key] = value
        else:
            raise _unknown_key(key, name, cls, command)
    return SortedKeys(name, cls, chosen, params, {k: v for k, v in params.items() if k in own_names})


def _unknown_key(key: str, name: str, cls: type[Scheme], command: Mapping[str, Setting]) -> ConfigError:
    other = sorted(n for n, c in SCHEMES.items() if key in scheme_parameters(c))
    valid = list(dict.fromkeys([*command, *scheme_parameters(cls)]))
    aliases = {alias: target for alias, target in getattr(cls, "aliases", {}).items() if alias not in valid}
    guess = difflib.get_close_matches(key, [*valid, *aliases], n=1, cutoff=0.75)
    hint = f"; it is a parameter of {', '.join(other)}" if other else f"; did you mean {guess[0]}?" if guess else ""
    # each key with the spellings it also answers to (base: rope_theta), as every door accepts them
    spelled = {target: [a for a, t in aliases.items() if t == target] for target in valid}
    shown = [f"{k} (or {', '.join(spelled[k])})" if spelled[k] else k for k in valid]
    others = {t: [a for a, u in aliases.items() if u == t] for t in aliases.values() if t not in valid}
    shown += [f"{t} (or {', '.join(names)})" for t, names in others.items()]
    return ConfigError(key, f"unknown key for scheme {name!r}{hint} (valid keys: {', '.join(shown)})")


def build_and_place(keys: SortedKeys, settings: tuple[Setting, ...], plan: PositionPlan | None = None) -> Spec:
    """Stage 4: the scheme built from its parameters, at its positions, over its length.

    The length is ``length``, else the positions' (their last id + 1), else the length the model's
    group is analysed over (:func:`natural_length`). The current sequence length of a scheme that reads
    it (``context``) defaults to what the positions reach; a ``context`` the scheme does not read is an
    error; a checkpoint's table, asked for no length, spans its own rows.
    """
    cls, chosen, own = keys.cls, keys.chosen, dict(keys.own)
    given = chosen.get("positions")
    budget = memory_budget(chosen.get("max_memory"))
    positions = None if given is None else parse_positions(given, cls.position_rank, budget, real=cls.real_positions)
    length = chosen.get("length")
    if positions is None:
        length = length or natural_length(cls, keys.params, plan)
    elif length is None:
        length = positions_length(positions)
    if positions is not None and "context" in scheme_parameters(cls) and own.get("context") is None:
        # The current sequence length (dynamic NTK, LongRoPE, xPos's centre) reaches the last position id, as in HF.
        own["context"] = max(int(length), positions_length(positions))
    scheme = build_scheme(keys.scheme, own, length=length)
    if keys.params.get("context") is not None and not scheme.reads_context:
        from pecli.schemes.scaling.registry import SCALINGS

        readers = " and ".join(name for name, record in SCALINGS.items() if record.reads_context)
        raise ConfigError("context", f"is the current sequence length of the {readers} scalings; {scheme.name} "
                          f"with scaling {getattr(scheme, 'scaling', 'none')} does not depend on it")
    analysed = plan is not None and plan.single is not None and plan.single.analysis_length == length
    if positions is None and chosen.get("length") is None and scheme.model_length not in (None, 0, length) and not analysed:
        length = scheme.model_length  # a checkpoint's position table: its rows
        scheme = scheme.at_length(length)
    resolved = {s.name: chosen.get(s.name, s.default) for s in settings}
    where = (Positions.range(length, cls.position_rank) if positions is None
             else Positions.of(positions, cls.position_rank, real=cls.real_positions))
    return Spec(scheme, int(length), where, chosen.get("dtype"), resolved, keys.params, plan)


def natural_length(cls: type[Scheme], params: Mapping[str, Any], plan: PositionPlan | None) -> int:
    """The length of a request that gives no length nor positions: the length its model's group is
    analysed over (a sliding window, a scaling's factor × original length), else the model's context
    (``max_position_embeddings``), else :data:`DEFAULT_LENGTH`."""
    group = plan.single if plan is not None else None
    if group is not None and group.options is not None and group.analysis_length:
        return int(group.analysis_length)
    context = params.get("max_position_embeddings") if "max_position_embeddings" in scheme_parameters(cls) else None
    return coerce("max_position_embeddings", context, int, minimum=1) if context is not None else DEFAULT_LENGTH


def _resolve_cells(keys: SortedKeys, settings: tuple[Setting, ...]) -> Spec:
    """The :class:`Spec` of an n-D scheme: its positions are its own cells (a grid's, a sequence's), so
    ``length`` is their number; ``positions`` may pick some of them by their coordinates."""
    scheme = build_scheme(keys.scheme, keys.own)
    count, rank, chosen = scheme.cell_count, scheme.position_rank, keys.chosen
    length = chosen.get("length")
    if length is not None and length != count:
        raise ConfigError(
            "length", f"{keys.scheme} encodes its {count:,} cells ({scheme.cells_text()}), not {length:,} positions; "
            f"set its {'grid' if scheme.on_grid else 'sequence'} instead",
        )
    given = chosen.get("positions")
    real = scheme.real_positions
    where = (Positions.cells(count, rank, scheme.cells) if given is None
             else Positions.of(parse_positions(given, rank, real=real), rank, real=real))
    resolved = {s.name: chosen.get(s.name, s.default) for s in settings}
    return Spec(scheme, count, where, chosen.get("dtype"), resolved, keys.params)


#: Keys naming a checkpoint: the ``learned`` scheme's table, or the q/k projections a command reads.
CHECKPOINT_KEYS = ("weights", "tensor")


#: The memory key every command takes: work that would need more is refused before it starts.
MEMORY_SETTING = Setting(
    "max_memory", str, None, "refuse to start work that needs more memory than this, e.g. 2G",
    default_text="a quarter of RAM", group="Configuration",
)
