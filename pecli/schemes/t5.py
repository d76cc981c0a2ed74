"""T5's relative position buckets (Raffel et al. 2020; [EulerBlind])."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from pecli.params import param
from pecli.schemes.base import MAX_LENGTH, BiasScheme
from pecli.schemes.parts import Part, row_part, whole_part
from pecli.schemes.positions import as_positions


def t5_buckets(
    relative_position: Any, *, buckets: int = 32, max_distance: int = 128, bidirectional: bool = True
) -> np.ndarray:
    """The T5 bucket of each relative position ``j − i`` (key minus query), int64.

    Notes
    -----
    Bidirectional: half the buckets are for keys after the query (offset ``buckets/2``), and the
    distance is ``|j − i|``; causal: only keys at or before the query, distance ``max(i − j, 0)``.
    With ``n`` buckets left, distances below ``n/2`` get a bucket each; larger ones share the other
    ``n/2`` logarithmically up to ``max_distance``, and everything farther goes to the last bucket::

        bucket = n/2 + floor(log(distance / (n/2)) / log(max_distance / (n/2)) · (n − n/2))

    The logarithm is taken in float32 as the reference implementations (Mesh TensorFlow, HuggingFace
    ``_relative_position_bucket``) compute it, so boundary distances fall in the same bucket.

    References
    ----------
    Raffel et al., "Exploring the Limits of Transfer Learning with a Unified Text-to-Text Transformer",
    JMLR 2020, section 2.1.
    """
    relative_position = np.asarray(relative_position, dtype=np.int64)
    offset = np.zeros_like(relative_position)
    if bidirectional:
        buckets //= 2
        offset = np.where(relative_position > 0, buckets, 0)
        distance = np.abs(relative_position)
    else:
        distance = -np.minimum(relative_position, 0)
    max_exact = buckets // 2
    with np.errstate(divide="ignore"):
        scaled = (
            np.log(distance.astype(np.float32) / np.float32(max_exact))
            / np.float32(np.log(max_distance / max_exact))
            * np.float32(buckets - max_exact)
        )
    large = max_exact + np.where(distance < max_exact, 0, scaled).astype(np.int64)
    large = np.minimum(large, buckets - 1)
    return offset + np.where(distance < max_exact, distance, large)


@dataclass(frozen=True)
class T5Scheme(BiasScheme):
    """Relative distances sorted into buckets; each bucket has a learned scalar bias per head.

    Notes
    -----
    The learned biases are the model's; pecli reports the bucket index itself (``bucket(j − i)``, see
    :func:`t5_buckets`) as the position-only score, since two pairs that share a bucket get the same
    bias whatever the model learned.
    """

    name: ClassVar[str] = "t5"
    summary: ClassVar[str] = "relative distances in exact then logarithmic buckets (Raffel et al. 2020)"
    main_key: ClassVar[str] = "buckets"
    encoded_type: ClassVar[str] = "BucketEncoding"
    block_bytes_per_value: ClassVar[int] = 64  # the int64 and float32 temporaries of the buckets
    bias_label: ClassVar[str] = "bucket index (each bucket has a learned bias)"
    piecewise_constant_bias: ClassVar[bool] = True
    score_caveat: ClassVar[str | None] = "the bucket index (each bucket's bias is learned), not a logit"

    buckets: int = param(32, "number of buckets", minimum=2, maximum=MAX_LENGTH)
    max_distance: int = param(128, "distance from which every pair shares the last bucket", minimum=1, maximum=MAX_LENGTH)
    bidirectional: bool = param(True, "true: keys on both sides (encoder); false: causal (decoder)")

    def __post_init__(self) -> None:
        from pecli.errors import ConfigError

        exact = self.buckets // (4 if self.bidirectional else 2)
        if exact < 1:
            raise ConfigError("buckets", f"too few buckets: need at least {4 if self.bidirectional else 2}")
        if self.max_distance <= exact:
            raise ConfigError(
                "max_distance", f"must exceed the {exact} exact buckets, got {self.max_distance}"
            )

    @property
    def width(self) -> int:
        return 1

    @property
    def parameter_count(self) -> int:
        return self.buckets  # one scalar per bucket, per head in a model

    def bias_limit(self) -> tuple[int, str, str]:
        return self.max_distance, f"max_distance {self.max_distance}", "bottom"

    def bias(self, delta: Any) -> np.ndarray:
        return self.buckets_of(delta).astype(np.float64)[None]

    def buckets_of(self, delta: Any) -> np.ndarray:
        return t5_buckets(
            delta, buckets=self.buckets, max_distance=self.max_distance, bidirectional=self.bidirectional
        )

    def main_shape(self, n_positions: int) -> tuple[int, ...]:
        return (n_positions, n_positions)

    def arrays(self, positions: Any) -> dict[str, np.ndarray]:
        positions = as_positions(positions)
        return {"buckets": self.buckets_of(self.relative_distances(positions)), "positions": positions}

    def parts(self, positions: Any, *, exact: bool = True, dtype: str | None = None, wanted: Any = None) -> list[Part]:
        """The (L, L) buckets by blocks of query rows, then ``positions``."""
        positions = as_positions(positions)
        rows = row_part("buckets", positions, lambda queries: self.buckets_of(positions[None, :] - queries[:, None]), (positions.size,), main=True)
        return [rows, whole_part("positions", positions)]
