"""What ``pecli verify`` answers: the verdict, the largest error and the worst ratio, and the causes named."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pecli.notebook import Tabular


@dataclass(frozen=True)
class Diagnosis:
    code: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True, repr=False)
class VerifyReport(Tabular):
    """The verdict, the largest error and the worst error-to-tolerance ratio (each with where it is),
    and, when the arrays differ, the causes that explain them."""

    match: bool
    #: The largest |Δ| of any element, and where: its position and component (a vector of values has
    #: no position: None), with the tolerance there.
    max_abs_error: float
    worst_position: int | None
    worst_dim: int
    tolerance: float
    dtype: str
    diagnosis: tuple[Diagnosis, ...] = ()
    notes: tuple[str, ...] = field(default=())
    #: The precision the values are stored in, when narrower than ``dtype`` (float32 arrays of bfloat16 values).
    values: str | None = None
    #: The worst error over its tolerance, and where (None: the same element as the largest error).
    ratio: float | None = None
    ratio_position: int | None = None
    ratio_dim: int | None = None
    ratio_tolerance: float | None = None

    @property
    def stored(self) -> str:
        """The dtype, with the precision of its values when narrower: ``float32 (bfloat16 values)``."""
        return self.dtype if self.values in (None, self.dtype) else f"{self.dtype} ({self.values} values)"

    def where(self, position: int | None, dim: int | None) -> str:
        return f"value {dim}" if position is None else f"position {position:,}, component {dim}"

    def table_title(self) -> str:
        return "pecli verify: " + ("MATCH" if self.match else "DIFFER")

    def table_rows(self) -> list[dict[str, Any]]:
        """The dtype, the largest error and the worst ratio (each with where and its tolerance), then a row
        per cause named and per note: the rows ``pecli verify`` prints under its verdict."""
        rows = [{"item": "dtype", "value": self.stored}, {"item": "max abs error", "value": self.max_abs_error},
                {"item": "at", "value": self.where(self.worst_position, self.worst_dim)},
                {"item": "tolerance there", "value": self.tolerance}]
        if self.ratio is not None:
            rows += [{"item": "worst error/tol.", "value": self.ratio},
                     {"item": "at", "value": self.where(self.ratio_position, self.ratio_dim)},
                     {"item": "tolerance there", "value": self.ratio_tolerance}]
        rows += [{"item": f"cause: {d.code}", "value": d.message} for d in self.diagnosis]
        return rows + [{"item": "note", "value": note} for note in self.notes]

    def to_dict(self) -> dict[str, Any]:
        ratio = None if self.ratio is None else {"ratio": self.ratio, "position": self.ratio_position,
                                                 "dim": self.ratio_dim, "tolerance": self.ratio_tolerance}
        return {"match": self.match, "max_abs_error": self.max_abs_error,
                "worst": {"position": self.worst_position, "dim": self.worst_dim}, "tolerance": self.tolerance,
                "worst_ratio": ratio, "dtype": self.dtype, "values": self.values or self.dtype,
                "diagnosis": [d.to_dict() for d in self.diagnosis], "notes": list(self.notes)}
