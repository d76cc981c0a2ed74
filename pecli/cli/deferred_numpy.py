"""NumPy's code run on first use instead of at ``import numpy``, for a process that prints a help page.

pecli's modules import NumPy at their top, and a command's help page imports the command's module and,
through it, the scheme classes whose parameters are its options; none of the page is computed by NumPy,
whose import is nevertheless a quarter of ``pecli encode --help``. :func:`defer_numpy` puts NumPy's
module in ``sys.modules`` before its code has run: ``import numpy as np`` finds it there and binds it
as usual, and the first attribute asked of it (``np.float64``, ``from numpy import …``) runs NumPy's
code into that same module object, which is an ordinary module from then on. The modules stay as they
are written, and what they do with NumPy is unchanged; only when its code runs moves.

It is :class:`importlib.util.LazyLoader`'s device, except for which attributes start the loading: the
standard library's deferred module loads on *any* attribute, and every ``import numpy`` statement reads
the module's ``__spec__`` (Python 3.11), so the first module to import NumPy would load it.
"""

from __future__ import annotations

import importlib.util
import sys
import types


class _Deferred(types.ModuleType):
    """NumPy's module before its code has run: it has what the import system set (``__spec__``,
    ``__file__``) but its ``__path__``, and the first attribute it lacks runs the code. Without a
    ``__path__``, importing a submodule (``import numpy.lib``, as ``numpy.lib.format`` is) asks for it
    first and so runs NumPy's own ``__init__`` before the submodule's, as a plain import would; with it,
    the submodule would run alone, before the package it needs."""

    def __getattr__(self, name: str) -> object:
        self.__class__ = types.ModuleType  # before the code runs: its own imports of numpy find a module
        if self.__spec__.submodule_search_locations is not None:
            self.__path__ = self.__spec__.submodule_search_locations
        try:
            self.__spec__.loader.exec_module(self)
        except BaseException:
            sys.modules.pop(self.__name__, None)  # as a failed import leaves it: the next import tries again
            raise
        return getattr(self, name)


def defer_numpy() -> None:
    """Put NumPy's module, its code not yet run, in ``sys.modules`` (unless NumPy is loaded already or
    cannot be found: then ``import numpy`` does what it would have done)."""
    if "numpy" in sys.modules:
        return
    spec = importlib.util.find_spec("numpy")
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    if hasattr(module, "__path__"):
        del module.__path__  # restored when the code runs (:class:`_Deferred`)
    module.__class__ = _Deferred
    sys.modules["numpy"] = module
