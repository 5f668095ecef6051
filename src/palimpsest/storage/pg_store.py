"""``PostgresSessionStore``: the session store on a PostgreSQL database, for shared gateways.

One SQLite file serves one machine and one writer at a time. A gateway answering many
users from several processes or machines keeps its sessions here instead; the methods
and their results are those of :class:`~.sessions.SessionStore` (the contract in
:mod:`.contract`, checked by one shared test suite).

Concurrency: every write is one transaction on a pooled connection. Appends lock their
session's row (``UPDATE ... message_count``) and insert the batch in the same
transaction, so writers of different sessions never wait for each other and a batch is
stored whole or not at all. A compression continuation ends its parent and creates the
child with its seed messages in **one** transaction, holding the parent's row lock, so a
writer killed at any point leaves either the old state or the whole new chain link. The
small key-value writes of the shared modules (the compaction lease, the agent's state)
run serializable (:mod:`.pg_db`). Search is in :mod:`.pg_search`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

from ..errors import SessionNotFoundError, StorageError
from ..messages import Message
from . import lineage as _lineage
from .codec import (
    MESSAGE_COLUMNS,
    call_names,
    count_tool_calls,
    decode_row,
    encode_message,
)
from .embedding import EmbeddingModel, EmbedFunction
from .pg_db import PgDatabase, SqliteDialect
from .pg_schema import migrate
from .pg_schema import schema_version as _schema_version
from .pg_vectors import PgVectorIndex
from .pg_writes import (
    HIDDEN,
    insert_messages,
    meta_words,
    one_session,
    session_meta_text,
    set_meta,
)
from .pg_writes import stored_call_names as stored_names
from .secrets_keeper import SecretKeeper, keep_before_close
from .sessions import new_session_id
from .store_common import SearchFilters, StoreCommon
from .titles import next_title_in_lineage, sanitize_title
from .writes import INHERITED, check_title_free, seed_key

__all__ = ["PostgresSessionStore", "session_meta_text"]


class PostgresSessionStore(StoreCommon):
    """The session store on the PostgreSQL database at ``url`` (see the module docstring).

    ``pool_size`` bounds the connections this process opens. Opening migrates the schema
    (``pg_trgm`` must be available: Debian's ``postgresql`` package has it). ``embedder``:
    search by meaning as on SQLite (:mod:`.pg_vectors`; ``background_embedding``).
    ``background_upkeep``: keep each session's revealed secrets in a thread after appends
    (:class:`~.secrets_keeper.SecretKeeper`); off, :meth:`keep_secrets` does it.
    """

    backend = "postgresql"
    _db: PgDatabase
    has_fts5 = True
    has_trigram = True

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 8,
        embedder: EmbeddingModel | EmbedFunction | str | None = None,
        background_embedding: bool = True,
        background_upkeep: bool = True,
    ) -> None:
        self._db = PgDatabase(url, max_size=max(1, pool_size))
        try:
            with self._db.connection() as con:
                migrate(con)
            self.vectors = PgVectorIndex.for_store(self._db, embedder, background_embedding)
            #: Keeps each session's revealed secrets off the append path (:mod:`.secrets_keeper`).
            self.secrets = SecretKeeper(self._db, background=background_upkeep)
            self._wrote = False
        except BaseException:  # a bad embedder too: no pool left open
            self._db.close()
            raise
        self.location = self._db.location

    # -- opening, closing ----------------------------------------------------------------

    def close(self) -> None:
        if self.vectors is not None:
            self.vectors.close()
        self.secrets.close()
        if self._wrote:
            keep_before_close(self._db, self.location, (StorageError, psycopg.Error))
        self._db.close()

    @property
    def database(self) -> PgDatabase:
        return self._db

    @property
    def path(self) -> Path:
        """The redacted URL as a path-like name (callers that print where the store is)."""
        return Path(self.location)

    read_only = False
    read_only_reason: str | None = None

    @property
    def schema_version(self) -> int:
        with self._db.connection() as con:
            return _schema_version(con)

    @contextmanager
    def connection_for_reads(self) -> Iterator[Any]:
        """A connection taking the shared modules' SQLite dialect (:mod:`.pg_db`)."""
        with self._db.reader() as con:
            yield con

    # -- sessions ------------------------------------------------------------------------

    def create_session(
        self,
        session_id: str | None = None,
        source: str = "cli",
        model: str | None = None,
        model_config: Mapping[str, Any] | None = None,
        system_prompt: str | None = None,
        user_id: str | None = None,
        parent_session_id: str | None = None,
        title: str | None = None,
    ) -> str:
        """Create a session (an existing id is left as it is)."""
        sid = session_id or new_session_id()
        clean_title = sanitize_title(title)
        started = time.time()

        def insert(con: psycopg.Connection[Any]) -> None:
            if (
                parent_session_id is not None
                and not con.execute(
                    "SELECT 1 FROM sessions WHERE id = %s", (parent_session_id,)
                ).fetchone()
            ):
                raise SessionNotFoundError(parent_session_id)
            if clean_title is not None:
                check_title_free(self._dialect(con), clean_title, sid)
            con.execute(
                "INSERT INTO sessions (id, source, model, model_config, system_prompt, user_id,"
                " parent_session_id, title, started_at, meta_tsv, meta_words)"
                " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s, %s::tsvector, %s)"
                " ON CONFLICT (id) DO NOTHING",
                (
                    sid,
                    source,
                    model,
                    None if model_config is None else json.dumps(dict(model_config)),
                    system_prompt,
                    user_id,
                    parent_session_id,
                    clean_title,
                    started,
                    *meta_words(clean_title, started, source),
                ),
            )

        self._db.transact(insert)
        return sid

    def _dialect(self, con: psycopg.Connection[Any]) -> Any:
        return SqliteDialect(con, self.location)

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        with self._db.connection() as con:
            row = one_session(con, "SELECT * FROM sessions WHERE id = %s", (session_id,))
        if row is not None and row.get("model_config"):
            row["model_config"] = json.loads(row["model_config"])
        return row

    def end_session(self, session_id: str, end_reason: str) -> bool:
        def end(con: psycopg.Connection[Any]) -> bool:
            cursor = con.execute(
                "UPDATE sessions SET ended_at = %s, end_reason = %s"
                " WHERE id = %s AND ended_at IS NULL",
                (time.time(), end_reason, session_id),
            )
            return cursor.rowcount > 0

        return self._db.transact(end)

    def set_session_title(self, session_id: str, title: str | None) -> bool:
        clean = sanitize_title(title)

        def set_title(con: psycopg.Connection[Any]) -> bool:
            if clean is not None:
                check_title_free(self._dialect(con), clean, session_id)
            changed = con.execute(
                "UPDATE sessions SET title = %s WHERE id = %s", (clean, session_id)
            ).rowcount
            set_meta(con, session_id)
            return changed > 0

        return self._db.transact(set_title)

    def delete_session(self, session_id: str) -> bool:
        def delete(con: psycopg.Connection[Any]) -> bool:
            con.execute(
                "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = %s",
                (session_id,),
            )
            con.execute("DELETE FROM messages WHERE session_id = %s", (session_id,))
            return con.execute("DELETE FROM sessions WHERE id = %s", (session_id,)).rowcount > 0

        return self._db.transact(delete)

    def _update(self, session_id: str, assignments: str, params: Sequence[Any] = ()) -> None:
        def update(con: psycopg.Connection[Any]) -> None:
            cursor = con.execute(  # assignments are written with ``?`` (store_common)
                f"UPDATE sessions SET {assignments.replace('?', '%s')} WHERE id = %s",
                (*params, session_id),
            )
            if cursor.rowcount == 0:
                raise SessionNotFoundError(session_id)

        self._db.transact(update)

    # -- messages ------------------------------------------------------------------------

    def append_messages(
        self,
        session_id: str,
        messages: Iterable[Mapping[str, Any]],
        *,
        token_counts: Sequence[int | None] | None = None,
    ) -> list[int]:
        """Append a batch in ONE transaction (all or nothing) and return the new ids."""
        batch = [dict(m) for m in messages]
        if not batch:
            return []
        counts = list(token_counts) if token_counts is not None else [None] * len(batch)
        if len(counts) != len(batch):
            raise ValueError("token_counts must have one entry per message")
        names = call_names(batch)
        unnamed = {
            str(m["tool_call_id"])
            for m in batch
            if m.get("role") == "tool" and not m.get("name") and m.get("tool_call_id")
        } - set(names)
        if unnamed:
            names.update(stored_names(self._db, session_id, unnamed))
        encoded = [
            encode_message(m, token_count=n, tool_name=names.get(str(m.get("tool_call_id"))))
            for m, n in zip(batch, counts, strict=True)
        ]
        tool_calls = sum(count_tool_calls(m) for m in batch)
        ids = self._db.transact(lambda con: insert_messages(con, session_id, encoded, tool_calls))
        self._written()
        return ids

    def _written(self) -> None:
        """After messages commit: wake the threads that work off the append path."""
        self._wrote = True
        self.secrets.notify()
        if self.vectors is not None:
            self.vectors.notify()

    def last_message_time(self, session_id: str) -> float | None:
        """When the session's newest live message was stored (epoch seconds), or ``None``."""
        value = self._db.scalar(
            "SELECT max(timestamp) FROM messages WHERE session_id = ? AND active = 1",
            (session_id,),
        )
        return float(value) if value is not None else None

    def get_messages(self, session_id: str, *, include_inactive: bool = False) -> list[Message]:
        """The session's messages in order, in OpenAI format (live rows only by default)."""
        with self._db.connection() as con:
            cursor = con.execute(
                f"SELECT {', '.join(MESSAGE_COLUMNS)} FROM messages WHERE session_id = %s"
                f"{'' if include_inactive else ' AND active = 1'} ORDER BY id",
                (session_id,),
            )
            found = cursor.fetchall()
        return [decode_row(dict(zip(MESSAGE_COLUMNS, row, strict=True))) for row in found]

    # -- compression continuations and lineage ------------------------------------------

    def start_continuation(
        self,
        parent_id: str,
        *,
        messages: Iterable[Mapping[str, Any]] | None = None,
        model: str | None = None,
        system_prompt: str | None = None,
        title: str | None = None,
        session_id: str | None = None,
    ) -> str:
        """End ``parent_id`` with ``compression`` and start its continuation, in one
        transaction holding the parent's row lock (see the module docstring)."""
        sid = session_id or new_session_id()
        batch = [dict(m) for m in messages or ()]
        names = call_names(batch)
        encoded = [
            encode_message(m, tool_name=names.get(str(m.get("tool_call_id")))) for m in batch
        ]
        tool_calls = sum(count_tool_calls(m) for m in batch)
        wanted_title = sanitize_title(title)

        def create(con: psycopg.Connection[Any]) -> None:
            parent = one_session(
                con, "SELECT * FROM sessions WHERE id = %s FOR UPDATE", (parent_id,)
            )
            if parent is None:
                raise SessionNotFoundError(parent_id)
            if parent["ended_at"] is not None and parent["end_reason"] != "compression":
                raise ValueError(
                    f"session {parent_id!r} already ended ({parent['end_reason']}); "
                    "only a live session can be continued after compression"
                )
            if parent["ended_at"] is None:
                parent["ended_at"] = time.time()
                con.execute(
                    "UPDATE sessions SET ended_at = %s, end_reason = 'compression' WHERE id = %s",
                    (parent["ended_at"], parent_id),
                )
            dialect = self._dialect(con)
            new_title = wanted_title
            if new_title is not None:
                check_title_free(dialect, new_title, sid)
            elif parent["title"]:
                new_title = next_title_in_lineage(dialect, parent["title"])
            started = max(time.time(), float(parent["ended_at"]))
            values: dict[str, Any] = {
                "id": sid,
                "source": parent["source"],
                "model": model or parent["model"],
                "system_prompt": (
                    system_prompt if system_prompt is not None else parent["system_prompt"]
                ),
                "parent_session_id": parent_id,
                "title": new_title,
                "started_at": started,
                **{k: parent[k] for k in INHERITED},
            }
            con.execute(
                f"INSERT INTO sessions ({', '.join(values)}, meta_tsv, meta_words) VALUES"
                f" ({', '.join('%s' for _ in values)}, %s::tsvector, %s)",
                (*values.values(), *meta_words(new_title, started, parent["source"])),
            )
            if encoded:
                insert_messages(con, sid, encoded, tool_calls)
                con.execute(
                    "INSERT INTO state_meta (key, value) VALUES (%s, %s)",
                    (seed_key(sid), str(len(encoded))),
                )

        self._db.transact(create)
        if encoded:
            self._written()
        return sid

    def list_sessions(
        self,
        limit: int = 20,
        offset: int = 0,
        source: str | None = None,
        *,
        include_children: bool = False,
    ) -> list[dict[str, Any]]:
        with self.connection_for_reads() as con:
            found = _lineage.list_rows(
                con, limit=limit, offset=offset, source=source, include_children=include_children
            )
        return [{k: v for k, v in row.items() if k not in HIDDEN} for row in found]

    # -- search, transcripts, maintenance -----------------------------------------------

    def _search(self, query: str, filters: SearchFilters) -> list[dict[str, Any]]:
        """Word hits (:mod:`.pg_search`), fused with meaning hits when the store has an
        embedder (:func:`.pg_vectors.search_hits`)."""
        from .pg_vectors import search_hits

        return search_hits(self._db, self.vectors, query, filters)

    def verify(self) -> list[str]:
        """Problems found (empty when all is well); see :mod:`.pg_maintenance`."""
        from .pg_maintenance import verify

        return verify(self._db)

    def repair(self) -> list[str]:
        """Rebuild the indexes and the message counters; one line per step."""
        from .pg_maintenance import repair

        return repair(self._db)
