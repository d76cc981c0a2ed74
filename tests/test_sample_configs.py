"""Every file in sample_configs/ runs with the subcommand its first comment line names.

Each file opens with ``# pecli CMD --config FILE`` and a comment saying what it shows; the scheme
files cover every registered scheme.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from pecli.presets import PRESETS
from pecli.schemes import SCHEMES

SAMPLE_CONFIGS = Path(__file__).resolve().parents[1] / "sample_configs"
FILES = sorted(SAMPLE_CONFIGS.glob("*.yaml"))


def subcommand(path: Path) -> str:
    """The subcommand a sample runs with: the word after ``# pecli`` on its first line."""
    first = path.read_text(encoding="utf-8").splitlines()[0]
    return first.split()[2]


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_sample_config_runs(path, invoke, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a file with an out: key writes here, not into the checkout
    command = subcommand(path)
    if command == "plot":
        result = invoke("plot", "--config", path, "--out", tmp_path / "figure.png", "--dpi", "40")
        assert result.exit_code == 0, f"{path.name}: {result.stderr}"
        assert (tmp_path / "figure.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        return
    result = invoke(command, "--config", path, "--json")
    assert result.exit_code in ((0, 1) if command in ("check", "compare") else (0,)), f"{path.name}: {result.stderr}"
    document = json.loads(result.stdout)
    if command == "encode":
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        preset = PRESETS[data["preset"]].options["scheme"] if "preset" in data else "sinusoidal"  # a preset names its scheme
        assert document["scheme"] == data.get("scheme", preset)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_sample_config_has_a_comment_header(path):
    # The first line is the command that runs the file; the scheme samples then say what they show.
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines and lines[0].startswith("# pecli "), path.name
    if not path.name.startswith(("plot-", "compare")):
        assert len(lines) >= 2 and lines[1].startswith("# ") and len(lines[1]) > 20, path.name


def test_one_sample_per_scheme_and_the_llama_variants():
    names = {p.name for p in FILES}
    for scheme in SCHEMES:
        assert f"{scheme}.yaml" in names, f"sample_configs/{scheme}.yaml is missing"
    assert {"rope-llama.yaml", "rope-llama31-scaled.yaml"} <= names


def test_scheme_sample_names_match_their_scheme():
    for scheme in SCHEMES:
        data = yaml.safe_load((SAMPLE_CONFIGS / f"{scheme}.yaml").read_text(encoding="utf-8"))
        assert data["scheme"] == scheme


def test_rope_llama_values():
    # Llama-3-style: dim 128, rope_theta 500000, layout half, length 8192, dtype float32.
    data = yaml.safe_load((SAMPLE_CONFIGS / "rope-llama.yaml").read_text(encoding="utf-8"))
    assert data == {"scheme": "rope", "dim": 128, "rope_theta": 500000, "layout": "half", "length": 8192,
                    "dtype": "float32"}


def test_rope_llama31_scaled_applies_llama3(invoke):
    result = invoke("encode", "--config", SAMPLE_CONFIGS / "rope-llama31-scaled.yaml", "--json", "--length", "16")
    assert result.exit_code == 0, result.stderr
    params = json.loads(result.stdout)["params"]
    assert (params["scaling"], params["factor"], params["original_max_position"]) == ("llama3", 8.0, 8192)
    assert (params["low_freq_factor"], params["high_freq_factor"], params["base"]) == (1.0, 4.0, 500000.0)
