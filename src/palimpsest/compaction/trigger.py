"""When to compress: thresholds, reported usage, and the guards against wasted work.

This half of the built-in engine decides *whether* a compaction should run; the
compressor (its subclass) decides *how*. Its state is a handful of counters: the last
real usage, how many compactions in a row were ineffective, how many used a fallback
summary, the summary-failure cooldown and the pressure-warning flag.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..conversation_tokens import ConversationTokens
from ..summarizers.base import Summarizer, SupportsCooldown
from ..tokens import ExactCounter, RoughCounter, TokenCounter, estimate_tools_tokens
from .engine import ContextEngine
from .thresholds import compute_thresholds

__all__ = [
    "AWAITING_REAL_USAGE",
    "INEFFECTIVE_SAVINGS_PCT",
    "MAX_INEFFECTIVE",
    "PRESSURE_WARNING_RATIO",
    "SUMMARY_FAILURE_COOLDOWN",
    "CompactionTrigger",
]

logger = logging.getLogger("palimpsest.compaction")

INEFFECTIVE_SAVINGS_PCT = 10.0
"""A compaction saving less than this share of tokens counts as ineffective (CC-17)."""

MAX_INEFFECTIVE = 2
"""This many ineffective compactions in a row block automatic ones (CC-17, CC-23)."""

SUMMARY_FAILURE_COOLDOWN = 60.0
"""Seconds without summary calls after a summarizer without its own cooldown fails (CC-82)."""

PRESSURE_WARNING_RATIO = 0.85
AWAITING_REAL_USAGE = -1
"""``last_prompt_tokens`` after a compaction, until the provider reports the new size (CC-20)."""


class CompactionTrigger(ContextEngine):
    """Threshold, usage tracking, anti-thrashing, cooldowns and pressure warnings.

    Subclasses set the attributes below in ``__init__`` and call
    :meth:`_reset_trigger_state`; :meth:`_record_compaction` reports each compaction.
    """

    summarizer: Summarizer
    token_counter: TokenCounter
    model: str
    max_tokens: int | None
    threshold_tokens_cap: int | None
    summary_target_ratio: float
    quiet_mode: bool
    status_callback: Callable[[str], None] | None
    _clock: Callable[[], float]
    tail_token_budget: int
    max_summary_tokens: int

    def _reset_trigger_state(self) -> None:
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.last_total_tokens = 0
        self.ineffective_compression_count = 0
        self.fallback_streak = 0
        self.summary_failure_cooldown_until = 0.0
        self.summary_failure_error: str | None = None
        self.awaiting_real_usage = False
        self.pressure_warning_active = False
        self._conversation_tokens = _accountant_for(self.token_counter)

    def _recompute_thresholds(self) -> None:
        t = compute_thresholds(
            self.context_length,
            self.threshold_percent,
            self.summary_target_ratio,
            max_tokens=self.max_tokens,
            threshold_cap=self.threshold_tokens_cap,
            explicit=getattr(self, "threshold_explicit", False),
        )
        self.threshold_tokens = t.threshold_tokens
        self.tail_token_budget = t.tail_token_budget
        self.max_summary_tokens = t.max_summary_tokens

    def update_model(
        self,
        model: str,
        context_length: int,
        base_url: str = "",
        api_key: str = "",
        provider: str = "",
        api_mode: str = "",
        max_tokens: int | None = None,
    ) -> None:
        """Adopt a new model's window; a new model also gets a clean failure record (CC-12, CC-13)."""
        changed = model != self.model
        self.model = model
        self.context_length = context_length
        if max_tokens is not None:
            self.max_tokens = max_tokens
        self._recompute_thresholds()
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.last_total_tokens = 0
        self.awaiting_real_usage = False
        self.ineffective_compression_count = 0
        if changed:
            self.fallback_streak = 0
            self._clear_cooldown()

    # -- usage and the trigger -----------------------------------------------------------

    def update_from_response(self, usage: dict[str, Any]) -> None:
        """Record normalized usage; missing fields count as 0 (CC-14)."""
        prompt = int(usage.get("prompt_tokens", 0) or 0)
        completion = int(usage.get("completion_tokens", 0) or 0)
        self.last_prompt_tokens = prompt
        self.last_completion_tokens = completion
        self.last_total_tokens = int(usage.get("total_tokens", prompt + completion) or 0)
        self.awaiting_real_usage = False
        if prompt < self.threshold_tokens:
            self.ineffective_compression_count = 0  # CC-21: real usage fits again

    def cooldown_remaining(self) -> float:
        """Seconds until summaries may be attempted again (own or the summarizer's)."""
        own = max(0.0, self.summary_failure_cooldown_until - self._clock())
        theirs = 0.0
        if isinstance(self.summarizer, SupportsCooldown):
            theirs = max(0.0, float(self.summarizer.cooldown_remaining()))
        return max(own, theirs)

    def _clear_cooldown(self) -> None:
        self.summary_failure_cooldown_until = 0.0
        self.summary_failure_error = None
        if isinstance(self.summarizer, SupportsCooldown):
            self.summarizer.reset_cooldown()

    def should_compress_info(self, prompt_tokens: int | None = None) -> tuple[bool, str | None]:
        """``(fire, reason_blocked)``: reason is ``cooldown:<s>`` or ``ineffective`` (CC-18)."""
        if prompt_tokens is None:
            if self.awaiting_real_usage:
                return False, None
            tokens = self.last_prompt_tokens
        else:
            tokens = prompt_tokens
        if tokens < self.threshold_tokens:
            return False, None
        remaining = self.cooldown_remaining()
        if remaining > 0:
            return False, f"cooldown:{int(remaining)}"
        if (
            self.ineffective_compression_count >= MAX_INEFFECTIVE
            or self.fallback_streak >= MAX_INEFFECTIVE
        ):
            if not self.quiet_mode:
                logger.warning(
                    "Compression skipped: the last %d compressions each saved less than "
                    "10%%. Consider /new to start a fresh session, or /compress <topic> "
                    "for a focused compression.",
                    self.ineffective_compression_count,
                )
            return False, "ineffective"
        return True, None

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        return self.should_compress_info(prompt_tokens)[0]

    def should_compress_preflight(self, messages: list[dict[str, Any]]) -> bool:
        """The message estimate reaches the threshold (CC-16); O(new messages) per turn."""
        return self.estimate_request_tokens(messages) >= self.threshold_tokens

    def estimate_request_tokens(
        self,
        messages: Sequence[Mapping[str, Any]],
        system_prompt: str = "",
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> int:
        """What the next request costs by this engine's counter (TK-03, AL-04).

        The engine remembers what it measured for its conversation, so asking every turn
        measures only the messages appended since the last call (see
        :class:`~palimpsest.ConversationTokens` for the contract: replace a message rather
        than edit it in place). A session reset forgets it all. A custom counter without
        per-message counts is asked about the whole list each time (its tool schemas by
        the rough rule, TK-04).
        """
        if self._conversation_tokens is not None:
            return self._conversation_tokens.request_tokens(messages, system_prompt, tools)
        total = self.token_counter.count_messages(messages)
        total += self.token_counter.count_text(system_prompt) if system_prompt else 0
        return total + estimate_tools_tokens(tools)

    def check_pressure(self, prompt_tokens: int | None = None) -> str | None:
        """Warn once when prompt tokens reach 85% of the threshold (CC-118).

        The warning goes to the status callback and the log, never into messages.
        """
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        warn_at = int(self.threshold_tokens * PRESSURE_WARNING_RATIO)
        if tokens < warn_at:
            self.pressure_warning_active = False
            return None
        if tokens >= self.threshold_tokens or self.pressure_warning_active:
            return None
        self.pressure_warning_active = True
        pct = int(tokens / self.threshold_tokens * 100)
        text = (
            f"⚠️ Context is {pct}% to compaction threshold "
            f"({tokens:,}/{self.threshold_tokens:,} tokens)"
        )
        self._status(text)
        return text

    def _status(self, text: str) -> None:
        if self.status_callback is not None:
            self.status_callback(text)
        elif not self.quiet_mode:
            logger.info("%s", text)

    def _record_compaction(self, savings_pct: float, after_tokens: int) -> None:
        """Anti-thrashing bookkeeping after a compaction (CC-17, CC-20, CC-118)."""
        if savings_pct < INEFFECTIVE_SAVINGS_PCT:
            self.ineffective_compression_count += 1
        else:
            self.ineffective_compression_count = 0
        self.last_prompt_tokens = AWAITING_REAL_USAGE
        self.awaiting_real_usage = True
        if after_tokens < int(self.threshold_tokens * PRESSURE_WARNING_RATIO):
            self.pressure_warning_active = False


def _accountant_for(counter: TokenCounter) -> ConversationTokens | None:
    """A per-conversation accountant when the counter has per-message figures."""
    if isinstance(counter, ExactCounter):
        return ConversationTokens(counter)
    if type(counter) is RoughCounter:
        return ConversationTokens()
    return None
