"""Positions as a user gives them (``--positions``, a YAML ``positions:``): ``start:stop[:step]``, a list
(``0,5,9`` or ``[0, 5, 9]``), or an ``.npy`` file of ids; refused, naming the problem, before anything is
read or built past what they may hold."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from pecli.config_files import is_number_text, parse_yaml
from pecli.errors import ConfigError, PecliError, PositionError
from pecli.io import size_text
from pecli.params import excerpt
from pecli.schemes import SCHEMES
from pecli.schemes.positions import as_positions

#: More positions than any context a model runs (2^32); beyond this a range is surely a typo.
MAX_POSITIONS = 1 << 32


def parse_positions(value: Any, rank: int = 1, budget: int | None = None, *, real: bool = False) -> np.ndarray:
    """Positions from ``start:stop[:step]``, an ``.npy`` file of integer ids, or a list of integers
    (on the command line too: ``[0, 5, 9]``). Ids that would not fit ``budget`` bytes (a range's
    count, a file's header) are refused before they are read or built.

    For a scheme whose positions have ``rank`` > 1 coordinates, an ``.npy`` of shape (N, rank) or a list
    of N coordinate lists. With ``real`` (a scheme that takes real-valued positions) the file or list
    may hold any finite numbers, fractional or negative.
    """
    if isinstance(value, str) and _bare_list(value):  # 0,5,9 on the command line: numbers as Python reads them
        value = [_plain_number(item.strip()) for item in value.split(",")]
    if isinstance(value, str) and value.strip().startswith("["):  # a list on the command line: [3, 5] or [[0, 1], [2, 3]]
        try:  # the guarded loader of --config and --set: no alias bomb, no nesting deep enough to recurse
            value = parse_yaml(value, "--positions")
        except ConfigError as error:
            raise ConfigError("positions", f"expected a list such as [0, 5, 9] or [[0, 1], [2, 3]]; "
                              f"{str(error).removeprefix('config: ')}") from None
    if isinstance(value, str) and ":" in value and not value.endswith(".npy"):
        parts = value.split(":")
        try:
            numbers = [int(part) for part in parts]
        except ValueError:
            raise ConfigError("positions", f"expected start:stop[:step] with integers, got {value!r}") from None
        if len(numbers) not in (2, 3) or (len(numbers) == 3 and numbers[2] <= 0):
            raise ConfigError("positions", f"expected start:stop[:step] with a positive step, got {value!r}")
        count = len(range(*numbers))
        if count > MAX_POSITIONS:
            raise ConfigError("positions", f"{value!r} is {count:,} positions; at most {MAX_POSITIONS:,}")
        if budget is not None and count * 8 > budget:
            raise ConfigError("positions", f"{value!r} is {count:,} positions, {size_text(count * 8)} for their ids alone, "
                              f"over the budget of {size_text(budget)}; ask for fewer positions or raise --max-memory")
        positions = np.arange(*numbers, dtype=np.int64)
    elif isinstance(value, str):
        from pecli.io import load_array

        if is_number_text(value) and not os.path.exists(value):
            raise ConfigError("positions", f"{value!r} is a single number, not positions: give start:stop[:step], "
                              "a list such as 0,5,9, or an .npy file")

        try:
            positions = load_array(value, key="positions", max_bytes=min(MAX_POSITIONS * 8, budget or MAX_POSITIONS * 8))
        except PecliError as error:
            raise ConfigError("positions", str(error).removeprefix("positions: ")) from None
    elif isinstance(value, (list, tuple)):
        try:
            positions = np.asarray(value)
        except ValueError:  # ragged: rows of different lengths
            raise ConfigError("positions", f"every position needs the same number of coordinates, got {excerpt(value)}") from None
    else:
        raise ConfigError("positions", f"expected start:stop[:step], an .npy file or a list, got {value!r}")
    if positions.ndim == 0:
        raise ConfigError("positions", f"{value!r} holds a single number, not a list of positions (an array of shape (N,))")
    if positions.size == 0:
        raise ConfigError("positions", f"{value!r} gives no positions")
    if rank > 1 and positions.ndim == 2 and positions.shape[0] == rank != positions.shape[1]:
        positions = positions.T  # (rank, N), one row per axis, as encode writes them and HF's position_ids
    try:
        return as_positions(positions, rank, real=real)
    except PositionError as error:
        text = str(error).removeprefix("positions ")
        if not real and ("whole numbers" in text or ">= 0" in text):
            able = ", ".join(name for name, cls in SCHEMES.items() if cls.real_positions)
            text += f" (real-valued positions are for {able})"
        raise ConfigError("positions", text) from None


def _plain_number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        return float(text)


def _bare_list(text: str) -> bool:
    """Whether ``text`` is numbers separated by commas (``0,5,9``), and no file of that name exists."""
    items = text.split(",")
    return len(items) > 1 and all(is_number_text(item) for item in items) and not os.path.exists(text)
