"""mlx-lm's rope-type words that are not pecli's HF spellings: its vocabulary, one table, with where its code
names them (``mlx_lm/models/``), for :mod:`pecli.engines.mlx` and its load refusals
(:mod:`pecli.engines.mlx_load_refusals`)."""

from __future__ import annotations

from pecli.engines.vocabulary import Vocabulary

SU, DEEPSEEK_YARN, TELECHAT3_YARN, PROPORTIONAL, MROPE = "su", "deepseek_yarn", "telechat3-yarn", "proportional", "mrope"
WORDS = Vocabulary("MLX", {
    SU: "phi3.py:41 (the legacy spelling of longrope)",
    DEEPSEEK_YARN: "rope_utils.py:326 (built as yarn)",
    TELECHAT3_YARN: "rope_utils.py:326 (built as yarn)",
    PROPORTIONAL: "rope_utils.py:358",
    MROPE: "rope_utils.py:366",
})
