"""One SQLite file shared by many processes: how it is opened and how every write runs.

The store is written by several processes at once (an interactive CLI, a gateway, cron
jobs, delegated sub-agents), so this module owns the rules that keep that safe:

* the file is opened through ``apsw``, which bundles a current SQLite with FTS5 and the
  trigram tokenizer (the system SQLite may predate the WAL-reset fix);
* WAL journal mode (many readers, one writer), ``foreign_keys = ON``, a busy timeout, and
  file mode 0600 when the file is created;
* every write goes through :meth:`Database.write`: one in-process lock, ``BEGIN
  IMMEDIATE``, commit or roll back, and on ``busy``/``locked`` a bounded number of retries
  with 20-150 ms of random jitter (spec SS-14, SS-15); a nested call joins the outer
  transaction through a savepoint;
* every 50 successful writes, and on close, a passive WAL checkpoint is attempted;
* SQLite failures are translated at this edge: ``DatabaseLockedError`` when the lock
  outlives the retry budget, ``DatabaseCorruptError`` for a damaged file (never deleted).

Reads use a second connection (``query_only``) behind its own lock, so a search never
waits for a writer's retry loop.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import apsw

from ..errors import DatabaseCorruptError, DatabaseLockedError, StorageError

__all__ = [
    "CHECKPOINT_EVERY",
    "Database",
    "RetryPolicy",
    "Tracer",
    "rows",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

Tracer = Callable[[str, Any], None]
"""Called with ``(sql, bindings)`` before every statement either connection runs."""

#: Successful writes between two passive checkpoints (SS-15 step 5).
CHECKPOINT_EVERY = 50

_BUSY_ERRORS = (apsw.BusyError, apsw.LockedError)
_CORRUPT_ERRORS = (apsw.CorruptError, apsw.NotADBError)
_WAL_FALLBACK_MARKERS = ("locking protocol", "not authorized", "disk i/o error")


@dataclass(frozen=True)
class RetryPolicy:
    """How long a writer keeps trying when another process holds the write lock.

    Each attempt first waits up to ``busy_timeout_ms`` inside SQLite, then sleeps a uniform
    random ``min_sleep``..``max_sleep`` seconds; the jitter keeps competing writers from
    retrying in lockstep. The defaults are the spec's (SS-14, SS-15).
    """

    attempts: int = 15
    busy_timeout_ms: int = 1000
    min_sleep: float = 0.020
    max_sleep: float = 0.150

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("RetryPolicy.attempts must be at least 1")
        if not 0 <= self.min_sleep <= self.max_sleep:
            raise ValueError("RetryPolicy needs 0 <= min_sleep <= max_sleep")


def rows(cursor: apsw.Cursor) -> list[dict[str, Any]]:
    """All rows of an executed cursor as dicts keyed by column name."""
    result: list[dict[str, Any]] = []
    names: list[str] | None = None
    for row in cursor:
        if names is None:
            names = [d[0] for d in cursor.get_description()]
        result.append(dict(zip(names, row, strict=True)))
    return result


def corrupt_error(path: Path, exc: BaseException) -> DatabaseCorruptError:
    """The one message a damaged store gets: what failed and what the user can do."""
    return DatabaseCorruptError(
        f"{path}: the session database is damaged ({exc}). Nothing was deleted. Run "
        f"'palimpsest sessions verify'; if the full-text index is at fault, "
        f"'palimpsest sessions verify --repair' rebuilds it. Otherwise move the file aside "
        f"(palimpsest creates a new one) and recover rows with 'sqlite3 {path.name} .recover'.",
        path=path,
    )


class Database:
    """The two connections to one SQLite file and the single write path.

    ``path`` must be a file path (``:memory:`` cannot be shared by two connections).
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
        self._writes_since_checkpoint = 0
        self.journal_mode = "wal"
        self._create_file()
        self._con = self._connect()
        self._configure_writer()
        self._reader: apsw.Connection | None = None

    # -- opening -----------------------------------------------------------------------

    def _create_file(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.exists():
            # Created 0600 before SQLite touches it; SQLite gives -wal/-shm the same mode.
            fd = os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600)
            os.close(fd)
            os.chmod(self.path, 0o600)

    def _connect(self) -> apsw.Connection:
        try:
            con = apsw.Connection(str(self.path))
        except apsw.Error as exc:
            raise StorageError(
                f"Session database not available: {self.path}: {exc}", path=self.path
            ) from exc
        con.set_busy_timeout(self.retry.busy_timeout_ms)
        if self._tracer is not None:
            con.exec_trace = self._trace
        return con

    def _trace(self, cursor: apsw.Cursor, sql: str, bindings: Any) -> bool:
        if self._tracer is not None:
            self._tracer(sql, bindings)
        return True

    def _configure_writer(self) -> None:
        try:
            self._con.execute("PRAGMA foreign_keys = ON")
            self._set_wal()
            # NORMAL in WAL mode: a crash of the process never loses a commit; a power
            # loss may drop the last few commits but never corrupts the file.
            self._con.execute("PRAGMA synchronous = NORMAL")
        except _CORRUPT_ERRORS as exc:
            self._con.close()
            raise corrupt_error(self.path, exc) from exc
        except BaseException:
            self._con.close()
            raise

    def _set_wal(self) -> None:
        for attempt in range(self.retry.attempts):
            try:
                mode = self._con.execute("PRAGMA journal_mode = WAL").fetchall()[0][0]
                self.journal_mode = str(mode).lower()
                return
            except _BUSY_ERRORS:
                if attempt + 1 == self.retry.attempts:
                    raise self._locked() from None
                self._sleep()
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
                self._con.execute("PRAGMA journal_mode = DELETE")
                self.journal_mode = "delete"
                return

    def _sleep(self) -> None:
        time.sleep(random.uniform(self.retry.min_sleep, self.retry.max_sleep))

    def _locked(self) -> DatabaseLockedError:
        return DatabaseLockedError(
            f"{self.path}: the session database stayed locked through "
            f"{self.retry.attempts} attempts; another process is holding a long write. "
            "Retry, or find the process with 'fuser' on the file.",
            path=self.path,
        )

    # -- writing -----------------------------------------------------------------------

    def write(self, fn: Callable[[apsw.Connection], T]) -> T:
        """Run ``fn(connection)`` in one ``BEGIN IMMEDIATE`` transaction and commit it.

        ``fn`` may be run several times (after a busy/locked rollback), so it must not
        change Python state that a rollback cannot undo. Called inside another write it
        joins that transaction through a savepoint.
        """
        with self._write_lock:
            if not self._con.get_autocommit():
                with self._con:  # a savepoint inside the outer transaction
                    return fn(self._con)
            for attempt in range(1, self.retry.attempts + 1):
                try:
                    self._con.execute("BEGIN IMMEDIATE")
                except _BUSY_ERRORS:
                    if attempt < self.retry.attempts:
                        self._sleep()
                    continue
                except _CORRUPT_ERRORS as exc:
                    raise corrupt_error(self.path, exc) from exc
                try:
                    result = fn(self._con)
                    self._con.execute("COMMIT")
                except _BUSY_ERRORS:
                    self._rollback()
                    if attempt < self.retry.attempts:
                        self._sleep()
                    continue
                except _CORRUPT_ERRORS as exc:
                    self._rollback()
                    raise corrupt_error(self.path, exc) from exc
                except BaseException:
                    self._rollback()
                    raise
                self._after_commit()
                return result
            raise self._locked()

    def _rollback(self) -> None:
        if not self._con.get_autocommit():
            try:
                self._con.execute("ROLLBACK")
            except apsw.Error:  # the original error is the one worth reporting
                log.debug("rollback failed on %s", self.path, exc_info=True)

    def _after_commit(self) -> None:
        self._writes_since_checkpoint += 1
        if self._writes_since_checkpoint >= CHECKPOINT_EVERY:
            self.checkpoint()

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
        with self._write_lock:
            self._writes_since_checkpoint = 0
            try:
                self._con.wal_checkpoint(mode=modes[mode.upper()])
            except apsw.Error:
                return False
            return True

    # -- reading -----------------------------------------------------------------------

    @contextmanager
    def reader(self) -> Iterator[apsw.Connection]:
        """The read-only connection, held under the read lock for the ``with`` block."""
        with self._read_lock:
            if self._reader is None:
                con = self._connect()
                con.set_busy_timeout(5000)
                con.execute("PRAGMA foreign_keys = ON")
                con.execute("PRAGMA query_only = ON")
                self._reader = con
            try:
                yield self._reader
            except _CORRUPT_ERRORS as exc:
                raise corrupt_error(self.path, exc) from exc

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
        except _CORRUPT_ERRORS as exc:
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
                with suppress(apsw.Error):
                    self._con.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
                self._con.close()

    @property
    def writer(self) -> apsw.Connection:
        """The write connection, for code already running inside :meth:`write`."""
        return self._con
