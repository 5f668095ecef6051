"""``SessionStore``: every message of every session in one SQLite file, searchable.

Compaction is lossy; this store is what keeps the conversation lossless underneath. Each
message lands in ``messages`` (one insert; triggers keep both full-text indexes current),
each session in ``sessions`` with its lineage, counters and cost. A compaction ends the old
session with ``end_reason = 'compression'`` and continues in a new child session
(:meth:`SessionStore.start_continuation`); the old one stays whole and searchable.

The file is ``$PALIMPSEST_HOME/state.db`` by default. Opening it migrates the schema
(:mod:`.schema`, :mod:`.migrations`); all writes go through one retrying transaction helper (:mod:`.db`), so
several processes can write at once. Lineage walks and list projection live in
:mod:`.lineage`, transcript export/import and maintenance in :mod:`.transfer` and
:mod:`.maintenance`; the index merging and WAL checkpoints that appends never do run in
a background thread (:mod:`.upkeep`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw

from ..errors import DatabaseCorruptError, SessionNotFoundError, StorageError
from ..home import home_dir
from ..messages import Message
from . import lineage as _lineage
from .codec import (
    MESSAGE_COLUMNS,
    call_names,
    count_tool_calls,
    decode_row,
    encode_message,
)
from .db import Database, RetryPolicy, Tracer, rows
from .embedding import EmbeddingModel, EmbedFunction, as_model
from .fts_layout import FtsLayout, install_fts
from .migrations import schema_version
from .schema import open_schema
from .secrets_keeper import KeepPacer, keep_before_close, newest_message
from .session_ids import new_session_id
from .store_common import SearchFilters, StoreCommon
from .titles import sanitize_title
from .upkeep import BackgroundUpkeep, UpkeepPolicy
from .vectors import VectorIndex
from .writes import (
    check_title_free,
    insert_continuation,
    insert_messages,
    session_exists,
)

__all__ = ["DB_FILENAME", "SessionStore", "default_db_path", "new_session_id"]


DB_FILENAME = "state.db"


def default_db_path() -> Path:
    """``<home>/state.db``, where ``<home>`` is ``$PALIMPSEST_HOME`` or ``~/.palimpsest``."""
    return home_dir() / DB_FILENAME


class SessionStore(StoreCommon):
    """The session store on one SQLite file (see the module docstring).

    ``fts_layout`` (``"inline"`` or ``"external"``) switches the full-text layout when it
    differs from the file's; ``None`` keeps the file's (``external`` for a new file).
    ``background_upkeep`` (default on) lets the store merge its full-text indexes and
    checkpoint the WAL in a daemon thread that starts after some writes and stops on
    :meth:`close` (:mod:`.upkeep`; ``upkeep_policy`` tunes it); off, run
    ``palimpsest sessions maintain`` from a timer instead. ``tracer`` is called with
    ``(sql, bindings)`` for every statement. ``embedder`` turns on search by meaning:
    ``"bundled"`` (the ``vectors`` extra's offline model) or a callable
    ``list[str] -> list[list[float]]`` of the caller's (:mod:`.embedding`); messages are
    embedded by the upkeep thread and before a search, never inside an append
    (:mod:`.vectors`), and searches fuse word and meaning scores (:mod:`.fusion`).
    """

    backend = "sqlite"
    _db: Database

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        fts_layout: FtsLayout | None = None,
        tracer: Tracer | None = None,
        retry: RetryPolicy | None = None,
        background_upkeep: bool = True,
        upkeep_policy: UpkeepPolicy | None = None,
        embedder: EmbeddingModel | EmbedFunction | str | None = None,
    ) -> None:
        self.path = Path(path).expanduser() if path is not None else default_db_path()
        self.location = str(self.path)
        self._db = Database(self.path, retry=retry, tracer=tracer)
        try:
            self.has_fts5, self.has_trigram = open_schema(self._db, fts_layout)
        except BaseException:
            self._db.close()
            raise
        self._upkeep: BackgroundUpkeep | None = None
        if background_upkeep and not self._db.read_only:
            self._upkeep = BackgroundUpkeep(self._db, upkeep_policy)
            self._upkeep.attach()
        if self._upkeep is not None:
            db = self._db
            self._upkeep.add_task(KeepPacer(db, lambda: newest_message(db)))
        self._commits_at_open = self._db.commits  # close() keeps what this store wrote
        self._vectors: VectorIndex | None = None
        if embedder is not None:
            self._vectors = VectorIndex(self._db, as_model(embedder))
            if self._upkeep is not None:
                self._upkeep.add_task(self._vectors.upkeep_task)

    # -- opening, closing ----------------------------------------------------------------

    def close(self) -> None:
        """Stop the background upkeep, checkpoint and close the connections; the store is
        unusable afterwards."""
        if self._upkeep is not None:
            self._upkeep.stop()
        if self._db.commits > self._commits_at_open:
            keep_before_close(self._db, str(self.path), (StorageError, apsw.Error))
        self._db.close()

    @property
    def upkeep(self) -> BackgroundUpkeep | None:
        """The background upkeep (``None`` when off or read-only); see :mod:`.upkeep`."""
        return self._upkeep

    @property
    def vectors(self) -> VectorIndex | None:
        """The vector index when the store was opened with an ``embedder``, else ``None``."""
        return self._vectors

    @property
    def database(self) -> Database:
        """The underlying :class:`~.db.Database` (write helper, checkpoints)."""
        return self._db

    @property
    def read_only(self) -> bool:
        """True when the file could only be opened for reading (writes raise
        :class:`~palimpsest.errors.DatabaseReadOnlyError`)."""
        return self._db.read_only

    @property
    def read_only_reason(self) -> str | None:
        """Why the file is read-only (filesystem, file, or directory), else ``None``."""
        return self._db.read_only_reason

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
            if parent_session_id is not None and not session_exists(con, parent_session_id):
                raise SessionNotFoundError(parent_session_id)
            if clean_title is not None:
                check_title_free(con, clean_title, sid)
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

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """The session row as a dict (``model_config`` decoded), or ``None``."""
        found = self._db.query("SELECT * FROM sessions WHERE id = ?", (session_id,))
        if not found:
            return None
        row = found[0]
        if row.get("model_config"):
            row["model_config"] = json.loads(row["model_config"])
        return row

    def end_session(self, session_id: str, end_reason: str) -> bool:
        """End a live session; the first end reason wins (SS-19). True if it changed."""

        def end(con: apsw.Connection) -> int:
            con.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
                (time.time(), end_reason, session_id),
            )
            return con.changes()

        return bool(self._db.write(end))

    def set_session_title(self, session_id: str, title: str | None) -> bool:
        """Set (or, with an empty title, clear) a title; unique across sessions (SS-34)."""
        clean = sanitize_title(title)

        def set_title(con: apsw.Connection) -> bool:
            if clean is not None:
                check_title_free(con, clean, session_id)
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
            con.execute("DELETE FROM in_place_compactions WHERE session_id = ?", (session_id,))
            con.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            return con.changes() > 0

        return self._db.write(delete)

    def _update(self, session_id: str, assignments: str, params: Sequence[Any] = ()) -> None:
        def update(con: apsw.Connection) -> None:
            con.execute(f"UPDATE sessions SET {assignments} WHERE id = ?", (*params, session_id))
            if con.changes() == 0:
                raise SessionNotFoundError(session_id)

        self._db.write(update)

    # -- messages ------------------------------------------------------------------------

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
        unnamed = {
            str(m["tool_call_id"])
            for m in batch
            if m.get("role") == "tool" and not m.get("name") and m.get("tool_call_id")
        } - set(names)
        if unnamed:
            names.update(self._stored_call_names(session_id, unnamed))
        encoded = [
            encode_message(m, token_count=n, tool_name=names.get(str(m.get("tool_call_id"))))
            for m, n in zip(batch, counts, strict=True)
        ]
        tool_calls = sum(count_tool_calls(m) for m in batch)
        upkeep = self._upkeep

        def insert(con: apsw.Connection) -> list[int]:
            ids = insert_messages(con, session_id, encoded, tool_calls)
            if upkeep is not None:
                upkeep.share_merging(con, encoded)
            return ids

        return self._db.write(insert)

    def _stored_call_names(self, session_id: str, call_ids: set[str]) -> dict[str, str]:
        """Function names of already stored calls, so results appended one by one are
        still indexed under their tool's name. Only the session's latest 20 assistant
        messages with calls are looked at: results follow their call closely."""
        marks = ", ".join("?" for _ in call_ids)
        found = self._db.query(
            "SELECT c.value ->> '$.id' AS id, c.value ->> '$.function.name' AS name"
            " FROM (SELECT tool_calls FROM messages WHERE session_id = ?"
            "       AND tool_calls IS NOT NULL ORDER BY timestamp DESC LIMIT 20) AS m,"
            f" json_each(m.tool_calls) AS c WHERE c.value ->> '$.id' IN ({marks})",
            (session_id, *sorted(call_ids)),
        )
        return {str(r["id"]): str(r["name"]) for r in found if r["name"]}

    def last_message_time(self, session_id: str) -> float | None:
        """When the session's newest live message was stored (epoch seconds); ``None`` when
        it has none. The agent's idle compaction measures idle time from it."""
        found = self._db.query(
            "SELECT max(timestamp) AS t FROM messages WHERE session_id = ? AND active = 1",
            (session_id,),
        )
        value = found[0]["t"] if found else None
        return float(value) if value is not None else None

    def get_messages(self, session_id: str, *, include_inactive: bool = False) -> list[Message]:
        """The session's messages in order, in OpenAI format (live rows only by default).

        A compaction summary carries ``_compressed_summary: True``. A row whose stored
        bytes no longer decode raises :class:`~palimpsest.errors.DatabaseCorruptError`
        naming the damaged message ids; nothing is skipped silently.
        """
        try:
            with self._db.reader() as con:
                found = rows(
                    con.execute(
                        f"SELECT {', '.join(MESSAGE_COLUMNS)} FROM messages WHERE session_id = ?"
                        f"{'' if include_inactive else ' AND active = 1'} ORDER BY id",
                        (session_id,),
                    )
                )
                return [decode_row(row) for row in found]
        except DatabaseCorruptError as exc:
            from .damage import name_damaged_rows

            raise name_damaged_rows(self._db, exc, session_id) from exc.__cause__

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
            insert_continuation(
                con,
                parent_id,
                sid,
                model=model,
                system_prompt=system_prompt,
                title=wanted_title,
                encoded=encoded,
                tool_calls=tool_calls,
            )

        self._db.write(create)
        return sid

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

    def _search(self, query: str, filters: SearchFilters) -> list[dict[str, Any]]:
        """Word hits (:mod:`.fts_query`, :mod:`.retrieval`), fused with meaning hits when
        the store has an embedder (:func:`.vectors.search_hits`)."""
        from .vectors import search_hits

        return search_hits(
            self._db,
            self._vectors,
            query,
            filters,
            has_fts=self.has_fts5,
            has_trigram=self.has_trigram,
        )

    def verify(self) -> list[str]:
        """Problems found in the file, its indexes and its rows (empty when all is well).

        Damage is reported, never raised: pages SQLite cannot read, rows whose bytes no
        longer decode (by id), index problems. It only reads, so it also runs on a
        read-only file and beside another process's writer.
        """
        from .damage import check

        return check(self._db, has_fts5=self.has_fts5, has_trigram=self.has_trigram)

    def repair(self) -> list[str]:
        """Rebuild every index, both full-text indexes and the message counters from the
        rows; list the rows that cannot be read (they are kept). One line per step, see
        :func:`.damage.repair`."""
        from .damage import repair

        return repair(self._db, has_fts5=self.has_fts5, has_trigram=self.has_trigram)

    def rebuild_fts(self, layout: FtsLayout | None = None) -> None:
        """Drop, recreate and backfill both full-text indexes from ``messages`` (SS-09)."""
        if not self.has_fts5:
            return
        current = self.fts_layout
        target: FtsLayout = layout or ("inline" if current == "inline" else "external")
        self._db.write(lambda con: install_fts(con, target, with_trigram=self.has_trigram))

    def checkpoint(self, mode: str = "PASSIVE") -> bool:
        return self._db.checkpoint(mode)
