"""Phase 2: where the protected head ends and the protected tail begins.

Which messages stay verbatim is decided by position and a token budget, never by a model.
The alignment rules exist so that a cut never separates a tool call from its results (a
split group either becomes an invalid request or silently loses the results), and so the
newest user request and the last visible reply are never folded into the summary.

"User request" and "reply" come from :mod:`palimpsest.messages.reading`: a text-action
agent's observation is a user message too (``OBSERVATION: …``, ``<returncode>…``), and
choosing it as the newest request would keep tool output verbatim while the person's
actual request was summarized away.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..messages.content import content_text, role_of, tool_calls_of
from ..messages.reading import MessageReading, read_from
from ..tokens import message_budget_tokens

__all__ = [
    "MIN_TAIL_MESSAGES",
    "TAIL_SOFT_CEILING",
    "align_backward",
    "align_forward",
    "find_tail_cut",
]

MIN_TAIL_MESSAGES = 3
"""Hard minimum of messages kept in the tail (CC-47)."""

TAIL_SOFT_CEILING = 1.5
"""The tail may exceed its budget by this factor so one large message is not cut apart."""

MIN_SUMMARIZED_TOKENS = 2_000
"""A budget-shaped tail (CC-52) must leave at least this much to summarize; less than
about a summary's own size would not shrink the conversation."""

Messages = Sequence[dict[str, Any]]


def align_forward(messages: Messages, idx: int) -> int:
    """Advance ``idx`` past tool results so the span after it never starts on one (CC-46)."""
    n = len(messages)
    while idx < n and role_of(messages[idx]) == "tool":
        idx += 1
    return idx


def align_backward(messages: Messages, idx: int) -> int:
    """Pull a cut inside a tool group back before the assistant that opened it (CC-48).

    Only a cut that lands *on* a tool result splits a group. A cut at a user or assistant
    message right after a finished group leaves the group whole in the middle, so it stays
    put; moving it anyway (as the reference code does) would pull a finished group into
    the tail and contradicts the seed's own before/after example.
    """
    if idx <= 0 or idx >= len(messages) or role_of(messages[idx]) != "tool":
        return idx
    check = idx - 1
    while check >= 0 and role_of(messages[check]) == "tool":
        check -= 1
    if check >= 0 and role_of(messages[check]) == "assistant" and tool_calls_of(messages[check]):
        return check
    return idx


class _Window(Sequence[MessageReading]):
    """Readings of ``messages[start:]`` indexed like the whole list (below ``start``: none)."""

    def __init__(self, readings: list[MessageReading], start: int, n: int) -> None:
        self._readings = readings
        self._start = start
        self._n = n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: Any) -> Any:
        return self._readings[i - self._start]


def _read_back(messages: Messages, head_end: int) -> _Window:
    """Read only as far back as the newest request (windows doubling from the end).

    A caller without readings (``has_content_to_compress`` on every turn) must not pay for
    the whole list: the newest request and reply are near the end in a live conversation.
    """
    n = len(messages)
    size = 64
    while True:
        start = max(n - size, head_end, 0)
        readings = read_from(messages, start)
        window = _Window(readings, start, n)
        if start <= head_end or (
            any(r.kind == "request" for r in readings)
            and any(_visible_reply(messages, r) for r in readings)
        ):
            return window
        size *= 4


def _visible_reply(messages: Messages, reading: MessageReading) -> bool:
    return _is_reply(reading) and bool(content_text(messages[reading.index].get("content")).strip())


def _newest(readings: Sequence[MessageReading], start: int, predicate: Any) -> int | None:
    if isinstance(readings, _Window):
        start = max(start, readings._start)
    for i in range(len(readings) - 1, start - 1, -1):
        if predicate(readings[i]):
            return i
    return None


def _nth_newest_request(readings: Sequence[MessageReading], start: int, count: int) -> int | None:
    """Index of the ``count``-th newest real user request after ``start`` (the oldest one
    there is when fewer exist); ``None`` when there is none."""
    if isinstance(readings, _Window):
        start = max(start, readings._start)
    found: int | None = None
    seen = 0
    for i in range(len(readings) - 1, start - 1, -1):
        if readings[i].kind == "request":
            found = i
            seen += 1
            if seen >= count:
                break
    return found


def _is_request(reading: MessageReading) -> bool:
    return reading.kind == "request"


def _is_reply(reading: MessageReading) -> bool:
    return reading.kind == "assistant"


def _end_of_turn(messages: Messages, user_idx: int) -> int:
    """Index just past a user message, the assistant answering it, and that one's results."""
    n = len(messages)
    idx = user_idx + 1
    if idx < n and role_of(messages[idx]) == "assistant":
        idx += 1
        idx = align_forward(messages, idx)
    return idx


def _rewalk(messages: Messages, head_end: int, budget: int, min_tail: int) -> int:
    """The cut where the newest messages first exceed ``budget`` (no soft ceiling)."""
    n = len(messages)
    acc = 0
    cut = n
    for i in range(n - 1, head_end - 1, -1):
        tokens = message_budget_tokens(messages[i])
        if acc + tokens > budget and n - i >= min_tail:
            break
        acc += tokens
        cut = i
    return cut


def find_tail_cut(
    messages: Messages,
    head_end: int,
    budget: int,
    *,
    readings: Sequence[MessageReading] | None = None,
    min_user_messages: int = 1,
) -> int:
    """The first index of the protected tail (CC-47 to CC-51, CC-56).

    Walks backward accumulating per-message estimates up to 1.5x ``budget`` with a
    minimum of three messages. When everything after the head fits under that ceiling, it
    walks again with the raw budget, less whatever it takes to leave
    :data:`MIN_SUMMARIZED_TOKENS` to summarize (CC-52, on in every profile: the tail takes
    what its budget allows rather than three messages). Then it aligns so no tool group is split, keeps the newest
    real user request (reading kind ``request``) and the last visible assistant reply in
    the tail, and never returns less than ``head_end + 1``. ``readings`` is the list's
    reading when the caller already has it; otherwise it is read here.
    """
    if readings is None or len(readings) != len(messages):
        # N kept requests may lie further back than the newest request and reply.
        readings = (
            _read_back(messages, head_end)
            if min_user_messages <= 1
            else _Window(read_from(messages, head_end), head_end, len(messages))
        )
    n = len(messages)
    min_tail = min(MIN_TAIL_MESSAGES, n - head_end - 1) if n - head_end > 1 else 0
    soft_ceiling = int(budget * TAIL_SOFT_CEILING)
    acc = 0
    cut = n
    for i in range(n - 1, head_end - 1, -1):
        tokens = message_budget_tokens(messages[i])
        if acc + tokens > soft_ceiling and n - i >= min_tail:
            break
        acc += tokens
        cut = i
    if cut <= head_end and acc - MIN_SUMMARIZED_TOKENS > 0:
        # Everything after the head fit under the soft ceiling (CC-52): rather than the
        # three-message fallback, walk again so the tail is budget-shaped: up to the raw
        # budget, leaving at least MIN_SUMMARIZED_TOKENS to summarize (less would not
        # shrink the conversation). Too little for that: CC-47's fallback below.
        cut = _rewalk(messages, head_end, min(budget, acc - MIN_SUMMARIZED_TOKENS), min_tail)
    fallback_cut = n - min_tail
    cut = min(cut, fallback_cut)
    if cut <= head_end:
        cut = max(fallback_cut, head_end + 1)
    cut = align_backward(messages, cut)

    # The active task must never be lost into the summary (CC-49).
    last_user = _newest(readings, head_end, _is_request)
    if last_user is not None and last_user < cut:
        cut = max(last_user, head_end + 1)

    # The last N real user messages stay verbatim (compression.min_tail_user_messages),
    # even past the tail's budget; the fit step after assembly is what still bounds them.
    if min_user_messages > 1:
        oldest_kept = _nth_newest_request(readings, head_end, min_user_messages)
        if oldest_kept is not None and oldest_kept < cut:
            cut = max(oldest_kept, head_end + 1)

    # The final visible reply stays where the user can see it (CC-51).
    last_reply = _newest(
        readings,
        head_end,
        lambda r: _visible_reply(messages, r),
    )
    if last_reply is None:
        last_reply = _newest(readings, head_end, _is_reply)
    if last_reply is not None and last_reply < cut:
        cut = max(align_backward(messages, last_reply), head_end + 1)

    # A request sitting exactly at the head boundary cannot stay verbatim; summarize its
    # whole completed exchange together rather than the request without its answer (CC-50).
    if last_user is not None and last_user == head_end:
        cut = max(cut, _end_of_turn(messages, last_user))

    cut = max(cut, head_end + 1)
    # A raised floor must not start the tail on a result whose call is summarized (CC-56).
    return align_forward(messages, cut)
