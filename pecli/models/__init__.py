"""Real models: their configs read as position plans.

- :mod:`~pecli.models.reading`: a request's model (a config.json, a folder, a model id, a GGUF file) → its plan;
- :mod:`~pecli.models.sources.hub`: ``--model ORG/NAME[@REVISION]`` → the model's config.json, through the
  HuggingFace cache (``huggingface_hub``, imported only then).

A checkpoint's weights (safetensors, q/k projections, layout permutations) are :mod:`pecli.weights`'.

The optional packages come with ``pip install 'pecli[models]'``; a missing one is a one-line
:class:`~pecli.errors.PecliError` naming that extra.
"""

from __future__ import annotations

from pecli.extras import MODELS_EXTRA as EXTRA, optional_import

__all__ = ["EXTRA", "optional_import"]
