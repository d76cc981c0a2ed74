"""Real models: their configs read as position plans.

- :mod:`~pecli.models.reading`: a request's model (a config.json, a folder, a model id, a GGUF file) → its plan;
- :mod:`~pecli.models.sources`: the sources a plan is read from, one record and one module each (config.json
  with its class's defaults, a Hub model id, a GGUF file).

A checkpoint's weights (safetensors, q/k projections, layout permutations) are :mod:`pecli.weights`'.

The optional packages come with ``pip install 'pecli[models]'``; a missing one is a one-line
:class:`~pecli.errors.PecliError` naming that extra.
"""

from __future__ import annotations

from pecli.extras import MODELS_EXTRA as EXTRA, optional_import

__all__ = ["EXTRA", "optional_import"]
