"""Where each setting of a GGUF file's layer group came from: the file's keys, llama.cpp's defaults for the keys
it leaves out, and what llama.cpp's converter wrote in a form of its own.

A group read from a GGUF file (:func:`pecli.models.gguf.plan_of_metadata`) names the keys its settings came
from, as a ``config.json``'s group does (:meth:`pecli.models.plan.LayerGroup.sources_of`):

- a key of the file is a :attr:`~pecli.models.plan.Origin.GGUF` source of the settings it gives
  (:data:`SETTINGS_OF_KEY`; a ``rope.scaling.*`` key the scaling; ``general.architecture`` the layout);
- a key the file leaves out, whose default llama.cpp's loader takes (``rope.freq_base`` 10,000, Gemma 3's
  sliding base 10,000, the original context from ``context_length``), is a
  :attr:`~pecli.models.plan.Origin.DEFAULT` source;
- a tensor ``convert_hf_to_gguf.py`` writes from a HF scaling block (``rope_freqs`` from a llama3 block, the
  LongRoPE factor tensors from a longrope one: :func:`pecli.models.llama_cpp_scaling.written_as`) is a
  :attr:`~pecli.models.plan.Origin.CONVERTER` source naming the block, and so is the q/k permutation of the
  Llama-family converters (``LlamaModel.permute``), which makes llama.cpp's adjacent pairs HF's halves.
"""

from __future__ import annotations

from pecli.models.gguf_metadata import Arch
from pecli.models.llama_cpp_scaling import UNWRITTEN, written_as
from pecli.models.plan import LayerGroup, Origin, Source, stamped

#: The settings each GGUF key (after ``{arch}.``) gives a group: its head dimension (or ALiBi's heads), the
#: rotated part, its context, its base, its scaling. The frequencies a ``rope_freqs`` tensor divides
#: (``inv_freq``) come from the base and the rotated part too.
SETTINGS_OF_KEY = {
    "attention.key_length": ("dim",), "embedding_length": ("dim",), "attention.head_count": ("dim", "heads"),
    "rope.dimension_count": ("partial_rotary_factor", "inv_freq"), "context_length": ("max_position_embeddings",),
    "rope.freq_base": ("base", "inv_freq"), "rope.freq_base_swa": ("base", "inv_freq"),
    "rope.scale_linear": ("rope_scaling",),
}
#: How :attr:`LayerGroup.keys_read <pecli.models.plan.LayerGroup.keys_read>` names a tensor.
TENSOR = " (tensor)"
#: How the q/k rows of a Llama-family converter are named as the source of the group's layout.
PERMUTED_ROWS = Source("layout", "attn_q, attn_k (rows permuted)", Origin.CONVERTER,
                       converted_from="layout half, by LlamaModel.permute")


def gguf_sources(group: LayerGroup, arch_name: str, arch: Arch) -> tuple[Source, ...]:
    """Where each of ``group``'s settings came from (see the module), each stamped with the value it gave."""
    options = group.options or {}
    defaulted = [entry.partition("=")[0] for entry in group.keys_defaulted if not entry.endswith("=absent")]
    swa = f"{arch_name}.rope.freq_base_swa"
    sources = []
    for key, origin in [*((key, Origin.GGUF) for key in group.keys_read), *((key, Origin.DEFAULT) for key in defaulted)]:
        if key.endswith(TENSOR):
            sources.extend(_tensor_sources(key, options))
            continue
        if key == "general.architecture":
            sources.append(Source("layout", key, origin))
            if arch.permuted:
                sources.append(PERMUTED_ROWS)
            continue
        suffix = key[len(arch_name) + 1:] if key.startswith(f"{arch_name}.") else ""
        if suffix == "rope.freq_base" and (swa in group.keys_read or swa in defaulted):
            continue  # a sliding layer's base is the _swa key's (or llama.cpp's default for it)
        if origin is Origin.DEFAULT and not _default_in_block(suffix, options.get("rope_scaling") or {}):
            continue
        settings = ("rope_scaling",) if suffix.startswith("rope.scaling.") else SETTINGS_OF_KEY.get(suffix, ())
        sources.extend(Source(setting, key, origin) for setting in settings)
    return stamped(sources, options)


def _default_in_block(suffix: str, block: dict) -> bool:
    """Whether a scaling key the file leaves out gave the group's scaling its default: the original context
    (``context_length``) where the block holds one, the unwritten type (linear) where the block is of it; a
    key of any other kind is not a scaling key."""
    if suffix == "rope.scaling.original_context_length":
        return "original_max_position_embeddings" in block
    if suffix == "rope.scaling.type":
        return block.get("rope_type") == UNWRITTEN.hf_name
    return not suffix.startswith("rope.scaling.")


def _tensor_sources(key: str, options: dict) -> list[Source]:
    """A position tensor's source: the converter's, from the HF block it writes it for; the frequencies
    (``inv_freq``) where the group holds them, else its scaling (per-pair factors)."""
    entry = written_as(key.removesuffix(TENSOR))
    if entry is None:
        return []
    setting = "inv_freq" if "inv_freq" in options else "rope_scaling"
    return [Source(setting, key, Origin.CONVERTER, converted_from=f"rope_scaling {entry.record.hf_name}")]


__all__ = ["SETTINGS_OF_KEY", "gguf_sources"]
