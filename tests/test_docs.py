"""Docs can't rot: every subcommand has help and a page on the site (docs/), with its --help as pecli prints
it; README and the pages show the real commands, files and tables."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from pecli.cli import app

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = REPO / "docs"
MKDOCS = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")

#: The two quick-start commands: each works on its own on a fresh machine (the issue; .ci/run runs the second).
QUICK_START = [
    'python -m venv .venv && . .venv/bin/activate && pip install -e ".[test]" && pecli encode',
    'python -m venv .venv && . .venv/bin/activate && pip install -e ".[test]" && python -m pytest -n auto',
]

#: The example commands of the foundation issue, documented on the page of `pecli encode`.
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
    """The prose of the page of ``pecli NAME`` (docs/commands/NAME.md), without its generated options."""
    path = DOCS / "commands" / f"{name}.md"
    return path.read_text(encoding="utf-8").split("## Options\n")[0] if path.exists() else ""


def nav_pages(entries=None) -> list[str]:
    pages = []
    for entry in MKDOCS["nav"] if entries is None else entries:
        for value in entry.values():
            pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_there_are_commands():
    assert "encode" in command_names()


@pytest.mark.parametrize("name", command_names())
def test_command_has_help(name, invoke):
    result = invoke(name, "--help")
    assert result.exit_code == 0, result.output
    assert f"pecli {name}" in result.stdout or "Usage" in result.stdout
    assert "--help" in result.stdout


@pytest.mark.parametrize("name", command_names())
def test_command_has_a_page(name):
    text = section(name)
    assert text.startswith(f"# `pecli {name}`"), f"docs/commands/{name}.md is missing or has another title"
    assert len(text.strip()) > 100, f"the page of pecli {name} is nearly empty"
    assert f"commands/{name}.md" in nav_pages(), f"the page of pecli {name} is not in mkdocs.yml's nav"
    assert f"docs/commands/{name}.md" in README, f"README does not link the page of pecli {name}"


@pytest.mark.parametrize("name", command_names())
def test_command_page_shows_its_help(name):
    """The page's options are `pecli NAME --help` itself, made by the site's hook when it builds."""
    import importlib.util

    from typer.testing import CliRunner

    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    built = hooks.with_help(page(f"commands/{name}.md"))
    result = CliRunner(env={"COLUMNS": str(hooks.HELP_COLUMNS), "NO_COLOR": "1", "TERM": "dumb"}).invoke(app, [name, "--help"])
    assert result.exit_code == 0
    assert f"```text\n{result.stdout.rstrip()}\n```" in built


def test_every_page_is_in_the_nav_and_readme_is_short():
    pages = {str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md")} | {"contributing.md"}
    assert pages == set(nav_pages())
    assert len(README.splitlines()) < 200


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


def test_yaml_example_is_the_sample_file():
    # The conventions page shows sample_configs/rope-llama.yaml; it must say what the file says.
    match = re.search(r"```yaml\n# sample_configs/rope-llama\.yaml\n(.*?)```", page("conventions.md"), flags=re.S)
    assert match, "docs/conventions.md does not show sample_configs/rope-llama.yaml"
    shown = yaml.safe_load(match.group(1))
    actual = yaml.safe_load((REPO / "sample_configs" / "rope-llama.yaml").read_text(encoding="utf-8"))
    assert shown == actual


def test_schemes_page_lists_every_scheme():
    from pecli.schemes import SCHEMES

    for name in SCHEMES:
        assert f"| `{name}` |" in page("schemes.md"), name


def test_models_table_is_the_family_table():
    from pecli.models.families import models_table

    text = page("models.md")
    start, end = text.index("<!-- models-table -->\n"), text.index("\n<!-- /models-table -->")
    assert text[start + len("<!-- models-table -->\n"):end] == models_table()


def test_inspect_config_example_is_what_pecli_prints(tmp_path, monkeypatch):
    import json

    from typer.testing import CliRunner

    # Gemma 3 4B's config.json as published (sample_configs/hf): no rope_theta, head_dim or heads in its
    # text_config, which transformers reads as Gemma3TextConfig's defaults.
    (tmp_path / "gemma-3-4b.json").write_text((REPO / "sample_configs" / "hf" / "google--gemma-3-4b-it.json").read_text())
    monkeypatch.chdir(tmp_path)
    text = page("models.md")
    block = text[text.index("$ pecli inspect config --hf-config gemma-3-4b.json"):]
    expected = block[block.index("\n") + 1:block.index("```")]
    result = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, ["inspect", "config", "--hf-config", "gemma-3-4b.json"])
    assert result.exit_code == 0 and result.stdout == expected
