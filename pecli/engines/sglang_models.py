"""SGLang 0.5.23's model registry and what its Transformers fallback takes, as data.

- :data:`NATIVE`: the architectures SGLang has a model file for (the ``EntryClass`` of every
  ``sglang/srt/models/*.py``).
- An architecture without one runs on SGLang's Transformers backend (``model_loader/utils.py:111-195``),
  which refuses a model class of transformers that is not backend-compatible
  (``_supports_attention_backend`` not set): :data:`BACKEND_INCOMPATIBLE` (transformers 5.24.0's model
  files, read for that flag).
- :data:`ARCHITECTURE_OF`: transformers' speech seq2seq, else seq2seq, else causal-LM class of each model type, the
  architecture of a config that names none (``modeling_auto.py``'s mappings).
"""

from __future__ import annotations

NATIVE = frozenset("""
AfmoeForCausalLM ApertusForCausalLM ArceeForCausalLM BaichuanForCausalLM BailingMM2NativeForConditionalGeneration
BailingMMNativeForConditionalGeneration BailingMoEForCausalLM BailingMoeForCausalLM BailingMoeForCausalLMNextN
BailingMoeV2ForCausalLM BailingMoeV2_5ForCausalLM BailingMoeV3ForCausalLM BailingMoeV3VLForConditionalGeneration
BeamForCausalLM BertForSequenceClassification BertModel CLIPModel ChatGLMModel Cohere2ForCausalLM
Cohere2MoeForCausalLM Cohere2VisionForConditionalGeneration CohereForCausalLM Contriever
Cosmos3EdgeForConditionalGeneration Cosmos3ForConditionalGeneration DFlash2BeamDraftModel DFlash2DraftModel
DFlashDraftModel DFlashLagunaForCausalLM DSparkDraftModel DSparkMiniMaxDraftModel DbrxForCausalLM DeciLMForCausalLM
DeepseekForCausalLM DeepseekOCRForCausalLM DeepseekV2ForCausalLM DeepseekV32ForCausalLM DeepseekV3ForCausalLM
DeepseekV3ForCausalLMNextN DeepseekV4ForCausalLM DeepseekV4ForCausalLMDSpark DeepseekV4ForCausalLMNextN
DeepseekVL2ForCausalLM DiffusionGemmaForBlockDiffusion Dots3NoteForCausalLM Dots3NoteForCausalLMNextN
DotsOCRForCausalLM DotsVLMForCausalLM Eagle3DeepseekV2ForCausalLM EmbeddingGemma2Model EmbeddingGemmaModel
Ernie4_5_ForCausalLM Ernie4_5_MoeForCausalLM Ernie4_5_MoeForCausalLMMTP Ernie4_5_VLMoeForConditionalGeneration
Exaone4ForCausalLM ExaoneForCausalLM ExaoneMoEForCausalLM ExaoneMoEForCausalLMMTP ExaoneMoeForCausalLM
FalconH1ForCausalLM FalconMambaForCausalLM GPT2LMHeadModel GPTBigCodeForCausalLM GPTJForCausalLM Gemma2ForCausalLM
Gemma2ForSequenceClassification Gemma3ForCausalLM Gemma3ForConditionalGeneration Gemma3nForCausalLM
Gemma3nForConditionalGeneration Gemma4AssistantForCausalLM Gemma4ForCausalLM Gemma4ForConditionalGeneration
Gemma4UnifiedAssistantForCausalLM Gemma4UnifiedForConditionalGeneration GemmaForCausalLM GigaChat35ForCausalLM
GigaChat35ForCausalLMNextN Glm4ForCausalLM Glm4MoeForCausalLM Glm4MoeForCausalLMNextN Glm4MoeLiteForCausalLM
Glm4MoeLiteForCausalLMNextN Glm4vForConditionalGeneration Glm4vMoeForConditionalGeneration
Glm5NextForConditionalGeneration Glm5NextForConditionalGenerationNextN GlmAsrForConditionalGeneration
GlmImageForConditionalGeneration GlmMoeDsaForCausalLM GlmMoeDsaForCausalLMNextN GlmOcrForConditionalGeneration
GlmOcrForConditionalGenerationNextN GptOssForCausalLM GraniteForCausalLM GraniteMoeForCausalLM
GraniteMoeHybridForCausalLM GraniteMoeSWAForCausalLM GraniteMoeSharedForCausalLM GraniteSWAForCausalLM
Grok1ForCausalLM Grok1ModelForCausalLM HYV3ForCausalLM HYV3ForCausalLMNextN HYV4ForCausalLM HYV4ForCausalLMNextN
HrmTextForCausalLM HunYuanDenseV1ForCausalLM HunYuanMoEV1ForCausalLM IQuestCoderForCausalLM
IQuestLoopCoderForCausalLM IQuestQ1ForCausalLM IQuestQ1MTP InklingForConditionalGeneration
InklingForConditionalGenerationMTP InternLM2ForCausalLM InternLM2ForRewardModel InternLM3ForCausalLM
InternS1ForConditionalGeneration InternS1ProForConditionalGeneration InternS2MobiusForConditionalGeneration
InternS2PreviewForConditionalGeneration InternVLChatModel JetNemotronForCausalLM JetVLMForConditionalGeneration
K2HorizonForCausalLM KimiK25ForConditionalGeneration KimiK3ForConditionalGeneration KimiK3LinearForCausalLM
KimiLinearForCausalLM KimiVLForConditionalGeneration LLaDA2MoeModelLM LagunaForCausalLM Lfm2BidirectionalModel
Lfm2DSparkDraftModel Lfm2ForCausalLM Lfm2MoeForCausalLM Lfm2VlForConditionalGeneration LiLiCorrDraftModel
LightOnOCRForConditionalGeneration LingDSparkModel Llama4ForCausalLM Llama4ForConditionalGeneration
LlamaEmbeddingModel LlamaForCausalLM LlamaForCausalLMEagle LlamaForCausalLMEagle3 LlamaForClassification
LlamaForSequenceClassification LlamaForSequenceClassificationWithNormal_Weights LlavaForConditionalGeneration
LlavaLlamaForCausalLM LlavaMistralForCausalLM LlavaQwenForCausalLM LlavaVidForCausalLM
LocateAnythingForConditionalGeneration LongcatFlashForCausalLM LongcatFlashForCausalLMNextN Mamba2ForCausalLM
MambaForCausalLM MellumForCausalLM MiDashengLMModel MiMoForCausalLM MiMoMTP MiMoV2ASRForCausalLM
MiMoV2FlashForCausalLM MiMoV2ForCausalLM MiMoV2MTP MindSporeForCausalLM MiniCPM3ForCausalLM MiniCPMForCausalLM
MiniCPMO MiniCPMSALAForCausalLM MiniCPMV MiniCPMV4_6ForConditionalGeneration MiniCPMV4_7ForConditionalGeneration
MiniMaxDFlash2DraftModel MiniMaxM2ForCausalLM MiniMaxM3SparseForCausalLM MiniMaxM3SparseForConditionalGeneration
Ministral3ForCausalLM Mistral3ForConditionalGeneration MistralForCausalLM MistralForCausalLMEagle
MistralLarge3ForCausalLM MistralLarge3ForCausalLMEagle MistralModel MixtralForCausalLM
MllamaForConditionalGeneration MossVLForConditionalGeneration MultiModalityCausalLM MuseGlimmerAssistantModel
MuseGlimmerForCausalLM MuseGlimmerForConditionalGeneration MuseSparkForConditionalGeneration
NVILAForConditionalGeneration NVILALiteForConditionalGeneration NanbeigeForCausalLM
NanbeigeForSequenceClassification NemotronHForCausalLM NemotronHForCausalLMMTP NemotronHPuzzleForCausalLM
NemotronH_Nano_Omni_Reasoning_V3 NemotronH_Nano_VL_V2 NemotronH_Omni_Reasoning_V3 OPTForCausalLM Olmo2ForCausalLM
OlmoForCausalLM OlmoeForCausalLM OrionForCausalLM POINTSV15ChatModel PaddleOCRVLForConditionalGeneration
PersimmonForCausalLM Phi3ForCausalLM Phi3SmallForCausalLM Phi4MMForCausalLM PhiForCausalLM PhiMoEForCausalLM
PixtralForConditionalGeneration PixtralVisionModel QWenLMHeadModel QuantMixtralForCausalLM
Qwen2AudioForConditionalGeneration Qwen2ForCausalLM Qwen2ForCausalLMEagle Qwen2ForRewardModel
Qwen2ForSequenceClassification Qwen2MoeForCausalLM Qwen2VLForConditionalGeneration
Qwen2_5_VLForConditionalGeneration Qwen3ASRForConditionalGeneration Qwen3DSparkModel Qwen3ForCausalLM
Qwen3ForRewardModel Qwen3ForSequenceClassification Qwen3Model Qwen3MoeForCausalLM Qwen3MoeForCausalLMMTP
Qwen3NextForCausalLM Qwen3NextForCausalLMMTP Qwen3OmniMoeForConditionalGeneration Qwen3VLForConditionalGeneration
Qwen3VLMoeForConditionalGeneration Qwen3_5ForCausalLM Qwen3_5ForCausalLMMTP Qwen3_5ForConditionalGeneration
Qwen3_5MoeForCausalLM Qwen3_5MoeForConditionalGeneration Qwen4ExpForCausalLMMTP Qwen4ExpForConditionalGeneration
SDARForCausalLM SDARMoeForCausalLM Sarashina2VisionForCausalLM SarvamMLAForCausalLM SarvamMoEForCausalLM
SolarForCausalLM Spark2_5ForCausalLM StableLmForCausalLM Starcoder2ForCausalLM Step3VLForConditionalGeneration
Step3p5ForCausalLM Step3p5MTP Step3p7ForConditionalGeneration StepVLForConditionalGeneration TeleFLMForCausalLM
TorchNativeLlamaForCausalLM TorchNativePhi3ForCausalLM TransformersEmbeddingModel TransformersForCausalLM
TransformersForSequenceClassification TransformersMoEEmbeddingModel TransformersMoEForCausalLM
TransformersMoEForSequenceClassification TransformersMultiModalEmbeddingModel TransformersMultiModalForCausalLM
TransformersMultiModalForSequenceClassification TransformersMultiModalMoEEmbeddingModel
TransformersMultiModalMoEForCausalLM TransformersMultiModalMoEForSequenceClassification UnlimitedOCRForCausalLM
VoxtralForConditionalGeneration WhisperForConditionalGeneration XLMRobertaForSequenceClassification XLMRobertaModel
XllmForCausalLM XverseForCausalLM XverseMoeForCausalLM YiVLForCausalLM ZayaForCausalLM
""".split())

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
