"""The exceptions of pecli's core.

The core raises these plain exceptions; the CLI turns every one of them into a single line on
stderr and exit code 2 (bad input). Nothing else in the core knows about the command line.
"""

from __future__ import annotations


class PecliError(Exception):
    """Bad input to pecli: a value, a configuration or a request it cannot honour."""


class ConfigError(PecliError):
    """A configuration key with a bad value; the message names the key and what is allowed."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        super().__init__(f"{key}: {message}")


class PositionError(PecliError):
    """Positions that a scheme cannot encode (undefined, overflowing or negative)."""
