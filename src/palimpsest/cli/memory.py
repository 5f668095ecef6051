"""``palimpsest memory``: read and edit MEMORY.md / USER.md from the shell.

A thin layer over :class:`~palimpsest.memory.store.MemoryStore`, so the CLI obeys the same
rules as the agent's ``memory`` tool: substring matching, character limits, the threat
scan, the lock and the atomic write. Every command prints the usage against the limit,
for example ``MEMORY.md: 1,234 / 2,200 chars (56%)``. A refused write prints one line and
exits 2.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from ..config import load_settings
from ..errors import MemoryCapacityError, MemoryMatchError, MemoryToolError
from ..memory.entries import BLOCKED_PREFIX, FILE_NAMES, Target, join_entries
from ..memory.store import MemoryStore, WriteResult
from .common import fail, handle_errors

__all__ = ["memory_app"]

memory_app = typer.Typer(
    help="Show and edit the persistent memory files (MEMORY.md, USER.md).",
    no_args_is_help=True,
)

console = Console(highlight=False, soft_wrap=True)

UserOption = Annotated[
    bool, typer.Option("--user", help="Work on USER.md (the user profile) instead of MEMORY.md.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _store() -> MemoryStore:
    store = MemoryStore.from_settings(load_settings())
    store.load_from_disk()
    return store


def _target(user: bool) -> Target:
    return "user" if user else "memory"


def usage_line(target: Target, used: int, limit: int) -> str:
    """``MEMORY.md: 1,234 / 2,200 chars (56%)``."""
    return f"{FILE_NAMES[target]}: {used:,} / {limit:,} chars ({int(used / limit * 100)}%)"


def _write(action: str, user: bool, *args: str) -> None:
    target = _target(user)
    with handle_errors():
        store = _store()
        try:
            result: WriteResult = getattr(store, action)(target, *args)
        except MemoryToolError as exc:
            # Capacity errors list the entries on later lines; the CLI keeps one line.
            first = str(exc).split("\n", 1)[0]
            if isinstance(exc, MemoryCapacityError | MemoryMatchError):
                first += (
                    f" Run 'palimpsest memory show{' --user' if user else ''}' to see the entries."
                )
            fail(first)
    console.print(escape(result.message))
    console.print(usage_line(target, result.usage_chars, result.limit))


@memory_app.command("show")
def show_command(user: UserOption = False, as_json: JsonOption = False) -> None:
    """Print the entries of MEMORY.md (or USER.md with --user) and their usage."""
    target = _target(user)
    with handle_errors():
        store = _store()
        entries = store.entries(target)
        shown = store.sanitized(target, entries)
        used, limit = len(join_entries(entries)), store.limit(target)
    if as_json:
        payload = {
            "target": target,
            "path": str(store.path(target)),
            "entries": entries,
            "usage_chars": used,
            "limit": limit,
            "blocked": [i for i, s in enumerate(shown) if s.startswith(BLOCKED_PREFIX)],
        }
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    console.print(usage_line(target, used, limit))
    if not entries:
        console.print("(no entries)")
    for number, (entry, safe) in enumerate(zip(entries, shown, strict=True), start=1):
        console.print(f"[bold]{number}.[/] {escape(entry)}")
        if safe.startswith(BLOCKED_PREFIX):
            console.print(f"   [yellow]{escape(safe)}[/]")


@memory_app.command("add")
def add_command(text: str, user: UserOption = False) -> None:
    """Add TEXT as a new entry."""
    _write("add", user, text)


@memory_app.command("replace")
def replace_command(old: str, new: str, user: UserOption = False) -> None:
    """Replace the entry containing OLD (a unique substring) with NEW."""
    _write("replace", user, old, new)


@memory_app.command("remove")
def remove_command(old: str, user: UserOption = False) -> None:
    """Remove the entry containing OLD (a unique substring)."""
    _write("remove", user, old)


@memory_app.command("path")
def path_command(user: UserOption = False) -> None:
    """Print the path of MEMORY.md (or USER.md with --user)."""
    with handle_errors():
        typer.echo(str(MemoryStore.from_settings(load_settings()).path(_target(user))))
