"""Sources of position settings are a registry: a toy source registered in-process as one record (and
its module) is read by every door — a request's key, the library's path — with nothing else changed."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

import pecli
from pecli.errors import ConfigError
from pecli.models.reading import selected_plan
from pecli.models.sources import SOURCES, Source, source_of_path
from pecli.models.sources.config_json import plan_of_config

LLAMA = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "rope_theta": 10000.0,
         "max_position_embeddings": 256}


@pytest.fixture
def toy_source(monkeypatch):
    """A source that reads ``NAME.toy`` as a Llama config whose base is the file's size in bytes."""
    module = types.ModuleType("toy_source")

    def read(path, scheme=None):
        return plan_of_config({**LLAMA, "rope_theta": float(Path(path).stat().st_size)}, path, scheme)

    module.read = read
    module.recognises = lambda path: str(path).endswith(".toy")
    monkeypatch.setitem(sys.modules, "toy_source", module)
    monkeypatch.setitem(SOURCES, "toy", Source("toy", "toy_source", "a toy file", recognises_paths=True))


def test_a_registered_source_is_read_by_its_key_and_recognised_by_its_path(toy_source, tmp_path):
    path = tmp_path / "m.toy"
    path.write_bytes(b"x" * 500)
    assert source_of_path(path) == "toy" and source_of_path(tmp_path / "config.json") == "hf_config"
    plan = pecli.model_plan(str(path))
    assert plan.source == str(path) and plan.groups[0].options["base"] == 500.0  # 500 bytes, by hand
    assert selected_plan({"toy": str(path)}).groups[0].options["base"] == 500.0


def test_two_sources_at_once_are_refused_naming_both(toy_source, tmp_path):
    with pytest.raises(ConfigError, match="give either --hf-config or --toy, not both"):
        selected_plan({"hf_config": "config.json", "toy": "m.toy"})


def test_every_source_is_an_option_of_the_commands():
    from pecli.cli.common import CONFIG_OPTIONS

    assert set(SOURCES) <= set(CONFIG_OPTIONS)


def test_a_gguf_file_is_recognised_by_its_suffix_or_its_magic(tmp_path):
    named, magic, other = tmp_path / "a.GGUF", tmp_path / "blob", tmp_path / "config.json"
    named.write_bytes(b"")
    magic.write_bytes(b"GGUF\x03\x00\x00\x00")
    other.write_text("{}")
    assert [source_of_path(p) for p in (named, magic, other, {"a": 1})] == ["gguf", "gguf", "hf_config", "hf_config"]
