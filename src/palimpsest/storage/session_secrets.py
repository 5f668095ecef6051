"""What a session has revealed: the secret values recognised anywhere in its messages.

A password redacted where it was typed (``password=X``) can reappear in the same session
with nothing around it that a rule could read ("then psql accepted X", a later tool
output). Every reader that shows stored text (search snippets, the ``session_search``
tool, ``sessions show/export --redact``) therefore redacts with the values the *whole
session* revealed, not only those of the text at hand: :func:`session_secrets` collects
them and the reader passes them to :func:`palimpsest.safety.redact.redact` as ``known``.

Collecting means redacting every message of the session in order, a few MB/s of text, so
it is not done per search: the values are **kept** in ``session_secrets`` (migration
``m012_session_secrets``; PostgreSQL migration 4), one row per session with the newest
message id they cover (``through_id``) and how many of the session's messages that was
(``covered``), written off the append path by :mod:`.secrets_keeper`. A reader adds only
the messages past ``through_id``. A row is trusted only while ``covered`` plus the
messages past ``through_id`` make the session's message count (counted on the session
index, not read from ``sessions.message_count``): on PostgreSQL a transaction can commit
a lower id after a higher one was kept, and the reader then collects the whole session
(the keeper does again at the session's next message). Triggers reset the row when a message's text
changes or a message is deleted (its ``generation`` goes up, so a keeper that read the
old text cannot write over the reset).

The table holds secret values in clear, like the messages they came from: whoever can
read it can read those. Readers that cannot use it (an older read-only file) collect
from the messages as before. What a reader had to collect is cached in the process,
keyed by the kept row and the session's message count.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import apsw

from ..messages import call_arguments, call_name, content_text
from ..safety.redact import recognise

__all__ = [
    "ROW_COLUMNS",
    "TEXT_COLUMNS",
    "Kept",
    "hit_text",
    "kept_rows",
    "message_texts",
    "reveal",
    "row_text",
    "session_secrets",
]

_CACHE_SIZE = 256
_cache: OrderedDict[tuple[str, str, int, int, int, int], frozenset[str]] = OrderedDict()
_lock = threading.Lock()
TEXT_COLUMNS = ("content", "content_json", "tool_name", "tool_calls")


def hit_text(row: Mapping[str, Any]) -> str:
    """The searchable text of a ``messages`` row, readable: content, tool name, calls.

    The columns are the ones the word index holds (SS-07). List content is shown as its
    text; each tool call as ``name arguments`` with the arguments' JSON decoded once, so
    escaped quotes do not hide ``"password": "..."`` from redaction.
    """
    content = row.get("content")
    if content is not None and row.get("content_json"):
        with contextlib.suppress(ValueError):  # not JSON after all: show it as stored
            content = content_text(json.loads(str(content)))
    parts = [str(content or ""), str(row.get("tool_name") or "")]
    calls = row.get("tool_calls")
    if calls:
        try:
            decoded = json.loads(str(calls))
        except ValueError:
            parts.append(str(calls))
        else:
            listed = decoded if isinstance(decoded, list) else [decoded]
            parts += [f"{call_name(c)} {call_arguments(c)}" for c in listed]
    # one part a line: a value wrapped onto the content's last line ends at a line end
    return "\n".join(p for p in parts if p)


# -- reading -------------------------------------------------------------------------------


class Kept:
    """A session's message count and its row of ``session_secrets`` (zeros without one)."""

    __slots__ = ("count", "covered", "found", "generation", "through")

    def __init__(self) -> None:
        self.count = 0  # how many messages the session has
        self.generation = 0
        self.through = 0  # 0: no row, or a row an edit reset
        self.covered = 0
        self.found: frozenset[str] = frozenset()


_COUNTS = (
    "SELECT session_id, COUNT(*) FROM messages WHERE session_id IN ({marks}) GROUP BY session_id"
)
_KEPT = (
    "SELECT session_id, generation, through_id, covered, secret_values FROM session_secrets"
    " WHERE session_id IN ({marks})"
)


def kept_rows(connection: Any, session_ids: list[str]) -> dict[str, Kept]:
    """Each session's message count (counted, from the session index: a counter someone
    else's writer forgot to bump must not hide a message) and its kept row, two
    statements per 500 sessions."""
    found = {sid: Kept() for sid in session_ids}
    for at in range(0, len(session_ids), 500):
        chunk = session_ids[at : at + 500]
        marks = ", ".join("?" for _ in chunk)
        for sid, count in connection.execute(_COUNTS.format(marks=marks), chunk).fetchall():
            found[str(sid)].count = int(count)
        try:
            rows = connection.execute(_KEPT.format(marks=marks), chunk).fetchall()
        except apsw.SQLError as exc:  # a read-only file from before the table
            if "no such table" not in str(exc):
                raise
            rows = []
        for sid, generation, through, covered, values in rows:
            kept = found[str(sid)]
            kept.generation, kept.through = int(generation), int(through)
            kept.covered = int(covered)
            kept.found = frozenset(json.loads(str(values)))
    return found


ROW_COLUMNS = "id, " + ", ".join(TEXT_COLUMNS)


def message_texts(
    connection: Any, session_id: str, after: int = 0, upto: int | None = None
) -> list[str]:
    """The texts of the session's messages with ids in ``(after, upto]``, in order (read
    whole, so no snapshot is held while they are redacted)."""
    sql = f"SELECT {', '.join(TEXT_COLUMNS)} FROM messages WHERE session_id = ? AND id > ?"
    params: list[Any] = [session_id, after]
    if upto is not None:
        sql += " AND id <= ?"
        params.append(upto)
    rows = connection.execute(sql + " ORDER BY id", params).fetchall()
    return [row_text(row) for row in rows]


def row_text(values: Sequence[Any]) -> str:
    """:func:`hit_text` of a row read as ``TEXT_COLUMNS``, in that order."""
    return hit_text(dict(zip(TEXT_COLUMNS, values, strict=True)))


def reveal(texts: list[str], values: frozenset[str]) -> frozenset[str]:
    """``values`` and those ``texts``, read in order, revealed."""
    found = set(values)
    for text in texts:
        if text:
            _, revealed = recognise(text, found)
            found |= revealed
    return frozenset(found)


def _read(connection: Any, session_id: str, kept: Kept) -> frozenset[str]:
    """What the session revealed: the kept values and the messages past them, or every
    message when the row does not add up (no row, reset, a message committed below it)."""
    if kept.through:
        tail = message_texts(connection, session_id, kept.through)
        if kept.covered + len(tail) == _count_after(connection, session_id, kept, len(tail)):
            return reveal(tail, kept.found)
    return reveal(message_texts(connection, session_id), frozenset())


def _count_after(connection: Any, session_id: str, kept: Kept, tail: int) -> int:
    """The session's message count, read again after its tail when the first reading does
    not add up: on PostgreSQL each statement of a reader sees the commits made before it,
    so a message appended between the two readings is in the tail but not the count. Read
    after the tail, the count holds every message the tail holds; it is larger only when
    a message below ``through_id`` is not kept (or one was appended meanwhile: then the
    whole session is read, which is never wrong)."""
    if kept.covered + tail == kept.count:
        return kept.count
    row = connection.execute(
        "SELECT COUNT(*) FROM messages WHERE session_id = ?", (session_id,)
    ).fetchone()
    return int(row[0]) if row else 0


def session_secrets(connection: Any, session_ids: Iterable[str]) -> dict[str, frozenset[str]]:
    """``session id -> the secret values its messages revealed`` (an empty set when none).

    ``connection`` is a reading connection of either backend (apsw, or PostgreSQL through
    :class:`~.pg_db.SqliteDialect`).
    """
    filename = str(getattr(connection, "filename", "") or "")
    wanted = list(dict.fromkeys(str(s) for s in session_ids))
    result: dict[str, frozenset[str]] = {}
    for session_id, kept in kept_rows(connection, wanted).items():
        if not kept.count:
            result[session_id] = frozenset()
            continue
        if kept.through and kept.covered == kept.count:
            result[session_id] = kept.found  # the common case: one row, nothing to redact
            continue
        # an edit bumps the generation, a keeper the row, an append or delete the count
        key = (filename, session_id, kept.generation, kept.through, kept.covered, kept.count)
        with _lock:
            cached = _cache.get(key) if filename else None
            if cached is not None:
                _cache.move_to_end(key)
        if cached is None:
            cached = _read(connection, session_id, kept)
            if filename:
                with _lock:
                    _cache[key] = cached
                    while len(_cache) > _CACHE_SIZE:
                        _cache.popitem(last=False)
        result[session_id] = cached
    return result
