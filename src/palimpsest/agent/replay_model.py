"""Replaying a recorded transcript through the agent: a ChatModel whose answers are the
assistant turns someone's agent really sent.

``palimpsest replay`` and ``palimpsest chat --model replay:PATH`` use this to drive the real
:class:`~palimpsest.agent.loop.Agent` (compaction, sessions, tools) with no network and no
model: the *conversation* comes from the file, everything else runs for real. That shows a
user, on their own transcripts, when compaction fires, what it removes and how sessions
chain.

:mod:`.replay_script` cuts the transcript into runs and builds the replay tools (native tool
calls get their recorded results by call id; a text action's observation comes back as the
next user message, as the framework sent it); its names are re-exported here.
:class:`ReplayChatModel` serves the replies in order. It sends no usage, so the agent
treats usage as unknown (estimated), never as zero; given a ``context_length`` it also
refuses an oversized request the way a provider would.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from ..errors import ContextOverflowError, ProviderError
from ..providers.base import Completion
from ..tokens import estimate_request_tokens_rough
from .replay_script import (
    NO_RECORDED_RESULT,
    ReplayScript,
    ReplayTurn,
    build_script,
    replay_tools,
)

__all__ = [
    "FLUSH_TOOL_NAME",
    "NO_RECORDED_RESULT",
    "REPLAY_PREFIX",
    "ReplayChatModel",
    "ReplayExhaustedError",
    "ReplayScript",
    "ReplayTurn",
    "build_script",
    "replay_tools",
]

REPLAY_PREFIX = "replay"
"""Model-spec prefix (``replay:PATH``) the CLI routes to this module."""

FLUSH_TOOL_NAME = "memory"
"""A request that offers only this tool is the agent's memory flush (spec memory.md MEM-57);
a transcript recorded no answer to it, so the replay answers it with nothing and keeps its
place in the recording."""


class ReplayExhaustedError(ProviderError):
    """The agent asked for a reply after the recording ran out."""


def _offers_only_flush(tools: Sequence[Mapping[str, Any]] | None) -> bool:
    if not tools or len(tools) != 1:
        return False
    function = tools[0].get("function")
    name = function.get("name") if isinstance(function, Mapping) else tools[0].get("name")
    return name == FLUSH_TOOL_NAME


class ReplayChatModel:
    """A :class:`~palimpsest.providers.base.ChatModel` that answers with recorded replies.

    Each ``complete`` call returns the next queued reply as a :class:`Completion` whose
    usage is ``None`` (not reported: unknown, so the agent estimates). When the queue
    is empty it raises :class:`ReplayExhaustedError`, or, with ``when_exhausted="empty"``,
    answers with no text and no calls (the agent then ends the turn with a warning). A
    request that offers only the ``memory`` tool is a memory flush: it is answered with
    nothing and does not consume a reply.

    With ``context_length``, the model also plays the provider's window: a request whose
    rough estimate (messages and tool schemas) is larger raises
    :class:`~palimpsest.errors.ContextOverflowError` with that ``limit``, as a real server
    would, so the agent's reactive recovery runs; the reply stays queued for the retry.
    """

    def __init__(
        self,
        replies: Iterable[Mapping[str, Any]] = (),
        *,
        model: str = REPLAY_PREFIX,
        when_exhausted: Literal["error", "empty"] = "error",
        context_length: int | None = None,
    ) -> None:
        self.model = model
        self.context_length = context_length
        self.when_exhausted = when_exhausted
        self._queue: deque[dict[str, Any]] = deque(dict(r) for r in replies)
        self.served = 0
        """Recorded replies handed out so far."""
        self.unrecorded = 0
        """Calls answered with nothing: flushes, and empty answers after the recording ran
        out (``when_exhausted="empty"``)."""

    @property
    def remaining(self) -> int:
        """Replies not played yet."""
        return len(self._queue)

    def load(self, replies: Iterable[Mapping[str, Any]]) -> int:
        """Replace the queue with ``replies``; return how many of the old ones were unplayed."""
        left = len(self._queue)
        self._queue = deque(dict(r) for r in replies)
        return left

    def complete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        if _offers_only_flush(tools):
            self.unrecorded += 1
            return Completion(content=None, finish_reason="stop", model=self.model)
        self._check_window(messages, tools)
        if not self._queue:
            if self.when_exhausted == "error":
                raise ReplayExhaustedError(
                    "the replay transcript has no more recorded assistant replies",
                    provider=REPLAY_PREFIX,
                    model=self.model,
                )
            self.unrecorded += 1
            return Completion(content=None, finish_reason="stop", model=self.model)
        reply = self._queue.popleft()
        self.served += 1
        return Completion(
            content=reply.get("content"),
            tool_calls=[dict(c) for c in reply.get("tool_calls", ())],
            finish_reason="tool_calls" if reply.get("tool_calls") else "stop",
            model=self.model,
            raw=reply,
        )

    def _check_window(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None
    ) -> None:
        if self.context_length is None:
            return
        size = estimate_request_tokens_rough(messages, tools=tools)
        if size > self.context_length:
            raise ContextOverflowError(
                f"the request (~{size:,} tokens) does not fit the replayed "
                f"{self.context_length:,}-token window",
                limit=self.context_length,
                requested=size,
                provider=REPLAY_PREFIX,
                model=self.model,
            )

    async def acomplete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        return self.complete(messages, tools, max_tokens, **options)
