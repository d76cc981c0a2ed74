"""What the articles pecli was built from claim about each scheme's properties, to set against the measurements.

``pecli compare`` prints a footnote wherever a measured verdict disagrees with a claim (or passes only
with a warning where the claim is unreserved); it never bends the number. Each claim quotes its
article in the original Chinese with an English translation, and names the article by the short label
of the References page, docs/references.md (:data:`ARTICLES`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Article:
    """One of the five articles: the short label pecli cites it by, its title (original and English),
    its author or where it was published."""

    label: str
    title: str
    english_title: str
    author: str


#: The articles by label, in the order of the References page.
ARTICLES: dict[str, Article] = {
    article.label: article
    for article in (
        Article("Conditions", "(untitled)", "the conditions a positional encoding must meet; absolute and rotary "
                "encodings and their extension to multimodal models", "author not named"),
        Article("Fleetwood", "设计位置编码", "Designing positional encodings", "Christopher Fleetwood (Hugging Face blog, "
                "translated by chenin-wang and zhongdongy)"),
        Article("Common-PE", "大模型常用位置编码方式", "Positional encodings commonly used in large models",
                "author not named (xdnf.cn)"),
        Article("EulerBlind", "【理论】深入理解Transformer中的正弦位置编码",
                "[Theory] Understanding the Transformer's sinusoidal positional encoding in depth", "EulerBlind, 2025"),
        Article("PE-explained", "自注意力机制中的位置信息编码详解",
                "Position information encoding in self-attention, explained", "author not named"),
    )
}


@dataclass(frozen=True)
class Claim:
    """An article's claim that ``scheme`` has (``holds=True``) or lacks ``property``.

    ``source`` is the label of the article (or labels, comma-separated), ``quote`` its words in the
    original followed by an English translation in parentheses.
    """

    scheme: str
    property: str
    holds: bool
    source: str
    quote: str


#: The articles' qualitative claims (Conditions' four conditions, Common-PE's closing "总结与选择建议"
#: table and EulerBlind's "方案对比" table), one per (scheme, property).
CLAIMS: tuple[Claim, ...] = (
    Claim("binary", "uniqueness", True, "Conditions", "二进制编码一定是唯一的 (binary encoding is certainly unique)"),
    Claim("binary", "distinguishability", False, "Conditions",
          "7 = 0111 和 8 = 1000 的二进制差异非常大,汉明距离为4 (7 = 0111 and 8 = 1000 differ greatly: Hamming distance 4)"),
    Claim("binary", "composability", False, "Conditions", "不具有可区分性,泛化性和可组合性 (not distinguishable, general or composable)"),
    Claim("binary", "extrapolation", False, "Conditions",
          "在训练长度之外会直接「溢出」,不能自然推广 (past the training length it simply overflows and cannot generalise)"),
    Claim("integer", "extrapolation", False, "Fleetwood",
          "位置值的大小远大于输入的实际值 (the position values are far larger than the inputs themselves)"),
    Claim("sinusoidal", "composability", True, "Fleetwood",
          "找到一个线性变换矩阵 M … 按照固定偏移量 k 进行平移 (a linear map M shifts them by a fixed offset k)"),
    Claim("sinusoidal", "relativity", True, "Conditions", "PE_p·PE_q = Σ_i cos(ω_i (p − q))"),
    Claim("sinusoidal", "extrapolation", False, "Common-PE", "固定位置编码: 无法自适应长序列 (fixed encoding: cannot adapt to long sequences)"),
    Claim("learned", "extrapolation", False, "Common-PE, EulerBlind",
          "依赖预定义长度,泛化性差 (depends on the predefined length; generalises poorly)"),
    Claim("relative", "relativity", True, "Common-PE", "捕捉相对位置关系 (captures relative positions)"),
    Claim("rope", "relativity", True, "EulerBlind", "相对位置: 直接 (relative position: direct)"),
    Claim("rope", "extrapolation", True, "Common-PE, EulerBlind",
          "支持外推 / 外推能力: 优秀 (supports extrapolation / extrapolation: excellent)"),
    Claim("alibi", "relativity", True, "EulerBlind", "相对位置: 直接 (relative position: direct)"),
    Claim("alibi", "extrapolation", True, "EulerBlind", "外推能力: 最优 (extrapolation: the best)"),
)


def claims_for(scheme: str) -> dict[str, Claim]:
    """The claims about ``scheme``, by property."""
    return {c.property: c for c in CLAIMS if c.scheme == scheme}


def disagreement(claim: Claim, verdict: str) -> str | None:
    """What was measured and the verdict of the claim it contradicts, in words; None when they agree.

    A claim that a property holds is a claimed PASS: it disagrees with ``fail`` and, more mildly, with
    ``warn``. A claim that it does not hold is a claimed FAIL: it disagrees with ``pass`` and ``warn``
    (a warning is still a pass).
    """
    measured = {"pass": "PASS", "warn": "WARN (it holds, with a reservation)", "fail": "FAIL"}.get(verdict, verdict)
    if claim.holds and verdict == "fail":
        return f"measured {measured}; the claim says PASS"
    if claim.holds and verdict == "warn":
        return f"measured {measured}; the claim says PASS without reservation"
    if not claim.holds and verdict in ("pass", "warn"):
        return f"measured {measured}; the claim says FAIL"
    return None
