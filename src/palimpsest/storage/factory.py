"""``open_store``: the session store named by a URL, a path, the environment or the config.

Which store a process uses is decided once, here, in this order:

1. the ``url`` argument (a ``postgresql://`` URL, a ``sqlite:///path`` URL or a path);
2. the ``PALIMPSEST_DATABASE_URL`` environment variable;
3. the config key ``store.url``;
4. the config key ``store.path``, else ``$PALIMPSEST_HOME/state.db`` (SQLite).

``postgresql://`` (or ``postgres://``) URLs open a
:class:`~.pg_store.PostgresSessionStore` (the ``postgres`` extra: psycopg 3 and
psycopg-pool); anything else is a SQLite file. Both satisfy :class:`~.contract.Store`.
The config key ``store.embedder`` turns on search by meaning on either.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, MissingDependencyError
from .urls import is_postgres_url, redacted_url

if TYPE_CHECKING:
    from ..config import Settings
    from .contract import Store

__all__ = ["DATABASE_URL_ENV", "is_postgres_url", "open_store", "redacted_url", "store_url"]

DATABASE_URL_ENV = "PALIMPSEST_DATABASE_URL"


def store_url(url: str | Path | None = None, *, settings: Settings | None = None) -> str | None:
    """The configured store URL (argument, environment, ``store.url``), or ``None`` for
    the SQLite default (``store.path`` or ``$PALIMPSEST_HOME/state.db``)."""
    if url is not None and str(url).strip():
        return str(url).strip()
    from_env = os.environ.get(DATABASE_URL_ENV, "").strip()
    if from_env:
        return from_env
    if settings is None:
        from ..config import load_settings

        settings = load_settings()
    return settings.store.url or None


def open_store(
    url: str | Path | None = None, *, settings: Settings | None = None, **options: Any
) -> Store:
    """The store for ``url`` (see the module docstring for where it comes from).

    ``options`` go to the backend's constructor; without any, a SQLite store takes its
    full-text layout and background upkeep from the config.
    """
    if settings is None:
        from ..config import load_settings

        settings = load_settings()
    target = store_url(url, settings=settings)
    embedder = settings.store.embedder
    if target is not None and is_postgres_url(target):
        if embedder and "embedder" not in options:
            options["embedder"] = _embedder(embedder)
        options.setdefault("background_upkeep", settings.store.background_upkeep)
        try:
            from .pg_store import PostgresSessionStore
        except ImportError as exc:
            raise MissingDependencyError(exc.name or "psycopg", "postgres") from exc
        return PostgresSessionStore(target, **options)
    from .sessions import SessionStore, default_db_path

    if target is not None and target.lower().startswith("sqlite:///"):
        target = target[len("sqlite:///") :]  # sqlite:////abs/path keeps its leading /
    path = Path(target).expanduser() if target else None
    if path is None:
        configured = settings.store.path
        path = Path(configured).expanduser() if configured else default_db_path()
    if not options:
        options = {
            "fts_layout": settings.store.fts_layout,
            "background_upkeep": settings.store.background_upkeep,
        }
        if embedder:
            options["embedder"] = _embedder(embedder)
    return SessionStore(path, **options)


def _embedder(spec: str) -> Any:
    """``store.embedder`` as the store takes it; a bad value is a :class:`ConfigError`."""
    from .embedding import as_model

    try:
        return as_model(spec.strip())
    except ValueError as exc:
        raise ConfigError(str(exc), key="store.embedder") from exc
