"""Background upkeep: the index merging and WAL checkpoints that appends no longer do.

New and migrated full-text indexes never merge segments inside a write (FTS5
``automerge`` = 0, :data:`~.fts_layout.FTS_WRITE_SETTINGS`), and once this upkeep runs SQLite's
WAL autocheckpoint is off on the write connection. Someone still has to merge the
segments (queries read every one) and keep the WAL from growing without bound. A
long-lived store does it itself, in a daemon thread owned by
:class:`~.sessions.SessionStore`:

* it starts lazily, at the commit that makes :attr:`UpkeepPolicy.start_after_writes`
  writes, or the first commit :attr:`UpkeepPolicy.start_after_seconds` after the first
  one, so a short CLI command that appends a few rows never starts a thread (SQLite's own
  autocheckpoint and the passive checkpoint on close keep its WAL small);
* each step is one bounded FTS5 ``'merge'`` (:func:`~.maintenance.merge_step`, about
  :attr:`UpkeepPolicy.step_pages` pages) in its own short write transaction, with the
  write lock released and a pause between steps, so an append waits at most one step;
* when the ``-wal`` file passes :attr:`UpkeepPolicy.wal_checkpoint_bytes` it runs a
  ``PASSIVE`` checkpoint on its own connection, which never holds the write lock; if
  writes keep the WAL past :attr:`UpkeepPolicy.wal_hard_bytes` anyway (passive
  checkpoints that cannot catch up), it checkpoints once more under the write lock, which
  then only copies the frames written since the last passive pass and bounds the file
  (the commit hook wakes the thread as soon as the WAL passes the soft size);
* while it runs, FTS5's ``crisismerge`` is raised to :attr:`UpkeepPolicy.crisis_segments`
  (it is 16 otherwise): at 16, a writer whose commit makes the 16th segment of an index
  level merges the whole level inside that commit, and under a bulk writer the thread's
  bounded steps fall behind (at 1,000,000 messages written at 15,000/s, levels held up to
  119 segments), so single appends took those merges: up to 760 ms, in ``COMMIT``, with
  no fsync in it (docs/benchmarks.md). The raised bound keeps the merging in the thread;
  the thread puts the value back when it stops, and checks it again whenever it goes idle
  (another process's store may have put it back meanwhile);
* a writer that outpaces the thread pays for merging: once the thread has merged without
  a break for :attr:`UpkeepPolicy.behind_seconds`, each append of
  :attr:`UpkeepPolicy.bulk_messages` or more messages also merges, in its own
  transaction, about as many index pages as it wrote
  (:meth:`BackgroundUpkeep.share_merging`; FTS5's automerge would do that once per index
  level). Single appends never do. Without it the levels grow to hundreds of segments
  under a bulk import, and a merge step's cost grows with
  the segments it reads (12 ms for 32 pages over 16 segments, 51 ms over 200), which an
  append then waits for;
* it stops (and the autocheckpoint comes back) when the store closes.

Hosts that prefer a timer turn it off (``store.background_upkeep: false``) and run
``palimpsest sessions maintain``; without either, FTS5's ``crisismerge`` still bounds the
segments per index level and SQLite's autocheckpoint the WAL, inside writes as before.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import apsw

from ..errors import StorageError
from .db import DEFAULT_WAL_AUTOCHECKPOINT, Database
from .fts_layout import (
    IDLE_CRISIS_MERGE,
    TRIGRAM_TABLE,
    WORD_TABLE,
    crisis_merge,
    set_crisis_merge,
)
from .maintenance import merge_step

__all__ = ["BackgroundUpkeep", "UpkeepPolicy", "UpkeepStats"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class UpkeepPolicy:
    """When the upkeep thread starts and how much one step may do."""

    start_after_writes: int = 32
    start_after_seconds: float = 5.0
    #: Index pages one merge step writes (the longest an append waits for a step).
    step_pages: int = 32
    #: Pause between two steps while there is work, so appends get the write lock.
    pause_seconds: float = 0.005
    #: How long the thread sleeps when there is nothing to merge (it is also woken
    #: every ``wake_every_writes`` commits to look at the WAL).
    idle_seconds: float = 1.0
    wake_every_writes: int = 32
    wal_checkpoint_bytes: int = 8 * 1024 * 1024
    wal_hard_bytes: int = 64 * 1024 * 1024
    #: FTS5 ``crisismerge`` while the thread runs (16 to 2000, FTS5's bounds): the most
    #: segments one index level may hold before a writer merges them in its commit.
    crisis_segments: int = 256
    #: Merging without a break this long means the writers outpace the thread: bulk
    #: appends then merge too (see the module docstring).
    behind_seconds: float = 2.0
    #: The smallest append that counts as bulk (a single agent turn never does).
    bulk_messages: int = 64

    def __post_init__(self) -> None:
        if self.step_pages < 1 or self.start_after_writes < 1 or self.wake_every_writes < 1:
            raise ValueError("UpkeepPolicy counts must be at least 1")
        if self.bulk_messages < 2 or self.behind_seconds < 0:
            raise ValueError("UpkeepPolicy needs bulk_messages >= 2 and behind_seconds >= 0")
        if not IDLE_CRISIS_MERGE <= self.crisis_segments <= 2000:
            raise ValueError(f"UpkeepPolicy.crisis_segments must be {IDLE_CRISIS_MERGE} to 2000")
        if not 0 < self.wal_checkpoint_bytes <= self.wal_hard_bytes:
            raise ValueError("UpkeepPolicy needs 0 < wal_checkpoint_bytes <= wal_hard_bytes")


@dataclass
class UpkeepStats:
    """What the thread has done so far (read them for benchmarks and diagnostics)."""

    merge_steps: int = 0
    merge_seconds: float = 0.0
    longest_step_seconds: float = 0.0
    checkpoints: int = 0
    locked_checkpoints: int = 0
    longest_locked_checkpoint_seconds: float = 0.0
    deferred_checkpoints: int = 0
    checkpoint_seconds: float = 0.0
    writer_backstops: int = 0
    """Times the WAL passed the hard size between two checkpoints of the thread, so the
    writer's own autocheckpoint was turned on (see ``_writer_backstop``)."""
    shared_merges: int = 0
    """Bulk appends that merged because the thread was behind (``share_merging``)."""
    errors: int = 0


class BackgroundUpkeep:
    """The daemon thread of one :class:`~.db.Database` (see the module docstring).

    :meth:`attach` registers the commit hook; the thread itself starts on a later
    commit. :meth:`stop` ends it and is idempotent.
    """

    def __init__(self, db: Database, policy: UpkeepPolicy | None = None) -> None:
        self.db = db
        self.policy = policy or UpkeepPolicy()
        self.stats = UpkeepStats()
        self._writes = 0
        self._first_write: float | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._stopped = False
        self._writer_checkpoints = False  # see _writer_backstop
        self._tasks: list[Callable[[], bool]] = []
        self._tables: list[str] = []
        self._busy_since: float | None = None

    def add_task(self, task: Callable[[], bool]) -> None:
        """Run ``task`` after each merge pass: one bounded step of other background work
        (embedding new messages, :mod:`.vectors`) that returns True while work is left."""
        self._tasks.append(task)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def behind(self) -> bool:
        """True while the thread has been merging without a break for
        :attr:`UpkeepPolicy.behind_seconds`: the writers add segments faster than it merges."""
        since = self._busy_since
        return since is not None and time.monotonic() - since >= self.policy.behind_seconds

    def share_merging(self, con: apsw.Connection, rows: Sequence[Mapping[str, Any]]) -> None:
        """Inside an append's transaction, given the message rows it wrote: when the append
        is bulk and the thread is behind, merge about as many index pages as the append
        wrote (FTS5's word index takes about 0.45x the text, in pages of about 4 KB), at
        least one step. The thread still does the rest. (Two and four times that, tried
        at 1,000,000 messages, gave no fewer stalls; docs/benchmarks.md.)"""
        if len(rows) < self.policy.bulk_messages or not self.running or not self.behind:
            return
        chars = sum(len(row.get("content") or "") for row in rows)
        pages = max(self.policy.step_pages, chars // 8192)
        for table in self._tables:
            merge_step(con, table=table, pages=pages)
        self.stats.shared_merges += 1

    def attach(self) -> None:
        if not self.db.read_only:
            self.db.on_commit(self._committed)

    def _committed(self) -> None:
        """The commit hook: counts writes, starts the thread when due, wakes it now and then."""
        self._writes += 1
        if self._thread is not None:
            wal = self._wal_bytes()
            if self._writes % self.policy.wake_every_writes == 0 or (
                wal >= self.policy.wal_checkpoint_bytes
            ):
                self._wake.set()
            self._writer_backstop(wal)
            return
        now = time.monotonic()
        if self._first_write is None:
            self._first_write = now
        due = self._writes >= self.policy.start_after_writes or (
            now - self._first_write >= self.policy.start_after_seconds
        )
        if due and not self._stopped:
            self.start()

    def _writer_backstop(self, wal: int) -> None:
        """SQLite's own autocheckpoint back on the write connection while the WAL is past
        the hard size, off again once a checkpoint has reset it below that.

        Only the thread checkpoints while it keeps up. A thread that gets no CPU (a loaded
        machine, a writer that never yields) cannot, and the WAL would grow with every
        append; SQLite's checkpoint at commit then bounds it, at some cost to those appends.
        """
        if not self._writer_checkpoints and wal >= self.policy.wal_hard_bytes:
            self.db.set_wal_autocheckpoint(DEFAULT_WAL_AUTOCHECKPOINT)
            self._writer_checkpoints = True
            self.stats.writer_backstops += 1
        elif self._writer_checkpoints and wal < self.policy.wal_hard_bytes:
            self.db.set_wal_autocheckpoint(0)
            self._writer_checkpoints = False

    def start(self) -> None:
        """Start the thread now (normally a commit does it); no-op when running or stopped."""
        if self._thread is not None or self._stopped or self.db.read_only:
            return
        self.db.set_wal_autocheckpoint(0)
        self._thread = threading.Thread(
            target=self._run, name=f"palimpsest-upkeep:{self.db.path.name}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """End the thread (after its current step) and give SQLite its autocheckpoint back."""
        self._stopped = True
        self.db.on_commit(None)
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if not self._thread.is_alive():
                with_suppressed(lambda: self.db.set_wal_autocheckpoint(DEFAULT_WAL_AUTOCHECKPOINT))
                with_suppressed(lambda: self._set_crisis(IDLE_CRISIS_MERGE))

    def wait_idle(self, timeout: float) -> bool:
        """Wait until the thread has found nothing left to merge; False on timeout or
        when it is not running."""
        if not self.running:
            return False
        self._idle.clear()
        self._wake.set()
        return self._idle.wait(timeout)

    # -- the thread ----------------------------------------------------------------------

    def _run(self) -> None:
        side: apsw.Connection | None = None
        try:
            side = self.db.open_connection()
            self._tables = self._index_tables()
            self._set_crisis(self.policy.crisis_segments)
            while not self._stop.is_set():
                try:
                    self._checkpoint(side)
                    merged = self._merge()
                    merged = self._run_tasks() or merged
                except (StorageError, apsw.Error):
                    self.stats.errors += 1
                    log.warning("%s: background upkeep step failed", self.db.path, exc_info=True)
                    merged = False
                if merged:
                    self._idle.clear()
                    if self._busy_since is None:
                        self._busy_since = time.monotonic()
                    self._stop.wait(self.policy.pause_seconds)
                else:
                    self._busy_since = None
                    self._idle.set()
                    self._wake.wait(self.policy.idle_seconds)
                    self._wake.clear()
                    self._set_crisis(self.policy.crisis_segments)
        except (StorageError, apsw.Error):
            log.warning("%s: background upkeep stopped", self.db.path, exc_info=True)
        finally:
            if side is not None:
                with_suppressed(side.close)

    def _index_tables(self) -> list[str]:
        return [
            name
            for name in (WORD_TABLE, TRIGRAM_TABLE)
            if self.db.scalar(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
            )
        ]

    def _set_crisis(self, segments: int) -> None:
        """Store ``crisismerge`` = ``segments`` on every index whose value differs (a read
        when none does, so the idle check costs no write)."""

        with self.db.reader() as con:
            if all(crisis_merge(con, table) == segments for table in self._tables):
                return

        def store(con: apsw.Connection) -> None:
            for table in self._tables:
                if crisis_merge(con, table) != segments:
                    set_crisis_merge(con, table, segments)

        self.db.write(store)

    def _merge(self) -> bool:
        """One bounded merge step per index that has work; True when any merged."""
        merged = False
        for table in self._tables:
            if self._stop.is_set():
                break
            started = time.perf_counter()
            did = self.db.write(partial(merge_step, table=table, pages=self.policy.step_pages))
            spent = time.perf_counter() - started
            if did:
                merged = True
                self.stats.merge_steps += 1
                self.stats.merge_seconds += spent
                self.stats.longest_step_seconds = max(self.stats.longest_step_seconds, spent)
                self._stop.wait(self.policy.pause_seconds)
        return merged

    def _run_tasks(self) -> bool:
        busy = False
        for task in self._tasks:
            if self._stop.is_set():
                break
            try:
                busy = task() or busy
            except (StorageError, apsw.Error):
                raise
            except Exception:  # a caller's embedding function failed: log, keep merging
                self.stats.errors += 1
                log.warning("%s: background task failed", self.db.path, exc_info=True)
        return busy

    def _wal_bytes(self) -> int:
        try:
            return os.stat(f"{self.db.path}-wal").st_size
        except FileNotFoundError:
            return 0

    def _checkpoint(self, side: apsw.Connection) -> None:
        """Passive checkpoints off the write lock past the soft size; past the hard size
        (passive ones could not catch up with the writers) one more under the lock, which
        then only has the frames written since the last passive one to copy."""
        if self.db.journal_mode != "wal" or self._wal_bytes() < self.policy.wal_checkpoint_bytes:
            return
        started = time.perf_counter()
        for _ in range(3):  # each pass copies what the writers added during the last one
            try:
                frames, copied = side.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
            except (apsw.BusyError, apsw.LockedError):
                # Another connection (another process's store) is checkpointing right
                # now, or the writer is resetting the WAL: the next pass catches up.
                self.stats.deferred_checkpoints += 1
                break
            self.stats.checkpoints += 1
            if copied >= frames or self._stop.is_set():
                break
        if self._wal_bytes() >= self.policy.wal_hard_bytes:
            locked = time.perf_counter()
            if self.db.checkpoint("PASSIVE"):
                self.stats.locked_checkpoints += 1
                self.stats.longest_locked_checkpoint_seconds = max(
                    self.stats.longest_locked_checkpoint_seconds, time.perf_counter() - locked
                )
        self.stats.checkpoint_seconds += time.perf_counter() - started


def with_suppressed(fn: Callable[[], object]) -> None:
    """Call ``fn()`` ignoring SQLite and storage errors (cleanup paths only)."""
    try:
        fn()
    except (StorageError, apsw.Error):
        log.debug("upkeep cleanup failed", exc_info=True)
