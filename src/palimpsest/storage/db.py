"""One SQLite file shared by many processes: how it is opened and how every write runs.

The store is written by several processes at once (an interactive CLI, a gateway, cron
jobs, delegated sub-agents), so this module owns the rules that keep that safe:

* the file is opened through ``apsw``, which bundles a current SQLite with FTS5 and the
  trigram tokenizer (the system SQLite may predate the WAL-reset fix);
* WAL journal mode (many readers, one writer), ``foreign_keys = ON``, a busy timeout, and
  file mode 0600 when the file is created;
* every write goes through :meth:`Database.write`: one in-process lock, ``BEGIN
  IMMEDIATE``, commit or roll back, and on ``busy``/``locked`` retries with 20-150 ms of
  random jitter, bounded in attempts and in total time (10 s by default; spec SS-14,
  SS-15); a nested call joins the outer transaction through a savepoint;
* no checkpoint is run by the store inside a write: SQLite's own WAL autocheckpoint
  (1,000 pages) bounds the WAL until the store's background upkeep (:mod:`.upkeep`)
  takes over and switches it off (:meth:`Database.set_wal_autocheckpoint`); a passive
  checkpoint is attempted on close;
* SQLite failures are translated at this edge, once: ``DatabaseLockedError`` when the
  lock outlives the retry budget, ``DatabaseReadOnlyError`` when the file cannot be
  written, ``DatabaseCorruptError`` for damaged pages or rows whose bytes are not the
  text they should be (nothing is ever deleted).

Reads never wait for a writer. They use a second connection (``query_only``) behind its
own lock, and each :meth:`Database.reader` block is one WAL snapshot (a deferred read
transaction): it sees the last commit before it started, whatever a writer in another
process is doing meanwhile. A file that cannot be written is opened read-only
(:mod:`.readonly`), so reads keep working there too.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import apsw

from ..errors import DatabaseLockedError, DatabaseReadOnlyError, StorageError
from .failures import CORRUPT_ERRORS, UNREADABLE_ROWS, corrupt_error, read_only_error
from .readonly import open_read_only, read_only_reason

__all__ = [
    "DEFAULT_WAL_AUTOCHECKPOINT",
    "WAL_SIZE_LIMIT",
    "Database",
    "RetryPolicy",
    "Tracer",
    "corrupt_error",
    "read_only_error",
    "rows",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

Tracer = Callable[[str, Any], None]
"""Called with ``(sql, bindings)`` before every statement either connection runs."""

#: SQLite's default WAL autocheckpoint, in pages: in force while no background upkeep runs.
DEFAULT_WAL_AUTOCHECKPOINT = 1000

#: Bytes a reset WAL file is cut back to (``PRAGMA journal_size_limit``), so one burst of
#: writes does not leave a huge ``-wal`` file behind for good.
WAL_SIZE_LIMIT = 4 * 1024 * 1024

_BUSY_ERRORS = (apsw.BusyError, apsw.LockedError)
_WAL_FALLBACK_MARKERS = ("locking protocol", "not authorized", "disk i/o error")


@dataclass(frozen=True)
class RetryPolicy:
    """How long a writer keeps trying when another process holds the write lock.

    Each attempt first waits up to ``busy_timeout_ms`` inside SQLite, then sleeps a uniform
    random ``min_sleep``..``max_sleep`` seconds; the jitter keeps competing writers from
    retrying in lockstep. The writer gives up after ``attempts`` attempts or ``max_wait``
    seconds, whichever comes first. The per-attempt defaults are the spec's (SS-14, SS-15);
    ``max_wait`` bounds the total, so a lock held for minutes costs a caller 10 s, not the
    ~17 s that 15 attempts of 1 s would.
    """

    attempts: int = 15
    busy_timeout_ms: int = 1000
    min_sleep: float = 0.020
    max_sleep: float = 0.150
    max_wait: float = 10.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("RetryPolicy.attempts must be at least 1")
        if not 0 <= self.min_sleep <= self.max_sleep:
            raise ValueError("RetryPolicy needs 0 <= min_sleep <= max_sleep")
        if self.max_wait <= 0:
            raise ValueError("RetryPolicy.max_wait must be positive")


def rows(cursor: apsw.Cursor) -> list[dict[str, Any]]:
    """All rows of an executed cursor as dicts keyed by column name."""
    result: list[dict[str, Any]] = []
    names: list[str] | None = None
    for row in cursor:
        if names is None:
            names = [d[0] for d in cursor.get_description()]
        result.append(dict(zip(names, row, strict=True)))
    return result


class Database:
    """The two connections to one SQLite file and the single write path.

    ``path`` must be a file path (``:memory:`` cannot be shared by two connections). A
    file that cannot be written is opened read-only: :attr:`read_only` is then true,
    :attr:`read_only_reason` says why, reads work and :meth:`write` raises
    :class:`DatabaseReadOnlyError`.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        retry: RetryPolicy | None = None,
        tracer: Tracer | None = None,
    ) -> None:
        self.path = Path(path).expanduser()
        self.retry = retry or RetryPolicy()
        self._tracer = tracer
        self._write_lock = threading.RLock()
        self._read_lock = threading.RLock()
        self._commit_hook: Callable[[], None] | None = None
        #: Writes committed through :meth:`write` since the file was opened.
        self.commits = 0
        self.journal_mode = "wal"
        self.read_only_reason: str | None = None
        # How further connections are opened: the plain path, or the read-only URI.
        self._uri: str | None = None
        self._reader: apsw.Connection | None = None
        self._create_file()
        self._con = self._open()

    @property
    def read_only(self) -> bool:
        """True when the file was opened read-only (see :attr:`read_only_reason`)."""
        return self._uri is not None

    # -- opening -----------------------------------------------------------------------

    def _create_file(self) -> None:
        if self.path.exists():
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Created 0600 before SQLite touches it; SQLite gives -wal/-shm the same mode.
            fd = os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600)
            os.close(fd)
            os.chmod(self.path, 0o600)
        except OSError as exc:
            reason = read_only_reason(self.path)
            if reason is not None:
                raise DatabaseReadOnlyError(
                    f"{self.path}: cannot create the session database: {reason}.",
                    path=self.path,
                    reason=reason,
                ) from exc
            raise StorageError(
                f"Session database not available: {self.path}: {exc.strerror or exc}",
                path=self.path,
            ) from exc

    def _open(self) -> apsw.Connection:
        """The write connection, or a read-only one when the file cannot be written."""
        con = self._connect()
        failure: apsw.Error | None = None
        try:
            self._configure_writer(con)
            if not con.readonly("main"):
                return con
        except (apsw.ReadOnlyError, apsw.CantOpenError) as exc:
            failure = exc
        except CORRUPT_ERRORS as exc:
            con.close()
            raise corrupt_error(self.path, exc) from exc
        except BaseException:
            con.close()
            raise
        con.close()
        reason = read_only_reason(self.path)
        if reason is None and failure is not None:
            raise StorageError(
                f"Session database not available: {self.path}: {failure}", path=self.path
            ) from failure
        try:
            ro, self._uri = open_read_only(self.path)
        except CORRUPT_ERRORS as exc:
            raise corrupt_error(self.path, exc) from exc
        except apsw.Error as exc:
            raise StorageError(
                f"Session database not available: {self.path}: {exc}", path=self.path
            ) from exc
        self.read_only_reason = reason or "SQLite opened it read-only"
        self.journal_mode = str(ro.execute("PRAGMA journal_mode").fetchall()[0][0]).lower()
        self._prepare(ro)
        log.info("%s: opened read-only (%s)", self.path, self.read_only_reason)
        return ro

    def _connect(self) -> apsw.Connection:
        try:
            if self._uri is None:
                con = apsw.Connection(str(self.path))
            else:
                flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
                con = apsw.Connection(self._uri, flags=flags)
        except apsw.Error as exc:
            raise StorageError(
                f"Session database not available: {self.path}: {exc}", path=self.path
            ) from exc
        self._prepare(con)
        return con

    def _prepare(self, con: apsw.Connection) -> None:
        con.set_busy_timeout(self.retry.busy_timeout_ms)
        if self._tracer is not None:
            con.exec_trace = self._trace

    def _trace(self, cursor: apsw.Cursor, sql: str, bindings: Any) -> bool:
        if self._tracer is not None:
            self._tracer(sql, bindings)
        return True

    def _configure_writer(self, con: apsw.Connection) -> None:
        con.execute("PRAGMA foreign_keys = ON")
        self._set_wal(con)
        # NORMAL in WAL mode: a crash of the process never loses a commit; a power
        # loss may drop the last few commits but never corrupts the file.
        con.execute("PRAGMA synchronous = NORMAL")
        con.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}").fetchall()
        # The first read parses the schema (a damaged one fails here, not later) and
        # opens the WAL files (an unwritable directory fails here).
        con.execute("SELECT count(*) FROM sqlite_master").fetchall()

    def _set_wal(self, con: apsw.Connection) -> None:
        # Switching a WAL file to WAL again is a no-op that takes no lock, so this never
        # waits for another process's writer; only a fresh file is really switched.
        deadline = time.monotonic() + self.retry.max_wait
        for attempt in range(self.retry.attempts):
            try:
                mode = con.execute("PRAGMA journal_mode = WAL").fetchall()[0][0]
                self.journal_mode = str(mode).lower()
                return
            except _BUSY_ERRORS:
                if attempt + 1 == self.retry.attempts or time.monotonic() >= deadline:
                    raise self._locked(attempt + 1, self.retry.max_wait) from None
                self._sleep()
            except (apsw.ReadOnlyError, apsw.CantOpenError):
                raise
            except apsw.Error as exc:
                text = str(exc).lower()
                if not any(marker in text for marker in _WAL_FALLBACK_MARKERS):
                    raise
                # SS-16: network filesystems often cannot do WAL's shared memory.
                log.warning(
                    "%s: WAL unavailable (%s); using journal_mode=DELETE. The database "
                    "may be on NFS/SMB/FUSE.",
                    self.path,
                    exc,
                )
                con.execute("PRAGMA journal_mode = DELETE")
                self.journal_mode = "delete"
                return

    def _sleep(self, limit: float | None = None) -> None:
        pause = random.uniform(self.retry.min_sleep, self.retry.max_sleep)
        time.sleep(pause if limit is None else max(0.0, min(pause, limit)))

    def _locked(self, attempts: int, waited: float) -> DatabaseLockedError:
        return DatabaseLockedError(
            f"{self.path}: another process holds the write lock on the session database; "
            f"gave up after {waited:.1f} s ({attempts} attempts). Nothing was written and "
            "reading still works. Retry when that process is done ('fuser' on the file "
            "names it).",
            path=self.path,
        )

    # -- writing -----------------------------------------------------------------------

    def write(self, fn: Callable[[apsw.Connection], T]) -> T:
        """Run ``fn(connection)`` in one ``BEGIN IMMEDIATE`` transaction and commit it.

        ``fn`` may be run several times (after a busy/locked rollback), so it must not
        change Python state that a rollback cannot undo. Called inside another write it
        joins that transaction through a savepoint. Raises :class:`DatabaseLockedError`
        when the lock outlasts :attr:`retry`, :class:`DatabaseReadOnlyError` on a file
        that cannot be written.
        """
        if self.read_only:
            raise read_only_error(self.path, self.read_only_reason)
        with self._write_lock:
            if not self._con.get_autocommit():
                with self._con:  # a savepoint inside the outer transaction
                    return fn(self._con)
            started = time.monotonic()
            deadline = started + self.retry.max_wait
            attempt = 0
            while True:
                attempt += 1
                remaining = deadline - time.monotonic()
                # SQLite's own wait never runs past the total budget.
                wait_ms = min(self.retry.busy_timeout_ms, int(remaining * 1000))
                self._con.set_busy_timeout(max(1, wait_ms))
                try:
                    return self._attempt(fn)
                except _BUSY_ERRORS:
                    remaining = deadline - time.monotonic()
                    if attempt >= self.retry.attempts or remaining <= 0:
                        raise self._locked(attempt, time.monotonic() - started) from None
                    self._sleep(remaining)

    def _attempt(self, fn: Callable[[apsw.Connection], T]) -> T:
        """One ``BEGIN IMMEDIATE`` .. ``COMMIT``; busy errors propagate for a retry."""
        try:
            self._con.execute("BEGIN IMMEDIATE")
        except CORRUPT_ERRORS as exc:
            raise corrupt_error(self.path, exc) from exc
        except (apsw.ReadOnlyError, apsw.CantOpenError) as exc:
            raise self._unwritable(exc) from exc
        try:
            result = fn(self._con)
            self._con.execute("COMMIT")
        except CORRUPT_ERRORS as exc:
            self._rollback()
            raise corrupt_error(self.path, exc) from exc
        except (apsw.ReadOnlyError, apsw.CantOpenError) as exc:
            self._rollback()
            raise self._unwritable(exc) from exc
        except BaseException:
            self._rollback()
            raise
        self._after_commit()
        return result

    def _unwritable(self, exc: apsw.Error) -> StorageError:
        """A write refused by the file system after the store opened read-write."""
        reason = read_only_reason(self.path)
        if reason is None and isinstance(exc, apsw.CantOpenError):
            return StorageError(f"{self.path}: cannot write the session database: {exc}")
        return read_only_error(self.path, reason)

    def _rollback(self) -> None:
        if not self._con.get_autocommit():
            try:
                self._con.execute("ROLLBACK")
            except apsw.Error:  # the original error is the one worth reporting
                log.debug("rollback failed on %s", self.path, exc_info=True)

    def _after_commit(self) -> None:
        # Only bookkeeping here: checkpoints and index merging never run in a write.
        self.commits += 1
        if self._commit_hook is not None:
            self._commit_hook()

    def on_commit(self, hook: Callable[[], None] | None) -> None:
        """Call ``hook()`` after every committed :meth:`write` (``None`` removes it).

        It runs on the writing thread with the write lock held, so it must be quick; the
        background upkeep uses it to count writes and wake its thread.
        """
        self._commit_hook = hook

    def set_wal_autocheckpoint(self, pages: int) -> None:
        """SQLite's automatic checkpoint on the write connection after ``pages`` WAL
        pages (0: off; the background upkeep checkpoints instead)."""
        if self.read_only:
            return
        with self._write_lock:
            self._con.wal_autocheckpoint(pages)

    def open_connection(self) -> apsw.Connection:
        """A new connection to the file with this store's settings; the caller closes it.

        The background upkeep checkpoints through one, so a checkpoint never holds the
        write lock that appends wait for.
        """
        con = self._connect()
        con.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}").fetchall()
        # A connection opens the WAL on its first read; until then a checkpoint through
        # it silently does nothing.
        con.execute("SELECT count(*) FROM sqlite_master").fetchall()
        return con

    def checkpoint(self, mode: str = "PASSIVE") -> bool:
        """Attempt a WAL checkpoint (``PASSIVE``, ``FULL``, ``RESTART`` or ``TRUNCATE``).

        Returns whether it ran; failures (a busy reader, say) are ignored because the next
        checkpoint catches up.
        """
        modes = {
            "PASSIVE": apsw.SQLITE_CHECKPOINT_PASSIVE,
            "FULL": apsw.SQLITE_CHECKPOINT_FULL,
            "RESTART": apsw.SQLITE_CHECKPOINT_RESTART,
            "TRUNCATE": apsw.SQLITE_CHECKPOINT_TRUNCATE,
        }
        if self.read_only:
            return False
        with self._write_lock:
            try:
                self._con.wal_checkpoint(mode=modes[mode.upper()])
            except apsw.Error:
                return False
            return True

    # -- reading -----------------------------------------------------------------------

    @contextmanager
    def reader(self) -> Iterator[apsw.Connection]:
        """The read-only connection, held under the read lock for the ``with`` block.

        The outermost block is one deferred read transaction: every statement in it sees
        the same WAL snapshot, and no statement waits for a writer. Damaged pages and rows
        whose bytes are not valid text or JSON raise :class:`DatabaseCorruptError`.
        """
        with self._read_lock:
            if self._reader is None:
                con = self._connect()
                con.set_busy_timeout(5000)
                con.execute("PRAGMA foreign_keys = ON")
                con.execute("PRAGMA query_only = ON")
                self._reader = con
            con = self._reader
            outermost = con.get_autocommit()
            if outermost:
                con.execute("BEGIN")
            try:
                yield con
            except CORRUPT_ERRORS + UNREADABLE_ROWS as exc:
                raise corrupt_error(self.path, exc) from exc
            finally:
                if outermost and not con.get_autocommit():
                    try:
                        con.execute("COMMIT")
                    except apsw.Error:
                        with suppress(apsw.Error):
                            con.execute("ROLLBACK")

    def snapshot(self) -> AbstractContextManager[apsw.Connection]:
        """:meth:`reader`: its block already reads one snapshot (the PostgreSQL gateway's
        ``snapshot`` has to ask for one)."""
        return self.reader()

    @contextmanager
    def fresh_connection(self) -> Iterator[apsw.Connection]:
        """A new connection for the ``with`` block, closed afterwards.

        ``verify`` uses it: FTS5's integrity check run again on a long-lived connection
        can report a checksum mismatch for an index that a new connection finds sound.
        """
        con = self._connect()
        try:
            con.execute("PRAGMA foreign_keys = ON")
            yield con
        except CORRUPT_ERRORS + UNREADABLE_ROWS as exc:
            raise corrupt_error(self.path, exc) from exc
        finally:
            con.close()

    def query(self, sql: str, params: Any = None) -> list[dict[str, Any]]:
        """Rows of one read statement as dicts."""
        with self.reader() as con:
            return rows(con.execute(sql, params))

    def scalar(self, sql: str, params: Any = None) -> Any:
        """The first column of the first row, or ``None``."""
        with self.reader() as con:
            for row in con.execute(sql, params):
                return row[0]
        return None

    # -- closing -----------------------------------------------------------------------

    def close(self) -> None:
        """Attempt one passive checkpoint, then close both connections (idempotent)."""
        with self._write_lock, self._read_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
            if self._con is not None:
                if not self.read_only:
                    with suppress(apsw.Error):
                        self._con.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
                self._con.close()

    @property
    def writer(self) -> apsw.Connection:
        """The write connection, for code already running inside :meth:`write`."""
        return self._con
