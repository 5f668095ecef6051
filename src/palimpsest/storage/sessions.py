"""``SessionStore``: every message of every session in one SQLite file, searchable.

Compaction is lossy; this store is what keeps the conversation lossless underneath. Each
message lands in ``messages`` (one insert; triggers keep both full-text indexes current),
each session in ``sessions`` with its lineage, counters and cost. A compaction ends the old
session with ``end_reason = 'compression'`` and continues in a new child session
(:meth:`SessionStore.start_continuation`); the old one stays whole and searchable.

The file is ``$PALIMPSEST_HOME/state.db`` by default. Opening it migrates the schema
(:mod:`.schema`); all writes go through one retrying transaction helper (:mod:`.db`), so
several processes can write at once. Lineage walks and list projection live in
:mod:`.lineage`, transcript export/import and maintenance in :mod:`.transfer` and
:mod:`.maintenance`.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import apsw

from ..config import home_dir
from ..errors import SessionNotFoundError, StorageError
from ..messages import Message
from ..usage import CanonicalUsage
from . import lineage as _lineage
from .codec import MESSAGE_COLUMNS, call_names, count_tool_calls, decode_row, encode_message
from .db import Database, RetryPolicy, Tracer, rows
from .schema import (
    DEFAULT_FTS_LAYOUT,
    MIGRATIONS,
    FtsLayout,
    applied_migrations,
    apply_migration,
    fts_support,
    get_meta,
    install_fts,
    schema_version,
    table_exists,
)
from .titles import escape_like, next_title_in_lineage, sanitize_title

__all__ = ["DB_FILENAME", "SessionStore", "default_db_path", "new_session_id"]

DB_FILENAME = "state.db"

#: Session fields a compression continuation copies from its parent (SS-10, SS-37).
_INHERITED = (
    "user_id",
    "model_config",
    "compression_failure_cooldown_until",
    "compression_failure_error",
    "compression_fallback_streak",
    "compression_ineffective_count",
)

_COUNTERS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "api_call_count",
)


def default_db_path() -> Path:
    """``<home>/state.db``, where ``<home>`` is ``$PALIMPSEST_HOME`` or ``~/.palimpsest``."""
    return home_dir() / DB_FILENAME


def new_session_id() -> str:
    """SS-26: ``YYYYMMDD_HHMMSS_<6 lowercase hex>`` from local time."""
    return f"{datetime.now():%Y%m%d_%H%M%S}_{secrets.token_hex(3)}"


class SessionStore:
    """The session store on one SQLite file (see the module docstring).

    ``fts_layout`` (``"inline"`` or ``"external"``) switches the full-text layout when it
    differs from the file's; ``None`` keeps the file's (``inline`` for a new file).
    ``tracer`` is called with ``(sql, bindings)`` for every statement.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        fts_layout: FtsLayout | None = None,
        tracer: Tracer | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.path = Path(path).expanduser() if path is not None else default_db_path()
        self._db = Database(self.path, retry=retry, tracer=tracer)
        try:
            self.has_fts5, self.has_trigram = fts_support(self._db.writer)
            self._migrate()
            self._ensure_fts(fts_layout)
        except BaseException:
            self._db.close()
            raise

    # -- opening, closing ----------------------------------------------------------------

    def _migrate(self) -> None:
        known = list(MIGRATIONS)

        def check(con: apsw.Connection) -> list[str]:
            done = applied_migrations(con)
            unknown = [name for name in done if name not in MIGRATIONS]
            if unknown or schema_version(con) > len(known):
                raise StorageError(
                    f"{self.path}: the database was written by a newer palimpsest "
                    f"(schema version {schema_version(con)}); upgrade palimpsest to open it",
                    path=self.path,
                )
            return done

        done = self._db.write(check)
        for name in known:
            if name not in done:
                self._db.write(lambda con, name=name: apply_migration(con, name))

    def _ensure_fts(self, wanted: FtsLayout | None) -> None:
        if not self.has_fts5:
            return

        def ensure(con: apsw.Connection) -> None:
            current = get_meta(con, "fts_layout")
            layout: FtsLayout = wanted or (
                "external" if current == "external" else DEFAULT_FTS_LAYOUT
            )
            missing = not table_exists(con, "messages_fts") or (
                self.has_trigram and not table_exists(con, "messages_fts_trigram")
            )
            if missing or current != layout:
                install_fts(con, layout, with_trigram=self.has_trigram)

        self._db.write(ensure)

    def close(self) -> None:
        """Checkpoint and close the connections; the store is unusable afterwards."""
        self._db.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def database(self) -> Database:
        """The underlying :class:`~.db.Database` (write helper, checkpoints)."""
        return self._db

    @property
    def fts_layout(self) -> str | None:
        """``"inline"``, ``"external"``, or ``None`` when the build has no FTS5."""
        value = self._db.scalar("SELECT value FROM state_meta WHERE key = 'fts_layout'")
        return str(value) if value is not None and self.has_fts5 else None

    @property
    def schema_version(self) -> int:
        with self._db.reader() as con:
            return schema_version(con)

    @contextmanager
    def connection_for_reads(self) -> Iterator[apsw.Connection]:
        """The read-only connection for the duration of a ``with`` block."""
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
        """Create a session (``INSERT OR IGNORE``: an existing id is left as it is)."""
        sid = session_id or new_session_id()
        clean_title = sanitize_title(title)

        def insert(con: apsw.Connection) -> None:
            if parent_session_id is not None and not _exists(con, parent_session_id):
                raise SessionNotFoundError(parent_session_id)
            if clean_title is not None:
                _check_title_free(con, clean_title, sid)
            con.execute(
                "INSERT OR IGNORE INTO sessions (id, source, model, model_config, system_prompt,"
                " user_id, parent_session_id, title, started_at) VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    sid,
                    source,
                    model,
                    None if model_config is None else json.dumps(dict(model_config)),
                    system_prompt,
                    user_id,
                    parent_session_id,
                    clean_title,
                    time.time(),
                ),
            )

        self._db.write(insert)
        return sid

    def ensure_session(self, session_id: str, source: str = "unknown", **fields: Any) -> str:
        """Same as :meth:`create_session`; reads as "make sure it exists"."""
        return self.create_session(session_id, source, **fields)

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """The session row as a dict (``model_config`` decoded), or ``None``."""
        found = self._db.query("SELECT * FROM sessions WHERE id = ?", (session_id,))
        if not found:
            return None
        row = found[0]
        if row.get("model_config"):
            row["model_config"] = json.loads(row["model_config"])
        return row

    def require_session(self, session_id: str) -> dict[str, Any]:
        """The session row; :class:`SessionNotFoundError` when there is none."""
        row = self.get_session(session_id)
        if row is None:
            raise SessionNotFoundError(session_id)
        return row

    def resolve_session_id(self, id_or_prefix: str) -> str | None:
        """The exact id, else the one id starting with ``id_or_prefix``, else ``None``."""
        if self._db.scalar("SELECT 1 FROM sessions WHERE id = ?", (id_or_prefix,)):
            return id_or_prefix
        found = self._db.query(
            "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 2",
            (escape_like(id_or_prefix) + "%",),
        )
        return str(found[0]["id"]) if len(found) == 1 else None

    def end_session(self, session_id: str, end_reason: str) -> bool:
        """End a live session; the first end reason wins (SS-19). True if it changed."""

        def end(con: apsw.Connection) -> int:
            con.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
                (time.time(), end_reason, session_id),
            )
            return con.changes()

        return bool(self._db.write(end))

    def reopen_session(self, session_id: str) -> None:
        """Clear ``ended_at`` and ``end_reason``."""
        self._update(session_id, "ended_at = NULL, end_reason = NULL")

    def update_system_prompt(self, session_id: str, prompt: str | None) -> None:
        self._update(session_id, "system_prompt = ?", (prompt,))

    def set_session_title(self, session_id: str, title: str | None) -> bool:
        """Set (or, with an empty title, clear) a title; unique across sessions (SS-34)."""
        clean = sanitize_title(title)

        def set_title(con: apsw.Connection) -> bool:
            if clean is not None:
                _check_title_free(con, clean, session_id)
            con.execute("UPDATE sessions SET title = ? WHERE id = ?", (clean, session_id))
            return con.changes() > 0

        return self._db.write(set_title)

    def delete_session(self, session_id: str) -> bool:
        """Delete a session and its messages; its children are kept, orphaned (SS-24)."""

        def delete(con: apsw.Connection) -> bool:
            con.execute(
                "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?",
                (session_id,),
            )
            con.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            con.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            return con.changes() > 0

        return self._db.write(delete)

    def _update(self, session_id: str, assignments: str, params: Sequence[Any] = ()) -> None:
        def update(con: apsw.Connection) -> None:
            con.execute(f"UPDATE sessions SET {assignments} WHERE id = ?", (*params, session_id))
            if con.changes() == 0:
                raise SessionNotFoundError(session_id)

        self._db.write(update)

    def session_count(self, source: str | None = None) -> int:
        return int(
            self._db.scalar(
                "SELECT count(*) FROM sessions WHERE ? IS NULL OR source = ?", (source, source)
            )
        )

    def message_count(self, session_id: str | None = None) -> int:
        return int(
            self._db.scalar(
                "SELECT count(*) FROM messages WHERE ? IS NULL OR session_id = ?",
                (session_id, session_id),
            )
        )

    # -- messages ------------------------------------------------------------------------

    def append_message(
        self,
        session_id: str,
        role: str,
        content: Any = None,
        tool_name: str | None = None,
        tool_calls: Any = None,
        tool_call_id: str | None = None,
        token_count: int | None = None,
        finish_reason: str | None = None,
        reasoning: str | None = None,
        reasoning_content: str | None = None,
        reasoning_details: Any = None,
    ) -> int:
        """Append one message (SS-21) and return its id."""
        message: Message = {"role": role, "content": content}
        optional = {
            "name": tool_name,
            "tool_calls": tool_calls,
            "tool_call_id": tool_call_id,
            "finish_reason": finish_reason,
            "reasoning": reasoning,
            "reasoning_content": reasoning_content,
            "reasoning_details": reasoning_details,
        }
        message.update({k: v for k, v in optional.items() if v is not None})
        return self.append_messages(session_id, [message], token_counts=[token_count])[0]

    def append_messages(
        self,
        session_id: str,
        messages: Iterable[Mapping[str, Any]],
        *,
        token_counts: Sequence[int | None] | None = None,
    ) -> list[int]:
        """Append a batch in ONE transaction and return the new ids, in order.

        Either every message of the batch is stored or none is.
        """
        batch = [dict(m) for m in messages]
        if not batch:
            return []
        counts = list(token_counts) if token_counts is not None else [None] * len(batch)
        if len(counts) != len(batch):
            raise ValueError("token_counts must have one entry per message")
        names = call_names(batch)
        encoded = [
            encode_message(m, token_count=n, tool_name=names.get(str(m.get("tool_call_id"))))
            for m, n in zip(batch, counts, strict=True)
        ]
        tool_calls = sum(count_tool_calls(m) for m in batch)

        def insert(con: apsw.Connection) -> list[int]:
            return _insert_messages(con, session_id, encoded, tool_calls)

        return self._db.write(insert)

    def get_messages(self, session_id: str, *, include_inactive: bool = False) -> list[Message]:
        """The session's messages in order, in OpenAI format (live rows only by default).

        A compaction summary carries ``_compressed_summary: True``.
        """
        found = self._db.query(
            f"SELECT {', '.join(MESSAGE_COLUMNS)} FROM messages WHERE session_id = ?"
            f"{'' if include_inactive else ' AND active = 1'} ORDER BY id",
            (session_id,),
        )
        return [decode_row(row) for row in found]

    # -- token accounting ----------------------------------------------------------------

    def update_token_counts(
        self,
        session_id: str,
        input_tokens: int = 0,
        output_tokens: int = 0,
        model: str | None = None,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
        reasoning_tokens: int = 0,
        estimated_cost_usd: float | None = None,
        actual_cost_usd: float | None = None,
        cost_status: str | None = None,
        cost_source: str | None = None,
        pricing_version: str | None = None,
        billing_provider: str | None = None,
        billing_base_url: str | None = None,
        billing_mode: str | None = None,
        api_call_count: int = 0,
        absolute: bool = False,
    ) -> None:
        """Add (or with ``absolute`` set) token counters and cost (SS-39).

        A missing session is created with source ``unknown``; ``model`` and ``billing_*``
        fill only empty columns; ``None`` costs leave the columns unchanged.
        """
        values = dict(
            zip(
                _COUNTERS,
                (
                    input_tokens,
                    output_tokens,
                    cache_read_tokens,
                    cache_write_tokens,
                    reasoning_tokens,
                    api_call_count,
                ),
                strict=True,
            )
        )
        op = "?" if absolute else "COALESCE({c}, 0) + ?"
        sets = [f"{c} = " + op.format(c=c) for c in values]
        params: list[Any] = [int(v or 0) for v in values.values()]
        for column, cost in (
            ("estimated_cost_usd", estimated_cost_usd),
            ("actual_cost_usd", actual_cost_usd),
        ):
            if cost is not None:
                sets.append(f"{column} = " + op.format(c=column))
                params.append(float(cost))
        fill = {
            "model": model,
            "billing_provider": billing_provider,
            "billing_base_url": billing_base_url,
            "billing_mode": billing_mode,
        }
        for column, value in fill.items():
            sets.append(f"{column} = COALESCE({column}, ?)")
            params.append(value)
        for column, value in (
            ("cost_status", cost_status),
            ("cost_source", cost_source),
            ("pricing_version", pricing_version),
        ):
            sets.append(f"{column} = COALESCE(?, {column})")
            params.append(value)

        def update(con: apsw.Connection) -> None:
            con.execute(
                "INSERT OR IGNORE INTO sessions (id, source, started_at) VALUES (?, 'unknown', ?)",
                (session_id, time.time()),
            )
            con.execute(
                f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?", (*params, session_id)
            )

        self._db.write(update)

    def record_usage(
        self,
        session_id: str,
        usage: CanonicalUsage,
        cost_usd: float | None = None,
        *,
        model: str | None = None,
    ) -> None:
        """Add one response's usage to the session (TK-19): every bucket and one API call."""
        self.update_token_counts(
            session_id,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            reasoning_tokens=usage.reasoning_tokens,
            api_call_count=usage.request_count,
            estimated_cost_usd=cost_usd,
            model=model,
        )

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
        """End ``parent_id`` with ``compression`` and start its continuation (SS-25, SS-28).

        The parent's end commits first; the child's ``started_at`` is read from the clock
        afterwards (and never earlier than the parent's ``ended_at``), so the continuation
        predicate holds even at equal timestamps. The child inherits source, model,
        user, model config and compaction-guard columns, takes the next lineage title
        (``Build API`` -> ``Build API #2``) and receives ``messages`` (the compacted list)
        in the same transaction that creates it. Those seed messages are counted in
        ``seed_message_count`` so a chain export can skip the copies.
        """
        parent = self.require_session(parent_id)
        if parent["ended_at"] is not None and parent["end_reason"] != "compression":
            raise ValueError(
                f"session {parent_id!r} already ended ({parent['end_reason']}); "
                "only a live session can be continued after compression"
            )
        self.end_session(parent_id, "compression")
        sid = session_id or new_session_id()
        batch = [dict(m) for m in messages or ()]
        names = call_names(batch)
        encoded = [
            encode_message(m, tool_name=names.get(str(m.get("tool_call_id")))) for m in batch
        ]
        tool_calls = sum(count_tool_calls(m) for m in batch)
        wanted_title = sanitize_title(title)

        def create(con: apsw.Connection) -> None:
            row = rows(con.execute("SELECT * FROM sessions WHERE id = ?", (parent_id,)))[0]
            if wanted_title is not None:
                child_title: str | None = wanted_title
                _check_title_free(con, wanted_title, sid)
            else:
                child_title = next_title_in_lineage(con, row["title"]) if row["title"] else None
            started = max(time.time(), float(row["ended_at"]))
            inherited = {k: row[k] for k in _INHERITED}
            columns = ["id", "source", "model", "system_prompt", "parent_session_id", "title"]
            columns += ["started_at", *inherited]
            values = [sid, row["source"], model or row["model"]]
            values += [system_prompt if system_prompt is not None else row["system_prompt"]]
            values += [parent_id, child_title, started, *inherited.values()]
            con.execute(
                f"INSERT INTO sessions ({', '.join(columns)})"
                f" VALUES ({', '.join('?' for _ in columns)})",
                values,
            )
            if encoded:
                _insert_messages(con, sid, encoded, tool_calls)
                con.execute(
                    "INSERT INTO state_meta (key, value) VALUES (?, ?)",
                    (_seed_key(sid), str(len(encoded))),
                )

        self._db.write(create)
        return sid

    def get_compression_tip(self, session_id: str) -> str:
        """The latest compression continuation of ``session_id`` (itself if none)."""
        with self._db.reader() as con:
            return _lineage.compression_tip(con, session_id)

    def compression_chain(self, session_id: str) -> list[str]:
        """The ids of ``session_id``'s compression chain, oldest first."""
        with self._db.reader() as con:
            return _lineage.compression_chain(con, session_id)

    def lineage(self, session_id: str) -> list[str]:
        """Ancestors and descendants of ``session_id`` through any parent link, root first."""
        with self._db.reader() as con:
            return _lineage.lineage(con, session_id)

    def lineage_root(self, session_id: str) -> str:
        with self._db.reader() as con:
            return _lineage.lineage_root(con, session_id)

    def seed_message_count(self, session_id: str) -> int:
        """How many messages a continuation was created with (the compacted copy)."""
        value = self._db.scalar(
            "SELECT value FROM state_meta WHERE key = ?", (_seed_key(session_id),)
        )
        return int(value or 0)

    def list_sessions(
        self,
        limit: int = 20,
        offset: int = 0,
        source: str | None = None,
        *,
        include_children: bool = False,
    ) -> list[dict[str, Any]]:
        """One row per logical conversation, newest first (see :func:`.lineage.list_rows`)."""
        with self._db.reader() as con:
            return _lineage.list_rows(
                con, limit=limit, offset=offset, source=source, include_children=include_children
            )

    # -- search, transcripts, maintenance -----------------------------------------------

    def search_messages(
        self,
        query: str,
        role_filter: str | Iterable[str] | None = None,
        source: str | Iterable[str] | None = None,
        limit: int = 20,
        offset: int = 0,
        exclude_session_ids: Iterable[str] = (),
        exclude_sources: str | Iterable[str] | None = None,
    ) -> list[dict[str, Any]]:
        """Full-text hits for ``query``, best first, each with a snippet (SS-47)."""
        from .fts_query import build_search, run_search

        plan = build_search(
            query,
            role_filter=role_filter,
            source=source,
            exclude_sources=exclude_sources,
            limit=limit,
            offset=offset,
            exclude_session_ids=tuple(exclude_session_ids),
            has_trigram=self.has_trigram,
            has_fts=self.has_fts5,
        )
        with self._db.reader() as con:
            return run_search(con, plan)

    def export_session(self, session_id: str, *, chain: bool = False) -> list[Message]:
        """The session as OpenAI-format messages; see :func:`.transfer.export_messages`."""
        from .transfer import export_messages

        return export_messages(self, session_id, chain=chain)

    def import_transcript(
        self,
        path: str | Path,
        format: str = "auto",
        source: str = "import",
        title: str | None = None,
    ) -> str:
        """Store a transcript file as a new session; see :func:`.transfer.import_file`."""
        from .transfer import import_file

        return import_file(self, path, format=format, source=source, title=title)

    def verify(self) -> list[str]:
        """Problems found in the file and its indexes (empty when all is well)."""
        from .maintenance import verify

        with self._db.fresh_connection() as con:
            return verify(con, has_fts5=self.has_fts5, has_trigram=self.has_trigram)

    def rebuild_fts(self, layout: FtsLayout | None = None) -> None:
        """Drop, recreate and backfill both full-text indexes from ``messages`` (SS-09)."""
        if not self.has_fts5:
            return
        target: FtsLayout = layout or ("external" if self.fts_layout == "external" else "inline")
        self._db.write(lambda con: install_fts(con, target, with_trigram=self.has_trigram))

    def checkpoint(self, mode: str = "PASSIVE") -> bool:
        return self._db.checkpoint(mode)


def _seed_key(session_id: str) -> str:
    return f"continuation_seed_count:{session_id}"


def _exists(con: apsw.Connection, session_id: str) -> bool:
    return bool(con.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchall())


def _check_title_free(con: apsw.Connection, title: str, session_id: str) -> None:
    found = con.execute(
        "SELECT id FROM sessions WHERE title = ? AND id != ?", (title, session_id)
    ).fetchall()
    if found:
        raise ValueError(f"Title '{title}' is already in use by session {found[0][0]}")


def _insert_messages(
    con: apsw.Connection, session_id: str, encoded: list[dict[str, Any]], tool_calls: int
) -> list[int]:
    if not _exists(con, session_id):
        raise SessionNotFoundError(session_id)
    now = time.time()
    columns = ("session_id", "timestamp", *MESSAGE_COLUMNS)
    sql = (
        f"INSERT INTO messages ({', '.join(columns)})"
        f" VALUES ({', '.join('?' for _ in columns)})"
    )
    # Timestamps step by a microsecond so a batch keeps its order under (session, timestamp).
    con.executemany(
        sql,
        (
            (session_id, now + i * 1e-6, *(row[c] for c in MESSAGE_COLUMNS))
            for i, row in enumerate(encoded)
        ),
    )
    last = con.last_insert_rowid()
    con.execute(
        "UPDATE sessions SET message_count = COALESCE(message_count, 0) + ?,"
        " tool_call_count = COALESCE(tool_call_count, 0) + ? WHERE id = ?",
        (len(encoded), tool_calls, session_id),
    )
    # One writer holds the lock and ids come from AUTOINCREMENT, so the batch is contiguous.
    return list(range(last - len(encoded) + 1, last + 1))
