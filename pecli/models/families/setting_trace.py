"""Where each setting of a layer group came from: the keys read while it was being read, each with its
:class:`~pecli.models.plan.Origin` (the file, its class's defaults, the reader's default, the model's code)."""

from __future__ import annotations

from typing import Any, Callable

from pecli.models.families.key_record import KeyRecord
from pecli.models.plan import Origin, Source


class SettingTrace(KeyRecord):
    """Reads inside :meth:`traced` are the sources of one setting; :meth:`attribute` records them in the
    current scope (:meth:`~pecli.models.families.key_record.KeyRecord.scoped`)."""

    def __init__(self) -> None:
        super().__init__()
        self._hearing: list[tuple[str, Origin]] | None = None

    def heard(self, names: tuple[str, ...] | list[str], origin: Origin) -> None:
        """Note keys read (or defaulted) for the setting being :meth:`traced`, if any."""
        if self._hearing is not None:
            self._hearing.extend((name, origin) for name in names)

    def listened(self, read: Callable[[], Any]) -> tuple[Any, list[tuple[str, Origin]]]:
        """``read()``'s result and the keys it read, each with its origin, in order."""
        outer, self._hearing = self._hearing, []
        try:
            result = read()
            heard = self._hearing
        finally:
            self._hearing = outer
        if outer is not None:
            outer.extend(heard)
        return result, heard

    def traced(self, setting: str, read: Callable[[], Any]) -> Any:
        """``read()``'s result, the keys it read becoming the sources of ``setting`` (:meth:`attribute`)."""
        result, heard = self.listened(read)
        self.attribute(setting, heard)
        return result

    def attribute(self, setting: str, heard: list[tuple[str, Origin]] | tuple[tuple[str, Origin], ...]) -> None:
        """Record that ``setting`` came from each ``(key, origin)`` of ``heard`` (in the current scope)."""
        sources = self._here()[2]
        for key, origin in heard:
            source = Source(setting, key, origin)
            if source not in sources:
                sources.append(source)


__all__ = ["SettingTrace"]
