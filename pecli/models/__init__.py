"""Real models: configs by model id, position tables and q/k projections from checkpoints.

- :mod:`~pecli.models.hub`: ``--model ORG/NAME[@REVISION]`` → the model's config.json, through the
  HuggingFace cache (``huggingface_hub``, imported only then);
- :mod:`~pecli.models.checkpoint`: ``.safetensors`` files and sharded ``model.safetensors.index.json``
  checkpoints, read tensor by tensor (the ``learned`` scheme's ``--weights`` table);
- :mod:`~pecli.models.usage`: which rotary frequency pairs a model's q/k projections use, and which
  layout (half or interleaved) they were trained in;
- :mod:`~pecli.models.permute`: the layout permutation of Meta → HF Llama conversions.

The optional packages come with ``pip install 'pecli[models]'``; a missing one is a one-line
:class:`~pecli.errors.PecliError` naming that extra.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from pecli.errors import PecliError

#: The extra that installs the packages of this subpackage.
EXTRA = "pecli[models]"


def optional_import(module: str, needed_for: str) -> ModuleType:
    """Import ``module``, or raise a one-line :class:`PecliError` saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".")[0].replace("_", "-")
        raise PecliError(f"{needed_for} needs the {package} package: pip install '{EXTRA}'") from None
