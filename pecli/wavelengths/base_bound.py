"""Men et al.'s bound on the base for a context: searched once, then kept — in the process and on disk.

:func:`base_lower_bound` is the door: it answers from :data:`KNOWN_BOUNDS`, the bounds this process knows,
and searches (:func:`pecli.wavelengths.bound_search.search_bound`) only for a (context, dim) it has not seen.
The search covers thousands of bases: tens of milliseconds for the 512 positions ``pecli wavelengths
--scheme rope`` reads by default, more than the rest of the run together, and the same figures every time.
Inside :func:`remembered_bounds` (``pecli wavelengths``, or any caller), the bounds of earlier runs are read
from ``base-bounds.json`` in pecli's cache folder (``$PECLI_CACHE_DIR``, else ``$XDG_CACHE_HOME/pecli``,
else ``~/.cache/pecli``), and those computed inside are written back for the next run.

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
from typing import Any, Iterator, Mapping

from pecli.errors import PecliError
from pecli.wavelengths.bound_search import BaseBound, search_bound

FILE_NAME = "base-bounds.json"


def base_lower_bound(context: int, dim: int, *, steps_per_decade: int = 4000, decades_past: float = 0.5) -> BaseBound:
    """The base above which every RoPE base keeps ``B(m) ≥ 0`` up to ``context``, and the smallest base that does.

    Parameters
    ----------
    context : int
        Context length L: ``B(m) ≥ 0`` is required for every integer ``m ≤ L``.
    dim : int
        The rotated head dimension d.
    steps_per_decade : int
        Resolution of the fine log grid that finds the lowest window of passing bases and the top
        edge of the last failing one.
    decades_past : float
        How far above the last failing base the verification grid keeps looking for another failure.

    Notes
    -----
    ``B(m) = Σ_{i=0}^{d/2−1} cos(m θ_i)`` with ``θ_i = b^(−2i/d)`` (Men et al. 2024, eq. 9); their
    bound for L is the smallest base with ``B(m) ≥ 0`` for all ``m ≤ L`` (their Table 1 for d = 128:
    4.3e3 for 1K tokens, 2.7e4 for 4K, 8.4e4 for 8K, 6.4e5 for 32K). The condition is not monotone
    in the base: below the point above which every base passes there are narrow windows of passing
    bases between failing ones (4K: 26,952–26,973 passes, 27,000 fails; 32K: 629,979–630,983 passes,
    640,000 fails), so both figures are reported. What "passes" means, and how rounding near 0 is
    treated, is in :class:`DecayScan`.

    Search: (1) a coarse log grid (50 per decade) from 2 up to the first passing base; (2) the fine
    grid from ``LOOKBACK_DECADES`` below it up to the first passing fine base, whose lower edge is
    bisected; (3) a verification grid (:func:`verify_steps_per_decade`) from there up to
    ``decades_past`` decades past its last failure; (4) the fine grid, by bisection, between that last
    failure and the next verified pass, checked at eight fine bases above the edge, and the upper edge
    of the lowest window. Edges are bisected to a relative ``EDGE_PRECISION``. A window narrower than a
    fine step, or lower than the look-back, and a failing island narrower than a verification step
    can be missed: failing islands above the lowest window get narrower as L grows (for 32K some are
    under 0.1 % wide), so the verification grid is what bounds the trust in ``every_base_above``.
    None when no base up to 1e30 passes, as for d = 2 where ``B(m) = cos m``. Results are kept per
    (L, d, resolution) in :data:`KNOWN_BOUNDS` for the process (and on disk between runs: :func:`remembered_bounds`).

    References
    ----------
    Men et al., "Base of RoPE Bounds Context Length", NeurIPS 2024.
    """
    if context < 1 or dim < 2 or dim % 2:
        raise PecliError(f"base bound needs a positive context and an even dim >= 2, got {context}, {dim}")
    key = (int(context), int(dim), int(steps_per_decade), float(decades_past))
    if key not in KNOWN_BOUNDS:
        from pecli.blas import one_blas_thread

        with one_blas_thread():  # thousands of (s × d)·(d × n) products: threads only contend
            KNOWN_BOUNDS[key] = search_bound(*key)
    return KNOWN_BOUNDS[key]



#: Every bound this process knows, by (context, dim, steps_per_decade, decades_past): those it computed,
#: and those :func:`remember_bounds` was given.
KNOWN_BOUNDS: dict[tuple[int, int, int, float], BaseBound] = {}


def remember_bounds(bounds: Mapping[tuple[int, int, int, float], BaseBound]) -> None:
    """Bounds an earlier run of the same code computed (kept on disk: :func:`remembered_bounds`), by
    (context, dim, steps_per_decade, decades_past): :func:`base_lower_bound` answers them without a search."""
    for key, bound in bounds.items():
        KNOWN_BOUNDS.setdefault(key, bound)


def known_bounds() -> dict[tuple[int, int, int, float], BaseBound]:
    """A copy of every bound this process knows (computed, or given to :func:`remember_bounds`)."""
    return dict(KNOWN_BOUNDS)


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

    from pecli.schemes import frequencies
    from pecli.wavelengths import bound_search

    sums = [f"{zlib.crc32(Path(module.__file__).read_bytes()):08x}" for module in (bound_search, frequencies)]
    return "-".join([f"numpy {np.__version__}", *sums])


@contextlib.contextmanager
def remembered_bounds() -> Iterator[None]:
    """Inside, :func:`base_lower_bound` knows the bounds of earlier runs; the ones computed inside are
    written back for the next run."""
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

    from pecli.io import write_atomic

    entries = [{**dataclasses.asdict(bound), "decades_past": decades_past} for (_, _, _, decades_past), bound in bounds.items()]
    text = json.dumps({"key": key, "bounds": entries}, indent=1) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, lambda stream: stream.write(text.encode("utf-8")), force=True)
    except (OSError, PecliError):
        pass  # a read-only home: the next run computes the bound again
