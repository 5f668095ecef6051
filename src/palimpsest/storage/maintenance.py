"""Checking a store file for damage: SQLite's own check plus our stored invariants.

:func:`verify` never changes anything. What it checks, and why each can go wrong:

* ``PRAGMA integrity_check``: page-level damage (a disk fault, a copy taken mid-write);
* ``PRAGMA foreign_key_check``: rows pointing at sessions that no longer exist;
* the FTS5 ``integrity-check`` command on both indexes: a damaged or stale shadow table
  (for the external layout this also compares the index with ``messages``);
* one indexed document per message in the word index, and one per CJK message
  (:data:`~.schema.IS_CJK_ROW`) in the trigram index, and each session's
  ``message_count`` equal to its stored rows: a write path that bypassed the triggers or
  the counters.

The repair for index problems is :meth:`SessionStore.rebuild_fts`; the rows themselves
are never touched.
"""

from __future__ import annotations

import apsw

from .schema import IS_CJK_ROW, TRIGRAM_TABLE, WORD_TABLE

__all__ = ["verify"]


def _scalar(con: apsw.Connection, sql: str) -> object:
    found = con.execute(sql).fetchall()
    return found[0][0] if found else None


def _fts_problems(con: apsw.Connection, table: str, *, cjk_only: bool = False) -> list[str]:
    exists = con.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchall()
    if not exists:
        return [f"{table}: the full-text table is missing (run verify --repair)"]
    problems = []
    try:
        # The command is spelled as an INSERT but changes nothing; rank = 1 also compares
        # an external-content index with the rows it indexes.
        con.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
    except (apsw.ReadOnlyError, apsw.BusyError, apsw.LockedError):
        # The command needs the write lock: a read-only file, or another process writing.
        # That says nothing about the index, and PRAGMA integrity_check above has already
        # run FTS5's own check on it (SQLite >= 3.44), so nothing is reported.
        pass
    except apsw.Error as exc:
        problems.append(f"{table}: FTS5 integrity-check failed: {exc}")
    indexed = _scalar(con, f"SELECT count(*) FROM {table}_docsize")
    if cjk_only:
        stored = _scalar(con, f"SELECT count(*) FROM messages AS m WHERE {IS_CJK_ROW}")
        kind = "messages with CJK text"
    else:
        stored = _scalar(con, "SELECT count(*) FROM messages")
        kind = "messages"
    if indexed != stored:
        problems.append(f"{table}: {indexed} indexed documents for {stored} {kind}")
    return problems


def verify(con: apsw.Connection, *, has_fts5: bool = True, has_trigram: bool = True) -> list[str]:
    """Every problem found, one line each; an empty list means the file is sound."""
    problems = [
        f"integrity_check: {row[0]}"
        for row in con.execute("PRAGMA integrity_check")
        if row[0] != "ok"
    ]
    for table, rowid, parent, _ in con.execute("PRAGMA foreign_key_check"):
        problems.append(f"{table} row {rowid} points at a missing {parent} row")
    if has_fts5:
        problems += _fts_problems(con, WORD_TABLE)
        if has_trigram:
            problems += _fts_problems(con, TRIGRAM_TABLE, cjk_only=True)
    for sid, stored, counted in con.execute(
        "SELECT s.id, COALESCE(s.message_count, 0), count(m.id) FROM sessions AS s"
        " LEFT JOIN messages AS m ON m.session_id = s.id GROUP BY s.id"
        " HAVING COALESCE(s.message_count, 0) != count(m.id)"
    ):
        problems.append(f"session {sid}: message_count is {stored} but {counted} rows are stored")
    return problems
