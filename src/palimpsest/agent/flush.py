"""The memory flush: one chance for the model to save what a compaction will take away.

Before every compaction, on every path (preflight, after-round, reactive, manual; MEM-61),
and before ``/new`` when the session had enough user turns, the model gets one extra call
(MEM-57..60):

* the request is the cached system prompt, the conversation, and a synthetic user message
  starting with ``[System:`` (:data:`FLUSH_MESSAGE`); it offers **only** the ``memory``
  tool;
* the ``memory`` calls in the reply are applied directly to the memory store, not through
  the agent's tool dispatch, and nothing else in the reply is used;
* the flush message and everything after it never reach the history: the request is
  built on a copy, so there is nothing to remove afterwards and nothing to persist.

A flush that fails (the provider refuses, the context overflows, the reply is garbage) is
reported and skipped; by default it never stops the compaction it precedes. With
``memory.checkpoint_required`` it does (:mod:`.checkpoint_gate`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..memory.manager import MemoryManager
from ..memory.tool import MEMORY_TOOL_NAME, MEMORY_TOOL_SCHEMA
from ..messages import call_arguments, call_name, role_of
from ..providers.base import Completion
from ..safety.redact import redact
from .driver import Flow, ModelCall
from .flush_fit import fit_flush_request

__all__ = [
    "FLUSH_MAX_TOKENS",
    "FLUSH_MESSAGE",
    "FLUSH_MIN_MESSAGES",
    "FLUSH_TEMPERATURE",
    "FlushResult",
    "flush_memories",
    "flush_skip_reason",
    "user_turns",
]

log = logging.getLogger("palimpsest.agent")

FLUSH_MESSAGE = (
    "[System: This session is about to be compressed: older messages will be replaced by a "
    "summary and their details will leave your context. Before that happens, save anything "
    "worth keeping for future sessions with the memory tool. Favour the user's preferences, "
    "the corrections they gave you and recurring patterns over details of the current task, "
    "which the summary keeps. If nothing is worth saving, answer without calling a tool.]"
)
"""The synthetic user message of the flush (MEM-58); it starts with ``[System:``."""

FLUSH_MIN_MESSAGES = 3
"""Fewer messages than this: nothing worth flushing (MEM-60)."""

FLUSH_MAX_TOKENS = 5_120
FLUSH_TEMPERATURE = 0.3


@dataclass
class FlushResult:
    """What one flush did: ``ran`` when the model was called, the memory calls applied."""

    ran: bool = False
    skipped: str | None = None
    applied: list[dict[str, Any]] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    error: str | None = None
    unfit: bool = False
    """The flush had something to save but could not be sent: the request does not fit
    the window even pruned (a failed checkpoint under ``memory.checkpoint_required``)."""


def user_turns(messages: Sequence[Mapping[str, Any]]) -> int:
    """How many user messages the history holds (the ``memory.flush_min_turns`` gate)."""
    return sum(1 for m in messages if role_of(m) == "user")


def flush_skip_reason(
    memory: MemoryManager | None, messages: Sequence[Mapping[str, Any]], min_turns: int = 0
) -> str | None:
    """Why a flush would not run, or ``None`` when it should (MEM-60)."""
    if memory is None:
        return "no memory"
    if MEMORY_TOOL_NAME not in memory.get_all_tool_names():
        return "the memory tool is disabled"
    if len(messages) < FLUSH_MIN_MESSAGES:
        return f"fewer than {FLUSH_MIN_MESSAGES} messages"
    if min_turns and user_turns(messages) < min_turns:
        return f"fewer than {min_turns} user turns"
    return None


def flush_memories(
    memory: MemoryManager | None,
    system_prompt: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    min_turns: int = 0,
    max_tokens: int | None = None,
    window: int | None = None,
    measure: Callable[[int], int] | None = None,
) -> Flow:
    """The flush as a flow (see :mod:`.driver`); returns a :class:`FlushResult`.

    ``messages`` is never modified. ``max_tokens`` caps the reply below
    :data:`FLUSH_MAX_TOKENS` (e.g. the agent's own output cap). With ``window`` the request
    is fitted to it (:mod:`.flush_fit`, with ``measure`` scaling rough estimates to the
    model's count); a flush that cannot fit is skipped, not sent.
    """
    reason = flush_skip_reason(memory, messages, min_turns)
    if reason is not None or memory is None:
        return FlushResult(skipped=reason)
    cap = min(FLUSH_MAX_TOKENS, max_tokens) if max_tokens else FLUSH_MAX_TOKENS
    tools = [{"type": "function", "function": dict(MEMORY_TOOL_SCHEMA)}]
    fitted = fit_flush_request(
        {"role": "system", "content": system_prompt},
        [dict(m) for m in messages],
        {"role": "user", "content": FLUSH_MESSAGE},
        tools,
        window,
        cap,
        measure,
    )
    if fitted is None:
        log.warning("memory flush skipped: the conversation does not fit the window")
        return FlushResult(
            skipped="the conversation does not fit the window, even pruned", unfit=True
        )
    request, cap = fitted
    result = FlushResult(ran=True)
    try:
        reply: Completion = yield ModelCall(
            request, tools, cap, {"temperature": FLUSH_TEMPERATURE}, purpose="flush"
        )
    except Exception as exc:  # the compaction goes on without the flush
        result.error = redact(f"{type(exc).__name__}: {exc}")
        log.warning("memory flush failed: %s", result.error)
        return result
    for call in reply.tool_calls or ():
        if call_name(call) != MEMORY_TOOL_NAME:
            continue  # only the memory tool was offered; anything else is ignored
        arguments = _arguments(call)
        if arguments is None:
            result.results.append("skipped: arguments were not a JSON object")
            continue
        result.applied.append(arguments)
        result.results.append(memory.handle_tool_call(MEMORY_TOOL_NAME, arguments))
    return result


def _arguments(call: Mapping[str, Any]) -> dict[str, Any] | None:
    try:
        parsed = json.loads(call_arguments(call))
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None
