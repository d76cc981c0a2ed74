"""The exit codes of ``pecli`` and the two signals that end a run early.

0 success, 1 a check failed, 2 bad input (usage, values, files), 3 a bug in pecli; 130 Ctrl-C and 143
SIGTERM (temporary files removed either way); 141 when the reader of stdout went away (``| head``).
"""

from __future__ import annotations

OK, CHECK_FAILED, BAD_INPUT, BUG = 0, 1, 2, 3
INTERRUPTED, BROKEN_PIPE, TERMINATED = 130, 141, 143


class ReaderGone(BaseException):
    """The reader of stdout went away; a BaseException so that Click passes it through to ``main``."""


class Terminated(BaseException):
    """SIGTERM, raised where the process is, so that temporary files are removed as on Ctrl-C."""


class Interrupted(BaseException):
    """Ctrl-C inside a command, carried past Click (which would turn it into a silent exit 130)."""
