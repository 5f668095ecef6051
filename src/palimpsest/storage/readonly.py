"""Opening a store file that cannot be written: why, and how reads still work.

A session database may sit on a read-only mount, in a directory the user cannot write, or
be marked immutable (``chattr +i``). Reading it must still work (``sessions list``,
``show``, ``search``, ``export``); writing must fail with one clear error instead of a raw
SQLite one. Two things make that harder than opening with ``mode=ro``:

* A WAL database needs its ``-shm`` (and ``-wal``) files. When the directory cannot hold
  them and they do not exist, SQLite cannot open the file even read-only
  (``SQLITE_CANTOPEN`` at the first read). Only ``immutable=1`` opens it then: SQLite
  skips locking and the WAL entirely, which is sound because nothing can write a file
  whose directory (or filesystem) refuses the ``-wal`` file any writer would need.
* The reason matters to the user: a read-only filesystem, a file without write
  permission (or immutable), and an unwritable directory are fixed in different places,
  so :func:`read_only_reason` names the one that applies.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

import apsw

__all__ = ["open_read_only", "read_only_reason", "read_only_uri"]

_RO_FLAGS = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI


def read_only_reason(path: Path) -> str | None:
    """Why ``path`` cannot be written, in words for the user; ``None`` if it can be."""
    existing = path if path.exists() else path.parent
    try:
        if os.statvfs(existing).f_flag & os.ST_RDONLY:
            return "it is on a read-only filesystem"
    except OSError:
        pass
    if path.exists() and not os.access(path, os.W_OK):
        return "the file is not writable (permissions, or the immutable attribute)"
    if not os.access(path.parent, os.W_OK):
        return (
            f"its directory {path.parent} is not writable, and SQLite must create "
            f"{path.name}-wal and {path.name}-shm there"
        )
    return None


def read_only_uri(path: Path, *, immutable: bool = False) -> str:
    """The ``file:`` URI that opens ``path`` read-only (``immutable`` skips WAL and locks)."""
    mode = "immutable=1" if immutable else "mode=ro"
    return f"file:{quote(str(path.resolve()))}?{mode}"


def open_read_only(path: Path) -> tuple[apsw.Connection, str]:
    """A read-only connection to ``path`` and the URI it was opened with.

    ``mode=ro`` first, so a file that another process may still write is read through
    the WAL like any reader does; ``immutable=1`` when SQLite cannot open the WAL files.
    Raises the ``apsw`` error of the last attempt when neither works.
    """
    last: apsw.Error | None = None
    for immutable in (False, True):
        uri = read_only_uri(path, immutable=immutable)
        try:
            con = apsw.Connection(uri, flags=_RO_FLAGS)
        except apsw.Error as exc:
            last = exc
            continue
        try:
            # The first read opens the WAL files, and fails here if they cannot exist.
            con.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except (apsw.CantOpenError, apsw.ReadOnlyError) as exc:
            con.close()
            last = exc
            continue
        except BaseException:
            con.close()
            raise
        return con, uri
    assert last is not None
    raise last
