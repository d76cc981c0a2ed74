"""Which rotary frequency pairs a model's q and k projections use, and in which layout they were trained.

RoPE rotates the two components of pair i of every query and key head by p·θ_i. The rows of the
query projection ``W_q`` (shape ``(heads·head_dim, hidden)``) that produce those two components feed
pair i; the norm of those two rows, ``‖W_q[h, first_i]‖² + ‖W_q[h, second_i]‖²`` under a square root,
measures how much head h can put into pair i, whatever the input. Barbero et al. 2024 ("Round and round
we go! What makes rotary positional encodings useful?", ICLR 2025) measure the same per-pair usage on
queries and keys of Gemma and find that trained models put most of the norm in the low frequencies (long
wavelengths), using the high ones for positional heads — the observation behind p-RoPE, which stops
rotating the lowest frequencies.

Keys are per key-value head (``num_key_value_heads``: grouped-query attention), and the pairs follow
the layout of the weights: HF's ``half`` layout (``rotate_half``) pairs components i and i + d/2 of a
head, Meta's and GPT-J's ``interleaved`` layout pairs 2i and 2i + 1.

:func:`layout_evidence` tells the two layouts apart from the weights alone. A rotation inside a pair's
plane, applied to both q and k, leaves every attention score unchanged, so training fixes nothing about
a pair's orientation: the norm of a true pair (both rows) is free of that arbitrary orientation and
follows a smooth spectrum over i, while a wrong pairing joins rows of two different pairs, each with its
own orientation, and comes out ragged. The reading whose per-head spectra are smoother is the layout the
weights were trained in.

Weights are read one tensor at a time (:class:`~pecli.weights.checkpoint.Checkpoint`): memory stays
that of the largest projection, whatever the number of layers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from pecli.errors import PecliError
from pecli.weights.checkpoint import Checkpoint
from pecli.progress import task

#: The names of the per-layer q and k projections: HF (``model.layers.N.self_attn.q_proj.weight``) and
#: Meta's original checkpoints (``layers.N.attention.wq.weight``).
PROJECTION_NAMES = (
    re.compile(r"^(?P<prefix>.*?)layers\.(?P<layer>\d+)\.self_attn\.(?P<which>[qk])_proj\.weight$"),
    re.compile(r"^(?P<prefix>.*?)layers\.(?P<layer>\d+)\.attention\.w(?P<which>[qk])\.weight$"),
)

LAYOUTS = ("half", "interleaved")

#: check layout says which layout only when the rougher reading is at least this many times as rough.
DECISIVE_RATIO = 1.5


@dataclass(frozen=True)
class Projections:
    """The q and k projection tensors of one layer."""

    layer: int
    q: str
    k: str


def find_projections(checkpoint: Checkpoint) -> list[Projections]:
    """Every layer's q and k projection tensors, by layer; :class:`PecliError` when there are none."""
    found: dict[int, dict[str, str]] = {}
    for name in checkpoint.names():
        for pattern in PROJECTION_NAMES:
            match = pattern.match(name)
            if match:
                found.setdefault(int(match["layer"]), {})[match["which"]] = name
                break
    layers = [Projections(layer, names["q"], names["k"]) for layer, names in sorted(found.items()) if len(names) == 2]
    if not layers:
        raise PecliError(
            f"{checkpoint.path} has no q and k projections (layers.N.self_attn.q_proj.weight or "
            "layers.N.attention.wq.weight); fused query_key_value weights are not read"
        )
    return layers


def layout_pairs(layout: str, rotated_dim: int) -> tuple[np.ndarray, np.ndarray]:
    """The components (first, second) of each pair in a head of ``rotated_dim`` rotated components.

    ``half``: (i, i + d/2), HF's ``rotate_half``; ``interleaved``: (2i, 2i + 1), Meta's and GPT-J's.
    """
    pairs = np.arange(rotated_dim // 2)
    if layout == "half":
        return pairs, pairs + rotated_dim // 2
    return 2 * pairs, 2 * pairs + 1


def row_energy(weight: np.ndarray, head_dim: int, what: str) -> np.ndarray:
    """Squared norm of every row, per head: shape (heads, head_dim), float64."""
    rows, hidden = weight.shape if weight.ndim == 2 else (0, 0)
    if weight.ndim != 2 or rows % head_dim:
        raise PecliError(f"{what} has shape {list(weight.shape)}: its rows are not a whole number of heads of {head_dim}")
    return np.square(weight.reshape(rows // head_dim, head_dim, hidden)).sum(axis=-1, dtype=np.float64)


def pair_norms(energy: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Per head and pair i, the norm of the two rows feeding it: √(‖w_first‖² + ‖w_second‖²)."""
    return np.sqrt(energy[:, first] + energy[:, second])


@dataclass(frozen=True)
class RopeUsage:
    """Per layer, head and frequency pair, the norm of the q and k projection rows feeding the pair.

    Attributes
    ----------
    layers:
        The layer numbers, in order.
    inv_freq:
        θ_i of each pair (0 for pairs that do not rotate).
    q, k:
        Arrays (layers, heads, pairs) and (layers, kv_heads, pairs).
    head_dim, layout:
        The head dimension and the layout the pairs were read in.
    """

    layers: tuple[int, ...]
    inv_freq: np.ndarray
    q: np.ndarray
    k: np.ndarray
    head_dim: int
    layout: str
    checkpoint: str = ""

    @property
    def wavelengths(self) -> np.ndarray:
        """2π/θ_i in tokens (infinite for unrotated pairs)."""
        with np.errstate(divide="ignore"):
            return np.where(self.inv_freq > 0, 2 * np.pi / np.where(self.inv_freq > 0, self.inv_freq, 1.0), np.inf)

    @property
    def heads(self) -> int:
        return int(self.q.shape[1])

    @property
    def kv_heads(self) -> int:
        return int(self.k.shape[1])

    @property
    def pairs(self) -> int:
        return int(self.inv_freq.size)

    def layer_pair(self, which: str = "q") -> np.ndarray:
        """(layers, pairs): the pair norms of ``q`` or ``k`` averaged over heads."""
        return (self.q if which == "q" else self.k).mean(axis=1)

    def pair_share(self, which: str = "q") -> np.ndarray:
        """(pairs,): each pair's share of the squared norm, over every layer and head."""
        energy = np.square(self.q if which == "q" else self.k).sum(axis=(0, 1))
        return energy / energy.sum() if energy.sum() > 0 else energy

    def low_frequency_share(self, which: str = "q") -> np.ndarray:
        """(layers,): the share of each layer's squared norm in the slower half of the pairs (i ≥ n/2)."""
        energy = np.square(self.q if which == "q" else self.k).sum(axis=1)
        total = energy.sum(axis=1)
        return energy[:, self.pairs // 2 :].sum(axis=1) / np.where(total > 0, total, 1.0)

    def to_dict(self) -> dict[str, Any]:
        q_layers, k_layers = self.layer_pair("q"), self.layer_pair("k")
        q_slow, k_slow = self.low_frequency_share("q"), self.low_frequency_share("k")
        per_pair = zip(q_layers.mean(axis=0), k_layers.mean(axis=0), self.pair_share("q"), self.pair_share("k"))
        return {
            "checkpoint": self.checkpoint, "layout": self.layout, "head_dim": self.head_dim, "heads": self.heads,
            "kv_heads": self.kv_heads, "layers": list(self.layers),
            "pairs": [
                {"pair": i, "inv_freq": float(self.inv_freq[i]), "wavelength": float(self.wavelengths[i]),
                 "q_norm": float(q), "k_norm": float(k), "q_share": float(qs), "k_share": float(ks)}
                for i, (q, k, qs, ks) in enumerate(per_pair)
            ],
            "per_layer": [
                {"layer": layer, "q_norm": q_layers[n].tolist(), "k_norm": k_layers[n].tolist(),
                 "q_low_frequency_share": float(q_slow[n]), "k_low_frequency_share": float(k_slow[n])}
                for n, layer in enumerate(self.layers)
            ],
            "q_heads": self.q.tolist(),
            "k_heads": self.k.tolist(),
        }


def open_projections(weights: str) -> tuple[Checkpoint, list[Projections]]:
    """The checkpoint ``weights`` and every layer's q/k projections in it, read from its header only
    (a missing file is a ConfigError naming ``weights``; a file without projections a PecliError)."""
    checkpoint = Checkpoint(weights)
    return checkpoint, find_projections(checkpoint)


def projection_bytes(checkpoint: Checkpoint, layers: list[Projections]) -> int:
    """What reading one projection at a time holds at most: the stored tensor, its float32 copy, the squares."""
    return max(checkpoint.info(name).read_bytes() + 4 * checkpoint.info(name).size for p in layers for name in (p.q, p.k))


def energies(checkpoint: Checkpoint, head_dim: int, label: str) -> Iterator[tuple[Projections, np.ndarray, np.ndarray]]:
    """Each layer's row energies of q and k (per head), reading one tensor at a time, with progress."""
    layers = find_projections(checkpoint)
    with task(label, total=2 * len(layers)) as bar:
        for layer in layers:
            q = row_energy(checkpoint.read(layer.q), head_dim, layer.q)
            bar.advance()
            k = row_energy(checkpoint.read(layer.k), head_dim, layer.k)
            bar.advance()
            yield layer, q, k


def rope_usage(checkpoint: Checkpoint, *, head_dim: int, first: np.ndarray, second: np.ndarray,
               inv_freq: np.ndarray, layout: str) -> RopeUsage:
    """The per-pair usage of every layer's q and k projections (see the module's docstring).

    Parameters
    ----------
    head_dim:
        Components per head: ``head_dim`` of the config, else ``hidden_size / num_attention_heads``.
    first, second:
        The components of each pair within a head (:func:`layout_pairs`, or a scheme's FrequencyPairs).
    inv_freq:
        θ_i of each pair, for the wavelengths.
    """
    layers, q_norms, k_norms = [], [], []
    for layer, q, k in energies(checkpoint, head_dim, "rope usage"):
        layers.append(layer.layer)
        q_norms.append(pair_norms(q, first, second))
        k_norms.append(pair_norms(k, first, second))
    return RopeUsage(tuple(layers), np.asarray(inv_freq, dtype=np.float64), np.stack(q_norms), np.stack(k_norms),
                     head_dim, layout, str(checkpoint.path))


# -- which layout -------------------------------------------------------------------------------------
def roughness(norms: np.ndarray) -> float:
    """Mean squared step of log norm between neighbouring pairs, per head, averaged: 0 for a smooth spectrum."""
    logs = np.log(np.maximum(norms, np.finfo(np.float64).tiny))
    return float(np.mean(np.square(np.diff(logs, axis=-1)))) if norms.shape[-1] > 1 else 0.0


@dataclass(frozen=True)
class LayoutEvidence:
    """How ragged the per-pair usage spectra are under each reading of the weights.

    Attributes
    ----------
    roughness:
        By layout: the mean squared step of log pair norm between neighbouring pairs, over every head of
        every layer's q and k.
    layers:
        How many layers were read.
    """

    roughness: dict[str, float]
    layers: int
    pairs: int
    head_dim: int
    spectra: dict[str, np.ndarray] = field(default_factory=dict, compare=False)

    @property
    def smoother(self) -> str:
        return min(self.roughness, key=self.roughness.get)

    @property
    def ratio(self) -> float:
        """How many times rougher the other reading is than the smoother one."""
        low, high = sorted(self.roughness.values())
        return high / low if low > 0 else (np.inf if high > 0 else 1.0)

    @property
    def decided(self) -> bool:
        return self.ratio >= DECISIVE_RATIO


def layout_evidence(checkpoint: Checkpoint, *, head_dim: int, rotated_dim: int) -> LayoutEvidence:
    """Read every layer's q and k under both layouts and measure the roughness of their spectra."""
    if rotated_dim < 4:
        raise PecliError(f"a head of {rotated_dim} rotated components has one pair: the layouts are the same")
    readings = {layout: layout_pairs(layout, rotated_dim) for layout in LAYOUTS}
    total = {layout: 0.0 for layout in LAYOUTS}
    spectra = {layout: np.zeros(rotated_dim // 2) for layout in LAYOUTS}
    count = 0
    for _, q, k in energies(checkpoint, head_dim, "check layout"):
        count += 1
        for layout, (first, second) in readings.items():
            for energy in (q, k):
                norms = pair_norms(energy, first, second)
                total[layout] += roughness(norms)
                spectra[layout] += norms.mean(axis=0)
    return LayoutEvidence(
        {layout: value / (2 * count) for layout, value in total.items()}, count, rotated_dim // 2, head_dim,
        {layout: value / (2 * count) for layout, value in spectra.items()},
    )


def usage_of(weights: str | None, scheme, max_bytes: int | None = None) -> RopeUsage:
    """The :class:`RopeUsage` of checkpoint ``weights`` read with the pairs of rotary ``scheme``.

    The head dimension is the scheme's width (``head_dim``, else hidden / heads, from a config); the
    pairs and their θ_i are the scheme's :class:`~pecli.schemes.frequencies.FrequencyPairs`.
    """
    from pecli.errors import ConfigError

    if not weights:
        raise ConfigError("weights", "give the checkpoint whose q/k projections are read (--weights FILE)")
    checkpoint = Checkpoint(weights)
    if max_bytes is not None:
        from pecli.memory import check_memory

        check_memory(projection_bytes(checkpoint, find_projections(checkpoint)), max_bytes, "reading one projection")
    pairs = scheme.frequency_pairs()
    return rope_usage(checkpoint, head_dim=scheme.width, first=pairs.first, second=pairs.second,
                      inv_freq=pairs.inv_freq, layout=pairs_layout(pairs))


def pairs_layout(pairs) -> str:
    """``interleaved`` when every pair is two neighbouring components, else ``half``."""
    return "interleaved" if pairs.count > 1 and bool((pairs.second == pairs.first + 1).all()) else "half"
