"""``palimpsest memory``: read and edit MEMORY.md / USER.md from the shell.

A thin layer over :class:`~palimpsest.memory.store.MemoryStore`, so the CLI obeys the same
rules as the agent's ``memory`` tool: substring matching, character limits, the threat
scan, the lock and the atomic write. Every command prints the usage against the limit,
for example ``MEMORY.md: 1,234 / 2,200 chars (56%)``. A refused write prints one line and
exits 2.

The store's error messages are written for the agent (they tell a model to consolidate
and retry within its turn); this module words them again for a person from the error's
attributes: how full the file is, what the entry needs, and which command makes room.
A ``replace`` or ``remove`` prints the entry it changed (old -> new).
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from ..config import load_settings
from ..errors import MemoryCapacityError, MemoryMatchError, MemoryToolError
from ..memory.entries import BLOCKED_PREFIX, FILE_NAMES, MIN_MATCH_CHARS, Target, join_entries
from ..memory.store import MemoryStore, WriteResult
from .common import fail, handle_errors
from .terminal_text import for_terminal, json_for_terminal

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
OldArgument = Annotated[
    str,
    typer.Argument(
        help=f"Text of the entry to change: at least {MIN_MATCH_CHARS} characters that "
        "appear in that entry only (or the whole entry)."
    ),
]


def _store() -> MemoryStore:
    store = MemoryStore.from_settings(load_settings())
    store.load_from_disk()
    return store


def _target(user: bool) -> Target:
    return "user" if user else "memory"


def usage_line(target: Target, used: int, limit: int) -> str:
    """``MEMORY.md: 1,234 / 2,200 chars (56%)``."""
    return f"{FILE_NAMES[target]}: {used:,} / {limit:,} chars ({int(used / limit * 100)}%)"


def _command(name: str, user: bool) -> str:
    return f"'palimpsest memory {name}{' --user' if user else ''}'"


def capacity_message(exc: MemoryCapacityError, target: Target, content: str, user: bool) -> str:
    """A refused ``add`` / ``replace`` for a person: how full, how much more, what to run."""
    name = FILE_NAMES[target]
    setting = "memory.user_char_limit" if user else "memory.memory_char_limit"
    size = len(content.strip())
    if size > exc.limit:
        return (
            f"this entry is {size:,} chars, longer than the whole {name} limit of "
            f"{exc.limit:,} chars; shorten it (or raise {setting} in the config file)"
        )
    percent = int(exc.usage / exc.limit * 100)
    return (
        f"{name} is {exc.usage:,} / {exc.limit:,} chars full ({percent}%) and this entry "
        f"({size:,} chars) does not fit; make room first: {_command('list', user)} shows "
        f"the entries, {_command('remove TEXT', user)} deletes one, "
        f"{_command('replace OLD NEW', user)} shortens one"
    )


def match_message(exc: MemoryMatchError, target: Target, user: bool) -> str:
    """A refused ``replace`` / ``remove`` for a person, with the candidates listed."""
    text = exc.old_text
    if exc.matches and len(text) < MIN_MATCH_CHARS:
        return (
            f"{text!r} is too short to pick one entry (it appears in {len(exc.matches)} "
            f"entr{'y' if len(exc.matches) == 1 else 'ies'}); "
            f"quote at least {MIN_MATCH_CHARS} characters of it: "
            + "; ".join(f"{m!r}" for m in exc.matches)
        )
    if exc.matches:
        return (
            f"{text!r} matches {len(exc.matches)} different entries; quote more of the one "
            "you mean: " + "; ".join(f"{m!r}" for m in exc.matches)
        )
    return (
        f"no entry of {FILE_NAMES[target]} contains {text!r}; "
        f"{_command('list', user)} shows the entries"
    )


def _write(action: str, user: bool, *args: str) -> None:
    target = _target(user)
    with handle_errors():
        store = _store()
        try:
            result: WriteResult = getattr(store, action)(target, *args)
        except MemoryCapacityError as exc:
            fail(capacity_message(exc, target, args[-1], user))
        except MemoryMatchError as exc:
            fail(match_message(exc, target, user))
        except MemoryToolError as exc:
            fail(str(exc).split("\n", 1)[0])
    console.print(escape(for_terminal(result.message)))
    for write in result.writes:
        if write.action == "replace":
            console.print(f"  old: {_shown(write.previous_content or '')}")
            console.print(f"  new: {_shown(write.content)}")
        elif write.action == "remove":
            console.print(f"  removed: {_shown(write.content)}")
    console.print(usage_line(target, result.usage_chars, result.limit))


def _shown(entry: str) -> str:
    """An entry as Rich markup: control and bidi characters escaped, then the markup."""
    return escape(for_terminal(entry))


def _payload(store: MemoryStore, target: Target) -> dict[str, object]:
    entries = store.entries(target)
    shown = store.sanitized(target, entries)
    return {
        "target": target,
        "path": str(store.path(target)),
        "entries": entries,
        "usage_chars": len(join_entries(entries)),
        "limit": store.limit(target),
        "blocked": [i for i, s in enumerate(shown) if s.startswith(BLOCKED_PREFIX)],
    }


@memory_app.command("list")
def list_command(user: UserOption = False, as_json: JsonOption = False) -> None:
    """One numbered line per entry of MEMORY.md (or USER.md with --user), and the usage."""
    target = _target(user)
    with handle_errors():
        store = _store()
        payload = _payload(store, target)
    if as_json:
        typer.echo(json_for_terminal(json.dumps(payload, ensure_ascii=False, indent=2)))
        return
    entries = store.entries(target)
    console.print(usage_line(target, len(join_entries(entries)), store.limit(target)))
    if not entries:
        console.print("(no entries)")
    for number, entry in enumerate(entries, start=1):
        line = " ".join(entry.split())
        cut = line if len(line) <= 100 else line[:97] + "..."
        console.print(f"[bold]{number}.[/] {_shown(cut)}")


@memory_app.command("show")
def show_command(user: UserOption = False, as_json: JsonOption = False) -> None:
    """Print the entries of MEMORY.md (or USER.md with --user) in full, and their usage."""
    target = _target(user)
    with handle_errors():
        store = _store()
        payload = _payload(store, target)
        entries = store.entries(target)
        shown = store.sanitized(target, entries)
    if as_json:
        typer.echo(json_for_terminal(json.dumps(payload, ensure_ascii=False, indent=2)))
        return
    console.print(usage_line(target, len(join_entries(entries)), store.limit(target)))
    if not entries:
        console.print("(no entries)")
    for number, (entry, safe) in enumerate(zip(entries, shown, strict=True), start=1):
        console.print(f"[bold]{number}.[/] {_shown(entry)}")
        if safe.startswith(BLOCKED_PREFIX):
            console.print(f"   [yellow]{_shown(safe)}[/]")


@memory_app.command("add")
def add_command(
    text: Annotated[str, typer.Argument(help="The entry to save.")], user: UserOption = False
) -> None:
    """Add TEXT as a new entry."""
    _write("add", user, text)


@memory_app.command("replace")
def replace_command(
    old: OldArgument,
    new: Annotated[str, typer.Argument(help="The whole new text of that entry.")],
    user: UserOption = False,
) -> None:
    """Replace the entry containing OLD (a unique substring) with NEW."""
    _write("replace", user, old, new)


@memory_app.command("remove")
def remove_command(old: OldArgument, user: UserOption = False) -> None:
    """Remove the entry containing OLD (a unique substring)."""
    _write("remove", user, old)


@memory_app.command("path")
def path_command(user: UserOption = False) -> None:
    """Print the path of MEMORY.md (or USER.md with --user)."""
    with handle_errors():
        typer.echo(str(MemoryStore.from_settings(load_settings()).path(_target(user))))
