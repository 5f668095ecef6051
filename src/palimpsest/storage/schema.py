"""Opening a SQLite store: migrate it to the current schema and set up its FTS layout.

The migrations live in :mod:`.migrations`, the full-text layer in :mod:`.fts_layout`;
this module decides, on a read snapshot first, whether either has work to do.
"""

from __future__ import annotations

from functools import partial

import apsw

from ..errors import StorageError
from .db import Database, read_only_error
from .fts_layout import (
    DEFAULT_FTS_LAYOUT,
    TRIGRAM_TABLE,
    WORD_TABLE,
    FtsLayout,
    file_layout,
    fts_support,
    install_fts,
    table_exists,
)
from .migrations import MIGRATIONS, applied_migrations, apply_migration, schema_version

__all__ = ["open_schema"]


# -- opening a store -------------------------------------------------------------------


def open_schema(db: Database, wanted: FtsLayout | None = None) -> tuple[bool, bool]:
    """Migrate ``db`` to the current schema and set up its FTS layout.

    Returns ``(has_fts5, has_trigram)``. ``wanted`` switches the FTS layout; ``None`` keeps
    the file's. A database written by a newer palimpsest is refused untouched.

    Everything is first checked on a read snapshot, which never waits for another
    process's writer; a write transaction is opened only when a migration or an index
    change is due (and then re-checked inside it). So opening a current file beside a
    busy writer costs no lock at all. A read-only file opens when nothing is due; one
    that needs a migration raises :class:`DatabaseReadOnlyError`, and a missing or
    differently laid out FTS index is left as it is (search falls back to ``LIKE``
    without it).
    """
    has_fts5, has_trigram = fts_support(db.writer)  # temp schema only: takes no lock

    def check(con: apsw.Connection) -> list[str]:
        done = applied_migrations(con)
        version = schema_version(con)
        if any(name not in MIGRATIONS for name in done) or version > len(MIGRATIONS):
            raise StorageError(
                f"{db.path}: the database was written by a newer palimpsest "
                f"(schema version {version}); upgrade palimpsest to open it",
                path=db.path,
            )
        return done

    def fts_due(con: apsw.Connection) -> bool:
        if not has_fts5 or not table_exists(con, "state_meta"):
            return has_fts5
        current = file_layout(con)
        layout = wanted or current or DEFAULT_FTS_LAYOUT
        missing = not table_exists(con, WORD_TABLE) or (
            has_trigram and not table_exists(con, TRIGRAM_TABLE)
        )
        return missing or current != layout

    with db.reader() as con:
        due = [name for name in MIGRATIONS if name not in check(con)]
        index_due = fts_due(con)

    if db.read_only:
        if due:
            raise read_only_error(
                db.path,
                f"{db.read_only_reason}; it needs {len(due)} migration(s) to schema version "
                f"{len(MIGRATIONS)} before this palimpsest can read it",
            )
        with db.reader() as con:
            return (
                has_fts5 and table_exists(con, WORD_TABLE),
                has_trigram and table_exists(con, TRIGRAM_TABLE),
            )

    if due:
        done = db.write(check)
        for name in MIGRATIONS:
            if name not in done:
                db.write(partial(apply_migration, name=name))

    def ensure_fts(con: apsw.Connection) -> None:
        if fts_due(con):
            layout = wanted or file_layout(con) or DEFAULT_FTS_LAYOUT
            install_fts(con, layout, with_trigram=has_trigram)

    if has_fts5 and (due or index_due):
        db.write(ensure_fts)
    return has_fts5, has_trigram
