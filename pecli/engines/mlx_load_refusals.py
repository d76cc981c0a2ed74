"""What mlx-lm 0.32.2 refuses when it loads a config, as tables of its model files' checks: the model files it has
(a model type without one is refused), the fields a file fails on when null, the ``rope_scaling`` checks of the files'
``__post_init__``, the keys a file or ``initialize_rope`` indexes without a default, the files that pass no length or
need another package. :meth:`pecli.engines.mlx.Mlx.load_refusal` reads them in mlx-lm's order (measured:
``tests/fixtures/engines/mlx/``).
"""

from __future__ import annotations

from typing import Any, Mapping

from pecli.engines.mlx_words import DEEPSEEK_YARN, SU, TELECHAT3_YARN, WORDS
from pecli.engines.vocabulary import RopeTypes
from pecli.schemes.scaling.linear import LINEAR
from pecli.schemes.scaling.longrope import LONGROPE
from pecli.schemes.scaling.ntk import DYNAMIC
from pecli.schemes.scaling.yarn import YARN

#: The model files of mlx-lm 0.32.2 (``mlx_lm/models/``): a model type without one is refused.
MODULES = frozenset("""
Klear afm7 afmoe apertus baichuan_m1 bailing_hybrid bailing_moe bailing_moe_linear bailing_moe_v3 bitnet cohere cohere2
dbrx deepseek deepseek_v2 deepseek_v3 deepseek_v32 deepseek_v41 dots1 ernie4_5 ernie4_5_moe exaone exaone4 exaone_moe
falcon_h1 gear gemma gemma2 gemma3 gemma3_text gemma3n gemma4 gemma4_text glm glm4 glm4_moe glm4_moe_lite glm_moe_dsa
gpt2 gpt_bigcode gpt_neox gpt_oss gptj granite granitemoe granitemoehybrid helium hunyuan hunyuan_v1_dense internlm2
internlm3 iquestloopcoder jamba kimi_k25 kimi_k3 kimi_linear kimi_vl laguna lfm2-vl lfm2 lfm2_moe lille-130m llama
llama4 llama4_text longcat_flash longcat_flash_ngram mamba mamba2 mellum mimo mimo_v2_flash minicpm minicpm3 minimax
minimax_m3_vl ministral3 mistral3 mistral4 mixtral muse_glimmer muse_spark nanbeige nanochat nemotron-nas nemotron
nemotron_h olmo olmo2 olmo3 olmo_hybrid olmoe openelm phi phi3 phi3small phimoe phixtral pixtral plamo plamo2 plamo3
prism_hadamard_qwen35 qwen qwen2 qwen2_moe qwen2_vl qwen3 qwen3_5 qwen3_5_moe qwen3_moe qwen3_next qwen3_vl qwen3_vl_moe
recurrent_gemma rwkv7 seed_oss smollm3 solar_open spark2_5 stablelm starcoder2 step3p5 talkie telechat3 youtu_llm
""".split())
#: Model files that fail when a field is null or absent: {file: (field, the error it raises)}.
NULL_FIELD_ERRORS = {
    "deepseek_v2": ("rope_scaling", "AttributeError: 'NoneType' object has no attribute 'get'"),  # deepseek_v2.py:178
    "minicpm3": ("rope_scaling", "AttributeError: 'NoneType' object has no attribute 'get'"),  # minicpm3.py:90
    "ministral3": ("rope_parameters", "TypeError: 'NoneType' object is not subscriptable"),  # ministral3.py:66
}
#: Model files whose ``ModelArgs.__post_init__`` checks ``rope_scaling``: the keys it must hold (a block without
#: them is refused), the key of its type, the types it takes, and what it does with another type: ``drop`` the
#: block (phi3.py:36-45, with a printed warning) or refuse it (the error; internlm2.py:40, internlm3.py:41,
#: qwen2_moe.py:42).
CHECKED_BLOCKS: dict[str, tuple[tuple[str, ...], str | tuple[str, ...], RopeTypes, str]] = {
    "phi3": (("long_factor", "type"), "type", WORDS.types(LONGROPE, SU, LINEAR), "drop"),
    "internlm2": (("factor", "type"), "type", WORDS.types(LINEAR, DYNAMIC),
                  "ValueError: rope_scaling 'type' currently only supports 'linear' or 'dynamic"),
    "internlm3": (("factor", "rope_type"), "rope_type", WORDS.types(LINEAR, DYNAMIC),
                  "ValueError: rope_scaling 'rope_type' currently only supports 'linear' or 'dynamic"),
    "qwen2_moe": (("factor", "type"), "type", WORDS.types(LINEAR), "ValueError: rope_scaling 'type' currently only supports 'linear'"),
    # nemotron.py:34-46: the type is ``type`` or else ``rope_type`` (a block with neither is refused)
    "nemotron": (("factor",), ("type", "rope_type"), WORDS.types(LINEAR),
                 "ValueError: rope_scaling 'type' currently only supports 'linear'"),
}
#: Keys a model file indexes in a truthy block (KeyError without them), in its order: deepseek.py:70 and
#: nemotron.py:84 (``type``), deepseek_v2.py:179 (``factor``), phimoe.py:56-63 (every block is its LongRoPE's).
BUILD_KEYS = {"deepseek": ("type",), "nemotron": ("type",), "deepseek_v2": ("factor",),
              "phimoe": ("short_factor", "long_factor", "short_mscale", "long_mscale")}
#: Model files that call ``initialize_rope`` without ``max_position_embeddings`` (gpt_oss.py:77): the types that
#: read it fail at the first forward, with their error.
NO_LENGTH_PASSED = {"gpt_oss": (
    (WORDS.types(DYNAMIC), "TypeError: '>' not supported between instances of 'NoneType' and 'int'"),
    (WORDS.types(LONGROPE), "TypeError: unsupported operand type(s) for /: 'NoneType' and 'int'"))}
#: Model files that need a package besides mlx-lm (olmo.py probes ``hf_olmo`` and exits without it).
NEEDS_PACKAGE = {"olmo": "SystemExit: 1 (mlx_lm/models/olmo.py needs the hf_olmo package)"}
#: The keys ``initialize_rope`` reads for each type without a default, in its order (rope_utils.py:291-373).
INITIALIZE_ROPE_KEYS = ((WORDS.types(LINEAR), ("factor",)), (WORDS.types(DYNAMIC), ("factor",)),
                        (WORDS.types(YARN, DEEPSEEK_YARN, TELECHAT3_YARN), ("factor",)),
                        (WORDS.types(LONGROPE), ("short_factor", "long_factor")))


def checked_word(block: Mapping[str, Any], key: str | tuple[str, ...]) -> Any:
    """The type a :data:`CHECKED_BLOCKS` file reads from ``block``: its key, or the first of its keys given."""
    keys = (key,) if isinstance(key, str) else key
    return next((block.get(name) for name in keys if block.get(name)), None)


__all__ = ["BUILD_KEYS", "CHECKED_BLOCKS", "INITIALIZE_ROPE_KEYS", "MODULES", "NEEDS_PACKAGE", "NO_LENGTH_PASSED",
           "NULL_FIELD_ERRORS", "checked_word"]
