"""Shared fixtures of pecli's tests.

- ``runner``: Typer's CliRunner with ``NO_COLOR=1`` and ``COLUMNS=100``, so Rich output is plain and
  the same on every machine;
- ``invoke``: run ``pecli ARGS…`` in-process through that runner (exceptions are not swallowed: a bug
  in a command shows its traceback in the test report instead of a silent exit code 1);
- ``run_pecli``: run the installed pecli in a subprocess, as ``sys.executable -m pecli`` so that it
  works in whatever virtual environment runs the tests; returns the CompletedProcess (text mode);
- ``REPO``, ``SAMPLE_CONFIGS``, ``HF_CONFIGS``: paths of the checkout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest
from typer.testing import CliRunner

REPO = Path(__file__).resolve().parents[1]
SAMPLE_CONFIGS = REPO / "sample_configs"
HF_CONFIGS = SAMPLE_CONFIGS / "hf"
TEST_ENV = {"NO_COLOR": "1", "COLUMNS": "100"}
# No test touches the network: a model id (--model, also from the fuzzer) is looked up in the cache only.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner(env=TEST_ENV)


@pytest.fixture
def invoke(runner: CliRunner) -> Callable[..., object]:
    """``invoke("encode", "--dim", "8", input=None)`` → click's Result (stdout, stderr, exit_code)."""
    from pecli.cli import app

    def _invoke(*args: str, input: str | None = None):
        return runner.invoke(app, [str(a) for a in args], input=input, catch_exceptions=False)

    return _invoke


def pecli_subprocess(*args: str, cwd: str | os.PathLike | None = None, input: str | None = None,
                     timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``python -m pecli ARGS…`` with the interpreter running the tests."""
    env = {**os.environ, **TEST_ENV}
    env.pop("PECLI_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "pecli", *map(str, args)],
        cwd=cwd, input=input, capture_output=True, text=True, env=env, timeout=timeout,
    )


@pytest.fixture
def run_pecli(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess]:
    """``run_pecli("encode", "--dim", "-3")``, run in a fresh temporary folder unless ``cwd`` is given."""

    def _run(*args: str, cwd: str | os.PathLike | None = None, input: str | None = None):
        return pecli_subprocess(*args, cwd=cwd or tmp_path, input=input)

    return _run
