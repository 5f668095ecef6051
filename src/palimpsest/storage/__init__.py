"""Session stores (SQLite, PostgreSQL), session search and persisted tool outputs.

Importing the package loads none of its modules: every submodule (``storage.fts_query``,
``storage.session_admin``, ...) imports the package first, and an eager ``__init__`` made
each of them pay for the search tool, the settings (pydantic, YAML) and the provider layer.
The public names below are imported on first use instead; type checkers see the ordinary
imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports as _lazy_exports

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


__getattr__, __dir__ = _lazy_exports(__name__, _LAZY, __all__, globals())
