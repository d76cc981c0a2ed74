"""Write the small checkpoints and configs the documentation's model examples read, in the current folder.

Run it from anywhere: ``python examples/toy_checkpoints.py`` (it needs the ``models`` extra, for
safetensors). Each toy has the names and shapes of the real thing at a size that takes no time:

- ``config.json`` + ``model.safetensors`` (+ ``model.safetensors.index.json``): a two-layer Llama in
  HuggingFace's layout (``rotate_half``: pair i is rows i and i + d/2 of each head), head dim 16,
  whose q and k rows feeding pair i have norm i + 1 — the slow pairs are used most;
- ``toy-config.json`` + ``meta-toy.safetensors``: the same model with its weights in Meta's
  interleaved layout (pair i is rows 2i and 2i + 1) under HuggingFace's names and config, as a
  checkpoint converted without the permutation looks;
- ``consolidated.safetensors``: Meta's own names (``layers.0.attention.wq.weight``), 32 heads of 16;
- ``k.npy``: a (256, 64) k projection of two heads of 128, in HuggingFace's layout;
- ``gpt2-toy.safetensors``: GPT-2's names (``wpe.weight``), a learned table of 64 positions of 16 on a
  straight line, one unit apart;
- ``gemma-3-4b.json``: Gemma 3 4B's text config (per-layer bases, a linear scaling on the global layers);
- ``toy-llama/config.json``: the Llama's folder, as ``from_pretrained`` and ``--hf-config`` take it;
- ``toy.gguf`` (with the ``gguf`` package, which the ``gguf`` and ``test`` extras bring): the Llama's
  position keys as ``convert_hf_to_gguf.py`` writes them, and no weights; ``toy-base.gguf`` the same with
  ``llama.rope.freq_base`` 500,000, a converter's slip.
"""

from __future__ import annotations

import json
import os

import numpy as np

HEAD_DIM, HEADS, KV_HEADS, HIDDEN, LAYERS = 16, 4, 2, 64, 2
LLAMA = {"model_type": "llama", "hidden_size": HIDDEN, "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS,
         "num_hidden_layers": LAYERS, "rope_theta": 10000.0, "max_position_embeddings": 4096}
GEMMA = {"model_type": "gemma3_text", "hidden_size": 2560, "num_attention_heads": 8, "head_dim": 256,
         "num_hidden_layers": 34, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
         "rope_scaling": {"rope_type": "linear", "factor": 8.0}, "sliding_window_pattern": 6,
         "max_position_embeddings": 131072}


def projection(heads: int, head_dim: int, hidden: int, layout: str, rng: np.random.Generator) -> np.ndarray:
    """A q or k projection whose two rows of pair i (every head) have joint norm i + 1, at a random angle."""
    pairs = head_dim // 2
    weight = np.zeros((heads * head_dim, hidden), np.float32)
    for head in range(heads):
        for i in range(pairs):
            phi = rng.uniform(0, 2 * np.pi)
            first, second = (i, i + pairs) if layout == "half" else (2 * i, 2 * i + 1)
            weight[head * head_dim + first, (head + i) % hidden] = (i + 1) * np.cos(phi)
            weight[head * head_dim + second, (head + i + 1) % hidden] = (i + 1) * np.sin(phi)
    return weight


def llama(layout: str) -> dict[str, np.ndarray]:
    """The toy Llama's tensors under HuggingFace's names, its q and k rows in ``layout``."""
    rng = np.random.default_rng(7)
    tensors = {"model.embed_tokens.weight": np.zeros((8, HIDDEN), np.float32)}
    for layer in range(LAYERS):
        tensors[f"model.layers.{layer}.self_attn.q_proj.weight"] = projection(HEADS, HEAD_DIM, HIDDEN, layout, rng)
        tensors[f"model.layers.{layer}.self_attn.k_proj.weight"] = projection(KV_HEADS, HEAD_DIM, HIDDEN, layout, rng)
    return tensors


def main() -> None:
    from safetensors.numpy import save_file

    rng = np.random.default_rng(8)
    save_file(llama("half"), "model.safetensors")
    index = {"metadata": {}, "weight_map": {name: "model.safetensors" for name in llama("half")}}
    save_file(llama("interleaved"), "meta-toy.safetensors")
    save_file({"layers.0.attention.wq.weight": projection(32, HEAD_DIM, 128, "interleaved", rng)},
              "consolidated.safetensors")
    np.save("k.npy", projection(2, 128, 64, "half", rng))
    direction = np.full(16, 0.25, np.float32)  # a unit vector: position p is p steps of length 1 along it
    save_file({"wpe.weight": np.arange(64, dtype=np.float32)[:, None] * direction, "wte.weight": np.ones((8, 16), np.float32)}, "gpt2-toy.safetensors")
    for name, content in (("model.safetensors.index.json", index), ("config.json", LLAMA),
                          ("toy-config.json", LLAMA), ("gemma-3-4b.json", GEMMA)):
        with open(name, "w", encoding="utf-8") as stream:
            json.dump(content, stream, indent=2)
    os.makedirs("toy-llama", exist_ok=True)
    with open(os.path.join("toy-llama", "config.json"), "w", encoding="utf-8") as stream:
        json.dump(LLAMA, stream, indent=2)
    try:
        import gguf  # noqa: F401
    except ModuleNotFoundError:
        return
    gguf_file("toy.gguf", LLAMA["rope_theta"])
    gguf_file("toy-base.gguf", 500000.0)


def gguf_file(path: str, base: float) -> None:
    """The toy Llama's keys in a weightless GGUF file, typed as llama.cpp's converter types them."""
    import gguf

    writer = gguf.GGUFWriter(path, "llama")
    for key, value in (("block_count", LAYERS), ("context_length", LLAMA["max_position_embeddings"]),
                       ("embedding_length", HIDDEN), ("attention.head_count", HEADS),
                       ("attention.head_count_kv", KV_HEADS), ("rope.dimension_count", HEAD_DIM)):
        writer.add_uint32(f"llama.{key}", value)
    writer.add_float32("llama.rope.freq_base", base)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    main()
