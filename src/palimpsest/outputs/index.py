"""The SQLite index of the output store: what each saved object is, and who refers to it.

The objects themselves are plain files named by their SHA-256 (:mod:`.store`); this index
adds what a file name cannot say: the kind of data, the character count of a text, the tool
that produced it, when it was saved and last read, and which sessions (and tool calls)
point at it. Retention reads ``last_used`` and the references; listing reads the rest.

Guarantees:

* **Nothing on disk until the first write.** Reads of a missing ``index.db`` answer as if
  the index were empty, so listing a store that was never written to creates no file.
* **Many writers.** WAL mode, a 5 s busy timeout, every write in one ``BEGIN IMMEDIATE``
  transaction (retried a few times when another process holds the lock), and a lock per
  :class:`OutputIndex` so threads sharing it never interleave transactions.
* **Errors name the file.** A damaged file raises :class:`~palimpsest.errors.DatabaseCorruptError`
  naming it and the repair command; a read-only or full disk raises
  :class:`~palimpsest.errors.StorageError` with the path and the cause.

The index is a cache of facts about the files, except for the references: it can be
rebuilt from ``objects/`` (:meth:`OutputStore.rebuild_index`), and references that cannot
be read back from the old file are then lost.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import apsw

from ..errors import DatabaseCorruptError, DatabaseLockedError, StorageError
from .ingest import measure_file

if TYPE_CHECKING:
    from .objects import ObjectFile
    from .store import StoredOutput

__all__ = ["BUSY_TIMEOUT_MS", "INDEX_FILENAME", "SCHEMA_VERSION", "OutputIndex", "rows"]

T = TypeVar("T")

INDEX_FILENAME = "index.db"
BUSY_TIMEOUT_MS = 5_000
SCHEMA_VERSION = 1
_WRITE_ATTEMPTS = 4  # each attempt already waits up to BUSY_TIMEOUT_MS inside SQLite

_SCHEMA = """
CREATE TABLE IF NOT EXISTS objects (
    digest TEXT PRIMARY KEY,
    suffix TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    chars INTEGER,
    kind TEXT NOT NULL,
    tool_name TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    last_used REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_objects_last_used ON objects(last_used);
CREATE TABLE IF NOT EXISTS refs (
    digest TEXT NOT NULL REFERENCES objects(digest) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    call_id TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    PRIMARY KEY (digest, session_id, call_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idx_refs_session ON refs(session_id);
"""

_CORRUPT = (apsw.CorruptError, apsw.NotADBError)
_BUSY = (apsw.BusyError, apsw.LockedError)


def rows(cursor: apsw.Cursor) -> list[dict[str, Any]]:
    """All rows of an executed cursor as dicts keyed by column name."""
    names: list[str] | None = None
    found: list[dict[str, Any]] = []
    for row in cursor:
        if names is None:
            names = [d[0] for d in cursor.get_description()]
        found.append(dict(zip(names, row, strict=True)))
    return found


class OutputIndex:
    """``index.db`` of one output store, opened lazily (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._con: apsw.Connection | None = None
        self._lock = threading.RLock()

    # -- errors --------------------------------------------------------------------------

    def corrupt(self, exc: BaseException) -> DatabaseCorruptError:
        """The one message a damaged index gets: the objects are safe, and the fix."""
        return DatabaseCorruptError(
            f"{self.path}: the outputs index is damaged ({exc}). The saved outputs are "
            "intact; run 'palimpsest outputs gc --rebuild-index' to rebuild the index from "
            "them (references from sessions are lost).",
            path=self.path,
        )

    def _translate(self, exc: apsw.Error) -> StorageError:
        if isinstance(exc, _CORRUPT):
            return self.corrupt(exc)
        if isinstance(exc, _BUSY):
            return DatabaseLockedError(
                f"{self.path}: the outputs index stayed locked; retry", path=self.path
            )
        return StorageError(f"{self.path}: the outputs index failed: {exc}", path=self.path)

    # -- opening ---------------------------------------------------------------------------

    def exists(self) -> bool:
        return self.path.exists()

    def _connection(self) -> apsw.Connection:
        if self._con is not None:
            return self._con
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if not self.path.exists():
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        except OSError as exc:
            raise StorageError(
                f"{self.path}: cannot create the outputs index: {exc.strerror or exc}",
                path=self.path,
            ) from exc
        try:
            con = apsw.Connection(str(self.path))
        except apsw.Error as exc:
            raise self._translate(exc) from exc
        try:
            con.set_busy_timeout(BUSY_TIMEOUT_MS)
            con.execute("PRAGMA journal_mode = WAL")
            con.execute("PRAGMA foreign_keys = ON")
            con.execute("PRAGMA synchronous = NORMAL")
            version = rows(con.execute("PRAGMA user_version"))[0]["user_version"]
            if version < SCHEMA_VERSION:
                with con:  # a savepoint: the schema and its version commit together
                    con.execute(_SCHEMA)
                    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except apsw.Error as exc:
            con.close()
            raise self._translate(exc) from exc
        self._con = con
        return con

    def close(self) -> None:
        with self._lock:
            if self._con is not None:
                self._con.close()
                self._con = None

    def salvage(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
        """All object and reference rows, or ``None`` when the file cannot be read."""
        try:
            found = self.read(
                lambda con: (
                    rows(con.execute("SELECT * FROM objects")),
                    rows(con.execute("SELECT * FROM refs")),
                )
            )
            return found or ([], [])
        except StorageError:
            self.close()
            return None

    def rebuild(self, files: Iterable[ObjectFile], *, chunk_size: int = 1024 * 1024) -> int:
        """Recreate the index for ``files``; returns how many objects it holds.

        Rows and references still readable from the old file are kept; a damaged file is
        moved aside (``index.db.damaged-<time>``) and its references are lost. Objects
        without a row are measured (kind, characters) and dated by their mtime.
        """
        salvaged = self.salvage()
        old_rows, old_refs = salvaged if salvaged is not None else ([], [])
        self.discard(keep_copy=salvaged is None)
        known = {row["digest"]: row for row in old_rows}
        fresh: list[tuple[Any, ...]] = []
        for found in files:
            row = known.get(found.digest)
            if row is None or row["suffix"] != found.suffix:
                kind, chars = measure_file(found.path, chunk_size)
                row = {"chars": chars, "kind": kind, "tool_name": "", "created": found.mtime,
                       "last_used": found.mtime}  # fmt: skip
            fresh.append((found.digest, found.suffix, found.size_bytes, row["chars"],
                          row["kind"], row["tool_name"], row["created"], row["last_used"]))  # fmt: skip
        kept = {values[0] for values in fresh}
        refs = [
            (r["digest"], r["session_id"], r["call_id"], r["created"])
            for r in old_refs
            if r["digest"] in kept
        ]

        def fill(con: apsw.Connection) -> None:
            con.executemany("INSERT INTO objects VALUES (?, ?, ?, ?, ?, ?, ?, ?)", fresh)
            con.executemany("INSERT INTO refs VALUES (?, ?, ?, ?)", refs)

        self.write(fill)
        return len(fresh)

    def discard(self, *, keep_copy: bool) -> Path | None:
        """Close and remove the file (with ``-wal``/``-shm``), or move it aside when
        ``keep_copy``: a damaged index is never deleted. Returns where the copy went."""
        self.close()
        moved: Path | None = None
        if keep_copy and self.path.exists():
            moved = self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}")
            os.replace(self.path, moved)
        for suffix in ("", "-wal", "-shm"):
            target = self.path.with_name(self.path.name + suffix)
            if target.exists():
                target.unlink()
        return moved

    # -- running -----------------------------------------------------------------------

    def read(self, fn: Callable[[apsw.Connection], T]) -> T | None:
        """``fn(connection)``, or ``None`` when the index file does not exist yet."""
        with self._lock:
            if self._con is None and not self.exists():
                return None
            try:
                return fn(self._connection())
            except apsw.Error as exc:
                raise self._translate(exc) from exc

    def write(self, fn: Callable[[apsw.Connection], T]) -> T:
        """Run ``fn(connection)`` in one ``BEGIN IMMEDIATE`` transaction (created on demand).

        ``fn`` may run again after a busy rollback, so it must only touch the database.
        """
        with self._lock:
            con = self._connection()
            for attempt in range(1, _WRITE_ATTEMPTS + 1):
                try:
                    con.execute("BEGIN IMMEDIATE")
                except _BUSY as exc:
                    if attempt == _WRITE_ATTEMPTS:
                        raise self._translate(exc) from exc
                    time.sleep(0.05 * attempt)
                    continue
                except apsw.Error as exc:
                    raise self._translate(exc) from exc
                try:
                    result = fn(con)
                    con.execute("COMMIT")
                    return result
                except apsw.Error as exc:
                    if not con.get_autocommit():
                        con.execute("ROLLBACK")
                    if isinstance(exc, _BUSY) and attempt < _WRITE_ATTEMPTS:
                        continue
                    raise self._translate(exc) from exc
                except BaseException:
                    if not con.get_autocommit():
                        con.execute("ROLLBACK")
                    raise
            raise AssertionError("unreachable")  # pragma: no cover

    # -- statements --------------------------------------------------------------------

    def record(
        self,
        con: apsw.Connection,
        *,
        digest: str,
        suffix: str,
        size_bytes: int,
        chars: int | None,
        kind: str,
        tool_name: str,
        now: float,
        created: float | None = None,
    ) -> None:
        """Insert an object row; an existing one only gets a fresher ``last_used``."""
        con.execute(
            "INSERT INTO objects (digest, suffix, size_bytes, chars, kind, tool_name,"
            " created, last_used) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(digest) DO UPDATE SET"
            " last_used = max(objects.last_used, excluded.last_used)",
            (digest, suffix, size_bytes, chars, kind, tool_name, created or now, now),
        )

    def record_object(
        self, con: apsw.Connection, found: StoredOutput, *, now: float, created: float | None = None
    ) -> None:
        """:meth:`record` for an object already described by a :class:`StoredOutput`."""
        self.record(
            con,
            digest=found.digest,
            suffix=found.path.suffix[1:],
            size_bytes=found.size_bytes,
            chars=found.chars,
            kind=found.kind,
            tool_name=found.tool_name,
            now=now,
            created=created,
        )

    def add_ref(
        self, con: apsw.Connection, digest: str, session_id: str, call_id: str | None, now: float
    ) -> None:
        con.execute(
            "INSERT OR IGNORE INTO refs (digest, session_id, call_id, created) VALUES (?, ?, ?, ?)",
            (digest, session_id, call_id or "", now),
        )

    def row(self, con: apsw.Connection, digest: str) -> dict[str, Any]:
        """The object row of ``digest`` inside a running transaction (it must exist)."""
        return rows(con.execute("SELECT * FROM objects WHERE digest = ?", (digest,)))[0]

    def get(self, digest: str) -> dict[str, Any] | None:
        found = self.read(
            lambda con: rows(con.execute("SELECT * FROM objects WHERE digest = ?", (digest,)))
        )
        return found[0] if found else None

    def objects(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Object rows, newest first; only those ``session_id`` refers to when given."""
        params: tuple[str, ...] = ()
        if session_id is None:
            sql = "SELECT * FROM objects ORDER BY created DESC, digest"
        else:
            sql = (
                "SELECT * FROM objects WHERE digest IN"
                " (SELECT digest FROM refs WHERE session_id = ?) ORDER BY created DESC, digest"
            )
            params = (session_id,)
        return self.read(lambda con: rows(con.execute(sql, params))) or []

    def refs(self, digest: str) -> list[dict[str, Any]]:
        sql = (
            "SELECT digest, session_id, call_id, created FROM refs WHERE digest = ?"
            " ORDER BY created, session_id, call_id"
        )
        return self.read(lambda con: rows(con.execute(sql, (digest,)))) or []

    def referenced_by(self, session_ids: Iterable[str]) -> set[str]:
        """Digests with a reference from any of ``session_ids``."""
        wanted = set(session_ids)

        def scan(con: apsw.Connection) -> set[str]:
            pairs = con.execute("SELECT digest, session_id FROM refs")
            return {str(digest) for digest, session_id in pairs if session_id in wanted}

        return (self.read(scan) or set()) if wanted else set()

    def total_bytes(self) -> int:
        total = self.read(
            lambda con: rows(con.execute("SELECT COALESCE(SUM(size_bytes), 0) AS n FROM objects"))
        )
        return int(total[0]["n"]) if total else 0

    def delete(self, con: apsw.Connection, digests: Iterable[str]) -> None:
        """Remove object rows (their references go with them: ON DELETE CASCADE)."""
        con.executemany("DELETE FROM objects WHERE digest = ?", [(d,) for d in digests])
