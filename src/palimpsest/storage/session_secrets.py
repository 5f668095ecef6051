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
(``covered``). Writers fill the table off the append path (:func:`keep_step`: the
SQLite upkeep thread, :class:`SecretKeeper` on PostgreSQL, ``sessions maintain``, and
what a store wrote before it closes), a batch of new messages at a time; a reader adds
only the messages past ``through_id``. A row is trusted only while the session still has
``covered`` messages up to ``through_id``: on PostgreSQL a transaction can commit a
lower id after a higher one was kept, and the reader then collects the session again.
Triggers reset the row when a message's text changes or a message is deleted (its
``generation`` goes up, so a keeper that read the old text cannot write over the reset).

The table holds secret values in clear, like the messages they came from: whoever can
read it can read those. Readers that cannot use it (an older read-only file) collect
from the messages as before. Either way the result is cached in the process, keyed by
the session's newest message and the kept row.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

import apsw

from ..messages import call_arguments, call_name, content_text
from ..safety.redact import recognise
from .contract import SqlGateway

__all__ = [
    "KEEP_BATCH",
    "KEEP_ON_CLOSE_SECONDS",
    "SecretKeeper",
    "hit_text",
    "keep_all",
    "keep_step",
    "session_secrets",
]

log = logging.getLogger(__name__)

KEEP_BATCH = 512
"""Messages one :func:`keep_step` reads past the watermark (about 0.1 s of redaction)."""

KEEP_ON_CLOSE_SECONDS = 1.0
"""How long a store that wrote may spend keeping secrets as it closes (the rest waits for
the next writer's upkeep, or ``sessions maintain``)."""

WATERMARK_KEY = "session_secrets_through"
"""The ``state_meta`` key holding the newest message id the keepers have reached."""

_RESETS_PER_STEP = 16
_CACHE_SIZE = 256
_cache: OrderedDict[tuple[str, str, int, int, int, int], frozenset[str]] = OrderedDict()
_lock = threading.Lock()
_COLUMNS = ("content", "content_json", "tool_name", "tool_calls")


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


class _Kept:
    """A session's message count and its row of ``session_secrets`` (zeros without one)."""

    __slots__ = ("count", "covered", "found", "generation", "through")

    def __init__(self) -> None:
        self.count = 0  # sessions.message_count: kept exact with every insert and delete
        self.generation = 0
        self.through = 0  # 0: no row, or a row an edit reset
        self.covered = 0
        self.found: frozenset[str] = frozenset()


_KEPT = (
    "SELECT s.id, COALESCE(s.message_count, 0), k.generation, k.through_id, k.covered,"
    " k.secret_values FROM sessions AS s LEFT JOIN session_secrets AS k ON k.session_id = s.id"
    " WHERE s.id IN ({marks})"
)
_UNKEPT = (  # a read-only file from before the table
    "SELECT id, COALESCE(message_count, 0), NULL, NULL, NULL, NULL FROM sessions"
    " WHERE id IN ({marks})"
)


def _kept_rows(connection: Any, session_ids: list[str]) -> dict[str, _Kept]:
    """Each session's message count and kept row, one statement per 500 sessions."""
    found = {sid: _Kept() for sid in session_ids}
    for at in range(0, len(session_ids), 500):
        chunk = session_ids[at : at + 500]
        marks = ", ".join("?" for _ in chunk)
        try:
            rows = connection.execute(_KEPT.format(marks=marks), chunk).fetchall()
        except apsw.SQLError as exc:
            if "no such table" not in str(exc):
                raise
            rows = connection.execute(_UNKEPT.format(marks=marks), chunk).fetchall()
        for sid, count, generation, through, covered, values in rows:
            kept = found[str(sid)]
            kept.count = int(count)
            if through is not None:
                kept.generation, kept.through = int(generation), int(through)
                kept.covered = int(covered)
                kept.found = frozenset(json.loads(str(values)))
    return found


_ROW_COLUMNS = "id, " + ", ".join(_COLUMNS)


def _texts(connection: Any, session_id: str, after: int = 0, upto: int | None = None) -> list[str]:
    """The texts of the session's messages with ids in ``(after, upto]``, in order (read
    whole, so no snapshot is held while they are redacted)."""
    sql = f"SELECT {', '.join(_COLUMNS)} FROM messages WHERE session_id = ? AND id > ?"
    params: list[Any] = [session_id, after]
    if upto is not None:
        sql += " AND id <= ?"
        params.append(upto)
    rows = connection.execute(sql + " ORDER BY id", params).fetchall()
    return [hit_text(dict(zip(_COLUMNS, row, strict=True))) for row in rows]


def _reveal(texts: list[str], values: frozenset[str]) -> frozenset[str]:
    """``values`` and those ``texts``, read in order, revealed."""
    found = set(values)
    for text in texts:
        if text:
            _, revealed = recognise(text, found)
            found |= revealed
    return frozenset(found)


def _read(connection: Any, session_id: str, kept: _Kept) -> frozenset[str]:
    """What the session revealed: the kept values and the messages past them, or every
    message when the row does not add up (no row, reset, a message committed below it)."""
    if kept.through:
        tail = _texts(connection, session_id, kept.through)
        if kept.covered + len(tail) == kept.count:
            return _reveal(tail, kept.found)
    return _reveal(_texts(connection, session_id), frozenset())


def session_secrets(connection: Any, session_ids: Iterable[str]) -> dict[str, frozenset[str]]:
    """``session id -> the secret values its messages revealed`` (an empty set when none).

    ``connection`` is a reading connection of either backend (apsw, or PostgreSQL through
    :class:`~.pg_db.SqliteDialect`).
    """
    filename = str(getattr(connection, "filename", "") or "")
    wanted = list(dict.fromkeys(str(s) for s in session_ids))
    result: dict[str, frozenset[str]] = {}
    for session_id, kept in _kept_rows(connection, wanted).items():
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


# -- keeping -------------------------------------------------------------------------------

_KEEP = (
    "INSERT INTO session_secrets (session_id, generation, through_id, covered, secret_values)"
    " SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?)"
    " ON CONFLICT (session_id) DO UPDATE SET through_id = excluded.through_id,"
    " covered = excluded.covered, secret_values = excluded.secret_values"
    " WHERE session_secrets.generation = excluded.generation"
    " AND session_secrets.through_id < excluded.through_id"
)


def _watermark(connection: Any) -> int:
    row = connection.execute(
        "SELECT value FROM state_meta WHERE key = ?", (WATERMARK_KEY,)
    ).fetchone()
    try:
        return int(row[0]) if row else 0
    except (TypeError, ValueError):
        return 0


def keep_step(db: SqlGateway, batch: int = KEEP_BATCH) -> bool:
    """Keep the values of the sessions that have messages past the watermark (the next
    ``batch`` messages) or whose row an edit reset; True when it did anything.

    Reads first (the batch by id, so a step costs what it keeps, not the sessions'
    length), redacts outside any transaction, then writes the rows and the new watermark
    in one short write. A row that changed meanwhile (an edit, another keeper) is left.
    """
    with db.reader() as con:  # read everything first: redacting holds no snapshot
        through = _watermark(con)
        rows = con.execute(
            f"SELECT {_ROW_COLUMNS}, session_id FROM messages WHERE id > ? ORDER BY id LIMIT ?",
            (through, batch),
        ).fetchall()
        upto = int(rows[-1][0]) if rows else through
        new: dict[str, list[tuple[int, str]]] = {}
        for row in rows:
            text = hit_text(dict(zip(_COLUMNS, row[1:-1], strict=True)))
            new.setdefault(str(row[-1]), []).append((int(row[0]), text))
        sessions = list(new) or [
            str(sid)
            for (sid,) in con.execute(
                "SELECT session_id FROM session_secrets WHERE through_id = 0 LIMIT ?",
                (_RESETS_PER_STEP,),
            )
        ]
        # Every committed message up to ``upto`` is in this snapshot; when the batch
        # reached the newest one, the session's count must add up.
        whole = len(rows) < batch
        todo = []
        for sid, kept in _kept_rows(con, sessions).items():
            texts = [text for mid, text in new.get(sid, ()) if mid > kept.through]
            if kept.through and not (whole and kept.covered + len(texts) != kept.count):
                if texts:
                    todo.append((sid, kept.generation, kept.found, kept.covered, texts))
                continue
            texts = _texts(con, sid, 0, upto)  # no row, a reset one, or one that is short
            todo.append((sid, kept.generation, frozenset[str](), 0, texts))
    if not todo and not rows:
        return False
    done = [
        (sid, generation, upto, covered + len(texts), json.dumps(sorted(_reveal(texts, found))))
        for sid, generation, found, covered, texts in todo
    ]

    def store(con: Any) -> int:
        changed = 0
        for sid, generation, upto_, covered, values in done:
            con.execute(_KEEP, (sid, generation, upto_, covered, values, sid))
            changed += con.changes()
        if rows:
            con.execute(
                "INSERT OR REPLACE INTO state_meta (key, value) VALUES (?, ?)",
                (WATERMARK_KEY, str(upto)),
            )
        return changed

    # Only progress counts: a reset row an edit races with is left for the next step.
    return db.write(store) > 0 or bool(rows)


def keep_all(db: SqlGateway, budget_seconds: float | None = None) -> bool:
    """Run :func:`keep_step` until nothing is left (True) or ``budget_seconds`` passed."""
    started = time.monotonic()
    while keep_step(db):
        if budget_seconds is not None and time.monotonic() - started >= budget_seconds:
            return False
    return True


class SecretKeeper:
    """A daemon thread that runs :func:`keep_step` after appends, for a store without an
    upkeep thread of its own (PostgreSQL). :meth:`notify` after a commit wakes it (the
    first call starts it); :meth:`close` stops it after the step under way."""

    IDLE_SECONDS = 5.0

    def __init__(self, db: SqlGateway, *, background: bool = True) -> None:
        self.db = db
        self._background = background
        #: Steps that failed (logged; the next wake tries again).
        self.errors = 0
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()

    def notify(self) -> None:
        if not self._background or self._stop.is_set():
            return
        with self._start:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="palimpsest-secrets", daemon=True
                )
                self._thread.start()
        self._idle.clear()
        self._wake.set()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until the thread has kept everything; False on timeout or when not running."""
        if self._thread is None or not self._thread.is_alive():
            return False
        return self._idle.wait(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            try:
                busy = keep_step(self.db)
            except Exception:  # the server went away, a lock timed out: try again later
                self.errors += 1
                log.warning("keeping session secrets failed; retrying later", exc_info=True)
                busy = False
            if busy:
                continue
            self._idle.set()
            self._wake.wait(self.IDLE_SECONDS)

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
