"""Checking and repairing a PostgreSQL store: what ``sessions verify``/``repair`` do there.

PostgreSQL keeps its own pages and indexes consistent, so there is no file damage to
look for as on SQLite (:mod:`.damage`). What can still be wrong is ours: a schema behind
the code, the ``pg_trgm`` extension missing, message counters that disagree with the
rows (a hand edit; also ``word_total``, the token sum BM25's average length comes from),
or a row whose stored JSON no longer decodes.
"""

from __future__ import annotations

from typing import Any

from ..errors import DatabaseCorruptError
from .codec import MESSAGE_COLUMNS, decode_row
from .pg_db import PgDatabase
from .pg_schema import MIGRATIONS, schema_version

__all__ = ["repair", "verify"]

_COUNTS = (
    "SELECT s.id, s.message_count, count(m.id), s.word_total, COALESCE(sum(m.words), 0)"
    " FROM sessions AS s LEFT JOIN messages AS m ON m.session_id = s.id"
    " GROUP BY s.id, s.message_count, s.word_total"
    " HAVING COALESCE(s.message_count, 0) <> count(m.id)"
    " OR s.word_total <> COALESCE(sum(m.words), 0)"
)


def verify(db: PgDatabase) -> list[str]:
    """Problems found, one line each (empty when all is well); only reads."""
    problems: list[str] = []
    with db.connection() as con:
        version = schema_version(con)
        if version < len(MIGRATIONS):
            problems.append(f"schema version {version}, expected {len(MIGRATIONS)}")
        if not con.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'").fetchone():
            problems.append("the pg_trgm extension is not installed")
        for sid, stored, actual, words, tokens in con.execute(_COUNTS).fetchall():
            if (stored or 0) != actual:
                problems.append(f"session {sid}: message_count {stored}, {actual} rows")
            if words != tokens:
                problems.append(f"session {sid}: word_total {words}, {tokens} tokens in its rows")
        cursor = con.execute(f"SELECT id, {', '.join(MESSAGE_COLUMNS)} FROM messages ORDER BY id")
        for row in cursor:
            record: dict[str, Any] = dict(zip(("id", *MESSAGE_COLUMNS), row, strict=True))
            try:
                decode_row(record)
            except (ValueError, DatabaseCorruptError) as exc:
                problems.append(f"message {record['id']}: {exc}")
    return problems


def repair(db: PgDatabase) -> list[str]:
    """Reindex the message and session tables and recount every session's messages (and
    their tokens)."""
    done: list[str] = []
    with db.connection() as con:
        con.execute("REINDEX TABLE messages")
        con.execute("REINDEX TABLE sessions")
        done.append("rebuilt the indexes of messages and sessions")
        fixed = con.execute(
            "UPDATE sessions AS s SET message_count = c.n, word_total = c.w FROM (SELECT s2.id,"
            " count(m.id) AS n, COALESCE(sum(m.words), 0) AS w FROM sessions AS s2"
            " LEFT JOIN messages AS m ON m.session_id = s2.id GROUP BY s2.id) AS c"
            " WHERE c.id = s.id AND (COALESCE(s.message_count, 0) <> c.n OR s.word_total <> c.w)"
        ).rowcount
        done.append(f"recounted messages: {max(0, fixed)} session(s) corrected")
    return done
