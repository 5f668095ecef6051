"""Session metadata as searchable words: title, start date and source (``sessions_fts``).

People ask "what did we do in June" or "the telegram chat about the garden": the words
that answer live in a session's row, not in its messages. ``sessions_fts`` indexes, for
every session, its title, its start date spelled as words (``2023-06-07 June 7 2023
Wednesday``, local time, as results show it) and its source, with the same ``porter``
tokenizer as the message word index. Triggers keep it current on insert, on a change of
title, start time or source, and on delete; ``rowid = sessions.rowid``.

This module holds the definitions (:func:`install_session_index`) and the one read
(:func:`session_matches`); :mod:`.schema` calls the first from a migration and from
:func:`~.schema.install_fts`, :mod:`.retrieval` the second.
"""

from __future__ import annotations

import apsw

__all__ = [
    "SESSION_TABLE",
    "WORD_TOKENIZER",
    "date_words_sql",
    "install_session_index",
    "session_index_exists",
    "session_matches",
]

SESSION_TABLE = "sessions_fts"

WORD_TOKENIZER = "porter unicode61"
"""The tokenizer of every word index: English stemming over Unicode word splitting."""

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
_WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]


def date_words_sql(epoch: str) -> str:
    """SQL for the start time ``epoch`` (seconds) as words in local time; ``''`` for NULL."""

    def part(fmt: str) -> str:
        return f"strftime('{fmt}', {epoch}, 'unixepoch', 'localtime')"

    months = " ".join(f"WHEN '{i:02d}' THEN '{name}'" for i, name in enumerate(_MONTHS, 1))
    days = " ".join(f"WHEN '{i}' THEN '{name}'" for i, name in enumerate(_WEEKDAYS))
    return (
        f"CASE WHEN {epoch} IS NULL THEN '' ELSE"
        f" {part('%Y-%m-%d')} || ' ' || (CASE {part('%m')} {months} ELSE '' END)"
        f" || ' ' || CAST({part('%d')} AS INTEGER) || ' ' || {part('%Y')}"
        f" || ' ' || (CASE {part('%w')} {days} ELSE '' END) END"
    )


def _row(alias: str) -> str:
    return (
        f"{alias}.rowid, COALESCE({alias}.title, ''), {date_words_sql(alias + '.started_at')},"
        f" COALESCE({alias}.source, '')"
    )


def session_index_exists(con: apsw.Connection) -> bool:
    found = con.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (SESSION_TABLE,)
    ).fetchall()
    return bool(found)


def install_session_index(con: apsw.Connection) -> None:
    """(Re)create ``sessions_fts`` and its triggers and fill it from ``sessions``.

    Runs inside the caller's transaction. The table keeps its own copy of the few words
    per session (no external content): it is tiny next to the message indexes.
    """
    t = SESSION_TABLE
    for event in ("insert", "delete", "update"):
        con.execute(f"DROP TRIGGER IF EXISTS {t}_{event}")
    con.execute(f"DROP TABLE IF EXISTS {t}")
    con.execute(
        f"CREATE VIRTUAL TABLE {t} USING fts5(title, started, source, tokenize='{WORD_TOKENIZER}')"
    )
    insert = f"INSERT INTO {t} (rowid, title, started, source) VALUES ({_row('new')})"
    remove = f"DELETE FROM {t} WHERE rowid = old.rowid"
    con.execute(
        f"CREATE TRIGGER {t}_insert AFTER INSERT ON sessions BEGIN {insert}; END;"
        f"CREATE TRIGGER {t}_delete AFTER DELETE ON sessions BEGIN {remove}; END;"
        f"CREATE TRIGGER {t}_update AFTER UPDATE OF title, started_at, source ON sessions"
        f" BEGIN {remove}; {insert}; END;"
    )
    con.execute(
        f"INSERT INTO {t} (rowid, title, started, source) SELECT {_row('s')} FROM sessions AS s"
    )


def session_matches(con: apsw.Connection, match: str, limit: int) -> dict[str, float]:
    """``session id -> BM25 rank`` (negative; lower is better) for sessions whose title,
    date words or source match the FTS5 query ``match``; empty when there is no index."""
    if not match or not session_index_exists(con):
        return {}
    rows = con.execute(
        f"SELECT s.id, {SESSION_TABLE}.rank FROM {SESSION_TABLE}"
        f" JOIN sessions AS s ON s.rowid = {SESSION_TABLE}.rowid"
        f" WHERE {SESSION_TABLE} MATCH ? ORDER BY {SESSION_TABLE}.rank LIMIT ?",
        (match, max(1, int(limit))),
    )
    return {str(sid): float(rank) for sid, rank in rows}
