"""How the compressor obtains a summary body: ask, clean, redact, verify, or fall back.

A summarizer can raise, return nothing, or (if it is a model) return text that only looks
like a summary. This layer turns each of those into one outcome: a checked body, or
``None`` with ``last_summary_error`` saying why, after which the deterministic fallback
writes the summary instead (CC-76 to CC-87, verified compaction in :mod:`.verify`). Every
call, the fallback's included, has a wall-clock limit (``summary_timeout``): a call that
hangs is abandoned there and the fallback is used (:mod:`..summarizers.deadline`).
It sits between :class:`~.trigger.CompactionTrigger` (when to compact) and
:class:`~.compressor.ContextCompressor` (the phases), which inherits it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, Literal

from ..errors import SummaryError
from ..safety.redact import redact
from ..summarizers.base import RedactedText, Summarizer, SummaryRequest, SupportsCooldown
from ..summarizers.deadline import call_with_deadline
from ..tokens import MessageSizer
from .fallback import rule_based_fallback, static_fallback
from .markers import is_real_user_message
from .memory_context import memory_context_block
from .middle import SpanReadings
from .summary import (
    budget_cap_tokens,
    clean_summary_reply,
    compute_summary_budget,
    render_summary_prompt,
    serialize_turns,
)
from .trigger import SUMMARY_FAILURE_COOLDOWN, CompactionTrigger
from .verify import check_summary

__all__ = ["SummaryWriter", "extractive_summarizer", "needs_check"]

logger = logging.getLogger("palimpsest.compaction")


class SummaryWriter(CompactionTrigger):
    """The summary half of the compressor; the attributes are set by its ``__init__``."""

    summarizer: Summarizer
    quiet_mode: bool
    fallback_summary: Literal["static", "deterministic"]
    previous_summary: str | None
    fallback_streak: int
    last_summary_error: str | None
    last_summary_check: str | None
    last_summary_rejections: list[str]
    last_summary_fallback_used: bool
    last_summary_dropped_count: int
    _clock: Callable[[], float]
    _sizer: MessageSizer | None
    max_summary_tokens: int
    summary_template: Literal["handoff", "classic"]
    summary_timeout: float | None
    """Seconds one summary call may take before it is abandoned (:mod:`..summarizers.deadline`)."""

    def _count(self, messages: Sequence[dict[str, Any]]) -> int:
        raise NotImplementedError  # the compressor measures with its own counter

    def _summary_request(
        self,
        turns: list[dict[str, Any]],
        earlier: list[str],
        focus_topic: str | None,
        memory_context: str,
        original: list[dict[str, Any]] | None = None,
        readings: SpanReadings | None = None,
        tail: list[dict[str, Any]] | None = None,
    ) -> SummaryRequest:
        """The request for ``original`` (the unpruned middle; ``turns`` when not given).

        ``tail`` is what stays verbatim after the middle (the summarizer may rank by it).

        The budget follows the pruned ``turns``, which is what the summary replaces.
        ``readings`` are ``(head readings, middle readings)``: the goal is the first real
        user request in the head, and the middle's readings go to the summarizer.
        """
        rough = None
        if self._sizer is not None:
            # past the cap the budget is fixed: a long middle is not measured to its end
            rough = self._sizer.tokens(turns, stop_at=budget_cap_tokens(self.max_summary_tokens))
        budget = compute_summary_budget(turns, self.max_summary_tokens, rough_tokens=rough)
        head, middle = readings if readings is not None else ((), None)
        goal = next((r.text for r in head if r.kind == "request"), None)
        turns = original if original is not None else turns
        has_user = any(is_real_user_message(m) for m in turns) or bool(earlier)
        previous = redact(self.previous_summary) if self.previous_summary else None
        focus = redact(focus_topic) if focus_topic else None
        prompt = ""
        if getattr(self.summarizer, "needs_prompt", True):
            # Rendering serializes and redacts up to 160K characters; skip it for
            # summarizers that read the turns themselves.
            prompt = render_summary_prompt(
                serialize_turns(turns),
                budget=budget,
                previous_summary=previous,
                focus_topic=focus,
                template=self.summary_template,
            )
            if memory_context:
                prompt = f"{prompt}\n\n{memory_context_block(memory_context)}"
        return SummaryRequest(
            turns=turns,
            previous_summary=previous,
            focus_topic=focus,
            budget_tokens=budget,
            prompt=prompt,
            template=self.summary_template,
            has_user_turn=has_user,
            goal=redact(goal) if goal else None,
            readings=middle,
            tail=tail,
        )

    def _generate_summary(self, request: SummaryRequest) -> str | None:
        """The summarizer's body, cleaned, redacted and, unless the summarizer is
        deterministic, verified; ``None`` on failure (CC-76 to CC-82)."""
        remaining = self.cooldown_remaining()
        if remaining > 0:
            self.last_summary_error = f"summary cooldown ({int(remaining)}s remaining)"
            return None
        body = self._ask(request)
        if body is not None and needs_check(self.summarizer):
            body = self._checked(body, request)
        if body is None:
            return None
        self.previous_summary = body
        self.fallback_streak = 0
        return body

    def _ask(self, request: SummaryRequest) -> str | None:
        summarizer = self.summarizer
        try:
            raw = call_with_deadline(lambda: summarizer.summarize(request), self.summary_timeout)
        except Exception as exc:  # any summarizer failure takes the fallback path
            self.last_summary_error = redact(f"{type(exc).__name__}: {exc}")
            abandoned = isinstance(exc, SummaryError) and exc.cause_kind == "timeout"
            record = getattr(summarizer, "record_abandoned", None)
            if abandoned and callable(record):
                record(self.last_summary_error)  # its own cooldown ladder (CC-83)
            if not isinstance(self.summarizer, SupportsCooldown):
                self.summary_failure_cooldown_until = self._clock() + SUMMARY_FAILURE_COOLDOWN
                self.summary_failure_error = self.last_summary_error
            if not self.quiet_mode:
                logger.warning("Summary generation failed: %s", self.last_summary_error)
            return None
        body = clean_summary_reply(raw)
        if not body:
            self.last_summary_error = "the summarizer returned an empty summary"
            return None
        if isinstance(raw, RedactedText) and body == raw:
            return body  # already redact()'s output: redacting it again changes nothing
        return redact(body)

    def _checked(self, body: str, request: SummaryRequest) -> str | None:
        """Verified compaction (:mod:`.verify`): ``None`` when the retry was rejected too."""
        check = check_summary(body, request, self._ask, replaced_tokens=self._count(request.turns))
        self.last_summary_check = check.status
        self.last_summary_rejections = list(check.rejections)
        for reason in check.rejections if not self.quiet_mode else ():
            logger.warning("Summary rejected: %s", reason)
        if check.body is None and len(check.rejections) > 1:
            self.last_summary_error = "summary rejected twice: " + check.rejections[-1]
        return check.body

    def _fallback_summary(self, request: SummaryRequest, dropped: int) -> str:
        """Never drop the middle silently: a rule-based summary, or the static marker (CC-85, CC-86)."""
        self.last_summary_fallback_used = True
        self.last_summary_dropped_count = dropped
        self.fallback_streak += 1
        reason = self.last_summary_error or "unknown error"
        if self.fallback_summary == "deterministic":
            extractive = extractive_summarizer()
            try:
                text = call_with_deadline(
                    lambda: extractive.summarize(request),
                    self.summary_timeout,
                    what="the deterministic summary",
                )
                body = rule_based_fallback(text, dropped, reason)
            except Exception as exc:
                reason = f"{reason}; rule-based recovery also failed: {exc}"
            else:
                self.previous_summary = body
                return body
        return static_fallback(dropped, reason)


def needs_check(summarizer: Summarizer) -> bool:
    """Every summary is verified except a deterministic summarizer's: the extractive one is
    what the check compares against, and a summarizer may declare ``deterministic = True``."""
    from ..summarizers.extractive import ExtractiveSummarizer

    if isinstance(summarizer, ExtractiveSummarizer):
        return False
    return getattr(summarizer, "deterministic", False) is not True


def extractive_summarizer() -> Summarizer:
    """The offline default summarizer; imported here because it imports the compaction package."""
    from ..summarizers.extractive import ExtractiveSummarizer

    return ExtractiveSummarizer()
