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
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from pecli.errors import ConfigError, PecliError, PositionError

KINDS = ("additive", "rotary", "bias")

#: Seed of the fixed reference vectors used by the position-only scores of rotary and relative schemes.
REFERENCE_SEED = 20240601


def param(
    default: Any,
    help: str,
    *,
    choices: tuple[str, ...] | None = None,
    minimum: float | None = None,
    exclusive_minimum: float | None = None,
    maximum: float | None = None,
) -> Any:
    """Declare a scheme parameter: a dataclass field carrying its help text and its valid range."""
    metadata = {
        "help": help,
        "choices": choices,
        "minimum": minimum,
        "exclusive_minimum": exclusive_minimum,
        "maximum": maximum,
    }
    return field(default=default, metadata=metadata)


def as_positions(positions: Any) -> np.ndarray:
    """Return ``positions`` as a 1-D int64 array of non-negative position ids.

    Raises
    ------
    PositionError
        If the positions are not integers, not one-dimensional or negative.
    """
    array = np.asarray(positions)
    if array.ndim == 0:
        array = array.reshape(1)
    if array.ndim != 1:
        raise PositionError(f"positions must be one-dimensional, got shape {array.shape}")
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
class Scheme:
    """Base of every scheme; subclasses are frozen dataclasses of their parameters."""

    name: ClassVar[str]
    kind: ClassVar[str]
    summary: ClassVar[str]
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

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def parameter_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

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
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

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
