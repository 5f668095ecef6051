"""Stored text turned into the text people and models read: redacted first, then cut and marked.

Two readers see stored messages through this module. The ``session_search`` tool sends a
recall summarizer a window of at most ``max_chars`` of a past conversation, placed where
the query's words cluster (spec SS-60, SS-61), and returns part of it as a preview; the
``palimpsest sessions search`` command shows one snippet per message hit, with the matches
marked. Both pass through :func:`palimpsest.safety.redact.redact` *before* anything is
cut or marked: a cut through the middle of a key leaves a fragment no pattern recognises,
and a ``>>>match<<<`` marker inside ``password=...`` breaks the pattern that would have
caught it. Highlighting therefore runs on redacted text, and a match inside a secret is
simply not highlighted (the secret is gone).

Everything here is a pure function except :func:`hit_texts`, which reads the hits' raw
text from the store so their snippets are cut in Python rather than by FTS5's
``snippet()``, which sees only the raw text.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import apsw

from ..messages import content_text, tool_calls_of
from ..safety.redact import REDACTED, redact, redact_together
from .fts_query import is_cjk
from .fts_sanitize import OPERATORS, clean_query, query_terms
from .session_secrets import ROW_COLUMNS, hit_text, row_text, session_secrets

__all__ = [
    "EARLIER_MARKER",
    "LATER_MARKER",
    "MARK_CLOSE",
    "MARK_OPEN",
    "SNIPPET_CHARS",
    "TOOL_TRUNCATED",
    "Snippet",
    "demote_cron",
    "format_conversation",
    "format_when",
    "highlight_spans",
    "hit_snippets",
    "hit_text",
    "hit_texts",
    "make_snippet",
    "match_positions",
    "match_preview",
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


def format_conversation(messages: Iterable[Mapping[str, Any]], known: Iterable[str] = ()) -> str:
    """SS-60: one ``[ROLE]: text`` block per message, joined by blank lines.

    Long tool results keep their first and last 250 characters; an assistant turn that
    called tools first lists the calls. The messages are redacted together (a value one of
    them reveals goes from all; ``known`` adds values found elsewhere) before that cut, so
    a key straddling character 250 is not left half-visible.
    """
    messages = list(messages)
    texts = redact_together((content_text(m.get("content")) for m in messages), known)
    blocks: list[str] = []
    for message, text in zip(messages, texts, strict=True):
        role = str(message.get("role") or "unknown")
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


def truncate_around_matches(
    full_text: str, query: str, max_chars: int = 100_000, known: Iterable[str] = ()
) -> str:
    """SS-61: ``full_text``, redacted, cut to ``max_chars`` around the matches, with markers."""
    full_text = redact(full_text, known)
    if len(full_text) <= max_chars:
        return full_text
    start, end = match_window(full_text, query, max_chars)
    prefix = EARLIER_MARKER if start > 0 else ""
    suffix = LATER_MARKER if end < len(full_text) else ""
    return prefix + full_text[start:end] + suffix


def match_preview(text: str, query: str, max_chars: int, known: Iterable[str] = ()) -> str:
    """SS-64/SS-65: ``text``, redacted, cut to ``max_chars`` around the matches, no markers.

    The window is :func:`match_window`'s; when it does not start at the beginning it is moved
    forward to the next word (within 40 characters), so the preview does not open mid-word.
    """
    text = redact(text, known)
    start, end = match_window(text, query, max_chars)
    if start > 0:
        space = text.find(" ", start, start + 40)
        start = space + 1 if space != -1 else start
    return text[start:end]


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


# -- search-hit snippets ------------------------------------------------------------------

SNIPPET_CHARS = 240
"""Characters of a hit's snippet: about the 40 tokens FTS5's ``snippet()`` shows (SS-47)."""
MARK_OPEN = ">>>"
MARK_CLOSE = "<<<"
ELLIPSIS = "..."

# unicode61 (the word index's tokenizer) splits on everything but letters and digits, "_"
# included, so DB_PASSWORD holds the word "password" for highlighting as for the index.
_WORD = re.compile(r"[^\W_]+")
_REDACTED = re.compile(re.escape(REDACTED))
# Enough stemming to mark "donated" for "donate" and "researching" for "research": the
# index decides what matched, this only decides which words of a hit look like the query.
_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ers", "er", "es", "ed", "s")
_SNAP_CHARS = 30
"""How far a cut may move to land between words instead of inside one."""


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


@functools.lru_cache(maxsize=128)
def _query_words(query: str) -> tuple[tuple[str, bool], ...]:
    """The query's terms, lower-cased, each with whether it was a ``prefix*``.

    Cached: every hit of a search asks for the same query's terms."""
    found: list[tuple[str, bool]] = []
    for raw in clean_query(query).replace('"', " ").split():
        if raw in OPERATORS or raw.startswith("NEAR("):
            raw = raw[5:] if raw.startswith("NEAR(") else ""
        for piece in re.split(r"[(),]", raw):
            terms = query_terms(piece)
            if terms:
                found.append((terms[0], piece.rstrip(")").endswith("*")))
    return tuple(found)


@dataclass(frozen=True)
class Snippet:
    """A redacted excerpt of one message and the ``[start, end)`` spans that match the query."""

    text: str
    spans: tuple[tuple[int, int], ...] = ()

    def marked(self, open_mark: str = MARK_OPEN, close_mark: str = MARK_CLOSE) -> str:
        """The text with every span wrapped in ``open_mark`` / ``close_mark``."""
        pieces: list[str] = []
        last = 0
        for start, end in self.spans:
            pieces += [self.text[last:start], open_mark, self.text[start:end], close_mark]
            last = end
        pieces.append(self.text[last:])
        return "".join(pieces)


def highlight_spans(text: str, query: str) -> list[tuple[int, int]]:
    """Sorted, non-overlapping spans of ``text`` that match a term of ``query``.

    A plain word matches a whole word of the text with the same spelling or stem (or any
    word it begins, for ``prefix*``); a term with punctuation or CJK characters matches as
    a case-insensitive substring. Nothing inside a ``[REDACTED]`` marker is a match. Give
    this redacted text: it marks whatever it is given.
    """
    words: set[str] = set()
    stems: set[str] = set()
    prefixes: list[str] = []
    found: list[tuple[int, int]] = []
    for term, prefix in _query_words(query):
        if _WORD.fullmatch(term) and not any(is_cjk(ch) for ch in term):
            words.add(term)
            stems.add(_stem(term))
            if prefix:
                prefixes.append(term)
        else:
            found += [m.span() for m in re.finditer(re.escape(term), text, re.IGNORECASE)]
    if words:
        # Every word that can match begins with a term's stem: let the regex engine find
        # those (in C), then check each candidate.
        heads = sorted(stems | set(prefixes), key=len, reverse=True)
        candidates = re.compile(
            r"(?<![^\W_])(?:" + "|".join(map(re.escape, heads)) + r")[^\W_]*", re.IGNORECASE
        )
        starts = tuple(prefixes)
        for match in candidates.finditer(text):
            word = match.group().lower()
            if word in words or (starts and word.startswith(starts)) or _stem(word) in stems:
                found.append(match.span())
    masked = [m.span() for m in _REDACTED.finditer(text)]
    spans: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if any(start < m_end and m_start < end for m_start, m_end in masked):
            continue
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], end))
        else:
            spans.append((start, end))
    return spans


def _snippet_window(text: str, spans: Sequence[tuple[int, int]], size: int) -> tuple[int, int]:
    """The ``[start, end)`` of at most ``size`` characters holding the most spans."""
    if len(text) <= size:
        return 0, len(text)
    if not spans:
        start = 0
    else:
        starts = [s for s, _ in spans]
        start, best = 0, -1
        for first in starts:
            candidate = min(max(0, first - size // 4), len(text) - size)
            count = bisect.bisect_left(starts, candidate + size) - bisect.bisect_left(
                starts, candidate
            )
            if count > best:
                start, best = candidate, count
    end = start + size
    inside = [span for span in spans if start <= span[0] and span[1] <= end]
    if start > 0:
        space = text.find(" ", start, start + _SNAP_CHARS)
        if space != -1 and (not inside or space < inside[0][0]):
            start = space + 1
    if end < len(text):
        space = text.rfind(" ", end - _SNAP_CHARS, end)
        if space > start and (not inside or space >= inside[-1][1]):
            end = space
    return start, end


def make_snippet(
    text: str, query: str, max_chars: int = SNIPPET_CHARS, known: Iterable[str] = ()
) -> Snippet:
    """One line of ``text`` around its best matches: redacted, then cut, then marked.

    ``known`` are secret values found elsewhere in the same session (see
    :mod:`.session_secrets`); they go wherever they show. Whitespace runs become single spaces. The excerpt holds at most ``max_chars`` of the
    text, chosen to hold the most matches (starting about a quarter before the first),
    moved to word boundaries where it can be, with ``...`` where it was cut.
    """
    safe = " ".join(redact(text, known).split())
    spans = highlight_spans(safe, query)
    start, end = _snippet_window(safe, spans, max(1, int(max_chars)))
    head = ELLIPSIS if start > 0 else ""
    shift = len(head) - start
    kept = tuple(
        (max(s, start) + shift, min(e, end) + shift) for s, e in spans if s < end and e > start
    )
    tail = ELLIPSIS if end < len(safe) else ""
    return Snippet(head + safe[start:end] + tail, kept)


def hit_texts(connection: apsw.Connection, ids: Iterable[int]) -> dict[int, str]:
    """``message id -> hit_text`` for the given ids (missing ids are left out)."""
    wanted = sorted({int(i) for i in ids})
    texts: dict[int, str] = {}
    for at in range(0, len(wanted), 500):  # stay far below SQLite's variable limit
        chunk = wanted[at : at + 500]
        marks = ", ".join("?" for _ in chunk)
        cursor = connection.execute(
            f"SELECT {ROW_COLUMNS} FROM messages WHERE id IN ({marks})", chunk
        )
        for row in cursor:
            texts[int(row[0])] = row_text(row[1:])
    return texts


def hit_snippets(
    connection: apsw.Connection,
    hits: Sequence[Mapping[str, Any]],
    query: str,
    max_chars: int = SNIPPET_CHARS,
) -> list[Snippet]:
    """A :func:`make_snippet` for each hit (by its ``id``), in order, from the raw rows.

    Use this instead of the ``snippet`` column FTS5 computes: that one is cut and marked
    inside SQLite, on text nobody has redacted yet. Each snippet is redacted with every
    secret value its session revealed (:func:`.session_secrets.session_secrets`, collected
    once per session), so a value typed under a name in one message does not show bare in
    another.
    """
    texts = hit_texts(connection, (h["id"] for h in hits))
    sessions = [str(h.get("session_id") or "") for h in hits]
    secrets = session_secrets(connection, (s for s in sessions if s))
    return [
        make_snippet(texts.get(int(h["id"]), ""), query, max_chars, secrets.get(sid, ()))
        for h, sid in zip(hits, sessions, strict=True)
    ]
