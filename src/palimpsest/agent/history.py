"""Pure helpers over the live history: closing interrupted tool calls, the request fence.

Both return new values and never mutate their input, so the stored history cannot pick up
a request-only injection by accident (MEM-05) and an interrupted turn can be repaired
without guessing (every tool call gets exactly one result).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..messages import call_id, call_name, content_text, role_of, tool_calls_of

__all__ = ["CANCELLED_RESULT", "attach_fence", "cancelled_results"]

CANCELLED_RESULT = "Cancelled: the user interrupted the turn before this tool call finished."
"""The result a tool call gets when an interrupt stopped the turn before it ran."""


def cancelled_results(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Tool results for the calls of the latest assistant message that have none.

    Only the newest round can be open: every earlier round was closed before the next
    model call. Returns ``[]`` when nothing is open.
    """
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        role = role_of(message)
        if role == "user":
            return []
        if role != "assistant" or not tool_calls_of(message):
            continue
        answered = {
            str(m.get("tool_call_id")) for m in messages[index + 1 :] if role_of(m) == "tool"
        }
        return [
            {
                "role": "tool",
                "tool_call_id": call_id(call),
                "name": call_name(call),
                "content": CANCELLED_RESULT,
            }
            for call in tool_calls_of(message)
            if call_id(call) and call_id(call) not in answered
        ]
    return []


def attach_fence(
    history: Sequence[Mapping[str, Any]], fence: str, target: str | None
) -> list[dict[str, Any]]:
    """A copy of ``history`` with ``fence`` appended to the turn's user message.

    The message is the newest user message whose text is ``target`` (the turn's request,
    which may sit before a compaction's injected messages), else the newest user message.
    """
    out = [dict(m) for m in history]
    if not fence:
        return out
    users = [i for i, m in enumerate(out) if role_of(m) == "user"]
    exact = [i for i in users if content_text(out[i].get("content")) == target]
    chosen = exact[-1] if exact else (users[-1] if users else None)
    if chosen is None:
        return out
    content = out[chosen].get("content")
    if isinstance(content, list):
        out[chosen]["content"] = [*content, {"type": "text", "text": fence}]
    else:
        out[chosen]["content"] = f"{content}\n\n{fence}" if content else fence
    return out
