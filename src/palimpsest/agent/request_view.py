"""The history as a provider receives it, made once per message (issue 27, item 1).

Every model call sends ``[system] + history``, the history without the library's internal
``_``-prefixed keys and with this turn's recall fence on the turn's user message. Building
that afresh copied every message twice per call, so a turn cost O(history): 1,000 turns
into a session most of a turn's CPU went on copying messages it had copied the turn before.

:class:`RequestView` keeps each message's provider copy from the call it was first sent in,
keyed to the message object (the history's prefix is checked by identity, the way
:class:`~palimpsest.conversation_tokens.ConversationTokens` checks it): messages appended
since the last call are copied, a replaced or removed message drops its copy and every
copy after it (a compaction rebuilds once). It lives on the agent and dies with the
conversation; nothing is process-wide. As with the token counts, a message is never edited
in place once it is in the history (the agent replaces messages instead).

The copies are shared between calls, so what a call gets must be treated as read-only by
whoever sends it: the provider adapters build their own payloads (prompt caching marks
private copies), and the fenced user message is always a fresh copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..messages import content_text, role_of
from ..messages.native import for_request

__all__ = ["RequestView", "fenced"]

Message = dict[str, Any]


class RequestView:
    """Provider copies of one conversation's messages, made once per message."""

    def __init__(self) -> None:
        self._source: list[Message] = []
        self._copies: list[Message] = []

    def copies(self, history: Sequence[Message], *, first: Message | None = None) -> list[Message]:
        """``for_request(history)`` (after ``first``, when given), reusing the copies of
        messages already sent; the list is the caller's (one C-level copy per call)."""
        kept = self._kept(history)
        if kept < len(self._source):
            del self._source[kept:]
            del self._copies[kept:]
        for message in history[kept:]:
            self._source.append(message)
            # internal keys dropped, opaque provider items (a native compaction) kept
            self._copies.append(for_request((message,))[0])
        return [first, *self._copies] if first is not None else list(self._copies)

    def _kept(self, history: Sequence[Message]) -> int:
        """How many leading messages of ``history`` are the ones already copied."""
        known = len(self._source)
        # One C-level pass: list equality tries identity first, element by element.
        head = history[:known]
        if len(head) == known and (head if isinstance(head, list) else list(head)) == self._source:
            return known
        kept = 0
        for new, old in zip(history, self._source, strict=False):
            if new is not old:
                break
            kept += 1
        return kept


def fenced(
    copies: list[Message], fence: str, target: str | None, *, start: int = 0
) -> list[Message]:
    """``copies`` with ``fence`` appended to the turn's user message (a fresh copy of it).

    The message is the newest user message whose text is ``target`` (the turn's request,
    which may sit before a compaction's injected messages), else the newest user message;
    the search runs from the newest message back, so it stops near the end. Messages
    before ``start`` (a system message in front) are not searched.
    """
    if not fence:
        return copies
    chosen: int | None = None
    for index in range(len(copies) - 1, start - 1, -1):
        if role_of(copies[index]) != "user":
            continue
        if chosen is None:
            chosen = index  # the newest user message, if no text matches
        if content_text(copies[index].get("content")) == target:
            chosen = index
            break
    if chosen is None:
        return copies
    message = dict(copies[chosen])
    content = message.get("content")
    if isinstance(content, list):
        message["content"] = [*content, {"type": "text", "text": fence}]
    else:
        message["content"] = f"{content}\n\n{fence}" if content else fence
    copies[chosen] = message
    return copies
