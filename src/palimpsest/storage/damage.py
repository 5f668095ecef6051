"""Damaged rows: finding the ones that no longer read, and repairing what can be rebuilt.

Flipped bytes inside a page that SQLite's structure checks accept still break a read:
text that is no longer UTF-8 (Python cannot decode it), JSON columns that no longer
parse. SQLite's ``PRAGMA integrity_check`` does not look at either, so
:func:`unreadable_rows` reads every text column as raw bytes and decodes it the way the
store does, reporting each row that fails by its id. Damaged pages (the b-tree itself)
are stepped over, and the id range they hide is reported.

:func:`repair` rebuilds what is derived from the rows: every index (``REINDEX``), the
full-text indexes (from ``messages``) and the ``message_count`` counters. Rows are
never changed or dropped: an unreadable row is listed with its id so the user can
restore it from a backup.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

import apsw

from ..errors import DatabaseCorruptError
from .codec import MESSAGE_COLUMNS, UnreadableValue, decode_row
from .db import Database, corrupt_error, read_only_error
from .fts_layout import FtsLayout, get_meta, install_fts
from .maintenance import verify

__all__ = ["UnreadableRow", "check", "name_damaged_rows", "repair", "unreadable_rows"]

_PAGE_ERRORS = (apsw.CorruptError, apsw.NotADBError)
#: How many unreadable rows a repair report names before it just counts.
SHOWN = 20


@dataclass(frozen=True)
class UnreadableRow:
    """One row (or, for a damaged page, a range of row ids) that cannot be read."""

    table: str
    row: str
    column: str
    problem: str
    message_id: int | None = None

    def describe(self) -> str:
        where = f"{self.column}: " if self.column else ""
        return f"{self.table} {self.row}: {where}{self.problem}"


def _text_columns(con: apsw.Connection, table: str) -> list[str]:
    return [str(r[1]) for r in con.execute(f"PRAGMA table_info({table})") if r[2] == "TEXT"]


_START = -(2**63)


def _rows_from(
    con: apsw.Connection, table: str, select: str, session_id: str | None = None
) -> Iterator[tuple[Any, ...] | UnreadableRow]:
    """Rows in rowid order, each ``(rowid, *select)``.

    The whole table is walked in order; a damaged page (or record) yields one
    :class:`UnreadableRow` for the ids it hides, and the walk resumes at the next row
    that reads. With ``session_id`` the ids come from the session index and each row is
    read on its own, so one bad row hides nothing else.
    """
    if session_id is not None:
        ids = [
            r[0]
            for r in con.execute(f"SELECT rowid FROM {table} WHERE session_id = ?", (session_id,))
        ]
        for rowid in sorted(ids):
            try:
                found = con.execute(
                    f"SELECT rowid, {select} FROM {table} WHERE rowid = ?", (rowid,)
                ).fetchall()
            except _PAGE_ERRORS as exc:
                yield UnreadableRow(table, f"id {rowid}", "", f"page damaged ({exc})")
                continue
            yield from found
        return
    after = _START
    while True:
        try:
            for row in con.execute(
                f"SELECT rowid, {select} FROM {table} WHERE rowid > ? ORDER BY rowid", (after,)
            ):
                after = int(row[0])
                yield row
            return
        except _PAGE_ERRORS as exc:
            resume = _next_readable(con, table, select, after)
            hidden = "ids" + ("" if after == _START else f" after {after}")
            hidden += f" before {resume}" if resume is not None else " to the end"
            yield UnreadableRow(table, hidden, "", f"page damaged ({exc})")
            if resume is None:
                return
            after = resume - 1  # resume > after + 1, so the walk always moves on


def _reads_after(con: apsw.Connection, table: str, select: str, rowid: int) -> bool:
    try:
        con.execute(
            f"SELECT rowid, {select} FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT 1",
            (rowid,),
        ).fetchall()
    except _PAGE_ERRORS:
        return False
    return True


def _next_readable(con: apsw.Connection, table: str, select: str, after: int) -> int | None:
    """The first rowid that reads past the damage following ``after`` (None: none does).

    Reading the row after ``after`` failed; probe ever further ahead until a read
    works, then narrow down to the first such point by bisection.
    """
    base = max(after, -1)
    step = 1
    while not _reads_after(con, table, select, base + step):
        step *= 2
        if base + step >= 2**62:
            return None
    low, high = base + step // 2, base + step  # the read fails after low, works after high
    while high - low > 1:
        middle = (low + high) // 2
        if _reads_after(con, table, select, middle):
            high = middle
        else:
            low = middle
    found = con.execute(
        f"SELECT rowid FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT 1", (high,)
    ).fetchall()
    return int(str(found[0][0])) if found else None


def _decoded(raw: Any, column: str) -> tuple[Any, str | None]:
    if not isinstance(raw, bytes):
        return raw, None
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 text (byte {exc.start})"


def unreadable_rows(con: apsw.Connection, *, session_id: str | None = None) -> list[UnreadableRow]:
    """Every ``messages`` (and, without ``session_id``, ``sessions``) row that does not
    read back, one entry per damaged column or damaged page."""
    found: list[UnreadableRow] = []
    text = _text_columns(con, "messages")
    others = [c for c in MESSAGE_COLUMNS if c not in text]
    select = ", ".join([*(f"CAST({c} AS BLOB)" for c in text), *others])
    for row in _rows_from(con, "messages", select, session_id):
        if isinstance(row, UnreadableRow):
            found.append(row)
            continue
        mid, values = int(row[0]), dict(zip([*text, *others], row[1:], strict=True))
        bad = False
        for column in text:
            values[column], problem = _decoded(values[column], column)
            if problem:
                found.append(UnreadableRow("message", str(mid), column, problem, mid))
                bad = True
        if not bad:
            try:
                decode_row(values)
            except UnreadableValue as exc:
                found.append(UnreadableRow("message", str(mid), exc.column, str(exc), mid))
    if session_id is None:
        columns = _text_columns(con, "sessions")
        select = ", ".join(f"CAST({c} AS BLOB)" for c in columns)
        for row in _rows_from(con, "sessions", select):
            if isinstance(row, UnreadableRow):
                found.append(row)
                continue
            values = dict(zip(columns, row[1:], strict=True))
            name, _ = _decoded(values.get("id"), "id")
            label = str(name) if name else f"rowid {row[0]}"
            for column in columns:
                _, problem = _decoded(values[column], column)
                if problem:
                    found.append(UnreadableRow("session", label, column, problem))
    return found


def _step(db: Database, done: list[str], what: str, sql: str) -> None:
    try:
        db.write(lambda con: con.execute(sql))
        done.append(f"done: {what}")
    except Exception as exc:  # each step reports its own failure and the next one runs
        done.append(f"failed: {what}: {exc}")


def repair(db: Database, *, has_fts5: bool, has_trigram: bool) -> list[str]:
    """Rebuild indexes, full-text indexes and counters; report unreadable rows.

    Returns one line per step saying what was done (or why it could not be). Raises
    :class:`~palimpsest.errors.DatabaseReadOnlyError` on a read-only file.
    """
    if db.read_only:
        raise read_only_error(db.path, f"{db.read_only_reason}; repair has to write")
    done: list[str] = []
    _step(db, done, "REINDEX (rebuilt every table index)", "REINDEX")
    if has_fts5:

        def rebuild(con: apsw.Connection) -> int:
            layout: FtsLayout = (
                "external" if get_meta(con, "fts_layout") == "external" else "inline"
            )
            install_fts(con, layout, with_trigram=has_trigram)
            return int(str(con.execute("SELECT count(*) FROM messages").fetchall()[0][0]))

        try:
            count = db.write(rebuild)
            done.append(f"done: rebuilt the full-text indexes from {count} messages")
        except Exception as exc:
            done.append(f"failed: rebuilding the full-text indexes: {exc}")
    _step(
        db,
        done,
        "recounted message_count where it differed from the stored rows",
        "UPDATE sessions SET message_count = (SELECT count(*) FROM messages AS m"
        " WHERE m.session_id = sessions.id) WHERE COALESCE(message_count, 0) !="
        " (SELECT count(*) FROM messages AS m WHERE m.session_id = sessions.id)",
    )
    with db.fresh_connection() as con:
        try:
            bad = unreadable_rows(con)
        except _PAGE_ERRORS as exc:
            done.append(f"failed: scanning the rows: {exc}")
            return done
    if bad:
        shown = "; ".join(row.describe() for row in bad[:SHOWN])
        more = f"; and {len(bad) - SHOWN} more" if len(bad) > SHOWN else ""
        done.append(
            f"kept: {len(bad)} unreadable row(s), untouched (restore them from a backup): "
            f"{shown}{more}"
        )
    return done


def check(db: Database, *, has_fts5: bool, has_trigram: bool) -> list[str]:
    """:func:`.maintenance.verify` plus :func:`unreadable_rows`, on a fresh connection.

    Damage is reported, never raised: when a check stops at a damaged page, that is a
    problem line and the remaining checks still run.
    """
    with db.fresh_connection() as con:
        try:
            problems = verify(con, has_fts5=has_fts5, has_trigram=has_trigram)
        except _PAGE_ERRORS as exc:
            problems = [f"the checks stopped at a damaged page: {exc}"]
            with suppress(*_PAGE_ERRORS):
                problems += [
                    f"integrity_check: {r[0]}"
                    for r in con.execute("PRAGMA integrity_check")
                    if r[0] != "ok"
                ]
        try:
            problems += [row.describe() for row in unreadable_rows(con)]
        except _PAGE_ERRORS as exc:
            problems.append(f"the rows could not be scanned: {exc}")
    return problems


def name_damaged_rows(
    db: Database, exc: DatabaseCorruptError, session_id: str
) -> DatabaseCorruptError:
    """``exc`` again, naming the session's unreadable message ids when they can be found."""
    try:
        with db.fresh_connection() as con:
            bad = unreadable_rows(con, session_id=session_id)
    except (DatabaseCorruptError, *_PAGE_ERRORS):
        return exc
    if not bad:
        return exc
    ids = tuple(sorted({r.message_id for r in bad if r.message_id is not None}))
    shown = "; ".join(r.describe() for r in bad[:5]) + (" ..." if len(bad) > 5 else "")
    return corrupt_error(db.path, f"session {session_id}: {shown}", message_ids=ids)
