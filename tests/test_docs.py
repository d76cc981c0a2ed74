"""Docs can't rot: every subcommand has help and a README section, and README's commands are the real ones."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from pecli.cli import app

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")

#: The two quick-start commands: each works on its own on a fresh machine (the issue; .ci/run runs the second).
QUICK_START = [
    'python -m venv .venv && . .venv/bin/activate && pip install -e ".[test]" && pecli encode',
    'python -m venv .venv && . .venv/bin/activate && pip install -e ".[test]" && python -m pytest -n auto',
]

#: The example commands of the foundation issue, documented under `pecli encode`.
ENCODE_EXAMPLES = [
    "pecli encode --scheme rope --dim 128 --length 4096 --base 500000 --layout half --out rope.npz",
    "pecli encode --scheme sinusoidal --dim 512 --length 1000 --out pe.npy",
    "pecli encode --scheme alibi --heads 12 --length 64 --out alibi.npz --json | jq .",
    "pecli encode --scheme rope --dim 64 --length 37 --apply q.npy --out q_rot.npy",
    "pecli encode --config sample_configs/rope-llama.yaml --set base=1e6",
]


def command_names() -> list[str]:
    names = [info.name or info.callback.__name__.replace("_", "-") for info in app.registered_commands]
    names += [info.name for info in app.registered_groups if info.name]
    return names


def section(name: str) -> str:
    """The README text under the heading ``## `pecli NAME` `` up to the next ``## `` heading."""
    match = re.search(rf"^## `pecli {re.escape(name)}`[^\n]*\n(.*?)(?=^## |\Z)", README, flags=re.M | re.S)
    return match.group(1) if match else ""


def test_there_are_commands():
    assert "encode" in command_names()


@pytest.mark.parametrize("name", command_names())
def test_command_has_help(name, invoke):
    result = invoke(name, "--help")
    assert result.exit_code == 0, result.output
    assert f"pecli {name}" in result.stdout or "Usage" in result.stdout
    assert "--help" in result.stdout


@pytest.mark.parametrize("name", command_names())
def test_command_documented_in_readme(name):
    assert re.search(rf"^## `pecli {re.escape(name)}`", README, flags=re.M), f"README has no section ## `pecli {name}`"
    assert len(section(name).strip()) > 100, f"README section of pecli {name} is nearly empty"


def test_quick_start_commands_verbatim():
    quick = re.search(r"^## Quick start\n(.*?)(?=^## )", README, flags=re.M | re.S)
    assert quick, "README has no ## Quick start section"
    blocks = re.findall(r"```(?:bash|sh|console)?\n(.*?)```", quick.group(1), flags=re.S)
    commands = [line.strip() for block in blocks for line in block.strip().splitlines() if line.strip()]
    assert commands == QUICK_START


def test_issue_examples_in_encode_section():
    text = section("encode")
    for command in ENCODE_EXAMPLES:
        assert command in text, command


def test_readme_yaml_example_is_the_sample_file():
    # README shows sample_configs/rope-llama.yaml; it must say what the file says.
    match = re.search(r"```yaml\n# sample_configs/rope-llama\.yaml\n(.*?)```", README, flags=re.S)
    assert match, "README's YAML section does not show sample_configs/rope-llama.yaml"
    shown = yaml.safe_load(match.group(1))
    actual = yaml.safe_load((REPO / "sample_configs" / "rope-llama.yaml").read_text(encoding="utf-8"))
    assert shown == actual


def test_readme_lists_every_scheme():
    from pecli.schemes import SCHEMES

    for name in SCHEMES:
        assert f"| `{name}` |" in README, name


def test_readme_models_table_is_the_family_table():
    from pecli.models.families import models_table

    text = README
    start, end = text.index("<!-- models-table -->\n"), text.index("\n<!-- /models-table -->")
    assert text[start + len("<!-- models-table -->\n"):end] == models_table()


def test_readme_inspect_config_example_is_what_pecli_prints(tmp_path, monkeypatch):
    import json

    from typer.testing import CliRunner

    # The Gemma-3-4B text config of the example (values of the issue that found the per-layer bases).
    config = {"model_type": "gemma3_text", "hidden_size": 2560, "num_attention_heads": 8, "head_dim": 256,
              "num_hidden_layers": 34, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
              "rope_scaling": {"rope_type": "linear", "factor": 8.0}, "sliding_window_pattern": 6,
              "max_position_embeddings": 131072}
    (tmp_path / "gemma-3-4b.json").write_text(json.dumps(config))
    monkeypatch.chdir(tmp_path)
    text = README
    block = text[text.index("$ pecli inspect config --hf-config gemma-3-4b.json"):]
    expected = block[block.index("\n") + 1:block.index("```")]
    result = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, ["inspect", "config", "--hf-config", "gemma-3-4b.json"])
    assert result.exit_code == 0 and result.stdout == expected
