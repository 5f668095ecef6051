"""Fit the memory flush's request to the window it is sent to.

The flush runs when the conversation is at its largest: at the compaction threshold, or
after the provider has already refused it (the reactive path). Sent as it is, the
conversation plus the flush message, the memory tool's schema and the flush's output cap
(5,120 tokens, MEM-60) can be more than the window: at a 16K window and the 85% threshold
the flush request alone reached 16.3K rough tokens in the long-session test. A flush that
overflows is a wasted call, and the memories it was meant to save are lost.

So before the call the request is shrunk, cheapest loss first:

1. the output cap is lowered to what the window leaves (down to :data:`FLUSH_MIN_OUTPUT`);
2. old tool output is pruned to one-liners, as the compressor's first phase does: the
   flush is about the user's preferences and corrections, not about tool output;
3. the newest turns are left out, whole (the cut falls before a user message): they stay
   in the context after the compaction, so nothing is lost by not showing them now, while
   the older turns, which the compaction is about to summarize, are what the flush is for.

When even that does not fit, :func:`fit_flush_request` returns ``None`` and the caller
skips the flush and says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..compaction.prune import prune_tool_results
from ..tokens import CHARS_PER_TOKEN, estimate_request_tokens_rough, message_chars

__all__ = ["FLUSH_MIN_OUTPUT", "FLUSH_WINDOW_SHARE", "fit_flush_request"]

FLUSH_MIN_OUTPUT = 512
"""Tokens the flush's reply must be allowed at least: room for a few memory calls."""
FLUSH_WINDOW_SHARE = 0.9
"""Of the window, what the flush request is fitted to: the estimate is calibrated on earlier
requests, whose mix of prose, code and tool output differs from this one's by up to about
10% (measured in tests/test_agent_long_session.py); a flush that overflows is a lost call."""


Measure = Callable[[int], int]
"""Turns a rough request estimate into the caller's best figure (e.g. calibrated)."""


def _rough(request: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> int:
    return estimate_request_tokens_rough(request, tools=tools)


def fit_flush_request(
    system: Mapping[str, Any],
    history: Sequence[dict[str, Any]],
    flush: Mapping[str, Any],
    tools: Sequence[Mapping[str, Any]],
    window: int | None,
    cap: int,
    measure: Measure | None = None,
) -> tuple[list[dict[str, Any]], int] | None:
    """``([system] + history' + [flush], cap')`` that fits ``window``, or ``None``.

    ``history`` is the conversation without the system prompt; it is never modified.
    Without a known ``window`` the request is returned whole with ``cap``. ``measure``
    scales the rough estimate (TK-03) to the model's real count, e.g.
    ``EstimateCalibrator.calibrated``; the rough estimate undercounts code and tool
    output, so an uncalibrated fit can still overflow the real window.
    """
    scale = measure or (lambda rough: rough)

    def _size(request: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> int:
        return scale(_rough(request, tools))

    head = [dict(system)]
    tail = [dict(flush)]
    request = head + [dict(m) for m in history] + tail
    if window is None or window <= 0:
        return request, cap
    window = int(window * FLUSH_WINDOW_SHARE)
    size = _size(request, tools)
    if size + cap <= window:
        return request, cap
    if window - size >= FLUSH_MIN_OUTPUT:
        return request, window - size

    pruned = prune_tool_results(list(history), protect_last_n=0, tail_token_budget=0).messages
    request = head + pruned + tail
    size = _size(request, tools)
    if window - size >= FLUSH_MIN_OUTPUT:
        return request, min(cap, window - size)

    # Leave out the newest turns, whole: cut only before a user message. Each message's
    # characters are measured once, so the search is linear in the history; the estimate
    # of a candidate is the whole request's minus what was left out (TK-02 floors once).
    rough = _rough(request, tools)
    fixed = rough * CHARS_PER_TOKEN + CHARS_PER_TOKEN - 1  # an upper bound of the chars
    dropped = 0
    for end in range(len(pruned) - 1, 0, -1):
        dropped += message_chars(pruned[end])[0] + 2  # the ", " between list items
        if pruned[end].get("role") != "user":
            continue
        if window - scale((fixed - dropped) // CHARS_PER_TOKEN) >= FLUSH_MIN_OUTPUT:
            request = head + pruned[:end] + tail
            size = _size(request, tools)
            if window - size >= FLUSH_MIN_OUTPUT:
                return request, min(cap, window - size)
    return None
