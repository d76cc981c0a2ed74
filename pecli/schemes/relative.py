"""Relative position representations (Shaw, Uszkoreit, Vaswani 2018; [Common-PE] and [PE-explained])."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from pecli.params import param
from pecli.schemes.base import MAX_LENGTH, MAX_WIDTH, REFERENCE_SEED, BiasScheme
from pecli.schemes.parts import Part, row_part, whole_part
from pecli.schemes.positions import as_positions


@dataclass(frozen=True)
class RelativeScheme(BiasScheme):
    """Learned embeddings of the clipped relative distance, added to the keys inside attention.

    Notes
    -----
    A table ``a`` of ``2K + 1`` vectors (here drawn from ``N(0, std²)`` with ``seed``) and
    ``index[i, j] = clip(j − i, −K, K) + K``: the pair (i, j) uses ``a[index[i, j]]``, so every distance
    beyond K shares the vector of ±K. The logit gains ``q_i · a[index[i, j]]``; its position-only part,
    reported by :meth:`score`, uses a fixed reference query drawn with a fixed seed.

    References
    ----------
    Shaw, Uszkoreit, Vaswani, "Self-Attention with Relative Position Representations", NAACL 2018.
    """

    name: ClassVar[str] = "relative"
    summary: ClassVar[str] = "learned vectors for j-i clipped to ±K (Shaw et al. 2018)"
    main_key: ClassVar[str] = "embeddings"
    encoded_type: ClassVar[str] = "RelativeEncoding"
    block_bytes_per_value: ClassVar[int] = 40
    bias_label: ClassVar[str] = "q·a[clip(j−i)] (reference query)"
    piecewise_constant_bias: ClassVar[bool] = True

    dim: int = param(64, "size of each relative embedding (the head dimension)", minimum=1, maximum=MAX_WIDTH)
    max_relative_position: int = param(16, "K: distances beyond ±K are clipped", minimum=1, maximum=MAX_LENGTH)
    seed: int = param(0, "seed of the table's initialisation", minimum=0)
    std: float = param(0.02, "standard deviation of the initialisation", exclusive_minimum=0)

    @property
    def width(self) -> int:
        return self.dim

    @property
    def parameter_count(self) -> int:
        return (2 * self.max_relative_position + 1) * self.dim

    def table(self) -> np.ndarray:
        """The (2K + 1, dim) table of relative embeddings."""
        rng = np.random.default_rng(self.seed)
        return rng.normal(0.0, self.std, size=(2 * self.max_relative_position + 1, self.dim))

    def index(self, delta: Any) -> np.ndarray:
        """``clip(delta, −K, K) + K`` for relative distances ``delta = j − i``."""
        k = self.max_relative_position
        return np.clip(np.asarray(delta, dtype=np.int64), -k, k) + k

    def bias_limit(self) -> tuple[int, str, str]:
        k = self.max_relative_position
        return k, f"±K = {k}: clipped beyond", "top"

    def bias(self, delta: Any) -> np.ndarray:
        reference_query = np.random.default_rng(REFERENCE_SEED).standard_normal(self.dim)
        per_index = self.table() @ reference_query
        return per_index[self.index(delta)][None]

    def main_shape(self, n_positions: int) -> tuple[int, ...]:
        return (n_positions, n_positions, self.dim)

    def arrays(self, positions: Any) -> dict[str, np.ndarray]:
        positions = as_positions(positions)
        index = self.index(self.relative_distances(positions))
        table = self.table()
        return {"embeddings": table[index], "index": index, "table": table, "positions": positions}

    def parts(self, positions: Any, *, exact: bool = True, dtype: str | None = None, wanted: Any = None) -> list[Part]:
        """``embeddings`` (L, L, d) and ``index`` (L, L) by blocks of query rows; ``table``, ``positions``."""
        positions = as_positions(positions)
        table, n = self.table(), positions.size

        def index(queries: np.ndarray) -> np.ndarray:
            return self.index(positions[None, :] - queries[:, None])

        return [
            row_part("embeddings", positions, lambda queries: table[index(queries)], (n, self.dim), main=True),
            row_part("index", positions, index, (n,)),
            whole_part("table", table),
            whole_part("positions", positions),
        ]
