"""In-place compaction in the store: archive a session's live rows, and put them back.

Rotation (the seed) ends a session at each compaction and starts a continuation holding
the compacted list. In-place mode (``compression.in_place``, spec SS-38) keeps the id:

* :func:`archive_in_place` marks every live row of the session archived (``active = 0,
  compacted = 1``, ``archived_in = n``) and writes the compacted list as new live rows
  (``written_in = n``), in one transaction, with one ``in_place_compactions`` row saying
  what ``/undo`` needs later (migration ``m010_in_place_compaction``). Live reads
  (``get_messages``) return the compacted list; full-text search still finds the
  archived rows (they are indexed like any other and the search filter lets
  ``compacted = 1`` through).
* :func:`undo_in_place` reverses the newest compaction not yet undone: its archived rows
  are live again, the rows it wrote are marked undone (``active = 0, compacted = 0``:
  hidden from history and search, as SS-38 says of rewound rows), and the session's
  system prompt goes back to the one the restored rows were sent with. Messages added
  after the compaction stay live, after the restored ones (rows are read in id order).

The numbers count per session from 1. Undo is last-in first-out, so "the newest not
undone" is always the compaction whose written rows are live.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

import apsw

from ..errors import SessionNotFoundError, StorageError
from ..messages import Message
from .codec import MESSAGE_COLUMNS, call_names, count_tool_calls, decode_row, encode_message
from .contract import Store
from .db import Database, rows
from .writes import insert_messages, session_exists


class SessionStore(Protocol):
    """What these functions need of a :class:`~.sessions.SessionStore` (its database);
    named so, and not imported, so that sessions -> transfer -> archive is no cycle."""

    @property
    def database(self) -> Database: ...


__all__ = [
    "ArchivedCompaction",
    "archive_in_place",
    "archived_messages",
    "in_place_compactions",
    "in_place_count",
    "last_in_place",
    "original_messages",
    "searchable_messages",
    "undo_in_place",
]


def _sqlite(store: Store | SessionStore) -> SessionStore | None:
    """The SQLite store behind ``store``, or ``None`` on another backend: the archive of
    in-place compaction lives in SQLite only for now (on PostgreSQL the agent rotates,
    docs/postgres.md), so there a session has no archive and its live rows are all."""
    if getattr(store, "backend", "sqlite") != "sqlite":
        return None
    return cast(SessionStore, store)


def _required(store: Store | SessionStore) -> SessionStore:
    found = _sqlite(store)
    if found is None:
        raise StorageError("in-place compaction keeps its archive in a SQLite store only")
    return found


@dataclass(frozen=True)
class ArchivedCompaction:
    """One in-place compaction of a session, as the store remembers it."""

    session_id: str
    number: int
    compacted_at: float
    archived: int
    """How many live rows it archived."""
    written: int
    """How many rows of compacted list it wrote."""
    compression_count_before: int
    system_prompt_before: str | None
    undone_at: float | None


def _compaction(row: Mapping[str, Any]) -> ArchivedCompaction:
    return ArchivedCompaction(
        session_id=str(row["session_id"]),
        number=int(row["number"]),
        compacted_at=float(row["compacted_at"]),
        archived=int(row["archived"]),
        written=int(row["written"]),
        compression_count_before=int(row["compression_count_before"] or 0),
        system_prompt_before=row["system_prompt_before"],
        undone_at=row["undone_at"],
    )


def archive_in_place(
    store: Store | SessionStore,
    session_id: str,
    compacted: Sequence[Mapping[str, Any]],
    *,
    system_prompt: str | None,
    system_prompt_before: str | None,
    compression_count_before: int = 0,
) -> ArchivedCompaction:
    """Archive ``session_id``'s live rows and make ``compacted`` its live history (one
    transaction: a failure leaves the session as it was). ``system_prompt`` becomes the
    session's prompt; ``system_prompt_before`` and ``compression_count_before`` are kept
    for :func:`undo_in_place`."""
    batch = [dict(m) for m in compacted]
    names = call_names(batch)
    encoded = [encode_message(m, tool_name=names.get(str(m.get("tool_call_id")))) for m in batch]
    tool_calls = sum(count_tool_calls(m) for m in batch)

    def archive(con: apsw.Connection) -> ArchivedCompaction:
        if not session_exists(con, session_id):
            raise SessionNotFoundError(session_id)
        last = rows(
            con.execute(
                "SELECT COALESCE(MAX(number), 0) AS n FROM in_place_compactions"
                " WHERE session_id = ?",
                (session_id,),
            )
        )
        number = 1 + int(last[0]["n"])
        con.execute(
            "UPDATE messages SET active = 0, compacted = 1, archived_in = ?"
            " WHERE session_id = ? AND active = 1",
            (number, session_id),
        )
        archived = con.changes()
        ids = insert_messages(con, session_id, encoded, tool_calls) if encoded else []
        if ids:
            con.execute(
                "UPDATE messages SET written_in = ? WHERE id BETWEEN ? AND ?",
                (number, ids[0], ids[-1]),
            )
        con.execute(
            "UPDATE messages SET display_kind = 'hidden'"
            " WHERE session_id = ? AND written_in = ? AND _compressed_summary = 1",
            (session_id, number),
        )
        now = time.time()
        con.execute(
            "INSERT INTO in_place_compactions (session_id, number, compacted_at, archived,"
            " written, compression_count_before, system_prompt_before)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                session_id,
                number,
                now,
                archived,
                len(ids),
                compression_count_before,
                system_prompt_before,
            ),
        )
        if system_prompt is not None:
            con.execute(
                "UPDATE sessions SET system_prompt = ? WHERE id = ?", (system_prompt, session_id)
            )
        return ArchivedCompaction(
            session_id,
            number,
            now,
            archived,
            len(ids),
            compression_count_before,
            system_prompt_before,
            None,
        )

    return _required(store).database.write(archive)


def in_place_compactions(store: Store | SessionStore, session_id: str) -> list[ArchivedCompaction]:
    """The session's in-place compactions, oldest first (undone ones included)."""
    sqlite = _sqlite(store)
    if sqlite is None:
        return []
    found = sqlite.database.query(
        "SELECT * FROM in_place_compactions WHERE session_id = ? ORDER BY number",
        (session_id,),
    )
    return [_compaction(row) for row in found]


def in_place_count(store: Store | SessionStore, session_id: str) -> int:
    """How many in-place compactions of the session stand (not undone)."""
    sqlite = _sqlite(store)
    if sqlite is None:
        return 0
    value = sqlite.database.scalar(
        "SELECT count(*) FROM in_place_compactions WHERE session_id = ? AND undone_at IS NULL",
        (session_id,),
    )
    return int(value or 0)


def last_in_place(store: Store | SessionStore, session_id: str) -> ArchivedCompaction | None:
    """The newest in-place compaction of the session not yet undone, if any."""
    sqlite = _sqlite(store)
    if sqlite is None:
        return None
    found = sqlite.database.query(
        "SELECT * FROM in_place_compactions WHERE session_id = ? AND undone_at IS NULL"
        " ORDER BY number DESC LIMIT 1",
        (session_id,),
    )
    return _compaction(found[0]) if found else None


def archived_messages(
    store: Store | SessionStore, session_id: str, number: int | None = None
) -> list[Message]:
    """The rows compaction ``number`` archived (every archived row of the session when
    ``None``), in order: what the conversation held before it."""
    where = "" if number is None else " AND archived_in = ?"
    params: tuple[Any, ...] = (session_id,) if number is None else (session_id, number)
    sqlite = _sqlite(store)
    if sqlite is None:
        return []
    with sqlite.database.reader() as con:
        found = rows(
            con.execute(
                f"SELECT {', '.join(MESSAGE_COLUMNS)} FROM messages WHERE session_id = ?"
                f" AND active = 0 AND compacted = 1{where} ORDER BY id",
                params,
            )
        )
    return [decode_row(row) for row in found]


def _rows_where(store: Store | SessionStore, session_id: str, condition: str) -> list[Message]:
    """The session's rows that meet ``condition``, in order; on a store without the
    archive (:func:`_sqlite`), its live rows."""
    sqlite = _sqlite(store)
    if sqlite is None:
        return cast(Store, store).get_messages(session_id)
    with sqlite.database.reader() as con:
        found = rows(
            con.execute(
                f"SELECT {', '.join(MESSAGE_COLUMNS)} FROM messages WHERE session_id = ?"
                f" AND {condition} ORDER BY id",
                (session_id,),
            )
        )
    return [decode_row(row) for row in found]


def searchable_messages(store: Store | SessionStore, session_id: str) -> list[Message]:
    """Every row search can find in the session, in order: the live ones and the ones an
    in-place compaction archived (not the undone ones)."""
    return _rows_where(store, session_id, "(active = 1 OR compacted = 1)")


def original_messages(store: Store | SessionStore, session_id: str) -> list[Message]:
    """What was said in the session, in order, whatever its in-place compactions did: the
    live and archived rows, without the compacted copies they wrote (summaries and the
    head and tail they repeat) and without undone rows. A session never compacted in place
    gives its live rows."""
    return _rows_where(store, session_id, "(active = 1 OR compacted = 1) AND written_in IS NULL")


def undo_in_place(store: Store | SessionStore, session_id: str) -> ArchivedCompaction | None:
    """Reverse the newest in-place compaction not yet undone (module docstring); ``None``
    when there is none. Returns that compaction as it was before the undo."""

    def undo(con: apsw.Connection) -> ArchivedCompaction | None:
        found = rows(
            con.execute(
                "SELECT * FROM in_place_compactions WHERE session_id = ? AND undone_at IS NULL"
                " ORDER BY number DESC LIMIT 1",
                (session_id,),
            )
        )
        if not found:
            return None
        record = _compaction(found[0])
        con.execute(
            "UPDATE messages SET active = 0, compacted = 0"
            " WHERE session_id = ? AND written_in = ? AND active = 1",
            (session_id, record.number),
        )
        con.execute(
            "UPDATE messages SET active = 1, compacted = 0, archived_in = NULL"
            " WHERE session_id = ? AND archived_in = ?",
            (session_id, record.number),
        )
        con.execute(
            "UPDATE in_place_compactions SET undone_at = ? WHERE session_id = ? AND number = ?",
            (time.time(), session_id, record.number),
        )
        if record.system_prompt_before is not None:
            con.execute(
                "UPDATE sessions SET system_prompt = ? WHERE id = ?",
                (record.system_prompt_before, session_id),
            )
        return record

    return _required(store).database.write(undo)
