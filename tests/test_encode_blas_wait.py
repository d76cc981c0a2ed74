"""``pecli encode`` shortens OpenBLAS's idle spin (``OPENBLAS_THREAD_TIMEOUT``) before NumPy loads it; a
value the user set is kept, and the other commands keep OpenBLAS's default."""

from __future__ import annotations

import os
import subprocess
import sys

CODE = ("import os, sys, importlib\n"
        "importlib.import_module(sys.argv[1])\n"
        "print(os.environ.get('OPENBLAS_THREAD_TIMEOUT', 'unset'), 'numpy' in sys.modules)\n")


def run(module: str, **env: str) -> str:
    full = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"} | env
    result = subprocess.run([sys.executable, "-c", CODE, module], capture_output=True, text=True, env=full, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_encode_sets_a_short_wait_before_numpy_loads():
    assert run("pecli.cli") == "unset False"  # nothing has loaded NumPy before the command's module
    assert run("pecli.cli.encode") == "4 True"
    assert run("pecli.cli.encode", OPENBLAS_THREAD_TIMEOUT="20") == "20 True"


def test_other_commands_keep_openblas_default():
    assert run("pecli.cli.check") == "unset True"
