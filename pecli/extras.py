"""The optional packages: imported when a feature needs one, or a one-line error saying how to install it."""

from __future__ import annotations

import importlib
from types import ModuleType

from pecli.errors import PecliError

#: The extra that installs the packages of real models' files (huggingface_hub, safetensors).
MODELS_EXTRA = "pecli[models]"


def optional_import(module: str, needed_for: str, extra: str = MODELS_EXTRA) -> ModuleType:
    """Import ``module``, or raise a one-line :class:`PecliError` saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".")[0].replace("_", "-")
        raise PecliError(f"{needed_for} needs the {package} package: pip install '{extra}'") from None
