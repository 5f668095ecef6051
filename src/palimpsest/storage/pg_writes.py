"""Row writers and readers of the PostgreSQL store, run inside its transactions.

The counterpart of :mod:`.writes` for :mod:`.pg_store`: each function takes the psycopg
connection of an open transaction and may be re-run after a serialization failure, so
none keeps state outside the database.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg

from ..errors import SessionNotFoundError
from .codec import MESSAGE_COLUMNS
from .pg_db import PgDatabase
from .pg_words import index_words

__all__ = [
    "HIDDEN",
    "insert_messages",
    "meta_words",
    "one_session",
    "session_meta_text",
    "set_meta",
    "stored_call_names",
]

HIDDEN = ("rowid", "meta_tsv", "meta_words", "word_total")
"""PostgreSQL-only columns left out of session rows."""

_MAX_PARAMETERS = 65_535

_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def session_meta_text(title: str | None, started_at: float | None, source: str | None) -> str:
    """The words a session's metadata is found by: title, start date (local time, as
    ``2023-06-07 June 7 2023 Wednesday``, the SQLite ``sessions_fts`` spelling), source."""
    date = ""
    if started_at is not None:
        when = datetime.fromtimestamp(float(started_at))
        date = (
            f"{when:%Y-%m-%d} {_MONTHS[when.month - 1]} {when.day} {when.year}"
            f" {_WEEKDAYS[when.weekday()]}"
        )
    return " ".join(p for p in (title or "", date, source or "") if p)


def meta_words(title: str | None, started_at: float | None, source: str | None) -> tuple[str, int]:
    """``(tsvector literal, token count)`` of a session's metadata words (:mod:`.pg_words`)."""
    found = index_words(session_meta_text(title, started_at, source))
    return found.vector, found.count


def session_row(names: Sequence[str], values: Sequence[Any]) -> dict[str, Any]:
    return {k: v for k, v in zip(names, values, strict=True) if k not in HIDDEN}


def one_session(
    con: psycopg.Connection[Any], sql: str, params: Sequence[Any]
) -> dict[str, Any] | None:
    cursor = con.execute(sql, params)
    row = cursor.fetchone()
    if row is None or cursor.description is None:
        return None
    return session_row([d.name for d in cursor.description], row)


def set_meta(con: psycopg.Connection[Any], session_id: str) -> None:
    row = con.execute(
        "SELECT title, started_at, source FROM sessions WHERE id = %s", (session_id,)
    ).fetchone()
    if row is not None:
        con.execute(
            "UPDATE sessions SET meta_tsv = %s::tsvector, meta_words = %s WHERE id = %s",
            (*meta_words(*row), session_id),
        )


def insert_messages(
    con: psycopg.Connection[Any], session_id: str, encoded: list[dict[str, Any]], tool_calls: int
) -> list[int]:
    """Lock the session row, bump its counters, insert the rows with their word index
    entries (:mod:`.pg_words`); the new ids in order."""
    words = [index_words(_indexed_text(row)) for row in encoded]
    locked = con.execute(
        "UPDATE sessions SET message_count = COALESCE(message_count, 0) + %s,"
        " tool_call_count = COALESCE(tool_call_count, 0) + %s, word_total = word_total + %s"
        " WHERE id = %s RETURNING id",
        (len(encoded), tool_calls, sum(w.count for w in words), session_id),
    ).fetchone()
    if locked is None:
        raise SessionNotFoundError(session_id)
    columns = ("session_id", "timestamp", *MESSAGE_COLUMNS, "tsv", "words")
    marks = "(" + ", ".join("%s" for _ in columns[:-2]) + ", %s::tsvector, %s)"
    per_statement = max(1, _MAX_PARAMETERS // len(columns))
    now = time.time()
    ids: list[int] = []
    for start in range(0, len(encoded), per_statement):
        chunk = encoded[start : start + per_statement]
        params: list[Any] = []
        for i, row in enumerate(chunk, start):
            params += [session_id, now + i * 1e-6, *(row[c] for c in MESSAGE_COLUMNS)]
            params += [words[i].vector, words[i].count]
        found = con.execute(
            f"INSERT INTO messages ({', '.join(columns)}) VALUES "
            + ", ".join([marks] * len(chunk))
            + " RETURNING id",
            params,
        ).fetchall()
        ids += sorted(int(r[0]) for r in found)
    return ids


def _indexed_text(row: dict[str, Any]) -> str:
    """The text the word index covers, as :data:`~.pg_schema.INDEXED_TEXT` joins it."""
    return " ".join(str(row.get(c) or "") for c in ("content", "tool_name", "tool_calls"))


def stored_call_names(db: PgDatabase, session_id: str, call_ids: set[str]) -> dict[str, str]:
    """Tool names of the calls ``call_ids`` among the session's newest stored calls (a
    tool result appended without its name gets it from the call that asked for it)."""
    with db.connection() as con:
        found = con.execute(
            "SELECT c ->> 'id', c -> 'function' ->> 'name' FROM"
            " (SELECT tool_calls FROM messages WHERE session_id = %s"
            "  AND tool_calls IS NOT NULL AND tool_calls LIKE '[%%'"
            "  ORDER BY timestamp DESC LIMIT 20) AS m,"
            " jsonb_array_elements(m.tool_calls::jsonb) AS c"
            " WHERE jsonb_typeof(c) = 'object' AND c ->> 'id' = ANY(%s)",
            (session_id, sorted(call_ids)),
        ).fetchall()
    return {str(i): str(n) for i, n in found if n}
