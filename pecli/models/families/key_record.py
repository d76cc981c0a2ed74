"""The record of which config keys were read and which defaulted: the model's, which belong to every layer
group, and those read inside one group's scope (:meth:`KeyRecord.scoped`, one layer type's encoding)."""

from __future__ import annotations

from typing import Any, Callable

from pecli.models.plan import Source


class KeyRecord:
    """Keys read, keys defaulted (``key=value``) and the sources of settings, for the model and per scope."""

    def __init__(self) -> None:
        self.read: list[str] = []
        self.defaulted: list[str] = []
        #: Every key any scope read, whether or not its group kept it (a scheme drafted for layers that
        #: turned out to have none).
        self.consulted: set[str] = set()
        #: Where each setting read outside a scope came from (:meth:`~pecli.models.families.setting_trace.SettingTrace.traced`).
        self.sources: list[Source] = []
        self._scope: tuple[list[str], list[str], list[Source]] | None = None

    def _here(self) -> tuple[list[str], list[str], list[Source]]:
        """The lists a read notes into now: the current scope's, else the model's."""
        return self._scope or (self.read, self.defaulted, self.sources)

    def scoped(self, read: Callable[[], Any]) -> tuple[Any, tuple[str, ...], tuple[str, ...], tuple[Source, ...]]:
        """``read()``'s result, with the keys it read and defaulted besides the model's (for one group), and
        the sources of its settings."""
        outer, self._scope = self._scope, ([], [], [])
        try:
            result = read()
            scope = self._scope
        finally:
            self._scope = outer
        self.consulted.update(scope[0])
        return (result, self.keys(scope[0]), tuple(dict.fromkeys(self.defaulted + scope[1])),
                tuple(dict.fromkeys(self.sources + scope[2])))

    def keys(self, extra: list[str] | tuple[str, ...] = ()) -> tuple[str, ...]:
        """The model's keys read so far, then ``extra``."""
        return tuple(dict.fromkeys(self.read + list(extra)))


__all__ = ["KeyRecord"]
