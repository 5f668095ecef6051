"""One-line stand-ins for old tool output, and the test for "this was already pruned".

The prune pass (``prune.py``) replaces a bulky old tool result with a single line that still
says what happened (``[terminal] ran `npm test` -> exit 0, 47 lines output``), so the
summarizer and the model keep the gist without the bytes (CC-34). This module holds the
per-tool formats, the two fixed placeholders, and :func:`is_pruned_content`, which lets a
second pass recognise its own output and leave it alone (CC-33).

Numbers the formats derive from the output (characters, lines, match counts) are printed
with comma thousands separators; argument values are printed as given.

An output that reports an error keeps its last error line (read from its form,
:mod:`palimpsest.summarizers.error_lines`): ``… (2,694 chars result) — error: - E999
SyntaxError: unmatched ')'``. What failed and why is what the next step needs, and a
size alone does not say it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ..summarizers.error_lines import last_error_line_at_end

__all__ = [
    "DUPLICATE_PLACEHOLDER",
    "PRUNED_PLACEHOLDER",
    "SCREENSHOT_PLACEHOLDER",
    "is_pruned_content",
    "summarize_action_output",
    "summarize_tool_result",
]

PRUNED_PLACEHOLDER = "[Old tool output cleared to save context space]"
"""The classic stand-in (CC-35), also used when a screenshot envelope has no summary."""

DUPLICATE_PLACEHOLDER = "[Duplicate tool output — same content as a more recent call]"
"""Replaces an older copy of a tool result that appears again later (CC-36)."""

SCREENSHOT_PLACEHOLDER = "[screenshot removed to save context]"
"""Text part that replaces an image part in an old multimodal tool result (CC-41)."""

DUPLICATE_PREFIX = "[Duplicate tool output"
SCREENSHOT_PREFIX = "[screenshot removed"

ONELINER_MAX_CHARS = 400
"""A ``[...]`` text shorter than this that carries a one-liner marker is taken as pruned."""

ERROR_SCAN_CHARS = 4_000
"""Characters at the end of an output searched for its last error line."""
ERROR_QUOTE_CHARS = 160
"""Characters of that error line a one-liner quotes (it stays under ONELINER_MAX_CHARS)."""

_ONELINER_MARKERS = (" chars)", " chars result)")

_BROWSER_TOOLS = frozenset(
    {
        "browser_navigate",
        "browser_click",
        "browser_snapshot",
        "browser_type",
        "browser_scroll",
        "browser_vision",
    }
)
_SKILL_TOOLS = frozenset({"skill_view", "skills_list", "skill_manage"})

# The tools print JSON such as {"output": "...", "exit_code": 0}; the key is found with
# str.find (fast on 20 KB outputs) and only the short tail after it goes through a regex.
_EXIT_CODE_KEY = '"exit_code"'
_TOTAL_COUNT_KEY = '"total_count"'
_SIGNED_INT_AFTER_KEY = re.compile(r"\s*:\s*(-?\d+)")
_INT_AFTER_KEY = re.compile(r"\s*:\s*(\d+)")


def is_pruned_content(text: str) -> bool:
    """True when ``text`` is already a prune product and must not be pruned again (CC-33).

    That is the classic placeholder, a duplicate marker, a screenshot marker, or a one-liner:
    a text starting with ``[`` that is shorter than 400 characters and contains `` chars)``.
    One-liners of the ``(<N> chars result)`` form are recognised too, so a long generic
    one-liner is never summarized a second time.
    """
    if not isinstance(text, str) or not text:
        return False
    if text == PRUNED_PLACEHOLDER:
        return True
    if text.startswith((DUPLICATE_PREFIX, SCREENSHOT_PREFIX)):
        return True
    return (
        text.startswith("[")
        and len(text) < ONELINER_MAX_CHARS
        and any(marker in text for marker in _ONELINER_MARKERS)
    )


class _Output:
    """The tool output with its derived figures, each computed only if a format needs it."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    @property
    def chars(self) -> str:
        return f"{len(self.text):,}"

    @property
    def lines(self) -> str:
        text = self.text
        # isspace() instead of strip(): no copy of a 20 KB output just to test for blankness.
        if not text or text.isspace():
            return "0"
        return f"{text.count(chr(10)) + 1:,}"

    def int_after(self, key: str, pattern: re.Pattern[str]) -> int | None:
        text = self.text
        start = text.find(key)
        while start != -1:
            match = pattern.match(text, start + len(key))
            if match:
                return int(match.group(1))
            start = text.find(key, start + 1)
        return None


def _arg(args: Mapping[str, Any], key: str, default: str) -> str:
    """A string argument, or ``default`` when it is missing, ``None`` or empty."""
    value = args.get(key)
    if value is None or value == "":
        return default
    return value if isinstance(value, str) else str(value)


def _clip(text: str, keep: int, limit: int) -> str:
    """``text`` cut to ``keep`` characters plus ``...`` when it is longer than ``limit``."""
    return text[:keep] + "..." if len(text) > limit else text


def _terminal(args: Mapping[str, Any], out: _Output) -> str:
    command = _clip(_arg(args, "command", ""), 77, 80)
    code = out.int_after(_EXIT_CODE_KEY, _SIGNED_INT_AFTER_KEY)
    shown = "?" if code is None else str(code)
    return f"[terminal] ran `{command}` -> exit {shown}, {out.lines} lines output"


def _read_file(args: Mapping[str, Any], out: _Output) -> str:
    path = _arg(args, "path", "?")
    offset = _arg(args, "offset", "1")
    return f"[read_file] read {path} from line {offset} ({out.chars} chars)"


def _write_file(args: Mapping[str, Any], out: _Output) -> str:
    path = _arg(args, "path", "?")
    written = args.get("content")
    lines = f"{written.count(chr(10)) + 1:,}" if isinstance(written, str) and written else "?"
    return f"[write_file] wrote to {path} ({lines} lines)"


def _search_files(args: Mapping[str, Any], out: _Output) -> str:
    target = _arg(args, "target", "content")
    pattern = _arg(args, "pattern", "?")
    path = _arg(args, "path", ".")
    total = out.int_after(_TOTAL_COUNT_KEY, _INT_AFTER_KEY)
    count = "?" if total is None else f"{total:,}"
    return f"[search_files] {target} search for '{pattern}' in {path} -> {count} matches"


def _patch(args: Mapping[str, Any], out: _Output) -> str:
    mode = _arg(args, "mode", "replace")
    path = _arg(args, "path", "?")
    return f"[patch] {mode} in {path} ({out.chars} chars result)"


def _web_search(args: Mapping[str, Any], out: _Output) -> str:
    query = _arg(args, "query", "?")
    return f"[web_search] query='{query}' ({out.chars} chars result)"


def _url_of(item: Any) -> str:
    if isinstance(item, Mapping):
        value = item.get("url") or item.get("href")
        return str(value) if value else "?"
    return str(item) if item else "?"


def _web_extract(args: Mapping[str, Any], out: _Output) -> str:
    urls = args.get("urls")
    if urls is None:
        urls = args.get("url")
    items = list(urls) if isinstance(urls, list | tuple) else ([] if urls is None else [urls])
    first = _url_of(items[0]) if items else "?"
    more = f" (+{len(items) - 1:,} more)" if len(items) > 1 else ""
    return f"[web_extract] {first}{more} ({out.chars} chars)"


def _delegate_task(args: Mapping[str, Any], out: _Output) -> str:
    goal = _clip(_arg(args, "goal", ""), 57, 60)
    return f"[delegate_task] '{goal}' ({out.chars} chars result)"


def _execute_code(args: Mapping[str, Any], out: _Output) -> str:
    code = _arg(args, "code", "")
    preview = code[:60].replace("\n", " ") + ("..." if len(code) > 60 else "")
    return f"[execute_code] `{preview}` ({out.lines} lines output)"


def _vision_analyze(args: Mapping[str, Any], out: _Output) -> str:
    question = _arg(args, "question", "")[:50]
    return f"[vision_analyze] '{question}' ({out.chars} chars)"


def _memory(args: Mapping[str, Any], out: _Output) -> str:
    return f"[memory] {_arg(args, 'action', '?')} on {_arg(args, 'target', '?')}"


def _todo(args: Mapping[str, Any], out: _Output) -> str:
    return "[todo] updated task list"


def _clarify(args: Mapping[str, Any], out: _Output) -> str:
    return "[clarify] asked user a question"


def _text_to_speech(args: Mapping[str, Any], out: _Output) -> str:
    return f"[text_to_speech] generated audio ({out.chars} chars)"


def _cronjob(args: Mapping[str, Any], out: _Output) -> str:
    return f"[cronjob] {_arg(args, 'action', '?')}"


def _process(args: Mapping[str, Any], out: _Output) -> str:
    action = _arg(args, "action", "?")
    session = _arg(args, "session_id", "?")
    return f"[process] {action} session={session}"


_FORMATS: dict[str, Callable[[Mapping[str, Any], _Output], str]] = {
    "terminal": _terminal,
    "read_file": _read_file,
    "write_file": _write_file,
    "search_files": _search_files,
    "patch": _patch,
    "web_search": _web_search,
    "web_extract": _web_extract,
    "delegate_task": _delegate_task,
    "execute_code": _execute_code,
    "vision_analyze": _vision_analyze,
    "memory": _memory,
    "todo": _todo,
    "clarify": _clarify,
    "text_to_speech": _text_to_speech,
    "cronjob": _cronjob,
    "process": _process,
}


def _browser(name: str, args: Mapping[str, Any], out: _Output) -> str:
    url = _arg(args, "url", "")
    ref = _arg(args, "ref", "")
    detail = f" {url}" if url else (f" ref={ref}" if ref else "")
    return f"[{name}]{detail} ({out.chars} chars)"


def _skill(name: str, args: Mapping[str, Any], out: _Output) -> str:
    return f"[{name}] name={_arg(args, 'name', '?')} ({out.chars} chars)"


def _generic(name: str, args: Mapping[str, Any], out: _Output) -> str:
    shown = "".join(f" {key}={str(value)[:40]}" for key, value in list(args.items())[:2])
    return f"[{name}]{shown} ({out.chars} chars result)"


def summarize_tool_result(name: str, arguments: Mapping[str, Any], content: str) -> str:
    """The one-line summary of a tool result, in the format for its tool (CC-34).

    ``arguments`` is the parsed argument object of the call (``{}`` when unknown). Never
    raises: on any internal error the answer is ``[<name>] (<N> chars result)``.
    """
    text = content if isinstance(content, str) else ("" if content is None else str(content))
    out = _Output(text)
    try:
        args: Mapping[str, Any] = arguments if isinstance(arguments, Mapping) else {}
        tool = name if isinstance(name, str) and name else "unknown"
        fmt = _FORMATS.get(tool)
        if fmt is not None:
            return fmt(args, out) + _error_suffix(text)
        if tool in _BROWSER_TOOLS:
            return _browser(tool, args, out) + _error_suffix(text)
        if tool in _SKILL_TOOLS:
            return _skill(tool, args, out) + _error_suffix(text)
        return _generic(tool, args, out) + _error_suffix(text)
    except Exception:  # a summary must never break compaction; fall back to the size
        return _fallback(name, text)


def _error_suffix(text: str) -> str:
    """`` — error: <line>`` for an output whose end holds an error line, else ``""``."""
    line = last_error_line_at_end(text, ERROR_SCAN_CHARS)
    if not line:
        return ""
    quoted = " ".join(line.split())
    return " — error: " + _clip(quoted, ERROR_QUOTE_CHARS - 3, ERROR_QUOTE_CHARS)


def _fallback(name: object, text: str) -> str:
    try:
        label = str(name) if name else "unknown"
    except Exception:
        label = "unknown"
    return f"[{label}] ({len(text):,} chars result)"


def summarize_action_output(
    tool: str | None,
    arguments: Mapping[str, Any],
    command: str | None,
    output: str,
    exit_code: int | None,
) -> str:
    """The one-liner for an action's output that came back as a *user* message.

    Text-action agents (SWE-agent, mini-swe-agent, OpenHands without native calls) get
    their tool output as user messages; the reading names the action behind each one. An
    action with a command line reads ``[bash] ran `pytest -x` -> exit 1, 30 lines output
    (1,234 chars)``: the exit status only where the transcript stated it, ``?`` otherwise;
    the trailing size keeps the line recognisable to :func:`is_pruned_content`. Without a
    command the per-tool formats of :func:`summarize_tool_result` apply.
    """
    text = output if isinstance(output, str) else ""
    label = tool if isinstance(tool, str) and tool else "unknown"
    if not command:
        return summarize_tool_result(label, arguments, text)
    try:
        out = _Output(text)
        shown = _clip(" ".join(command.split()), 77, 80)
        code = "?" if exit_code is None else str(exit_code)
        return (
            f"[{label}] ran `{shown}` -> exit {code}, {out.lines} lines output ({out.chars} chars)"
            + ("" if exit_code == 0 else _error_suffix(text))
        )
    except Exception:  # a one-liner must never break compaction
        return _fallback(label, text)
