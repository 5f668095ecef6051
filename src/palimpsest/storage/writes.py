"""Row writers that run inside the store's write transaction.

Each function takes the write connection of an open ``BEGIN IMMEDIATE`` transaction
(:meth:`~.db.Database.write`) and may be re-run after a busy rollback, so none of them
keeps state outside the database. :class:`~.sessions.SessionStore` validates arguments
and encodes messages first, then hands these the finished values.
"""

from __future__ import annotations

import time
from typing import Any

import apsw

from ..errors import SessionNotFoundError
from .codec import MESSAGE_COLUMNS
from .db import rows
from .titles import next_title_in_lineage

__all__ = [
    "INHERITED",
    "check_title_free",
    "insert_continuation",
    "insert_messages",
    "seed_key",
    "session_exists",
    "token_update",
]

#: Session fields a compression continuation copies from its parent (SS-10, SS-37).
INHERITED = (
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
    "unreported_calls",
)


def seed_key(session_id: str) -> str:
    """The ``state_meta`` key holding how many messages a continuation started with."""
    return f"continuation_seed_count:{session_id}"


def session_exists(con: apsw.Connection, session_id: str) -> bool:
    return bool(con.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchall())


def check_title_free(con: apsw.Connection, title: str, session_id: str) -> None:
    """SS-34: a title names one session; ``ValueError`` when another one has it."""
    found = con.execute(
        "SELECT id FROM sessions WHERE title = ? AND id != ?", (title, session_id)
    ).fetchall()
    if found:
        raise ValueError(f"Title '{title}' is already in use by session {found[0][0]}")


def _max_parameters(con: apsw.Connection) -> int:
    """SQLite's limit on ``?`` parameters in one statement (32,766 in current builds)."""
    return int(con.limit(apsw.SQLITE_LIMIT_VARIABLE_NUMBER, -1))


def insert_messages(
    con: apsw.Connection, session_id: str, encoded: list[dict[str, Any]], tool_calls: int
) -> list[int]:
    """Insert encoded rows for one session, bump its counters, return the new ids."""
    if not session_exists(con, session_id):
        raise SessionNotFoundError(session_id)
    columns = ("session_id", "timestamp", *MESSAGE_COLUMNS)
    row_marks = "(" + ", ".join("?" for _ in columns) + ")"
    # A batch goes in as one multi-row INSERT (chunked only past SQLite's bound-parameter
    # limit), not executemany: FTS5 flushes its pending index data at every statement
    # boundary inside a transaction, so row-per-statement inserts through the triggers run
    # 3-4x slower (see docs/benchmarks.md). Bound values, not a JSON array unpacked by
    # json_each: serialising and re-parsing ~1 KB per message cost a quarter of the insert.
    # Timestamps step by a microsecond so a batch keeps its order under (session, timestamp).
    per_statement = max(1, _max_parameters(con) // len(columns))
    now = time.time()
    for start in range(0, len(encoded), per_statement):
        chunk = encoded[start : start + per_statement]
        params: list[Any] = []
        for i, row in enumerate(chunk, start):
            params.append(session_id)
            params.append(now + i * 1e-6)
            params.extend(row[c] for c in MESSAGE_COLUMNS)
        con.execute(
            f"INSERT INTO messages ({', '.join(columns)}) VALUES "
            + ", ".join([row_marks] * len(chunk)),
            params,
        )
    last = con.last_insert_rowid()
    con.execute(
        "UPDATE sessions SET message_count = COALESCE(message_count, 0) + ?,"
        " tool_call_count = COALESCE(tool_call_count, 0) + ? WHERE id = ?",
        (len(encoded), tool_calls, session_id),
    )
    # One writer holds the lock and ids come from AUTOINCREMENT, so the batch is contiguous.
    return list(range(last - len(encoded) + 1, last + 1))


def token_update(
    con: apsw.Connection, session_id: str, *, absolute: bool = False, **fields: Any
) -> None:
    """SS-39: add (or set) counters and costs; fill ``model``/``billing_*`` only if empty.

    ``fields`` are the keyword arguments of ``SessionStore.update_token_counts``. A missing
    session is created with source ``unknown``; a ``None`` cost leaves its column alone.
    """
    op = "?" if absolute else "COALESCE({c}, 0) + ?"
    sets = [f"{c} = " + op.format(c=c) for c in _COUNTERS]
    params: list[Any] = [int(fields.get(c) or 0) for c in _COUNTERS]
    for column in ("estimated_cost_usd", "actual_cost_usd"):
        if fields.get(column) is not None:
            sets.append(f"{column} = " + op.format(c=column))
            params.append(float(fields[column]))
    for column in ("model", "billing_provider", "billing_base_url", "billing_mode"):
        sets.append(f"{column} = COALESCE({column}, ?)")
        params.append(fields.get(column))
    for column in ("cost_status", "cost_source", "pricing_version"):
        sets.append(f"{column} = COALESCE(?, {column})")
        params.append(fields.get(column))
    con.execute(
        "INSERT OR IGNORE INTO sessions (id, source, started_at) VALUES (?, 'unknown', ?)",
        (session_id, time.time()),
    )
    con.execute(f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?", (*params, session_id))


def insert_continuation(
    con: apsw.Connection,
    parent_id: str,
    session_id: str,
    *,
    model: str | None,
    system_prompt: str | None,
    title: str | None,
    encoded: list[dict[str, Any]],
    tool_calls: int,
) -> None:
    """Create the child of an already ended ``parent_id`` and write its seed messages.

    The child's ``started_at`` is read now, after the parent's end committed, and never
    earlier than the parent's ``ended_at`` (SS-28), so the continuation predicate holds.
    """
    parent = rows(con.execute("SELECT * FROM sessions WHERE id = ?", (parent_id,)))[0]
    if title is not None:
        check_title_free(con, title, session_id)
    elif parent["title"]:
        title = next_title_in_lineage(con, parent["title"])
    inherited = {k: parent[k] for k in INHERITED}
    values: dict[str, Any] = {
        "id": session_id,
        "source": parent["source"],
        "model": model or parent["model"],
        "system_prompt": system_prompt if system_prompt is not None else parent["system_prompt"],
        "parent_session_id": parent_id,
        "title": title,
        "started_at": max(time.time(), float(parent["ended_at"])),
        **inherited,
    }
    con.execute(
        f"INSERT INTO sessions ({', '.join(values)}) VALUES ({', '.join('?' for _ in values)})",
        tuple(values.values()),
    )
    if encoded:
        insert_messages(con, session_id, encoded, tool_calls)
        con.execute(
            "INSERT INTO state_meta (key, value) VALUES (?, ?)",
            (seed_key(session_id), str(len(encoded))),
        )
