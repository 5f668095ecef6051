"""How agent events look in a terminal: one renderer for ``palimpsest chat`` and ``replay``.

The loop yields typed events (:mod:`palimpsest.agent.events`) and never prints; this module
turns them into short lines. The line builders are pure functions of an event (tested on
their own); :class:`EventRenderer` only decides where each line goes. Everything shown
passes through :func:`~palimpsest.safety.redact.redact` first, so a key a tool printed
does not end up on the screen or in a captured log, and then through
:func:`~palimpsest.cli.terminal_text.for_terminal`, so a control sequence or bidi override a
model or a tool wrote is shown, not obeyed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape

from ..agent.events import (
    AgentEvent,
    CompactionEvent,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnd,
    UsageEvent,
    WarningEvent,
)
from ..safety.redact import redact
from .terminal_text import for_terminal

__all__ = [
    "ARG_WIDTH",
    "LINE_WIDTH",
    "STATUS_KEYS",
    "EventRenderer",
    "compaction_line",
    "human_size",
    "short_id",
    "shorten",
    "status_figure",
    "status_line",
    "tool_call_line",
    "tool_result_line",
    "turn_end_line",
    "usage_line",
]

LINE_WIDTH = 100
"""Widest a one-line summary of a tool call or result gets."""

ARG_WIDTH = 40
"""Widest one argument value gets in a tool-call line."""

SHORT_ID = 24
"""Characters of a session id shown: the store's ids (``20260101_093000_a1b2c3``, 22) whole,
since their first characters are only the date; longer foreign ids are cut."""


def shorten(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: max(width - 1, 0)] + "…"


def short_id(session_id: str | None) -> str:
    """A session id as shown (cut when longer than :data:`SHORT_ID`); ``?`` for none."""
    return session_id[:SHORT_ID] if session_id else "?"


def human_size(text: str) -> str:
    """The UTF-8 size of ``text``: ``512 B``, ``1.2 KB``, ``3.4 MB``."""
    size = len(text.encode("utf-8", "replace"))
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def _argument(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return json.dumps(shorten(text, ARG_WIDTH), ensure_ascii=False)


def tool_call_line(event: ToolCallEvent) -> str:
    """``→ run_shell command="ls -la"``: the name and each argument, shortened."""
    try:
        parsed = json.loads(event.arguments) if event.arguments.strip() else {}
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        args = " ".join(f"{key}={_argument(value)}" for key, value in parsed.items())
    else:
        args = shorten(event.arguments, ARG_WIDTH)
    return shorten(redact(f"→ {event.name} {args}".rstrip()), LINE_WIDTH)


def tool_result_line(event: ToolResultEvent) -> str:
    """``← first line of the result (1.2 KB, 0.03 s)``, or ``✗`` for a failed call."""
    lines = [line for line in event.content.splitlines() if line.strip()]
    first = lines[0] if lines else "(empty)"
    more = f", {len(lines)} lines" if len(lines) > 1 else ""
    facts = f" ({human_size(event.content)}{more}, {event.seconds:.2f} s)"
    mark = "✗" if event.is_error else "←"
    head = shorten(redact(first), LINE_WIDTH - len(facts) - 4)
    return f"  {mark} {head}{facts}"


def compaction_line(event: CompactionEvent) -> str:
    """What a compaction did: path, messages and tokens before → after, time, sessions."""
    if not event.compacted:
        why = f": {redact(event.reason)}" if event.reason else ""
        return f"⟳ compaction ({event.path}) did not compact{why}"
    line = (
        f"⟳ compaction ({event.path}): {event.before_messages:,} → {event.after_messages:,} "
        f"messages, {event.before_tokens:,} → {event.after_tokens:,} tokens, "
        f"{event.seconds:.2f} s"
    )
    if event.session_id:
        line += f" · session {short_id(event.session_id)}"
        if event.parent_session_id:
            line += f" (parent {short_id(event.parent_session_id)})"
    if event.fallback_used:
        line += " · fallback summary"
    if event.reason:
        line += f" · {redact(event.reason)}"
    return line


STATUS_KEYS = {
    "used": ("used", "tokens"),
    "window": ("window", "context_length"),
    "threshold": ("threshold", "threshold_tokens"),
    "percent": ("percent", "percent_of_window"),
}
"""The figures of ``Agent.context_status()`` the status line reads, each under the names it
may carry (the short names first)."""


def status_figure(status: Mapping[str, Any], figure: str) -> int | float | None:
    """One number of a context-status dict (``used``, ``window``, ``threshold``,
    ``percent``); ``None`` when it is absent or not a number."""
    for key in STATUS_KEYS[figure]:
        value = status.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
    return None


def status_line(status: Mapping[str, Any]) -> str:
    """``ctx 12,345/128,000 (9.6%, next request) · threshold 64,000 · 1 compaction · session
    ab12cd34``: the figure is the next request (messages, system prompt and tool schemas).

    An estimated figure (no usage from the provider) is marked ``~``; an unknown one is
    ``?``, never ``0``.
    """
    used = status_figure(status, "used")
    window = status_figure(status, "window")
    threshold = status_figure(status, "threshold")
    percent = status_figure(status, "percent")
    mark = "~" if status.get("estimated") else ""
    used_text = f"{mark}{int(used):,}" if used is not None else "?"
    line = f"ctx {used_text}/{int(window):,}" if window else f"ctx {used_text}/?"
    if percent is not None and used is not None:
        line += f" ({mark}{percent:.1f}%, next request)"
    elif used is not None:
        line += " (next request)"
    if threshold is not None:
        line += f" · threshold {int(threshold):,}"
    count = status.get("compactions")
    compactions = count if isinstance(count, int) and not isinstance(count, bool) else 0
    line += f" · {compactions} compaction{'' if compactions == 1 else 's'}"
    line += f" · session {short_id(status.get('session_id'))}"
    return line


def usage_line(event: UsageEvent) -> str:
    """``usage: 1,234 in, 56 out``; ``usage: not reported (~1,234 in by estimate)``."""
    if event.usage is not None:
        return f"usage: {event.usage.prompt_tokens:,} in, {event.usage.output_tokens:,} out"
    if event.prompt_tokens is not None:
        return f"usage: not reported (~{event.prompt_tokens:,} in by estimate)"
    return "usage: not reported"


def turn_end_line(event: TurnEnd) -> str | None:
    """A line when the turn did not simply finish: interrupted, stopped by an error."""
    if event.interrupted:
        return "interrupted: the turn stopped; the session is kept"
    if event.error:
        return f"turn stopped: {redact(event.error)}"
    if not event.completed and event.partial:
        return "turn stopped with a partial answer"
    return None


class EventRenderer:
    """Prints events as they come: assistant text as it streams, everything else as one
    dim line each. ``usage=True`` also prints a line per model call (``replay`` does)."""

    def __init__(self, console: Console, *, usage: bool = False) -> None:
        self.console = console
        self.usage = usage
        self._open_text = False

    def _end_text(self) -> None:
        if self._open_text:
            self.console.print()
            self._open_text = False

    def _line(self, text: str, style: str) -> None:
        self._end_text()
        self.console.print(f"[{style}]{escape(for_terminal(text))}[/]", highlight=False)

    def render(self, event: AgentEvent) -> None:
        """Print one event."""
        if isinstance(event, TextDelta):
            if event.text:
                shown = for_terminal(redact(event.text))
                self.console.print(shown, end="", markup=False, highlight=False)
                self._open_text = not event.text.endswith("\n")
        elif isinstance(event, ToolCallEvent):
            self._line(tool_call_line(event), "cyan")
        elif isinstance(event, ToolResultEvent):
            self._line(tool_result_line(event), "red" if event.is_error else "dim")
        elif isinstance(event, CompactionEvent):
            self._line(compaction_line(event), "magenta")
        elif isinstance(event, WarningEvent):
            self._line(f"warning: {redact(event.message)}", "yellow")
        elif isinstance(event, UsageEvent):
            if self.usage:
                self._line(usage_line(event), "dim")
        elif isinstance(event, TurnEnd):
            self._end_text()
            line = turn_end_line(event)
            if line:
                self._line(line, "yellow" if event.interrupted else "red")

    def finish(self) -> None:
        """End an open line of assistant text."""
        self._end_text()
