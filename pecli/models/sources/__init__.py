"""Where a model's position plan comes from: one record per source, its reader imported on first use.

A request names a source by its key (``--hf-config``, ``--model``, ``--gguf``, or the same key in YAML or
``--set``); the library is given a path, which a source may recognise (a GGUF file by its suffix or its
first bytes). Each source is one module defining ``read(value, scheme) -> PositionPlan`` — it checks the
value, opens the source and hands its settings to the family table — and, if a path can show that it is
one, ``recognises(path) -> bool``. Adding a source is that module and one record in :data:`SOURCES`: the
command-line option, its YAML and ``--set`` key, its help and the refusal of two sources at once follow.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pecli.models.plan import PositionPlan


@dataclass(frozen=True)
class Source:
    """One source of position settings: its request key, the module that reads it, its option's help, and
    whether its module can tell a path of its kind (``recognises``)."""

    key: str
    module: str
    help: str
    recognises_paths: bool = False

    @property
    def option(self) -> str:
        return "--" + self.key.replace("_", "-")

    def reader(self) -> ModuleType:
        return importlib.import_module(self.module)


SOURCES: dict[str, Source] = {source.key: source for source in (
    Source("hf_config", "pecli.models.sources.config_json",
           "a HuggingFace model's config.json, or its folder: its RoPE settings"),
    Source("model", "pecli.models.sources.hub",
           "a HuggingFace model id ORG/NAME[@REVISION]: its config.json's RoPE settings, from the local cache, else "
           "downloaded (needs pecli[models])"),
    Source("gguf", "pecli.models.sources.gguf",
           "a GGUF file (a path, an https:// URL or hf://ORG/REPO/FILE.gguf: its header only is fetched): its position "
           "settings as llama.cpp reads them (needs pecli[gguf]; a URL pecli[remote])", recognises_paths=True),
)}
#: The source of a path that no other source recognises.
DEFAULT_SOURCE = "hf_config"


def read_source(key: str, value: Any, scheme: str | None = None) -> PositionPlan:
    """The plan of ``value`` read by the source ``key`` (``scheme="rope"``: a Qwen-VL model as 1-D RoPE)."""
    return SOURCES[key].reader().read(value, scheme)


def source_of_path(path: Any) -> str:
    """The key of the source a path names: the first whose module recognises it, else :data:`DEFAULT_SOURCE`."""
    for source in SOURCES.values():
        if source.recognises_paths and source.reader().recognises(path):
            return source.key
    return DEFAULT_SOURCE
