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
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

import numpy as np

from pecli.errors import ConfigError, PecliError
from pecli.params import Parameter, dataclass_parameters, field_values
from pecli.schemes.frequencies import FrequencyPairs
from pecli.schemes.parts import Part, prefixed, row_part, whole_part
from pecli.schemes.positions import as_positions, stored_positions

KINDS = ("additive", "rotary", "bias")

#: Widest vector any scheme is asked for (2^20 components: no model has a wider head or embedding).
MAX_WIDTH = 1 << 20
#: Most positions a length-like parameter may name (2^32, as the sequence length).
MAX_LENGTH = 1 << 32
#: Largest multiplier of a table's values (sinusoidal ``scale``, learned ``std``; models use dim^-0.5 and 0.02): the
#: values stay far inside float16's range (65,504), the narrowest dtype ``check precision`` and ``--dtype`` cast to,
#: and squared distances stay finite (a scale of 1e308 overflowed them into an internal error).
MAX_SCALE = 1000.0

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


# A subclass that adds no field is left undecorated (AdditiveScheme, BiasScheme, AxialRotaryScheme): it
# inherits these dataclass methods, and each @dataclass costs Python about 0.4 ms at import, which every
# run pays for every scheme. One that adds a field needs @dataclass(frozen=True).
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
    #: Whether its positions are its own cells (a grid's, a multimodal sequence's; see :meth:`cells`)
    #: rather than 0 … L − 1 for any L.
    has_cells: ClassVar[bool] = False
    #: Whether those cells are the cells of a grid (its shape: the ``grid`` parameter), in row-major order.
    on_grid: ClassVar[bool] = False
    #: Whether positions may be any finite real numbers (fractional, negative), not only ids: the schemes
    #: whose angles are a position times a frequency (see :func:`~pecli.schemes.positions.as_positions`).
    real_positions: ClassVar[bool] = False
    #: Alternative names of parameters, as users of other tools type them (``rope_theta`` for ``base``).
    aliases: ClassVar[dict[str, str]] = {}
    #: Name of the array that ``--out x.npy`` writes; the first entry of :meth:`arrays`.
    main_key: ClassVar[str] = "encoding"
    #: Whether a model's values of it are in the model's checkpoint, not its config (a learned table):
    #: read from a model, it needs ``weights``.
    table_in_checkpoint: ClassVar[bool] = False
    #: Parameters that titles and legends leave out at their default (a model-specific precision, say).
    quiet_defaults: ClassVar[tuple[str, ...]] = ()
    #: Parameters whose default is filled from the sequence length (see :meth:`defaults_for_length`).
    length_defaults: ClassVar[tuple[str, ...]] = ()
    #: Keys that hold a block of parameters as other tools ship it (rope: ``rope_scaling``).
    block_keys: ClassVar[tuple[str, ...]] = ()
    #: Parameters a block may give that describe the model rather than the block's own variant.
    block_model_keys: ClassVar[tuple[str, ...]] = ()

    #: Bytes ``pecli encode`` holds per value of a block while it computes, writes and summarises it
    #: (the block, its cast copy, the block being written, temporaries); measured, see tests/test_encode_streaming.py.
    block_bytes_per_value: ClassVar[int] = 24

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
        return cls(**field_values(cls.parameters(), values))

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

    @classmethod
    def block_keys_of(cls, variant: str) -> tuple[str, ...]:
        """The parameters a block's variant ``variant`` takes (rope: a scaling type's keys), which carry
        over from a block when another variant is asked for."""
        return ()

    def without_extension(self) -> Scheme:
        """The scheme as pre-training used it, before any context-extension scaling (rope); else itself."""
        return self

    def params(self) -> dict[str, Any]:
        """The parameters as plain JSON-friendly values."""
        out = {}
        for name, parameter in self.parameters().items():
            value = getattr(self, parameter.attribute or name)
            out[name] = list(value) if isinstance(value, tuple) else value
        return out

    # -- positions --------------------------------------------------------------------------
    def positions_of(self, positions: Any) -> np.ndarray:
        """``positions`` checked for this scheme: int64 ids of its rank, or float64 real-valued positions
        where it takes them (:attr:`real_positions`); raises :class:`~pecli.errors.PositionError`."""
        return as_positions(positions, self.position_rank, real=self.real_positions)

    @property
    def prefix_rows(self) -> int:
        """Rows without a position (a ViT's cls and register tokens) that :meth:`arrays`, :meth:`parts`
        and :meth:`apply` put before the rows of the positions; 0 for most schemes. Analyses never see
        them: they measure the positions' rows (:meth:`encode`, :meth:`score`)."""
        return 0

    # -- positions of more than one coordinate (n-D schemes) ---------------------------------
    @property
    def axis_names(self) -> tuple[str, ...]:
        """Names of the coordinates of a position (``("h", "w")``, ``("t", "h", "w")``); () for 1-D."""
        return ()

    def cells(self) -> np.ndarray | None:
        """The positions of an n-D scheme, shape (N, :attr:`position_rank`), in the order of its rows:
        the cells of its grid in row-major order, or the tokens of its sequence. None for 1-D schemes,
        whose positions are 0 … L − 1 for any L."""
        return None

    def cells_text(self) -> str:
        """The cells of an n-D scheme in a few words (``the 16 x 16 grid``); "" for 1-D schemes."""
        return ""

    @property
    def cell_count(self) -> int | None:
        """How many cells :meth:`cells` holds, known without building them; None for 1-D schemes."""
        cells = self.cells()
        return None if cells is None else len(cells)

    def axis_spans(self) -> np.ndarray | None:
        """Positions each coordinate spans over the cells (its largest id + 1); None for 1-D schemes."""
        cells = self.cells()
        return None if cells is None else cells.max(axis=0) + 1

    def sequence_positions(self, start: int, stop: int) -> np.ndarray:
        """The positions of rows ``start`` … ``stop − 1``: those ids for 1-D schemes, else :meth:`cells`."""
        cells = self.cells()
        return np.arange(start, stop, dtype=np.int64) if cells is None else cells[start:stop]

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
    def training_length_key(self) -> str | None:
        """Where :attr:`training_length` comes from, by the key that gives it (``max_position_embeddings``,
        ``original_max_position_embeddings``): it is that key's value, not a pre-training length the
        model card states (Gemma 3 pre-trained at 32K and says max_position_embeddings 131,072)."""
        return "max_position_embeddings" if self.training_length is not None else None

    @property
    def context_length(self) -> int | None:
        """The current sequence length the scheme was configured for, when it depends on it, or None."""
        return None

    @property
    def reads_context(self) -> bool:
        """Whether the encoding depends on the current sequence length (rope's dynamic and longrope scalings)."""
        return False

    @property
    def shift_isometric(self) -> bool:
        """Whether ``||E_p − E_q||`` depends on ``q − p`` only, by construction.

        Then one row of distances, ``||E_Δ − E_0||``, gives every distance. Schemes with frequency
        pairs have it: ``E_{p+k} = R_k E_p`` with ``R_k`` orthogonal ([Fleetwood] and [EulerBlind]); a scheme
        states it otherwise (integer: ``E_p = c·p·1``).
        """
        return self.has(Capability.FREQUENCIES) and not self.has_cells  # on a grid, Δ is a vector

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

    @property
    def keys_differ(self) -> bool:
        """Whether queries and keys carry different position factors (xPos): then Q and K of
        :meth:`score_factors` differ, and :meth:`encode` is the queries' side."""
        return False

    def score_factors_of_rows(
        self, positions: Any, rows: np.ndarray, out: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """:meth:`score_factors` at ``positions``, given their :meth:`encode` rows (float64), computed
        already: a scheme whose factors follow exactly from its rows does not compute them again.
        ``out``: a (N, width) float64 array the keys' factors may be written into (a caller's buffer);
        the keys' factors returned are ``out`` when they were, else an array of their own."""
        return self.score_factors(positions)

    def encoding_identity(self) -> Any:
        """Everything :meth:`encode` reads, as a hashable value: two schemes with equal identities give
        every position the same row, bit for bit, so an analysis may encode one of them for both.
        By default the scheme itself (every parameter); a scheme whose encoding ignores some of them
        (rope's ``context`` without a scaling that reads it) says so."""
        return self

    def arrays(self, positions: Any) -> dict[str, np.ndarray]:
        """Every array ``pecli encode --out x.npz`` writes, by stable name, main array first."""
        raise NotImplementedError

    #: The name of :meth:`encoded`'s result type in :mod:`pecli.schemes.encoded` (loaded when a result is
    #: made), whose fields are the names of :meth:`arrays` it holds.
    encoded_type: ClassVar[str] = "VectorEncoding"

    def encoded(self, positions: Any, *, dtype: str | None = None) -> Any:
        """The arrays at ``positions`` under their names (:mod:`pecli.schemes.encoded`), floats in
        ``dtype`` (default float64): :func:`pecli.encode`'s result. Filled block by block from
        :meth:`parts`; values narrower than float64 may come from a faster way to the float64 values
        (a few ulps), then cast."""
        from pecli.schemes import encoded

        result = getattr(encoded, self.encoded_type)
        return encoded.assemble(result, self, self.positions_of(positions), dtype)

    def parts(self, positions: Any, *, exact: bool = True, dtype: str | None = None, wanted: Any = None) -> list[Part]:
        """The arrays of :meth:`arrays`, same names and order, each produced block by block.

        ``exact=False`` allows computations whose float64 values may differ from :meth:`arrays` by the
        rounding of the float64 angles (see :func:`unit_phasors`); ``pecli encode`` and
        :func:`pecli.encode` ask for it in every dtype. ``dtype`` (the output dtype's name) and ``wanted`` (the names that will be read; None:
        all) let a
        scheme share work between parts (rope's cos and sin tables, see :meth:`shared_bytes`); blocks
        may then come already in ``dtype``. This default builds :meth:`arrays` whole; schemes override
        it to produce rows on demand.
        """
        positions = self.positions_of(positions)
        arrays = self.arrays(positions)
        parts = [whole_part(name, array) for name, array in arrays.items()]
        main = np.asarray(arrays[self.main_key])
        rows = (np.moveaxis(main, 0, 1) if self.main_key == "bias" else main).reshape(len(positions), -1)
        return [dataclasses.replace(parts[0], rows_at=lambda index: rows[index]), *parts[1:]]

    def shared_bytes(self, n_positions: int, itemsize: int, wanted: Any) -> int:
        """Bytes :meth:`parts` keeps for the whole run to share work between the ``wanted`` parts (0 here)."""
        return 0

    def main_shape(self, n_positions: int) -> tuple[int, ...]:
        """Shape of the main array for ``n_positions`` positions (for memory estimates)."""
        return (n_positions, self.width)

    def estimate_bytes(self, n_positions: int) -> int:
        """Bytes of the main array and of any table the scheme builds to fill it (float64); for an n-D
        scheme also its cells' (N, rank) ids and the (rank, N) copy ``encode`` writes."""
        cells = 2 * 8 * int(n_positions) * self.position_rank if self.has_cells else 0
        return int(np.prod(self.main_shape(n_positions), dtype=np.float64)) * 8 + cells

    def apply(self, x: np.ndarray, positions: Any, *, keys: bool = False) -> np.ndarray:
        """Apply the encoding to ``x`` (positions along the second-to-last axis); ``keys``: ``x`` holds
        attention keys rather than queries (only xPos treats them differently)."""
        raise PecliError(
            f"scheme {self.name!r} ({self.kind}) acts on attention logits and cannot be applied to a "
            "vector; --apply works with additive and rotary schemes"
        )

    # -- helpers for subclasses ---------------------------------------------------------------
    def _require_even(self, key: str, value: int) -> None:
        if value % 2:
            raise ConfigError(key, f"must be even, got {value}")


def factored_score(scheme: Scheme, m: Any, n: Any) -> np.ndarray:
    """``score(m, n) = Q_m · K_n`` from :meth:`Scheme.score_factors`, shape ``(1, *broadcast(m, n))``.

    Positions of rank k > 1 carry their coordinates on a last axis of length k, which the result drops.
    """
    rank = scheme.position_rank
    m, n = np.broadcast_arrays(np.asarray(m), np.asarray(n))
    shape = m.shape if rank == 1 else m.shape[:-1]
    flat_m, flat_n = (scheme.positions_of(x.reshape(-1) if rank == 1 else x.reshape(-1, rank)) for x in (m, n))
    if flat_m.dtype != flat_n.dtype:  # ids on one side, real positions on the other
        flat_m, flat_n = flat_m.astype(np.float64), flat_n.astype(np.float64)
    by_row = {} if rank == 1 else {"axis": 0}
    unique, inverse = np.unique(np.concatenate([flat_m, flat_n]), return_inverse=True, **by_row)
    inverse = inverse.reshape(-1)
    queries, keys = scheme.score_factors(unique)
    left, right = queries[inverse[: len(flat_m)]], keys[inverse[len(flat_m) :]]
    return np.einsum("id,id->i", left, right).reshape((1, *shape))


def check_apply_input(x: np.ndarray, positions: np.ndarray, width: int, prefix: int = 0) -> None:
    """Check that ``x`` has ``prefix`` rows then the positions on its second-to-last axis, and ``width``
    features."""
    if x.ndim < 2:
        raise PecliError(f"--apply needs an array of at least 2 dimensions (…, positions, features), got shape {x.shape}")
    if x.shape[-1] != width:
        raise PecliError(f"--apply: last axis has {x.shape[-1]} features, the scheme expects {width}")
    if x.shape[-2] != len(positions) + prefix:
        tokens = f" and {prefix} prefix token{'s' * (prefix > 1)} ({len(positions) + prefix} rows)" if prefix else ""
        raise PecliError(
            f"--apply: second-to-last axis has {x.shape[-2]} positions, but {len(positions)} positions{tokens} were given"
        )


def with_prefix_rows(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``values`` (positions on the first axis) with ``rows`` (the prefix tokens' values) before them."""
    return np.concatenate([np.asarray(rows, dtype=values.dtype), values], axis=0) if len(rows) else values


# No @dataclass: it adds no field (see the note above Scheme).
class AdditiveScheme(Scheme):
    """A vector per position, added to the token embeddings; score(m, n) = E_m · E_n."""

    kind: ClassVar[str] = "additive"

    def score_factors(self, positions: Any) -> tuple[np.ndarray, np.ndarray]:
        encoding = self.encode(positions)
        return encoding, encoding

    def score_factors_of_rows(self, positions: Any, rows: np.ndarray, out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(E, E)``: the rows are the factors."""
        return rows, rows

    def score(self, m: Any, n: Any) -> np.ndarray:
        return factored_score(self, m, n)

    def arrays(self, positions: Any) -> dict[str, np.ndarray]:
        positions = self.positions_of(positions)
        encoding = with_prefix_rows(self.encode(positions), np.zeros((self.prefix_rows, self.width)))
        return {"encoding": encoding, "positions": stored_positions(positions)}

    def row_encoder(self, positions: np.ndarray, *, exact: bool = True) -> Callable[[np.ndarray], np.ndarray]:
        """A function giving the rows of :meth:`encode` for ids among ``positions`` (checked here, once)."""
        self.check_positions(positions)
        return self.encode

    def parts(self, positions: Any, *, exact: bool = True, dtype: str | None = None, wanted: Any = None) -> list[Part]:
        """``encoding`` row by row (after the zero rows of any prefix tokens), then ``positions``."""
        positions = self.positions_of(positions)
        encoder = self.row_encoder(positions, exact=exact)
        encoding = row_part("encoding", positions, encoder, (self.width,), main=True)
        return [
            prefixed(encoding, np.zeros((self.prefix_rows, self.width))),
            whole_part("positions", stored_positions(positions)),
        ]

    def apply(self, x: np.ndarray, positions: Any, *, keys: bool = False) -> np.ndarray:
        """``x`` plus the encoding; rows of prefix tokens (no position) are left as they are."""
        positions = self.positions_of(positions)
        check_apply_input(x, positions, self.width, self.prefix_rows)
        out = np.array(x, dtype=np.float64)
        out[..., self.prefix_rows :, :] += self.encode(positions)
        return out


# No @dataclass: it adds no field (see the note above Scheme).
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
