"""``--model ORG/NAME[@REVISION]``: configs through a HuggingFace cache built here, offline."""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("huggingface_hub")

COMMIT = "0123456789abcdef0123456789abcdef01234567"
LLAMA = {
    "model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
    "rope_theta": 500000.0, "max_position_embeddings": 2048,
}


def make_cache(root, repo="org/tiny", config=LLAMA, commit=COMMIT, refs=("main",)):
    """A hub cache in the hub's own layout: refs/REF → commit, snapshots/COMMIT/config.json → blobs/…"""
    folder = root / ("models--" + repo.replace("/", "--"))
    (folder / "blobs").mkdir(parents=True)
    blob = folder / "blobs" / ("b" * 40)
    blob.write_text(json.dumps(config))
    snapshot = folder / "snapshots" / commit
    snapshot.mkdir(parents=True)
    os.symlink(os.path.relpath(blob, snapshot), snapshot / "config.json")
    (folder / "refs").mkdir()
    for ref in refs:
        (folder / "refs" / ref).write_text(commit)
    return root


@pytest.fixture
def hub(tmp_path, monkeypatch):
    cache = make_cache(tmp_path / "hub")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.delenv("HF_HOME", raising=False)
    return cache


def wavelengths_json(invoke, *args):
    result = invoke("wavelengths", "--json", *args)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_model_id_reads_the_cached_config(invoke, hub, tmp_path):
    by_id = wavelengths_json(invoke, "--model", "org/tiny")
    config = tmp_path / "config.json"
    config.write_text(json.dumps(LLAMA))
    assert by_id == wavelengths_json(invoke, "--hf-config", str(config))
    assert by_id["params"]["base"] == 500000.0 and by_id["params"]["dim"] == 16  # 64 / 4 heads


def test_revision_by_commit_and_by_branch(invoke, hub):
    make_cache(hub, "org/other", {**LLAMA, "rope_theta": 1e6}, commit="f" * 40, refs=("v2",))
    assert wavelengths_json(invoke, "--model", f"org/other@{'f' * 40}")["params"]["base"] == 1e6
    assert wavelengths_json(invoke, "--model", "org/other@v2")["params"]["base"] == 1e6


def test_model_in_yaml(invoke, hub, tmp_path):
    yaml_file = tmp_path / "run.yaml"
    yaml_file.write_text("model: org/tiny\nlength: 64\n")
    result = invoke("check", "relativity", "--config", str(yaml_file), "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["params"]["base"] == 500000.0


@pytest.mark.parametrize(("model", "says"), [
    ("org/missing", "not in the local cache"),
    ("org/tiny@nope", "not in the local cache"),
    ("not an id", "expected ORG/NAME[@REVISION]"),
    ("org/tiny@", "expected ORG/NAME[@REVISION]"),
])
def test_what_cannot_be_had_is_one_line(invoke, hub, model, says):
    result = invoke("wavelengths", "--model", model)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and lines[0].startswith("pecli: error: model:")
    if "cache" in says:
        assert "--hf-config" in lines[0] and "HF_HUB_OFFLINE" in lines[0]


def test_model_and_hf_config_exclude_each_other(invoke, hub, tmp_path):
    result = invoke("wavelengths", "--model", "org/tiny", "--hf-config", str(tmp_path / "c.json"))
    assert result.exit_code == 2 and "either --model or --hf-config" in result.stderr


def test_a_model_without_rope_names_the_model(invoke, hub):
    make_cache(hub, "org/gpt", {"model_type": "gpt2", "n_embd": 64, "n_head": 4})
    result = invoke("wavelengths", "--model", "org/gpt")
    assert result.exit_code == 2 and "org/gpt" in result.stderr and "--weights" in result.stderr
    make_cache(hub, "org/odd", {"model_type": "odd", "n_embd": 64, "n_head": 4})
    result = invoke("wavelengths", "--model", "org/odd")
    assert result.exit_code == 2 and "model: org/odd" in result.stderr and "no RoPE" in result.stderr


def test_compare_takes_model_rows(invoke, hub):
    result = invoke("compare", "--model", "org/tiny", "--length", "16", "--json")
    assert result.exit_code == 0, result.stderr
    assert [row["label"] for row in json.loads(result.stdout)["rows"]] == ["org/tiny"]


@pytest.mark.parametrize(("error", "says"), [
    ("GatedRepoError", "is gated"), ("RepositoryNotFoundError", "no model org/tiny"),
    ("RevisionNotFoundError", "no revision"),
])
def test_hub_refusals_say_what_to_do(hub, monkeypatch, error, says):
    import huggingface_hub
    from huggingface_hub import utils

    from pecli.errors import ConfigError
    from pecli.models.sources.hub import config_path

    def refuse(*args, **kwargs):
        cls = getattr(utils, error)
        refusal = cls.__new__(cls)  # as the hub raises it, without an HTTP response to build it from
        Exception.__init__(refusal, "refused")
        raise refusal

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", refuse)
    with pytest.raises(ConfigError, match=says) as caught:
        config_path("org/tiny")
    assert "--hf-config" in str(caught.value) or "HF_TOKEN" in str(caught.value)


def test_missing_package_names_the_extra(monkeypatch):
    import sys

    from pecli.errors import PecliError
    from pecli.models.sources.hub import config_path

    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    with pytest.raises(PecliError, match=r"pip install 'pecli\[models\]'"):
        config_path("org/tiny")


def test_without_model_the_hub_is_not_imported(invoke, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # any import of it would fail
    assert invoke("wavelengths", "--quiet").exit_code == 0


def test_a_model_by_id_has_its_layer_plan(invoke, hub):
    # Gemma 3 by id: its full-attention layer 5 on base 1e6, its sliding layers on 10,000.
    make_cache(hub, "org/gemma3", {"model_type": "gemma3_text", "head_dim": 256, "num_attention_heads": 8,
                                   "hidden_size": 2560, "num_hidden_layers": 12, "rope_theta": 1e6,
                                   "rope_local_base_freq": 10000.0})
    full = invoke("wavelengths", "--model", "org/gemma3", "--layer", "5", "--json")
    assert full.exit_code == 0, full.stderr
    assert json.loads(full.stdout)["params"]["base"] == 1e6
    plan = json.loads(invoke("inspect", "config", "--model", "org/gemma3", "--json").stdout)
    assert plan["source"] == "org/gemma3" and [g["name"] for g in plan["groups"]] == ["sliding_attention", "full_attention"]
