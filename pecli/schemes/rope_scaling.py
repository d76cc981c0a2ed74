"""Inverse frequencies of RoPE and of its context-extension scalings, in float64.

This module reproduces, in NumPy and float64, what HuggingFace transformers computes in
``src/transformers/modeling_rope_utils.py`` (``_compute_default_rope_parameters``,
``_compute_linear_scaling_rope_parameters``, ``_compute_dynamic_ntk_parameters``,
``_compute_yarn_parameters``, ``_compute_longrope_parameters``, ``_compute_llama3_parameters``) and
how it validates them (``rope_config_validation`` / ``_validate_*_parameters``), for the same
configuration. HF computes in float32; the numbers here are what the same formulas give in float64.

Notation: ``d`` is the rotated dimension (``int(head_dim * partial_rotary_factor)``, supplied by the
caller), ``b`` the RoPE base (``rope_theta``), ``i = 0 .. d/2 - 1`` the pair index and

    theta_i = b ** (-2 i / d)                       (Su et al. 2021, RoFormer, eq. 15)

the unscaled inverse frequency of pair ``i``; its wavelength is ``2 pi / theta_i`` positions.

The types form a registry, :data:`SCALINGS` (as transformers' ``ROPE_INIT_FUNCTIONS``): one
:class:`ScalingType` record per type, holding its keys (each a :class:`pecli.params.Parameter`, so that
their type and range are checked in one place), its required keys, its defaults, its own rules across
keys and the function that computes its :class:`ScaledFrequencies`. :class:`RopeScaling` is one scaling
value (the type and the keys given); :func:`compute_inv_freq` validates it and calls its record.

How to add a scaling type: write its rule, ``def _mine(scaling, model) -> ScaledFrequencies`` (read the
keys as ``scaling.<key>`` or ``scaling.value(key)`` for the defaults, the model's ``base``,
``rotated_dim``, ``theta``, lengths from ``model``; return ``_frequencies(model, scaling, inv, ...)``),
declare any new key as a ``Parameter`` with its help and range, and add a ``ScalingType`` record to
:data:`SCALINGS`, with a ``validate`` function if the type has rules across keys, ``reads_context`` if its
frequencies depend on the sequence length, and an :class:`Extension` if ``pecli extend`` may propose it.
Nothing else: the ``rope`` scheme's parameters (YAML keys, ``--set``, ``rope_scaling`` blocks),
``--context``, and extend's candidates, ``--method`` and ``--pick`` come from the records.

Conventions (where HF versions differ or HF is silent):

* Reference read: transformers v4.4x ``modeling_rope_utils.py`` and the v4.5x / v5
  ``rope_parameters`` code (``RotaryEmbeddingConfigMixin``). Numbers follow the current (v5) rules.
* HF's validator only *warns* about most bad values; pecli raises :class:`pecli.errors.ConfigError`
  instead (naming the key and what is allowed), and also rejects keys that the type does not use.
* ``"ntk"`` is pecli's static NTK-aware scaling (bloc97, Reddit r/LocalLLaMA 2023):
  ``b' = b * factor ** (d / (d - 2))``. Current HF has no static ntk type (a short-lived v4.4x
  ``_compute_ntk_parameters`` used this same rule).
* dynamic: the original length is ``max_position_embeddings`` (as in every HF version; HF v4.4x
  accepted but ignored ``original_max_position_embeddings``). pecli uses the block's
  ``original_max_position_embeddings`` only when ``max_position_embeddings`` is not given.
* yarn: the correction range uses ``original_max_position_embeddings`` (falls back to
  ``max_position_embeddings``) and the explicit ``factor`` as is (v4.5x and v5). An intermediate v4.x
  release replaced ``factor`` by ``max_position_embeddings / original`` whenever ``original`` was
  given; that rule is not followed. ``factor`` is required (HF's validator requires it).
* llama3: HF requires ``low_freq_factor``, ``high_freq_factor`` and
  ``original_max_position_embeddings``; pecli supplies Llama 3.1's values 1, 4 and 8192 when absent
  (HF v5 would take ``max_position_embeddings`` as the original length instead).
* longrope: ``original_max_position_embeddings`` (the caller's top-level value, which wins as in HF)
  falls back to ``max_position_embeddings``; the attention factor uses the explicit ``factor`` if given,
  else ``max_position_embeddings / original`` (v5; v4.5x always used the ratio when a top-level
  original was set -- identical for shipped Phi-3 configs, which have no ``factor``).
* ``attention_scaling`` is the factor HF multiplies both cos and sin by, so attention logits scale by
  its square.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from numbers import Integral
from typing import Any

import numpy as np

from pecli.errors import ConfigError
from pecli.numbers import integer, number
from pecli.params import Parameter, base_type, excerpt, type_word
from pecli.schemes.frequencies import geometric_inv_freq
from pecli.schemes.rope_type import TYPE_KEYS, hf_rope_type, rope_type_key

__all__ = [
    "SCALINGS",
    "SCALING_TYPES",
    "HF_TYPE_ALIASES",
    "LLAMA3_DEFAULTS",
    "YARN_DEFAULTS",
    "RopeModel",
    "RopeScaling",
    "ScaledFrequencies",
    "ScalingType",
    "Extension",
    "ExtensionStart",
    "compute_inv_freq",
    "extension_types",
    "default_inv_freq",
    "scaling_keys",
    "shared_scaling_keys",
    "ntk_base",
    "dynamic_ntk_base",
    "yarn_get_mscale",
    "yarn_attention_factor",
    "yarn_correction_dim",
    "yarn_correction_range",
    "longrope_attention_factor",
]

HF_TYPE_ALIASES: dict[str, str] = {"default": "none", "su": "longrope", "mrope": "none"}
"""HF ``rope_type`` / legacy ``type`` names that map to another pecli name.

``mrope`` (Qwen2-VL's multimodal RoPE) uses the default frequencies — HF's Qwen2-VL configuration
rewrites it to ``default`` — and splits the pairs into t/h/w sections (``mrope_section``) that rotate
by different position ids; the 1-D ``rope`` scheme has the frequencies, not the sections.
"""

YARN_DEFAULTS: dict[str, Any] = {"beta_fast": 32.0, "beta_slow": 1.0, "truncate": True}
"""YaRN defaults (Peng et al. 2023, sec. 3.2; HF ``_compute_yarn_parameters``)."""

LLAMA3_DEFAULTS: dict[str, Any] = {
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}
"""Llama 3.1's values (Meta ``apply_scaling``), supplied by pecli when a llama3 block omits them."""

# Keys the reader leaves to its caller (rope_theta, partial_rotary_factor) or that HF accepts without
# using them in the frequencies (``finetuned``, shipped by YaRN's Llama 2 checkpoints).
_IGNORED_HF_KEYS = frozenset({"rope_theta", "partial_rotary_factor", "finetuned", "mrope_section", "mrope_interleaved"})


# --------------------------------------------------------------------------------------------
# the keys, each declared once (HF spelling); a record lists the ones its type takes
# --------------------------------------------------------------------------------------------
#: Where ``--help`` lists these keys.
SCALING_GROUP = "RoPE scaling"


#: The longest context a length key may state (rope's ``max_position_embeddings`` has the same bound), and
#: the longest a scaling may reach (factor × original length).
LONGEST_CONTEXT = 1 << 40


def _key(*args: Any, **kwargs: Any) -> Parameter:
    return Parameter(*args, **kwargs, group=SCALING_GROUP)


FACTOR = _key("factor", float, None, "scaling factor s (context ratio)", minimum=1)
ORIGINAL_LENGTH = _key(
    "original_max_position_embeddings", int, None, "the pre-training context length",
    minimum=1, maximum=LONGEST_CONTEXT, default_text="llama3: 8192; yarn, longrope: --max-position-embeddings",
)
BETA_FAST = _key("beta_fast", float, None, "yarn: rotations where extrapolation ends", exclusive_minimum=0,
                      default_text="32")
BETA_SLOW = _key("beta_slow", float, None, "yarn: rotations where interpolation starts", exclusive_minimum=0,
                      default_text="1")
MSCALE = _key("mscale", float, None, "yarn, DeepSeek style: mscale")
MSCALE_ALL_DIM = _key("mscale_all_dim", float, None, "yarn, DeepSeek style: mscale_all_dim")
ATTENTION_FACTOR = _key("attention_factor", float, None, "yarn, longrope: explicit attention scaling",
                             exclusive_minimum=0)
TRUNCATE = _key("truncate", bool, None, "yarn: floor/ceil the correction range", default_text="true")
LOW_FREQ_FACTOR = _key("low_freq_factor", float, None, "llama3: low-frequency band edge", exclusive_minimum=0,
                            default_text="1")
HIGH_FREQ_FACTOR = _key("high_freq_factor", float, None, "llama3: high-frequency band edge",
                             exclusive_minimum=0, default_text="4")
SHORT_FACTOR = _key("short_factor", tuple[float, ...], None,
                         "longrope: per-pair factors up to the original length", exclusive_minimum=0)
LONG_FACTOR = _key("long_factor", tuple[float, ...], None, "longrope: per-pair factors beyond it",
                        exclusive_minimum=0)


# --------------------------------------------------------------------------------------------
# the registry's record
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RopeModel:
    """What a scaling rule reads besides its own keys: the model's RoPE and lengths.

    Attributes
    ----------
    base : float
        ``b`` (``rope_theta``), > 0.
    rotated_dim : int
        ``d``, even.
    max_position_embeddings : int or None
        The model's (extended) context.
    context : int or None
        The current sequence length (dynamic, longrope).
    """

    base: float
    rotated_dim: int
    max_position_embeddings: int | None = None
    context: int | None = None
    #: Frequencies given in place of the base's ladder (``--inv-freq``), or None.
    ladder: tuple[float, ...] | None = None

    @cached_property
    def theta(self) -> np.ndarray:
        """``θ_i = b^(−2i/d)`` (the given ladder, if any), read-only."""
        theta = geometric_inv_freq(self.rotated_dim, self.base) if self.ladder is None else np.array(self.ladder, dtype=np.float64)
        theta.setflags(write=False)
        return theta

    @cached_property
    def base_powers(self) -> np.ndarray:
        """``b^(2i/d)``: yarn and longrope divide by ``factor · b^(2i/d)`` as HF does.

        Dividing ``θ_i`` by the factor instead can differ in the last bit; these keep HF's numbers.
        ``1 / base_powers`` is ``θ_i`` exactly as :func:`~pecli.schemes.base.geometric_inv_freq` gives it.
        """
        return np.power(self.base, np.arange(0, self.rotated_dim, 2, dtype=np.float64) / self.rotated_dim)

    @property
    def pairs(self) -> int:
        return self.rotated_dim // 2


Validator = Callable[["RopeScaling", int, "int | None"], None]
Rule = Callable[["RopeScaling", RopeModel], "ScaledFrequencies"]


@dataclass(frozen=True)
class ExtensionStart:
    """What an extension recipe writes a candidate from.

    Attributes
    ----------
    factor : float
        s = N / L₀ (or the factor given with ``pecli extend --method … --factor``), above 1.
    pretraining : int
        L₀, the length the model's frequencies were trained on.
    target : int
        N, the context the candidate serves.
    own : mapping
        The model's own scaling keys as its config has them (``{}`` without a scaling).
    carried : mapping
        The keys of ``own`` the recipe carries (:attr:`Extension.carries`) that the model gives.
    """

    factor: float
    pretraining: int
    target: int
    own: Mapping[str, Any]
    carried: Mapping[str, Any]


#: ``write(record, start) -> keys``: the scaling keys of a candidate (HF spelling, in the order the patch
#: lists them), or None for no scaling block.
Writer = Callable[["ScalingType", ExtensionStart], "dict[str, Any] | None"]


@dataclass(frozen=True)
class Extension:
    """What ``pecli extend`` may build from a scaling type: a candidate's ``config.json`` keys.

    A candidate starts from the model's pre-training frequencies and L₀ with s = N / L₀
    (:class:`ExtensionStart`); its record's :attr:`write` gives the scaling keys, ``pecli extend`` the
    rest (the form the config uses, ``rope_theta``, ``max_position_embeddings``).

    Attributes
    ----------
    method : str
        What ``pecli extend`` calls it (``--method``, ``--pick``, the table): the type's name, but for
        ``base``.
    rope_type : str
        The ``rope_type`` the candidate writes (HF spelling: ``default`` for no scaling); a model type
        whose transformers code does not take it gets no such candidate.
    summary : str
        The change, for the documentation's table of candidates.
    keys_text : str
        The keys it writes, for the same table.
    write : callable
        See :data:`Writer`.
    order : int
        Its place among the candidates: the order they are built in and the ranking's last tie-break.
    carries : tuple of str
        The keys of the model's own scaling block it keeps when the model has them (the model's
        attention or this type's rule still reads them).
    served : str
        The ``max_position_embeddings`` written: ``"target"`` (N) or ``"pretraining"`` (L₀: dynamic NTK
        grows the base past it).
    reuses : tuple of str
        The model's own keys of this type it is made from (LongRoPE's fitted factors): only a model whose
        scaling is this type gets the candidate, and a candidate of another type drops them.
    raises_base : bool
        The candidate writes no scaling and raises ``rope_theta`` instead: times the factor when one is
        given (Code Llama's 10,000 × 100), else, ranked, to Men et al.'s bound for N. It is the record
        of ``none`` (no scaling), under the method name ``base``: a base increase is not a scaling,
        but it is what reaching N without one means.
    """

    method: str
    rope_type: str
    summary: str
    keys_text: str
    write: Writer
    order: int
    carries: tuple[str, ...] = ()
    served: str = "target"
    reuses: tuple[str, ...] = ()
    raises_base: bool = False


@dataclass(frozen=True)
class ScalingType:
    """One RoPE scaling type: its keys and its rule.

    Attributes
    ----------
    name : str
        pecli's name (HF's ``rope_type``, but ``none`` for ``default``).
    summary : str
        One line: what the rule does and its source.
    keys : tuple of Parameter
        The keys a ``rope_scaling`` block of this type may hold (HF spelling); their types and ranges
        are checked by :meth:`Parameter.coerce`.
    compute : callable
        ``compute(scaling, model) -> ScaledFrequencies``, on a validated scaling.
    required : tuple of str
        Keys that must be given.
    defaults : mapping
        Values the rule uses for keys not given (see :meth:`RopeScaling.value`).
    validate : callable or None
        ``validate(scaling, rotated_dim, max_position_embeddings)``: only the type's own rules across
        keys (the keys themselves are already checked); raises :class:`ConfigError`.
    reads_context : bool
        Whether the frequencies depend on the current sequence length (``context``): dynamic NTK's base,
        LongRoPE's short or long factors. ``--context`` is taken only by such types.
    extension : Extension or None
        What ``pecli extend`` may build from this type (None: no candidate; pecli's static ``ntk``,
        which transformers does not read).
    """

    name: str
    summary: str
    keys: tuple[Parameter, ...]
    compute: Rule
    required: tuple[str, ...] = ()
    defaults: Mapping[str, Any] = field(default_factory=dict)
    validate: Validator | None = None
    reads_context: bool = False
    extension: Extension | None = None

    @property
    def key_names(self) -> tuple[str, ...]:
        return tuple(key.name for key in self.keys)

    @property
    def title(self) -> str:
        """How messages name the type: its summary up to the colon ("LongRoPE", "dynamic NTK")."""
        return self.summary.partition(":")[0]

    def key(self, name: str) -> Parameter:
        return next(key for key in self.keys if key.name == name)


# --------------------------------------------------------------------------------------------
# the scaling configuration
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, init=False, repr=False)
class RopeScaling:
    """A RoPE context-extension scaling, as HF's ``rope_scaling`` / ``rope_parameters`` describes it.

    ``RopeScaling("yarn", factor=4.0, original_max_position_embeddings=4096)``: the type and the keys
    given, in HF spelling. Every key of :func:`scaling_keys` reads as an attribute (None when not
    given); :meth:`value` adds the type's defaults.

    Parameters
    ----------
    rope_type : str
        One of :data:`SCALING_TYPES`. HF's ``"default"`` maps to ``"none"``, legacy ``"su"`` to
        ``"longrope"``.
    **keys
        The scaling's keys (see each record of :data:`SCALINGS`); None counts as not given, lists
        become tuples.

    Notes
    -----
    Source: HF transformers ``modeling_rope_utils.py`` (``rope_config_validation``). Construction does
    not check the values; :meth:`validate` does (and :func:`compute_inv_freq` calls it).
    """

    rope_type: str
    given: tuple[tuple[str, Any], ...]

    def __init__(self, rope_type: str = "none", **keys: Any) -> None:
        if isinstance(rope_type, str):
            rope_type = HF_TYPE_ALIASES.get(rope_type, rope_type)
        known = scaling_keys()
        for key in keys:
            if key not in known:
                raise ConfigError(key, f"is not a RoPE scaling key (the keys: {', '.join(known)})")
        given = tuple((key, _frozen(keys[key])) for key in known if keys.get(key) is not None)
        object.__setattr__(self, "rope_type", rope_type)
        object.__setattr__(self, "given", given)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not attributes: the scaling keys read as attributes.
        if name in scaling_keys():
            return self.values.get(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __repr__(self) -> str:
        keys = "".join(f", {key}={value!r}" for key, value in self.given)
        return f"RopeScaling({self.rope_type!r}{keys})"

    @property
    def values(self) -> dict[str, Any]:
        """The keys given, with their values."""
        return dict(self.given)

    @property
    def record(self) -> ScalingType:
        """The type's record in :data:`SCALINGS` (ConfigError naming ``rope_type`` if unknown)."""
        return scaling_type(self.rope_type)

    def value(self, key: str) -> Any:
        """The key's value, or the type's default for it (None when it has none)."""
        given = self.values.get(key)
        return self.record.defaults.get(key) if given is None else given

    # ---------------------------------------------------------------- construction from HF
    @classmethod
    def from_hf(cls, block: Mapping[str, Any] | None) -> RopeScaling:
        """Build a scaling from a HF ``rope_scaling`` (v4) or ``rope_parameters`` (v5) dict.

        Parameters
        ----------
        block : dict or None
            As a model's ``config.json`` ships it. The type is read from ``"rope_type"`` or, failing
            that, the legacy ``"type"`` (``"rope_type"`` wins when both are present, as in HF); a missing
            type means ``"default"``. ``"rope_theta"`` and ``"partial_rotary_factor"`` are ignored
            (the caller reads them). Keys whose value is ``None`` count as absent. Lists become tuples
            of float. ``None`` or ``{}`` gives the unscaled ``RopeScaling()``.

        Returns
        -------
        RopeScaling

        Raises
        ------
        ConfigError
            Unknown type (key ``rope_type``), a key the type does not use (names the key and the allowed
            keys), or a value of the wrong kind (a JSON string where a number belongs, too).

        Notes
        -----
        Source: HF ``rope_config_validation`` / ``_check_received_keys`` (``"type"`` is the BC spelling of
        ``"rope_type"``); HF only warns on unrecognised keys, pecli refuses them.
        """
        if block is None:
            return cls()
        if not isinstance(block, Mapping):
            raise ConfigError("rope_scaling", f"must be a mapping (dict) or null, got {type(block).__name__}")
        raw = {str(k): v for k, v in block.items() if v is not None}
        type_key, type_name = rope_type_key(raw), hf_rope_type(raw)
        for key in TYPE_KEYS:
            raw.pop(key, None)
        if not isinstance(type_name, str):
            raise ConfigError(type_key, f"must be a string, one of {_valid_types_text()}, got {type_name!r}")
        record = scaling_type(type_name, key=type_key)
        keys: dict[str, Any] = {}
        for key, value in raw.items():
            if key in _IGNORED_HF_KEYS:
                continue
            if key not in record.key_names:
                allowed = ", ".join(record.key_names) or "none besides rope_type"
                raise ConfigError(key, f"not a key of rope_type {type_name!r}; allowed keys: {allowed}")
            keys[key] = _read_document_value(record.key(key), value)
        return cls(record.name, **keys)

    def to_hf(self) -> dict[str, Any]:
        """Return the HF ``rope_scaling`` dict of this scaling (``rope_type`` plus the keys given).

        Returns
        -------
        dict
            ``{"rope_type": "default"}`` for ``"none"``; tuples become lists. pecli's ``"ntk"`` has no HF
            equivalent and is written as ``"ntk"``.
        """
        out: dict[str, Any] = {"rope_type": "default" if self.rope_type == "none" else self.rope_type}
        out.update({key: list(value) if isinstance(value, tuple) else value for key, value in self.given})
        return out

    # ---------------------------------------------------------------- validation
    def validated(self, *, rotated_dim: int, max_position_embeddings: int | None) -> RopeScaling:
        """This scaling with every key converted and checked; see :meth:`validate`."""
        record = self.record
        _check_rotated_dim(rotated_dim)
        if max_position_embeddings is not None:
            max_position_embeddings = _MODEL_LENGTH.coerce(max_position_embeddings)
        for key, _ in self.given:
            if key not in record.key_names:
                raise ConfigError(key, _foreign_key_message(key, record))
        for key in record.required:
            if self.values.get(key) is None:
                raise ConfigError(key, f"required for rope_type {record.name!r}")
        checked = RopeScaling(record.name, **{key: record.key(key).coerce(value) for key, value in self.given})
        _check_reach(checked, max_position_embeddings)
        if record.validate is not None:
            record.validate(checked, int(rotated_dim), max_position_embeddings)
        return checked

    def validate(self, *, rotated_dim: int, max_position_embeddings: int | None) -> None:
        """Check this scaling as HF's ``rope_config_validation`` does, raising instead of warning.

        Parameters
        ----------
        rotated_dim : int
            ``d``, the number of rotated channels per head (even, >= 2; > 2 for ntk and dynamic,
            whose exponent is ``d / (d - 2)``).
        max_position_embeddings : int or None
            The model's (extended) ``max_position_embeddings``.

        Raises
        ------
        ConfigError
            Naming the offending key and what is allowed: an unknown ``rope_type``; a key the type does
            not take (the message says which types take it); a required key missing; a value outside its
            key's range (:data:`scaling_keys`); a rule of the type across keys (its record's ``validate``).

        Notes
        -----
        Source: HF ``_validate_{linear,dynamic,yarn,longrope,llama3}_rope_parameters`` (v4.4x and v5).
        """
        self.validated(rotated_dim=rotated_dim, max_position_embeddings=max_position_embeddings)


def _check_reach(scaling: RopeScaling, max_position_embeddings: int | None) -> None:
    """Refuse a factor that takes the original length (else the model's) past :data:`LONGEST_CONTEXT`."""
    given = scaling.original_max_position_embeddings
    original, key = (given, "original_max_position_embeddings") if given is not None else \
        (max_position_embeddings, "max_position_embeddings")
    if scaling.factor is not None and original is not None and not scaling.factor * original <= LONGEST_CONTEXT:
        raise ConfigError("factor", f"{number(scaling.factor)} × {key} {integer(original)} reaches "
                          f"{number(scaling.factor * original)} tokens, past the 2^40 any context may be")


_MODEL_LENGTH = Parameter("max_position_embeddings", int, minimum=1)
_CONTEXT = Parameter("context", int, minimum=1)
_BASE = Parameter("base", float, exclusive_minimum=0)


def _frozen(value: Any) -> Any:
    """Lists as tuples (floats where numbers), so that a scaling is hashable."""
    if isinstance(value, list):
        return tuple(float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else x for x in value)
    return value


def _read_document_value(key: Parameter, value: Any) -> Any:
    """A value from config.json or a YAML block: as :meth:`Parameter.coerce`, but a string is not a number.

    ``coerce`` accepts strings because the command line gives nothing else; in a document a quoted
    ``"2"`` where a number belongs is a mistake worth naming.
    """
    items = value if key.is_list and isinstance(value, (list, tuple)) else [value]
    if base_type(key.type) is not str and any(isinstance(item, str) for item in items):
        raise ConfigError(key.name, f"expected {type_word(key.type)}, got {excerpt(value)}")
    return key.coerce(value)


def _check_rotated_dim(rotated_dim: object, *, minimum: int = 2) -> int:
    """``d`` as the caller computed it: an int (not a float, not a bool), even and at least ``minimum``."""
    if isinstance(rotated_dim, bool) or not isinstance(rotated_dim, Integral) or rotated_dim < minimum or rotated_dim % 2:
        raise ConfigError("rotated_dim", f"must be an even integer >= {minimum}, got {rotated_dim!r}")
    return int(rotated_dim)


def _valid_types_text() -> str:
    return ", ".join(SCALINGS) + " (HF 'default' = none, legacy 'su' = longrope)"


def _foreign_key_message(key: str, record: ScalingType) -> str:
    takers = ", ".join(name for name, other in SCALINGS.items() if key in other.key_names)
    if not record.keys:
        return f"applies only with a scaling ({takers}); none is set (rope_type / --scaling)"
    return (f"not used by rope_type {record.name!r} (allowed keys: {', '.join(record.key_names)}); "
            f"it is a key of {takers}")


def scaling_type(name: str, *, key: str = "rope_type") -> ScalingType:
    """The record of scaling type ``name`` (HF aliases accepted); ConfigError naming ``key`` if unknown."""
    record = SCALINGS.get(HF_TYPE_ALIASES.get(name, name)) if isinstance(name, str) else None
    if record is None:
        raise ConfigError(key, f"unknown RoPE scaling type {name!r}; allowed: {_valid_types_text()}")
    return record


def scaling_keys() -> dict[str, Parameter]:
    """Every scaling key once, by HF name, in the order the records of :data:`SCALINGS` first list them."""
    keys: dict[str, Parameter] = {}
    for record in SCALINGS.values():
        for key in record.keys:
            keys.setdefault(key.name, key)
    return keys


def shared_scaling_keys() -> tuple[str, ...]:
    """The keys at least half of the scaling types take (factor, the original length)."""
    extending = [record for record in SCALINGS.values() if record.keys]
    return tuple(
        name for name in scaling_keys()
        if 2 * sum(name in record.key_names for record in extending) >= len(extending)
    )

# --------------------------------------------------------------------------------------------
# the result
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ScaledFrequencies:
    """The inverse frequencies a RoPE model uses, with what the scaling did to each pair.

    Attributes
    ----------
    inv_freq : numpy.ndarray
        float64, shape ``(d/2,)``: what the model multiplies positions by.
    original_inv_freq : numpy.ndarray
        float64, shape ``(d/2,)``: plain ``theta_i = base ** (-2 i / d)`` with the configured base.
    attention_scaling : float
        Multiplies both cos and sin (HF convention), so logits scale by its square; 1.0 when unused.
    base : float
        Effective base: ``base`` except for ntk and (grown) dynamic.
    regimes : tuple of str
        Per pair: ``"unchanged"``/``"scaled"`` (linear, ntk, dynamic, none), ``"unchanged"``/
        ``"smoothed"``/``"divided"`` (llama3), ``"extrapolated"``/``"blended"``/``"interpolated"``
        (yarn), ``"short"``/``"long"`` (longrope: the factor set in use).
    rope_type : str
        pecli scaling type.
    factor : float or None
        The factor the formulas used (longrope: ``f`` of the attention factor).
    original_context : int or None
        The pre-training length the rule used (None when the rule needs none).
    context : int or None
        The context (sequence length) asked for.
    correction_range : tuple of float or None
        yarn: ``(low, high)`` pair-index bounds of the ramp, after floor/ceil (unless truncate is False)
        and clipping to ``[0, d - 1]``.
    ramp : numpy.ndarray or None
        yarn: per-pair weight of the interpolated (``theta / s``) value, in ``[0, 1]``;
        llama3: ``1 - smooth`` likewise.
    longrope_factors : str or None
        longrope: ``"short"`` or ``"long"``.
    short_factor, long_factor : tuple of float or None
        longrope: both per-pair factor sets, whichever is in use.
    original_base : float or None
        The configured base, before ntk or dynamic changed it.
    notes : tuple of str
        Human-readable reasons for the choices made (defaults supplied, factor set, fallbacks).
    """

    inv_freq: np.ndarray
    original_inv_freq: np.ndarray
    attention_scaling: float
    base: float
    regimes: tuple[str, ...]
    rope_type: str = "none"
    factor: float | None = None
    original_context: int | None = None
    context: int | None = None
    correction_range: tuple[float, float] | None = None
    ramp: np.ndarray | None = None
    longrope_factors: str | None = None
    short_factor: tuple[float, ...] | None = None
    long_factor: tuple[float, ...] | None = None
    original_base: float | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def wavelength(self) -> np.ndarray:
        """Per-pair wavelength in positions, ``2 pi / inv_freq``."""
        return 2.0 * math.pi / self.inv_freq

    @property
    def original_wavelength(self) -> np.ndarray:
        """Per-pair unscaled wavelength in positions, ``2 pi / original_inv_freq``."""
        return 2.0 * math.pi / self.original_inv_freq


# --------------------------------------------------------------------------------------------
# formulas
# --------------------------------------------------------------------------------------------
def default_inv_freq(base: float, rotated_dim: int) -> np.ndarray:
    """Unscaled RoPE inverse frequencies ``theta_i = base ** (-2 i / d)``, ``i = 0 .. d/2 - 1``.

    Parameters
    ----------
    base : float
        RoPE base ``b`` (``rope_theta``), > 0.
    rotated_dim : int
        ``d``, the rotated channels (even). Partial rotary: pass ``int(head_dim * partial_rotary_factor)``;
        the exponent runs over ``d``, not over ``head_dim``.

    Returns
    -------
    numpy.ndarray
        float64, shape ``(d/2,)``, computed as ``1 / b ** (2 i / d)`` like HF.

    Notes
    -----
    Source: Su et al. 2021 (RoFormer) eq. 15; HF ``_compute_default_rope_parameters``.
    """
    return geometric_inv_freq(_check_rotated_dim(rotated_dim), _BASE.coerce(base))


def ntk_base(base: float, factor: float, rotated_dim: int) -> float:
    """Static NTK-aware base ``b' = b * s ** (d / (d - 2))``.

    Chosen so that the lowest frequency ``theta_{d/2-1}`` is divided by ``s`` exactly while
    ``theta_0 = 1`` is untouched.

    Parameters
    ----------
    base, factor : float
        ``b`` and ``s`` (>= 1).
    rotated_dim : int
        ``d`` (even, >= 4).

    Returns
    -------
    float

    Notes
    -----
    Source: bloc97, "NTK-Aware Scaled RoPE", r/LocalLLaMA (2023); HF v4.4x ``_compute_ntk_parameters``.
    """
    d = _check_rotated_dim(rotated_dim, minimum=4)
    return _BASE.coerce(base) * FACTOR.coerce(factor) ** (d / (d - 2))


def dynamic_ntk_base(base: float, factor: float, rotated_dim: int, seq_len: int, original: int) -> float:
    """Dynamic NTK base: ``b' = b * (s * L' / L - (s - 1)) ** (d / (d - 2))`` for ``L' > L``, else ``b``.

    Parameters
    ----------
    base, factor : float
        ``b`` and ``s`` (>= 1).
    rotated_dim : int
        ``d`` (even, >= 4).
    seq_len : int
        Current sequence length ``L'``; HF uses ``max(L', L)`` so nothing changes up to ``L``.
    original : int
        Original length ``L`` (HF: ``max_position_embeddings``).

    Returns
    -------
    float

    Notes
    -----
    Source: emozilla, "Dynamically Scaled RoPE", r/LocalLLaMA (2023); HF ``_compute_dynamic_ntk_parameters``.
    """
    d = _check_rotated_dim(rotated_dim, minimum=4)
    b = _BASE.coerce(base)
    s = FACTOR.coerce(factor)
    seq = _CONTEXT.coerce(seq_len)
    orig = _MODEL_LENGTH.coerce(original)
    if seq <= orig:
        return b
    return b * ((s * seq / orig) - (s - 1.0)) ** (d / (d - 2))


def yarn_get_mscale(scale: float, mscale: float = 1.0) -> float:
    """YaRN magnitude factor ``0.1 * mscale * ln(s) + 1`` (1 for ``s <= 1``).

    Parameters
    ----------
    scale : float
        ``s``, the context-extension factor.
    mscale : float
        Multiplier of the log term (1 in the paper; DeepSeek configs set it).

    Returns
    -------
    float

    Notes
    -----
    Source: Peng et al. 2023 (YaRN) eq. 22, ``sqrt(1/t) = 0.1 ln s + 1``; HF ``get_mscale``.
    """
    s = float(scale)
    if s <= 1.0:
        return 1.0
    return 0.1 * float(mscale) * math.log(s) + 1.0


def yarn_attention_factor(
    factor: float,
    *,
    mscale: float | None = None,
    mscale_all_dim: float | None = None,
    attention_factor: float | None = None,
) -> float:
    """YaRN attention scaling applied to cos and sin.

    ``attention_factor`` if given; else ``get_mscale(s, mscale) / get_mscale(s, mscale_all_dim)`` when
    both ``mscale`` and ``mscale_all_dim`` are non-zero (DeepSeek-V2/V3); else ``0.1 ln s + 1``.

    Parameters
    ----------
    factor : float
        ``s``.
    mscale, mscale_all_dim, attention_factor : float, optional

    Returns
    -------
    float

    Notes
    -----
    Source: Peng et al. 2023 (YaRN) sec. 3.4; DeepSeek-V2 ``yarn_get_mscale``; HF ``_compute_yarn_parameters``.
    """
    if attention_factor is not None:
        return float(attention_factor)
    if mscale and mscale_all_dim:
        return float(yarn_get_mscale(factor, mscale) / yarn_get_mscale(factor, mscale_all_dim))
    return yarn_get_mscale(factor)


def yarn_correction_dim(num_rotations: float, rotated_dim: int, base: float, original: int) -> float:
    """Fractional pair index at which a pair turns ``num_rotations`` times over ``original`` positions.

    ``d * ln(L / (2 pi r)) / (2 ln b)``: solves ``L / (2 pi b ** (2 i / d)) = r`` for ``i``.

    Parameters
    ----------
    num_rotations : float
        ``r`` (> 0).
    rotated_dim : int
        ``d``.
    base : float
        ``b`` (> 1).
    original : int
        ``L``, the pre-training context.

    Returns
    -------
    float

    Notes
    -----
    Source: Peng et al. 2023 (YaRN) eq. 17-18; HF ``find_correction_dim``.
    """
    return (rotated_dim * math.log(original / (num_rotations * 2.0 * math.pi))) / (2.0 * math.log(base))


def yarn_correction_range(
    beta_fast: float, beta_slow: float, rotated_dim: int, base: float, original: int, truncate: bool = True
) -> tuple[float, float]:
    """The ramp's pair-index bounds ``(low, high)`` of YaRN.

    ``low = floor(corr(beta_fast))``, ``high = ceil(corr(beta_slow))`` (no rounding if ``truncate`` is
    False), then ``low = max(low, 0)``, ``high = min(high, d - 1)``.

    Parameters
    ----------
    beta_fast, beta_slow : float
        Rotation counts (32 and 1 by default).
    rotated_dim : int
    base : float
    original : int
    truncate : bool

    Returns
    -------
    tuple of float

    Notes
    -----
    Source: HF ``find_correction_range`` (note the clip is to ``d - 1``, not ``d/2 - 1``, as in HF).
    """
    low = yarn_correction_dim(beta_fast, rotated_dim, base, original)
    high = yarn_correction_dim(beta_slow, rotated_dim, base, original)
    if truncate:
        low = math.floor(low)
        high = math.ceil(high)
    return float(max(low, 0)), float(min(high, rotated_dim - 1))


def longrope_attention_factor(factor: float, original: int) -> float:
    """LongRoPE attention scaling ``sqrt(1 + ln f / ln L)`` (1 when ``f <= 1``).

    Parameters
    ----------
    factor : float
        ``f`` (HF: ``max_position_embeddings / original`` unless ``factor`` is set).
    original : int
        ``L``, the pre-training context.

    Returns
    -------
    float

    Notes
    -----
    Source: Microsoft Phi-3 ``Phi3LongRoPEScaledRotaryEmbedding``; HF ``_compute_longrope_parameters``.
    """
    f = float(factor)
    if f <= 1.0:
        return 1.0
    return math.sqrt(1.0 + math.log(f) / math.log(original))


# --------------------------------------------------------------------------------------------
# the rules, one per type
# --------------------------------------------------------------------------------------------
def _frequencies(model: RopeModel, scaling: RopeScaling, inv: np.ndarray, **facts: Any) -> ScaledFrequencies:
    """The read-only result of a rule: ``inv`` with the facts the rule reports (base, regimes, …)."""
    inv = np.asarray(inv, dtype=np.float64)
    inv.setflags(write=False)
    original = model.theta.copy()
    original.setflags(write=False)
    ramp = facts.pop("ramp", None)
    if ramp is not None:
        ramp = np.asarray(ramp, dtype=np.float64)
        ramp.setflags(write=False)
    facts.setdefault("attention_scaling", 1.0)
    base = model.base if model.ladder is None else math.nan  # given frequencies have no base
    facts.setdefault("base", base)
    facts.setdefault("original_base", base)
    return ScaledFrequencies(inv_freq=inv, original_inv_freq=original, rope_type=scaling.rope_type,
                             context=model.context, ramp=ramp, **facts)


def _scaled_or_unchanged(inv: np.ndarray, theta: np.ndarray) -> tuple[str, ...]:
    return tuple("unchanged" if new == old else "scaled" for new, old in zip(inv, theta))


def _no_scaling(scaling: RopeScaling, model: RopeModel) -> ScaledFrequencies:
    """``θ_i`` (HF ``_compute_default_rope_parameters``)."""
    return _frequencies(model, scaling, model.theta.copy(), regimes=("unchanged",) * model.pairs)


def _linear(scaling: RopeScaling, model: RopeModel) -> ScaledFrequencies:
    """``θ_i / s`` (kaiokendev; Chen et al. 2023, position interpolation)."""
    s = scaling.factor
    inv = model.theta / s
    return _frequencies(model, scaling, inv, regimes=_scaled_or_unchanged(inv, model.theta), factor=s)


def _ntk_needs_d_above_2(scaling: RopeScaling, rotated_dim: int, max_position_embeddings: int | None) -> None:
    _check_rotated_dim(rotated_dim, minimum=4)  # the exponent d / (d - 2)


def _ntk(scaling: RopeScaling, model: RopeModel) -> ScaledFrequencies:
    """``θ'_i = b'^(−2i/d)`` with ``b' = b · s^(d/(d−2))`` (bloc97 2023)."""
    s = scaling.factor
    new_base = ntk_base(model.base, s, model.rotated_dim)
    inv = geometric_inv_freq(model.rotated_dim, new_base)
    return _frequencies(model, scaling, inv, regimes=_scaled_or_unchanged(inv, model.theta), factor=s, base=new_base)


def _dynamic(scaling: RopeScaling, model: RopeModel) -> ScaledFrequencies:
    """ntk's rule with ``b' = b · (s C / L − (s − 1))^(d/(d−2))`` once the context ``C`` exceeds ``L``.

    ``L`` is ``max_position_embeddings`` (HF), or ``original_max_position_embeddings`` without it.
    """
    s = scaling.factor
    given_original = scaling.original_max_position_embeddings
    original = model.max_position_embeddings
    notes: list[str] = []
    if original is None and given_original is not None:
        original = given_original
        notes.append("original length from original_max_position_embeddings (max_position_embeddings not given)")
    elif given_original is not None and given_original != model.max_position_embeddings:
        notes.append("original_max_position_embeddings ignored: HF's dynamic NTK uses max_position_embeddings as "
                     "the original length")
    context = model.context
    if context is None or (original is not None and context <= original):
        notes.append("no growth: context not above the original length" if context else "no growth: no context")
        return _frequencies(model, scaling, model.theta.copy(), regimes=("unchanged",) * model.pairs, factor=s,
                            original_context=original, notes=tuple(notes))
    if original is None:
        raise ConfigError("max_position_embeddings", "dynamic scaling with a context needs the original length "
                          "(or original_max_position_embeddings)")
    new_base = dynamic_ntk_base(model.base, s, model.rotated_dim, context, original)
    inv = geometric_inv_freq(model.rotated_dim, new_base)
    notes.append(f"context {context} > original {original}: base grown")
    return _frequencies(model, scaling, inv, regimes=_scaled_or_unchanged(inv, model.theta), factor=s,
                        base=new_base, original_context=original, notes=tuple(notes))


def _needs_original_length(type_name: str) -> Validator:
    def validate(scaling: RopeScaling, rotated_dim: int, max_position_embeddings: int | None) -> None:
        if scaling.original_max_position_embeddings is None and max_position_embeddings is None:
            raise ConfigError("original_max_position_embeddings",
                              f"{type_name} needs the pre-training context length: set it or give max_position_embeddings")
    return validate


def _validate_yarn(scaling: RopeScaling, rotated_dim: int, max_position_embeddings: int | None) -> None:
    fast, slow = scaling.value("beta_fast"), scaling.value("beta_slow")
    for key, rotations in (("beta_fast", fast), ("beta_slow", slow)):
        if not math.isfinite(rotations * 2.0 * math.pi):  # the correction range takes ln(L / (β · 2π)): ln 0
            raise ConfigError(key, f"{number(rotations)} rotations × 2π overflows float64 (transformers' "
                              "find_correction_dim takes the log of 0); give a number of rotations in the original length")
    for key in ("mscale", "mscale_all_dim"):  # DeepSeek's attention squares get_mscale(s, mscale_all_dim)
        value = scaling.values.get(key)
        if value is not None and scaling.factor is not None and \
                not math.isfinite(yarn_get_mscale(scaling.factor, value) * yarn_get_mscale(scaling.factor, value)):
            raise ConfigError(key, f"{number(value)} gives an attention factor 0.1·{key}·ln(factor) + 1 whose square "
                              "overflows float64")
    if not fast > slow:
        raise ConfigError("beta_fast", f"must be greater than beta_slow (defaults 32 and 1), got beta_fast={fast:g}, "
                          f"beta_slow={slow:g}")
    _needs_original_length("yarn")(scaling, rotated_dim, max_position_embeddings)


def _original_length(scaling: RopeScaling, model: RopeModel, notes: list[str]) -> int:
    """yarn's and longrope's pre-training length: ``original_max_position_embeddings``, else (noted)
    ``max_position_embeddings``, as HF falls back."""
    if scaling.original_max_position_embeddings is not None:
        return scaling.original_max_position_embeddings
    notes.append("original length from max_position_embeddings")
    return model.max_position_embeddings


def _yarn(scaling: RopeScaling, model: RopeModel) -> ScaledFrequencies:
    """``θ'_i = θ_i / s · r_i + θ_i · (1 − r_i)``, ``r_i = clip((i − low) / (high − low), 0, 1)``.

    ``(low, high)`` from :func:`yarn_correction_range`; attention scaling :func:`yarn_attention_factor`
    (Peng et al. 2023; HF ``_compute_yarn_parameters``).
    """
    if model.base <= 1:
        raise ConfigError("base", f"must be > 1 for yarn (its correction range divides by ln base), got {model.base:g}")
    s = scaling.factor
    notes: list[str] = []
    original = _original_length(scaling, model, notes)
    if scaling.original_max_position_embeddings is not None and model.max_position_embeddings is not None:
        implicit = model.max_position_embeddings / original
        if implicit not in (1.0, s):
            notes.append(f"factor {s:g} differs from max_position_embeddings/original = {implicit:g}; the explicit "
                         "factor is used (HF v4.5x/v5)")
    low, high = yarn_correction_range(scaling.value("beta_fast"), scaling.value("beta_slow"), model.rotated_dim,
                                      model.base, original, bool(scaling.value("truncate")))
    if low == high:
        high += 0.001  # HF: prevent singularity
    ramp = np.clip((np.arange(model.pairs, dtype=np.float64) - low) / (high - low), 0.0, 1.0)
    extrapolation = 1.0 - ramp
    inv = (1.0 / (s * model.base_powers)) * (1.0 - extrapolation) + model.theta * extrapolation
    regimes = tuple("extrapolated" if r == 0.0 else "interpolated" if r == 1.0 else "blended" for r in ramp)
    attention = yarn_attention_factor(s, mscale=scaling.mscale, mscale_all_dim=scaling.mscale_all_dim,
                                      attention_factor=scaling.attention_factor)
    if scaling.attention_factor is not None:
        notes.append("attention factor given explicitly")
    elif scaling.mscale and scaling.mscale_all_dim:
        notes.append("attention factor get_mscale(s, mscale) / get_mscale(s, mscale_all_dim) (DeepSeek)")
    else:
        notes.append("attention factor 0.1 ln(s) + 1")
    return _frequencies(model, scaling, inv, regimes=regimes, factor=s, original_context=original,
                        attention_scaling=attention, correction_range=(float(low), float(high)), ramp=ramp,
                        notes=tuple(notes))


def _validate_llama3(scaling: RopeScaling, rotated_dim: int, max_position_embeddings: int | None) -> None:
    low, high = scaling.value("low_freq_factor"), scaling.value("high_freq_factor")
    if high < low:  # equal factors are accepted, as HF does (Llama 4 Scout): the band edges coincide
        raise ConfigError("high_freq_factor", f"must be at least low_freq_factor, got high_freq_factor={high:g}, "
                          f"low_freq_factor={low:g}")
    original = scaling.value("original_max_position_embeddings")
    if max_position_embeddings is not None and original >= max_position_embeddings:
        raise ConfigError("original_max_position_embeddings",
                          f"must be less than max_position_embeddings ({max_position_embeddings}), got {original}")


def _llama3(scaling: RopeScaling, model: RopeModel) -> ScaledFrequencies:
    """By wavelength ``w_i = 2π / θ_i``: ``w_i < L / high`` keeps ``θ_i``, ``w_i > L / low`` gives ``θ_i / s``,
    between them ``(1 − g) θ_i / s + g θ_i`` with ``g = (L / w_i − low) / (high − low)`` (Meta ``apply_scaling``).
    ``low == high`` (Llama 4 Scout) leaves no band between the edges: a sharp cut at ``L / low``.
    """
    s = scaling.factor
    low, high = float(scaling.value("low_freq_factor")), float(scaling.value("high_freq_factor"))
    original = scaling.value("original_max_position_embeddings")
    notes = tuple(f"{key} defaulted to {default}" for key, default in LLAMA3_DEFAULTS.items()
                  if scaling.values.get(key) is None)
    theta = model.theta
    wavelength = 2.0 * math.pi / theta
    divided = wavelength > original / low
    unchanged = wavelength < original / high
    medium = ~divided & ~unchanged
    if high == low and medium.any():  # HF divides 0 by 0 there: NaN frequencies
        raise ConfigError("high_freq_factor", f"equals low_freq_factor ({low:g}) and a wavelength falls exactly on the "
                          "band edge original / low: the smoothing divides by zero (transformers gives NaN)")
    with np.errstate(divide="ignore", invalid="ignore"):
        smooth = (original / wavelength - low) / (high - low) if high != low else np.zeros_like(wavelength)
    inv = np.where(divided, theta / s, theta)
    inv = np.where(medium, (1.0 - smooth) * inv / s + smooth * inv, inv)
    regimes = tuple("divided" if dv else "unchanged" if un else "smoothed" for dv, un in zip(divided, unchanged))
    ramp = np.where(divided, 1.0, np.where(unchanged, 0.0, 1.0 - smooth))
    return _frequencies(model, scaling, inv, regimes=regimes, factor=s, original_context=int(original), ramp=ramp,
                        notes=notes)


def _validate_longrope(scaling: RopeScaling, rotated_dim: int, max_position_embeddings: int | None) -> None:
    half = rotated_dim // 2
    for key in ("short_factor", "long_factor"):
        count = len(scaling.values[key])
        if count != half:
            raise ConfigError(key, f"must have rotated_dim/2 = {half} entries, got {count}")
    _needs_original_length("longrope")(scaling, rotated_dim, max_position_embeddings)
    if (scaling.attention_factor is None and scaling.factor is None and max_position_embeddings is None):
        raise ConfigError("max_position_embeddings", "longrope needs it (or factor, or attention_factor) for the "
                          "attention factor sqrt(1 + ln f / ln original), f = max_position_embeddings / original")


def _longrope(scaling: RopeScaling, model: RopeModel) -> ScaledFrequencies:
    """``θ'_i = 1 / (e_i · b^(2i/d))``, ``e`` the long factors once the context exceeds ``L`` (strictly),
    else the short ones; attention scaling :func:`longrope_attention_factor` (Phi-3; HF
    ``_compute_longrope_parameters``).
    """
    notes: list[str] = []
    original = _original_length(scaling, model, notes)
    if scaling.factor is not None:
        f = scaling.factor
    elif model.max_position_embeddings is not None:
        f = model.max_position_embeddings / original
    else:  # only reachable with an explicit attention_factor (the validation guarantees it)
        f = None
    if scaling.attention_factor is not None:
        attention = scaling.attention_factor
        notes.append("attention factor given explicitly")
    else:
        attention = longrope_attention_factor(f, original)
    use_long = model.context is not None and model.context > original
    which = "long" if use_long else "short"
    if model.context is None:
        notes.append("short factors: no context given")
    else:
        notes.append(f"{which} factors: context {model.context} {'>' if use_long else '<='} original {original}")
    extension = np.asarray(scaling.long_factor if use_long else scaling.short_factor, dtype=np.float64)
    inv = 1.0 / (extension * model.base_powers)
    return _frequencies(model, scaling, inv, regimes=(which,) * model.pairs, factor=f, original_context=original,
                        attention_scaling=attention, longrope_factors=which, short_factor=scaling.short_factor,
                        long_factor=scaling.long_factor, notes=tuple(notes))


# --------------------------------------------------------------------------------------------
# what pecli extend writes from each type (transformers' keys, modeling_rope_utils)
# --------------------------------------------------------------------------------------------
def _write_nothing(record: ScalingType, start: ExtensionStart) -> None:
    """No scaling block (the base increase)."""
    return None


def _write_factor(record: ScalingType, start: ExtensionStart) -> dict[str, Any]:
    """``rope_type`` and ``factor`` s: linear's θ_i / s, dynamic NTK's growing base."""
    return {"rope_type": record.extension.rope_type, "factor": start.factor, **start.carried}


def _write_yarn(record: ScalingType, start: ExtensionStart) -> dict[str, Any]:
    """YaRN over L₀ with its defaults β_fast, β_slow written out, and its attention factor 0.1 ln s + 1
    (Peng et al. 2023, §3.4) — unless the model carries DeepSeek's ``mscale`` and ``mscale_all_dim``, from
    which transformers derives mscale(s, mscale) / mscale(s, mscale_all_dim) itself."""
    keys: dict[str, Any] = {"rope_type": record.extension.rope_type, "factor": start.factor,
                            "original_max_position_embeddings": start.pretraining,
                            "beta_fast": float(record.defaults["beta_fast"]), "beta_slow": float(record.defaults["beta_slow"])}
    if not (start.carried.get("mscale") and start.carried.get("mscale_all_dim")):
        keys["attention_factor"] = 0.1 * math.log(start.factor) + 1.0
    return {**keys, **start.carried}


def _write_llama3(record: ScalingType, start: ExtensionStart) -> dict[str, Any]:
    """Llama 3.1's blend as it ships (low_freq_factor 1, high_freq_factor 4) over L₀."""
    return {"rope_type": record.extension.rope_type, "factor": start.factor,
            "low_freq_factor": float(record.defaults["low_freq_factor"]),
            "high_freq_factor": float(record.defaults["high_freq_factor"]),
            "original_max_position_embeddings": start.pretraining, **start.carried}


def _write_longrope(record: ScalingType, start: ExtensionStart) -> dict[str, Any]:
    """The model's own LongRoPE block (its fitted factors) with ``factor`` s: its attention factor becomes
    √(1 + ln s / ln L₀)."""
    return {**start.own, "factor": start.factor, **start.carried}


#: The key DeepSeek-V2/V3's attention reads for every rope type but ``default``: its softmax scale is
#: multiplied by mscale(factor, ``mscale_all_dim``)² (transformers' ``yarn_get_mscale`` in the attention).
#: transformers logs "Unrecognized keys" for it under linear, dynamic, llama3 and longrope, yet the
#: attention reads it there, so those candidates carry it.
ATTENTION_READ_KEYS = ("mscale_all_dim",)

# --------------------------------------------------------------------------------------------
# the registry
# --------------------------------------------------------------------------------------------
SCALINGS: dict[str, ScalingType] = {
    record.name: record
    for record in (
        ScalingType("none", "no scaling: θ_i = base^(−2i/d)", (), _no_scaling,
                    extension=Extension("base", "default", "a larger base: every base above it meets Men et al. "
                                        "2024's bound for N (up to 2^21 tokens)", "`rope_theta`, no scaling; N",
                                        _write_nothing, order=3, raises_base=True)),
        ScalingType("linear", "position interpolation: θ_i / s (kaiokendev; Chen et al. 2023)", (FACTOR,), _linear,
                    required=("factor",),
                    extension=Extension("linear", "linear", "position interpolation (Chen et al. 2023): θ_i / s",
                                        "`factor`; N", _write_factor, order=4, carries=ATTENTION_READ_KEYS)),
        ScalingType("ntk", "NTK-aware: base · s^(d/(d−2)) (bloc97 2023)", (FACTOR,), _ntk, required=("factor",),
                    validate=_ntk_needs_d_above_2),
        ScalingType("dynamic", "dynamic NTK: the base grows with the context past L (emozilla 2023)",
                    (FACTOR, ORIGINAL_LENGTH), _dynamic, required=("factor",), validate=_ntk_needs_d_above_2,
                    reads_context=True,
                    extension=Extension("dynamic", "dynamic", "dynamic NTK (emozilla 2023): the base grows with the "
                                        "sequence past `max_position_embeddings`", "`factor`; "
                                        "`max_position_embeddings` stays L₀ (at N the base would not grow)",
                                        _write_factor, order=2, carries=ATTENTION_READ_KEYS, served="pretraining")),
        ScalingType("yarn", "YaRN: ramp between θ_i and θ_i / s by rotations in L, attention 0.1 ln s + 1 "
                    "(Peng et al. 2023)",
                    (FACTOR, ORIGINAL_LENGTH, BETA_FAST, BETA_SLOW, MSCALE, MSCALE_ALL_DIM, ATTENTION_FACTOR, TRUNCATE),
                    _yarn, required=("factor",), defaults=YARN_DEFAULTS, validate=_validate_yarn,
                    extension=Extension("yarn", "yarn", "YaRN (Peng et al. 2023): ramp between θ_i and θ_i/s, "
                                        "attention factor 0.1 ln s + 1", "`rope_type`, `factor`, "
                                        "`original_max_position_embeddings` L₀, `beta_fast` 32, `beta_slow` 1, "
                                        "`attention_factor`; `max_position_embeddings` N", _write_yarn, order=0,
                                        carries=("mscale", *ATTENTION_READ_KEYS))),
        ScalingType("llama3", "Llama 3.1: keep short wavelengths, divide long ones by s, blend between (Meta 2024)",
                    (FACTOR, ORIGINAL_LENGTH, LOW_FREQ_FACTOR, HIGH_FREQ_FACTOR), _llama3, required=("factor",),
                    defaults=LLAMA3_DEFAULTS, validate=_validate_llama3,
                    extension=Extension("llama3", "llama3", "Llama 3.1's scaling (Meta 2024)", "`factor`, "
                                        "`low_freq_factor` 1, `high_freq_factor` 4, `original_max_position_embeddings` "
                                        "L₀; N", _write_llama3, order=1, carries=ATTENTION_READ_KEYS)),
        ScalingType("longrope", "LongRoPE: per-pair factors, short up to L and long past it (Ding et al. 2024; Phi-3)",
                    (SHORT_FACTOR, LONG_FACTOR, FACTOR, ATTENTION_FACTOR, ORIGINAL_LENGTH), _longrope,
                    required=("short_factor", "long_factor"), validate=_validate_longrope, reads_context=True,
                    extension=Extension("longrope", "longrope", "only for a model that carries LongRoPE factors "
                                        "(Phi-3): its own factors", "`factor` s; N", _write_longrope, order=5,
                                        carries=ATTENTION_READ_KEYS, reuses=("short_factor", "long_factor"))),
    )
}
"""Every scaling type pecli knows, by pecli name: its keys, its rules and the function computing it."""

SCALING_TYPES: tuple[str, ...] = tuple(SCALINGS)
"""The scaling types pecli ships, by pecli name (a snapshot of :data:`SCALINGS`' names)."""


def extension_types() -> dict[str, ScalingType]:
    """The records ``pecli extend`` builds candidates from, by method name, in their :attr:`Extension.order`
    (read from :data:`SCALINGS` at each call, so that a type registered later is offered too)."""
    records = sorted((r for r in SCALINGS.values() if r.extension is not None), key=lambda r: r.extension.order)
    return {record.extension.method: record for record in records}


#: The scaling types that act on the frequencies alone, so also on frequencies given with ``--inv-freq``.
LADDER_SCALINGS = ("none", "linear")


# --------------------------------------------------------------------------------------------
# the entry point
# --------------------------------------------------------------------------------------------
def compute_inv_freq(
    *,
    base: float,
    rotated_dim: int,
    scaling: RopeScaling | None = None,
    max_position_embeddings: int | None = None,
    context: int | None = None,
    ladder: tuple[float, ...] | None = None,
) -> ScaledFrequencies:
    """Inverse frequencies of RoPE under a scaling, as HF transformers computes them, in float64.

    Validates ``scaling`` (:meth:`RopeScaling.validate`) and applies its type's rule (the ``compute``
    of its record in :data:`SCALINGS`, each documented with its formula).

    Parameters
    ----------
    base : float
        RoPE base (``rope_theta``).
    rotated_dim : int
        ``d = int(head_dim * partial_rotary_factor)``, even.
    scaling : RopeScaling, optional
        None means no scaling.
    max_position_embeddings : int, optional
        The model's ``max_position_embeddings`` (dynamic's ``L``; yarn/longrope fallback for ``L``;
        longrope's ``f``).
    context : int, optional
        Current sequence length (dynamic, longrope). None: dynamic does not grow, longrope uses the short
        factors (HF's ``seq_len=None`` at init).
    ladder : tuple of float, optional
        The unscaled frequencies, given instead of ``base^(−2i/d)`` (``--inv-freq``); only the scalings
        that act on the frequencies themselves take them (none, linear): the others derive theirs from
        the base.

    Returns
    -------
    ScaledFrequencies

    Raises
    ------
    ConfigError
        Bad input; see :meth:`RopeScaling.validate`.

    Notes
    -----
    Source: HF transformers ``modeling_rope_utils.py`` (``_compute_*_parameters``); see the module
    docstring for where versions differ.
    """
    scaling = RopeScaling() if scaling is None else scaling
    if not isinstance(scaling, RopeScaling):
        raise ConfigError("rope_scaling", f"must be a RopeScaling, got {type(scaling).__name__}")
    scaling = scaling.validated(rotated_dim=rotated_dim, max_position_embeddings=max_position_embeddings)
    if ladder is not None and scaling.rope_type not in LADDER_SCALINGS:
        raise ConfigError("inv_freq", f"replaces the base^(-2i/d) ladder, from which scaling {scaling.rope_type} "
                          f"computes its frequencies; with --inv-freq use scaling {' or '.join(LADDER_SCALINGS)}")
    model = RopeModel(
        base=_BASE.coerce(base),
        rotated_dim=int(rotated_dim),
        max_position_embeddings=None if max_position_embeddings is None else _MODEL_LENGTH.coerce(max_position_embeddings),
        context=None if context is None else _CONTEXT.coerce(context),
        ladder=None if ladder is None else tuple(float(v) for v in ladder),
    )
    return scaling.record.compute(scaling, model)
