"""SQLite session store, session search and persisted tool outputs."""

from .search import SESSION_SEARCH_SCHEMA, SessionSearch
from .sessions import SessionStore

__all__ = ["SESSION_SEARCH_SCHEMA", "SessionSearch", "SessionStore"]
