"""Whether the conversation acts through native tool calls, learned once per message.

Reading the newest messages (is this user message a text action's observation?) depends on
one fact about the whole history: a conversation that has used native tool calls reads
fenced code as code, one that has not may be a text-action run. Scanning the history for
it on every turn made a tool-less conversation's turn O(history) (issue 27, item 1).

:class:`NativeTraffic` scans each message once, when it first appears, and keeps the
answer for its conversation only: a new list (a compaction, a resumed or new session) or a
shorter one (a removed message) is scanned again from the start. Like the token counts and
the provider copies, it relies on the agent replacing messages rather than editing them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..messages.reading import has_native_traffic

__all__ = ["NativeTraffic"]


class NativeTraffic:
    """``has_native_traffic(history)``, scanning only messages not seen before."""

    def __init__(self) -> None:
        self._list: list[Any] | None = None
        self._seen = 0
        self._last: Any = None
        self._found = False

    def of(self, history: list[Any]) -> bool:
        """Does ``history`` (the agent's message list) contain native tool traffic?"""
        same = (
            history is self._list
            and len(history) >= self._seen
            and (self._seen == 0 or history[self._seen - 1] is self._last)
        )
        if not same:
            self._list, self._seen, self._found = history, 0, False
        if not self._found and len(history) > self._seen:
            self._found = has_native_traffic(_tail(history, self._seen))
        self._seen = len(history)
        self._last = history[-1] if history else None
        return self._found


def _tail(history: list[Any], start: int) -> Sequence[Any]:
    return history[start:] if start else history
