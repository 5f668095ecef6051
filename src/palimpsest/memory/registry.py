"""Finding memory providers: the entry-point group ``palimpsest.memory_providers``.

Bundled providers register through the same door as third-party ones (pyproject's
``[project.entry-points."palimpsest.memory_providers"]``). An entry point may name a
:class:`~palimpsest.memory.providers.MemoryProvider` subclass, an instance, or a factory
that returns one. On a name clash the bundled provider wins (MEM-43).
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

from ..errors import PluginNotFoundError
from .providers import MemoryProvider

__all__ = ["ENTRY_POINT_GROUP", "available_providers", "load_provider"]

ENTRY_POINT_GROUP = "palimpsest.memory_providers"
_BUNDLED_PREFIX = "palimpsest."


def _entry_points() -> dict[str, EntryPoint]:
    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        current = found.get(ep.name)
        if current is None or (
            ep.value.startswith(_BUNDLED_PREFIX) and not current.value.startswith(_BUNDLED_PREFIX)
        ):
            found[ep.name] = ep
    return found


def available_providers() -> list[str]:
    """Names of the installed memory providers, sorted."""
    return sorted(_entry_points())


def load_provider(name: str) -> MemoryProvider:
    """A new instance of the provider registered as ``name``.

    Raises :class:`~palimpsest.errors.PluginNotFoundError` listing the installed names.
    """
    found = _entry_points()
    ep = found.get(name)
    if ep is None:
        raise PluginNotFoundError("memory provider", name, list(found))
    obj = ep.load()
    provider = obj if isinstance(obj, MemoryProvider) else obj()
    if not isinstance(provider, MemoryProvider):
        raise TypeError(f"entry point {name!r} ({ep.value}) did not produce a MemoryProvider")
    return provider
