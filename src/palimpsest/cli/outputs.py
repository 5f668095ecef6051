"""``palimpsest outputs``: the saved tool outputs, from the shell.

A thin layer over :class:`~palimpsest.outputs.store.OutputStore`: list what is saved, show
a window of one output or grep it, print the store's directory, and collect what the
retention policy allows (``gc``), never an output that an open session of the session
store still points at. Names are digests, unique prefixes of 8+ hex characters, file names
or paths inside the store. An unknown name prints one line and exits 2.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from ..config import Settings, load_settings
from ..outputs.retention import RetentionPolicy, live_digests
from ..outputs.store import OutputStore, StoredOutput
from ..storage.factory import is_postgres_url, open_store, store_url
from .common import err_console, fail, handle_errors
from .sessions import db_path
from .terminal_text import for_terminal, json_for_terminal

__all__ = ["outputs_app"]

outputs_app = typer.Typer(
    help="List, show, grep and collect saved tool outputs.", no_args_is_help=True
)

console = Console(highlight=False, soft_wrap=True)

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def _store(settings: Settings) -> OutputStore:
    return OutputStore.from_settings(settings)


def _json(data: Any) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    sys.stdout.write(json_for_terminal(text) + "\n")


def _body(text: str) -> str:
    """A saved output's text as printed: escaped on a terminal, the bytes as they are in a
    pipe (``outputs show ... > file`` gives back the output)."""
    return for_terminal(text) if sys.stdout.isatty() else text


def _row(found: StoredOutput) -> dict[str, Any]:
    data = asdict(found)
    data["path"] = str(found.path)
    data.pop("new")
    return data


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M")


@outputs_app.command("list")
def list_command(
    session: Annotated[
        str | None, typer.Option("--session", help="Only outputs this session refers to.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Saved outputs, newest first, with their kind, size and last use."""
    with handle_errors(), _store(load_settings()) as store:
        found = store.list(session)
        total = store.total_bytes()
    if as_json:
        _json([_row(f) for f in found])
        return
    if not found:
        err_console.print("No saved outputs.")
        return
    table = Table()
    for name in ("digest", "kind", "size", "tool", "saved", "last used"):
        table.add_column(name, no_wrap=True, justify="right" if name == "size" else "left")
    for item in found:
        table.add_row(
            item.digest[:12],
            for_terminal(item.kind, keep_lines=False),
            _size(item.size_bytes),
            for_terminal(item.tool_name, keep_lines=False),
            _when(item.created),
            _when(item.last_used),
        )
    console.print(table)
    err_console.print(f"{len(found)} outputs, {_size(total)} in the store")


@outputs_app.command("show")
def show_command(
    name: Annotated[str, typer.Argument(help="Digest, unique prefix, file name or path.")],
    offset: Annotated[int, typer.Option(min=0, help="Byte offset to start at.")] = 0,
    limit: Annotated[int, typer.Option(min=1, help="Bytes to show.")] = 20_000,
    grep: Annotated[
        str | None, typer.Option("--grep", help="Show the lines containing this text.")
    ] = None,
    regex: Annotated[bool, typer.Option(help="Read --grep as a regular expression.")] = False,
    max_matches: Annotated[int, typer.Option(min=1, help="Lines --grep shows at most.")] = 50,
    as_json: JsonOption = False,
) -> None:
    """A window of one saved output (by byte offset), or the lines matching --grep."""
    with handle_errors(), _store(load_settings()) as store:
        if grep is not None:
            matches = store.grep(name, grep, max_matches=max_matches, regex=regex)
            if as_json:
                _json([asdict(m) for m in matches])
            else:
                for m in matches:
                    typer.echo(f"{m.line_number}:{m.byte_offset}: {_body(m.line)}")
                if not matches:
                    err_console.print(f"no line matches {for_terminal(grep)!r}")
            return
        window = store.read_window(name, offset, limit)
    if as_json:
        _json(asdict(window) | {"has_more": window.has_more})
        return
    sys.stdout.write(_body(window.text))
    if window.text and not window.text.endswith("\n"):
        sys.stdout.write("\n")
    note = f"bytes {window.start:,}-{window.end:,} of {window.total_bytes:,} ({window.kind})"
    if window.has_more:
        note += f"; next: --offset {window.end}"
    err_console.print(note)


@outputs_app.command("path")
def path_command() -> None:
    """Print the store's directory (it may not exist yet)."""
    with handle_errors():
        typer.echo(str(_store(load_settings()).root))


def _live(settings: Settings, store: OutputStore) -> tuple[set[str], str | None]:
    """Digests open sessions point at, and a note when there is no session database."""
    url = store_url(settings=settings)
    if url is not None and is_postgres_url(url):
        with open_store(url, settings=settings) as shared:
            return live_digests(shared, store), None
    database = Path(url).expanduser() if url else db_path(settings)
    if not database.exists():
        return set(), f"no session database at {database}: no output is held by a session"
    with open_store(database, settings=settings) as sessions:
        return live_digests(sessions, store), None


@outputs_app.command("gc")
def gc_command(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Report what would be removed; remove nothing.")
    ] = False,
    max_size: Annotated[
        float | None, typer.Option("--max-size", help="Total size budget in MB.")
    ] = None,
    max_age: Annotated[
        float | None, typer.Option("--max-age", help="Remove outputs unused for DAYS.")
    ] = None,
    rebuild_index: Annotated[
        bool,
        typer.Option(
            "--rebuild-index",
            help="First rebuild index.db from the saved files (a damaged index loses its "
            "session references).",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Remove old and least recently used outputs, keeping those open sessions point at."""
    for option, value in (("--max-size", max_size), ("--max-age", max_age)):
        if value is not None and value <= 0:
            fail(f"{option} must be a positive number, not {value:g}")
    with handle_errors():
        settings = load_settings()
        policy = RetentionPolicy.from_settings(
            settings, max_total_mb=max_size, max_age_days=max_age
        )
        with _store(settings) as store:
            rebuilt = store.rebuild_index() if rebuild_index and store.root.is_dir() else None
            live, note = _live(settings, store)
            report = store.gc(policy, live=live, dry_run=dry_run)
    if as_json:
        _json(report.as_dict() | {"live_note": note, "rebuilt": rebuilt, "root": str(store.root)})
        return
    if rebuilt is not None:
        err_console.print(f"rebuilt the index from {rebuilt} saved files")
    if note:
        err_console.print(note)
    verb = "would remove" if dry_run else "removed"
    typer.echo(f"{verb} {report.removed_count} outputs ({_size(report.removed_bytes)})")
    typer.echo(
        f"kept {report.kept_live_count} outputs open sessions point at "
        f"({_size(report.kept_live_bytes)})"
    )
    typer.echo(
        f"{report.remaining_count} outputs remain ({_size(report.remaining_bytes)} of a "
        f"{_size(policy.max_total_bytes)} budget)"
    )
    if report.temp_files_removed or report.missing_rows_removed:
        typer.echo(
            f"{'would clear' if dry_run else 'cleared'} {report.temp_files_removed} stale temp files and "
            f"{report.missing_rows_removed} index rows of missing files"
        )
    if report.over_budget_live:
        err_console.print(
            "warning: the outputs open sessions point at exceed the budget on their own; "
            "they were kept. End finished sessions or raise outputs.max_total_mb."
        )
