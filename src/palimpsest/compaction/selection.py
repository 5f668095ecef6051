"""Request-time context selection: an engine chooses what one request sees, safely.

:meth:`~.engine.ContextEngine.select_context` lets an engine do retrieval or topic
routing per request without rewriting the stored conversation. A host calls
:func:`select_request` with the request it built; what comes back is sent for that call
only. The engine gets deep copies, so even an engine that edits its arguments in place
cannot reach the history or the cached system prompt.

It fails open: an engine that raises, or returns something a provider would reject (not a
list of messages, a broken tool-call pairing, a system prompt other than the host's), is
ignored and the request goes as built; the second value says why, for the host's warning.
A selection without the system prompt gets the host's put back in front, so the provider's
cached prefix is the same with or without an engine.
"""

from __future__ import annotations

import copy
from typing import Any

from ..errors import TranscriptError
from ..messages.content import role_of
from ..messages.validate import validate_transcript
from .engine import ContextEngine

__all__ = ["select_request"]

_SYSTEM_ROLES = frozenset({"system", "developer"})


def select_request(
    engine: ContextEngine,
    request: list[dict[str, Any]],
    *,
    conversation: list[dict[str, Any]],
    incoming: str,
    budget_tokens: int,
) -> tuple[list[dict[str, Any]], str | None]:
    """``(request to send, problem)``: the engine's selection, or ``request`` unchanged
    with the reason it was ignored (``None`` when nothing went wrong). An engine that keeps
    the default ``select_context`` is not asked: copying the request and the history for
    it would cost every call O(history) for an answer known in advance."""
    if type(engine).select_context is ContextEngine.select_context:
        return request, None
    try:
        chosen = engine.select_context(
            copy.deepcopy(request),
            conversation_messages=copy.deepcopy(conversation),
            incoming_message=incoming,
            budget_tokens=budget_tokens,
        )
    except Exception as exc:
        return request, f"{type(exc).__name__}: {exc}"
    if chosen is None:
        return request, None
    if not isinstance(chosen, list) or not all(isinstance(m, dict) for m in chosen):
        return request, f"select_context returned {type(chosen).__name__}, not a message list"
    head = request[0] if request and role_of(request[0]) in _SYSTEM_ROLES else None
    if head is not None:
        if not chosen or role_of(chosen[0]) not in _SYSTEM_ROLES:
            chosen = [head, *chosen]
        elif chosen[0] != head:
            return request, "select_context changed the system prompt (the cached prefix)"
    try:
        validate_transcript(chosen)
    except TranscriptError as exc:
        return request, f"select_context returned an invalid request: {exc}"
    if not any(role_of(m) not in _SYSTEM_ROLES for m in chosen):
        return request, "select_context returned no messages besides the system prompt"
    return chosen, None
