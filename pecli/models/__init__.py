"""Real models: their configs read as position plans, their checkpoints' q/k projections.

Checkpoint files themselves (safetensors, a learned position table) are read by :mod:`pecli.checkpoint`,
below the schemes, since the ``learned`` scheme reads its table from one.

- :mod:`~pecli.models.hub`: ``--model ORG/NAME[@REVISION]`` → the model's config.json, through the
  HuggingFace cache (``huggingface_hub``, imported only then);
- :mod:`~pecli.models.usage`: which rotary frequency pairs a model's q/k projections use, and which
  layout (half or interleaved) they were trained in;
- :mod:`~pecli.models.permute`: the layout permutation of Meta → HF Llama conversions.

The optional packages come with ``pip install 'pecli[models]'``; a missing one is a one-line
:class:`~pecli.errors.PecliError` naming that extra.
"""

from __future__ import annotations

from pecli.extras import MODELS_EXTRA as EXTRA, optional_import

__all__ = ["EXTRA", "optional_import"]
