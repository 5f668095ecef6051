"""The root command loads each noun's module only when that noun runs.

Every command module imports what its commands use (the store, the compressor, the agent,
tokenizers), and building the whole Typer tree imported all of it: ``palimpsest --help``
paid about a second before printing fourteen lines. Here the root group knows each
command's name, where it lives and its one-line help (:data:`COMMANDS`), and imports a
module when click asks for that command to run it, complete it or print its own help.
The root's help is printed from the table; a test holds the table to the real commands.

:class:`LazyCommands` is the group's ``commands`` mapping: its keys are known up front,
a value is built (and restyled, :func:`~.style.style_tree`) on first access. Anything
that reads ``group.commands[name]`` or walks ``.items()`` (the tests' walk of the tree)
gets the real command, so only the root's own listing uses the table.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any

import typer
from typer._click import Command, Context, HelpFormatter
from typer.core import TyperCommand

from .style import StyledGroup, style_tree

__all__ = ["COMMANDS", "CommandEntry", "LazyCommands", "LazyGroup", "make_lazy"]


@dataclass(frozen=True, slots=True)
class CommandEntry:
    """Where a top-level command lives and what the root's help says about it."""

    module: str
    """Module under ``palimpsest.cli`` that defines it."""
    attr: str
    """A ``typer.Typer`` (a noun with verbs) or a command function in that module."""
    summary: str
    """The one line the root's ``--help`` shows (the command's own first line)."""


COMMANDS: dict[str, CommandEntry] = {
    "compress": CommandEntry(
        "compress",
        "compress_command",
        "Compress a transcript: prune old tool output, summarize the middle, keep head and tail.",
    ),
    "chat": CommandEntry(
        "chat", "chat_command", "Talk to an agent that keeps its conversation inside the window."
    ),
    "replay": CommandEntry(
        "replay",
        "replay_command",
        "Replay a transcript's assistant turns through the agent and show its compactions.",
    ),
    "mcp": CommandEntry(
        "mcp",
        "mcp_command",
        "Run the MCP server over stdio (for Claude Code, Codex, Cursor and other clients).",
    ),
    # sessions_search registers `sessions search` onto sessions_app and re-exports it.
    "sessions": CommandEntry(
        "sessions_search", "sessions_app", "List, show, import, export and verify stored sessions."
    ),
    "memory": CommandEntry(
        "memory", "memory_app", "Show and edit the persistent memory files (MEMORY.md, USER.md)."
    ),
    "config": CommandEntry(
        "config", "config_app", "Show the configuration in effect and where each value came from."
    ),
    "eval": CommandEntry("eval", "eval_app", "Measure how well compaction keeps the thread."),
    "outputs": CommandEntry(
        "outputs", "outputs_app", "List, show, grep and collect saved tool outputs."
    ),
    "trajectories": CommandEntry(
        "trajectories",
        "trajectories_app",
        "Compress ShareGPT training trajectories to a token budget (offline, in batch).",
    ),
}
"""The top-level commands in the order the root's help lists them."""


def load_command(name: str, entry: CommandEntry) -> Command:
    """Import ``entry``'s module and build its click command, restyled, named ``name``."""
    target = getattr(importlib.import_module(f"{__package__}.{entry.module}"), entry.attr)
    # Built under a parent exactly as ``add_typer``/``command`` on the root would build it:
    # a sub-app built alone with one verb (eval, trajectories) would collapse into that verb.
    parent = typer.Typer()
    if isinstance(target, typer.Typer):
        parent.add_typer(target, name=name)
    else:
        parent.command(name)(target)
    parent.callback()(_no_options)
    command = typer.main.get_command(parent).commands[name]  # type: ignore[attr-defined]
    return style_tree(command)  # type: ignore[no-any-return]


def _no_options() -> None:
    """The throwaway parent's callback (makes it a group even around one command)."""


class LazyCommands(MutableMapping[str, Command]):
    """A group's commands: names known up front, each command built on first access."""

    def __init__(self, entries: dict[str, CommandEntry]) -> None:
        self._entries = entries
        self._built: dict[str, Command] = {}

    def __getitem__(self, name: str) -> Command:
        built = self._built.get(name)
        if built is None:
            built = load_command(name, self._entries[name])
            self._built[name] = built
        return built

    def __setitem__(self, name: str, command: Command) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        raise TypeError("the command table is fixed")

    def __iter__(self) -> Iterator[str]:
        yield from self._entries
        yield from (name for name in self._built if name not in self._entries)

    def __len__(self) -> int:
        return len(set(self._entries) | set(self._built))

    def __contains__(self, name: object) -> bool:
        return name in self._entries or name in self._built

    def loaded(self) -> list[str]:
        """Names whose command has been built (for tests of what a run imported)."""
        return list(self._built)


class _Summary(TyperCommand):
    """A stand-in that carries only a command's name and one-line help, for the listing."""


class LazyGroup(StyledGroup):
    """The root group: its listing comes from :data:`COMMANDS`, a command from its module."""

    commands: MutableMapping[str, Command]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyCommands(COMMANDS)  # Typer built it with no commands

    def list_commands(self, ctx: Context) -> list[str]:
        return list(self.commands)

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        if getattr(ctx, "_palimpsest_listing", False) and cmd_name in COMMANDS:
            summary = COMMANDS[cmd_name].summary
            return _Summary(cmd_name, help=summary, short_help=summary)
        return self.commands.get(cmd_name)

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        # Only the listing reads summaries: the help of a command (or completion) still
        # gets the real thing through get_command.
        ctx._palimpsest_listing = True  # type: ignore[attr-defined]
        try:
            super().format_help(ctx, formatter)
        finally:
            ctx._palimpsest_listing = False  # type: ignore[attr-defined]


def make_lazy(group: Any) -> LazyGroup:
    """The root ``group`` restyled; Typer builds it as a :class:`LazyGroup` (``cls=``)."""
    if not isinstance(group, LazyGroup):
        raise TypeError("the root Typer app must be made with cls=LazyGroup")
    # Its own options are styled by StyledGroup.get_params; each command when it is built
    # (style_tree would walk, and so import, every command).
    return group
