"""What every positional-encoding scheme answers, whatever its family.

A scheme is a frozen dataclass whose fields are its parameters (declared with :func:`param`, so that
the configuration layer can coerce and validate them by name). Three kinds share one interface:

``additive``
    a vector per position, added to the token embedding (integer, binary, sinusoidal, learned);
``rotary``
    a rotation per position applied to queries and keys (rope and its variants);
``bias``
    a term added to the attention logits that depends on the pair of positions (alibi, t5, relative).

Every scheme provides :meth:`Scheme.score`, the position-only part of the attention logit, which is
the common ground for the relativity and dot-product-vs-distance analyses, and :meth:`Scheme.arrays`,
the named arrays that ``pecli encode`` writes.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterator

import numpy as np

from pecli.errors import ConfigError, PecliError, PositionError
from pecli.params import Parameter, dataclass_parameters

KINDS = ("additive", "rotary", "bias")

#: Widest vector any scheme is asked for (2^20 components: no model has a wider head or embedding).
MAX_WIDTH = 1 << 20
#: Most positions a length-like parameter may name (2^32, as the sequence length).
MAX_LENGTH = 1 << 32

#: Seed of the fixed reference vectors used by the position-only scores of rotary and relative schemes.
REFERENCE_SEED = 20240601


class Capability(str, enum.Enum):
    """What a scheme can be asked for; analyses, plots and commands ask for these, never for a name.

    Each value's text completes the sentence "a scheme that …", which is how a command refusing a
    scheme says what it lacks.
    """

    VECTORS = "has per-position vectors"
    FREQUENCIES = "has frequency pairs"
    ROTARY = "rotates queries and keys"
    BIAS = "adds a bias to the attention logits"
    CONTEXT_EXTENSION = "can carry a context-extension scaling"


#: The capabilities each kind has by construction; a scheme adds its own (sinusoidal: frequencies).
KIND_CAPABILITIES: dict[str, frozenset[Capability]] = {
    "additive": frozenset({Capability.VECTORS}),
    "rotary": frozenset({Capability.VECTORS, Capability.ROTARY, Capability.FREQUENCIES}),
    "bias": frozenset({Capability.BIAS}),
}


def geometric_inv_freq(dim: int, base: float) -> np.ndarray:
    """``θ_i = base^(−2i/dim)`` for ``i = 0 … dim/2 − 1``, float64: the frequencies of every sinusoid.

    The one place this formula is written (Vaswani et al. 2017, section 3.5; Su et al. 2021, eq. 15).
    """
    exponents = np.arange(0, dim, 2, dtype=np.float64) / dim
    return 1.0 / np.power(float(base), exponents)


#: Positions per anchor of the angle-addition tables of :func:`unit_phasors` (``exact=False``).
ANCHOR = 256


def unit_phasors(positions: np.ndarray, inv_freq: np.ndarray, *, sin_first: bool = False, exact: bool = True) -> np.ndarray:
    """``exp(i p θ_j)`` for every position p and frequency θ_j, complex128 of shape (N, len(inv_freq)).

    Viewed as float64, each complex number is the pair ``(cos pθ_j, sin pθ_j)`` in adjacent slots, or
    ``(sin pθ_j, cos pθ_j)`` with ``sin_first`` (the number ``i·conj(exp(i pθ_j))``).

    ``exact=True`` evaluates ``cos`` and ``sin`` of the float64 angle ``p·θ_j``: the values every
    scheme has always produced. ``exact=False`` uses the angle-addition formula
    ``exp(i(a + k)θ) = exp(i aθ) · exp(i kθ)`` with ``p = a + k``, ``a`` a multiple of :data:`ANCHOR`
    and ``0 <= k < ANCHOR``, so one complex multiply replaces two trigonometric evaluations; both
    factors are exact evaluations, the product is within a few float64 ulps (≈ 1e-15) of the exact
    value, far below the spacing of float32 and narrower dtypes, for which it is used. The value
    of each position depends on p alone, not on which other positions are computed with it.
    """
    positions = np.asarray(positions, dtype=np.int64)
    inv_freq = np.asarray(inv_freq, dtype=np.float64)
    if exact or positions.size == 0:
        out = np.empty((positions.size, inv_freq.size), dtype=np.complex128)
        angles = np.outer(positions.astype(np.float64), inv_freq)
        np.cos(angles, out=out.imag if sin_first else out.real)
        np.sin(angles, out=out.real if sin_first else out.imag)
        return out
    steps = _phasor_steps(inv_freq.tobytes(), sin_first)
    anchors_of = positions // ANCHOR
    first, last = int(anchors_of[0]), int(anchors_of[-1])
    consecutive = positions[-1] - positions[0] == positions.size - 1 and bool(np.all(np.diff(positions) == 1))
    anchor_ids = np.arange(first, last + 1) if consecutive else np.unique(anchors_of)
    angles = np.outer((anchor_ids * ANCHOR).astype(np.float64), inv_freq)
    anchors = np.cos(angles) + 1j * np.sin(angles)
    if sin_first:  # i·conj(z_a z_k) = conj(z_a) · (i·conj(z_k)), the steps' factor made once
        anchors = np.conj(anchors)
    if consecutive:
        grid = anchors[:, None, :] * steps[None, :, :]
        start = int(positions[0]) - first * ANCHOR
        return grid.reshape(-1, inv_freq.size)[start : start + positions.size]
    which = np.searchsorted(anchor_ids, anchors_of)
    return anchors[which] * steps[positions - anchors_of * ANCHOR]


@functools.lru_cache(maxsize=8)
def _phasor_steps(inv_freq: bytes, sin_first: bool) -> np.ndarray:
    """``exp(i kθ_j)`` for k = 0 … ANCHOR − 1 (``i·conj`` of it with ``sin_first``), read-only."""
    offsets = np.outer(np.arange(ANCHOR, dtype=np.float64), np.frombuffer(inv_freq, dtype=np.float64))
    steps = np.cos(offsets) + 1j * np.sin(offsets)
    steps = 1j * np.conj(steps) if sin_first else steps
    steps.setflags(write=False)
    return steps


def as_positions(positions: Any, rank: int = 1) -> np.ndarray:
    """Return ``positions`` as int64 ids: shape (N,) for rank 1, (N, rank) for positions on a grid.

    Raises
    ------
    PositionError
        If the positions are not integers, have the wrong shape or are negative.
    """
    array = np.asarray(positions)
    if array.ndim == 0:
        array = array.reshape(1)
    if rank == 1 and array.ndim != 1:
        raise PositionError(f"positions must be one-dimensional, got shape {array.shape}")
    if rank > 1 and (array.ndim != 2 or array.shape[1] != rank):
        raise PositionError(f"positions must have shape (N, {rank}), got shape {array.shape}")
    if array.dtype.kind == "f":
        if not np.all(np.isfinite(array)) or not np.all(array == np.round(array)):
            raise PositionError("positions must be whole numbers")
    elif array.dtype.kind not in "iub":
        raise PositionError(f"positions must be integers, got dtype {array.dtype}")
    if array.size and array.dtype.kind in "fu" and array.max() >= 2**62:
        raise PositionError(f"positions must be below 2**62, got {array.max()}")
    array = array.astype(np.int64)
    if array.size and array.min() < 0:
        raise PositionError(f"positions must be >= 0, got {int(array.min())}")
    return array


@dataclass(frozen=True)
class Positions:
    """Position ids: (N,) integers, or (N, rank) coordinates for schemes whose positions live on a grid.

    ``Positions.range(L)`` is 0 … L − 1 and is built only when its ids are asked for.
    """

    given: np.ndarray | None = None
    length: int = 0
    rank: int = 1

    @classmethod
    def range(cls, length: int, rank: int = 1) -> Positions:
        return cls(None, int(length), rank)

    @classmethod
    def of(cls, ids: Any, rank: int = 1) -> Positions:
        ids = as_positions(ids, rank)
        return cls(ids, int(ids.shape[0]), rank)

    @property
    def count(self) -> int:
        """Number of positions, known before any array is built (for memory estimates)."""
        return self.length

    @property
    def ids(self) -> np.ndarray:
        if self.given is not None:
            return self.given
        return np.arange(self.length, dtype=np.int64)


@dataclass(frozen=True)
class FrequencyPairs:
    """The frequency structure of a scheme with :attr:`Capability.FREQUENCIES`.

    Component ``first[i]`` and ``second[i]`` of the per-position vector hold pair i, which turns at
    ``inv_freq[i]`` radians per position: ``(sin pθ_i, cos pθ_i)`` when ``sin_first`` (the sinusoidal
    encoding), else ``(cos pθ_i, sin pθ_i)`` (rope's rotated reference vector).

    Attributes
    ----------
    inv_freq:
        θ_i in use, float64: scaled by a context extension, 0 for pairs that do not rotate (p-RoPE).
    original_inv_freq:
        ``base^(−2i/dim)`` with the configured base, before any scaling.
    dim:
        The ``d`` of ``θ_i = base^(−2i/d)`` (rope: the rotated dimension).
    base:
        The base in effect (NTK and dynamic scalings change it).
    attention_scaling:
        The factor both cos and sin are multiplied by (1 unless a scaling sets one).
    rotating:
        How many pairs rotate (the rest are p-RoPE's unrotated pairs).
    scaled:
        What a context-extension scaling did (:class:`pecli.schemes.rope_scaling.ScaledFrequencies`),
        or None.
    """

    inv_freq: np.ndarray
    original_inv_freq: np.ndarray
    first: np.ndarray
    second: np.ndarray
    sin_first: bool
    dim: int
    base: float
    attention_scaling: float = 1.0
    rotating: int | None = None
    scaled: Any = None

    @property
    def count(self) -> int:
        return int(self.inv_freq.size)


@dataclass(frozen=True)
class Block:
    """A slab of one array in the order its values are stored: rows ``start`` … of segment ``segment``.

    For arrays whose first axis is the positions, ``segment`` is 0 and ``values`` is
    ``array[start : start + n]``; alibi's (H, L, L) bias comes head by head, ``values`` being
    ``bias[segment, start : start + n]``. Parameters and ids (inv_freq, slopes, positions) come whole.
    """

    segment: int
    start: int
    values: np.ndarray


@dataclass(frozen=True)
class Part:
    """One named array ``pecli encode`` writes, produced block by block so that it never needs to be whole.

    Attributes
    ----------
    name, shape:
        The array's stable name (``encoding``, ``cos``, ``bias``…) and full shape.
    blocks:
        ``blocks(rows)`` yields :class:`Block` s of at most ``rows`` rows, in storage (C) order.
    row_values:
        Values in one row of a block (for sizing blocks to memory).
    rows_at:
        For the main part: ``rows_at(index)`` is the position rows of ``positions[index]`` —
        shape (n, values per position), as :func:`pecli.analysis.summary.position_rows` lays them
        out — equal to those the blocks hold; None for other parts.
    """

    name: str
    shape: tuple[int, ...]
    blocks: Callable[[int], Iterator[Block]]
    row_values: int
    rows_at: Callable[[np.ndarray], np.ndarray] | None = None


def whole_part(name: str, array: np.ndarray) -> Part:
    """A part that comes in one block (parameters, ids, or arrays of schemes that build them whole)."""
    array = np.asarray(array)
    return Part(name, tuple(array.shape), lambda rows: iter([Block(0, 0, array)]), max(1, int(array.size)))


def row_part(name: str, positions: np.ndarray, rows_of: Callable[[np.ndarray], np.ndarray], width: tuple[int, ...], *, main: bool = False) -> Part:
    """A part whose first axis is the positions: ``rows_of(ids)`` gives the rows of position ids ``ids``."""

    def blocks(rows: int) -> Iterator[Block]:
        for start in range(0, positions.size, rows):
            yield Block(0, start, rows_of(positions[start : start + rows]))

    def rows_at(index: np.ndarray) -> np.ndarray:
        values = rows_of(positions[index])
        return values.reshape(values.shape[0], -1)

    return Part(name, (positions.size, *width), blocks, int(np.prod(width, dtype=np.int64)), rows_at if main else None)


@dataclass(frozen=True)
class Scheme:
    """Base of every scheme; subclasses are frozen dataclasses of their parameters."""

    name: ClassVar[str]
    kind: ClassVar[str]
    summary: ClassVar[str]
    #: What analyses, plots and commands may ask of it, beyond what its kind gives
    #: (:data:`KIND_CAPABILITIES`); see :meth:`capabilities`.
    extra_capabilities: ClassVar[frozenset[Capability]] = frozenset()
    #: Coordinates per position: 1 for a sequence, k for positions on a k-dimensional grid.
    position_rank: ClassVar[int] = 1
    #: Alternative names of parameters, as users of other tools type them (``rope_theta`` for ``base``).
    aliases: ClassVar[dict[str, str]] = {}
    #: Name of the array that ``--out x.npy`` writes; the first entry of :meth:`arrays`.
    main_key: ClassVar[str] = "encoding"
    #: Parameters whose default is filled from the sequence length (see :meth:`defaults_for_length`).
    length_defaults: ClassVar[tuple[str, ...]] = ()
    #: Keys that hold a block of parameters as other tools ship it (rope: ``rope_scaling``).
    block_keys: ClassVar[tuple[str, ...]] = ()
    #: Parameters a block may give that describe the model rather than the block's own variant.
    block_model_keys: ClassVar[tuple[str, ...]] = ()

    #: Bytes ``pecli encode`` holds per value of a block while it computes, writes and summarises it
    #: (the block, its cast copy, the block being written, temporaries); measured, see tests/test_encode_streaming.py.
    block_bytes_per_value: ClassVar[int] = 28

    #: Names of the parameters that were filled from the sequence length rather than given
    #: (see :meth:`at_length`); set by :func:`pecli.config.build_scheme`.
    length_filled: tuple[str, ...] = field(default=(), kw_only=True, repr=False, compare=False)

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def parameters(cls) -> dict[str, Parameter]:
        """Every parameter the scheme takes, declared once (name, type, default, help, range)."""
        return dataclass_parameters(cls)

    @classmethod
    def parameter_names(cls) -> tuple[str, ...]:
        return tuple(cls.parameters())

    @classmethod
    def from_params(cls, values: dict[str, Any]) -> Scheme:
        """The scheme from coerced parameter values (absent keys take their defaults)."""
        return cls(**values)

    @classmethod
    def capabilities(cls) -> frozenset[Capability]:
        return KIND_CAPABILITIES[cls.kind] | cls.extra_capabilities

    @classmethod
    def has(cls, capability: Capability) -> bool:
        """Whether the scheme has ``capability``."""
        return capability in cls.capabilities()

    def at_length(self, length: int) -> Scheme:
        """The scheme as configured for sequences of ``length`` positions.

        Parameters the user gave stay; those filled from the length (binary ``bits``, learned
        ``max_length``, integer ``norm_length``, rope ``context``) are filled from ``length`` instead:
        ``scheme.at_length(T)`` is the scheme trained on T positions.
        """
        if not self.length_filled:
            return self
        defaults = self.defaults_for_length(int(length))
        return dataclasses.replace(self, **{name: defaults[name] for name in self.length_filled})

    @classmethod
    def defaults_for_length(cls, length: int) -> dict[str, Any]:
        """Defaults that depend on the sequence length (binary ``bits``, learned ``max_length``)."""
        return {}

    @classmethod
    def expand_block(cls, key: str, block: Any) -> dict[str, Any]:
        """The parameters held in a block key (see :attr:`block_keys`)."""
        raise ConfigError(key, f"is not a key of scheme {cls.name!r}")

    def without_extension(self) -> Scheme:
        """The scheme as pre-training used it, before any context-extension scaling (rope); else itself."""
        return self

    def params(self) -> dict[str, Any]:
        """The parameters as plain JSON-friendly values."""
        out = {}
        for name in self.parameters():
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        return out

    # -- facts about lengths (None where the scheme has no such length) -----------------------
    @property
    def pretraining_length(self) -> int | None:
        """The pre-training context a context-extension scaling starts from, or None."""
        return None

    @property
    def model_length(self) -> int | None:
        """The longest context the model is configured for (rope: ``max_position_embeddings``), or None."""
        return None

    @property
    def training_length(self) -> int | None:
        """The context the model was trained on, where the scheme knows it: a scaling's pre-training
        length, else the model's own longest context (rope: ``max_position_embeddings``); else None."""
        return self.pretraining_length or self.model_length

    @property
    def context_length(self) -> int | None:
        """The current sequence length the scheme was configured for, when it depends on it, or None."""
        return None

    @property
    def shift_isometric(self) -> bool:
        """Whether ``||E_p − E_q||`` depends on ``q − p`` only, by construction.

        Then one row of distances, ``||E_Δ − E_0||``, gives every distance. Schemes with frequency
        pairs have it: ``E_{p+k} = R_k E_p`` with ``R_k`` orthogonal ([Fleetwood] and [EulerBlind]); a scheme
        states it otherwise (integer: ``E_p = c·p·1``).
        """
        return self.has(Capability.FREQUENCIES)

    # -- what figures and reports may say about a scheme's bias and channels ------------------
    #: What the values of ``bias`` are, as an axis label (bias schemes).
    bias_label: ClassVar[str] = "bias (logit units)"
    #: Whether the bias is constant over runs of distances (buckets, clipping), so drawn as steps.
    piecewise_constant_bias: ClassVar[bool] = False
    #: What the position-only score is when it is not a logit (t5: a bucket index), else None.
    score_caveat: ClassVar[str | None] = None

    def channel_quantity(self, channel: int) -> tuple[str, float] | None:
        """The number that sets channel ``channel`` apart, as (symbol, value) (alibi: its slope m), or None."""
        return None

    def bias_limit(self) -> tuple[int, str, str] | None:
        """The distance beyond which the bias no longer changes, or None where it changes at every distance.

        Returns ``(distance, label, side)``: ``label`` names the limit, ``side`` (``"top"`` or
        ``"bottom"``) is the edge of a plot where the label stays clear of the curve.
        """
        return None

    def frequency_pairs(self) -> FrequencyPairs:
        """The frequency pairs of a scheme with :attr:`Capability.FREQUENCIES`."""
        raise PecliError(f"scheme {self.name!r} has no frequency pairs")

    # -- the interface ------------------------------------------------------------------------
    @property
    def width(self) -> int:
        """Length of the per-position vector (additive, rotary) or of the relative embedding."""
        raise NotImplementedError

    @property
    def channels(self) -> int:
        """Number of independent scores per pair of positions (attention heads for alibi)."""
        return 1

    @property
    def parameter_count(self) -> int:
        """Number of trainable parameters the scheme adds to a model (0 for fixed schemes)."""
        return 0

    def check_positions(self, positions: np.ndarray) -> None:
        """Raise :class:`PositionError` if the scheme cannot encode some of ``positions``."""

    def encode(self, positions: Any) -> np.ndarray:
        """Per-position vectors, shape ``(len(positions), width)``, float64."""
        raise PecliError(f"scheme {self.name!r} ({self.kind}) has no per-position vectors")

    def score(self, m: Any, n: Any) -> np.ndarray:
        """Position-only part of the attention logit between query positions m and key positions n.

        ``m`` and ``n`` broadcast against each other; the result has shape
        ``(channels, *broadcast(m, n).shape)``.
        """
        raise NotImplementedError

    def score_factors(self, positions: Any) -> tuple[np.ndarray, np.ndarray] | None:
        """Matrices (Q, K) with ``score(m, n) = Q_m · K_n`` for single-channel vector schemes, else None.

        Analyses use them to compute scores for many pairs with matrix products.
        """
        return None

    def arrays(self, positions: Any) -> dict[str, np.ndarray]:
        """Every array ``pecli encode --out x.npz`` writes, by stable name, main array first."""
        raise NotImplementedError

    def parts(self, positions: Any, *, exact: bool = True, dtype: str | None = None, wanted: Any = None) -> list[Part]:
        """The arrays of :meth:`arrays`, same names and order, each produced block by block.

        ``exact=False`` allows computations whose float64 values may differ from :meth:`arrays` by a few
        ulps (see :func:`unit_phasors`); ``pecli encode`` asks for it only for outputs narrower than
        float64. ``dtype`` (the output dtype's name) and ``wanted`` (the names that will be read; None:
        all) let a
        scheme share work between parts (rope's cos and sin tables, see :meth:`shared_bytes`); blocks
        may then come already in ``dtype``. This default builds :meth:`arrays` whole; schemes override
        it to produce rows on demand.
        """
        positions = as_positions(positions)
        arrays = self.arrays(positions)
        parts = [whole_part(name, array) for name, array in arrays.items()]
        main = np.asarray(arrays[self.main_key])
        rows = (np.moveaxis(main, 0, 1) if self.main_key == "bias" else main).reshape(positions.size, -1)
        return [dataclasses.replace(parts[0], rows_at=lambda index: rows[index]), *parts[1:]]

    def shared_bytes(self, n_positions: int, itemsize: int, wanted: Any) -> int:
        """Bytes :meth:`parts` keeps for the whole run to share work between the ``wanted`` parts (0 here)."""
        return 0

    def main_shape(self, n_positions: int) -> tuple[int, ...]:
        """Shape of the main array for ``n_positions`` positions (for memory estimates)."""
        return (n_positions, self.width)

    def estimate_bytes(self, n_positions: int) -> int:
        """Bytes of the main array and of any table the scheme builds to fill it (float64)."""
        return int(np.prod(self.main_shape(n_positions), dtype=np.float64)) * 8

    def apply(self, x: np.ndarray, positions: Any) -> np.ndarray:
        """Apply the encoding to ``x`` (positions along the second-to-last axis)."""
        raise PecliError(
            f"scheme {self.name!r} ({self.kind}) acts on attention logits and cannot be applied to a "
            "vector; --apply works with additive and rotary schemes"
        )

    # -- helpers for subclasses ---------------------------------------------------------------
    def _require_even(self, key: str, value: int) -> None:
        if value % 2:
            raise ConfigError(key, f"must be even, got {value}")


def factored_score(scheme: Scheme, m: Any, n: Any) -> np.ndarray:
    """``score(m, n) = Q_m · K_n`` from :meth:`Scheme.score_factors`, shape ``(1, *broadcast(m, n))``."""
    m, n = np.broadcast_arrays(np.asarray(m), np.asarray(n))
    flat_m, flat_n = as_positions(m.ravel()), as_positions(n.ravel())
    unique, inverse = np.unique(np.concatenate([flat_m, flat_n]), return_inverse=True)
    queries, keys = scheme.score_factors(unique)
    left, right = queries[inverse[: flat_m.size]], keys[inverse[flat_m.size :]]
    return np.einsum("id,id->i", left, right).reshape((1, *m.shape))


def check_apply_input(x: np.ndarray, positions: np.ndarray, width: int) -> None:
    """Check that ``x`` has positions on its second-to-last axis and ``width`` features."""
    if x.ndim < 2:
        raise PecliError(f"--apply needs an array of at least 2 dimensions (…, positions, features), got shape {x.shape}")
    if x.shape[-1] != width:
        raise PecliError(f"--apply: last axis has {x.shape[-1]} features, the scheme expects {width}")
    if x.shape[-2] != positions.size:
        raise PecliError(
            f"--apply: second-to-last axis has {x.shape[-2]} positions, but {positions.size} positions were given"
        )


@dataclass(frozen=True)
class AdditiveScheme(Scheme):
    """A vector per position, added to the token embeddings; score(m, n) = E_m · E_n."""

    kind: ClassVar[str] = "additive"

    def score_factors(self, positions: Any) -> tuple[np.ndarray, np.ndarray]:
        encoding = self.encode(positions)
        return encoding, encoding

    def score(self, m: Any, n: Any) -> np.ndarray:
        return factored_score(self, m, n)

    def arrays(self, positions: Any) -> dict[str, np.ndarray]:
        positions = as_positions(positions)
        return {"encoding": self.encode(positions), "positions": positions}

    def row_encoder(self, positions: np.ndarray, *, exact: bool = True) -> Callable[[np.ndarray], np.ndarray]:
        """A function giving the rows of :meth:`encode` for ids among ``positions`` (checked here, once)."""
        self.check_positions(positions)
        return self.encode

    def parts(self, positions: Any, *, exact: bool = True, dtype: str | None = None, wanted: Any = None) -> list[Part]:
        positions = as_positions(positions)
        encoder = self.row_encoder(positions, exact=exact)
        return [row_part("encoding", positions, encoder, (self.width,), main=True), whole_part("positions", positions)]

    def apply(self, x: np.ndarray, positions: Any) -> np.ndarray:
        positions = as_positions(positions)
        check_apply_input(x, positions, self.width)
        return np.asarray(x, dtype=np.float64) + self.encode(positions)


@dataclass(frozen=True)
class BiasScheme(Scheme):
    """A term of the attention logits that depends on the relative distance j − i only."""

    kind: ClassVar[str] = "bias"

    def bias(self, delta: Any) -> np.ndarray:
        """The logit term for relative distance ``delta = j − i``; shape ``(channels, *delta.shape)``."""
        raise NotImplementedError

    def score(self, m: Any, n: Any) -> np.ndarray:
        m, n = np.broadcast_arrays(np.asarray(m, dtype=np.int64), np.asarray(n, dtype=np.int64))
        return self.bias(n - m)

    def relative_distances(self, positions: np.ndarray) -> np.ndarray:
        """The (L, L) matrix of key minus query positions, ``delta[i, j] = positions[j] − positions[i]``."""
        return positions[None, :] - positions[:, None]


def require(scheme: Scheme | type[Scheme], capability: Capability, what: str) -> None:
    """Raise :class:`PecliError` unless ``scheme`` has ``capability``; the message names what it lacks.

    ``what`` is the request, e.g. ``"wavelengths"`` or ``"plot circle"``.
    """
    if scheme.has(capability):
        return
    from pecli.schemes import SCHEMES  # the registry imports this module

    able = [name for name, cls in SCHEMES.items() if cls.has(capability)]
    raise PecliError(
        f"{what} needs a scheme that {capability.value}; {scheme.name!r} does not (schemes that do: {', '.join(able)})"
    )
