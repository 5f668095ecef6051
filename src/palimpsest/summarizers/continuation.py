"""A summary asked as the continuation of the conversation the provider has cached.

A summary request sent fresh carries the turns to summarize as one long user message:
every token of it is billed as input, although the provider read the very same
conversation from its prompt cache a moment ago at a tenth of that price. When the summary
is written by the same model on the same route, the request can instead be the
conversation exactly as it was last sent (same system prompt, same tools, same messages:
the cached prefix) followed by one user message with the summary instructions, which name
the span to summarize instead of repeating it.

:class:`Continuation` is what :class:`~palimpsest.summarizers.llm.LLMSummarizer` asks before
each call (its ``continuation`` attribute): the host (the agent) gives the last request's
messages and tools, the model they were sent to, and whether the cache is warm; the
continuation is used only with that model, while warm, and when it is cheaper at the
route's rates:

    continuation = prefix tokens x cache-read rate + instruction tokens x write rate
    fresh        = prompt tokens x write rate

(the write rate: cache writes on Anthropic routes, input on OpenAI ones). Unknown rates
mean a fresh request, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..compaction.cache_policy import CacheRates
from ..compaction.summary import render_summary_prompt
from ..tokens import estimate_messages_tokens_rough, estimate_tokens_rough
from .base import SummaryRequest

__all__ = ["Continuation", "ContinuationCall", "continuation_prompt"]

SPAN_NOTE = (
    "The turns to summarize are the conversation above, from message {first} to message "
    "{last} (counting the messages after the system prompt from 1). The {tail} message(s) "
    "after them stay in the context as they are: do not summarize them. Answer with the "
    "summary only, and call no tool."
)


def continuation_prompt(request: SummaryRequest, first: int, last: int, tail: int) -> str:
    """The summary instructions for turns ``first``..``last`` of the conversation above."""
    note = SPAN_NOTE.format(first=first, last=last, tail=tail)
    prompt = render_summary_prompt(
        note,
        budget=request.budget_tokens,
        previous_summary=request.previous_summary,
        focus_topic=request.focus_topic,
        template=request.template,
    )
    if request.retry_note:
        prompt = f"{prompt}\n\n{request.retry_note}"
    return prompt


@dataclass(frozen=True)
class ContinuationCall:
    """The messages and options of a continuation request."""

    messages: list[dict[str, Any]]
    options: dict[str, Any]
    prefix_tokens: int


@dataclass
class Continuation:
    """The host's cached conversation, offered to the summarizer (module docstring).

    ``last_request`` returns ``(messages, tools)`` exactly as the last call sent them, or
    ``None``; ``warm`` says whether the provider still caches them; ``rates`` are the
    route's (``None``: unknown); ``model`` is the model that call went to. ``span`` returns
    the 1-based positions of the turns to summarize and the tail size in those messages.
    """

    model: Any
    last_request: Callable[[], tuple[list[dict[str, Any]], list[dict[str, Any]] | None] | None]
    warm: Callable[[], bool]
    rates: Callable[[], CacheRates | None]
    span: Callable[[SummaryRequest], tuple[int, int, int] | None]
    used: int = 0
    """How many summary calls were sent as continuations."""

    def call_for(
        self, model: Any, request: SummaryRequest, fresh_prompt: str
    ) -> ContinuationCall | None:
        """The continuation for ``model``, or ``None`` when a fresh request is better."""
        if model is not self.model or not self.warm():
            return None
        last = self.last_request()
        span = self.span(request)
        rates = self.rates()
        if last is None or span is None or rates is None:
            return None
        if rates.cache_read is None or rates.write is None:
            return None
        messages, tools = last
        prompt = continuation_prompt(request, *span)
        prefix = estimate_messages_tokens_rough(messages)
        if tools:
            prefix += estimate_tokens_rough(str(tools))
        extra = estimate_tokens_rough(prompt)
        fresh = estimate_tokens_rough(fresh_prompt)
        continued = prefix * rates.cache_read + extra * rates.write
        if continued >= fresh * rates.write:
            return None
        options: dict[str, Any] = {}
        if tools:
            options["tools"] = list(tools)  # the cached prefix includes the tool schemas
            options["tool_choice"] = "none"
        sent: Sequence[dict[str, Any]] = messages
        return ContinuationCall(
            [*sent, {"role": "user", "content": prompt}], options, prefix + extra
        )
