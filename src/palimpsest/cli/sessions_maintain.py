"""``palimpsest sessions maintain``: the index upkeep that appends never do themselves.

Every write transaction leaves a new FTS5 segment and grows the WAL; queries slow down as
segments pile up, and merging them or checkpointing inside an append would stall it. This
command runs that work on demand (from cron, a service timer, or by hand) through
:func:`palimpsest.storage.maintenance.maintain`: bounded merge steps, each a short
transaction that concurrent writers can slip between, then a WAL truncation. Registered
onto :data:`palimpsest.cli.sessions.sessions_app` by the one import at the end of
:mod:`.sessions`.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from ..storage.maintenance import MERGE_STEP_PAGES, maintain
from ..storage.sessions import SessionStore
from .common import handle_errors
from .sessions import DbOption, JsonOption, open_store, sessions_app

__all__ = ["maintain_command"]


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
    """Merge full-text index segments in short steps and truncate the WAL."""
    with handle_errors(), open_store(db) as store:
        if not isinstance(store, SessionStore):
            # PostgreSQL keeps its own indexes (autovacuum); there is no WAL file to trim.
            typer.echo(f"nothing to do: {store.backend} maintains its own indexes")
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
    typer.echo(f"merge steps: {steps} ({state}); WAL {wal}; {report.seconds:.1f} s")
