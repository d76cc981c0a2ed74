"""``--model ORG/NAME[@REVISION]``: a model's config.json through the HuggingFace Hub cache.

:func:`config_path` asks ``huggingface_hub.hf_hub_download`` for the one file ``config.json``: it
answers from the local cache first (``HF_HUB_CACHE``, else ``HF_HOME/hub``, else
``~/.cache/huggingface/hub``, in the hub's own layout ``models--ORG--NAME/{refs,snapshots,blobs}``) and
downloads only that file when it is not cached and the network is allowed (``HF_HUB_OFFLINE=1``: the
cache only). ``huggingface_hub`` is imported here, and only when a model id is given. Every failure
the hub reports — no such repository, a gated one, no such revision, no network and not cached —
becomes one :class:`~pecli.errors.ConfigError` line (key ``model``) saying what to do.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from typing import TYPE_CHECKING, Any

from pecli.errors import ConfigError
from pecli.models import EXTRA, optional_import
from pecli.params import excerpt

if TYPE_CHECKING:
    from pecli.models.plan import PositionPlan

#: A repository id: NAME or ORG/NAME, of letters, digits, ``-``, ``_`` and ``.``.
REPO_ID = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9._-]*/)?[A-Za-z0-9][A-Za-z0-9._-]*$")

#: What to do when the config cannot be had, said at the end of each error.
FALLBACK = "or pass --hf-config FILE"


@dataclass(frozen=True)
class ModelId:
    """A model on the Hub: ``repo`` (``ORG/NAME``) at ``revision`` (a branch, tag or commit; None: main)."""

    repo: str
    revision: str | None = None

    @classmethod
    def parse(cls, text: str) -> "ModelId":
        """``ORG/NAME`` or ``ORG/NAME@REVISION``; :class:`ConfigError` for anything else."""
        repo, at, revision = text.strip().partition("@")
        if not REPO_ID.match(repo) or ".." in repo or (at and not revision.strip()):
            raise ConfigError("model", f"expected ORG/NAME[@REVISION], got {text!r}")
        return cls(repo, revision.strip() or None)

    def __str__(self) -> str:
        return self.repo + (f"@{self.revision}" if self.revision else "")


def read(model: Any, scheme: str | None = None) -> PositionPlan:
    """The plan of the model ``ORG/NAME[@REVISION]``: its config.json from the cache (:func:`config_path`),
    read as ``--hf-config`` reads a file; the file's errors are said of the model (key ``model``)."""
    if not isinstance(model, str) or not model.strip():
        raise ConfigError("model", f"expected ORG/NAME[@REVISION], got {excerpt(model)}")
    from pecli.models.sources.config_json import read_plan

    path = config_path(model)
    try:
        return read_plan(path, scheme, source=model)
    except ConfigError as error:
        if error.key != "hf_config":  # a key of the config itself: its own message names it
            raise
        raise ConfigError("model", f"{model}: {str(error).removeprefix('hf_config: ')}") from None


def offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` asks for the cache only (read now, not when huggingface_hub was imported)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def cache_dir() -> str | None:
    """The hub cache the environment names now (``HF_HUB_CACHE``, else ``HF_HOME/hub``), or None for the default."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    if os.environ.get("HF_HOME"):
        return os.path.join(os.environ["HF_HOME"], "hub")
    return None


def cache_path(hub=None) -> str:
    """The hub cache's path: the one the environment names now, else huggingface_hub's default
    (``$HF_HOME/hub``, ``$XDG_CACHE_HOME/huggingface/hub`` or ``~/.cache/huggingface/hub``)."""
    named = cache_dir()
    if named:
        return named
    constants = getattr(hub, "constants", None)
    default = getattr(constants, "HF_HUB_CACHE", None)
    caches = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return default or os.path.join(caches, "huggingface", "hub")


def config_path(model: str) -> str:
    """The local path of model ``model``'s config.json, from the cache or downloaded (that file only).

    Raises
    ------
    ConfigError
        (key ``model``) A malformed id; ``huggingface_hub`` missing; a repository that does not exist
        or is private, a gated one, an unknown revision, a repository without config.json; no network
        (or ``HF_HUB_OFFLINE=1``) and the file not cached. Each says what to do.
    """
    wanted = ModelId.parse(model)
    hub = optional_import("huggingface_hub", f"--model {model}")
    errors = optional_import("huggingface_hub.utils", f"--model {model}")
    from pecli.models.sources.hub_reach import hub_endpoint, quiet_hub, unreachable

    quiet_hub(errors)
    # Out of reach, the Hub is not asked (huggingface_hub would retry for 24 s): the cache answers alone.
    why = "" if offline() else unreachable(hub_endpoint())
    try:
        return str(hub.hf_hub_download(
            wanted.repo, "config.json", revision=wanted.revision, cache_dir=cache_dir(),
            local_files_only=offline() or bool(why),
        ))
    except errors.GatedRepoError:
        raise ConfigError("model", f"{wanted.repo} is gated: accept its terms on huggingface.co, then log in "
                                   f"(hf auth login) or set HF_TOKEN, {FALLBACK}") from None
    except errors.RepositoryNotFoundError:
        raise ConfigError("model", f"no model {wanted.repo} on the Hub (or it is private: log in or set HF_TOKEN), "
                                   f"check the id {FALLBACK}") from None
    except errors.RevisionNotFoundError:
        raise ConfigError("model", f"{wanted.repo} has no revision {wanted.revision!r}; give a branch, tag or commit "
                                   f"that exists, {FALLBACK}") from None
    except errors.LocalEntryNotFoundError:
        where = ("HF_HUB_OFFLINE is set" if offline() else
                 f"the Hub ({hub_endpoint()}) cannot be reached ({why})" if why else "the Hub cannot be reached")
        raise ConfigError("model", f"{wanted} is not in the local cache ({cache_path(hub)}) and "
                                   f"{where}: download it when online ({_download_command(wanted)}) {FALLBACK}") from None
    except errors.EntryNotFoundError:
        raise ConfigError("model", f"{wanted} has no config.json; {FALLBACK.removeprefix('or ')}") from None
    except errors.HFValidationError as error:
        raise ConfigError("model", f"{model!r} is not a valid model id ({error})") from None
    except (errors.HfHubHTTPError, OSError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ConfigError("model", f"cannot fetch {wanted}'s config.json ({first}); {FALLBACK.removeprefix('or ')}") from None


def _download_command(wanted: ModelId) -> str:
    revision = f" --revision {wanted.revision}" if wanted.revision else ""
    return f"hf download {wanted.repo} config.json{revision}"


__all__ = ["EXTRA", "ModelId", "cache_dir", "cache_path", "config_path", "offline"]
