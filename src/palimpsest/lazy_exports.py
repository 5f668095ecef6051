"""Public names of a package imported on first use (PEP 562), so importing it stays cheap.

``import palimpsest`` and any ``palimpsest.storage.<module>`` import would otherwise pay for
everything the package re-exports: the store, the settings layer (pydantic, YAML), the
compressor. A package lists which module each public name comes from and installs the
``__getattr__`` and ``__dir__`` this module builds; type checkers read the package's
ordinary imports under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str,
    origins: Mapping[str, str],
    public: Iterable[str],
    namespace: MutableMapping[str, Any],
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``.

    ``origins`` maps each lazy name to the module (relative to ``package``) that defines it;
    the first lookup imports that module and stores the value in ``namespace`` (the
    package's ``globals()``), so later lookups never reach ``__getattr__`` again.
    """
    listed = frozenset(public)

    def __getattr__(name: str) -> Any:
        module = origins.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *listed})

    return __getattr__, __dir__
