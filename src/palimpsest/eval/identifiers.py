"""Identifiers an agent worked with: the names a continuation would need again.

Taken from the agent's own words, never from tool output: prose (backticked spans, and
words that can only be code: ``snake_case``, ``CamelCase``), commands and edit contents.
In code, a name followed by ``(`` counts too (``parse_delta(``, ``serialize(``), and dotted names count
by their parts. Issue ids (``#1234``, ``PROJ-12``) count wherever they appear. Names of the
agents' own tools and argument keys (``end_of_edit``, ``str_replace_editor``) are not
task identifiers and are left out.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Iterable

__all__ = ["code_identifiers", "identifier_present", "prose_identifiers"]

_SNAKE_RE = re.compile(r"(?<![\w$/-])_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_*(?![\w$/-])")
# ``[A-Z][A-Za-z0-9]*`` once, not ``(?:[A-Z][A-Za-z0-9]*)+``: the same names, but the nested
# repeat backtracked exponentially on a long mixed-case run (a base64 blob in tool output).
_CAMEL_RE = re.compile(
    r"(?<![\w$/-])(?:[A-Za-z][a-z0-9]+[A-Z][A-Za-z0-9]*|[A-Z]{2,}[a-z]+[A-Za-z0-9]*)(?![\w$/-])"
)
_CALL_RE = re.compile(r"(?<![\w$.])([A-Za-z_][A-Za-z0-9_]{2,})\(")
_METHOD_RE = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]{2,})\(")
_ISSUE_RE = re.compile(r"(?<![\w&/])#\d{2,}\b|\b[A-Z][A-Z0-9]{1,9}-\d+\b")
_BACKTICK_RE = re.compile(r"`([^`\n]{1,200})`")
STOP_IDENTIFIERS = frozenset(
    {
        "end_of_edit",
        "str_replace_editor",
        "str_replace_based_edit_tool",
        "find_file",
        "search_dir",
        "search_file",
        "scroll_down",
        "scroll_up",
        "file_text",
        "old_str",
        "new_str",
        "view_range",
        "insert_line",
        "replacement_text",
        "start_line",
        "end_line",
        "line_number",
        "mswea_bash_command",
        "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
        "MINI_SWE_AGENT_FINAL_OUTPUT",
        "execute_bash",
        "file_path",
        "old_string",
        "new_string",
        "replace_all",
        "in_progress",  # Claude Code TodoWrite status values
    }
)
"""Agent vocabulary, not task identifiers."""

_KEYWORDS = frozenset(keyword.kwlist) | frozenset(
    # C, C++, Java, JavaScript, shell: `while (`, `sizeof(`, `function(` are not names
    [
        "while",
        "for",
        "if",
        "switch",
        "return",
        "sizeof",
        "catch",
        "function",
        "typeof",
        "elif",
        "else",
        "do",
        "case",
        "new",
        "delete",
        "printf",
        "echo",
        "exit",
    ]
)
LANGUAGE_CALLS = (
    frozenset(
        name
        for owner in (builtins, str, bytes, list, dict, set)
        for name in dir(owner)
        if not name.startswith("_")
    )
    | _KEYWORDS
)
"""Python's builtins and the methods of its builtin types (``range(``, ``.decode(``), and
the keywords of common languages (``while (``, ``sizeof(``): a call to one is the
language, not a name of the task, so called and method names from this set do not count.
Snake/Camel names and backticked names still count."""


def _keep(names: Iterable[str]) -> list[str]:
    return [n for n in names if n not in STOP_IDENTIFIERS and len(n) >= 3]


def code_identifiers(text: str) -> list[str]:
    """Identifiers in code: snake/Camel names, called names, method names, issue ids."""
    names = _SNAKE_RE.findall(text) + _CAMEL_RE.findall(text) + _ISSUE_RE.findall(text)
    calls = _CALL_RE.findall(text) + _METHOD_RE.findall(text)
    names += [n for n in calls if n not in LANGUAGE_CALLS]
    return _keep(names)


def prose_identifiers(text: str) -> list[str]:
    """Identifiers in prose: code in backticks, and words that can only be code."""
    names: list[str] = []
    for span in _BACKTICK_RE.findall(text):
        names.extend(code_identifiers(span))
    plain = _BACKTICK_RE.sub(" ", text)
    names += _SNAKE_RE.findall(plain) + _CAMEL_RE.findall(plain) + _ISSUE_RE.findall(plain)
    return _keep(names)


def identifier_present(name: str, text: str) -> bool:
    """``name`` as a whole word of ``text`` (case-sensitive)."""
    return re.search(r"(?<![\w$])" + re.escape(name) + r"(?![\w$])", text) is not None
