"""ALiBi: attention with linear biases (Press et al. 2022; [EulerBlind])."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Iterator

import numpy as np

from pecli.dtypes import cast, numpy_dtype
from pecli.params import param
from pecli.schemes.base import BiasScheme
from pecli.schemes.parts import Block, Part, whole_part
from pecli.schemes.positions import as_positions


def alibi_slopes(heads: int) -> np.ndarray:
    """The head slopes of ALiBi, float64, shape ``(heads,)``.

    Notes
    -----
    For ``n`` a power of two the slopes are the geometric sequence ``2^(−8k/n)``, k = 1 … n
    (8 heads: 1/2, 1/4, …, 1/256). For other ``n`` the paper's reference code takes the ``2^⌊log2 n⌋``
    slopes of the nearest lower power of two, then every other slope (the 1st, 3rd, …) of twice that
    power until there are ``n``: 12 heads are 2^−1 … 2^−8 followed by 2^−0.5, 2^−1.5, 2^−2.5, 2^−3.5.

    References
    ----------
    Press, Smith, Lewis, "Train Short, Test Long: Attention with Linear Biases Enables Input Length
    Extrapolation", ICLR 2022; ``get_slopes`` in github.com/ofirpress/attention_with_linear_biases.
    """

    def power_of_two(n: int) -> np.ndarray:
        return np.power(2.0, -8.0 * np.arange(1, n + 1) / n)

    if heads & (heads - 1) == 0:
        return power_of_two(heads)
    lower = 1 << (heads.bit_length() - 1)
    extra = alibi_slopes(2 * lower)[0::2][: heads - lower]
    return np.concatenate([power_of_two(lower), extra])


@dataclass(frozen=True)
class AlibiScheme(BiasScheme):
    """A linear penalty on distance, one slope per head.

    Notes
    -----
    ``bias[h, i, j] = −m_h · |i − j|`` with the slopes ``m_h`` of :func:`alibi_slopes`. The reference code
    adds ``m_h · (j − i)`` under a causal mask, which differs from this form only by a constant per query
    row and so gives the same softmax; the symmetric form also covers bidirectional use.
    """

    name: ClassVar[str] = "alibi"
    summary: ClassVar[str] = "-m_h·|i-j| added to the logits, geometric slopes per head (Press et al. 2022)"
    main_key: ClassVar[str] = "bias"
    encoded_type: ClassVar[str] = "BiasEncoding"
    block_bytes_per_value: ClassVar[int] = 40
    bias_label: ClassVar[str] = "bias −mₕ·|i−j| (logit units)"
    quiet_defaults: ClassVar[tuple[str, ...]] = ("slope_dtype",)

    heads: int = param(8, "number of attention heads", minimum=1, maximum=4096)
    slope_dtype: str = param(
        "float64", "the precision the model keeps its slopes in: float64 (the paper's values), or bfloat16 (Falcon)",
        choices=("float64", "bfloat16"),
    )

    @property
    def width(self) -> int:
        return self.heads

    @property
    def channels(self) -> int:
        return self.heads

    @property
    def slopes(self) -> np.ndarray:
        """:func:`alibi_slopes`, rounded to bfloat16 where ``slope_dtype`` says so (Falcon's
        ``build_alibi_tensor`` forms them in bfloat16 whatever the model's dtype)."""
        slopes = alibi_slopes(self.heads)
        if self.slope_dtype == "bfloat16":
            from pecli.dtypes import cast

            slopes = cast(slopes, "bfloat16").astype(np.float64)
        return slopes

    def channel_quantity(self, channel: int) -> tuple[str, float]:
        return "m", float(self.slopes[channel])

    def bias(self, delta: Any) -> np.ndarray:
        distance = np.abs(np.asarray(delta, dtype=np.float64))
        return -self.slopes.reshape((-1,) + (1,) * distance.ndim) * distance

    def main_shape(self, n_positions: int) -> tuple[int, ...]:
        return (self.heads, n_positions, n_positions)

    def arrays(self, positions: Any) -> dict[str, np.ndarray]:
        positions = as_positions(positions)
        return {
            "bias": self.bias(self.relative_distances(positions)),
            "slopes": self.slopes,
            "positions": positions,
        }

    def encoded(self, positions: Any, *, dtype: str | None = None) -> Any:
        """The (H, L, L) bias in ``dtype``: each block of query rows' distances formed once for every head,
        ``−m·|j − i|`` in float64, cast as it is written (a :class:`~pecli.schemes.encoded.BiasEncoding`)."""
        from pecli.schemes.encoded import FILL_VALUES, BiasEncoding

        positions = as_positions(positions)
        slopes, n = self.slopes, positions.size
        out = np.empty((self.heads, n, n), dtype=np.float64 if dtype is None else numpy_dtype(dtype))
        rows = max(1, FILL_VALUES // max(n, 1))
        with np.errstate(over="ignore"):
            for start in range(0, n, rows):
                distance = np.abs((positions[None, :] - positions[start : start + rows, None]).astype(np.float64))
                for head, slope in enumerate(slopes):
                    out[head, start : start + rows] = -slope * distance
        return BiasEncoding(self, out, slopes if dtype is None else cast(slopes, dtype), positions)

    def parts(self, positions: Any, *, exact: bool = True, dtype: str | None = None, wanted: Any = None) -> list[Part]:
        """The (H, L, L) bias head by head, query rows by blocks; then ``slopes`` and ``positions``."""
        positions = as_positions(positions)
        slopes, n = self.slopes, positions.size

        def blocks(rows: int) -> Iterator[Block]:
            for head, slope in enumerate(slopes):
                for start in range(0, n, rows):
                    distance = np.abs((positions[None, :] - positions[start : start + rows, None]).astype(np.float64))
                    yield Block(head, start, -slope * distance)

        def rows_at(index: np.ndarray) -> np.ndarray:
            bias = self.bias(positions[None, :] - positions[index, None])
            return np.moveaxis(bias, 0, 1).reshape(len(index), -1)

        return [
            Part("bias", (self.heads, n, n), blocks, n, rows_at),
            whole_part("slopes", slopes),
            whole_part("positions", positions),
        ]
