"""BLAS on one thread where many small products run (the analyses, the base bound)."""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable


@functools.lru_cache(maxsize=None)
def _numpy_blas() -> Any:
    """threadpoolctl's controller of the thread pools loaded with NumPy, found once per process.

    Finding them lists the process's shared libraries (``/proc/self/maps`` on Linux): a millisecond or
    more each time in a large process, which ``threadpool_limits`` paid on every call. pecli's products
    are NumPy's, whose BLAS is loaded with NumPy, imported here before the libraries are listed.
    """
    import numpy  # noqa: F401 - its BLAS is loaded, so that the controller finds it
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_blas_thread() -> contextlib.AbstractContextManager:
    """Limit BLAS to one thread while many small or skinny products run (threadpoolctl).

    Splitting a (d × L)·(L × d) product or a small block over threads that other work already keeps
    busy costs more than it saves: measured 2–10× slower than one thread on a shared two-core machine
    (Men et al.'s base bound for 1M tokens: 18 s with OpenBLAS's threads, 2.4 s on one).
    """
    return _numpy_blas().limit(limits=1, user_api="blas")


def blas_pinned(function: Callable) -> Callable:
    """Run ``function`` under :func:`one_blas_thread`."""
    @functools.wraps(function)
    def pinned(*args: Any, **kwargs: Any) -> Any:
        with one_blas_thread():
            return function(*args, **kwargs)
    return pinned
