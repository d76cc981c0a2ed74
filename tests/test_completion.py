"""Shell completion: Typer's protocol, answered with the values pecli knows (what a shell would show)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pecli.cli import run


def complete(monkeypatch, capsys, line: str) -> list[str]:
    """The candidates bash is offered for the last word of ``line``."""
    words = line.split(" ")
    monkeypatch.setenv("_PECLI_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", line)
    monkeypatch.setenv("COMP_CWORD", str(len(words) - 1))
    with pytest.raises(SystemExit) as stop:
        run([])
    assert stop.value.code == 0
    return capsys.readouterr().out.split()


@pytest.mark.parametrize("line, expected", [
    ("pecli chec", ["check"]),
    ("pecli check --scheme ro", ["rope", "rope-nd"]),
    ("pecli check dist", ["distinguishability"]),
    ("pecli plot wave", ["wavelengths"]),
    ("pecli encode --layout ", ["interleaved", "half", "split"]),
    ("pecli wavelengths --scaling ya", ["yarn"]),
    ("pecli compare --schemes rope,al", ["rope,alibi"]),
    ("pecli sweep prec", ["precision"]),
])
def test_values_are_completed(monkeypatch, capsys, line, expected):
    assert complete(monkeypatch, capsys, line) == expected


def test_layer_groups_of_the_model_on_the_line(monkeypatch, capsys, tmp_path):
    # Gemma 3's layers: five sliding (base 10,000) for one full (base 10⁶, linear 8): two groups
    config = {"model_type": "gemma3_text", "hidden_size": 2560, "num_attention_heads": 8, "head_dim": 256,
              "num_hidden_layers": 12, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
              "rope_scaling": {"rope_type": "linear", "factor": 8.0}, "sliding_window_pattern": 6,
              "max_position_embeddings": 131072}
    (tmp_path / "config.json").write_text(json.dumps(config))
    monkeypatch.chdir(tmp_path)  # a relative path: the temporary folder's own may hold a space, which splits a word
    found = complete(monkeypatch, capsys, "pecli check --hf-config config.json --layer-group ")
    assert sorted(found) == ["full_attention", "sliding_attention"]
    assert complete(monkeypatch, capsys, "pecli check --hf-config missing.json --layer-group ") == []


def test_the_lazy_group_loads_only_the_command_that_runs():
    # --help and a command's name being completed list the summaries; a run loads its own module only.
    # One child runs the four lines in turn, each starting as a new process does, without any command's module.
    script = ("import contextlib, io, json, os, sys\nfrom pecli.cli import COMMANDS, run\nloaded = {}\n"
              "for words, extra in json.loads(sys.argv[1]):\n"
              "    os.environ.update(extra)\n"
              "    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
              "        run(words.split())\n"
              "    for name in extra:\n        del os.environ[name]\n"
              "    loaded[words or extra['COMP_WORDS']] = str(sorted(n for n, (m, _) in COMMANDS.items() if m in sys.modules))\n"
              "    for module, _ in COMMANDS.values():\n        sys.modules.pop(module, None)\n"
              "print(json.dumps(loaded))\n")
    environ = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}
    lines = [("--help", {}), ("wavelengths --scheme rope --dim 8", {}),
             ("", {"_PECLI_COMPLETE": "complete_bash", "COMP_WORDS": "pecli ch", "COMP_CWORD": "1"}),
             ("", {"_PECLI_COMPLETE": "complete_bash", "COMP_WORDS": "pecli plot --ki", "COMP_CWORD": "2"})]
    for _, extra in lines:
        for name in extra:
            environ.pop(name, None)
    done = subprocess.run([sys.executable, "-c", script, json.dumps(lines)], env=environ, capture_output=True, text=True,
                          check=True)
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert loaded == {"--help": "[]", "wavelengths --scheme rope --dim 8": "['wavelengths']", "pecli ch": "[]",
                      "pecli plot --ki": "['plot']"}


def test_install_and_show_completion(tmp_path):
    env = {**os.environ, "HOME": str(tmp_path), "SHELL": "/bin/bash"}
    env.pop("_PECLI_COMPLETE", None)
    shown = subprocess.run([sys.executable, "-m", "pecli", "--show-completion", "bash"], env=env,
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and "_PECLI_COMPLETE=complete_bash" in shown.stdout
    installed = subprocess.run([sys.executable, "-m", "pecli", "--install-completion", "bash"], env=env,
                               capture_output=True, text=True, timeout=60)
    assert installed.returncode == 0, installed.stderr
    assert "_PECLI_COMPLETE=complete_bash" in (tmp_path / ".bash_completions" / "pecli.sh").read_text()
    assert ".bash_completions/pecli.sh" in (tmp_path / ".bashrc").read_text()
