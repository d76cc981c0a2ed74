"""What a new user meets (issue 44): a model folder for --hf-config, the library's verify, diff and GGUF
plan, readable reports outside a notebook, the YAML did-you-mean."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
LLAMA31 = ROOT / "sample_configs" / "hf" / "meta-llama--llama-3.1-8b.json"


@pytest.fixture
def model_folder(tmp_path) -> Path:
    """A model's folder as from_pretrained takes it: config.json beside (here, no) weights."""
    folder = tmp_path / "Llama-3.1-8B"
    folder.mkdir()
    shutil.copy(LLAMA31, folder / "config.json")
    return folder


@pytest.mark.parametrize("command", [
    ("inspect", "config", "--json"), ("wavelengths", "--json"), ("check", "relativity", "--length", "64", "--json"),
    ("encode", "--length", "4", "--json"), ("compare", "--length", "64", "--json"),
    ("extend", "--target", "262144", "--json"), ("diff", "--hf-config", str(LLAMA31), "--json"),
])
def test_a_model_folder_is_its_config_json(invoke, model_folder, command):
    by_folder = invoke(*command[:1], "--hf-config", model_folder, *command[1:])
    by_file = invoke(*command[:1], "--hf-config", model_folder / "config.json", *command[1:])
    assert by_folder.exit_code == by_file.exit_code == 0, by_folder.stderr
    source = str(model_folder)
    folder, file = json.loads(by_folder.stdout), json.loads(by_file.stdout.replace(source + "/config.json", source))
    if command[0] == "compare":  # a row is named after the folder, as after a file's stem
        assert [row["label"] for row in folder["rows"]] == ["Llama-3.1-8B"]
        folder["rows"][0]["label"] = file["rows"][0]["label"]
    assert folder == file


def test_a_folder_without_config_json_is_one_line(invoke, tmp_path):
    result = invoke("wavelengths", "--hf-config", tmp_path)
    assert result.exit_code == 2
    assert result.stderr.strip() == f"pecli: error: hf_config: {tmp_path} is a folder without a config.json; give the model's folder or its config.json"


def test_the_library_reads_a_model_folder(model_folder):
    import pecli

    assert pecli.model_plan(model_folder).single.options == pecli.model_plan(LLAMA31).single.options
    assert pecli.model_plan(str(model_folder)).single.options["base"] == 500000.0
