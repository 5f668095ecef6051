"""Who writes the summary turn: the protocol, the request, the prompt and two summarizers.

A :class:`TrajectorySummarizer` turns a :class:`TrajectorySummaryRequest` (the turns to
replace, their rendering of TJ-14 and the full model prompt of TJ-15, both redacted) into
summary text. It returns the body only: the caller normalizes the prefix (TJ-17), redacts,
retries and falls back (TJ-16, TJ-18). Raising means "this attempt failed".

- :class:`ExtractiveTrajectorySummarizer` (the default) writes the library's deterministic
  handoff summary from the turns themselves: no model, no network, same input same text.
  ``is_model = False`` tells the caller not to retry it or count it as an API call.
- :class:`ModelSummarizer` sends the prompt to any :class:`~palimpsest.providers.ChatModel`
  with ``max_tokens = 2 x summary_target_tokens`` and the configured temperature (omitted
  for models that fix it); a reply cut off by the token limit is a failure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Final, Protocol, runtime_checkable

from ..errors import SummaryError
from ..providers.base import ChatModel, Completion
from ..safety.redact import redact
from ..summarizers.base import SummaryRequest
from ..summarizers.extractive import ExtractiveSummarizer
from .algorithm import render_region
from .config import CompressionConfig
from .sharegpt import first_request, turn_messages

__all__ = [
    "ExtractiveTrajectorySummarizer",
    "ModelSummarizer",
    "TrajectorySummarizer",
    "TrajectorySummaryRequest",
    "build_prompt",
    "model_fixes_temperature",
]


@dataclass(frozen=True)
class TrajectorySummaryRequest:
    """One summary to write.

    ``turns`` is the whole trajectory and ``[start, until)`` the region to replace, so a
    summarizer can read the head for context. ``rendered`` is the region as TJ-14 renders it
    and ``prompt`` the complete model prompt (TJ-15); both are already redacted, and made
    the first time a summarizer reads them: the extractive one reads the turns instead, and
    rendering and redacting a prompt nobody sends was half of a batch's time (issue 27).
    """

    turns: Sequence[Mapping[str, Any]]
    start: int
    until: int
    target_tokens: int

    @cached_property
    def rendered(self) -> str:
        return redact(render_region(self.turns, self.start, self.until))

    @cached_property
    def prompt(self) -> str:
        raw = render_region(self.turns, self.start, self.until)
        return redact(build_prompt(raw, self.target_tokens))

    @property
    def region(self) -> Sequence[Mapping[str, Any]]:
        return self.turns[self.start : self.until]


@runtime_checkable
class TrajectorySummarizer(Protocol):
    """``summarize(request) -> text`` (``None`` or ``""`` give an empty summary).

    An optional ``asummarize`` coroutine is used by the async path when present; an
    ``is_model`` attribute (default ``True``) says whether calls are model calls that are
    retried and counted as ``summarization_api_calls``.
    """

    def summarize(self, request: TrajectorySummaryRequest) -> str | None: ...


_PROMPT: Final = """\
Summarize the following agent conversation turns. Your summary will REPLACE these turns in \
the conversation history, so whoever reads the rest of the conversation must be able to \
continue from it without them.

CRITICAL: write the summary in the same language as the turns.

Write from a neutral, factual perspective. Cover:
- the actions the agent took (tool calls, commands, files touched) and what came of them;
- decisions that were made, and why;
- important data and values (paths, numbers, identifiers, error messages) needed later.

Be concise. Target approximately {target} tokens.

TURNS TO SUMMARIZE:
---
{turns}
---

Begin your answer with "[CONTEXT SUMMARY]:" followed by the summary."""


def build_prompt(rendered: str, target_tokens: int) -> str:
    """The summary prompt of TJ-15 around the rendered turns (not yet redacted)."""
    return _PROMPT.format(target=target_tokens, turns=rendered)


class ExtractiveTrajectorySummarizer:
    """The deterministic handoff summary of the region, sized to ``target_tokens``.

    ShareGPT turns are read as chat messages (system/human/gpt/tool -> system/user/
    assistant/tool; Hermes-style ``<tool_call>`` blocks become tool calls), so the
    library's extractive summarizer sees the actions and their results.
    """

    is_model: ClassVar[bool] = False

    def __init__(self) -> None:
        self._inner = ExtractiveSummarizer()

    def summarize(self, request: TrajectorySummaryRequest) -> str:
        per_turn = turn_messages(request.turns)
        region = [m for group in per_turn[request.start : request.until] for m in group]
        goal = first_request(request.turns[: request.start])
        return self._inner.summarize(
            SummaryRequest(
                turns=region,
                previous_summary=None,
                focus_topic=None,
                budget_tokens=request.target_tokens,
                prompt="",
                goal=goal,
                has_user_turn=any(m.get("role") == "user" for m in region),
            )
        )


_FIXED_TEMPERATURE: Final = re.compile(
    r"(^|[/:])(o\d(-mini|-pro)?|gpt-5[\w.-]*|kimi-for-coding|kimi-k2-thinking[\w.-]*)"
    r"($|[-:@])",
    re.IGNORECASE,
)


def model_fixes_temperature(model: str) -> bool:
    """Whether ``model`` fixes or forbids the temperature, so none must be sent (TJ-16).

    OpenAI's reasoning models (o1, o3, o4-mini, gpt-5) reject any temperature but their
    own, and Kimi's coding-plan and thinking models fix theirs.
    """
    return bool(_FIXED_TEMPERATURE.search(model))


class ModelSummarizer:
    """A :class:`~palimpsest.providers.ChatModel` writes the summary (one attempt per call).

    ``temperature`` overrides the config's; a model in :func:`model_fixes_temperature`
    never receives one.
    """

    is_model: ClassVar[bool] = True

    def __init__(self, model: ChatModel, config: CompressionConfig) -> None:
        self.model = model
        self.max_tokens = 2 * config.summary_target_tokens
        name = str(getattr(model, "model", "") or "")
        fixed = model_fixes_temperature(name)
        self.temperature = None if fixed else config.temperature

    def _options(self) -> dict[str, Any]:
        return {} if self.temperature is None else {"temperature": self.temperature}

    def _messages(self, request: TrajectorySummaryRequest) -> list[dict[str, Any]]:
        return [{"role": "user", "content": request.prompt}]

    def summarize(self, request: TrajectorySummaryRequest) -> str | None:
        reply = self.model.complete(
            self._messages(request), max_tokens=self.max_tokens, **self._options()
        )
        return self._text(reply)

    async def asummarize(self, request: TrajectorySummaryRequest) -> str | None:
        reply = await self.model.acomplete(
            self._messages(request), max_tokens=self.max_tokens, **self._options()
        )
        return self._text(reply)

    def _text(self, reply: Completion) -> str | None:
        if reply.finish_reason == "length":
            raise SummaryError(
                "the summary was cut off at max_tokens", model=self.model.model, cause_kind="length"
            )
        content: Any = reply.content
        if content is None or isinstance(content, str):
            return content
        return str(content)
