"""Men et al.'s base bounds kept on disk between runs (``pecli wavelengths``, or any caller).

The bound for a context (:func:`pecli.wavelengths.spectrum.base_lower_bound`) is a search over thousands
of bases: tens of milliseconds for the 512 positions ``pecli wavelengths --scheme rope`` reads by
default, more than the rest of the run together, and the same figures every time. The first run that
computes a bound writes it to ``base-bounds.json`` in pecli's cache folder (``$PECLI_CACHE_DIR``, else
``$XDG_CACHE_HOME/pecli``, else ``~/.cache/pecli``); later runs read it back instead of searching again.

The file is written whole or not at all, and read only when it was written by the same code: its key
is a checksum of the modules that compute the bound and NumPy's version, so an upgrade recomputes.
A file that cannot be read or written is ignored (the bound is computed, as without a cache);
``PECLI_CACHE_DIR=`` (empty) turns the cache off.
"""

from __future__ import annotations

import contextlib
import json
import os
import zlib
from pathlib import Path
from typing import Any, Iterator

FILE_NAME = "base-bounds.json"


def cache_folder() -> Path | None:
    """pecli's cache folder, or None when ``PECLI_CACHE_DIR`` is set empty."""
    chosen = os.environ.get("PECLI_CACHE_DIR")
    if chosen is not None:
        return Path(chosen) if chosen.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pecli"


def code_key() -> str:
    """What the bounds depend on: NumPy's version and a checksum (CRC-32) of each module that computes them."""
    import numpy as np

    from pecli.wavelengths import spectrum
    from pecli.schemes import frequencies

    sums = [f"{zlib.crc32(Path(module.__file__).read_bytes()):08x}" for module in (spectrum, frequencies)]
    return "-".join([f"numpy {np.__version__}", *sums])


@contextlib.contextmanager
def remembered_bounds() -> Iterator[None]:
    """Inside, :func:`~pecli.wavelengths.spectrum.base_lower_bound` knows the bounds of earlier runs; the
    ones computed inside are written back for the next run."""
    from pecli.wavelengths.spectrum import known_bounds, remember_bounds

    folder = cache_folder()
    if folder is None:
        yield
        return
    path, key = folder / FILE_NAME, code_key()
    remember_bounds(dict(_read(path, key)))
    before = set(known_bounds())
    yield
    after = known_bounds()
    if set(after) - before:
        _write(path, key, after)


def _read(path: Path, key: str) -> list[tuple[tuple[int, int, int, float], Any]]:
    from pecli.wavelengths.spectrum import BaseBound

    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        if document.get("key") != key:
            return []
        out = []
        for entry in document["bounds"]:
            fields = dict(entry)
            decades_past = float(fields.pop("decades_past"))
            if fields.get("smallest_window") is not None:
                fields["smallest_window"] = tuple(fields["smallest_window"])
            bound = BaseBound(**fields)
            out.append(((bound.context, bound.dim, bound.steps_per_decade, decades_past), bound))
        return out
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []  # absent, unreadable or of another layout: computed again


def _write(path: Path, key: str, bounds: dict[tuple[int, int, int, float], Any]) -> None:
    import dataclasses

    from pecli.errors import PecliError
    from pecli.io import write_atomic

    entries = [{**dataclasses.asdict(bound), "decades_past": decades_past} for (_, _, _, decades_past), bound in bounds.items()]
    text = json.dumps({"key": key, "bounds": entries}, indent=1) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, lambda stream: stream.write(text.encode("utf-8")), force=True)
    except (OSError, PecliError):
        pass  # a read-only home: the next run computes the bound again
