"""BLAS on one thread where many small products run (the analyses, the base bound)."""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable


def one_blas_thread() -> contextlib.AbstractContextManager:
    """Limit BLAS to one thread while many small or skinny products run (threadpoolctl).

    Splitting a (d × L)·(L × d) product or a small block over threads that other work already keeps
    busy costs more than it saves: measured 2–10× slower than one thread on a shared two-core machine
    (Men et al.'s base bound for 1M tokens: 18 s with OpenBLAS's threads, 2.4 s on one).
    """
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def blas_pinned(function: Callable) -> Callable:
    """Run ``function`` under :func:`one_blas_thread`."""
    @functools.wraps(function)
    def pinned(*args: Any, **kwargs: Any) -> Any:
        with one_blas_thread():
            return function(*args, **kwargs)
    return pinned
