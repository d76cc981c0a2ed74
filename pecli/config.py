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
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from pecli.config_files import parse_yaml, read_yaml_mapping
from pecli.dtypes import DTYPES
from pecli.errors import ConfigError, PecliError, PositionError
from pecli.io import size_text
from pecli.params import Parameter, choice_error, coerce, excerpt
from pecli.schemes import SCHEMES, Scheme, get_scheme_class
from pecli.memory import check_memory, default_memory_budget, memory_budget, parse_size  # noqa: F401 (re-exported)
from pecli.schemes.build import DEFAULT_LENGTH, accepted_keys, build_scheme, normalize_key, scheme_parameters, variant
from pecli.schemes.positions import Positions, as_positions, positions_length

if TYPE_CHECKING:
    from pecli.models.plan import PositionPlan

DEFAULT_SCHEME = "sinusoidal"
#: More positions than any context a model runs (2^32); beyond this a range is surely a typo.
MAX_POSITIONS = 1 << 32


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


#: Keys that choose one layer group of a model's position plan (with ``hf_config`` or ``model``).
LAYER_SETTINGS: tuple[Setting, ...] = (
    Setting("layer", int, None, "one layer of the model: 0-based, as transformers' layer_idx", minimum=0,
            default_text="every layer group", group="Configuration"),
    Setting("layer_group", str, None, "one layer group of the model by name (as inspect config lists them)",
            default_text="every layer group", group="Configuration"),
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

    @property
    def memory_budget(self) -> int:
        """Bytes the command may hold: ``max_memory``, else a quarter of the machine's memory."""
        return memory_budget(self.settings.get("max_memory"))

    def check_memory(self, needed: float, what: str = "this") -> None:
        """Refuse, before any work, what would need more than :attr:`memory_budget` bytes."""
        check_memory(needed, self.memory_budget, what)

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
        out[normalize_key(key.strip())] = value
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
    except (TypeError, ValueError):
        return False


# -- building ------------------------------------------------------------------------------------
def parse_positions(value: Any, rank: int = 1, budget: int | None = None, *, real: bool = False) -> np.ndarray:
    """Positions from ``start:stop[:step]``, an ``.npy`` file of integer ids, or a list of integers
    (on the command line too: ``[0, 5, 9]``). Ids that would not fit ``budget`` bytes (a range's
    count, a file's header) are refused before they are read or built.

    For a scheme whose positions have ``rank`` > 1 coordinates, an ``.npy`` of shape (N, rank) or a list
    of N coordinate lists. With ``real`` (a scheme that takes real-valued positions) the file or list
    may hold any finite numbers, fractional or negative.
    """
    if isinstance(value, str) and value.strip().startswith("["):  # a list on the command line: [3, 5] or [[0, 1], [2, 3]]
        try:  # the guarded loader of --config and --set: no alias bomb, no nesting deep enough to recurse
            value = parse_yaml(value, "--positions")
        except ConfigError as error:
            raise ConfigError("positions", f"expected a list such as [0, 5, 9] or [[0, 1], [2, 3]]; "
                              f"{str(error).removeprefix('config: ')}") from None
    if isinstance(value, str) and ":" in value and not value.endswith(".npy"):
        parts = value.split(":")
        try:
            numbers = [int(part) for part in parts]
        except ValueError:
            raise ConfigError("positions", f"expected start:stop[:step] with integers, got {value!r}") from None
        if len(numbers) not in (2, 3) or (len(numbers) == 3 and numbers[2] <= 0):
            raise ConfigError("positions", f"expected start:stop[:step] with a positive step, got {value!r}")
        count = len(range(*numbers))
        if count > MAX_POSITIONS:
            raise ConfigError("positions", f"{value!r} is {count:,} positions; at most {MAX_POSITIONS:,}")
        if budget is not None and count * 8 > budget:
            raise ConfigError("positions", f"{value!r} is {count:,} positions, {size_text(count * 8)} for their ids alone, "
                              f"over the budget of {size_text(budget)}; ask for fewer positions or raise --max-memory")
        positions = np.arange(*numbers, dtype=np.int64)
    elif isinstance(value, str):
        from pecli.io import load_array

        try:
            positions = load_array(value, key="positions", max_bytes=min(MAX_POSITIONS * 8, budget or MAX_POSITIONS * 8))
        except PecliError as error:
            raise ConfigError("positions", str(error).removeprefix("positions: ")) from None
    elif isinstance(value, (list, tuple)):
        try:
            positions = np.asarray(value)
        except ValueError:  # ragged: rows of different lengths
            raise ConfigError("positions", f"every position needs the same number of coordinates, got {excerpt(value)}") from None
    else:
        raise ConfigError("positions", f"expected start:stop[:step], an .npy file or a list, got {value!r}")
    if positions.ndim == 0:
        raise ConfigError("positions", f"{value!r} holds a single number, not a list of positions (an array of shape (N,))")
    if positions.size == 0:
        raise ConfigError("positions", f"{value!r} gives no positions")
    if rank > 1 and positions.ndim == 2 and positions.shape[0] == rank != positions.shape[1]:
        positions = positions.T  # (rank, N), one row per axis, as encode writes them and HF's position_ids
    try:
        return as_positions(positions, rank, real=real)
    except PositionError as error:
        text = str(error).removeprefix("positions ")
        if not real and ("whole numbers" in text or ">= 0" in text):
            able = ", ".join(name for name, cls in SCHEMES.items() if cls.real_positions)
            text += f" (real-valued positions are for {able})"
        raise ConfigError("positions", text) from None


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


def resolve(
    options: Mapping[str, Any], settings: tuple[Setting, ...] = (), *,
    run_keys: tuple[str, ...] = tuple(s.name for s in RUN_SETTINGS), plan: PositionPlan | None = None,
) -> Spec:
    """Validate merged options into a :class:`Spec`.

    ``options`` holds the scheme's parameters, the ``run_keys`` of :data:`RUN_SETTINGS` the command
    reads and the command's own ``settings``; anything else is an error that lists the valid keys.
    ``plan`` is the model's plan already narrowed to one group, when the caller has read it (else the
    model that ``options`` names is read here).
    """
    command = {s.name: s for s in (*RUN_SETTINGS, *settings) if s.name in run_keys or s in settings}
    if options.get("preset") is not None and "scheme" not in command:
        raise ConfigError("preset", "chooses one scheme and its options; this command takes no --scheme (compare: list "
                          "the schemes with --schemes)")
    if "preset" in options:
        from pecli.presets import expand_preset  # here: most runs name no preset, and start-up counts

        options = expand_preset(options)
    plan = plan if plan is not None else selected_plan(options, command)
    model_key = "model" if options.get("model") is not None else "gguf" if options.get("gguf") is not None else "hf_config"
    options = {k: v for k, v in options.items() if k not in MODEL_KEYS or k in command}
    if options.get("scheme") is None:  # absent or null: the default
        options.pop("scheme", None)
    if plan is not None:
        from pecli.models.plan import one_group

        group = one_group(plan)
        from_model = group_options(plan, group, options.get("weights"))
        asked = options.get("scheme")
        if asked not in (None, from_model["scheme"]):
            raise ConfigError(model_key, f"{plan.source} uses {from_model['scheme']} in layer group {group.name}, not scheme {asked!r}")
        options = merge(from_model, options)
    elif options.get("weights") is not None and "scheme" not in options and command.get("scheme") is RUN_SETTINGS[0]:
        options["scheme"] = "learned"  # a checkpoint's position table (unless the command has its own default scheme)
    # A command may declare its own ``scheme`` setting, with its own default (inspect: rope).
    scheme_name = command["scheme"].coerce(options.get("scheme", command["scheme"].default)) if "scheme" in command else DEFAULT_SCHEME
    cls = get_scheme_class(scheme_name)
    own_names = accepted_keys(cls)
    # A command that draws several schemes (``schemes``) accepts the parameters of each of them.
    listed = options.get("schemes", command["schemes"].default) if "schemes" in command else None
    overlaid = [cls] + [SCHEMES[name] for name, _ in scheme_entries(listed)]
    parameter_names = set().union(*(accepted_keys(c) for c in overlaid))
    chosen, params = _sorted_keys(options, command, cls, scheme_name, parameter_names)
    own = {k: v for k, v in params.items() if k in own_names}
    if cls.has_cells:
        return dataclasses.replace(_resolve_cells(scheme_name, own, chosen, settings, params), plan=plan)
    budget = memory_budget(chosen.get("max_memory"))
    given = chosen.get("positions")
    positions = None if given is None else parse_positions(given, cls.position_rank, budget, real=cls.real_positions)
    length = chosen.get("length")
    if positions is None:
        # A model's own context (max_position_embeddings, from --hf-config) is a better default than 512; a
        # sliding-window group's window, or a scaling's factor × original length, better still.
        natural = params.get("max_position_embeddings") if "max_position_embeddings" in scheme_parameters(cls) else None
        group = plan.single if plan is not None else None
        windowed = group.analysis_length if group is not None and group.options is not None else None
        natural = windowed or natural
        length = length or (coerce("max_position_embeddings", natural, int, minimum=1) if natural is not None else DEFAULT_LENGTH)
    elif length is None:
        length = positions_length(positions)
    if positions is not None and "context" in scheme_parameters(cls) and own.get("context") is None:
        # The current sequence length (dynamic NTK, LongRoPE, xPos's centre) reaches the last position id, as in HF.
        own["context"] = max(int(length), positions_length(positions))
    scheme = build_scheme(scheme_name, own, length=length)
    if params.get("context") is not None and not scheme.reads_context:
        raise ConfigError("context", f"is the current sequence length of the dynamic and longrope scalings; "
                          f"{scheme.name} with scaling {getattr(scheme, 'scaling', 'none')} does not depend on it")
    if positions is None and chosen.get("length") is None and scheme.model_length and scheme.model_length != length \
            and not (plan is not None and plan.single is not None and plan.single.analysis_length == length):
        length = scheme.model_length  # a checkpoint's position table: its rows
        scheme = scheme.at_length(length)
    resolved = {s.name: chosen.get(s.name, s.default) for s in settings}
    where = (Positions.range(length, cls.position_rank) if positions is None
             else Positions.of(positions, cls.position_rank, real=cls.real_positions))
    return Spec(scheme, int(length), where, chosen.get("dtype"), resolved, params, plan)


def _sorted_keys(
    options: Mapping[str, Any], command: Mapping[str, Setting], cls: type, scheme_name: str, parameter_names: set[str],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``options`` sorted into the command's settings (coerced; None left out) and the scheme parameters
    (as given); a key that is neither is an error naming the scheme that takes it, or the closest key."""
    own_names = accepted_keys(cls)
    chosen: dict[str, Any] = {}
    params: dict[str, Any] = {}
    for key, value in options.items():
        # A checkpoint key configures the scheme when it takes it (learned: its table), else the command.
        if key in command and not (key in CHECKPOINT_KEYS and key in own_names):
            if value is not None:
                chosen[key] = command[key].coerce(value)
        elif key in parameter_names:
            params[key] = value
        else:
            other = sorted(name for name, c in SCHEMES.items() if key in scheme_parameters(c))
            valid = list(dict.fromkeys([*command, *scheme_parameters(cls)]))
            guess = difflib.get_close_matches(key, valid, n=1, cutoff=0.75)
            hint = f"; it is a parameter of {', '.join(other)}" if other else f"; did you mean {guess[0]}?" if guess else ""
            raise ConfigError(key, f"unknown key for scheme {scheme_name!r}{hint} (valid keys: {', '.join(valid)})")
    return chosen, params


def _resolve_cells(
    name: str, own: dict[str, Any], chosen: dict[str, Any], settings: tuple[Setting, ...], params: dict[str, Any],
) -> Spec:
    """The :class:`Spec` of an n-D scheme: its positions are its own cells (a grid's, a sequence's), so
    ``length`` is their number; ``positions`` may pick some of them by their coordinates."""
    scheme = build_scheme(name, own)
    count, rank = scheme.cell_count, scheme.position_rank
    length = chosen.get("length")
    if length is not None and length != count:
        raise ConfigError(
            "length", f"{name} encodes its {count:,} cells ({scheme.cells_text()}), not {length:,} positions; "
            f"set its {'grid' if scheme.on_grid else 'sequence'} instead",
        )
    given = chosen.get("positions")
    real = scheme.real_positions
    where = (Positions.cells(count, rank, scheme.cells) if given is None
             else Positions.of(parse_positions(given, rank, real=real), rank, real=real))
    resolved = {s.name: chosen.get(s.name, s.default) for s in settings}
    return Spec(scheme, count, where, chosen.get("dtype"), resolved, params)


#: Keys naming a checkpoint: the ``learned`` scheme's table, or the q/k projections a command reads.
CHECKPOINT_KEYS = ("weights", "tensor")


#: Keys that name a model and select from its plan: read by :func:`selected_plan`, never scheme keys.
MODEL_KEYS = ("hf_config", "model", "gguf", "layer", "layer_group")


def model_plan(hf_config: Any, model: Any, scheme: str | None = None, gguf: Any = None) -> PositionPlan:
    """The position plan of a config.json given by path (``hf_config``) or by model id (``model``,
    resolved through the HuggingFace cache by :func:`pecli.models.hub.config_path`), or of a GGUF file
    (``gguf``, :func:`pecli.models.gguf.read_gguf_plan`); ``scheme="rope"`` reads a Qwen-VL model as
    1-D RoPE (see :func:`pecli.hf_config.read_plan`)."""
    if gguf is not None:
        if not isinstance(gguf, str) or not gguf:
            raise ConfigError("gguf", f"expected the path of a GGUF file, got {excerpt(gguf)}")
        from pecli.models.gguf import read_gguf_plan

        return read_gguf_plan(gguf)
    if model is not None:
        if not isinstance(model, str) or not model.strip():
            raise ConfigError("model", f"expected ORG/NAME[@REVISION], got {excerpt(model)}")
        from pecli.models.hub import config_path

        path = config_path(model)
        try:
            from pecli.hf_config import read_plan

            return read_plan(path, scheme, source=model)
        except ConfigError as error:
            if error.key != "hf_config":  # a key of the config itself: its own message names it
                raise
            raise ConfigError("model", f"{model}: {str(error).removeprefix('hf_config: ')}") from None
    if not isinstance(hf_config, str) or not hf_config:
        raise ConfigError("hf_config", f"expected the path of a config.json, got {excerpt(hf_config)}")
    from pecli.hf_config import read_plan

    return read_plan(hf_config, scheme)


def selected_plan(options: Mapping[str, Any], command: Mapping[str, Setting] | None = None) -> PositionPlan | None:
    """The plan of the model that ``options`` name (``hf_config`` or ``model``), narrowed to the group
    that ``layer`` or ``layer_group`` selects; None when no model is named (then a selection is an error).
    A command that takes ``hf_config`` or ``model`` as its own setting (compare) reads it itself."""
    command = command or {}
    if any(key in command for key in MODEL_KEYS):
        return None
    hf_config, model, gguf = options.get("hf_config"), options.get("model"), options.get("gguf")
    layer = LAYER_SETTINGS[0].coerce(options["layer"]) if options.get("layer") is not None else None
    group = LAYER_SETTINGS[1].coerce(options["layer_group"]) if options.get("layer_group") is not None else None
    given = [name for name, value in (("--hf-config", hf_config), ("--model", model), ("--gguf", gguf)) if value is not None]
    if hf_config is not None and model is not None:
        raise ConfigError("model", "give either --model or --hf-config, not both")
    if len(given) > 1:
        raise ConfigError("gguf", f"give either {' or '.join(given)}, not both")
    if not given:
        if layer is not None or group is not None:
            key = "layer" if layer is not None else "layer_group"
            raise ConfigError(key, "selects a layer of a model: give --hf-config or --model (or --gguf)")
        return None
    asked = options.get("scheme")
    return model_plan(hf_config, model, asked if asked == "rope" else None, gguf).select(layer, group)


def group_options(plan: PositionPlan, group: Any, weights: Any = None) -> dict[str, Any]:
    """The scheme options of one of ``plan``'s groups; a learned table without its checkpoint
    (``weights``) is refused, whichever door asks (a command, ``compare``'s rows, the library)."""
    options = dict(group.options)
    if options["scheme"] == "learned" and weights is None:
        raise ConfigError("weights", f"{plan.source} ({plan.family}) has a learned position table in layer group "
                          f"{group.name}: its values are in the checkpoint, not the config; give it with --weights FILE")
    return options


def check_plan_schemes(plan: PositionPlan) -> None:
    """Build the scheme of every layer group of ``plan``, so that options the scheme would refuse (a base
    NaN or infinite, a partial_rotary_factor of 0 or 1.5, a head of 10⁹ components, an unknown
    rope_type in one layer type's block) are refused for the whole plan, as any command refuses the
    group it reads. A learned table's values are in a checkpoint, not the config: it is not built here.

    Raises
    ------
    ConfigError
        The scheme's own error (naming the key), with the layer group and the config it came from.
    """
    for group in plan.groups:
        if group.options is None or group.options.get("scheme") == "learned":
            continue
        options = dict(group.options)
        try:
            build_scheme(options.pop("scheme"), options)
        except ConfigError as error:
            text = str(error).removeprefix(f"{error.key}: ")
            raise ConfigError(error.key, f"{text} (layer group {group.name} of {plan.source})") from None


#: The memory key every command takes: work that would need more is refused before it starts.
MEMORY_SETTING = Setting(
    "max_memory", str, None, "refuse to start work that needs more memory than this, e.g. 2G",
    default_text="a quarter of RAM", group="Configuration",
)


def __getattr__(name: str) -> Any:
    # pecli.config.read_hf_config, read_plan, one_group and PositionPlan, loaded when asked for (a run
    # without a model's config does not load the model tables)
    if name in ("read_hf_config", "read_plan"):
        import pecli.hf_config

        return getattr(pecli.hf_config, name)
    if name in ("one_group", "PositionPlan"):
        import pecli.models.plan

        return getattr(pecli.models.plan, name)
    raise AttributeError(f"module 'pecli.config' has no attribute {name!r}")
