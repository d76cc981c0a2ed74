"""The fuzz suite (``tests/fuzz_cli.py``) in the normal test run, in a child under a memory limit.

``PECLI_FUZZ_EXAMPLES`` sets how many command lines it draws (default 100, about two seconds on an idle machine;
thousands for a longer hunt).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

#: Address space the fuzzed process may use: a run that ignores the memory guards fails here.
MEMORY_LIMIT = 6 << 30


def _limit_memory() -> None:
    # within the limit the tests run under (ulimit -v): a soft limit above the hard one is refused (ValueError)
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    soft = MEMORY_LIMIT if hard == resource.RLIM_INFINITY else min(MEMORY_LIMIT, hard)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def test_fuzzed_command_lines_keep_the_exit_contract():
    examples = os.environ.get("PECLI_FUZZ_EXAMPLES", "100")
    script = Path(__file__).with_name("fuzz_cli.py")
    process = subprocess.run(
        [sys.executable, str(script), examples], capture_output=True, text=True, timeout=600, preexec_fn=_limit_memory,
    )
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-3000:]
