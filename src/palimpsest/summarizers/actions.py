"""What one tool call did: its kind, its target, the files it touched, and how it went.

Agents name the same operation differently (``bash``/``Bash``/``terminal``/``shell``;
``str_replace_editor`` with a ``command`` argument; codex ``apply_patch`` with paths inside
the patch text; SWE-agent ``edit`` on "the open file"). This module maps all of them to one
small vocabulary (RUN, READ, WRITE, EDIT, DELETE, SEARCH, LIST, CALL) so a summary can say
``EDIT src/app.py — ok [tool: str_replace_editor]`` whatever the agent was. How the call
went is read from its result by :mod:`.outcomes`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..messages.reading import Action as ReadAction
from ..safety.redact import redact, redact_value
from .shell import shell_effects, split_command

__all__ = [
    "Action",
    "classify_call",
    "classify_command",
    "classify_reading",
    "clip",
    "is_shell_tool",
]

_RUN = {
    "bash", "terminal", "shell", "execute_command", "run_command", "run_terminal_cmd",
    "run_shell_command", "exec", "exec_command", "execute_bash", "local_shell", "sh",
    "container.exec", "cmd", "powershell", "run", "execute_code", "python",
}  # fmt: skip
_READ = {
    "read_file", "read", "view", "open", "view_file", "open_file", "cat", "get_file",
    "readfile", "notebookread", "goto", "scroll_up", "scroll_down", "read_many_files",
}  # fmt: skip
_WRITE = {"write_file", "write", "create", "create_file", "write_to_file", "save_file"}
_EDIT = {
    "edit", "edit_file", "multiedit", "str_replace", "patch", "apply_patch", "replace",
    "insert", "search_replace", "replace_in_file", "notebookedit", "apply_diff",
    "undo_edit", "replace_string_in_file", "edit_notebook",
}  # fmt: skip
_SEARCH = {
    "grep", "search", "search_files", "glob", "find", "find_file", "search_file",
    "search_dir", "codebase_search", "ripgrep", "rg", "file_search", "grep_search",
    "web_search", "websearch",
}  # fmt: skip
_LIST = {"ls", "list_dir", "list_files", "list_directory", "listdir"}
_FILE_TOOLS = _READ | _WRITE | _EDIT | _SEARCH | _LIST
_EDITORS = {"str_replace_editor", "text_editor", "str_replace_based_edit_tool", "editor"}
_EDITOR_COMMANDS = {"view": "READ", "create": "WRITE", "str_replace": "EDIT", "insert": "EDIT"}

_PATH_KEYS = (
    "path", "file_path", "filename", "target_file", "file", "absolute_path",
    "relative_path", "notebook_path", "filepath", "output_path",
)  # fmt: skip
_PATTERN_KEYS = ("pattern", "query", "regex", "search_term", "file_name", "glob", "name", "q")
_DIR_KEYS = ("path", "dir", "directory", "cwd", "root")
_COMMAND_KEYS = ("command", "cmd", "script", "code", "commands")
_WORKDIR_KEYS = ("workdir", "cwd", "working_dir", "working_directory")
_PATCH_KEYS = ("input", "patch", "diff", "patch_text")

_PATCH_FILE = re.compile(
    r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M
)
_CD_PREFIX = re.compile(r"^\s*cd\s+\S+\s*(?:&&|;)\s*")
_DIFF_FILE = re.compile(r"^\+\+\+ (?:b/)?(\S+)", re.M)

_SWE_COMMANDS = {
    "create", "edit", "open", "goto", "scroll_up", "scroll_down", "find_file", "search_dir",
    "search_file", "submit", "insert", "str_replace_editor",
}  # fmt: skip


def clip(text: str, limit: int, marker: str = "…") -> str:
    """One line, whitespace collapsed, cut to at most ``limit`` characters plus ``marker``.

    The cut falls on a word boundary, so a clipped text never shows the first half of a
    token: a secret is either whole (and the final redaction pass replaces it) or absent.
    Text of several lines is redacted before its lines are joined: a value on the line
    after its name (``Password:`` + newline, a YAML block, a wrapped key) is recognisable
    only while the line breaks are there.
    """
    window = limit * 4 + 64
    head = text[:window]
    flat = " ".join((redact(head) if "\n" in head else head).split())
    if len(text) > window:  # the window may end inside a token: drop that token
        flat = flat.rsplit(" ", 1)[0] if " " in flat else ""
        if len(flat) <= limit:
            return flat + marker
    elif len(flat) <= limit:
        return flat
    cut = flat[:limit]
    if flat[limit] != " ":
        cut = cut.rsplit(" ", 1)[0] if " " in cut else ""
    return cut.rstrip() + marker


@dataclass(eq=False)
class Action:
    """One tool call (or text action) and what came of it."""

    verb: str
    target: str
    tool: str
    key: str
    outcome: str = "no result in span"
    failed: bool = False
    error: str | None = None
    exit_code: int | None = None
    tests: tuple[int, int] | None = None  # (passed, failed + errors)
    writes: list[tuple[str, str]] = field(default_factory=list)  # (path, created|modified|deleted)
    reads: list[str] = field(default_factory=list)
    cwd: str | None = None
    write_lines: int | None = None
    on_open_file: bool = False
    """The target is the file assumed open (SWE-agent ``edit``/``insert``): the
    observation's ``(Open file: …)`` trailer, when it names another, is the truth."""

    @property
    def informative(self) -> bool:
        """Edits, writes, failures and test runs survive a tight budget first."""
        return bool(self.writes) or self.failed or self.tests is not None

    def line(self, number: int) -> str:
        return f"{number}. {self.verb} {self.target} — {self.outcome} [tool: {self.tool}]"


def _first_str(args: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _patch_paths(text: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for match in _PATCH_FILE.finditer(text):
        if match.group(3):
            found.append((match.group(3), "created"))
        else:
            kind = {"Add": "created", "Delete": "deleted"}.get(match.group(1), "modified")
            found.append((match.group(2), kind))
    if not found:
        found = [(p, "modified") for p in _DIFF_FILE.findall(text) if p != "/dev/null"]
    return found


def _command_text(value: Any) -> str:
    if isinstance(value, list):
        parts = [str(p) for p in value]
        if len(parts) >= 3 and parts[0] in ("bash", "sh", "zsh") and parts[1].startswith("-"):
            return parts[-1]
        return " ".join(parts)
    return value if isinstance(value, str) else ""


def _path_target(paths: list[str]) -> str:
    return ", ".join(paths[:3]) + (f" (+{len(paths) - 3} more)" if len(paths) > 3 else "")


def classify_call(
    name: str, args: Mapping[str, Any], raw: str, open_file: str | None = None
) -> Action:
    """Map a tool call to an :class:`Action` without its outcome (see :func:`apply_result`)."""
    tool = name or "unknown"
    low = tool.lower()
    command = _command_text(next((args[k] for k in _COMMAND_KEYS if k in args), ""))
    patch_marker = "*** Begin Patch"
    if (
        raw.find(patch_marker, 0, 20_000) != -1
        or command.find(patch_marker, 0, 20_000) != -1
        or (low in ("apply_patch", "patch") and not args.get("path"))
    ):
        text = _first_str(args, _PATCH_KEYS) or command or raw
        writes = _patch_paths(text)
        if writes:
            paths = [p for p, _ in writes]
            return Action(
                "EDIT", _path_target(paths), tool, "EDIT " + " ".join(paths), writes=writes
            )
    if low in _EDITORS:
        verb = _EDITOR_COMMANDS.get(str(args.get("command", "")).lower(), "EDIT")
        if str(args.get("command", "")).lower() == "undo_edit":
            verb = "EDIT"
        return _file_action(verb, tool, _first_str(args, _PATH_KEYS) or open_file, args)
    if low in _RUN or (command and low not in _FILE_TOOLS):
        return _run_action(tool, command, _first_str(args, _WORKDIR_KEYS))
    if low in _WRITE:
        return _file_action("WRITE", tool, _first_str(args, _PATH_KEYS), args)
    if low in _EDIT:
        return _file_action("EDIT", tool, _first_str(args, _PATH_KEYS) or open_file, args)
    if low in _READ:
        return _file_action("READ", tool, _first_str(args, _PATH_KEYS) or open_file, args)
    if low in _SEARCH:
        pattern = _first_str(args, _PATTERN_KEYS) or "?"
        where = _first_str(args, _DIR_KEYS[1:]) or _first_str(args, ("path",))
        target = f"'{clip(pattern, 80)}'" + (f" in {clip(where, 80)}" if where else "")
        return Action("SEARCH", target, tool, f"SEARCH {target}")
    if low in _LIST:
        where = _first_str(args, _DIR_KEYS) or "."
        return Action("LIST", clip(where, 100), tool, f"LIST {where}")
    # Redacted before rendering: ``password=X,`` reads as code (a keyword argument) to the
    # text rules, so the value is removed here, by its key, while it is still a mapping.
    safe = redact_value(dict(list(args.items())[:2]))
    shown = ", ".join(f"{k}={clip(str(v), 40)}" for k, v in safe.items())
    target = f"{tool}({shown})"
    return Action("CALL", target, tool, f"CALL {target}")


def _file_action(verb: str, tool: str, path: str | None, args: Mapping[str, Any]) -> Action:
    shown = path or "(open file)"
    action = Action(verb, shown, tool, f"{'EDIT' if verb == 'WRITE' else verb} {shown}")
    if verb == "READ":
        if path:
            action.reads.append(path)
    elif path:
        action.writes.append((path, "created" if verb == "WRITE" else "modified"))
    content = args.get("content", args.get("file_text", args.get("text")))
    if verb == "WRITE" and isinstance(content, str):
        action.write_lines = content.count("\n") + (0 if content.endswith("\n") else 1)
    return action


def _run_action(tool: str, command: str, workdir: str | None) -> Action:
    effects = shell_effects(command)
    shown = clip(command.split("\n", 1)[0] if effects.heredoc else command, 120)
    # the key names what ran, so a rerun from another directory still matches it
    core = _CD_PREFIX.sub("", command, count=1)
    words = [w for w in split_command(core)[:8] if not w.startswith("-")]
    action = Action("RUN", f"`{shown}`", tool, "RUN " + " ".join(words[:3]))
    action.cwd = effects.cwd or workdir
    action.writes = list(effects.writes)
    action.reads = list(effects.reads)
    if effects.writes and effects.simple_write:
        paths = [p for p, _ in effects.writes]
        action.verb = "EDIT" if effects.simple_write == "edit" else "WRITE"
        action.target = _path_target(paths)
        action.key = "EDIT " + " ".join(paths)
    return action


def classify_command(command: str, tool: str = "bash", open_file: str | None = None) -> Action:
    """The action a command written as text takes (a fenced block, a ``<command>`` tag).

    SWE-agent's own commands (``open``, ``edit 1:1``, ``create``, ``find_file``, …) map to
    file actions on their argument or on the open file; anything else is a shell command.
    """
    head = command.strip().partition("\n")[0]
    words = head.split()
    word = words[0] if words else ""
    if word in _SWE_COMMANDS:
        arg = words[1].strip("\"'") if len(words) > 1 else None
        if word == "str_replace_editor":  # str_replace_editor SUBCOMMAND PATH [--flags]
            path = words[2].strip("\"'") if len(words) > 2 else None
            return _file_action(_EDITOR_COMMANDS.get(arg or "", "EDIT"), word, path, {})
        if word == "create":
            return _file_action("WRITE", word, arg, {})
        if word in ("edit", "insert"):
            action = _file_action("EDIT", word, open_file, {})
            action.on_open_file = True
            return action
        if word == "open":
            return _file_action("READ", word, arg or open_file, {})
        if word in ("goto", "scroll_up", "scroll_down"):
            return _file_action("READ", word, open_file, {})
        if word in ("find_file", "search_dir", "search_file"):
            pattern = arg or "?"
            where = words[2] if len(words) > 2 else None
            target = f"'{clip(pattern, 80)}'" + (f" in {where}" if where else "")
            return Action("SEARCH", target, word, f"SEARCH {target}")
        return Action("CALL", word, word, f"CALL {word}")
    return _run_action(tool if tool.lower() in _RUN else "bash", command.strip(), None)


_TEXT_STYLES = ("fenced", "command_tag")


def classify_reading(
    action: ReadAction, open_file: str | None = None, arguments: Mapping[str, Any] | None = None
) -> Action:
    """Map one action of :mod:`palimpsest.messages.reading` to the summary's vocabulary.

    Text actions (fenced blocks, ``<command>`` tags) carry a command line; native and XML
    function calls carry parsed arguments, read as :func:`classify_call` reads a tool call.
    ``arguments`` replaces ``action.arguments`` when the caller already made a plain dict.
    """
    if arguments is None:
        arguments = action.arguments if isinstance(action.arguments, Mapping) else {}
    args = arguments
    command = action.command
    if action.style in _TEXT_STYLES and command:
        return classify_command(command, action.tool, open_file)
    if (
        command
        and action.tool.lower() in _SWE_COMMANDS
        and set(args) <= {"command"}  # SWE-agent put the whole command line under "command"
    ):
        return classify_command(command, action.tool, open_file)
    raw = next((v for k in _PATCH_KEYS if isinstance(v := args.get(k), str)), "")
    return classify_call(action.tool, args, raw, open_file)


def is_shell_tool(name: str) -> bool:
    """True for tools that run shell commands (their outcome is an exit status)."""
    return name.lower() in _RUN
