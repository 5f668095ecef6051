"""Session stores (SQLite, PostgreSQL), session search and persisted tool outputs."""

from .contract import Store, VectorSearch
from .factory import open_store
from .search import SESSION_SEARCH_SCHEMA, SessionSearch
from .sessions import SessionStore

__all__ = [
    "SESSION_SEARCH_SCHEMA",
    "SessionSearch",
    "SessionStore",
    "Store",
    "VectorSearch",
    "open_store",
]
