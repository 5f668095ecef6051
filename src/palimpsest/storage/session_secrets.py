"""What a session has revealed: the secret values recognised anywhere in its messages.

A password redacted where it was typed (``password=X``) can reappear in the same session
with nothing around it that a rule could read ("then psql accepted X", a later tool
output). Every reader that shows stored text (search snippets, the ``session_search``
tool, ``sessions show/export --redact``) therefore redacts with the values the *whole
session* revealed, not only those of the text at hand: :func:`session_secrets` collects
them, once per session and search, and the reader passes them to
:func:`palimpsest.safety.redact.redact` as ``known``.

Collecting means redacting every message of the session once, so the result is cached per
database file and session, keyed by the session's last message id and count: a session
that gains a message is collected again, and an unchanged one costs a lookup.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

import apsw

from ..messages import call_arguments, call_name, content_text
from ..safety.redact import recognise

__all__ = ["hit_text", "session_secrets"]

_CACHE_SIZE = 256
_cache: OrderedDict[tuple[str, str, int, int], frozenset[str]] = OrderedDict()
_lock = threading.Lock()
_COLUMNS = ("content", "content_json", "tool_name", "tool_calls")


def hit_text(row: Mapping[str, Any]) -> str:
    """The searchable text of a ``messages`` row, readable: content, tool name, calls.

    The columns are the ones the word index holds (SS-07). List content is shown as its
    text; each tool call as ``name arguments`` with the arguments' JSON decoded once, so
    escaped quotes do not hide ``"password": "..."`` from redaction.
    """
    content = row.get("content")
    if content is not None and row.get("content_json"):
        with contextlib.suppress(ValueError):  # not JSON after all: show it as stored
            content = content_text(json.loads(str(content)))
    parts = [str(content or ""), str(row.get("tool_name") or "")]
    calls = row.get("tool_calls")
    if calls:
        try:
            decoded = json.loads(str(calls))
        except ValueError:
            parts.append(str(calls))
        else:
            listed = decoded if isinstance(decoded, list) else [decoded]
            parts += [f"{call_name(c)} {call_arguments(c)}" for c in listed]
    # one part a line: a value wrapped onto the content's last line ends at a line end
    return "\n".join(p for p in parts if p)


def _states(connection: apsw.Connection, session_ids: list[str]) -> dict[str, tuple[int, int]]:
    """Each session's last message id, and its count plus stored length (edits change it),
    in one statement per 500 sessions (one round trip on a server database)."""
    found: dict[str, tuple[int, int]] = {}
    for at in range(0, len(session_ids), 500):
        chunk = session_ids[at : at + 500]
        marks = ", ".join("?" for _ in chunk)
        rows = connection.execute(
            "SELECT session_id, COALESCE(MAX(id), 0), COUNT(*) + TOTAL(LENGTH(content)) + "
            f"TOTAL(LENGTH(tool_calls)) FROM messages WHERE session_id IN ({marks})"
            " GROUP BY session_id",
            chunk,
        )
        for sid, last, count in rows:
            found[str(sid)] = (int(last), int(count))
    return found


def _collect(connection: apsw.Connection, session_id: str) -> frozenset[str]:
    values: set[str] = set()
    cursor = connection.execute(
        f"SELECT {', '.join(_COLUMNS)} FROM messages WHERE session_id = ? ORDER BY id",
        (session_id,),
    )
    for row in cursor:
        text = hit_text(dict(zip(_COLUMNS, row, strict=True)))
        if text:
            _, found = recognise(text, values)
            values |= found
    return frozenset(values)


def session_secrets(
    connection: apsw.Connection, session_ids: Iterable[str]
) -> dict[str, frozenset[str]]:
    """``session id -> the secret values its messages revealed`` (an empty set when none)."""
    filename = str(getattr(connection, "filename", "") or "")
    found: dict[str, frozenset[str]] = {}
    wanted = list(dict.fromkeys(str(s) for s in session_ids))
    states = _states(connection, wanted)
    for session_id in wanted:
        last, count = states.get(session_id, (0, 0))
        key = (filename, session_id, last, count)
        with _lock:
            cached = _cache.get(key) if filename else None
            if cached is not None:
                _cache.move_to_end(key)
        if cached is None:
            cached = _collect(connection, session_id) if count else frozenset()
            if filename:
                with _lock:
                    _cache[key] = cached
                    while len(_cache) > _CACHE_SIZE:
                        _cache.popitem(last=False)
        found[session_id] = cached
    return found
