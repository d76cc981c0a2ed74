"""The console entry point (``pecli.cli.main``) in a real process: what a terminal or a pipe sees."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def pecli(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pecli", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1", "COLUMNS": "80", **env}, errors="replace")


def test_an_ascii_stdout_shows_what_it_cannot_encode_as_a_question_mark():
    # θ in the wavelengths table's header: a cp1252 or ASCII console got 'internal error: UnicodeEncodeError'
    result = pecli("wavelengths", "--scheme", "rope", "--dim", "16", PYTHONIOENCODING="ascii")
    assert result.returncode == 0, result.stderr
    assert "rad/tok" in result.stdout and "?" in result.stdout and result.stderr == ""


@pytest.mark.parametrize("word, option", [("config.json", "--hf-config"), ("model.GGUF", "--gguf"), ("run.yaml", "--config")])
def test_a_file_without_its_option_is_told_the_option(run_main, word, option):
    result = run_main("inspect", "config", word)  # the hint is run()'s, which the console script calls
    assert result.returncode == 2
    assert result.stderr == f"pecli: error: Got unexpected extra argument(s) ({word}): give a file as {option} {word}\n"
