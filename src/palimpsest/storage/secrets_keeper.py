"""Keeping each session's revealed secret values current, off the append path.

:mod:`.session_secrets` reads the values of a session from its row of ``session_secrets``
plus the messages past it. This module writes those rows: :func:`keep_step` takes the next
batch of messages past a watermark (``state_meta``), redacts them outside any
transaction and writes the rows of their sessions in one short write. Who runs it:

* the SQLite upkeep thread (:mod:`.upkeep`), through a :class:`KeepPacer`;
* :class:`SecretKeeper`, a thread of its own, on PostgreSQL;
* a store that wrote, as it closes (at most :data:`KEEP_ON_CLOSE_SECONDS`);
* ``palimpsest sessions maintain`` and :meth:`Store.keep_secrets` (everything).

Redaction is Python, so a keeping thread takes the interpreter lock from the appends of
its process: measured at 1,000,000 messages, keeping at full speed beside a bulk insert
halved the insert rate and let single appends wait up to 724 ms. The pacer therefore
keeps at full speed only when no message has been written for
:attr:`KeepPacer.quiet_seconds`;
while it is being written to, it runs small steps and at most :attr:`KeepPacer.share` of
the time, and catches up once the writes stop.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from .contract import SqlGateway
from .session_secrets import ROW_COLUMNS, kept_rows, message_texts, reveal, row_text

__all__ = [
    "KEEP_BATCH",
    "KEEP_ON_CLOSE_SECONDS",
    "KeepPacer",
    "SecretKeeper",
    "keep_all",
    "keep_before_close",
    "keep_step",
    "newest_message",
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
    with db.snapshot() as con:  # one snapshot, read whole: redacting holds none
        through = _watermark(con)
        rows = con.execute(
            f"SELECT {ROW_COLUMNS}, session_id FROM messages WHERE id > ? ORDER BY id LIMIT ?",
            (through, batch),
        ).fetchall()
        upto = int(rows[-1][0]) if rows else through
        new: dict[str, list[tuple[int, str]]] = {}
        for row in rows:
            new.setdefault(str(row[-1]), []).append((int(row[0]), row_text(row[1:-1])))
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
        for sid, kept in kept_rows(con, sessions).items():
            texts = [text for mid, text in new.get(sid, ()) if mid > kept.through]
            if kept.through and not (whole and kept.covered + len(texts) != kept.count):
                if texts:
                    todo.append((sid, kept.generation, kept.found, kept.covered, texts))
                continue
            texts = message_texts(con, sid, 0, upto)  # no row, a reset one, or one that is short
            todo.append((sid, kept.generation, frozenset[str](), 0, texts))
    if not todo and not rows:
        return False
    done = [
        (sid, generation, upto, covered + len(texts), json.dumps(sorted(reveal(texts, found))))
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


def keep_before_close(
    db: SqlGateway, location: str, errors: tuple[type[BaseException], ...]
) -> None:
    """What a store that wrote does as it closes: keep for at most
    :data:`KEEP_ON_CLOSE_SECONDS` (a short-lived writer, a CLI command or one turn of a
    gateway, never starts a keeping thread). ``errors`` (the backend's) are logged, not
    raised: readers collect what is not kept."""
    try:
        keep_all(db, KEEP_ON_CLOSE_SECONDS)
    except errors:
        log.warning("%s: keeping session secrets at close failed", location, exc_info=True)


def newest_message(db: SqlGateway) -> int:
    """The newest message id: what :class:`KeepPacer` watches on SQLite to tell whether
    anyone (this process or another) is appending."""
    return int(db.scalar("SELECT COALESCE(max(id), 0) FROM messages") or 0)


class KeepPacer:
    """:func:`keep_step` for a thread that shares its process with the writers.

    Called by the thread in a loop (it returns True while work is left, like an upkeep
    task). ``writes()`` moves when messages are written: the newest id, or a count of
    appends, not every commit (the upkeep's own merges and this pacer's writes commit
    too). When it has not moved for ``quiet_seconds`` the pacer keeps in full batches,
    back to back; otherwise it keeps ``busy_batch`` messages a step and then waits, so
    that keeping takes at most ``share`` of the time (a step of 2 ms is followed by 18 ms
    of nothing).
    """

    def __init__(
        self,
        db: SqlGateway,
        writes: Callable[[], int],
        *,
        share: float = 0.1,
        quiet_seconds: float = 0.5,
        busy_batch: int = 16,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 < share <= 1:
            raise ValueError("share must be in (0, 1]")
        self.db = db
        self.writes = writes
        self.share = share
        self.quiet_seconds = quiet_seconds
        self.busy_batch = busy_batch
        self.clock = clock
        self._seen = writes()
        self._last_write = clock()
        self._not_before = 0.0

    def quiet(self) -> bool:
        """True when no message has been written for ``quiet_seconds``."""
        now, count = self.clock(), self.writes()
        if count != self._seen:
            self._seen, self._last_write = count, now
        return now - self._last_write >= self.quiet_seconds

    def __call__(self) -> bool:
        now = self.clock()
        quiet = self.quiet()
        if not quiet and now < self._not_before:
            return True  # work may be left; not now
        started = self.clock()
        busy = keep_step(self.db, KEEP_BATCH if quiet else self.busy_batch)
        spent = self.clock() - started
        self._not_before = self.clock() + spent * (1 / self.share - 1)
        return busy


class SecretKeeper:
    """A daemon thread that keeps after appends (paced, :class:`KeepPacer`), for a store
    without an upkeep thread of its own (PostgreSQL). :meth:`notify` after a commit wakes
    it (the first call starts it) and counts as a write; :meth:`close` stops it after the
    step under way."""

    IDLE_SECONDS = 5.0
    WAIT_SECONDS = 0.01  # between two checks while the pacer holds a step back

    def __init__(self, db: SqlGateway, *, background: bool = True) -> None:
        self.db = db
        self._background = background
        self._writes = 0
        self.pacer = KeepPacer(db, lambda: self._writes)
        #: Steps that failed (logged; the next wake tries again).
        self.errors = 0
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()

    def notify(self) -> None:
        self._writes += 1
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

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until the thread has kept everything; False on timeout or when not running."""
        if not self.running:
            return False
        return self._idle.wait(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            try:
                busy = self.pacer()
            except Exception:  # the server went away, a lock timed out: try again later
                self.errors += 1
                log.warning("keeping session secrets failed; retrying later", exc_info=True)
                busy = False
            if busy:
                self._stop.wait(self.WAIT_SECONDS)
                continue
            self._idle.set()
            self._wake.wait(self.IDLE_SECONDS)

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
