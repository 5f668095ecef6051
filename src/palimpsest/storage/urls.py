"""Store URLs: which backend a URL names, and how to show one without its password.

Kept apart from :mod:`.factory` (which opens stores) and :mod:`.pg_db` (which needs
psycopg), so both, and the CLI, can use these without importing each other.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["is_postgres_url", "redacted_url"]

_PG_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(url: str) -> bool:
    return url.strip().lower().startswith(_PG_SCHEMES)


def redacted_url(url: str) -> str:
    """``url`` without its password (for messages, logs and cache keys)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    user = f"{parts.username}:***@" if parts.username else ""
    return urlunsplit((parts.scheme, user + host, parts.path, parts.query, parts.fragment))
