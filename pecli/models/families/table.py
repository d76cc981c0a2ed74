"""The family table: one :class:`~pecli.models.families.record.Family` per family, the model types read
but refused, and the lookup of a model type's family. Commands and analyses never look at
``model_type``: only this table does.
"""

from __future__ import annotations

from pecli.models.families.attention import llama4_temperature, qwen_logn
from pecli.models.families.hunyuan import hunyuan_groups
from pecli.models.families.keys import Keys
from pecli.models.families.layer_rules import (
    attention_blocks_only, block_types_cycle, cross_attention_layers, every_nth_full, gemma2_layer_types, gemma3_per_type,
    gemma4_normalise, modernbert_layer_types, modernbert_per_type, no_rope_layers, outside_attention_layers,
    position_type_per_type, scaled_layers, sliding_only_per_type, zamba2_layer_types, zamba2_normalise, zamba2_per_type,
)
from pecli.models.families.record import Family
from pecli.models.families.stacks import (
    alibi_groups, falcon_alibi_groups, learned_groups, moonshine_groups, sinusoidal_groups, stack_groups,
    sub_config_stacks, t5_groups, whisper_groups,
)
from pecli.schemes.scaling.rope_type import hf_rope_type
from pecli.schemes.scaling.registry import scales


# -- the table ---------------------------------------------------------------------------------------------
FAMILIES: tuple[Family, ...] = (
    Family("Llama and its kin", ("llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma",
                                 "phi", "phi3", "phimoe", "stablelm", "olmo", "olmo2", "starcoder2", "internlm2",
                                 "granite", "granitemoe", "ministral", "qwen2_vl", "qwen2_5_vl", "qwen2_vl_text",
                                 "qwen2_5_vl_text", "qwen3_vl", "qwen3_vl_text"),
           keys_note="rope_theta, rope_scaling / rope_parameters, partial_rotary_factor, head_dim"),
    Family("GPT-NeoX", ("gpt_neox",), keys_note="rotary_pct, rotary_emb_base", ignores=("partial_rotary_factor",),
           fraction_keys=("rotary_pct",), fraction_default=0.25),
    Family("GPT-J", ("gptj", "codegen"), layout="interleaved", ignores=("rope_theta", "rope_parameters", "rope_scaling"),
           keys_note="rotary_dim (rotate_every_two); base 10,000 whatever rope_theta says (create_sinusoidal_positions)"),
    Family("Gemma 2", ("gemma2",), layer_types=gemma2_layer_types, keys_note="even layers slide, odd attend fully"),
    Family("Gemma 3", ("gemma3", "gemma3_text"), layer_types=every_nth_full("sliding_window_pattern", "gemma3_text"),
           per_type=gemma3_per_type,
           keys_note="rope_local_base_freq (sliding layers), rope_theta + rope_scaling (full), sliding_window_pattern"),
    Family("Cohere (Command R)", ("cohere",), layout="interleaved", keys_note="interleaved rotate_half"),
    Family("nanochat", ("nanochat",), direction="negative",
           keys_note="reversed rotate_half, cat(x2, −x1): its pairs turn by −pθ (direction negative)"),
    Family("Cohere 2 (Command R7B, A)", ("cohere2", "cohere2_moe"), layout="interleaved",
           layer_types=every_nth_full("sliding_window_pattern", "cohere2"), per_type=sliding_only_per_type,
           keys_note="RoPE in sliding layers only; full-attention layers NoPE"),
    Family("EXAONE 4, AFMoE, Flint, Kolibri, Muse", ("exaone4", "exaone_moe", "afmoe", "flint", "kolibri1", "muse_glimmer",
                                                     "muse_glimmer_text", "muse_spark", "muse_spark_text"),
           per_type=sliding_only_per_type,
           keys_note="layer_types, sliding_window: full-attention layers NoPE when the model slides"),
    Family("GLM", ("glm", "glm4", "glm_ocr", "glm_ocr_text"), layout="interleaved",
           keys_note="partial_rotary_factor, interleaved rotate_half"),
    Family("ERNIE 4.5, Helium, HunYuan V4 VL, BLT, OpenAI privacy filter",
           ("ernie4_5", "ernie4_5_moe", "helium", "hy_v4_vl", "hy_v4_vl_text", "blt_global_transformer", "blt_local_encoder",
            "blt_local_decoder", "blt_patcher", "openai_privacy_filter"),
           layout="interleaved", keys_note="interleaved rotate_half"),
    Family("DeepSeek and other MLA / interleave models", ("deepseek_v2", "deepseek_v3", "deepseek_v32", "glm_moe_dsa", "glm4_moe_lite", "axk1",
                                                          "axk2", "dots3_note", "dots3_note_text", "bailing_hybrid",
                                                          "longcat_flash", "mistral4", "youtu"),
           layout="interleaved", head_dim_keys=("qk_rope_head_dim",),
           keys_note="qk_rope_head_dim, rope_interleave, yarn mscale; apply_rotary_pos_emb_interleave",
           note="pairs (2i, 2i+1) of q_pe and k_pe; transformers de-interleaves them first and applies half-layout "
                "cos/sin to the result: the same rotation, its output components in the order (0, 2, …, 1, 3, …)"),
    Family("Llama 4", ("llama4", "llama4_text"), layout="interleaved",
           nope_layers=no_rope_layers("llama4_text", empty_is_default=True, one_per_layer=True),
           attention=llama4_temperature,
           keys_note="no_rope_layers (0: NoPE layer), complex rotation"),
    Family("SmolLM3", ("smollm3",), nope_layers=no_rope_layers("smollm3"), keys_note="no_rope_layers (0: NoPE layer)"),
    Family("Mllama (Llama 3.2 Vision)", ("mllama", "mllama_text_model"), nope_layers=cross_attention_layers,
           keys_note="cross_attention_layers: no RoPE"),
    Family("Bamba", ("bamba",), nope_layers=outside_attention_layers, keys_note="attn_layer_indices: RoPE there only"),
    Family("RecurrentGemma", ("recurrent_gemma",), layer_types=block_types_cycle, per_type=attention_blocks_only,
           keys_note="block_types: RoPE in the attention blocks, partial_rotary_factor"),
    Family("Molmo 2", ("molmo2", "molmo2_text"), layer_types=lambda keys, count: ["all"] * count, per_type=scaled_layers,
           keys_note="rope_scaling_layers"),
    Family("MiniMax-M3-VL", ("minimax_m3_vl", "minimax_m3_vl_text"), ignores=("rotary_dim",),
           keys_note="rotary_dim is not read by its code: the whole head rotates"),
    Family("ModernBERT", ("modernbert",), layer_types=modernbert_layer_types, per_type=modernbert_per_type,
           keys_note="global_rope_theta, local_rope_theta, global_attn_every_n_layers"),
    Family("Falcon", ("falcon",), keys_note="alibi: true reads as ALiBi"),
    Family("Qwen (v1, remote code)", ("qwen",), head_dim_keys=("kv_channels",), attention=qwen_logn,
           keys_note="kv_channels, rotary_emb_base, rotary_pct; use_logn_attn: log-n query scale past seq_length"),
    Family("BLT", ("blt",), layout="interleaved", ignores=("rope_parameters", "rope_scaling", "rope_theta"),
           groups=sub_config_stacks(("encoder_config", "encoder"), ("global_config", "global"), ("decoder_config", "decoder"),
                                    layout="interleaved"),
           keys_note="encoder_config, global_config, decoder_config: three RoPE stacks, interleaved pairs (repeat_interleave)"),
    Family("Dia", ("dia",), groups=sub_config_stacks(("encoder_config", "encoder"), ("decoder_config", "decoder")),
           keys_note="encoder_config, decoder_config: each a RoPE stack"),
    Family("Moonshine", ("moonshine",), layout="interleaved", groups=moonshine_groups,
           keys_note="encoder and decoder on one rotary module: hidden_size / decoder heads, partial_rotary_factor 0.9"),
    Family("Moonshine Streaming", ("moonshine_streaming",), layout="interleaved",
           note="the decoder's layers; its encoder applies no RoPE (the decoder adds a learned table to its output)",
           keys_note="the decoder's RoPE, interleaved pairs, partial_rotary_factor"),
    Family("Zamba2", ("zamba2",), per_type=zamba2_per_type, normalise=zamba2_normalise,
           layer_types=zamba2_layer_types,
           keys_note="use_mem_rope: RoPE in the hybrid blocks; attention_head_dim = 2·hidden_size / heads"),
    Family("GraniteMoeHybrid", ("granitemoehybrid",), per_type=position_type_per_type,
           keys_note="position_embedding_type rope: RoPE in the attention layers only"),
    Family("Gemma 4", ("gemma4_text", "gemma4_unified_text", "embedding_gemma2_text", "diffusion_gemma_text"),
           normalise=gemma4_normalise,
           keys_note="global_head_dim (512) on full-attention layers without per_layer_config; last layer full"),
    Family("HunYuan v1 (dense, MoE)", ("hunyuan_v1_dense", "hunyuan_v1_moe"), groups=hunyuan_groups,
           keys_note="rope_parameters alpha under rope_type dynamic: base rope_theta · alpha^(head_dim / (head_dim − 2)), "
                     "fixed at every length"),
    # GptOssConfig.__post_init__: without layer_types, layer i slides when (i + 1) % 2, else attends fully
    Family("gpt-oss", ("gpt_oss",), layer_types=gemma2_layer_types,
           keys_note="without layer_types: even layers slide, odd attend fully"),
    # Read with the common keys (rope_theta, rope_parameters flat or per layer type, layer_types,
    # per_layer_config, partial_rotary_factor, head_dim) in the half layout: each checked against
    # transformers' own forward pass (tests/fixtures/models/rope), so none of them is "unknown".
    Family("Common keys, checked against transformers", (
      "apertus", "apertus1p5_text", "arcee", "aria_text", "beam", "bitnet", "cosmos3_edge_text", "csm", "cwm",
      "dia_encoder", "diffllama", "doge", "emu3_text_model", "esmc", "eurobert",
      "evolla", "falcon_h1", "flex_olmo", "gemma3n_text", 
      "gpt_neox_japanese", "gradium_phonon_tts", "granite_docling_text", "granite_swa",
      "granitemoe_swa", "granitemoeshared", "gte", "hrm_text", "hy_v3", "hy_v4", "hyperclovax", "jais2",
      "jina_embeddings_v3", "laguna", "lara_mini", "lfm2", "lfm3", "mellum", "mimo_v2_flash", "minicpm3",
      "minimax", "minimax_m2", "ministral3", "modernbert-decoder", "moshi", "neomme", "nomic_bert", "olmo3",
      "olmo_hybrid", "olmoe", "paddleocr_vl_text", "persimmon", "phi4_multimodal", "pocket_tts",
      "qwen2_5_omni_talker", "qwen2_5_omni_text", "qwen3_5_moe_text", "qwen3_5_text", "qwen3_next",
      "qwen3_omni_moe_talker_code_predictor", "qwen3_vl_moe_text", "seed_oss", "solar_open", "step3p5",
      "ultrabert", "unlimited_ocr_text", "vaultgemma", "voxtral_realtime_encoder", "zaya",
    ), keys_note="layer_types, rope_parameters (flat or per layer type), per_layer_config, partial_rotary_factor"),
    Family("BLOOM, MPT (ALiBi)", ("bloom", "mpt"), scheme="alibi", groups=alibi_groups, keys_note="n_head / n_heads"),
    Family("T5", ("t5", "mt5", "umt5", "longt5", "switch_transformers", "pop2piano"), scheme="t5", groups=t5_groups,
           keys_note="relative_attention_num_buckets, relative_attention_max_distance, num_layers, num_decoder_layers"),
    Family("T5Gemma", ("t5gemma", "t5gemma2"), groups=stack_groups,
           keys_note="encoder and decoder sub-configs, each read as a RoPE model"),
    Family("Marian, Pegasus", ("marian", "pegasus"), scheme="sinusoidal", groups=sinusoidal_groups("vaswani"),
           keys_note="d_model: sines, then cosines"),
    Family("fairseq sinusoidal (M2M-100, Speech2Text, FSMT, XGLM)", ("m2m_100", "speech_to_text", "fsmt", "xglm"),
           scheme="sinusoidal", groups=sinusoidal_groups("tensor2tensor", "the model's token t uses row t + 2 (fairseq's "
                                                          "offset; row 1, the padding row, is zero)"),
           keys_note="d_model: sines, then cosines, tensor2tensor spacing; offset 2"),
    Family("Whisper", ("whisper",), scheme="sinusoidal", groups=whisper_groups,
           keys_note="encoder: sinusoids (tensor2tensor spacing); decoder: learned"),
    Family("Learned tables", ("gpt2", "opt", "bert", "roberta", "gpt_neo", "bart", "biogpt"), scheme="learned",
           groups=learned_groups, keys_note="needs the checkpoint: --weights"),
)

#: Families by model_type.
BY_MODEL_TYPE: dict[str, Family] = {t: family for family in FAMILIES for t in family.model_types}
#: Model types read, but refused: the reason, said in one line.
REFUSED: dict[str, str] = {
    "deepseek_v4": "DeepSeek V4's compressed attention picks its RoPE ('main' or 'compress') per attention module, "
                   "not per layer type, which pecli does not read yet",
    "musicgen": "MusicGen's decoder table puts the cosines before the sines, a layout pecli's sinusoidal scheme does not have",
    "mistral_large4": "Mistral Large 4 multiplies its frequencies by exp(alpha), a learned tensor of the checkpoint, and its "
                      "queries by a learned per-head log-position scale: neither is in the config",
    "mistral_large4_text": "Mistral Large 4 multiplies its frequencies by exp(alpha), a learned tensor of the checkpoint, and "
                           "its queries by a learned per-head log-position scale: neither is in the config",
    "ernie4_5_vl_moe": "ERNIE 4.5 VL's 3-D RoPE deals its frequency pairs to time, height and width in its own pattern, "
                       "which pecli's mrope does not express",
    "ernie4_5_vl_moe_text": "ERNIE 4.5 VL's 3-D RoPE deals its frequency pairs to time, height and width in its own pattern, "
                            "which pecli's mrope does not express",
}


FALCON_ALIBI = Family("Falcon-RW (ALiBi)", ("falcon",), scheme="alibi", groups=falcon_alibi_groups,
                      keys_note="alibi: true; slopes in bfloat16")


def falcon_family(keys: Keys) -> Family | None:
    """Falcon-RW (``alibi: true``) is an ALiBi model; the other Falcons use RoPE."""
    if keys.data.get("alibi"):
        keys.get("alibi")
        # FalconModel builds no rotary module when alibi is true: its config class writes rope_theta and a
        # default block anyway, and the model reads neither.
        block = keys.get("rope_parameters", "rope_scaling") or {}
        scaled = isinstance(block, dict) and scales(hf_rope_type(block, None), aliases=False)
        given = [key for key in ("rope_theta", "rope_scaling", "rope_parameters")
                 if keys.has(key) and key not in keys.from_class and (key == "rope_theta" or scaled)]
        keys.get("rope_theta")
        if given:
            keys.warn(f"alibi is true in {keys.source}: the model applies ALiBi and ignores {' and '.join(given)}, as pecli does")
        return FALCON_ALIBI
    return None


def family_of(model_type: str | None, keys: Keys) -> Family | None:
    """The family record of ``model_type`` (None: not in the table)."""
    if model_type == "falcon":
        return falcon_family(keys) or BY_MODEL_TYPE["falcon"]
    if model_type == "mpt" and not (keys.data.get("attn_config") or {}).get("alibi", True):
        return Family("MPT (learned)", ("mpt",), scheme="learned", groups=learned_groups)
    return BY_MODEL_TYPE.get(model_type) if model_type is not None else None
