"""Turn a stored conversation into the text a recall summarizer reads, cut around the matches.

A past session can be hundreds of thousands of characters; the summarizer gets a window
of at most ``max_chars`` placed where the query's words cluster (spec SS-60, SS-61). These
are pure functions: no store, no model, no clock except in :func:`format_when`.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..messages import content_text, tool_calls_of
from .fts_query import query_terms

__all__ = [
    "EARLIER_MARKER",
    "LATER_MARKER",
    "TOOL_TRUNCATED",
    "demote_cron",
    "format_conversation",
    "format_when",
    "match_positions",
    "match_window",
    "truncate_around_matches",
]

EARLIER_MARKER = "...[earlier conversation truncated]...\n\n"
LATER_MARKER = "\n\n...[later conversation truncated]..."
TOOL_TRUNCATED = "\n...[truncated]...\n"

TOOL_CONTENT_LIMIT = 500
TOOL_CONTENT_KEEP = 250
PROXIMITY_CHARS = 200
"""SS-61 (b): the other terms must appear less than this many characters away."""


def _called_name(call: Any) -> str:
    if isinstance(call, Mapping):
        if call.get("name"):
            return str(call["name"])
        function = call.get("function")
        if isinstance(function, Mapping) and function.get("name"):
            return str(function["name"])
    return "?"


def format_conversation(messages: Iterable[Mapping[str, Any]]) -> str:
    """SS-60: one ``[ROLE]: text`` block per message, joined by blank lines.

    Long tool results keep their first and last 250 characters; an assistant turn that
    called tools first lists the calls.
    """
    blocks: list[str] = []
    for message in messages:
        role = str(message.get("role") or "unknown")
        text = content_text(message.get("content"))
        tool_name = message.get("name") or message.get("tool_name")
        if role == "tool" and tool_name:
            if len(text) > TOOL_CONTENT_LIMIT:
                text = text[:TOOL_CONTENT_KEEP] + TOOL_TRUNCATED + text[-TOOL_CONTENT_KEEP:]
            blocks.append(f"[TOOL:{tool_name}]: {text}")
            continue
        calls = tool_calls_of(message) if role == "assistant" else []
        if calls:
            blocks.append(f"[ASSISTANT]: [Called: {', '.join(_called_name(c) for c in calls)}]")
            if text:
                blocks.append(f"[ASSISTANT]: {text}")
            continue
        blocks.append(f"[{role.upper()}]: {text}")
    return "\n\n".join(blocks)


def _occurrences(haystack: str, needle: str) -> list[int]:
    found: list[int] = []
    if not needle:
        return found
    start = haystack.find(needle)
    while start != -1:
        found.append(start)
        start = haystack.find(needle, start + 1)
    return found


def match_positions(text: str, query: str) -> list[int]:
    """SS-61 step 1: where the query matches, best evidence first.

    (a) every occurrence of the whole phrase; else (b) positions of the rarest term that
    have every other term within 200 characters; else (c) every occurrence of every term.
    Positions come back sorted.
    """
    lower = text.lower()
    terms = query_terms(query)
    if not terms:
        return []
    phrase = _occurrences(lower, " ".join(terms))
    if phrase:
        return phrase
    positions = {term: _occurrences(lower, term) for term in dict.fromkeys(terms)}
    if len(positions) > 1 and all(positions.values()):
        rarest = min(positions, key=lambda t: len(positions[t]))
        others = [sorted(p) for t, p in positions.items() if t != rarest]
        near = [
            p
            for p in positions[rarest]
            if all(_within(other, p, PROXIMITY_CHARS) for other in others)
        ]
        if near:
            return near
    return sorted({p for found in positions.values() for p in found})


def _within(sorted_positions: Sequence[int], center: int, distance: int) -> bool:
    i = bisect.bisect_left(sorted_positions, center - distance + 1)
    return i < len(sorted_positions) and sorted_positions[i] < center + distance


def match_window(text: str, query: str, max_chars: int) -> tuple[int, int]:
    """SS-61 step 3: the ``[start, end)`` span of at most ``max_chars`` covering most matches.

    Each candidate window starts a quarter of ``max_chars`` before a match (25% before,
    75% after) and is shifted back when it would run past the end; the first window with
    the most matches wins. Without matches the window is the start of the text.
    """
    max_chars = max(1, int(max_chars))
    if len(text) <= max_chars:
        return 0, len(text)
    candidates = match_positions(text, query)
    if not candidates:
        return 0, max_chars
    best_start, best_count = 0, -1
    for c in candidates:
        start = max(0, c - max_chars // 4)
        start = min(start, len(text) - max_chars)
        count = bisect.bisect_left(candidates, start + max_chars) - bisect.bisect_left(
            candidates, start
        )
        if count > best_count:
            best_start, best_count = start, count
    return best_start, best_start + max_chars


def truncate_around_matches(full_text: str, query: str, max_chars: int = 100_000) -> str:
    """SS-61: ``full_text`` cut to ``max_chars`` around the matches, with truncation markers."""
    if len(full_text) <= max_chars:
        return full_text
    start, end = match_window(full_text, query, max_chars)
    prefix = EARLIER_MARKER if start > 0 else ""
    suffix = LATER_MARKER if end < len(full_text) else ""
    return prefix + full_text[start:end] + suffix


def format_when(value: Any) -> str:
    """SS-66: epoch seconds as local ``March 05, 2026 at 02:30 PM``; other strings unchanged."""
    if value is None:
        return "unknown"
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    else:
        return str(value)
    try:
        return datetime.fromtimestamp(number).strftime("%B %d, %Y at %I:%M %p")
    except (OverflowError, OSError, ValueError):
        return str(value)


def demote_cron(hits: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """SS-58: a stable partition; scheduled-job (``cron``) hits follow all the others."""
    return [h for h in hits if h.get("source") != "cron"] + [
        h for h in hits if h.get("source") == "cron"
    ]
