"""Session stores (SQLite, PostgreSQL), session search and persisted tool outputs.

Importing the package loads none of its modules: every submodule (``storage.fts_query``,
``storage.session_admin``, ...) imports the package first, and an eager ``__init__`` made
each of them pay for the search tool, the settings (pydantic, YAML) and the provider layer.
The public names below are imported on first use instead; type checkers see the ordinary
imports.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .contract import Store, VectorSearch
    from .factory import open_store
    from .search import SESSION_SEARCH_SCHEMA, SessionSearch
    from .sessions import SessionStore

_LAZY: dict[str, str] = {
    "Store": ".contract",
    "VectorSearch": ".contract",
    "open_store": ".factory",
    "SESSION_SEARCH_SCHEMA": ".search",
    "SessionSearch": ".search",
    "SessionStore": ".sessions",
}

__all__ = [
    "SESSION_SEARCH_SCHEMA",
    "SessionSearch",
    "SessionStore",
    "Store",
    "VectorSearch",
    "open_store",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'palimpsest.storage' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
