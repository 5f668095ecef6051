"""``sessions maintain`` and ``sessions verify``: keeping a store healthy, and mending it.

``maintain`` is the index upkeep that appends never do themselves.

Every write transaction leaves a new FTS5 segment and grows the WAL; queries slow down as
segments pile up, and merging them or checkpointing inside an append would stall it. This
command runs that work on demand (from cron, a service timer, or by hand) through
:func:`palimpsest.storage.maintenance.maintain`: bounded merge steps, each a short
transaction that concurrent writers can slip between, then a WAL truncation. Registered
onto :data:`palimpsest.cli.sessions.sessions_app` by the one import at the end of
:mod:`.sessions`.

``verify`` checks the database, its indexes and rows; with ``--repair`` it rebuilds what
can be rebuilt from the rows, and for a file SQLite cannot open at all it copies what is
still readable into a new file beside the damaged one (never over it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from ..errors import DatabaseCorruptError
from ..storage.failures import is_not_sqlite
from ..storage.maintenance import MERGE_STEP_PAGES, maintain
from ..storage.recovery import recover_rows
from ..storage.sessions import SessionStore
from .common import RUN_ERROR_EXIT, err_console, fail, handle_errors
from .sessions import DbOption, JsonOption, db_path, open_store, sessions_app

__all__ = ["maintain_command", "verify_command"]


@sessions_app.command("maintain")
def maintain_command(
    optimize: Annotated[
        bool,
        typer.Option("--optimize", help="Merge each full-text index down to one segment (slower)."),
    ] = False,
    budget: Annotated[
        float | None,
        typer.Option(
            "--budget", min=0.0, help="Stop merging after this many seconds (default: finish)."
        ),
    ] = None,
    step_pages: Annotated[
        int, typer.Option("--step-pages", min=1, help="Index pages merged per transaction.")
    ] = MERGE_STEP_PAGES,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Merge full-text index segments in short steps, keep session secrets, truncate the WAL."""
    with handle_errors(), open_store(db) as store:
        if not isinstance(store, SessionStore):
            # PostgreSQL keeps its own indexes (autovacuum); there is no WAL file to trim.
            kept = store.keep_secrets(budget)
            secrets = "kept" if kept else "budget reached, run again to continue"
            typer.echo(f"{store.backend} maintains its own indexes; session secrets {secrets}")
            return
        report = maintain(
            store.database, optimize=optimize, step_pages=step_pages, budget_seconds=budget
        )
    if as_json:
        sys.stdout.write(json.dumps(report.as_dict(), indent=2) + "\n")
        return
    steps = ", ".join(f"{table} {n}" for table, n in report.merge_steps.items()) or "none"
    state = "done" if report.finished else "budget reached, run again to continue"
    wal = "checkpointed" if report.checkpointed else "checkpoint deferred (a reader is busy)"
    typer.echo(
        f"merge steps: {steps} ({state}); session secrets "
        f"{'kept' if report.secrets_kept else 'not all kept'}; WAL {wal}; {report.seconds:.1f} s"
    )


@sessions_app.command("verify")
def verify_command(
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="Rebuild indexes, full-text indexes and counters from the rows; "
            "list rows that cannot be read (they are kept).",
        ),
    ] = False,
    db: DbOption = None,
) -> None:
    """Check the database, its indexes and its rows; exit 1 when a problem remains."""
    with handle_errors():
        path = db_path(db=db)
        try:
            store = open_store(db)
        except DatabaseCorruptError as exc:
            _cannot_open(path, exc, repair)
    with handle_errors(), store:
        problems = store.verify()
        if problems and repair:
            for line in store.repair():
                err_console.print(f"repair: {line}", highlight=False)
            problems = store.verify()
        elif store.read_only:
            err_console.print(f"note: opened read-only ({store.read_only_reason})")
        counts = (store.session_count(), store.message_count())
    if problems:
        for problem in problems:
            err_console.print(f"problem: {problem}", highlight=False)
        if not repair:
            err_console.print("run 'palimpsest sessions verify --repair' to rebuild what can be")
        else:
            err_console.print(
                "what is left cannot be rebuilt from the rows: restore those rows (or the "
                f"file) from a backup, or move {path} aside to start a new store",
                highlight=False,
            )
        raise typer.Exit(1)
    typer.echo(f"ok: {counts[0]} sessions, {counts[1]} messages, {store.location}")


def _cannot_open(path: Path, exc: DatabaseCorruptError, repair: bool) -> NoReturn:
    """A store SQLite cannot open: not SQLite at all (say so), or damaged in its structure
    (with ``--repair``, copy what SQLite can still read into a new file beside it)."""
    if is_not_sqlite(path) or not repair:
        hint = "" if is_not_sqlite(path) else " (--repair tries to recover its rows)"
        fail(f"{exc}{hint}", RUN_ERROR_EXIT)
    err_console.print(
        f"problem: SQLite cannot open {path}, so its indexes cannot be rebuilt in place; "
        "trying to recover its rows into a new file (the damaged one is left as it is)",
        highlight=False,
    )
    found = recover_rows(path)
    if found.target is None:
        fail(
            f"nothing could be recovered: {found.reason}. Restore {path.name} from a backup, "
            f"or move it aside (mv {path} {path}.damaged) and a new, empty store is created",
            RUN_ERROR_EXIT,
        )
    lost = (
        f", and {found.lost:,} rows whose table could not be told (in table lost_and_found)"
        if found.lost
        else ""
    )
    fail(
        f"recovered {found.sessions:,} sessions and {found.messages:,} messages{lost} into "
        f"{found.target}. To use it: mv {path} {path}.damaged && mv {found.target} {path}, "
        "then run 'palimpsest sessions verify --repair' to rebuild its indexes",
        RUN_ERROR_EXIT,
    )
