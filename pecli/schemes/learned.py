"""Learned absolute positions: an ``nn.Embedding(max_length, dim)`` table ([Common-PE], [EulerBlind] and [PE-explained]),
at its initialisation or read from a checkpoint (``weights``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar

import numpy as np

from pecli.errors import ConfigError, PositionError
from pecli.params import param
from pecli.schemes.base import MAX_LENGTH, MAX_SCALE, MAX_WIDTH, AdditiveScheme
from pecli.schemes.positions import as_positions


@dataclass(frozen=True)
class LearnedScheme(AdditiveScheme):
    """A table of trainable vectors, one per position, here at its initialisation.

    Notes
    -----
    ``E = T[p]`` with ``T ~ N(0, std²)`` of shape ``(max_length, dim)``, drawn from
    ``numpy.random.default_rng(seed)`` (std 0.02 as BERT and GPT-2 initialise it). The table has no row
    for ``p >= max_length``: such positions are undefined, the extrapolation failure [Common-PE], [EulerBlind] and [PE-explained] describe.

    With ``weights`` (a ``.safetensors`` file or ``model.safetensors.index.json``) the table is a
    trained one: ``T[p] = W[p + row_offset]`` for the checkpoint's tensor ``W`` (GPT-2 ``wpe.weight``,
    OPT ``embed_positions.weight`` with its offset of 2, BERT ``position_embeddings.weight``;
    :mod:`pecli.weights.checkpoint`). ``dim`` and ``max_length`` are then the tensor's; the scheme holds
    the path and the tensor's name, and the table is read once, when first needed.
    """

    name: ClassVar[str] = "learned"
    summary: ClassVar[str] = "a trained table of max_length vectors, here at its N(0, std^2) initialisation"
    length_defaults: ClassVar[tuple[str, ...]] = ("max_length",)
    table_in_checkpoint: ClassVar[bool] = True

    dim: int = param(512, "vector size", minimum=1, maximum=MAX_WIDTH)
    max_length: int | None = param(None, "rows of the table", minimum=1, maximum=MAX_LENGTH, default_text="the sequence length")
    seed: int = param(0, "seed of the initialisation", minimum=0)
    std: float = param(0.02, "standard deviation of the initialisation", exclusive_minimum=0, maximum=MAX_SCALE)
    weights: str | None = param(
        None, "a .safetensors checkpoint (or its index .json): the table is its position embedding",
        default_text="a random table",
    )
    tensor: str | None = param(
        None, "with weights: the table's tensor", default_text="found by the usual names (GPT-2, OPT, BERT)"
    )
    row_offset: int | None = param(
        None, "with weights: rows of the tensor before position 0", minimum=0, default_text="2 for OPT and RoBERTa, else 0"
    )

    @classmethod
    def from_params(cls, values: dict[str, Any]) -> "LearnedScheme":
        """The scheme; with ``weights``, sized by the checkpoint's table (whose header is read here)."""
        if values.get("weights") is None:
            for key in ("tensor", "row_offset"):
                if values.get(key) is not None:
                    raise ConfigError(key, "applies to a table read from a checkpoint: give weights too")
            return cls(**values)
        from pecli.weights.checkpoint import find_table

        for key in ("seed", "std"):
            if key in values:
                raise ConfigError(key, "does not apply to a table read from a checkpoint (weights)")
        found = find_table(values["weights"], values.get("tensor"), values.get("row_offset"))
        if values.get("dim") is not None and values["dim"] != found.dim:
            raise ConfigError("dim", f"{values['dim']} differs from the {found.dim} columns of {found.tensor!r}")
        filled = tuple(values.get("length_filled", ()))
        rows = values.get("max_length")
        if rows is None or "max_length" in filled:
            rows = found.rows
        elif rows > found.rows:
            raise ConfigError("max_length", f"{rows} is more than the {found.rows} positions of {found.tensor!r}")
        return cls(**{
            **values, "dim": found.dim, "max_length": rows, "tensor": found.tensor, "row_offset": found.row_offset,
            "length_filled": tuple(key for key in filled if key != "max_length"),
        })

    @property
    def model_length(self) -> int | None:
        """A checkpoint's table: its rows (the positions the model was trained on); else None."""
        return self.max_length if self.weights is not None else None

    @property
    def training_length_key(self) -> str | None:
        return "the checkpoint table's rows" if self.weights is not None else None

    @classmethod
    def defaults_for_length(cls, length: int) -> dict[str, Any]:
        return {"max_length": length}

    @property
    def width(self) -> int:
        return self.dim

    @property
    def parameter_count(self) -> int:
        return int(self.max_length or 0) * self.dim

    def estimate_bytes(self, n_positions: int) -> int:
        table = int(self.max_length or 0) * self.dim * 8
        # Reading a checkpoint's table holds the stored tensor and its float32 copy besides (at most 2 × float64).
        return super().estimate_bytes(n_positions) + table * (3 if self.weights is not None else 1)

    def table(self) -> np.ndarray:
        """The (max_length, dim) table: the checkpoint's (read once, read-only), else drawn from the seed."""
        if self.weights is not None:
            from pecli.weights.checkpoint import read_table

            return read_table(self.weights, str(self.tensor), int(self.row_offset or 0), int(self.max_length or 0))
        rng = np.random.default_rng(self.seed)
        return rng.normal(0.0, self.std, size=(int(self.max_length or 0), self.dim))

    def check_positions(self, positions: np.ndarray) -> None:
        positions = as_positions(positions)
        if positions.size and positions.max() >= (self.max_length or 0):
            first = int(positions[positions >= (self.max_length or 0)][0])
            raise PositionError(
                f"learned positions are undefined past max_length: position {first} has no row "
                f"in a table of {self.max_length}"
            )

    def encode(self, positions: Any) -> np.ndarray:
        positions = as_positions(positions)
        self.check_positions(positions)
        return self.table()[positions]

    def row_encoder(self, positions: np.ndarray, *, exact: bool = True) -> Callable[[np.ndarray], np.ndarray]:
        """Rows of the table, drawn once for every block."""
        self.check_positions(positions)
        table = self.table()
        return lambda ids: table[ids]
