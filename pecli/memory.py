"""Memory budgets: every command refuses, before it starts, work that would need more than it may hold."""

from __future__ import annotations

from typing import Any

import numpy as np

from pecli.errors import ConfigError, PecliError
from pecli.io import size_text


def parse_size(key: str, value: Any) -> int:
    """A byte count from ``123``, ``512M``, ``2G``, ``1.5GiB`` (binary multiples)."""
    text = str(value).strip().upper().removesuffix("IB").removesuffix("B")
    scale = 1
    for suffix, power in (("K", 10), ("M", 20), ("G", 30), ("T", 40)):
        if text.endswith(suffix):
            text, scale = text[:-1], 1 << power
            break
    try:
        number = float(text)
    except ValueError:
        raise ConfigError(key, f"expected a size such as 2G or 512M, got {value!r}") from None
    if not np.isfinite(number) or number <= 0:
        raise ConfigError(key, f"must be a positive size, got {value!r}")
    if number * scale < 1:  # a budget that rounds to no byte at all
        raise ConfigError(key, f"must be at least one byte, got {value!r}")
    return int(number * scale)


def memory_budget(given: Any) -> int:
    """Bytes a command may hold: ``--max-memory`` as given (an empty value is an error), else
    :func:`default_memory_budget`."""
    return parse_size("max_memory", given) if given is not None else default_memory_budget()


def default_memory_budget() -> int:
    """A quarter of the machine's physical memory (4 GiB where it cannot be read)."""
    import os

    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4
    except (ValueError, OSError, AttributeError):
        return 4 << 30


def check_memory(needed: float, budget: int | None, what: str = "this") -> None:
    """Raise :class:`PecliError` before any work when ``needed`` bytes exceed the budget."""
    budget = default_memory_budget() if budget is None else budget
    if needed > budget:
        raise PecliError(
            f"{what} needs about {size_text(needed)} of memory, over the budget of {size_text(budget)}; "
            "ask for fewer positions or raise --max-memory"
        )
