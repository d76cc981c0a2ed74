"""What a RoPE scaling type is: its record, what its rule reads and what it returns.

Notation: ``d`` is the rotated dimension (``int(head_dim * partial_rotary_factor)``, supplied by the
caller), ``b`` the RoPE base (``rope_theta``), ``i = 0 .. d/2 - 1`` the pair index and

    theta_i = b ** (-2 i / d)                       (Su et al. 2021, RoFormer, eq. 15)

the unscaled inverse frequency of pair ``i``; its wavelength is ``2 pi / theta_i`` positions.

A type is one :class:`ScalingType` record (as one entry of transformers' ``ROPE_INIT_FUNCTIONS``): its
keys, its rule ``rule(scaling, model) -> ScaledFrequencies`` (:class:`RopeModel` is what it reads besides
its keys), its rules across keys, and every fact the rest of pecli asks about it — whether it scales at
all, whether it reads the context, whether its base grows, where its original length comes from — so
that no module outside the records compares type names.

Conventions (where HF versions differ or HF is silent):

* Reference read: transformers v4.4x ``modeling_rope_utils.py`` and the v4.5x / v5
  ``rope_parameters`` code (``RotaryEmbeddingConfigMixin``). Numbers follow the current (v5) rules;
  each type's module says where versions differ for it.
* HF's validator only *warns* about most bad values; pecli raises :class:`pecli.errors.ConfigError`
  instead (naming the key and what is allowed), and also rejects keys that the type does not use.
* HF computes in float32; the numbers here are what the same formulas give in float64.
* ``attention_scaling`` is the factor HF multiplies both cos and sin by, so attention logits scale by
  its square.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import numpy as np

from pecli.errors import ConfigError
from pecli.params import Parameter
from pecli.schemes.frequencies import geometric_inv_freq


class ScalingValue(Protocol):
    """What a rule reads of a scaling value (:class:`~pecli.schemes.scaling.value.RopeScaling`, which reads
    the registry of these records): its type, the keys given — each also as an attribute, None when not
    given — and :meth:`value`, which adds the type's default."""

    rope_type: str

    @property
    def values(self) -> dict[str, Any]: ...

    def value(self, key: str) -> Any: ...

    def __getattr__(self, name: str) -> Any: ...


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


Validator = Callable[[ScalingValue, int, "int | None"], None]
Rule = Callable[[ScalingValue, RopeModel], "ScaledFrequencies"]


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
        Values the rule uses for keys not given (see :meth:`~pecli.schemes.scaling.value.RopeScaling.value`).
    validate : callable or None
        ``validate(scaling, rotated_dim, max_position_embeddings)``: only the type's own rules across
        keys (the keys themselves are already checked); raises :class:`ConfigError`.
    reads_context : bool
        Whether the frequencies depend on the current sequence length (``context``): dynamic NTK's base,
        LongRoPE's short or long factors. ``--context`` is taken only by such types.
    extension : Extension or None
        What ``pecli extend`` may build from this type (None: no candidate; pecli's static ``ntk``,
        which transformers does not read).
    hf_name : str
        The ``rope_type`` a config.json spells it with (``default`` for ``none``); its name when not given.
    scales : bool
        Whether it changes the frequencies at all (False only for ``none``, which the rest of pecli
        treats as "no scaling").
    in_transformers : bool
        Whether transformers' ``modeling_rope_utils`` computes it (False for pecli's static ``ntk``).
    on_ladder : bool
        Whether its rule acts on the frequencies alone, so also on frequencies given with ``--inv-freq``
        (none, linear); the others derive theirs from the base.
    grows_base : bool
        Whether its base grows with the context past the original length (dynamic NTK): the base the
        model uses depends on the sequence length.
    from_original_length : bool
        Whether its rule starts from ``original_max_position_embeddings`` L₀ (llama3, yarn, longrope): HF
        moves a top-level ``original_max_position_embeddings`` into its block, and a model with the type
        serves factor × L₀.
    original_from_model : bool
        Whether its original length L is the model's ``max_position_embeddings`` (HF's dynamic NTK), the
        block's ``original_max_position_embeddings`` only in its absence.
    per_pair_factors : bool
        Whether the model carries per-pair factors fitted for its target length (LongRoPE): past that
        length they are used as they are.
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
    hf_name: str = ""
    scales: bool = True
    in_transformers: bool = True
    on_ladder: bool = False
    grows_base: bool = False
    from_original_length: bool = False
    original_from_model: bool = False
    per_pair_factors: bool = False

    def __post_init__(self) -> None:
        if not self.hf_name:
            object.__setattr__(self, "hf_name", self.name)

    @property
    def key_names(self) -> tuple[str, ...]:
        return tuple(key.name for key in self.keys)

    @property
    def title(self) -> str:
        """How messages name the type: its summary up to the colon ("LongRoPE", "dynamic NTK")."""
        return self.summary.partition(":")[0]

    def key(self, name: str) -> Parameter:
        return next(key for key in self.keys if key.name == name)


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


def scaled_frequencies(model: RopeModel, scaling: ScalingValue, inv: np.ndarray, **facts: Any) -> ScaledFrequencies:
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


def scaled_or_unchanged(inv: np.ndarray, theta: np.ndarray) -> tuple[str, ...]:
    """Per pair: ``"unchanged"`` where the rule kept ``θ_i``, else ``"scaled"``."""
    return tuple("unchanged" if new == old else "scaled" for new, old in zip(inv, theta))


def needs_original_length(type_name: str) -> Validator:
    """A validator refusing a scaling of ``type_name`` that has neither its original length nor the model's."""
    def validate(scaling: ScalingValue, rotated_dim: int, max_position_embeddings: int | None) -> None:
        if scaling.original_max_position_embeddings is None and max_position_embeddings is None:
            raise ConfigError("original_max_position_embeddings",
                              f"{type_name} needs the pre-training context length: set it or give max_position_embeddings")
    return validate


def original_length(scaling: ScalingValue, model: RopeModel, notes: list[str]) -> int:
    """yarn's and longrope's pre-training length: ``original_max_position_embeddings``, else (noted)
    ``max_position_embeddings``, as HF falls back."""
    if scaling.original_max_position_embeddings is not None:
        return scaling.original_max_position_embeddings
    notes.append("original length from max_position_embeddings")
    return model.max_position_embeddings
