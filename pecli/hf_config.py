"""The RoPE settings of a HuggingFace model ``config.json``, as pecli keys.

HF configs spell the same facts in several ways: ``hidden_size`` / ``num_attention_heads`` (GPT-J and
GPT-2: ``n_embd`` / ``n_head``), an explicit ``head_dim`` (Gemma) or DeepSeek's ``qk_rope_head_dim``;
``rope_theta`` (GPT-NeoX: ``rotary_emb_base``; transformers v5: inside ``rope_parameters``);
``partial_rotary_factor`` (GPT-NeoX: ``rotary_pct``; GPT-J: ``rotary_dim`` per head); the scaling as a
legacy ``rope_scaling`` block or v5's ``rope_parameters``; multimodal models nest all of it in
``text_config``. :func:`read_hf_config` reads them into the keys of the ``rope`` scheme; the scaling
block itself is read by :meth:`pecli.schemes.rope_scaling.RopeScaling.from_hf` when the scheme is built.
"""

from __future__ import annotations

import numbers
from typing import Any

from pecli.errors import ConfigError
from pecli.params import excerpt

#: HF ``model_type`` values of RoPE models whose config.json may omit every RoPE key (old Llama 2 files).
ROPE_MODEL_TYPES = frozenset({
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2", "gemma3_text",
    "phi", "phi3", "gpt_neox", "gptj", "falcon", "stablelm", "olmo", "olmo2", "starcoder2", "deepseek_v2",
    "deepseek_v3", "internlm2", "cohere", "granite",
})

#: Keys whose presence says that a config describes RoPE, whatever its model_type.
ROPE_KEYS = ("rope_theta", "rope_scaling", "rope_parameters", "rotary_emb_base", "rotary_pct", "partial_rotary_factor")

#: Scaling types to which HF moves a top-level ``original_max_position_embeddings`` (where it wins).
TYPES_TAKING_TOP_LEVEL_ORIGINAL = ("llama3", "yarn", "longrope", "su")


def read_hf_config(path: str, scheme: str | None = None) -> dict[str, Any]:
    """The RoPE options of a HuggingFace model ``config.json``, as pecli keys.

    A multimodal model whose RoPE block has an ``mrope_section`` (Qwen2-VL, Qwen2.5-VL, Qwen3-VL)
    reads as the ``mrope`` scheme (see :func:`_mrope_options`), unless ``scheme`` is ``"rope"``: then
    as the 1-D RoPE of its text, which has the same frequencies.

    ``head_dim`` wins over ``hidden_size / num_attention_heads`` (GPT-J: ``n_embd / n_head``) when
    present (they differ for Gemma, for instance); DeepSeek's ``qk_rope_head_dim`` wins over both, since
    only that part of each head rotates (HF builds DeepSeek's rotary embedding with
    ``dim = qk_rope_head_dim``). ``rope_theta`` (or GPT-NeoX's ``rotary_emb_base``; 10000, HF's default,
    when a RoPE model gives none), ``partial_rotary_factor`` (or ``rotary_pct``),
    ``max_position_embeddings``, a top-level ``original_max_position_embeddings`` (which wins, as in HF)
    and the ``rope_scaling`` or ``rope_parameters`` block are read (transformers v5 keeps ``rope_theta``
    inside ``rope_parameters``). GPT-J's ``rotary_dim`` becomes the partial rotary factor, with its
    interleaved layout.

    Raises
    ------
    ConfigError
        (key ``hf_config``) The file cannot be read or is not a JSON object; the config has no RoPE; the
        head dimension cannot be found; a dimension (``hidden_size``, ``num_attention_heads``,
        ``head_dim``, ``rotary_dim``, …) is not a positive integer — a quoted ``"4096"`` included.
    """
    data = _load(path)
    vision = data.get("vision_config") if isinstance(data.get("vision_config"), dict) else {}
    model_type = data.get("model_type")  # the model's, before a nested text_config (``qwen2_5_vl_text``)
    if isinstance(data.get("text_config"), dict) and "num_attention_heads" not in data:
        data = {**data["text_config"], **{k: v for k, v in data.items() if k.startswith("rope")}}
    if not any(data.get(key) is not None for key in ROPE_KEYS) and data.get("model_type") not in ROPE_MODEL_TYPES:
        kind = data.get("model_type", "unknown")
        raise ConfigError("hf_config", f"{path} (model_type {kind}) has no RoPE settings: no rope_theta, rope_scaling or rope_parameters")
    options: dict[str, Any] = {"scheme": "rope", "dim": _head_dim(data, path)}
    block = data.get("rope_parameters", data.get("rope_scaling"))
    in_block = block if isinstance(block, dict) else {}
    if in_block.get("mrope_section") is not None and scheme != "rope":
        return _mrope_options(data, in_block, options["dim"], vision, model_type)
    # transformers v5 keeps rope_theta (and partial_rotary_factor) inside rope_parameters: they describe
    # the model, so they stay when the block (the scaling) is switched off.
    base = data.get("rope_theta", data.get("rotary_emb_base", in_block.get("rope_theta")))
    options["base"] = 10000.0 if base is None else base
    fraction = data.get("partial_rotary_factor", data.get("rotary_pct", in_block.get("partial_rotary_factor")))
    if fraction is not None:
        options["partial_rotary_factor"] = fraction
    elif data.get("rotary_dim") is not None:  # GPT-J: rotary_dim of each head
        options["partial_rotary_factor"] = _dimension(data, "rotary_dim", path) / options["dim"]
    if data.get("model_type") == "gptj":  # GPT-J rotates pairs (2i, 2i+1): rotate_every_two
        options["layout"] = "interleaved"
    longest = data.get("max_position_embeddings", data.get("n_positions"))  # GPT-J and GPT-2 say n_positions
    if longest is not None:
        options["max_position_embeddings"] = longest
    block_type = in_block.get("rope_type") or in_block.get("type")
    if data.get("original_max_position_embeddings") is not None and block_type in TYPES_TAKING_TOP_LEVEL_ORIGINAL:
        # HF moves a top-level original length into the block of these types only, where it wins; it
        # belongs to the scaling and goes with it.
        block = {**in_block, "original_max_position_embeddings": data["original_max_position_embeddings"]}
    if block is not None:
        options["rope_scaling"] = block
    return options


#: model_type values whose videos number frame groups by time (``second_per_grid_t × tokens_per_second``).
TIMED_VIDEO_MODELS = ("qwen2_5_vl",)


def _mrope_options(
    data: dict[str, Any], block: dict[str, Any], dim: int, vision: dict[str, Any], model_type: Any,
) -> dict[str, Any]:
    """The ``mrope`` keys of a Qwen-VL config: head dim, ``rope_theta``, the block's ``mrope_section``
    and ``mrope_interleaved`` (Qwen3-VL), and from ``vision_config`` the ``spatial_merge_size`` and
    ``tokens_per_second``; Qwen2.5-VL numbers a video's frame groups by time."""
    base = data.get("rope_theta", block.get("rope_theta"))
    options: dict[str, Any] = {"scheme": "mrope", "dim": dim, "base": 10000.0 if base is None else base,
                               "mrope_section": block["mrope_section"]}
    if block.get("mrope_interleaved") is not None:
        options["mrope_interleaved"] = block["mrope_interleaved"]
    if vision.get("spatial_merge_size") is not None:
        options["spatial_merge_size"] = vision["spatial_merge_size"]
    if model_type in TIMED_VIDEO_MODELS:
        options["temporal"] = "time"
    if vision.get("tokens_per_second") is not None:
        options["tokens_per_second"] = vision["tokens_per_second"]
    return options


def _load(path: str) -> dict[str, Any]:
    from pecli.config_files import read_json

    data = read_json(path, "hf_config")
    if not isinstance(data, dict):
        raise ConfigError("hf_config", f"{path} must hold a JSON object")
    return data


def _head_dim(data: dict[str, Any], path: str) -> int:
    """The rotary head dimension: ``qk_rope_head_dim``, ``head_dim``, else hidden size / heads."""
    for key in ("qk_rope_head_dim", "head_dim"):  # DeepSeek V2/V3: only qk_rope_head_dim of each head rotates
        if data.get(key) is not None:
            return _dimension(data, key, path)
    hidden_key = "hidden_size" if "hidden_size" in data else "n_embd"
    heads_key = "num_attention_heads" if "num_attention_heads" in data else "n_head"
    if data.get(hidden_key) is None or data.get(heads_key) is None:
        raise ConfigError("hf_config", f"{path} gives neither head_dim nor hidden_size and num_attention_heads")
    hidden, heads = _dimension(data, hidden_key, path), _dimension(data, heads_key, path)
    if hidden % heads:
        raise ConfigError("hf_config", f"hidden_size {hidden} is not a multiple of num_attention_heads {heads}; give head_dim")
    return hidden // heads


def _dimension(data: dict[str, Any], key: str, path: str) -> int:
    """``data[key]`` as a positive integer (an integral float such as ``4096.0`` too, not ``"4096"``)."""
    value = data[key]
    integral = isinstance(value, numbers.Integral) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not integral or value < 1:
        raise ConfigError("hf_config", f"{key} in {path} must be a positive integer, got {excerpt(value)}")
    return int(value)
