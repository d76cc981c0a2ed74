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
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from numbers import Integral, Real
from typing import Any

import numpy as np

from pecli.errors import ConfigError

__all__ = [
    "SCALING_TYPES",
    "HF_TYPE_ALIASES",
    "LLAMA3_DEFAULTS",
    "YARN_DEFAULTS",
    "RopeScaling",
    "ScaledFrequencies",
    "compute_inv_freq",
    "default_inv_freq",
    "ntk_base",
    "dynamic_ntk_base",
    "yarn_get_mscale",
    "yarn_attention_factor",
    "yarn_correction_dim",
    "yarn_correction_range",
    "longrope_attention_factor",
]

SCALING_TYPES: tuple[str, ...] = ("none", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope")
"""The scaling types pecli knows, by pecli name."""

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

# Keys each type accepts besides "rope_type"/"type" (HF's required + optional keys).
_ALLOWED_KEYS: dict[str, tuple[str, ...]] = {
    "none": (),
    "linear": ("factor",),
    "ntk": ("factor",),
    "dynamic": ("factor", "original_max_position_embeddings"),
    "yarn": (
        "factor",
        "original_max_position_embeddings",
        "attention_factor",
        "beta_fast",
        "beta_slow",
        "mscale",
        "mscale_all_dim",
        "truncate",
    ),
    "llama3": ("factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"),
    "longrope": ("short_factor", "long_factor", "factor", "attention_factor", "original_max_position_embeddings"),
}
_REQUIRED_KEYS: dict[str, tuple[str, ...]] = {
    "none": (),
    "linear": ("factor",),
    "ntk": ("factor",),
    "dynamic": ("factor",),
    "yarn": ("factor",),
    "llama3": ("factor",),
    "longrope": ("short_factor", "long_factor"),
}
# Keys the reader leaves to its caller (rope_theta, partial_rotary_factor) or that HF accepts without
# using them in the frequencies (``finetuned``, shipped by YaRN's Llama 2 checkpoints).
_IGNORED_HF_KEYS = frozenset({"rope_theta", "partial_rotary_factor", "finetuned", "mrope_section"})


# --------------------------------------------------------------------------------------------
# small checks
# --------------------------------------------------------------------------------------------
def _is_real(value: object) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _real(key: str, value: object, *, minimum: float | None = None, strict: bool = False, what: str = "") -> float:
    """Return ``value`` as a finite float, or raise ConfigError naming ``key``."""
    bound = ""
    if minimum is not None:
        bound = f" {'>' if strict else '>='} {minimum:g}"
    allowed = what or f"a finite number{bound}"
    if not _is_real(value) or not math.isfinite(float(value)):  # type: ignore[arg-type]
        raise ConfigError(key, f"must be {allowed}, got {value!r}")
    out = float(value)  # type: ignore[arg-type]
    if minimum is not None and (out <= minimum if strict else out < minimum):
        raise ConfigError(key, f"must be {allowed}, got {value!r}")
    return out


def _positive_int(key: str, value: object) -> int:
    """Return ``value`` as an int >= 1 (an integral float is accepted), or raise ConfigError."""
    if isinstance(value, bool):
        raise ConfigError(key, f"must be a positive integer, got {value!r}")
    if isinstance(value, Integral):
        out = int(value)
    elif isinstance(value, Real) and math.isfinite(float(value)) and float(value).is_integer():
        out = int(float(value))
    else:
        raise ConfigError(key, f"must be a positive integer, got {value!r}")
    if out < 1:
        raise ConfigError(key, f"must be a positive integer, got {value!r}")
    return out


def _check_rotated_dim(rotated_dim: object, *, minimum: int = 2) -> int:
    if isinstance(rotated_dim, bool) or not isinstance(rotated_dim, Integral):
        raise ConfigError("rotated_dim", f"must be an even integer >= {minimum}, got {rotated_dim!r}")
    d = int(rotated_dim)
    if d < minimum or d % 2:
        raise ConfigError("rotated_dim", f"must be an even integer >= {minimum}, got {rotated_dim!r}")
    return d


def _check_base(base: object, *, above_one: bool = False) -> float:
    if above_one:
        return _real("base", base, minimum=1.0, strict=True)
    return _real("base", base, minimum=0.0, strict=True)


def _as_factor_tuple(key: str, value: object) -> tuple[float, ...]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ConfigError(key, f"must be a list of numbers, got {value!r}")
    items = tuple(value)  # type: ignore[arg-type]
    for item in items:
        if not _is_real(item):
            raise ConfigError(key, f"must be a list of numbers, got element {item!r}")
    return tuple(float(x) for x in items)


# --------------------------------------------------------------------------------------------
# the scaling configuration
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RopeScaling:
    """A RoPE context-extension scaling, as HF's ``rope_scaling`` / ``rope_parameters`` describes it.

    Parameters
    ----------
    rope_type : str
        One of :data:`SCALING_TYPES`. HF's ``"default"`` maps to ``"none"``, legacy ``"su"`` to
        ``"longrope"``.
    factor : float, optional
        Context-extension factor ``s`` (>= 1). Required for linear, ntk, dynamic, yarn and llama3;
        optional for longrope (then only used for the attention factor).
    original_max_position_embeddings : int, optional
        Pre-training context length ``L``. yarn and longrope fall back to ``max_position_embeddings``;
        llama3 defaults to 8192; dynamic uses it only when ``max_position_embeddings`` is not given.
    beta_fast, beta_slow : float, optional
        YaRN rotation-count bounds ``alpha``/``beta`` of the ramp (defaults 32 and 1).
    mscale, mscale_all_dim : float, optional
        DeepSeek-style YaRN attention factor ``get_mscale(s, mscale) / get_mscale(s, mscale_all_dim)``
        (used only when both are non-zero).
    attention_factor : float, optional
        Explicit attention scaling (yarn, longrope); wins over every formula.
    truncate : bool, optional
        YaRN: floor/ceil the correction range (default True; gpt-oss ships False).
    low_freq_factor, high_freq_factor : float, optional
        Llama 3.1 band edges (defaults 1 and 4).
    short_factor, long_factor : tuple of float, optional
        LongRoPE per-pair rescale factors, ``d/2`` each.

    Notes
    -----
    Source: HF transformers ``modeling_rope_utils.py`` (``rope_config_validation``). The dataclass does
    not check itself on construction; :meth:`validate` does (and :func:`compute_inv_freq` calls it).
    """

    rope_type: str = "none"
    factor: float | None = None
    original_max_position_embeddings: int | None = None
    beta_fast: float | None = None
    beta_slow: float | None = None
    mscale: float | None = None
    mscale_all_dim: float | None = None
    attention_factor: float | None = None
    truncate: bool | None = None
    low_freq_factor: float | None = None
    high_freq_factor: float | None = None
    short_factor: tuple[float, ...] | None = None
    long_factor: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.rope_type, str):
            object.__setattr__(self, "rope_type", HF_TYPE_ALIASES.get(self.rope_type, self.rope_type))
        for name in ("short_factor", "long_factor"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, tuple) and not isinstance(value, (str, bytes)):
                if hasattr(value, "__iter__"):
                    object.__setattr__(self, name, tuple(float(x) if _is_real(x) else x for x in value))

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
            keys), or a value of the wrong kind.

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
        if "rope_type" in raw:
            type_name = raw.pop("rope_type")
            raw.pop("type", None)
            type_key = "rope_type"
        elif "type" in raw:
            type_name = raw.pop("type")
            type_key = "type"
        else:
            type_name = "default"
            type_key = "rope_type"
        if not isinstance(type_name, str):
            raise ConfigError(type_key, f"must be a string, one of {_valid_types_text()}, got {type_name!r}")
        rope_type = HF_TYPE_ALIASES.get(type_name, type_name)
        if rope_type not in SCALING_TYPES:
            raise ConfigError(type_key, f"unknown RoPE scaling type {type_name!r}; allowed: {_valid_types_text()}")
        allowed = _ALLOWED_KEYS[rope_type]
        kwargs: dict[str, Any] = {}
        for key, value in raw.items():
            if key in _IGNORED_HF_KEYS:
                continue
            if key not in allowed:
                allowed_text = ", ".join(allowed) if allowed else "none besides rope_type"
                raise ConfigError(key, f"not a key of rope_type {type_name!r}; allowed keys: {allowed_text}")
            if key in ("short_factor", "long_factor"):
                kwargs[key] = _as_factor_tuple(key, value)
            elif key == "original_max_position_embeddings":
                kwargs[key] = _positive_int(key, value)
            elif key == "truncate":
                if not isinstance(value, bool):
                    raise ConfigError(key, f"must be true or false, got {value!r}")
                kwargs[key] = value
            else:  # a float key
                kwargs[key] = _real(key, value)
        return cls(rope_type=rope_type, **kwargs)

    def to_hf(self) -> dict[str, Any]:
        """Return the HF ``rope_scaling`` dict of this scaling (``rope_type`` plus the set fields).

        Returns
        -------
        dict
            ``{"rope_type": "default"}`` for ``"none"``; tuples become lists. pecli's ``"ntk"`` has no HF
            equivalent and is written as ``"ntk"``.
        """
        out: dict[str, Any] = {"rope_type": "default" if self.rope_type == "none" else self.rope_type}
        for f in fields(self):
            if f.name == "rope_type":
                continue
            value = getattr(self, f.name)
            if value is not None:
                out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    # ---------------------------------------------------------------- validation
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
            Naming the offending key and what is allowed:

            * ``rope_type`` not in :data:`SCALING_TYPES`; a field the type does not use is set;
            * ``factor`` missing (linear, ntk, dynamic, yarn, llama3) or < 1;
            * yarn: ``beta_fast``/``beta_slow`` not > 0 or ``beta_fast <= beta_slow`` (after defaults
              32/1); ``attention_factor`` not > 0; no ``original_max_position_embeddings`` and no
              ``max_position_embeddings``;
            * llama3: ``low_freq_factor`` not > 0, ``high_freq_factor <= low_freq_factor``,
              ``original_max_position_embeddings >= max_position_embeddings`` (when the latter is given);
            * longrope: ``short_factor``/``long_factor`` missing, not positive, or not ``d/2`` long;
              no original length; no way to get the attention factor's ``f``.

        Notes
        -----
        Source: HF ``_validate_{linear,dynamic,yarn,longrope,llama3}_rope_parameters`` (v4.4x and v5).
        """
        rope_type = self.rope_type
        if not isinstance(rope_type, str) or rope_type not in SCALING_TYPES:
            raise ConfigError("rope_type", f"unknown RoPE scaling type {rope_type!r}; allowed: {_valid_types_text()}")
        d = _check_rotated_dim(rotated_dim, minimum=4 if rope_type in ("ntk", "dynamic") else 2)
        if max_position_embeddings is not None:
            max_position_embeddings = _positive_int("max_position_embeddings", max_position_embeddings)

        allowed = _ALLOWED_KEYS[rope_type]
        for f in fields(self):
            if f.name == "rope_type" or getattr(self, f.name) is None:
                continue
            if f.name not in allowed:
                if not allowed:
                    users = ", ".join(t for t in SCALING_TYPES if f.name in _ALLOWED_KEYS[t])
                    raise ConfigError(f.name, f"applies only with a scaling ({users}); none is set (rope_type / --scaling)")
                raise ConfigError(f.name, f"not used by rope_type {rope_type!r}; allowed keys: {', '.join(allowed)}")
        for key in _REQUIRED_KEYS[rope_type]:
            if getattr(self, key) is None:
                raise ConfigError(key, f"required for rope_type {rope_type!r}")

        if self.factor is not None:
            _real("factor", self.factor, minimum=1.0)
        if self.original_max_position_embeddings is not None:
            _positive_int("original_max_position_embeddings", self.original_max_position_embeddings)
        if self.attention_factor is not None:
            _real("attention_factor", self.attention_factor, minimum=0.0, strict=True)

        if rope_type == "yarn":
            for key in ("beta_fast", "beta_slow"):
                if getattr(self, key) is not None:
                    _real(key, getattr(self, key), minimum=0.0, strict=True)
            fast, slow = _yarn_betas(self)
            if not fast > slow:
                raise ConfigError(
                    "beta_fast",
                    f"must be greater than beta_slow (defaults 32 and 1), got beta_fast={fast:g}, beta_slow={slow:g}",
                )
            for key in ("mscale", "mscale_all_dim"):
                if getattr(self, key) is not None:
                    _real(key, getattr(self, key))
            if self.truncate is not None and not isinstance(self.truncate, bool):
                raise ConfigError("truncate", f"must be true or false, got {self.truncate!r}")
            if self.original_max_position_embeddings is None and max_position_embeddings is None:
                raise ConfigError(
                    "original_max_position_embeddings",
                    "yarn needs the pre-training context length: set it or give max_position_embeddings",
                )
        elif rope_type == "llama3":
            low, high, original = _llama3_params(self)
            _real("low_freq_factor", low, minimum=0.0, strict=True)
            _real("high_freq_factor", high)
            if not high > low:
                raise ConfigError(
                    "high_freq_factor",
                    f"must be greater than low_freq_factor, got high_freq_factor={high:g}, low_freq_factor={low:g}",
                )
            if max_position_embeddings is not None and original >= max_position_embeddings:
                raise ConfigError(
                    "original_max_position_embeddings",
                    f"must be less than max_position_embeddings ({max_position_embeddings}), got {original}",
                )
        elif rope_type == "longrope":
            half = d // 2
            for key in ("short_factor", "long_factor"):
                values = _as_factor_tuple(key, getattr(self, key))
                if len(values) != half:
                    raise ConfigError(key, f"must have rotated_dim/2 = {half} entries, got {len(values)}")
                if not all(math.isfinite(v) and v > 0 for v in values):
                    raise ConfigError(key, "entries must be finite numbers > 0")
            if self.original_max_position_embeddings is None and max_position_embeddings is None:
                raise ConfigError(
                    "original_max_position_embeddings",
                    "longrope needs the pre-training context length: set it or give max_position_embeddings",
                )
            if (
                self.attention_factor is None
                and self.factor is None
                and self.original_max_position_embeddings is not None
                and max_position_embeddings is None
            ):
                raise ConfigError(
                    "max_position_embeddings",
                    "longrope needs it (or factor, or attention_factor) for the attention factor "
                    "sqrt(1 + ln f / ln original), f = max_position_embeddings / original",
                )


def _valid_types_text() -> str:
    return ", ".join(SCALING_TYPES) + " (HF 'default' = none, legacy 'su' = longrope)"


def _yarn_betas(scaling: RopeScaling) -> tuple[float, float]:
    # HF: ``rope_scaling.get("beta_fast") or 32`` -- None (and 0, which validate() refuses) -> default.
    fast = float(scaling.beta_fast) if scaling.beta_fast else YARN_DEFAULTS["beta_fast"]
    slow = float(scaling.beta_slow) if scaling.beta_slow else YARN_DEFAULTS["beta_slow"]
    return fast, slow


def _llama3_params(scaling: RopeScaling) -> tuple[float, float, int]:
    low = LLAMA3_DEFAULTS["low_freq_factor"] if scaling.low_freq_factor is None else scaling.low_freq_factor
    high = LLAMA3_DEFAULTS["high_freq_factor"] if scaling.high_freq_factor is None else scaling.high_freq_factor
    original = (
        LLAMA3_DEFAULTS["original_max_position_embeddings"]
        if scaling.original_max_position_embeddings is None
        else scaling.original_max_position_embeddings
    )
    return low, high, original


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
    b = _check_base(base)
    d = _check_rotated_dim(rotated_dim)
    return 1.0 / (b ** (np.arange(0, d, 2, dtype=np.float64) / d))


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
    return _check_base(base) * _real("factor", factor, minimum=1.0) ** (d / (d - 2))


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
    b = _check_base(base)
    s = _real("factor", factor, minimum=1.0)
    seq = _positive_int("context", seq_len)
    orig = _positive_int("max_position_embeddings", original)
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
# the entry point
# --------------------------------------------------------------------------------------------
def compute_inv_freq(
    *,
    base: float,
    rotated_dim: int,
    scaling: RopeScaling | None = None,
    max_position_embeddings: int | None = None,
    context: int | None = None,
) -> ScaledFrequencies:
    """Inverse frequencies of RoPE under a scaling, as HF transformers computes them, in float64.

    With ``theta_i = b ** (-2 i / d)``, ``s`` the factor and ``L`` the original context:

    * none: ``theta_i``.
    * linear: ``theta_i / s`` (kaiokendev; Chen et al. 2023, position interpolation).
    * ntk: ``b' = b * s ** (d / (d - 2))``, ``theta'_i = b' ** (-2 i / d)``.
    * dynamic: as ntk with ``b' = b * (s * C / L - (s - 1)) ** (d / (d - 2))`` when the context
      ``C > L``; unchanged for ``C <= L`` or ``context=None``. ``L = max_position_embeddings``.
    * yarn: ``theta'_i = theta_i / s * r_i + theta_i * (1 - r_i)``, ``r_i = clip((i - low) / (high - low),
      0, 1)`` with ``(low, high)`` from :func:`yarn_correction_range`; attention scaling from
      :func:`yarn_attention_factor`.
    * llama3: wavelength ``w_i = 2 pi / theta_i``; ``w_i < L / high`` -> ``theta_i``; ``w_i > L / low`` ->
      ``theta_i / s``; otherwise ``(1 - g) theta_i / s + g theta_i``, ``g = (L / w_i - low) / (high - low)``.
    * longrope: ``theta'_i = 1 / (e_i * b ** (2 i / d))``, ``e = long_factor`` if ``C > L`` (strictly), else
      ``short_factor``; attention scaling ``sqrt(1 + ln f / ln L)``.

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
    scaling.validate(rotated_dim=rotated_dim, max_position_embeddings=max_position_embeddings)
    if max_position_embeddings is not None:
        max_position_embeddings = _positive_int("max_position_embeddings", max_position_embeddings)
    if context is not None:
        context = _positive_int("context", context)
    d = int(rotated_dim)
    rope_type = scaling.rope_type
    b = _check_base(base, above_one=rope_type == "yarn")
    exponent = np.arange(0, d, 2, dtype=np.float64) / d  # 2i/d
    theta = 1.0 / (b**exponent)
    half = d // 2

    def _scaled_or_unchanged(new: np.ndarray) -> tuple[str, ...]:
        return tuple("unchanged" if n == o else "scaled" for n, o in zip(new, theta))

    def _done(inv: np.ndarray, **kw: Any) -> ScaledFrequencies:
        inv = np.asarray(inv, dtype=np.float64)
        inv.setflags(write=False)
        orig = theta.copy()
        orig.setflags(write=False)
        ramp = kw.pop("ramp", None)
        if ramp is not None:
            ramp = np.asarray(ramp, dtype=np.float64)
            ramp.setflags(write=False)
        kw.setdefault("attention_scaling", 1.0)
        kw.setdefault("base", b)
        kw.setdefault("original_base", b)
        return ScaledFrequencies(
            inv_freq=inv, original_inv_freq=orig, rope_type=rope_type, context=context, ramp=ramp, **kw
        )

    if rope_type == "none":
        return _done(theta.copy(), regimes=("unchanged",) * half)

    if rope_type == "linear":
        s = float(scaling.factor)  # type: ignore[arg-type]
        inv = theta / s
        return _done(inv, regimes=_scaled_or_unchanged(inv), factor=s)

    if rope_type == "ntk":
        s = float(scaling.factor)  # type: ignore[arg-type]
        new_base = b * s ** (d / (d - 2))
        inv = 1.0 / (new_base**exponent)
        return _done(inv, regimes=_scaled_or_unchanged(inv), factor=s, base=new_base)

    if rope_type == "dynamic":
        s = float(scaling.factor)  # type: ignore[arg-type]
        notes: list[str] = []
        original = max_position_embeddings
        if original is None and scaling.original_max_position_embeddings is not None:
            original = scaling.original_max_position_embeddings
            notes.append("original length from original_max_position_embeddings (max_position_embeddings not given)")
        elif (
            scaling.original_max_position_embeddings is not None
            and scaling.original_max_position_embeddings != max_position_embeddings
        ):
            notes.append(
                "original_max_position_embeddings ignored: HF's dynamic NTK uses max_position_embeddings as the "
                "original length"
            )
        if context is None or (original is not None and context <= original):
            notes.append("no growth: context not above the original length" if context else "no growth: no context")
            return _done(theta.copy(), regimes=("unchanged",) * half, factor=s, original_context=original,
                         notes=tuple(notes))
        if original is None:
            raise ConfigError(
                "max_position_embeddings", "dynamic scaling with a context needs the original length (or "
                "original_max_position_embeddings)"
            )
        new_base = dynamic_ntk_base(b, s, d, context, original)
        inv = 1.0 / (new_base**exponent)
        notes.append(f"context {context} > original {original}: base grown")
        return _done(inv, regimes=_scaled_or_unchanged(inv), factor=s, base=new_base, original_context=original,
                     notes=tuple(notes))

    if rope_type == "yarn":
        s = float(scaling.factor)  # type: ignore[arg-type]
        notes = []
        if scaling.original_max_position_embeddings is not None:
            original = int(scaling.original_max_position_embeddings)
            if max_position_embeddings is not None:
                implicit = max_position_embeddings / original
                if implicit != 1.0 and implicit != s:
                    notes.append(
                        f"factor {s:g} differs from max_position_embeddings/original = {implicit:g}; the explicit "
                        "factor is used (HF v4.5x/v5)"
                    )
        else:
            original = int(max_position_embeddings)  # type: ignore[arg-type]
            notes.append("original length from max_position_embeddings")
        fast, slow = _yarn_betas(scaling)
        truncate = True if scaling.truncate is None else bool(scaling.truncate)
        low, high = yarn_correction_range(fast, slow, d, b, original, truncate)
        if low == high:
            high += 0.001  # HF: prevent singularity
        ramp = np.clip((np.arange(half, dtype=np.float64) - low) / (high - low), 0.0, 1.0)
        extrapolation = 1.0 - ramp
        pos_freqs = b**exponent
        inv = (1.0 / (s * pos_freqs)) * (1.0 - extrapolation) + (1.0 / pos_freqs) * extrapolation
        regimes = tuple("extrapolated" if r == 0.0 else "interpolated" if r == 1.0 else "blended" for r in ramp)
        attention = yarn_attention_factor(
            s, mscale=scaling.mscale, mscale_all_dim=scaling.mscale_all_dim, attention_factor=scaling.attention_factor
        )
        if scaling.attention_factor is not None:
            notes.append("attention factor given explicitly")
        elif scaling.mscale and scaling.mscale_all_dim:
            notes.append("attention factor get_mscale(s, mscale) / get_mscale(s, mscale_all_dim) (DeepSeek)")
        else:
            notes.append("attention factor 0.1 ln(s) + 1")
        return _done(inv, regimes=regimes, factor=s, original_context=original, attention_scaling=attention,
                     correction_range=(float(low), float(high)), ramp=ramp, notes=tuple(notes))

    if rope_type == "llama3":
        s = float(scaling.factor)  # type: ignore[arg-type]
        low_ff, high_ff, original = _llama3_params(scaling)
        low_ff, high_ff = float(low_ff), float(high_ff)
        notes = [
            f"{key} defaulted to {LLAMA3_DEFAULTS[key]}"
            for key in LLAMA3_DEFAULTS
            if getattr(scaling, key) is None
        ]
        low_freq_wavelen = original / low_ff
        high_freq_wavelen = original / high_ff
        wavelen = 2.0 * math.pi / theta
        divided = wavelen > low_freq_wavelen
        unchanged = wavelen < high_freq_wavelen
        medium = ~divided & ~unchanged
        smooth = (original / wavelen - low_ff) / (high_ff - low_ff)
        inv = np.where(divided, theta / s, theta)
        inv = np.where(medium, (1.0 - smooth) * inv / s + smooth * inv, inv)
        regimes = tuple("divided" if dv else "unchanged" if un else "smoothed" for dv, un in zip(divided, unchanged))
        ramp = np.where(divided, 1.0, np.where(unchanged, 0.0, 1.0 - smooth))
        return _done(inv, regimes=regimes, factor=s, original_context=int(original), ramp=ramp, notes=tuple(notes))

    # longrope
    notes = []
    if scaling.original_max_position_embeddings is not None:
        original = int(scaling.original_max_position_embeddings)
    else:
        original = int(max_position_embeddings)  # type: ignore[arg-type]
        notes.append("original length from max_position_embeddings")
    if scaling.factor is not None:
        f = float(scaling.factor)
    elif max_position_embeddings is not None:
        f = max_position_embeddings / original
    else:  # only reachable with an explicit attention_factor (validate() guarantees it)
        f = None
    if scaling.attention_factor is not None:
        attention = float(scaling.attention_factor)
        notes.append("attention factor given explicitly")
    else:
        attention = longrope_attention_factor(f, original)  # type: ignore[arg-type]
    use_long = context is not None and context > original
    which = "long" if use_long else "short"
    if context is None:
        notes.append("short factors: no context given")
    else:
        notes.append(f"{which} factors: context {context} {'>' if use_long else '<='} original {original}")
    ext = np.asarray(scaling.long_factor if use_long else scaling.short_factor, dtype=np.float64)
    inv = 1.0 / (ext * b**exponent)
    return _done(inv, regimes=(which,) * half, factor=f, original_context=original, attention_scaling=attention,
                 longrope_factors=which, short_factor=tuple(scaling.short_factor), long_factor=tuple(scaling.long_factor),
                 notes=tuple(notes))
