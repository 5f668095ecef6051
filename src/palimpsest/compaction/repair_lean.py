"""Repair by removal only: the fallback when the faithful repairs would grow the list.

:func:`~palimpsest.compaction.repair.normalize_messages` can add tokens (a stub result, an
invented id, a serialized argument object). When its result counts more than the input,
``compress`` repairs with :func:`lean_repair` instead, which only removes and joins, so it
can never add a token. It shares the faithful walk over the list and keeps what that walk
would keep in ``"lean"`` mode.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from ..messages.content import call_id, role_of
from .repair import RepairWalk

__all__ = ["lean_repair"]


def lean_repair(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A valid list made from ``messages`` by removal only: never more tokens than the input.

    Calls that would need an invented id, name or arguments are removed, as are legacy
    function messages, results that answer no call of their group (or answer one twice),
    and calls left unanswered; an assistant message left with neither calls nor content
    gets ``""`` as content. Messages are never merged, so no text is joined.
    """
    walk = RepairWalk("lean")
    for index, message in enumerate(messages):
        walk.message(index, message)
    adjacent = {(id(a), id(b)) for a, b in itertools.pairwise(messages)}
    return _join_new_pairs(_lean_pairs(walk.out), adjacent)


def _lean_pairs(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    emptied: set[int] = set()  # assistant messages whose only calls were removed
    group_at = -1
    open_ids: set[str] = set()
    answered: set[str] = set()

    def close() -> None:
        if group_at < 0:
            return
        message = out[group_at]
        calls = [c for c in message["tool_calls"] if call_id(c) in answered]
        if len(calls) == len(message["tool_calls"]):
            return
        new = {k: v for k, v in message.items() if k != "tool_calls"}
        if calls:
            new["tool_calls"] = calls
        elif new.get("content") is None:
            new["content"] = ""
            emptied.add(group_at)
        out[group_at] = new

    for message in messages:
        if role_of(message) == "tool":
            cid = message.get("tool_call_id")
            if group_at >= 0 and isinstance(cid, str) and cid in open_ids - answered:
                answered.add(cid)
                out.append(message)
            continue
        close()
        group_at, open_ids, answered = -1, set(), set()
        out.append(message)
        if role_of(message) == "assistant" and message.get("tool_calls"):
            group_at = len(out) - 1
            open_ids = {call_id(c) for c in message["tool_calls"]}
    close()
    return _drop_emptied(out, emptied)


def _join_new_pairs(
    messages: list[dict[str, Any]], adjacent: set[tuple[int, int]]
) -> list[dict[str, Any]]:
    """Join two user (or two plain assistant) messages that a removal made adjacent.

    Joining saves the second message's framing tokens and adds only the blank line
    between the texts, so it keeps the repair from growing.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        prev = out[-1] if out else None
        role = role_of(message)
        if (
            prev is not None
            and role in ("user", "assistant")
            and role_of(prev) == role
            and not prev.get("tool_calls")
            and (id(prev), id(message)) not in adjacent
        ):
            out[-1] = {**message, "content": _joined(prev.get("content"), message.get("content"))}
            continue
        out.append(message)
    return out


def _joined(first: Any, second: Any) -> Any:
    if isinstance(first, list) or isinstance(second, list):
        as_parts = [
            c if isinstance(c, list) else ([{"type": "text", "text": c}] if c else [])
            for c in (first, second)
        ]
        return as_parts[0] + as_parts[1]
    if not first or not second:
        return first or second
    return f"{first}\n\n{second}"


def _drop_emptied(messages: list[dict[str, Any]], emptied: set[int]) -> list[dict[str, Any]]:
    """Remove an emptied assistant message next to another assistant message; one between
    two user messages stays, as ``""``, to keep them apart."""
    out: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        if i in emptied:
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            if (out and role_of(out[-1]) == "assistant") or (
                nxt is not None and role_of(nxt) == "assistant"
            ):
                continue
        out.append(message)
    return out
