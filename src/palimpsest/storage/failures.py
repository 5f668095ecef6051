"""How SQLite's failures become the store's errors: one message per kind, naming the fix.

Callers catch a class from :mod:`palimpsest.errors`, never an ``apsw`` one, and a user
reads one line that says what happened to which file and what to do about it.
"""

from __future__ import annotations

import json
from pathlib import Path

import apsw

from ..errors import DatabaseCorruptError, DatabaseReadOnlyError
from .codec import UnreadableValue

__all__ = [
    "CORRUPT_ERRORS",
    "SQLITE_HEADER",
    "UNREADABLE_ROWS",
    "corrupt_error",
    "is_not_sqlite",
    "read_only_error",
]

SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""

#: SQLite's own word that a page (or the whole file) is not what it should be.
CORRUPT_ERRORS = (apsw.CorruptError, apsw.NotADBError)
#: Bytes that come back from a page but are not the UTF-8 text or JSON that was stored:
#: flipped bits inside a row, which SQLite's own checks do not see.
UNREADABLE_ROWS = (UnicodeDecodeError, json.JSONDecodeError, UnreadableValue)


def is_not_sqlite(path: Path) -> bool:
    """Does ``path`` hold bytes that are not an SQLite database at all? (An empty or missing
    file is not: SQLite makes a new database there.)"""
    try:
        with path.open("rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
    except OSError:
        return False
    return bool(head) and head != SQLITE_HEADER


def corrupt_error(
    path: Path, exc: BaseException | str, *, message_ids: tuple[int, ...] = ()
) -> DatabaseCorruptError:
    """The one message a damaged store gets: what failed and what the user can do."""
    if isinstance(exc, apsw.NotADBError) and is_not_sqlite(path):
        return DatabaseCorruptError(
            f"{path} is not an SQLite database (it does not start with SQLite's header), so "
            "there is nothing to repair or recover in it. Nothing was changed. Move it aside "
            f"(mv {path} {path}.not-sqlite) and run again: a new, empty store is created.",
            path=path,
        )
    detail = str(exc)
    if isinstance(exc, UNREADABLE_ROWS):
        detail = f"a stored row is not the text it should be: {exc}"
    return DatabaseCorruptError(
        f"{path}: the session database is damaged ({detail}). Nothing was deleted. Run "
        "'palimpsest sessions verify --repair': it rebuilds the search indexes and lists "
        "the rows it cannot read. If rows are damaged, restore the file from a backup "
        f"(or recover what SQLite can still read with 'sqlite3 {path.name} .recover').",
        path=path,
        message_ids=message_ids,
    )


def read_only_error(path: Path, reason: str | None) -> DatabaseReadOnlyError:
    """The one message a write to a read-only store gets."""
    why = reason or "SQLite refused to write it"
    return DatabaseReadOnlyError(
        f"{path}: the session database is read-only ({why}). Reading works; to write, "
        "make it writable or point PALIMPSEST_HOME (or store.path) at a writable copy.",
        path=path,
        reason=reason,
    )
