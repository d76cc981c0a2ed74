"""Rotary position embedding (Su et al. 2021; [Fleetwood], [Common-PE] and [EulerBlind])."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, ClassVar, Mapping

import numpy as np

from pecli.errors import ConfigError, PecliError
from pecli.params import Parameter, dataclass_parameters, field_values, param
from pecli.schemes.base import MAX_WIDTH, Capability, Scheme, check_apply_input, factored_score
from pecli.schemes.frequencies import (DEFAULT_BASE, FrequencyPairs, check_float32_base, check_given_frequencies,
                                      float32_base_problem, phasor_chunks, unit_phasors)
from pecli.schemes.parts import Part, row_part, whole_part
from pecli.schemes.rotary_layout import (
    layout_cache, pair_components, pair_slices, reference_rotations, rotate_pairs,
)
from pecli.schemes.rotary_parts import rotary_parts, shares_tables
from pecli.schemes.scaling.compute import compute_inv_freq
from pecli.schemes.scaling.keys import SCALING_GROUP
from pecli.schemes.scaling.record import ScaledFrequencies
from pecli.schemes.scaling.registry import SCALINGS, scaling_keys, scaling_type, shared_scaling_keys
from pecli.schemes.scaling.value import RopeScaling
from pecli.schemes.xpos import xpos_factors, xpos_zeta


#: :meth:`RopeScheme.parameters` of each class, with the records of :data:`SCALINGS` they were made from.
_PARAMETERS: dict[type, tuple[tuple[Any, ...], dict[str, Parameter]]] = {}

#: rope parameters added after the scaling keys were: listed after them, so that the JSON output keeps
#: the order it has always had.
LATER_KEYS = ("inv_freq", "xpos", "direction")


@dataclass(frozen=True)
class RopeScheme(Scheme):
    """Rotate each pair of query/key components by an angle proportional to the position.

    Notes
    -----
    With ``r = int(dim · partial_rotary_factor)`` rotated components and ``θ_i = base^(−2i/r)``,
    i = 0 … r/2 − 1 (the exponent runs over the rotated dimension, as HuggingFace's
    ``_compute_default_rope_parameters``), position p rotates pair i by the angle ``p θ_i``::

        (a, b) ↦ (a cos pθ_i − b sin pθ_i,  b cos pθ_i + a sin pθ_i)

    Which components form pair i depends on ``layout``:

    - ``interleaved`` (GPT-J, Meta's Llama code, [Fleetwood]): components (2i, 2i+1); the cos/sin caches
      repeat each angle twice adjacently;
    - ``half`` (GPT-NeoX, HuggingFace ``rotate_half``, [Common-PE]): components (i, i + r/2); the caches
      are ``concat(cos θ, cos θ)``.

    Components r … dim − 1 are not rotated. Angles ``p θ_i`` are formed in float64.

    ``direction`` says which way the pairs turn: ``positive`` by +pθ_i as above (every model but one);
    ``negative`` by −pθ_i, ``(a, b) ↦ (a cos pθ_i + b sin pθ_i,  b cos pθ_i − a sin pθ_i)``. nanochat turns
    that way: its ``rotate_half`` is reversed, ``cat(x2, −x1)`` (transformers 5.24.0,
    ``models/nanochat/modeling_nanochat.py:167-171``; nanochat's own ``apply_rotary_emb``,
    ``y1 = x1 cos + x2 sin``, in ``nanochat/gpt.py``), and mlx-lm 0.32.2 negates its frequencies
    (``mlx_lm/models/nanochat.py:90-93``) for ``mx.fast.rope`` (``:55-62``). The frequencies θ_i stay
    positive (wavelengths and the analyses of cos Δθ do not change); the angles, hence the sin cache and
    every rotation, carry the sign: pecli's caches are those of the angle the pair turns by (transformers'
    nanochat keeps the caches of +pθ and reverses ``rotate_half`` instead: the same rotation).

    Context-extension scalings (``scaling``: linear, ntk, dynamic, yarn, llama3, longrope) replace
    ``θ_i`` and may set an attention scaling that multiplies both cos and sin, exactly as HuggingFace's
    ``modeling_rope_utils`` does; see :mod:`pecli.schemes.scaling` for each rule and its defaults.
    A ``rope_scaling`` (or ``rope_parameters``) block as models ship it in ``config.json`` is accepted
    in place of the separate keys. p-RoPE (``rope_fraction`` p < 1, Barbero et al. 2024, "Round and
    round we go! What makes Rotary Positional Encodings useful?") keeps the ``floor(p · r/2)``
    highest frequencies and sets the others to 0, so those pairs are left unrotated.

    Since ``R_m^T R_n = R_{n−m}``, ``(R_m q)·(R_n k)`` depends only on n − m. :meth:`encode` gives the
    image of the reference vector that is (1, 0) on every pair and 0 on the unrotated tail, i.e. the
    pairs ``(cos pθ_i, sin pθ_i)`` in the chosen layout, so that ``E_m · E_n = Σ_i cos((m − n) θ_i)`` as
    for the sinusoidal encoding. :meth:`score` is ``(R_m u) · (R_n u)`` for the all-ones vector u, the
    choice of RoFormer's long-term-decay argument (section 3.4.3): ``2 Σ_i cos((n − m) θ_i)`` times the
    square of the attention scaling, plus the number of unrotated components — computed through the
    rotations themselves, so that the relativity analysis tests them.

    References
    ----------
    Su et al., "RoFormer: Enhanced Transformer with Rotary Position Embedding", 2021.
    """

    name: ClassVar[str] = "rope"
    kind: ClassVar[str] = "rotary"
    real_positions: ClassVar[bool] = True
    extra_capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.CONTEXT_EXTENSION})
    summary: ClassVar[str] = "rotate pairs of q/k components by p·base^(-2i/d) (Su et al. 2021)"
    aliases: ClassVar[dict[str, str]] = {
        "rope_theta": "base",
        "head_dim": "dim",
        "rope_type": "scaling",
        "original_max_position_embeddings": "original_max_position",
        "rope_parameters": "rope_scaling",  # transformers v5's name for the same block
    }
    block_keys: ClassVar[tuple[str, ...]] = ("rope_scaling", "rope_parameters")
    block_model_keys: ClassVar[tuple[str, ...]] = ("base", "partial_rotary_factor")
    length_defaults: ClassVar[tuple[str, ...]] = ("context",)
    main_key: ClassVar[str] = "encoding"

    dim: int = param(128, "head dimension (even)", minimum=2, maximum=MAX_WIDTH)
    base: float = param(10000.0, "base of the frequencies (rope_theta)", exclusive_minimum=0)
    layout: str = param(
        "half", "half: rotate_half pairs (i, i+d/2) as HF/GPT-NeoX; interleaved: pairs (2i, 2i+1) as GPT-J/Meta",
        choices=("half", "interleaved"),
    )
    partial_rotary_factor: float = param(
        1.0, "fraction of each head's components that rotate (the first ones)", exclusive_minimum=0, maximum=1
    )
    rope_fraction: float = param(
        1.0, "p-RoPE: fraction of the frequency pairs that rotate (the highest frequencies)", minimum=0, maximum=1
    )
    #: The context-extension scaling: its type and keys are the parameters ``scaling``, ``factor``, …
    rope_scaling: RopeScaling = field(default=RopeScaling())
    max_position_embeddings: int | None = param(None, "the model's longest context length", minimum=1, maximum=1 << 40,
                                                  group=SCALING_GROUP)
    context: int | None = param(
        None, "current sequence length, for dynamic, longrope and xPos's centre L//2", minimum=1, default_text="the length",
        group=SCALING_GROUP,
    )
    given_inv_freq: tuple[float, ...] | None = param(
        None, "the inverse frequency of each rotated pair (radians per position) in place of base^(-2i/r): "
        "r/2 numbers, or an .npy or text file of them", exclusive_minimum=0, from_file=True, key="inv_freq",
        default_text="base^(-2i/r)",
    )
    xpos: float | None = param(
        None, "xPos scale base B (Sun et al. 2022): q times ζ_i^((p − L//2)/B), k divided by it, "
        "ζ_i = (2i + 0.4r)/(1.4r)", exclusive_minimum=0, default_text="off",
    )
    direction: str = param(
        "positive", "which way the pairs turn: positive, by +pθ (every model but nanochat); negative, by −pθ "
        "(nanochat's reversed rotate_half)", choices=("positive", "negative"),
    )

    # -- parameters: the scheme's own and the scaling's, from the registry's records -----------------
    @classmethod
    def parameters(cls) -> dict[str, Parameter]:
        """The rope parameters, with ``scaling`` and every scaling key once (pecli spelling).

        Order (that of :meth:`params` and of the JSON output): the fields', where ``rope_scaling``
        stands for ``scaling`` and the keys most scaling types share (factor, original length); the
        keys of fewer types, then :data:`LATER_KEYS`, come last. Made once per registry of scalings (a run
        asks for them a dozen times: the options, the configuration, the JSON output).
        """
        registry = tuple(SCALINGS.items())
        made = _PARAMETERS.get(cls)
        if made is None or made[0] != registry:
            made = _PARAMETERS[cls] = (registry, cls._made_parameters())
        return dict(made[1])

    @classmethod
    def _made_parameters(cls) -> dict[str, Parameter]:
        own = dataclass_parameters(cls)
        keys = {
            _attribute(name): dataclasses.replace(key, name=_attribute(name))
            for name, key in scaling_keys().items()
        }
        shared = [_attribute(name) for name in shared_scaling_keys()]
        types = tuple(SCALINGS)
        by_field = {parameter.attribute or name: parameter for name, parameter in own.items()}
        out: dict[str, Parameter] = {}
        for name in (f.name for f in dataclasses.fields(cls)):
            if name == "rope_scaling":
                out["scaling"] = Parameter(
                    "scaling", str, "none", "context extension of the frequencies (HF rope_type)", choices=types,
                    group=SCALING_GROUP,
                )
                out.update({key: keys[key] for key in shared})
            elif name in by_field and by_field[name].name not in LATER_KEYS:
                out[by_field[name].name] = by_field[name]
        later = {parameter.name: parameter for parameter in by_field.values() if parameter.name in LATER_KEYS}
        return {**out, **{key: parameter for key, parameter in keys.items() if key not in out}, **later}

    @classmethod
    def from_params(cls, values: dict[str, Any]) -> RopeScheme:
        """The scheme from parameter values: ``scaling`` and the scaling keys become :attr:`rope_scaling`."""
        values = dict(values)
        rope_type = values.pop("scaling", None) or "none"
        known = scaling_keys()
        keys = {_key_name(name): values.pop(name) for name in list(values) if _key_name(name) in known}
        return cls(**field_values(dataclass_parameters(cls), values), rope_scaling=RopeScaling(rope_type, **keys))

    @property
    def scaling(self) -> str:
        """The scaling type's name (``none`` without one)."""
        return self.rope_scaling.rope_type

    def __getattr__(self, name: str) -> Any:
        # The scaling keys read as attributes in pecli spelling (scheme.factor, scheme.original_max_position),
        # as the parameters name them; only reached for names that are not attributes.
        if _key_name(name) in scaling_keys():
            return getattr(self.rope_scaling, _key_name(name))
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @classmethod
    def defaults_for_length(cls, length: int) -> dict[str, Any]:
        return {"context": length}

    @classmethod
    def expand_block(cls, key: str, block: Any) -> dict[str, Any]:
        """The fields given by a HF ``rope_scaling`` / ``rope_parameters`` block."""
        if block is None:
            return {}
        if not isinstance(block, Mapping):
            raise ConfigError(key, f"must be a mapping as in config.json, got {block!r}")
        out: dict[str, Any] = {}
        for hf_key, name in (("rope_theta", "base"), ("partial_rotary_factor", "partial_rotary_factor")):
            if block.get(hf_key) is not None:
                out[name] = block[hf_key]
        scaling = RopeScaling.from_hf(block)
        out["scaling"] = scaling.rope_type
        out.update({_attribute(key): value for key, value in scaling.given})
        return out

    @classmethod
    def block_keys_of(cls, variant: str) -> tuple[str, ...]:
        """The keys scaling type ``variant`` takes, in pecli's spelling (none for an unknown type)."""
        try:
            record = scaling_type(variant)
        except ConfigError:
            return ()  # the scaling's own check names it
        known = _BLOCK_KEYS.get(variant)
        if known is None or known[0] is not record:  # a building scheme asks this of every type
            known = _BLOCK_KEYS[variant] = (record, tuple(_attribute(key) for key in record.key_names))
        return known[1]

    def __post_init__(self) -> None:
        self._require_even("dim", self.dim)
        rotated = self.rotated_dim
        if rotated < 2 or rotated % 2:
            raise ConfigError(
                "partial_rotary_factor",
                f"int(dim * factor) = {rotated} rotated components; it must be even and at least 2",
            )
        if self.given_inv_freq is None:
            check_float32_base(self.base)
        else:
            check_given_frequencies(self.given_inv_freq, (rotated // 2,), f"rope with {rotated} rotated components")
            if self.base != DEFAULT_BASE:
                raise ConfigError("inv_freq", f"replaces the ladder of base {self.base:g}; give the frequencies or the base, not both")
            if self.rope_fraction < 1:
                raise ConfigError("rope_fraction", "keeps the highest frequencies of the base's ladder; with --inv-freq "
                                  "give the frequencies each pair should have")
        self.frequencies  # validates the scaling now, not at first use

    @property
    def pretraining_length(self) -> int | None:
        """The pre-training context a scaling starts from (its effective original length), or None."""
        if not self.rope_scaling.record.scales:
            return None
        return self.frequencies.original_context

    @property
    def model_length(self) -> int | None:
        return self.max_position_embeddings

    @property
    def training_length_key(self) -> str | None:
        pretraining = self.pretraining_length
        if pretraining is None:
            return None if self.max_position_embeddings is None else "max_position_embeddings"
        original = self.rope_scaling.original_max_position_embeddings
        if original == pretraining and (not self.rope_scaling.record.original_from_model or self.max_position_embeddings is None):
            return "original_max_position_embeddings"
        return "max_position_embeddings"

    @property
    def context_length(self) -> int | None:
        return self.context

    @property
    def reads_context(self) -> bool:
        return SCALINGS[self.scaling].reads_context or self.xpos is not None

    @property
    def shift_isometric(self) -> bool:
        """True, unless xPos scales each position's vector by a factor of its own."""
        return self.xpos is None

    @property
    def keys_differ(self) -> bool:
        return self.xpos is not None

    def frequency_pairs(self) -> FrequencyPairs:
        first, second = self.pair_indices()
        return FrequencyPairs(
            self.inv_freq, self.original_inv_freq, first, second, False, self.rotated_dim,
            float(self.frequencies.base), self.attention_scaling, self.rotating_pairs,
            self.frequencies if self.rope_scaling.record.scales else None,
            magnitudes=None if self.xpos is None else self.xpos_factors,
        )

    def without_extension(self) -> RopeScheme:
        """The same rotary embedding without its context-extension scaling: what pre-training saw."""
        if not self.rope_scaling.record.scales:
            return self
        return dataclasses.replace(self, rope_scaling=RopeScaling(), max_position_embeddings=None)

    @cached_property
    def frequencies(self) -> ScaledFrequencies:
        """The scaled inverse frequencies with what the scaling did to each pair (before p-RoPE)."""
        try:
            with np.errstate(over="raise", invalid="raise"):
                frequencies = compute_inv_freq(
                    base=self.base,
                    rotated_dim=self.rotated_dim,
                    scaling=self.rope_scaling,
                    max_position_embeddings=self.max_position_embeddings,
                    context=self.context,
                    ladder=self.given_inv_freq,
                )
        except (OverflowError, FloatingPointError):
            frequencies = None
        if frequencies is None or not np.all(np.isfinite(frequencies.inv_freq)) or not np.isfinite(frequencies.attention_scaling):
            raise ConfigError("factor", f"base {self.base:g} with factor {self.rope_scaling.factor} overflows float64; use smaller values")
        grown = float(frequencies.base)
        if self.given_inv_freq is None and grown != self.base and self.rope_scaling.record.in_transformers and \
                (problem := float32_base_problem(grown)) is not None:
            # transformers grows the base in Python floats (dynamic NTK), then raises it in float32 as any base
            raise ConfigError("factor", f"base {self.base:g} with {self.scaling} factor {self.rope_scaling.factor:g} "
                              f"grows to {grown:g}, {problem}")
        return frequencies

    # -- frequencies ----------------------------------------------------------------------------
    @property
    def width(self) -> int:
        return self.dim

    @property
    def rotated_dim(self) -> int:
        """``r = int(dim · partial_rotary_factor)``, the number of rotated components."""
        return int(self.dim * self.partial_rotary_factor)

    @property
    def rotating_pairs(self) -> int:
        """How many pairs rotate: ``floor(rope_fraction · r/2)``, the highest frequencies (p-RoPE)."""
        return int(np.floor(self.rope_fraction * (self.rotated_dim // 2) + 1e-9))

    @property
    def inv_freq(self) -> np.ndarray:
        """The frequencies in use, float64, shape ``(r/2,)``: ``θ_i = base^(−2i/r)`` without scaling,
        the scaled values with one, and 0 for the pairs p-RoPE leaves unrotated."""
        inv_freq = np.array(self.frequencies.inv_freq, dtype=np.float64)
        inv_freq[self.rotating_pairs :] = 0.0
        return inv_freq

    @property
    def original_inv_freq(self) -> np.ndarray:
        """``θ_i = base^(−2i/r)`` with the configured base (or the given ``inv_freq``), before any scaling
        or p-RoPE."""
        return np.array(self.frequencies.original_inv_freq, dtype=np.float64)

    @property
    def xpos_zeta(self) -> np.ndarray:
        """xPos's per-pair ratio ``ζ_i`` (:func:`~pecli.schemes.xpos.xpos_zeta`)."""
        return xpos_zeta(self.rotated_dim)

    def xpos_factors(self, positions: Any, *, keys: bool = False) -> np.ndarray:
        """The (N, r/2) xPos factors ``ζ_i^((p − L//2)/B)`` of the queries (``keys``: their inverses), ``L``
        the sequence length (:attr:`context`), ``B`` the scale base :attr:`xpos`
        (:func:`~pecli.schemes.xpos.xpos_factors`)."""
        if self.xpos is None:
            raise PecliError("xpos_factors: this rope has no xPos (give xpos)")
        return xpos_factors(self.positions_of(positions), self.rotated_dim, self.context, self.xpos, keys=keys)

    @property
    def attention_scaling(self) -> float:
        """Factor applied to both cos and sin (1 unless the scaling sets one); logits scale by its square."""
        return float(self.frequencies.attention_scaling)

    @property
    def sign(self) -> float:
        """+1 or −1: the way the pairs turn (:attr:`direction`)."""
        return -1.0 if self.direction == "negative" else 1.0

    def angles(self, positions: Any) -> np.ndarray:
        """The (L, r/2) angles ``±p θ_i`` the pairs turn by (the sign: :attr:`direction`), float64."""
        angles = np.outer(self.positions_of(positions).astype(np.float64), self.inv_freq)
        if self.sign < 0:
            np.negative(angles, out=angles)
        return angles

    def pair_indices(self) -> tuple[np.ndarray, np.ndarray]:
        """Component indices (first, second) of each rotated pair in the chosen layout."""
        return pair_components(self.rotated_dim, self.layout)

    def cos_sin(self, positions: Any) -> tuple[np.ndarray, np.ndarray]:
        """The (L, r) cos and sin caches in the framework convention of the layout.

        ``half``: ``concat(cos θ, cos θ)`` (HuggingFace); ``interleaved``: each angle repeated twice
        adjacently (GPT-J, Meta). Both include :attr:`attention_scaling`.
        """
        angles = layout_cache(self.angles(positions), self.layout)
        return np.cos(angles) * self.attention_scaling, np.sin(angles) * self.attention_scaling

    # -- the interface --------------------------------------------------------------------------
    def apply(self, x: np.ndarray, positions: Any, *, keys: bool = False) -> np.ndarray:
        """Rotate the last axis of ``x``; positions run along its second-to-last axis.

        With xPos the rotated components are then multiplied by :meth:`xpos_factors`: those of the
        queries, or (``keys``) their inverses, as x-transformers and rotary-embedding-torch scale k by
        ``scale ** -1``. Without xPos queries and keys turn alike.
        """
        positions = self.positions_of(positions)
        x = np.asarray(x, dtype=np.float64)
        check_apply_input(x, positions, self.dim)
        angles = self.angles(positions)
        cos, sin = np.cos(angles) * self.attention_scaling, np.sin(angles) * self.attention_scaling
        if self.xpos is None:
            return rotate_pairs(x, cos, sin, *self.pair_indices())
        factors = self.xpos_factors(positions, keys=keys)
        with np.errstate(over="ignore", invalid="ignore"):  # factors past float64's range: ±inf, NaN, reported by the checks
            return rotate_pairs(x, cos * factors, sin * factors, *self.pair_indices())

    def reference_vector(self) -> np.ndarray:
        """(1, 0) on every rotated pair, 0 on the unrotated tail."""
        vector = np.zeros(self.dim)
        vector[self.pair_indices()[0]] = 1.0
        return vector

    def encode(self, positions: Any) -> np.ndarray:
        # The rotated reference vector, written directly: (cos pθ_i, sin pθ_i) at each pair's components
        # (times the queries' xPos factors).
        positions = self.positions_of(positions)
        out = reference_rotations(self.angles(positions), self.dim, self.layout, self.attention_scaling)
        if self.xpos is not None:
            with np.errstate(over="ignore", invalid="ignore"):
                out[:, : self.rotated_dim] *= layout_cache(self.xpos_factors(positions), self.layout)
        return out

    def score_factors(self, positions: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(R_p u, R_p u)`` for the all-ones vector u (see the class notes); with xPos the query's and the
        key's scaling differ."""
        positions = self.positions_of(positions)
        ones = np.ones((positions.size, self.dim))
        rotated = self.apply(ones, positions)
        return rotated, (rotated if self.xpos is None else self.apply(ones, positions, keys=True))

    def score_factors_of_rows(self, positions: Any, rows: np.ndarray, out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``R_p u`` from the encoding's rows ``R_p e`` (e: (1, 0) on every pair): u = (1, 1) on a pair,
        so ``R_p u`` is ``(c − s, c + s)`` where the row holds ``(c, s)`` (the scaled cos and sin), and 1
        on the unrotated tail — the values :meth:`apply` computes, bit for bit (``1·c − 1·s = c − s``),
        written into ``out`` when given. With xPos the rows carry the queries' factors and the keys'
        differ: computed as :meth:`score_factors`."""
        if self.xpos is not None:
            return self.score_factors(positions)
        first, second = pair_slices(self.rotated_dim, self.layout)
        if out is None:
            rotated = np.ones((rows.shape[0], self.dim))
        else:
            rotated = out
            rotated[:, self.rotated_dim :] = 1.0
        cos, sin = rows[:, first], rows[:, second]
        np.subtract(cos, sin, out=rotated[:, first])
        np.add(sin, cos, out=rotated[:, second])
        return rotated, rotated

    def encoding_identity(self) -> Any:
        """What :meth:`encode` reads: the rotated width and layout, θ_i and the attention scaling (not
        ``context`` or ``max_position_embeddings`` themselves, only what they do to θ_i)."""
        xpos = None if self.xpos is None else (self.xpos, self.context)  # xPos's centre L//2 reads the context
        return (type(self), self.dim, self.rotated_dim, self.layout, self.inv_freq.tobytes(), self.attention_scaling, xpos,
                self.direction)

    def score(self, m: Any, n: Any) -> np.ndarray:
        return factored_score(self, m, n)

    def arrays(self, positions: Any) -> dict[str, np.ndarray]:
        positions = self.positions_of(positions)
        cos, sin = self.cos_sin(positions)
        out = {
            "encoding": self.encode(positions),
            "cos": cos,
            "sin": sin,
            "inv_freq": self.inv_freq,
            "positions": positions,
        }
        if self.xpos is not None:
            out["xpos_scale"] = layout_cache(self.xpos_factors(positions), self.layout)
        return out

    def shared_bytes(self, n_positions: int, itemsize: int, wanted: Any) -> int:
        """The (L, r/2) cos and sin tables :meth:`parts` keeps when several of encoding, cos, sin are wanted."""
        return n_positions * self.rotated_dim * itemsize if shares_tables(wanted) else 0

    def parts(self, positions: Any, *, exact: bool = True, dtype: str | None = None, wanted: Any = None) -> list[Part]:
        """``encoding``, ``cos``, ``sin`` row by row from the (n, r/2) phasors ``exp(i pθ_j)`` (see
        :func:`~pecli.schemes.rotary_parts.rotary_parts`), then ``inv_freq`` and ``positions``."""
        positions = self.positions_of(positions)
        trigonometric = rotary_parts(positions, self.phasors(exact=exact), self.dim, self.rotated_dim, self.layout, dtype, wanted,
                                     self.phasor_chunks(exact=exact))
        if self.xpos is None:
            return [*trigonometric, whole_part("inv_freq", self.inv_freq), whole_part("positions", positions)]
        # The encoding is the queries' image of the reference vector: the rotation, then the xPos factors.
        encoding = row_part("encoding", positions, self.encode if exact else self.xpos_rows, (self.dim,), main=True)
        return [encoding, *trigonometric[1:], row_part("xpos_scale", positions, self.xpos_scale, (self.rotated_dim,)),
                whole_part("inv_freq", self.inv_freq), whole_part("positions", positions)]

    def xpos_rows(self, positions: Any) -> np.ndarray:
        """The (N, d) encoding with xPos as ``pecli encode`` writes it and ``pecli.encode`` returns it: each
        pair's (cos, sin) from the angle addition of :func:`unit_phasors` (float64, attention scaling
        included) times the queries' xPos factors, one float64 product per value (cast once after)."""
        positions = self.positions_of(positions)
        z = self.phasors(exact=False)(positions)
        first, second = pair_slices(self.rotated_dim, self.layout)
        out = np.zeros((positions.size, self.dim))
        out[:, first], out[:, second] = z.real, z.imag
        with np.errstate(over="ignore", invalid="ignore"):
            out[:, : self.rotated_dim] *= self.xpos_scale(positions)
        return out

    def xpos_scale(self, positions: Any) -> np.ndarray:
        """The (N, r) xPos factors of the queries in the layout's cache order (keys: their inverses)."""
        return layout_cache(self.xpos_factors(positions), self.layout)

    def phasors(self, *, exact: bool = True) -> Callable[[np.ndarray], np.ndarray]:
        """A function giving the (n, r/2) phasors ``s·exp(i pθ_j)`` of position ids (s: the attention
        scaling): exact cos and sin of the float64 angles, or with ``exact=False`` the angle addition of
        :func:`unit_phasors` (within a few float64 ulps)."""
        inv_freq, scaling, negative = self.inv_freq, self.attention_scaling, self.sign < 0

        def phasors(ids: np.ndarray) -> np.ndarray:
            z = unit_phasors(ids, inv_freq, exact=exact)
            if negative:  # exp(−i pθ): the same cos, sin negated, bit for bit
                np.conjugate(z, out=z)
            if scaling != 1.0:
                z.view(np.float64)[...] *= scaling
            return z

        return phasors

    def phasor_chunks(self, *, exact: bool = True) -> Callable[[np.ndarray], Callable[[int, int], np.ndarray]]:
        """:meth:`phasors` of ids by chunks: ``of(ids)(start, stop)`` are the phasors of
        ``ids[start:stop]``, the same values (:func:`~pecli.schemes.frequencies.phasor_chunks`)."""
        inv_freq, scaling, negative = self.inv_freq, self.attention_scaling, self.sign < 0

        def of(ids: np.ndarray) -> Callable[[int, int], np.ndarray]:
            unscaled = phasor_chunks(ids, inv_freq, exact=exact)
            if scaling == 1.0 and not negative:
                return unscaled

            def chunk(start: int, stop: int) -> np.ndarray:
                z = unscaled(start, stop)
                if negative:
                    np.conjugate(z, out=z)
                if scaling != 1.0:
                    z.view(np.float64)[...] *= scaling
                return z

            return chunk

        return of

    @property
    def rows_ahead(self) -> bool:
        """Whether ``pecli encode`` computes the next block while it summarises and writes one: rows made
        in the output dtype (not with xPos, whose encoding is :meth:`encode`'s float64 rows)."""
        return self.xpos is None

    def encoded(self, positions: Any, *, dtype: str | None = None) -> Any:
        """The ``cos`` and ``sin`` caches (L, r) in ``dtype``, written block by block from the phasors of
        the angle addition of :func:`unit_phasors` (``pecli encode``'s values, in every dtype: float64
        within ``2⁻⁵³·|p·θ_i| + 2⁻⁵²`` of cos and sin of the exact angles), cast once: within half a
        unit in the last place at 1.0 of the dtype (float32: 2⁻²⁴) of the float64 values
        (:mod:`pecli.schemes.encoded`): a :class:`~pecli.schemes.encoded.RotaryEncoding` (with xPos, its
        ``xpos_scale`` too)."""
        from pecli.schemes.encoded import RotaryEncoding, rotary_caches

        positions = self.positions_of(positions)
        cos, sin = rotary_caches(positions, self.phasors(exact=False), self.rotated_dim, self.layout, dtype)
        scale = None if self.xpos is None else self.xpos_scale(positions).astype(cos.dtype)
        return RotaryEncoding(self, cos, sin, self.inv_freq, positions, xpos_scale=scale)


def _attribute(key: str) -> str:
    """A scaling key's name among the rope parameters (``original_max_position_embeddings`` →
    ``original_max_position``): pecli's spelling, the one :attr:`RopeScheme.aliases` maps to."""
    return RopeScheme.aliases.get(key, key)


#: The rope parameters each scaling type takes (:meth:`RopeScheme.block_keys_of`), by the name asked, with its record.
_BLOCK_KEYS: dict[str, tuple[Any, tuple[str, ...]]] = {}
#: pecli's spelling → HF name of every scaling key, with the records of :data:`SCALINGS` it was made from.
_KEY_NAMES: list[tuple[tuple, dict[str, str]]] = []


def _key_name(name: str) -> str:
    """The HF name of the scaling key that the rope parameter ``name`` is (``name`` if none is)."""
    records = tuple(SCALINGS.items())
    if not _KEY_NAMES or _KEY_NAMES[0][0] != records:  # a type registered later: made anew
        _KEY_NAMES[:] = [(records, {_attribute(key): key for key in scaling_keys()})]
    return _KEY_NAMES[0][1].get(name, name)
