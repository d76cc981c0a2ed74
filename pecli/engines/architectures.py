"""The architecture an engine loads for a config: its ``architectures``, else transformers' class of its model
type (``modeling_auto.py``'s speech seq2seq, else seq2seq, else causal-LM mapping, transformers 5.24.0), as
vLLM and SGLang resolve a config that names none."""

from __future__ import annotations

from typing import Any, Mapping


#: transformers 5.24.0's model classes without ``_supports_attention_backend``: an engine's Transformers backend
#: (vLLM's, SGLang's) refuses them (their model files, read for that flag).
BACKEND_INCOMPATIBLE = frozenset("""
BailingHybridForCausalLM BambaForCausalLM BartForCausalLM BigBirdForCausalLM BigBirdPegasusForCausalLM
BioGptForCausalLM BlenderbotForCausalLM BlenderbotSmallForCausalLM BloomForCausalLM BltForCausalLM CpmAntForCausalLM
EncoderDecoderModel FSMTForConditionalGeneration FalconForCausalLM GPTNeoForCausalLM GPTNeoXJapaneseForCausalLM
GitForCausalLM Inkling2ForCausalLM Inkling2LoopForCausalLM InklingForCausalLM JambaForCausalLM
LEDForConditionalGeneration LaraMiniForCausalLM LongT5ForConditionalGeneration M2M100ForConditionalGeneration
MBartForCausalLM MT5ForConditionalGeneration MarianForCausalLM MegatronBertForCausalLM MptForCausalLM
MusicgenForCausalLM MusicgenMelodyForCausalLM MvpForCausalLM NllbMoeForConditionalGeneration OlmoHybridForCausalLM
OpenAIGPTLMHeadModel PLBartForCausalLM PegasusForCausalLM PegasusXForConditionalGeneration ProphetNetForCausalLM
Qwen4ExpForCausalLM ReformerModelWithLMHead RemBertForCausalLM RoFormerForCausalLM RwkvForCausalLM
SeamlessM4TForTextToText SeamlessM4Tv2ForTextToText SwitchTransformersForConditionalGeneration
T5ForConditionalGeneration TrOCRForCausalLM UMT5ForConditionalGeneration WhisperForCausalLM XGLMForCausalLM
XLMWithLMHeadModel XLNetLMHeadModel Zamba2ForCausalLM ZambaForCausalLM xLSTMForCausalLM
""".split())


def architecture(config: Mapping[str, Any]) -> str | None:
    """The architecture an engine loads: the config's first, else transformers' class of its model type."""
    given = config.get("architectures")
    if isinstance(given, list) and given and isinstance(given[0], str):
        return given[0]
    kind = config.get("model_type")
    return ARCHITECTURE_OF.get(kind) if isinstance(kind, str) else None


ARCHITECTURE_OF = {
    "afmoe": "AfmoeForCausalLM", "apertus": "ApertusForCausalLM", "apertus1p5_text": "Apertus1p5TextForCausalLM",
    "arcee": "ArceeForCausalLM", "aria_text": "AriaTextForCausalLM",
    "audioflamingo3": "AudioFlamingo3ForConditionalGeneration", "axk1": "AXK1ForCausalLM", "axk2": "AXK2ForCausalLM",
    "bailing_hybrid": "BailingHybridForCausalLM", "bamba": "BambaForCausalLM",
    "bart": "BartForConditionalGeneration", "beam": "BeamForCausalLM", "bert": "BertLMHeadModel",
    "bert-generation": "BertGenerationDecoder", "big_bird": "BigBirdForCausalLM",
    "bigbird_pegasus": "BigBirdPegasusForConditionalGeneration", "biogpt": "BioGptForCausalLM",
    "bitnet": "BitNetForCausalLM", "blenderbot": "BlenderbotForConditionalGeneration",
    "blenderbot-small": "BlenderbotSmallForConditionalGeneration", "bloom": "BloomForCausalLM",
    "blt": "BltForCausalLM", "camembert": "CamembertForCausalLM", "canary": "CanaryForConditionalGeneration",
    "codegen": "CodeGenForCausalLM", "cohere": "CohereForCausalLM", "cohere2": "Cohere2ForCausalLM",
    "cohere2_moe": "Cohere2MoeForCausalLM", "cohere_asr": "CohereAsrForConditionalGeneration",
    "cohere_compass_text": "CohereCompassForCausalLM", "cpmant": "CpmAntForCausalLM", "ctrl": "CTRLLMHeadModel",
    "cwm": "CwmForCausalLM", "data2vec-text": "Data2VecTextForCausalLM", "dbrx": "DbrxForCausalLM",
    "deepseek_v2": "DeepseekV2ForCausalLM", "deepseek_v3": "DeepseekV3ForCausalLM",
    "deepseek_v32": "DeepseekV32ForCausalLM", "deepseek_v4": "DeepseekV4ForCausalLM",
    "dia": "DiaForConditionalGeneration", "diffllama": "DiffLlamaForCausalLM", "doge": "DogeForCausalLM",
    "dory": "DoryForCausalLM", "dots1": "Dots1ForCausalLM", "dots3_note": "Dots3NoteForCausalLM",
    "dots3_note_text": "Dots3NoteForCausalLM", "electra": "ElectraForCausalLM", "emu3": "Emu3ForCausalLM",
    "encoder-decoder": "EncoderDecoderModel", "ernie": "ErnieForCausalLM", "ernie4_5": "Ernie4_5ForCausalLM",
    "ernie4_5_moe": "Ernie4_5_MoeForCausalLM", "exaone": "LlamaForCausalLM", "exaone4": "Exaone4ForCausalLM",
    "exaone_moe": "ExaoneMoeForCausalLM", "falcon": "FalconForCausalLM", "falcon_h1": "FalconH1ForCausalLM",
    "falcon_mamba": "FalconMambaForCausalLM", "flex_olmo": "FlexOlmoForCausalLM", "flint": "FlintForCausalLM",
    "fsmt": "FSMTForConditionalGeneration", "fun_asr_nano": "FunAsrNanoForConditionalGeneration",
    "fuyu": "FuyuForCausalLM", "gemma": "GemmaForCausalLM", "gemma2": "Gemma2ForCausalLM",
    "gemma3": "Gemma3ForConditionalGeneration", "gemma3_text": "Gemma3ForCausalLM",
    "gemma3n": "Gemma3nForConditionalGeneration", "gemma3n_text": "Gemma3nForCausalLM",
    "gemma4": "Gemma4ForConditionalGeneration", "gemma4_assistant": "Gemma4AssistantForCausalLM",
    "gemma4_text": "Gemma4ForCausalLM", "gemma4_unified": "Gemma4UnifiedForConditionalGeneration",
    "gemma4_unified_assistant": "Gemma4UnifiedAssistantForCausalLM",
    "gemma4_unified_text": "Gemma4UnifiedForCausalLM", "git": "GitForCausalLM", "glm": "GlmForCausalLM",
    "glm4": "Glm4ForCausalLM", "glm4_moe": "Glm4MoeForCausalLM", "glm4_moe_lite": "Glm4MoeLiteForCausalLM",
    "glm_moe_dsa": "GlmMoeDsaForCausalLM", "glmasr": "GlmAsrForConditionalGeneration",
    "got_ocr2": "GotOcr2ForConditionalGeneration", "gpt-sw3": "GPT2LMHeadModel", "gpt2": "GPT2LMHeadModel",
    "gpt_bigcode": "GPTBigCodeForCausalLM", "gpt_neo": "GPTNeoForCausalLM", "gpt_neox": "GPTNeoXForCausalLM",
    "gpt_neox_japanese": "GPTNeoXJapaneseForCausalLM", "gpt_oss": "GptOssForCausalLM", "gptj": "GPTJForCausalLM",
    "granite": "GraniteForCausalLM", "granite_speech": "GraniteSpeechForConditionalGeneration",
    "granite_speech_plus": "GraniteSpeechPlusForConditionalGeneration", "granite_swa": "GraniteSWAForCausalLM",
    "granitemoe": "GraniteMoeForCausalLM", "granitemoe_swa": "GraniteMoeSWAForCausalLM",
    "granitemoehybrid": "GraniteMoeHybridForCausalLM", "granitemoeshared": "GraniteMoeSharedForCausalLM",
    "helium": "HeliumForCausalLM", "hrm_text": "HrmTextForCausalLM", "hunyuan_v1_dense": "HunYuanDenseV1ForCausalLM",
    "hunyuan_v1_moe": "HunYuanMoEV1ForCausalLM", "hy_v3": "HYV3ForCausalLM", "hy_v4": "HYV4ForCausalLM",
    "hyperclovax": "HyperCLOVAXForCausalLM", "inkling2_loop_text": "Inkling2LoopForCausalLM",
    "inkling2_text": "Inkling2ForCausalLM", "inkling_text": "InklingForCausalLM", "internlm3": "LlamaForCausalLM",
    "iquestcoder": "LlamaForCausalLM", "jais2": "Jais2ForCausalLM", "jamba": "JambaForCausalLM",
    "jetmoe": "JetMoeForCausalLM", "kimi_linear": "KimiLinearForCausalLM", "kolibri1": "Kolibri1ForCausalLM",
    "kyutai_speech_to_text": "KyutaiSpeechToTextForConditionalGeneration", "laguna": "LagunaForCausalLM",
    "lara_mini": "LaraMiniForCausalLM", "led": "LEDForConditionalGeneration", "lfm2": "Lfm2ForCausalLM",
    "lfm2_moe": "Lfm2MoeForCausalLM", "lfm3": "Lfm3ForCausalLM", "llama": "LlamaForCausalLM",
    "llama4": "Llama4ForCausalLM", "llama4_text": "Llama4ForCausalLM", "longcat_flash": "LongcatFlashForCausalLM",
    "longt5": "LongT5ForConditionalGeneration", "m2m_100": "M2M100ForConditionalGeneration",
    "mamba": "MambaForCausalLM", "mamba2": "Mamba2ForCausalLM", "marian": "MarianMTModel",
    "mbart": "MBartForConditionalGeneration", "megatron-bert": "MegatronBertForCausalLM",
    "mellum": "MellumForCausalLM", "mimo_v2_flash": "MiMoV2FlashForCausalLM", "minicpm3": "MiniCPM3ForCausalLM",
    "minimax": "MiniMaxForCausalLM", "minimax_m2": "MiniMaxM2ForCausalLM",
    "minimax_m3_vl_text": "MiniMaxM3VLForCausalLM", "ministral": "MinistralForCausalLM",
    "ministral3": "Ministral3ForCausalLM", "mistral": "MistralForCausalLM", "mixtral": "MixtralForCausalLM",
    "mllama": "MllamaForCausalLM", "modernbert-decoder": "ModernBertDecoderForCausalLM",
    "moonshine": "MoonshineForConditionalGeneration",
    "moonshine_streaming": "MoonshineStreamingForConditionalGeneration", "moshi": "MoshiForCausalLM",
    "moss_transcribe_diarize": "MossTranscribeDiarizeForConditionalGeneration", "mpt": "MptForCausalLM",
    "mt5": "MT5ForConditionalGeneration", "musicflamingo": "MusicFlamingoForConditionalGeneration",
    "musicgen": "MusicgenForCausalLM", "musicgen_melody": "MusicgenMelodyForCausalLM",
    "mvp": "MvpForConditionalGeneration", "nanochat": "NanoChatForCausalLM",
    "nemo_speechlm": "Nemotron3_5TranscribeForConditionalGeneration", "nemotron": "NemotronForCausalLM",
    "nemotron_h": "NemotronHForCausalLM", "nllb-moe": "NllbMoeForConditionalGeneration", "olmo": "OlmoForCausalLM",
    "olmo2": "Olmo2ForCausalLM", "olmo3": "Olmo3ForCausalLM", "olmo_hybrid": "OlmoHybridForCausalLM",
    "olmoe": "OlmoeForCausalLM", "omniasr": "OmniASRForConditionalGeneration", "openai-gpt": "OpenAIGPTLMHeadModel",
    "opt": "OPTForCausalLM", "pegasus": "PegasusForConditionalGeneration",
    "pegasus_x": "PegasusXForConditionalGeneration", "persimmon": "PersimmonForCausalLM", "phi": "PhiForCausalLM",
    "phi3": "Phi3ForCausalLM", "phi4_multimodal": "Phi4MultimodalForCausalLM", "phimoe": "PhimoeForCausalLM",
    "plbart": "PLBartForConditionalGeneration", "pop2piano": "Pop2PianoForConditionalGeneration",
    "prophetnet": "ProphetNetForConditionalGeneration", "qwen2": "Qwen2ForCausalLM",
    "qwen2_audio": "Qwen2AudioForConditionalGeneration", "qwen2_moe": "Qwen2MoeForCausalLM",
    "qwen3": "Qwen3ForCausalLM", "qwen3_5": "Qwen3_5ForCausalLM", "qwen3_5_moe": "Qwen3_5MoeForCausalLM",
    "qwen3_5_moe_text": "Qwen3_5MoeForCausalLM", "qwen3_5_text": "Qwen3_5ForCausalLM",
    "qwen3_asr": "Qwen3ASRForConditionalGeneration", "qwen3_moe": "Qwen3MoeForCausalLM",
    "qwen3_next": "Qwen3NextForCausalLM", "qwen4_exp": "Qwen4ExpForCausalLM",
    "qwen4_exp_text": "Qwen4ExpForCausalLM", "recurrent_gemma": "RecurrentGemmaForCausalLM",
    "reformer": "ReformerModelWithLMHead", "rembert": "RemBertForCausalLM", "roberta": "RobertaForCausalLM",
    "roberta-prelayernorm": "RobertaPreLayerNormForCausalLM", "roc_bert": "RoCBertForCausalLM",
    "roformer": "RoFormerForCausalLM", "rwkv": "RwkvForCausalLM", "sarvam_mla": "DeepseekV3ForCausalLM",
    "sarvam_moe": "Glm4MoeForCausalLM", "seamless_m4t": "SeamlessM4TForSpeechToText",
    "seamless_m4t_v2": "SeamlessM4Tv2ForSpeechToText", "seed_oss": "SeedOssForCausalLM",
    "smollm3": "SmolLM3ForCausalLM", "solar_open": "SolarOpenForCausalLM",
    "speech-encoder-decoder": "SpeechEncoderDecoderModel", "speech_to_text": "Speech2TextForConditionalGeneration",
    "speecht5": "SpeechT5ForSpeechToText", "stablelm": "StableLmForCausalLM", "starcoder2": "Starcoder2ForCausalLM",
    "switch_transformers": "SwitchTransformersForConditionalGeneration", "t5": "T5ForConditionalGeneration",
    "t5gemma": "T5GemmaForConditionalGeneration", "t5gemma2": "T5Gemma2ForConditionalGeneration",
    "trocr": "TrOCRForCausalLM", "umt5": "UMT5ForConditionalGeneration", "vaultgemma": "VaultGemmaForCausalLM",
    "vibevoice": "VibeVoiceForConditionalGeneration", "vibevoice_asr": "VibeVoiceAsrForConditionalGeneration",
    "voxtral": "VoxtralForConditionalGeneration", "voxtral_realtime": "VoxtralRealtimeForConditionalGeneration",
    "whisper": "WhisperForConditionalGeneration", "xglm": "XGLMForCausalLM", "xlm": "XLMWithLMHeadModel",
    "xlm-roberta": "XLMRobertaForCausalLM", "xlm-roberta-xl": "XLMRobertaXLForCausalLM", "xlnet": "XLNetLMHeadModel",
    "xlstm": "xLSTMForCausalLM", "xmod": "XmodForCausalLM", "youtu": "YoutuForCausalLM", "zamba": "ZambaForCausalLM",
    "zamba2": "Zamba2ForCausalLM", "zaya": "ZayaForCausalLM",
}
