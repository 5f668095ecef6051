"""The PostgreSQL side of the store's SQL gateway: a connection pool and one write path.

:class:`PgDatabase` mirrors what :class:`~.db.Database` offers its callers (``write(fn)``,
``reader()``, ``query``, ``scalar``), so modules that keep small state next to the
sessions (the compaction lease, prompt-token figures, the agent's ledger) run the same
code on either backend. The connection handed to ``fn`` is a :class:`SqliteDialect`:
it accepts the few SQLite spellings those modules use (``?`` parameters,
``INSERT OR IGNORE``, ``INSERT OR REPLACE`` on the two key-value tables,
``con.changes()``) and rewrites them for PostgreSQL. Queries beyond that subset are
written for PostgreSQL in :mod:`.pg_store` and :mod:`.pg_search`.

Every ``write`` runs at ``SERIALIZABLE`` isolation and is retried on a serialization
failure or deadlock, so a read-then-write such as taking a lease is atomic across
processes and machines, the guarantee SQLite's ``BEGIN IMMEDIATE`` gives on one file.
The hot paths (appends, continuations) do not pay for it: :mod:`.pg_store` runs them at
``READ COMMITTED`` with row locks.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool, PoolTimeout

from ..errors import DatabaseLockedError, StorageError
from .urls import redacted_url

__all__ = ["PgDatabase", "SqliteDialect", "redacted_url", "translate"]

T = TypeVar("T")

RETRY_ERRORS = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)
"""Failures a transaction is simply run again after (nothing of it was committed)."""

CONFLICT_KEYS = {"history_imports": "path, key"}
"""The primary key of tables whose ``INSERT OR REPLACE`` conflicts on more than the first
column; other tables conflict on their first column."""

_OR_IGNORE = re.compile(r"^\s*INSERT\s+OR\s+IGNORE\s+INTO", re.IGNORECASE)
_OR_REPLACE = re.compile(
    r"^\s*INSERT\s+OR\s+REPLACE\s+INTO\s+(\w+)\s*\(([^)]*)\)", re.IGNORECASE | re.DOTALL
)


def translate(sql: str) -> str:
    """The SQLite-dialect statement ``sql`` as PostgreSQL (see the module docstring)."""
    text = sql.replace("%", "%%").replace("?", "%s")
    if _OR_IGNORE.match(text):
        return _OR_IGNORE.sub("INSERT INTO", text, count=1) + " ON CONFLICT DO NOTHING"
    replace = _OR_REPLACE.match(text)
    if replace:
        table = replace.group(1)
        columns = [c.strip() for c in replace.group(2).split(",")]
        key = CONFLICT_KEYS.get(table.lower(), columns[0])
        keys = {k.strip() for k in key.split(",")}
        updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns if c not in keys)
        head = f"INSERT INTO {table} ({replace.group(2)})"
        return head + text[replace.end() :] + f" ON CONFLICT ({key}) DO UPDATE SET {updates}"
    return text


class _Result:
    """An executed statement, read like an apsw cursor (iterate, ``fetchall``)."""

    def __init__(self, cursor: psycopg.Cursor[Any]) -> None:
        self._cursor = cursor
        self._rows: list[tuple[Any, ...]] = (
            list(cursor.fetchall()) if cursor.description is not None else []
        )

    def fetchall(self) -> list[tuple[Any, ...]]:
        return list(self._rows)

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows[0] if self._rows else None

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self._rows)

    def get_description(self) -> tuple[tuple[str, str], ...]:
        return tuple((d.name, str(d.type_code)) for d in self._cursor.description or ())


class SqliteDialect:
    """A psycopg connection that takes the small SQLite dialect of the shared modules."""

    def __init__(self, connection: psycopg.Connection[Any], filename: str) -> None:
        self.raw = connection
        self.filename = filename  # what apsw calls it: the cache key of session_secrets
        self._changes = 0

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> _Result:
        # Client-side binding: SQLite-style ``? IS NULL`` needs no parameter type.
        cursor = psycopg.ClientCursor(self.raw)
        cursor.execute(translate(sql), tuple(params or ()))
        self._changes = max(0, cursor.rowcount)
        return _Result(cursor)

    def changes(self) -> int:
        """Rows changed by the last statement (apsw's ``changes()``)."""
        return self._changes


class PgDatabase:
    """A pool of connections to one PostgreSQL database, and the one write path."""

    read_only = False
    read_only_reason: str | None = None

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 8,
        attempts: int = 20,
        timeout: float = 30.0,
    ) -> None:
        self.url = url
        self.location = redacted_url(url)
        self._local = threading.local()  # the connection of this thread's open transaction
        self.attempts = max(1, attempts)
        try:
            # One direct connection first: a wrong URL fails now, in one line, instead of
            # the pool retrying in the background until its timeout.
            psycopg.connect(url, connect_timeout=max(1, int(timeout))).close()
            self.pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
                url,
                min_size=min_size,
                max_size=max_size,
                timeout=timeout,
                open=False,
                name="palimpsest",
            )
            self.pool.open(wait=True, timeout=timeout)
        except (psycopg.Error, PoolTimeout) as exc:
            raise StorageError(
                f"Session database not available: {self.location}: {_first_line(exc)}",
                path=self.location,
            ) from exc

    def close(self) -> None:
        self.pool.close()

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection in autocommit mode (each statement its own transaction);
        inside this thread's open transaction, that transaction's connection."""
        joined = getattr(self._local, "con", None)
        if joined is not None:
            yield joined
            return
        with self.pool.connection() as con:
            con.autocommit = True
            yield con

    def transact(
        self,
        fn: Callable[[psycopg.Connection[Any]], T],
        *,
        isolation: psycopg.IsolationLevel = psycopg.IsolationLevel.READ_COMMITTED,
    ) -> T:
        """Run ``fn`` in one transaction, again after a serialization failure or deadlock.

        ``fn`` may run more than once, so it keeps no state outside the database. Called
        from inside another ``transact`` on the same thread, ``fn`` joins that transaction
        (as nested writes do on SQLite), so an import lands whole or not at all.
        """
        joined = getattr(self._local, "con", None)
        if joined is not None:
            return fn(joined)
        delay = 0.005
        for attempt in range(self.attempts):
            try:
                with self.pool.connection() as con:
                    con.autocommit = False
                    con.isolation_level = isolation
                    with con.transaction():
                        self._local.con = con
                        try:
                            return fn(con)
                        finally:
                            self._local.con = None
            except RETRY_ERRORS as exc:
                if attempt + 1 >= self.attempts:
                    raise DatabaseLockedError(
                        f"{self.location}: a write kept conflicting with other writers "
                        f"({self.attempts} attempts); nothing was written: {_first_line(exc)}",
                        path=self.location,
                    ) from exc
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 0.5)
            except psycopg.OperationalError as exc:
                raise StorageError(
                    f"Session database not available: {self.location}: {_first_line(exc)}",
                    path=self.location,
                ) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    # -- the gateway the shared modules use (same shape as db.Database) ---------------

    def write(self, fn: Callable[[Any], T]) -> T:
        """``fn(SqliteDialect)`` in one serializable transaction (retried on conflict)."""
        return self.transact(
            lambda con: fn(SqliteDialect(con, self.location)),
            isolation=psycopg.IsolationLevel.SERIALIZABLE,
        )

    @contextmanager
    def reader(self) -> Iterator[Any]:
        """A :class:`SqliteDialect` on a pooled autocommit connection, for a ``with`` block."""
        with self.connection() as con:
            yield SqliteDialect(con, self.location)

    @contextmanager
    def snapshot(self) -> Iterator[Any]:
        """Like :meth:`reader`, but every statement of the block reads one snapshot (a
        ``REPEATABLE READ, READ ONLY`` transaction), as a SQLite read transaction does."""
        with self.connection() as con:
            if con.autocommit:
                con.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                try:
                    yield SqliteDialect(con, self.location)
                finally:
                    con.execute("ROLLBACK")  # it only read
            else:  # inside this thread's write transaction: that one is the snapshot
                yield SqliteDialect(con, self.location)

    def query(self, sql: str, params: Any = None) -> list[dict[str, Any]]:
        with self.reader() as con:
            result = con.execute(sql, params)
            names = [d[0] for d in result.get_description()]
            return [dict(zip(names, row, strict=True)) for row in result]

    def scalar(self, sql: str, params: Any = None) -> Any:
        with self.reader() as con:
            row = con.execute(sql, params).fetchone()
        return row[0] if row else None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
