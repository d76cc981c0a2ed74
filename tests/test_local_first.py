"""Local files before the network: a missing ``--weights`` file is said at once, without a Hub look-up
of ``--model``; and an offline miss says which cache it looked in, by its path."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("command", [
    ["inspect", "rope", "--weights", "missing.safetensors", "--model", "ORG/NAME"],
    ["plot", "rope-usage", "--weights", "missing.safetensors", "--model", "ORG/NAME", "-o", "u.png"],
])
def test_a_missing_weights_file_is_said_before_the_model_is_looked_up(command, run_main, monkeypatch):
    from pecli.models.sources import hub

    def network(model):
        raise AssertionError(f"looked up {model} before checking the local file")

    monkeypatch.setattr(hub, "config_path", network)
    result = run_main(*command)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["pecli: error: weights: missing.safetensors: no such file"]


def test_an_offline_miss_names_the_cache_it_read(run_main, monkeypatch, tmp_path):
    pytest.importorskip("huggingface_hub")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    result = run_main("inspect", "config", "--model", "ORG/NAME")
    assert result.returncode == 2 and f"not in the local cache ({tmp_path / 'hub-cache'})" in result.stderr


def test_the_default_cache_is_named_by_its_path(monkeypatch, tmp_path):
    from pecli.models.sources.hub import cache_path

    for variable in ("HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_path() == str(tmp_path / ".cache" / "huggingface" / "hub")  # huggingface_hub's default layout
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert cache_path() == str(tmp_path / "hf" / "hub")
