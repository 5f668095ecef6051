"""How a tool call went, read from its result: exit code, test counts, first error line.

Only bounded windows of a result are read (its first and last few KB, and narrower
windows for exit codes and test summaries), and error lines are located with ``str.find``
on a few keywords before any regular expression runs, so a 20 KB output costs about the
same as a 2 KB one. This matters because the compressor may hand over ten thousand turns.
"""

from __future__ import annotations

import json
import re

from ..compaction.oneliners import is_pruned_content
from .actions import Action, clip, is_shell_tool
from .error_lines import TRACEBACK, error_lines, last_error_line, mentions_failure

__all__ = ["apply_result", "mark_failed", "trailer_hints"]

MAX_JSON_OUTPUT = 200_000
"""JSON tool outputs up to this size are decoded to read their output and exit code."""

WINDOW = 2_000
"""Characters read from each end of a tool output; the middle of a huge output is skipped."""

_EXIT = re.compile(
    r"\"exit_code\"\s*:\s*(-?\d+)|PROCESS-DONE:(-?\d+):|\bexit(?:ed with)?(?: code| status)?"
    r"[: ]\s*(-?\d+)\b|\[exit (?:code )?(-?\d+)\]",
    re.IGNORECASE,
)
_PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")
_PYTEST_ERRORS = re.compile(r"\b(\d+) errors? in \d+(?:\.\d+)?s\b")
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in", re.M)
_UNITTEST_FAILED = re.compile(r"^FAILED \(([^)]*)\)", re.M)
_JEST = re.compile(r"^Tests:\s+(.*?\d+ total)", re.M)
_EXCEPTION_LINE = re.compile(
    r"^[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit|Failure)\b.*$", re.M
)
_FILE_TOTAL = re.compile(r"\[File: (.+?) \((\d+) lines total\)\]")
_FOUND = re.compile(r"\bFound (\d+) match", re.IGNORECASE)
_TOTAL_COUNT = re.compile(r"\"total_count\"\s*:\s*(\d+)")
_SWE_TRAILER = re.compile(
    r"\(Open file: ([^)\n]*)\)\s*\n\(Current directory: ([^)\n]*)\)\s*(?:\n?bash-\$)?\s*$"
)
_MSWEA_OUTPUT = re.compile(r"<output>\n?(.*?)\n?</output>", re.S)
_RETURNCODE = re.compile(r"^<returncode>(-?\d+)</returncode>")

# Keywords (lower case) that may mark an error line, and the check the whole line must pass.
_ERROR_KEYS = (
    "error", "exception", "fatal", "no such file", "not found", "permission denied",
    "does not exist", "traceback",
)  # fmt: skip
_ERROR_IN_LINE = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception)\b|\berror\b|\bERROR\b|\bfatal\b|\bFATAL\b"
    r"|No such file or directory|command not found|Permission denied|does not exist|\bnot found\b"
)


def _window(text: str) -> str:
    if len(text) <= 2 * WINDOW:
        return text
    return text[:WINDOW] + "\n" + text[-WINDOW:]


def _exit_code(text: str) -> int | None:
    # Exit codes are printed first ("Exit code 1") or last ({"exit_code": 0}, [exit 1]).
    for part in (text[:200], text[-300:]):
        lower = part.lower()
        if "exit" not in lower and "process-done" not in lower:
            continue
        match = _EXIT.search(part)
        if match is not None:
            return int(next(g for g in match.groups() if g is not None))
    return None


def _tests(text: str) -> tuple[int, int] | None:
    tail = text[-1_200:]
    if "passed" in tail or "failed" in tail:
        for line in reversed(tail.splitlines()):
            if "passed" in line or "failed" in line:
                counts = _PYTEST_COUNT.findall(line)
                if counts:
                    passed = sum(int(n) for n, kind in counts if kind == "passed")
                    bad = sum(int(n) for n, kind in counts if kind in ("failed", "error", "errors"))
                    return passed, bad
    if " error" in tail:  # a pytest run that only collected errors: "1 error in 0.12s"
        only_errors = _PYTEST_ERRORS.findall(tail)
        if only_errors:
            return 0, int(only_errors[-1])
    if "Ran " in tail:
        ran = _UNITTEST_RAN.search(tail)
        if ran:
            total = int(ran.group(1))
            failed = _UNITTEST_FAILED.search(tail)
            bad = sum(int(n) for n in re.findall(r"=(\d+)", failed.group(1))) if failed else 0
            return total - bad, bad
    if "Tests:" in tail:
        jest = _JEST.search(tail)
        if jest:
            found = re.findall(r"(\d+) (failed|passed|total)", jest.group(1))
            parts = {kind: int(n) for n, kind in found}
            return parts.get("passed", 0), parts.get("failed", 0)
    return None


def _lines_with_errors(text: str) -> list[str]:
    """Lines holding an error keyword, in order, found with ``str.find`` first."""
    lower = text.lower()
    starts: set[int] = set()
    for key in _ERROR_KEYS:
        index = lower.find(key)
        hits = 0
        while index != -1 and hits < 8:
            starts.add(lower.rfind("\n", 0, index) + 1)
            hits += 1
            newline = lower.find("\n", index)
            if newline == -1:
                break
            index = lower.find(key, newline + 1)
    lines = []
    for start in sorted(starts):
        end = text.find("\n", start)
        lines.append(text[start : end if end != -1 else len(text)])
    return lines


def _error_line(text: str) -> str | None:
    """The last error a program printed (a traceback's exception line, an ``Error: …``
    line, a pytest ``FAILED`` line); else the first line naming an error word."""
    start = text.rfind(TRACEBACK)
    if start != -1:
        match = _EXCEPTION_LINE.search(text, start)
        if match:
            return clip(match.group(0), 240)
    last = last_error_line(text)
    if last is not None:
        return clip(last, 240)
    for line in _lines_with_errors(text):
        if _ERROR_IN_LINE.search(line):
            return clip(line, 240)
    return None


def _failure_start(text: str) -> bool:
    """Failure read from the output alone: a traceback or any line in an error's form."""
    return TRACEBACK in text or last_error_line(text) is not None


def _strip_trailers(text: str) -> tuple[str, str | None, str | None, int | None]:
    """Remove SWE-agent ``(Open file: …)`` trailers and mini-swe-agent wrappers.

    Returns the bare output, the open file and directory the trailer named, and the exit
    code a ``<returncode>`` wrapper carried.
    """
    open_file = cwd = None
    code: int | None = None
    if "(Open file:" in text[-400:]:
        tail = text[-400:]
        trailer = _SWE_TRAILER.search(tail)
        if trailer:
            open_file = trailer.group(1).strip()
            cwd = trailer.group(2).strip()
            text = text[: len(text) - len(tail) + trailer.start()]
    if text[:1] == "{" and ('"output"' in text[:300] or '"exit_code"' in text[:300]):
        code, text = _json_output(text)
    elif text.startswith("<returncode>"):
        wrapped = _RETURNCODE.match(text)
        if wrapped:
            code = int(wrapped.group(1))
            body = _MSWEA_OUTPUT.search(_window(text))
            text = body.group(1) if body else text[wrapped.end() :]
    return text, (None if open_file in (None, "n/a", "") else open_file), cwd, code


def _json_output(text: str) -> tuple[int | None, str]:
    """Tools that answer ``{"output": …, "exit_code": N, "error": …}``: read the fields."""
    if len(text) > MAX_JSON_OUTPUT:
        return None, text
    try:
        value = json.loads(text)
    except ValueError:
        return None, text
    if not isinstance(value, dict):
        return None, text
    output = value.get("output")
    parts = [output if isinstance(output, str) else ""]
    error = value.get("error") or value.get("stderr")
    if isinstance(error, str) and error:
        parts.append(error)
    code = value.get("exit_code", value.get("returncode"))
    if not isinstance(code, int) or isinstance(code, bool):
        code = _exit_code(text)
    return code, "\n".join(p for p in parts if p)


def _first_line(text: str) -> str:
    """Where file tools report failure: the first line (the rest may be file content)."""
    head = text[:400]
    newline = head.find("\n")
    return head if newline == -1 else head[:newline]


def _blank(text: str) -> bool:
    """Empty or whitespace only, without copying a 20 KB output as ``strip()`` would."""
    return not text or text.isspace()


def _looks_failed(head: str) -> bool:
    """A file tool's first line reports a refusal; a name or path holding "error" does not."""
    return mentions_failure(head)


def trailer_hints(text: str) -> tuple[str | None, str | None]:
    """The open file and directory a SWE-agent ``(Open file: …)`` trailer names, if any.

    The reading strips the trailer from an observation's output; the raw message still
    carries it, and it is the only place SWE-agent says which file ``edit`` applies to.
    """
    if "(Open file:" not in text[-400:]:
        return None, None
    _, open_file, cwd, _ = _strip_trailers(text[-400:])
    return open_file, cwd


def apply_result(
    action: Action, result: str, exit_code: int | None = None
) -> tuple[str | None, str | None]:
    """Fill in ``action``'s outcome from its result text; returns (open file, cwd) hints.

    ``exit_code`` is the status the transcript's format states (see
    :class:`palimpsest.messages.reading.Observation`); without one it is read from the text.
    """
    text, open_file, cwd, code = _strip_trailers(result or "")
    if exit_code is not None:
        code = exit_code
    verb = action.verb
    if text[:1] == "[" and is_pruned_content(text):
        # an earlier prune pass left a one-liner: keep what it still says
        code = _exit_code(text)
        action.exit_code = code
        action.failed = code not in (None, 0)
        action.outcome = f"exit {code} (output pruned)" if code is not None else "output pruned"
        return open_file, cwd
    if verb in ("RUN", "CALL") or (verb in ("WRITE", "EDIT") and is_shell_tool(action.tool)):
        _run_outcome(action, text, _window(text), code)
    elif verb == "READ":
        _read_outcome(action, text, _first_line(text))
    elif verb in ("SEARCH", "LIST"):
        _search_outcome(action, text, _window(text))
    else:  # WRITE / EDIT through a file tool
        head = _first_line(text)
        error = (_error_line(head) or clip(head, 240)) if _looks_failed(head) else None
        if error:
            error = _specific_error(text) or error
            action.failed, action.error, action.outcome = True, error, f"error: {error}"
        elif verb == "WRITE" and action.write_lines is not None:
            action.outcome = f"{action.write_lines:,} lines"
        else:
            action.outcome = "ok"
    return open_file, cwd


def mark_failed(action: Action, result: str) -> None:
    """The format marked ``result`` as an error (``is_error``): whatever its words say, the
    call failed; its error is the last error line, else its first line."""
    text = _strip_trailers(result or "")[0]
    error = _error_line(_window(text)) or clip(_first_line(text), 240) or "marked as an error"
    action.failed, action.error = True, error
    action.writes = [] if not is_shell_tool(action.tool) else action.writes
    prefix = f"exit {action.exit_code}; " if action.exit_code not in (None, 0) else ""
    action.outcome = f"{prefix}error: {error}"


DETAIL_LINES = 12
"""Lines after a file tool's refusal searched for the error that explains it."""


def _specific_error(text: str) -> str | None:
    """The error a file tool's refusal names (SWE-agent's linter answers "Your proposed
    edit has introduced new syntax error(s)" and then ``- E999 SyntaxError: …``; OpenHands
    ``ERROR:`` and its text on the next line): the first error-form line of its first
    :data:`DETAIL_LINES` lines other than the first line itself, else that line."""
    lines = text[:4_000].splitlines()[: DETAIL_LINES + 1]
    found = error_lines("\n".join(lines))
    head = lines[0].strip() if lines else ""
    named = [line for line in found if line != head] or found
    return clip(named[0], 240) if named else None


def _read_outcome(action: Action, text: str, head: str) -> None:
    total = _FILE_TOTAL.search(head) if "[File:" in head else None
    error = (_specific_error(text) or _error_line(head)) if _looks_failed(head) else None
    if error and total is None:
        action.failed, action.error, action.outcome = True, error, f"error: {error}"
    elif total:
        action.outcome = f"{int(total.group(2)):,} lines total"
    else:
        lines = 0 if _blank(text) else text.count("\n") + 1
        action.outcome = f"{lines:,} lines"


def _search_outcome(action: Action, text: str, window: str) -> None:
    head = window[:300]
    found = _FOUND.search(head) or _TOTAL_COUNT.search(window)
    if found:
        count = int(found.group(1))
    elif len(text) > len(window):
        count = text.count("\n") + 1
    else:
        count = 0 if _blank(text) else sum(1 for line in window.splitlines() if line.strip())
    noun = ("entry", "entries") if action.verb == "LIST" else ("match", "matches")
    action.outcome = f"{count:,} {noun[count != 1]}" if count else f"no {noun[1]}"
    if not count and _looks_failed(head):
        action.error = _error_line(head)
        if action.error:
            action.outcome = f"error: {action.error}"


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
        failed = _failure_start(window)
    if failed:
        action.failed = True
        action.error = _error_line(window)
        if action.error and tests is None:
            parts.append(f"error: {action.error}")
    if not parts:
        stripped = "" if _blank(text) else text.strip() if len(text) <= 200 else text
        if not stripped:
            parts.append("no output")
        elif "\n" not in stripped and len(stripped) <= 80:
            parts.append(f"output: {stripped}")
        else:
            parts.append(f"{stripped.count(chr(10)) + 1:,} lines of output")
    action.outcome = "; ".join(parts)
