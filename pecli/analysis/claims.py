"""What the seed articles claim about each scheme's properties, to set against the measurements.

``pecli compare`` prints a footnote wherever a measured verdict disagrees with a claim (or passes only
with a warning where the claim is unreserved); it never bends the number. Each claim quotes its source.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Claim:
    """A seed's claim that ``scheme`` has (``holds=True``) or lacks ``property``."""

    scheme: str
    property: str
    holds: bool
    source: str
    quote: str


#: The seeds' qualitative claims (seed 000's conditions, seed 002's "总结与选择建议" table and seed 003's
#: "方案对比" table), one per (scheme, property).
CLAIMS: tuple[Claim, ...] = (
    Claim("binary", "uniqueness", True, "seed 000", "二进制编码一定是唯一的 (binary is certainly unique)"),
    Claim("binary", "distinguishability", False, "seed 000", "不具有可区分性 (7 = 0111 and 8 = 1000: Hamming distance 4)"),
    Claim("binary", "composability", False, "seed 000", "不具有…可组合性 (not composable)"),
    Claim("binary", "extrapolation", False, "seed 000", "300 needs 9 bits after training on 256 with 8: overflow"),
    Claim("integer", "extrapolation", False, "seed 001", "raw positions grow without bound and dwarf the embeddings"),
    Claim("sinusoidal", "composability", True, "seed 001", "PE_(p+k) = M_k PE_p, M_k a block-diagonal rotation"),
    Claim("sinusoidal", "relativity", True, "seed 000", "PE_p·PE_q = Σ cos(ω_i (p − q))"),
    Claim("sinusoidal", "extrapolation", False, "seed 002", "固定位置编码…无法自适应长序列 (cannot adapt to long sequences)"),
    Claim("learned", "extrapolation", False, "seeds 002, 003", "依赖预定义长度,泛化性差 (depends on the predefined length)"),
    Claim("relative", "relativity", True, "seed 002", "捕捉相对位置关系 (captures relative positions)"),
    Claim("rope", "relativity", True, "seed 003", "相对位置: 直接 (relative position: direct)"),
    Claim("rope", "extrapolation", True, "seeds 002, 003", "支持外推 / 外推能力: 优秀 (extrapolates well)"),
    Claim("alibi", "relativity", True, "seed 003", "相对位置: 直接 (relative position: direct)"),
    Claim("alibi", "extrapolation", True, "seed 003", "外推能力: 最优 (the best extrapolation)"),
)


def claims_for(scheme: str) -> dict[str, Claim]:
    """The claims about ``scheme``, by property."""
    return {c.property: c for c in CLAIMS if c.scheme == scheme}


def disagreement(claim: Claim, verdict: str) -> str | None:
    """How a measured verdict departs from a claim, in words; None when they agree.

    A claim that a property holds disagrees with ``fail`` and, more mildly, with ``warn``; a claim that
    it does not hold disagrees with ``pass`` and ``warn``.
    """
    if claim.holds and verdict == "fail":
        return "measured: it fails"
    if claim.holds and verdict == "warn":
        return "measured: it passes only with a warning"
    if not claim.holds and verdict in ("pass", "warn"):
        return "measured: it holds" + (" (with a warning)" if verdict == "warn" else "")
    return None
