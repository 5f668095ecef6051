"""What a gateway needs around the agent turn that follows a hygiene delivery.

:meth:`~.hygiene.GatewayHygiene.deliver` stores the inbound message before any agent runs
(so a crash in the turn loses nothing); :func:`detach_pending` lets the turn's agent
answer that stored message without storing it twice. When the turn fails,
:func:`is_context_error` says whether the user should read :data:`CONTEXT_ERROR_MESSAGE`
(agent-loop.md AL-38).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..errors import ContextOverflowError

if TYPE_CHECKING:
    from .loop import Agent

__all__ = ["CONTEXT_ERROR_MESSAGE", "detach_pending", "is_context_error"]

CONTEXT_ERROR_MESSAGE = (
    "This conversation is too large for the model's context window. Send /compress to "
    "shrink it, or /reset to start a fresh conversation."
)
"""AL-38: what the user reads when a gateway turn failed with a context-looking error."""

_CONTEXT_WORDS = ("context", "token", "too large", "too long", "exceed", "payload")
_HTTP_400 = re.compile(r"\b(?:http|status(?: code)?|error(?: code)?)\D{0,3}400\b", re.I)
_LONG_HISTORY = 50


def detach_pending(agent: Agent) -> str | None:
    """For a gateway turn after :meth:`GatewayHygiene.deliver`: the delivered user message,
    taken off the end of a freshly bound agent's live history so ``agent.run(text)`` adds
    it back without storing it a second time. ``None`` when the history does not end with
    a user message that is already stored."""
    messages = agent.messages
    if not messages or messages[-1].get("role") != "user":
        return None
    if agent.writer.persisted < len(messages):
        return None  # not stored yet: the turn must store it, so it stays
    content = messages[-1].get("content")
    if not isinstance(content, str):
        return None
    messages.pop()  # the writer's pointer stays: the re-added message counts as stored
    return content


def is_context_error(error: BaseException | str, history_len: int) -> bool:
    """AL-38: does a failed gateway turn look like the session outgrew the window?

    A :class:`ContextOverflowError` or an HTTP 413 does; an HTTP 400 does when the history
    holds more than 50 messages; otherwise the error text is searched for ``context``,
    ``token``, ``too large``, ``too long``, ``exceed`` or ``payload``. The user then reads
    :data:`CONTEXT_ERROR_MESSAGE`.
    """
    if isinstance(error, ContextOverflowError):
        return True
    text = str(error)
    status = getattr(error, "status_code", None) if isinstance(error, BaseException) else None
    if status == 413:
        return True
    if history_len > _LONG_HISTORY and (status == 400 or _HTTP_400.search(text)):
        return True
    lowered = text.lower()
    return any(word in lowered for word in _CONTEXT_WORDS)
