"""The one contract every model backend implements, and its normalized result.

Compaction, session search and the agent loop only ever see ``ChatModel.complete``; the
OpenAI, Anthropic and llama.cpp backends convert at the edge. ``ScriptedChatModel`` is
public API so users can test their own agents offline.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..usage import CanonicalUsage

__all__ = ["ChatModel", "Completion", "ScriptedChatModel"]


@dataclass
class Completion:
    """A model's answer: text, OpenAI-shaped tool calls, canonical usage, and the raw reply.

    ``usage`` is ``None`` when the provider reported none (llama.cpp's server on a stream,
    a scripted reply without one): unknown, which callers must not read as zero.
    """

    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: CanonicalUsage | None = None
    finish_reason: str | None = None
    model: str | None = None
    raw: Any = None

    def to_message(self) -> dict[str, Any]:
        """The assistant message to append to a transcript."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = [dict(tc) for tc in self.tool_calls]
        return msg


@runtime_checkable
class ChatModel(Protocol):
    """A chat model. Errors are raised as :class:`palimpsest.errors.ProviderError` subclasses."""

    model: str

    def complete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Completion: ...

    async def acomplete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Completion: ...


Reply = str | Completion | BaseException | Callable[[list[dict[str, Any]]], "str | Completion"]


class ScriptedChatModel:
    """A ``ChatModel`` that answers from a queue: for tests and offline examples.

    Each queued reply is a string (the content), a :class:`Completion`, an exception (raised),
    or a callable that receives the messages and returns one of the first two. Every call
    is recorded in ``calls`` as ``(messages, tools, max_tokens, options)``. When the queue
    is empty, ``default`` answers (an error if there is none).
    """

    def __init__(
        self,
        replies: Sequence[Reply] = (),
        *,
        model: str = "scripted",
        default: Reply | None = None,
    ) -> None:
        self.model = model
        self._queue: deque[Reply] = deque(replies)
        self.default = default
        self.calls: list[tuple[list[dict[str, Any]], Any, int | None, dict[str, Any]]] = []

    def enqueue(self, *replies: Reply) -> None:
        self._queue.extend(replies)

    def complete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        msgs = [dict(m) for m in messages]
        self.calls.append((msgs, tools, max_tokens, options))
        if self._queue:
            reply = self._queue.popleft()
        elif self.default is not None:
            reply = self.default
        else:
            raise AssertionError("ScriptedChatModel has no reply queued")
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            reply = reply(msgs)
        if isinstance(reply, Completion):
            return reply
        return Completion(content=str(reply), finish_reason="stop", model=self.model)

    async def acomplete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        return self.complete(messages, tools, max_tokens, **options)
