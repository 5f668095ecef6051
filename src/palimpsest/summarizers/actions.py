"""What one tool call did: its kind, its target, the files it touched, and how it went.

Agents name the same operation differently (``bash``/``Bash``/``terminal``/``shell``;
``str_replace_editor`` with a ``command`` argument; codex ``apply_patch`` with paths inside
the patch text; SWE-agent ``edit`` on "the open file"). This module maps all of them to one
small vocabulary (RUN, READ, WRITE, EDIT, DELETE, SEARCH, LIST, CALL) so a summary can say
``EDIT src/app.py — ok [tool: str_replace_editor]`` whatever the agent was.

Outcomes come from bounded windows of the result (the first and last few KB), so a 20 KB
tool output costs the same as a 6 KB one: exit codes, pytest/unittest/jest counts, the
first error line (a traceback's last line), line and match counts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .shell import shell_effects, split_command

__all__ = ["Action", "apply_result", "classify_call", "classify_text_action", "clip"]

WINDOW = 3_000
"""Characters read from each end of a tool output; the middle of a huge output is skipped."""

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

_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)
_DIFF_FILE = re.compile(r"^\+\+\+ (?:b/)?(\S+)", re.M)

_EXIT = re.compile(
    r"\"exit_code\"\s*:\s*(-?\d+)|<returncode>(-?\d+)</returncode>|PROCESS-DONE:(-?\d+):"
    r"|\bexit(?:ed with)?(?: code| status)?[: ]\s*(-?\d+)\b|\[exit (?:code )?(-?\d+)\]",
    re.IGNORECASE,
)
_PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in", re.M)
_UNITTEST_FAILED = re.compile(r"^FAILED \(([^)]*)\)", re.M)
_JEST = re.compile(r"^Tests:\s+(.*?\d+ total)", re.M)
_ERROR_LINE = re.compile(
    r"^[^\n]*?(?:\b[A-Z]\w*(?:Error|Exception)\b|\berror\b|\bERROR\b|\bfatal\b|\bFATAL\b"
    r"|No such file or directory|command not found|Permission denied|does not exist"
    r"|\bnot found\b)[^\n]*$",
    re.M,
)
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit|Failure)\b.*$", re.M)
_FILE_TOTAL = re.compile(r"\[File: (.+?) \((\d+) lines total\)\]")
_FOUND = re.compile(r"\bFound (\d+) match", re.IGNORECASE)
_TOTAL_COUNT = re.compile(r"\"total_count\"\s*:\s*(\d+)")
_SWE_TRAILER = re.compile(r"\(Open file: ([^)\n]*)\)\s*\n\(Current directory: ([^)\n]*)\)\s*(?:\n?bash-\$)?\s*$")
_MSWEA_OUTPUT = re.compile(r"<output>\n?(.*?)\n?</output>", re.S)
_FENCE = re.compile(r"```([\w.+-]*)[ \t]*\n(.*?)```", re.S)
_TEXT_ACTION_LANGS = {"", "bash", "sh", "shell", "console", "zsh", "mswea_bash_command", "terminal"}
_SWE_COMMANDS = {
    "create", "edit", "open", "goto", "scroll_up", "scroll_down", "find_file", "search_dir",
    "search_file", "submit", "insert", "str_replace_editor",
}  # fmt: skip


def clip(text: str, limit: int) -> str:
    """One line, whitespace collapsed, cut to ``limit`` characters with ``…``."""
    flat = " ".join(text[: limit * 4 + 64].split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


@dataclass
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
    answered: bool = False

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
    if "*** Begin Patch" in raw[:20_000] or low in ("apply_patch", "patch") and not args.get("path"):
        text = _first_str(args, _PATCH_KEYS) or _command_text(args.get("command")) or raw
        writes = _patch_paths(text)
        if writes:
            paths = [p for p, _ in writes]
            return Action("EDIT", _path_target(paths), tool, "EDIT " + " ".join(paths), writes=writes)
    if low in _EDITORS:
        verb = _EDITOR_COMMANDS.get(str(args.get("command", "")).lower(), "EDIT")
        if str(args.get("command", "")).lower() == "undo_edit":
            verb = "EDIT"
        return _file_action(verb, tool, _first_str(args, _PATH_KEYS) or open_file, args)
    command = _command_text(next((args[k] for k in _COMMAND_KEYS if k in args), ""))
    if low in _RUN or (command and low not in _READ | _WRITE | _EDIT | _SEARCH | _LIST):
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
    shown = ", ".join(f"{k}={clip(str(v), 40)}" for k, v in list(args.items())[:2])
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
    words = [w for w in split_command(command)[:8] if not w.startswith("-")]
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


def classify_text_action(text: str, open_file: str | None = None) -> Action | None:
    """The action in an assistant message of a text-action agent (a fenced command block)."""
    blocks = [m for m in _FENCE.finditer(text[-20_000:]) if m.group(1).lower() in _TEXT_ACTION_LANGS]
    if not blocks:
        return None
    command = blocks[-1].group(2).strip()
    if not command:
        return None
    head, _, rest = command.partition("\n")
    words = head.split()
    word = words[0] if words else ""
    if word in _SWE_COMMANDS:
        arg = words[1] if len(words) > 1 else None
        if word == "create":
            return _file_action("WRITE", word, arg, {})
        if word in ("edit", "insert"):
            return _file_action("EDIT", word, open_file, {})
        if word == "open":
            return _file_action("READ", word, arg or open_file, {})
        if word in ("goto", "scroll_up", "scroll_down"):
            return _file_action("READ", word, open_file, {})
        if word in ("find_file", "search_dir", "search_file"):
            pattern = (arg or "?").strip("\"'")
            where = words[2] if len(words) > 2 else None
            target = f"'{clip(pattern, 80)}'" + (f" in {where}" if where else "")
            return Action("SEARCH", target, word, f"SEARCH {target}")
        return Action("CALL", word, word, f"CALL {word}")
    return _run_action("bash", command, None)


# --- outcomes ---------------------------------------------------------------------------------


def _window(text: str) -> str:
    if len(text) <= 2 * WINDOW:
        return text
    return text[:WINDOW] + "\n" + text[-WINDOW:]


def _exit_code(text: str) -> int | None:
    match = _EXIT.search(text)
    if match is None:
        return None
    value = next(g for g in match.groups() if g is not None)
    return int(value)


def _tests(text: str) -> tuple[int, int] | None:
    tail = text[-WINDOW:]
    if "passed" in tail or "failed" in tail:
        for line in reversed(tail.splitlines()):
            if "passed" in line or "failed" in line:
                counts = _PYTEST_COUNT.findall(line)
                if counts:
                    passed = sum(int(n) for n, kind in counts if kind == "passed")
                    bad = sum(int(n) for n, kind in counts if kind in ("failed", "error", "errors"))
                    return passed, bad
    ran = _UNITTEST_RAN.search(tail)
    if ran:
        total = int(ran.group(1))
        failed = _UNITTEST_FAILED.search(tail)
        bad = sum(int(n) for n in re.findall(r"=(\d+)", failed.group(1))) if failed else 0
        return total - bad, bad
    jest = _JEST.search(tail)
    if jest:
        parts = dict((k, int(n)) for n, k in re.findall(r"(\d+) (failed|passed|total)", jest.group(1)))
        return parts.get("passed", 0), parts.get("failed", 0)
    return None


def _error_line(text: str) -> str | None:
    start = text.find("Traceback (most recent call last)")
    if start != -1:
        match = _EXCEPTION_LINE.search(text, start)
        if match:
            return clip(match.group(0), 240)
    match = _ERROR_LINE.search(text)
    return clip(match.group(0), 240) if match else None


_RETURNCODE = re.compile(r"^<returncode>(-?\d+)</returncode>")


def _strip_trailers(text: str) -> tuple[str, str | None, str | None, int | None]:
    """Remove SWE-agent ``(Open file: …)`` trailers and mini-swe-agent wrappers.

    Returns the bare output, the open file and directory the trailer named, and the exit
    code a ``<returncode>`` wrapper carried.
    """
    open_file = cwd = None
    code: int | None = None
    tail = text[-400:]
    trailer = _SWE_TRAILER.search(tail)
    if trailer:
        open_file = trailer.group(1).strip()
        cwd = trailer.group(2).strip()
        text = text[: len(text) - len(tail) + trailer.start()]
    wrapped = _RETURNCODE.match(text)
    if wrapped:
        code = int(wrapped.group(1))
        body = _MSWEA_OUTPUT.search(_window(text))
        text = body.group(1) if body else text[wrapped.end() :]
    return text, (None if open_file in (None, "n/a", "") else open_file), cwd, code


def apply_result(action: Action, result: str) -> tuple[str | None, str | None]:
    """Fill in ``action``'s outcome from its result text; returns (open file, cwd) hints."""
    text, open_file, cwd, code = _strip_trailers(result or "")
    window = _window(text)
    verb = action.verb
    if verb in ("RUN", "CALL") or (verb in ("WRITE", "EDIT") and action.tool.lower() in _RUN):
        _run_outcome(action, text, window, code)
    elif verb == "READ":
        head = window[:300]
        total = _FILE_TOTAL.search(head)
        error = _error_line(head) if _looks_failed(head) else None
        if error:
            action.failed, action.error, action.outcome = True, error, f"error: {error}"
        elif total:
            action.outcome = f"{int(total.group(2)):,} lines total"
        else:
            lines = text.count("\n") + 1 if text.strip() else 0
            action.outcome = f"{lines:,} lines"
    elif verb == "SEARCH" or verb == "LIST":
        head = window[:300]
        found = _FOUND.search(head) or _TOTAL_COUNT.search(window)
        if found:
            count = int(found.group(1))
        else:
            count = sum(1 for line in window.splitlines() if line.strip()) if text.strip() else 0
        noun = "entries" if verb == "LIST" else "matches"
        action.outcome = f"{count:,} {noun}" if count else f"no {noun}"
        if _looks_failed(head) and not count:
            action.error = _error_line(head)
            action.outcome = f"error: {action.error}" if action.error else action.outcome
    else:  # WRITE / EDIT through a file tool
        head = window[:600]
        error = _error_line(head) if _looks_failed(head) else None
        if error:
            action.failed, action.error, action.outcome = True, error, f"error: {error}"
        elif verb == "WRITE" and action.write_lines is not None:
            action.outcome = f"{action.write_lines:,} lines"
        else:
            action.outcome = "ok"
    if open_file is None and action.verb in ("READ", "WRITE", "EDIT") and action.writes[:1]:
        open_file = action.writes[0][0]
    return open_file, cwd


_FAIL_WORDS = re.compile(
    r"\berror\b|\bfailed\b|exception|traceback|not found|no such file|does not exist|"
    r"permission denied|invalid|cannot|could not|unable to|did not appear",
    re.IGNORECASE,
)


def _looks_failed(head: str) -> bool:
    return _FAIL_WORDS.search(head) is not None


def _run_outcome(action: Action, text: str, window: str, code: int | None) -> None:
    if code is None:
        code = _exit_code(window)
    tests = _tests(window)
    action.exit_code, action.tests = code, tests
    parts: list[str] = []
    if code is not None:
        parts.append(f"exit {code}")
    if tests is not None:
        passed, bad = tests
        parts.append(f"{passed} passed, {bad} failed" if bad else f"{passed} passed")
    failed = (code is not None and code != 0) or (tests is not None and tests[1] > 0)
    if code is None and tests is None:
        failed = _ERROR_LINE.search(window) is not None and _looks_failed(window)
    if failed:
        action.failed = True
        action.error = _error_line(window)
        if action.error and tests is None:
            parts.append(f"error: {action.error}")
    if not parts:
        stripped = text.strip()
        if not stripped:
            parts.append("no output")
        elif "\n" not in stripped and len(stripped) <= 80:
            parts.append(f"output: {stripped}")
        else:
            lines = stripped.count("\n") + 1
            parts.append(f"{lines:,} lines of output")
    action.outcome = "; ".join(parts)
