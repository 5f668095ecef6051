"""Keeping a store file sound and quick: checking it, and index upkeep off the write path.

:func:`verify` never changes anything. What it checks, and why each can go wrong:

* ``PRAGMA integrity_check``: page-level damage (a disk fault, a copy taken mid-write);
* ``PRAGMA foreign_key_check``: rows pointing at sessions that no longer exist;
* the FTS5 ``integrity-check`` command on both indexes: a damaged or stale shadow table
  (for the external layout this also compares the index with ``messages``);
* one indexed document per message in the word index, and one per CJK message
  (:data:`~.fts_layout.IS_CJK_ROW`) in the trigram index, and each session's
  ``message_count`` equal to its stored rows: a write path that bypassed the triggers or
  the counters.

The repair for index problems is :meth:`SessionStore.rebuild_fts`; the rows themselves
are never touched.

:func:`maintain` is the upkeep an append should never pay for: merging FTS5 index segments
(every write transaction adds one; queries read them all) and truncating the WAL. It runs
from ``palimpsest sessions maintain`` or any background job, never from an append (the
store's own background thread, :mod:`.upkeep`, takes the same :func:`merge_step` steps). The
merging goes in bounded steps, each its own short write transaction (FTS5's ``'merge'``
command with a page budget), so an append from another process waits at most one step,
never a whole ``optimize``; ``optimize=True`` takes the same steps with FTS5's negative
budget, which merges across levels until each index is a single segment.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

import apsw

from .db import Database
from .fts_layout import IS_CJK_ROW, TRIGRAM_TABLE, WORD_TABLE
from .secrets_keeper import keep_all

__all__ = ["MERGE_STEP_PAGES", "MaintenanceReport", "maintain", "merge_step", "verify"]

#: Index pages (about) one merge step writes: 512 KiB at the default 4 KiB page size. One
#: step is one write transaction, so a concurrent append waits at most about one step;
#: FTS5's own automerge works in units of 64 pages per index level.
MERGE_STEP_PAGES = 128


def _scalar(con: apsw.Connection, sql: str) -> object:
    found = con.execute(sql).fetchall()
    return found[0][0] if found else None


def _fts_problems(con: apsw.Connection, table: str, *, cjk_only: bool = False) -> list[str]:
    exists = con.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchall()
    if not exists:
        return [f"{table}: the full-text table is missing (run verify --repair)"]
    problems = []
    try:
        # The command is spelled as an INSERT but changes nothing; rank = 1 also compares
        # an external-content index with the rows it indexes.
        con.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
    except (apsw.ReadOnlyError, apsw.BusyError, apsw.LockedError):
        # The command needs the write lock: a read-only file, or another process writing.
        # That says nothing about the index, and PRAGMA integrity_check above has already
        # run FTS5's own check on it (SQLite >= 3.44), so nothing is reported.
        pass
    except apsw.Error as exc:
        problems.append(f"{table}: FTS5 integrity-check failed: {exc}")
    indexed = _scalar(con, f"SELECT count(*) FROM {table}_docsize")
    if cjk_only:
        stored = _scalar(con, f"SELECT count(*) FROM messages AS m WHERE {IS_CJK_ROW}")
        kind = "messages with CJK text"
    else:
        stored = _scalar(con, "SELECT count(*) FROM messages")
        kind = "messages"
    if indexed != stored:
        problems.append(f"{table}: {indexed} indexed documents for {stored} {kind}")
    return problems


def verify(con: apsw.Connection, *, has_fts5: bool = True, has_trigram: bool = True) -> list[str]:
    """Every problem found, one line each; an empty list means the file is sound."""
    problems = [
        f"integrity_check: {row[0]}"
        for row in con.execute("PRAGMA integrity_check")
        if row[0] != "ok"
    ]
    for table, rowid, parent, _ in con.execute("PRAGMA foreign_key_check"):
        problems.append(f"{table} row {rowid} points at a missing {parent} row")
    if has_fts5:
        problems += _fts_problems(con, WORD_TABLE)
        if has_trigram:
            problems += _fts_problems(con, TRIGRAM_TABLE, cjk_only=True)
    for sid, stored, counted in con.execute(
        "SELECT s.id, COALESCE(s.message_count, 0), count(m.id) FROM sessions AS s"
        " LEFT JOIN messages AS m ON m.session_id = s.id GROUP BY s.id"
        " HAVING COALESCE(s.message_count, 0) != count(m.id)"
    ):
        problems.append(f"session {sid}: message_count is {stored} but {counted} rows are stored")
    return problems


# -- upkeep -----------------------------------------------------------------------------


@dataclass(frozen=True)
class MaintenanceReport:
    """What :func:`maintain` did.

    ``merge_steps`` counts, per FTS table, the steps that merged something; ``finished``
    is False when ``budget_seconds`` ran out with merging left to do (run it again);
    ``wal_bytes_before``/``after`` are the ``-wal`` file's size around the checkpoint
    (``None`` when there is no WAL file, as in rollback-journal mode).
    """

    merge_steps: dict[str, int] = field(default_factory=dict)
    optimized: bool = False
    finished: bool = True
    #: Every session's revealed secrets are kept up to the newest message
    #: (:func:`.secrets_keeper.keep_all`); merging comes first.
    secrets_kept: bool = False
    checkpointed: bool = False
    wal_bytes_before: int | None = None
    wal_bytes_after: int | None = None
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def merge_step(con: apsw.Connection, *, table: str, pages: int) -> bool:
    """One FTS5 ``'merge'`` of about ``abs(pages)`` pages; True when it merged anything.

    A positive budget merges only levels holding ``usermerge`` (4) or more segments, or
    continues a merge already started; a negative one first puts every segment on one
    level and merges any two, so repeating it ends in a single segment (an incremental
    ``optimize``). FTS5 documents the test: the merge did work when ``total_changes``
    grew by 2 or more.
    """
    before = con.total_changes()
    con.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('merge', ?)", (pages,))
    return con.total_changes() - before >= 2


def _wal_bytes(db: Database) -> int | None:
    try:
        return os.stat(f"{db.path}-wal").st_size
    except FileNotFoundError:
        return None


def maintain(
    db: Database,
    *,
    optimize: bool = False,
    step_pages: int = MERGE_STEP_PAGES,
    budget_seconds: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> MaintenanceReport:
    """Merge the full-text indexes in bounded steps, keep the session secrets, then
    truncate the WAL.

    Each step is its own write transaction through :meth:`Database.write` (so it retries
    on a busy lock like any write); merging stops when a step finds nothing to merge or
    when ``budget_seconds`` has passed. The checkpoint runs either way; a reader holding
    an old snapshot can make it fail, which is reported, not raised (the next run
    catches up). ``PRAGMA optimize`` refreshes the planner's statistics before it.
    """
    if step_pages < 1:
        raise ValueError("step_pages must be at least 1")
    started = clock()
    tables = [
        name
        for name in (WORD_TABLE, TRIGRAM_TABLE)
        if db.scalar("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
    ]
    steps = dict.fromkeys(tables, 0)
    finished = True
    for table in tables:
        step = partial(merge_step, table=table, pages=-step_pages if optimize else step_pages)
        while True:
            if budget_seconds is not None and clock() - started >= budget_seconds:
                finished = False
                break
            if not db.write(step):
                break
            steps[table] += 1
        if not finished:
            break
    secrets_kept = False
    if finished:
        left = None if budget_seconds is None else max(0.0, budget_seconds - (clock() - started))
        secrets_kept = keep_all(db, left)
        finished = secrets_kept
    db.write(lambda con: con.execute("PRAGMA optimize").fetchall())
    wal_before = _wal_bytes(db)
    checkpointed = db.checkpoint("TRUNCATE")
    return MaintenanceReport(
        merge_steps=steps,
        optimized=optimize and finished,
        finished=finished,
        secrets_kept=secrets_kept,
        checkpointed=checkpointed,
        wal_bytes_before=wal_before,
        wal_bytes_after=_wal_bytes(db),
        seconds=clock() - started,
    )
