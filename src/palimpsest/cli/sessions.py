"""``palimpsest sessions``: look into the session store from the shell.

A thin layer over :class:`~palimpsest.storage.sessions.SessionStore`: list conversations,
show one, follow a compression chain to its tip, import and export transcripts, print the
database path, and verify (or repair) the file. Session ids may be given as a unique
prefix; a prefix that starts several ids lists them. An unknown or ambiguous id prints
one line and exits 2. Importing a transcript stored before (same content) names the
session that holds it and exits 3 (:data:`ALREADY_IMPORTED_EXIT`) unless ``--again``.
``sessions search``, ``maintain``, ``delete`` and ``compress`` are registered onto
:data:`sessions_app` by their own modules.
"""

from __future__ import annotations

import json
import sys
from contextlib import AbstractContextManager, nullcontext, suppress
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ..errors import DuplicateTranscriptError
from ..files import output_target, replace_file
from ..messages import dump_transcript, render_content
from ..safety.redact import redact_value
from ..storage.contract import Store
from ..storage.factory import is_postgres_url, redacted_url, store_url
from ..storage.factory import open_store as open_configured_store
from ..storage.session_admin import handle_of, resolve_prefix
from ..storage.sessions import default_db_path
from ..storage.transfer import import_stream
from ..usage import format_token_pair
from .common import (
    TranscriptFormat,
    err_console,
    fail,
    handle_errors,
    is_stdout,
)
from .sessions_import import import_history_command
from .terminal_text import for_terminal, json_for_terminal

if TYPE_CHECKING:
    from ..config import Settings

__all__ = ["ALREADY_IMPORTED_EXIT", "open_store", "resolve_id", "sessions_app"]

ALREADY_IMPORTED_EXIT = 3
"""``sessions import``: the transcript is already stored; nothing new was written."""

sessions_app = typer.Typer(
    help="List, show, import, export and verify stored sessions.", no_args_is_help=True
)

console = Console(highlight=False, soft_wrap=True)

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
# `list` shows previews and titles to whoever looks, so it always redacts; `show` and
# `export` print the user's own data verbatim unless --redact, applied before any cut.
RedactOption = Annotated[
    bool,
    typer.Option(
        "--redact",
        help="Replace API keys, tokens and passwords with [REDACTED] (default: verbatim).",
    ),
]
IdArgument = Annotated[
    str,
    typer.Argument(
        metavar="ID",
        help="Session id, a unique prefix of one, or its short handle (the last part, "
        "shown in bold by 'sessions list').",
    ),
]


DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db",
        help="Session database to use (default: store.path from the config, else "
        "state.db in $PALIMPSEST_HOME).",
    ),
]


def db_path(settings: Settings | None = None, *, db: Path | None = None) -> Path:
    """The store file the CLI uses: ``--db``, else ``store.path`` from config, else
    ``<home>/state.db``."""
    if db is not None:
        return db.expanduser()
    from ..config import load_settings  # pydantic and YAML: not for `--help`

    configured = (settings or load_settings()).store.path
    return Path(configured).expanduser() if configured else default_db_path()


def open_store(db: Path | None = None) -> Store:
    """The store ``--db`` names, else the configured one (``PALIMPSEST_DATABASE_URL``,
    ``store.url``: PostgreSQL; else the SQLite file of :func:`db_path`), see
    :func:`palimpsest.storage.factory.open_store`."""
    from ..config import load_settings

    settings = load_settings()
    return open_configured_store(db.expanduser() if db is not None else None, settings=settings)


def resolve_id(store: Store, session_id: str) -> str:
    """The full id for ``session_id`` or a unique prefix of one.

    :class:`~palimpsest.errors.SessionNotFoundError` when nothing matches,
    :class:`~palimpsest.errors.AmbiguousSessionIdError` (with the candidates) when
    several ids start with it.
    """
    with store.connection_for_reads() as con:
        return resolve_prefix(con, session_id)


def _when(epoch: float | None) -> str:
    return "" if epoch is None else datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M")


def _short(epoch: float | None) -> str:
    return "" if epoch is None else datetime.fromtimestamp(epoch).strftime("%m-%d %H:%M")


def _cost(value: float | None) -> str:
    return "" if value is None else f"${value:.4f}"


def _json(data: Any) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    sys.stdout.write(json_for_terminal(text) + "\n")  # bidi and C1 as \uXXXX: same data


@sessions_app.command("list")
def list_command(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Rows to show.")] = 20,
    offset: Annotated[int, typer.Option(min=0, help="Rows to skip.")] = 0,
    source: Annotated[str | None, typer.Option(help="Only this platform.")] = None,
    all_: Annotated[
        bool, typer.Option("--all", help="Also list sub-agent and continuation sessions.")
    ] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """One row per conversation, newest first (compression chains shown as their tip)."""
    with handle_errors(), open_store(db) as store:
        found = store.list_sessions(limit, offset, source, include_children=all_)
        stored = store.session_count() if not found else len(found)
    # Titles, previews, prompts: a listing shows them to whoever looks, so nothing verbatim.
    found = [redact_value(row) for row in found]
    if as_json:
        _json(found)
        return
    if not found:
        err_console.print(_nothing_listed(stored, source, offset))
        return
    table = Table()
    table.add_column("id", no_wrap=True)
    table.add_column("conversation", ratio=1, min_width=12, overflow="fold")
    for name in ("msgs", "tokens", "cost", "active"):
        table.add_column(name, no_wrap=True, justify="right" if name != "active" else "left")
    for row in found:
        # Stored text is shown, never obeyed: control and bidi characters come out escaped.
        label = Text(for_terminal(row["title"] or "(untitled)", keep_lines=False), style="bold")
        if row["chain_length"] > 1:
            label.append(f" · {row['chain_length']} sessions", style="cyan")
        label.append(f" [{for_terminal(row['source'], keep_lines=False)}]", style="dim")
        if row["preview"]:
            label.append("\n" + for_terminal(row["preview"], keep_lines=False), style="dim")
        tokens, cost = _list_usage(row)
        shown_id = for_terminal(row["id"], keep_lines=False)
        handle = handle_of(row["id"])
        sid = Text(shown_id[: len(shown_id) - len(handle)], style="dim")
        sid.append(handle, style="bold")  # the short handle any command accepts
        table.add_row(
            sid,
            label,
            str(row["message_count"] or 0),
            tokens,
            cost,
            _short(row["last_active"]),
        )
    console.print(table)
    if any(not row["api_call_count"] or row.get("unreported_calls") for row in found):
        console.print(
            "[dim]–: no model calls recorded (an imported session); ≥: some calls reported no "
            "usage, unknown: none did ('sessions show ID' has the counts)[/]",
            highlight=False,
        )


def _list_usage(row: dict[str, Any]) -> tuple[str, str]:
    """Short token and cost cells for ``sessions list``: the figure, ``≥`` the figure when
    some calls reported no usage, ``unknown`` when none did, ``–`` when no model call was
    recorded at all (an imported session: unknown, never 0)."""
    calls = row["api_call_count"] or 0
    unreported = row.get("unreported_calls") or 0
    if not calls:
        return "–", "–"
    if unreported >= calls:
        return "unknown", "unknown"
    tokens = f"{row['total_tokens'] or 0:,}"
    cost = _cost(row["estimated_cost_usd"]) or "unknown"
    if unreported:
        return f"≥{tokens}", f"≥{cost}" if cost != "unknown" else cost
    return tokens, cost


def _nothing_listed(stored: int, source: str | None, offset: int) -> str:
    """Why an empty listing is empty: nothing stored, or the filters exclude it all."""
    if stored == 0:
        return "No sessions stored yet."
    filters = [f"--source {source}"] if source is not None else []
    if offset:
        filters.append(f"--offset {offset}")
    named = " and ".join(filters) or "the filters"
    return (
        f"No session matches {named} ({stored:,} session{'s' if stored != 1 else ''} stored; "
        "'palimpsest sessions list' without filters lists them)."
    )


@sessions_app.command("show")
def show_command(
    session_id: IdArgument,
    as_json: JsonOption = False,
    width: Annotated[int, typer.Option(help="Characters of each message to show.")] = 200,
    redact: RedactOption = False,
    db: DbOption = None,
) -> None:
    """A session's details and its messages (verbatim unless --redact)."""
    with handle_errors(), open_store(db) as store:
        sid = resolve_id(store, session_id)
        session = store.require_session(sid)
        messages = store.get_messages(sid)
        tip = store.get_compression_tip(sid)
    if redact:  # before --width cuts anything; together, so a value one message reveals
        # goes from the others and from the title too
        both = redact_value({"session": session, "messages": messages})
        session, messages = both["session"], both["messages"]
    if as_json:
        _json({"session": session, "compression_tip": tip, "messages": messages})
        return
    info = Table(show_header=False, box=None)
    for key in ("id", "title", "source", "model", "parent_session_id", "end_reason"):
        if session.get(key) is not None:
            info.add_row(key, for_terminal(session[key], keep_lines=False))
    info.add_row("started", _when(session["started_at"]))
    if session["ended_at"] is not None:
        info.add_row("ended", _when(session["ended_at"]))
    unreported, cost = session.get("unreported_calls") or 0, session["estimated_cost_usd"]
    tokens = format_token_pair(
        session["input_tokens"] or 0,
        session["output_tokens"] or 0,
        unreported,
        session["api_call_count"] or 0,
    )
    info.add_row("tokens", tokens)
    info.add_row("cost", ("≥ " if unreported and cost else "") + (_cost(cost) or "unknown"))
    if tip != sid:
        info.add_row("continued in", for_terminal(tip, keep_lines=False))
    console.print(info)
    table = Table("#", "role", "content")
    for index, message in enumerate(messages):
        text = " ".join(render_content(message.get("content")).split())
        calls = [c.get("function", {}).get("name", "?") for c in message.get("tool_calls") or []]
        if calls:
            text = f"[calls: {', '.join(calls)}] {text}"
        if message.get("_compressed_summary"):
            text = f"[context compacted] {text}"
        cut = text[:width] + ("..." if len(text) > width else "")
        role = for_terminal(message.get("role"), keep_lines=False)
        table.add_row(str(index), role, for_terminal(cut, keep_lines=False))
    console.print(table)


@sessions_app.command("tip")
def tip_command(
    session_id: IdArgument,
    db: DbOption = None,
) -> None:
    """The latest compression continuation of a session (the id to resume)."""
    with handle_errors(), open_store(db) as store:
        tip = store.get_compression_tip(resolve_id(store, session_id))
    typer.echo(for_terminal(tip, keep_lines=False))


@sessions_app.command("import")
def import_command(
    file: Annotated[
        str | None,
        typer.Argument(
            metavar="FILE",
            help="Transcript file to store, or - for stdin (with --from: the folder to read).",
        ),
    ] = None,
    format: Annotated[
        TranscriptFormat, typer.Option("--format", help="Transcript format.")
    ] = TranscriptFormat.auto,
    source: Annotated[str, typer.Option(help="Platform recorded for the session.")] = "import",
    title: Annotated[
        str | None, typer.Option(help="Title (default: the file name; none for stdin).")
    ] = None,
    again: Annotated[
        bool,
        typer.Option("--again", help="Store another copy of a transcript imported before."),
    ] = False,
    lenient: Annotated[
        bool,
        typer.Option(
            "--lenient",
            help="Repair what compress repairs (content objects, missing call ids, orphan "
            "results) instead of refusing the transcript.",
        ),
    ] = False,
    as_json: JsonOption = False,
    from_agent: Annotated[
        str | None,
        typer.Option(
            "--from",
            metavar="AGENT",
            help="Import a whole history: claude-code (~/.claude/projects) or codex "
            "(~/.codex/sessions), or the folder given as FILE. Run again to add what is new.",
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Store a transcript as a new, searchable session and print its id.

    A transcript compress would refuse is refused (one line naming the message, exit 2)
    unless --lenient repairs it. The same content imported twice is reported with the
    session that holds it (exit 3) unless --again. With --from, every session of Claude
    Code or Codex is imported (only new or grown ones on later runs); exit 1 if a file was
    skipped.
    """
    if from_agent is not None:
        import_history_command(from_agent, file, as_json=as_json, db=db)
        return
    if file is None:
        fail("give a transcript FILE (or - for stdin), or --from claude-code|codex")
    options: dict[str, Any] = {
        "format": format.value,
        "source": source,
        "title": title,
        "again": again,
        "lenient": lenient,
    }
    with handle_errors(), open_store(db) as store, _importing(file):
        try:
            if file == "-":
                sid = import_stream(store, sys.stdin, **options)
            else:
                sid = store.import_transcript(Path(file), **options)
        except DuplicateTranscriptError as exc:
            if as_json:
                _json({"id": exc.existing_id, "imported": False, "sha256": exc.digest})
            else:
                err_console.print(escape(str(exc)))
                typer.echo(exc.existing_id)
            raise typer.Exit(ALREADY_IMPORTED_EXIT) from None
        count = store.message_count(sid)
    if as_json:
        _json({"id": sid, "imported": True, "messages": count})
        return
    err_console.print(f"imported {count} messages from {'<stdin>' if file == '-' else file}")
    typer.echo(sid)


def _importing(file: str) -> AbstractContextManager[Any]:
    """A live line on stderr while an import runs (a terminal only: pipes and logs get
    nothing): what is read, its size, and the time so far, so a 200 MB import does not
    look hung."""
    if not err_console.is_terminal:
        return nullcontext()
    size = ""
    if file != "-":
        with suppress(OSError):
            size = f" ({Path(file).stat().st_size / 1_048_576:,.1f} MiB)"
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    )
    progress.add_task(
        f"importing {'<stdin>' if file == '-' else file}{size}: reading, checking and indexing",
        total=None,
    )
    return progress


@sessions_app.command("export")
def export_command(
    session_id: IdArgument,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here (- or none: stdout).")
    ] = None,
    chain: Annotated[
        bool, typer.Option("--chain", help="The whole compression chain's original messages.")
    ] = False,
    redact: RedactOption = False,
    db: DbOption = None,
) -> None:
    """A session as an OpenAI-format JSON transcript (verbatim unless --redact)."""
    with handle_errors():
        if output is not None:
            output_target(output)  # a directory, device or FIFO is refused before the store opens
    with handle_errors(), open_store(db) as store:
        messages = store.export_session(resolve_id(store, session_id), chain=chain)
        if redact:  # the whole list at once: a value one message reveals goes from all
            messages = redact_value(messages)
        text = dump_transcript(messages) + "\n"
        if output is None or is_stdout(output):
            sys.stdout.write(json_for_terminal(text))  # the same JSON, safe on a terminal
        else:
            replace_file(output, text, temp_prefix=f".{output.name}.")
            err_console.print(f"wrote {len(messages)} messages to {output}")


@sessions_app.command("path")
def path_command(db: DbOption = None) -> None:
    """Print the database file's path (it may not exist yet), or the PostgreSQL URL
    (password hidden) when ``PALIMPSEST_DATABASE_URL`` or ``store.url`` names one."""
    with handle_errors():
        url = None if db is not None else store_url()
        if url is not None and is_postgres_url(url):
            typer.echo(redacted_url(url))
            return
        typer.echo(str(Path(url).expanduser() if url else db_path(db=db)))


# `sessions search` lives in .sessions_search, which registers itself on sessions_app
# (imported by cli/app.py so the command exists whenever the CLI is loaded).
# `delete` and `compress` (.sessions_edit) and `maintain` register themselves the same way.
from . import sessions_edit, sessions_maintain  # noqa: E402, F401
