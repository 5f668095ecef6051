"""``palimpsest sessions import --from claude-code|codex [DIR]``: whole agent histories at once.

The command body of ``sessions import`` hands over to :func:`import_history_command` when
``--from`` is given. It imports every session file under DIR (default: the agent's own
place, ``~/.claude/projects`` or ``~/.codex/sessions``, honouring ``$CLAUDE_CONFIG_DIR``,
``$CODEX_HOME`` and ``$HOME``) through :func:`~palimpsest.storage.history_import.import_history`
and prints one summary line on stdout, such as ``claude-code: 0 new, 1 grown, 41 unchanged;
7 messages added``. A file that could not be read is named on stderr with the reason and
skipped; the exit status is then 1 (:data:`PARTIAL_IMPORT_EXIT`), else 0. A progress bar
shows on stderr when it is a terminal.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from ..messages.history_files import AGENTS, HistoryFile
from ..storage.history_import import HistoryImport, import_history
from .common import err_console, fail, handle_errors

__all__ = ["PARTIAL_IMPORT_EXIT", "import_history_command"]

PARTIAL_IMPORT_EXIT = 1
"""``sessions import --from``: some files could not be imported (the others were)."""


def import_history_command(
    agent: str, directory: str | None, *, as_json: bool, db: Path | None = None
) -> None:
    """Import ``agent``'s history under ``directory`` and report; exits 1 if a file failed."""
    if agent not in AGENTS:
        fail(f"--from must be one of: {', '.join(AGENTS)} (not {agent!r})")
    # Imported late: the CLI module is loaded for every command.
    from .sessions import open_store

    with handle_errors(), open_store(db) as store:
        if err_console.is_terminal:
            with Progress(
                TextColumn(f"importing {agent}"),
                BarColumn(),
                MofNCompleteColumn(),
                console=err_console,
                transient=True,
            ) as bar:
                task = bar.add_task(agent, total=None)

                def advance(_: HistoryFile) -> None:
                    bar.advance(task)

                def total(count: int) -> None:
                    bar.update(task, total=count)

                result = import_history(store, agent, directory, progress=advance, total=total)
        else:
            result = import_history(store, agent, directory)
    _report(result, as_json)
    if result.failed:
        raise typer.Exit(PARTIAL_IMPORT_EXIT)


def summary_line(result: HistoryImport) -> str:
    """``<agent>: N new, N grown, N unchanged[, N replaced][, N failed]; N messages added``."""
    parts = [
        f"{result.count('new', 'empty')} new",
        f"{result.count('grown')} grown",
        f"{result.count('unchanged')} unchanged",
    ]
    if result.count("replaced"):
        parts.append(f"{result.count('replaced')} rewritten and re-imported")
    if result.failed:
        parts.append(f"{len(result.failed)} failed")
    return f"{result.agent}: {', '.join(parts)}; {result.messages} messages added"


def _report(result: HistoryImport, as_json: bool) -> None:
    for item in result.failed:
        err_console.print(
            f"[bold red]skipped[/] {escape(str(item.path))}: {escape(item.error or '')}"
        )
    for item in result.files:
        if item.bad_lines:
            err_console.print(
                f"note: {escape(str(item.path))}: {item.bad_lines} line(s) that are not JSON "
                "were skipped"
            )
    unknown = sum(f.unknown_records for f in result.files if f.status != "unchanged")
    if unknown:
        err_console.print(
            f"note: {unknown} record(s) of types this reader does not know were skipped"
        )
    if as_json:
        payload: dict[str, Any] = {
            "agent": result.agent,
            "root": str(result.root),
            "new": result.count("new", "empty"),
            "grown": result.count("grown"),
            "unchanged": result.count("unchanged"),
            "replaced": result.count("replaced"),
            "failed": [{"path": str(f.path), "error": f.error} for f in result.failed],
            "messages": result.messages,
        }
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        return
    typer.echo(summary_line(result))
