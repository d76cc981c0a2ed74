"""Public model configs, and tiny weightless GGUF files written from them the way llama.cpp's
``convert_hf_to_gguf.py`` writes them (with ``gguf.GGUFWriter``), faithfully or with a conversion bug.

The converter's conventions are written here from its source, independently of pecli: the key names
(``{arch}.rope.freq_base``, ``rope.scaling.*``, ``context_length``, …), Llama 3.1's scaling as the
``rope_freqs`` tensor (the llama3 formula: the factor by which each pair's frequency is divided),
Phi-3's LongRoPE factors as ``rope_factors_long``/``_short`` with ``rope.scaling.attn_factor`` =
sqrt(1 + ln(max/original) / ln(original)), DeepSeek's ``yarn_log_multiplier`` = 0.1 · mscale_all_dim.
"""

from __future__ import annotations

import math

import numpy as np

LLAMA31 = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 32,
           "max_position_embeddings": 131072, "rope_theta": 500000.0,
           "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                            "original_max_position_embeddings": 8192}}
CODE_LLAMA = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 32,
              "max_position_embeddings": 16384, "rope_theta": 1000000.0}
VICUNA_16K = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 32,
              "max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 4.0}}
QWEN25_YARN = {"model_type": "qwen2", "hidden_size": 3584, "num_attention_heads": 28, "num_hidden_layers": 28,
               "max_position_embeddings": 32768, "rope_theta": 1000000.0,
               "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}
QWEN3_MOE_YARN = {"model_type": "qwen3_moe", "hidden_size": 2048, "num_attention_heads": 32, "head_dim": 128,
                  "num_hidden_layers": 48, "max_position_embeddings": 131072, "rope_theta": 1000000.0,
                  "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}
PHI3_SHORT = [1.05, 1.05, 1.05, 1.1, 1.1, 1.1, 1.25, 1.25, 1.4, 1.45, 1.6, 1.7, 1.9, 2.0, 2.1, 2.3, 2.5, 2.7, 2.9,
              3.1, 3.4, 3.7, 4.1, 4.5, 5.0, 5.5, 6.0, 6.6, 7.3, 8.0, 8.9, 9.8, 10.8, 11.9, 13.1, 14.4, 15.8, 17.4,
              19.1, 21.0, 23.1, 25.4, 27.9, 30.7, 33.8, 37.2, 40.9, 45.0]
PHI3_LONG = [1.08, 1.11, 1.14, 1.34, 1.59, 1.6, 1.62, 2.65, 3.0, 3.2, 3.5, 5.0, 6.5, 7.6, 10.8, 11.7, 14.6, 18.1,
             19.6, 22.4, 27.1, 29.5, 33.8, 38.1, 43.1, 47.7, 49.1, 50.6, 52.7, 53.7, 54.4, 56.8, 57.3, 58.9, 59.7,
             60.5, 61.0, 62.0, 62.3, 62.6, 62.9, 63.3, 63.6, 63.8, 64.0, 64.2, 64.3, 64.4]
PHI3 = {"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32, "num_hidden_layers": 32,
        "max_position_embeddings": 131072, "original_max_position_embeddings": 4096, "rope_theta": 10000.0,
        "rope_scaling": {"type": "longrope", "short_factor": PHI3_SHORT, "long_factor": PHI3_LONG}}
GEMMA3 = {"model_type": "gemma3_text", "hidden_size": 2560, "num_attention_heads": 8, "head_dim": 256,
          "num_hidden_layers": 34, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
          "rope_scaling": {"rope_type": "linear", "factor": 8.0}, "sliding_window_pattern": 6,
          "max_position_embeddings": 131072}
DEEPSEEK_V3 = {"model_type": "deepseek_v3", "hidden_size": 7168, "num_attention_heads": 128, "num_hidden_layers": 61,
               "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "max_position_embeddings": 163840,
               "rope_theta": 10000.0,
               "rope_scaling": {"type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096,
                                "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0}}
PHI2 = {"model_type": "phi", "hidden_size": 2560, "num_attention_heads": 32, "num_hidden_layers": 32,
        "partial_rotary_factor": 0.4, "rope_theta": 10000.0, "max_position_embeddings": 2048}
BLOOM = {"model_type": "bloom", "hidden_size": 1024, "n_head": 16, "n_layer": 24}
STARCODER2 = {"model_type": "starcoder2", "hidden_size": 3072, "num_attention_heads": 24, "num_hidden_layers": 30,
              "rope_theta": 999999.4420358813, "max_position_embeddings": 16384}


def llama3_rope_freqs(config: dict) -> np.ndarray:
    """The converter's ``rope_freqs``: 1 for short wavelengths, the factor for long ones, and between
    them 1 / ((1 − smooth)/factor + smooth) (Meta's apply_scaling, as a divisor), float32."""
    block, dim = config["rope_scaling"], config["hidden_size"] // config["num_attention_heads"]
    factor, low, high = block["factor"], block["low_freq_factor"], block["high_freq_factor"]
    original = block["original_max_position_embeddings"]
    out = []
    for i in range(0, dim, 2):
        wavelength = 2 * math.pi * config["rope_theta"] ** (i / dim)
        if wavelength < original / high:
            out.append(1.0)
        elif wavelength > original / low:
            out.append(factor)
        else:
            smooth = (original / wavelength - low) / (high - low)
            out.append(1.0 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def write_gguf(path, arch: str, keys: dict, tensors: dict | None = None) -> str:
    """A weightless GGUF file: ``keys`` without the ``{arch}.`` prefix, typed as the converter types them."""
    import gguf

    writer = gguf.GGUFWriter(str(path), arch)
    for key, value in keys.items():
        name = f"{arch}.{key}"
        if isinstance(value, str):
            writer.add_string(name, value)
        elif isinstance(value, float):
            writer.add_float32(name, value)
        else:
            writer.add_uint32(name, int(value))
    for name, array in (tensors or {}).items():
        writer.add_tensor(name, np.asarray(array, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return str(path)


def llama_keys(config: dict) -> dict:
    head = config["hidden_size"] // config["num_attention_heads"]
    keys = {"block_count": config["num_hidden_layers"], "context_length": config["max_position_embeddings"],
            "embedding_length": config["hidden_size"], "attention.head_count": config["num_attention_heads"],
            "rope.dimension_count": config.get("head_dim", head)}
    if "head_dim" in config:
        keys["attention.key_length"] = config["head_dim"]
    if "rope_theta" in config:
        keys["rope.freq_base"] = float(config["rope_theta"])
    block = config.get("rope_scaling") or {}
    kind = block.get("rope_type") or block.get("type")
    if kind == "linear":
        keys.update({"rope.scaling.type": "linear", "rope.scaling.factor": float(block["factor"])})
    elif kind == "yarn":
        keys.update({"rope.scaling.type": "yarn", "rope.scaling.factor": float(block["factor"]),
                     "rope.scaling.original_context_length": block["original_max_position_embeddings"]})
    return keys


def convert(tmp_path, name: str, bug: str | None = None) -> tuple[str, dict]:
    """(the GGUF file's path, the config) of public model ``name``, converted faithfully or with ``bug``."""
    config = {"llama31": LLAMA31, "code_llama": CODE_LLAMA, "vicuna16k": VICUNA_16K, "qwen25": QWEN25_YARN,
              "qwen3moe": QWEN3_MOE_YARN, "phi3": PHI3, "gemma3": GEMMA3, "deepseek_v3": DEEPSEEK_V3,
              "phi2": PHI2, "bloom": BLOOM, "starcoder2": STARCODER2}[name]
    arch, keys, tensors = _converted(name, config)
    for drop in {"rope_freqs": ["rope_freqs.weight"], "linear_dropped": ["rope.scaling.type", "rope.scaling.factor"],
                 "base_missing": ["rope.freq_base"],
                 "yarn_missing": ["rope.scaling.type", "rope.scaling.factor", "rope.scaling.original_context_length"],
                 "log_mul_missing": ["rope.scaling.yarn_log_multiplier"],
                 }.get(bug, []):
        keys.pop(drop, None)
        tensors.pop(drop, None)
    if bug == "swa_global_base":
        keys["rope.freq_base_swa"] = float(config["rope_theta"])
    if bug == "ext_factor":
        keys["rope.scaling.yarn_ext_factor"] = float(config["rope_scaling"]["factor"])
    return write_gguf(tmp_path / f"{name}-{bug or 'ok'}.gguf", arch, keys, tensors), config


def _converted(name: str, config: dict) -> tuple[str, dict, dict]:
    if name in ("llama31", "code_llama", "vicuna16k", "qwen25", "qwen3moe", "starcoder2"):
        arch = {"qwen25": "qwen2", "qwen3moe": "qwen3moe", "starcoder2": "starcoder2"}.get(name, "llama")
        tensors = {"rope_freqs.weight": llama3_rope_freqs(config)} if name == "llama31" else {}
        return arch, llama_keys(config), tensors
    if name == "phi3":
        original, longest = config["original_max_position_embeddings"], config["max_position_embeddings"]
        keys = {**llama_keys(config), "rope.scaling.original_context_length": original,
                "rope.scaling.attn_factor": math.sqrt(1 + math.log(longest / original) / math.log(original))}
        return "phi3", keys, {"rope_factors_long.weight": PHI3_LONG, "rope_factors_short.weight": PHI3_SHORT}
    if name == "gemma3":
        keys = {**llama_keys(config), "attention.sliding_window": 1024}
        return "gemma3", keys, {}
    if name == "deepseek_v3":
        block = config["rope_scaling"]
        keys = {"block_count": 61, "context_length": 163840, "embedding_length": 7168, "attention.head_count": 128,
                "attention.key_length": 192, "rope.dimension_count": 64, "rope.freq_base": 10000.0,
                "rope.scaling.type": "yarn", "rope.scaling.factor": 40.0, "rope.scaling.original_context_length": 4096,
                "rope.scaling.yarn_log_multiplier": 0.1 * block["mscale_all_dim"]}
        return "deepseek2", keys, {}
    if name == "phi2":
        return "phi2", {"block_count": 32, "context_length": 2048, "embedding_length": 2560, "attention.head_count": 32,
                        "rope.dimension_count": 32}, {}
    return "bloom", {"block_count": 24, "context_length": 2048, "embedding_length": 1024, "attention.head_count": 16}, {}


def sparse_gguf(folder) -> str:
    """A Qwen2 GGUF file whose header declares one 50,000 × 50,000 F32 tensor (10 GB), extended sparsely
    to hold it: a multi-GB file on disk that costs nothing to make."""
    import os

    import gguf

    path = os.path.join(str(folder), "big.gguf")
    writer = gguf.GGUFWriter(path, "qwen2")
    for key, value in {"block_count": 28, "context_length": 32768, "embedding_length": 3584,
                       "attention.head_count": 28}.items():
        writer.add_uint32(f"qwen2.{key}", value)
    writer.add_float32("qwen2.rope.freq_base", 1e6)
    writer.add_tensor_info("blk.0.attn_q.weight", (50000, 50000), np.dtype(np.float32), 50000 * 50000 * 4)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    writer.close()
    header = os.path.getsize(path)
    os.truncate(path, header + (-header) % 32 + 50000 * 50000 * 4)
    return path


def realistic_gguf(path, *, vocab: int = 128256, merges: int = 280000, base: float | None = None) -> str:
    """A Llama 3.1 8B GGUF file of real shape: its position keys and ``rope_freqs`` as the converter writes
    them, a tokenizer of ``vocab`` tokens and ``merges`` merges in the header (9 MB for Llama 3's), then a
    50,000 × 50,000 F32 weight tensor (10 GB, sparse on disk) after the ``rope_freqs`` data. ``base``:
    ``rope.freq_base`` written wrongly."""
    import os

    import gguf

    config = LLAMA31
    writer = gguf.GGUFWriter(str(path), "llama")
    keys = llama_keys(config)
    if base is not None:
        keys["rope.freq_base"] = float(base)
    for key, value in keys.items():
        if isinstance(value, float):
            writer.add_float32(f"llama.{key}", value)
        else:
            writer.add_uint32(f"llama.{key}", int(value))
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list([f"tok{i}" for i in range(vocab)])
    writer.add_token_types([1] * vocab)
    writer.add_token_merges([f"t{i} o{i}" for i in range(merges)])
    factors = llama3_rope_freqs(config)
    writer.add_tensor_info("rope_freqs.weight", factors.shape, factors.dtype, factors.nbytes)
    writer.add_tensor_info("blk.0.ffn_up.weight", (50000, 50000), np.dtype(np.float32), 50000 * 50000 * 4)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    writer.close()
    header = os.path.getsize(path)
    data = header + (-header) % 32
    with open(path, "r+b") as stream:
        stream.seek(data)
        stream.write(factors.tobytes())
    os.truncate(path, data + 256 + 50000 * 50000 * 4)
    return str(path)


def write_case_gguf(path, spec: dict) -> str:
    """The GGUF file of a llama.cpp fixture case (``tests/fixtures/engines/llama_cpp/gguf_cases.json``, its
    ``gguf`` member), typed as the fixtures' generator writes it: int UINT32, float FLOAT32, str STRING, bool
    BOOL, a list an ARRAY of its items' type; a 16-token test tokenizer; the position tensors as F32."""
    import gguf

    arch = spec["arch"]
    writer = gguf.GGUFWriter(str(path), arch)
    for key, value in spec["keys"].items():
        name = f"{arch}.{key}"
        if isinstance(value, bool):
            writer.add_bool(name, value)
        elif isinstance(value, str):
            writer.add_string(name, value)
        elif isinstance(value, float):
            writer.add_float32(name, value)
        elif isinstance(value, int):
            writer.add_uint32(name, value)
        else:
            writer.add_array(name, list(value))
    writer.add_tokenizer_model("test")
    writer.add_token_list([f"tok_{i}" for i in range(16)])
    writer.add_token_scores([0.0] * 16)
    for name, values in spec["tensors"].items():
        writer.add_tensor(name, np.asarray(values, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return str(path)
