"""The built-in context engine: prune, cut, summarize, reassemble.

``ContextCompressor.compress`` reads top-down as the four phases of the seed algorithm,
each in its own module (``prune``, ``boundaries``, ``summary``, ``assemble``). This module
keeps only what spans calls: thresholds, the usage the provider reported, the previous
summary for iterative updates, and the guards that stop compaction from thrashing or from
hammering a failing summary model.

Around the four phases sit three guards (issue 8): the input is checked and repaired at
the door (``repair``), the assembled list is fitted to the window minus the output
reserve (``fit``), and a result that would be larger than its input, by the rough count
or, when the margin is small, by the exact o200k count (``growth``), is refused.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Literal

from ..config import Settings
from ..errors import ConfigError
from ..messages.reading import read_transcript
from ..summarizers.base import Summarizer, SummaryRequest
from ..summarizers.deadline import DEFAULT_SUMMARY_TIMEOUT
from ..tokens import ExactCounter, MessageSizer, RoughCounter, TokenCounter
from .assemble import Assembly, sanitize_tool_pairs, strip_host_markers
from .boundaries import MIN_TAIL_MESSAGES, TAIL_SOFT_CEILING, align_forward, find_tail_cut
from .cache_prune import CacheAwarePruning
from .fit import FitResult, fit_target
from .growth import exact_saving, would_grow
from .markers import (
    is_compaction_summary_message,
    split_earlier_summaries,
)
from .middle import original_middle
from .placement import place_summary
from .repair import (
    RepairReport,
    check_messages,
    normalize_messages,
    unmeasurable,
)
from .repair_lean import lean_repair
from .stats import CompressionStats
from .summary_writer import SummaryWriter, extractive_summarizer, needs_check
from .tail_cap import cap_tail_assistants
from .thresholds import DEFAULT_THRESHOLD_PERCENT, clamp_target_ratio
from .window import ContextWindow, threshold_choice

__all__ = ["CompressionStats", "ContextCompressor"]

logger = logging.getLogger("palimpsest.compaction")


class ContextCompressor(SummaryWriter, CacheAwarePruning):
    """The default engine: summarize the middle of a conversation, keep head and tail.

    ``summarizer`` defaults to :class:`ExtractiveSummarizer` (deterministic, offline). Any
    object with ``summarize(request) -> str`` works; an LLM summarizer comes from
    :mod:`palimpsest.summarizers.llm`. ``token_counter`` measures whole message lists for
    the savings check and preflight; tail walks always use the per-message chars/4 rule.
    """

    def __init__(
        self,
        context_length: int,
        summarizer: Summarizer | None = None,
        threshold_percent: float | None = None,
        target_ratio: float = 0.2,
        protect_first_n: int = 3,
        protect_last_n: int = 20,
        token_counter: TokenCounter | None = None,
        *,
        model: str = "",
        max_tokens: int | None = None,
        threshold_tokens_cap: int | None = None,
        prune_style: Literal["summary", "placeholder"] = "summary",
        summary_template: Literal["handoff", "classic"] = "handoff",
        fallback_summary: Literal["static", "deterministic"] = "deterministic",
        orphan_call_policy: Literal["stub", "strip"] = "stub",
        refuse_if_grow: bool = True,
        abort_on_summary_failure: bool = False,
        min_tail_user_messages: int = 1,
        max_tail_assistant_tokens: int | None = None,
        summary_timeout: float | None = DEFAULT_SUMMARY_TIMEOUT,
        quiet_mode: bool = False,
        status_callback: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(context_length, bool) or not isinstance(context_length, int):
            raise TypeError("context_length must be an int (tokens)")
        if context_length <= 0:
            raise ValueError(f"context_length must be positive, got {context_length}")
        # A ratio given here is the caller's choice and wins over the 64K floor; ``None``
        # is the seed default, which keeps the floor (CC-03, CC-04).
        self.threshold_explicit = threshold_percent is not None
        if threshold_percent is None:
            threshold_percent = DEFAULT_THRESHOLD_PERCENT
        if not 0 < threshold_percent <= 1:
            raise ValueError(f"threshold_percent must be in (0, 1], got {threshold_percent}")
        if protect_first_n < 0 or protect_last_n < 1:
            raise ValueError("protect_first_n must be >= 0 and protect_last_n >= 1")
        self.summarizer: Summarizer = summarizer or extractive_summarizer()
        self.token_counter: TokenCounter = token_counter or RoughCounter()
        self.threshold_percent = threshold_percent
        # Clamped where it is stored (CC-02): 0.05 is kept as 0.10, 0.95 as 0.80.
        self.summary_target_ratio = clamp_target_ratio(target_ratio)
        self.protect_first_n = protect_first_n
        self.protect_last_n = protect_last_n
        self.model = model
        self.max_tokens = max_tokens
        self.threshold_tokens_cap = threshold_tokens_cap
        self.prune_style: Literal["summary", "placeholder"] = prune_style
        self.summary_template: Literal["handoff", "classic"] = summary_template
        self.fallback_summary: Literal["static", "deterministic"] = fallback_summary
        self.orphan_call_policy: Literal["stub", "strip"] = orphan_call_policy
        self.refuse_if_grow = refuse_if_grow
        self.abort_on_summary_failure = abort_on_summary_failure
        if min_tail_user_messages < 1:
            raise ValueError("min_tail_user_messages must be >= 1")
        self.min_tail_user_messages = min_tail_user_messages
        self.max_tail_assistant_tokens = max_tail_assistant_tokens
        self.threshold_source = "caller" if self.threshold_explicit else "default"
        self.context_window = ContextWindow(context_length, "caller")
        if summary_timeout is not None and summary_timeout <= 0:
            raise ValueError(f"summary_timeout must be positive, got {summary_timeout}")
        self.summary_timeout = summary_timeout
        self.quiet_mode = quiet_mode
        self.status_callback = status_callback
        self._clock = clock
        self.context_length = context_length
        # Set by a host whose requests carry more than the messages (system prompt, tools).
        self.compaction_target_tokens: int | None = None
        self._recompute_thresholds()
        self._reset_session_state()

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        context_length: int | None = None,
        summarizer: Summarizer | None = None,
        token_counter: TokenCounter | None = None,
        **overrides: Any,
    ) -> ContextCompressor:
        """A compressor configured from ``compression`` and ``model`` settings.

        ``context_length`` defaults to ``model.context_length``; one of the two is required.
        Keyword ``overrides`` win over the settings (e.g. ``threshold_percent=0.7``).
        ``window_source`` says where ``context_length`` came from (default: ``caller`` when
        given, else ``configured``); ``provider`` scopes ``compression.model_thresholds``
        keys written ``provider:substring``.
        """
        window = context_length or settings.model.context_length
        if not window:
            raise ConfigError(
                "no context length: pass one or set model.context_length in the config",
                key="model.context_length",
            )
        c = settings.compression
        source: ContextWindow = overrides.pop("window_source", None) or (
            ContextWindow(window, "caller")
            if context_length
            else ContextWindow(window, "configured", "model.context_length")
        )
        provider = overrides.pop("provider", None)
        # A model_thresholds match, else a ratio the config file sets, is explicit (and
        # skips the 64K floor); else the seed default.
        chosen = threshold_choice(settings, str(overrides.get("model") or ""), provider)
        options: dict[str, Any] = {
            "threshold_percent": chosen.ratio,
            "target_ratio": c.target_ratio,
            "protect_first_n": c.protect_first_n,
            "protect_last_n": c.protect_last_n,
            "model": settings.model.name or "",
            "max_tokens": settings.model.max_tokens,
            "threshold_tokens_cap": c.threshold_tokens,
            "prune_style": c.prune_style,
            "summary_template": c.summary_template,
            "fallback_summary": c.fallback_summary,
            "orphan_call_policy": c.orphan_call_policy,
            "refuse_if_grow": c.refuse_if_grow,
            "abort_on_summary_failure": c.abort_on_summary_failure,
            "min_tail_user_messages": c.min_tail_user_messages,
            "max_tail_assistant_tokens": c.max_tail_assistant_tokens,
            "summary_timeout": c.summary_timeout_seconds,
        }
        options.update(overrides)
        engine = cls(window, summarizer, token_counter=token_counter, **options)
        engine.context_window = source
        if "threshold_percent" not in overrides:
            engine.model_thresholds = (settings, provider)
        engine.threshold_source = "caller" if "threshold_percent" in overrides else chosen.source
        engine.cache_aware = c.cache_aware
        engine.cache_horizon_calls = c.cache_horizon_calls
        engine.proactive_prune_tokens = c.proactive_prune_tokens
        engine.proactive_min_reclaim_tokens = c.proactive_prune_min_reclaim_tokens
        engine.proactive_min_result_chars = max(c.proactive_prune_min_result_chars, 200)
        return engine

    # -- identity and thresholds ---------------------------------------------------------

    model_thresholds: tuple[Settings, str | None] | None = None
    """The settings (and provider) ``compression.model_thresholds`` is resolved from; kept
    so a model switch (``update_model``) picks the new model's ratio."""

    def update_model(self, model: str, context_length: int, *args: Any, **kwargs: Any) -> None:
        if self.model_thresholds is not None and model != self.model:
            settings, provider = self.model_thresholds
            chosen = threshold_choice(settings, model, provider)
            self.threshold_explicit = chosen.ratio is not None
            self.threshold_percent = chosen.ratio or DEFAULT_THRESHOLD_PERCENT
            self.threshold_source = chosen.source
        super().update_model(model, context_length, *args, **kwargs)

    @property
    def name(self) -> str:
        return "compressor"

    @property
    def fit_target_tokens(self) -> int:
        """The most tokens a result may take: the window minus the output reserve."""
        return fit_target(self.context_length, self.max_tokens)

    def _reset_session_state(self) -> None:
        """Forget everything that belongs to one conversation (CE-10)."""
        self._reset_trigger_state()
        self.compression_count = 0
        self.previous_summary: str | None = None
        self.last_stats = CompressionStats()
        self._sizer: MessageSizer | None = None
        self._exact: ExactCounter | None = None
        self._input: list[dict[str, Any]] = []
        self._repair = RepairReport()
        self._reset_call_fields()

    def _reset_call_fields(self) -> None:
        self.last_summary_dropped_count = 0
        self.last_summary_fallback_used = False
        self.last_summary_error: str | None = None
        self.last_compress_refused_would_grow = False
        self.last_compress_aborted = False
        # Verified compaction: "accepted", "retried" (accepted on the retry), "rejected"
        # (the fallback was used), or None (no check: deterministic summarizer or no call).
        self.last_summary_check: str | None = None
        self.last_summary_rejections: list[str] = []

    def has_content_to_compress(self, messages: list[dict[str, Any]]) -> bool:
        check_messages(messages)
        if len(messages) <= self._min_messages():
            return False
        start = align_forward(messages, self.protect_first_n)
        if start >= len(messages):
            return False
        return start < find_tail_cut(
            messages, start, self.tail_token_budget, min_user_messages=self.min_tail_user_messages
        )

    # -- the pipeline ----------------------------------------------------------------------

    def _min_messages(self) -> int:
        return self.protect_first_n + MIN_TAIL_MESSAGES + 1

    def _count(self, messages: Sequence[dict[str, Any]]) -> int:
        if self._sizer is not None and isinstance(self.token_counter, RoughCounter):
            return self._sizer.tokens(messages)
        return self.token_counter.count_messages(messages)

    def compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
        *,
        force: bool = False,
        memory_context: str = "",
    ) -> list[dict[str, Any]]:
        """Return a new, shorter, valid message list; ``messages`` is never modified.

        ``force`` marks a user-requested compression: it clears the anti-thrashing count
        and any summary cooldown first. ``memory_context`` is text from memory providers'
        pre-compression hooks, passed to the summarizer as source material only.

        Raises :class:`~palimpsest.errors.TranscriptError` (naming the index) when
        ``messages`` is not a transcript; whatever it returns passes
        ``validate_transcript(..., strict=True)`` and has no more exact tokens than
        ``messages``. ``last_stats.fits`` says whether it fits the window minus the output
        reserve, and ``last_stats.not_fit_reason`` why not.
        """
        check_messages(messages)
        self._reset_call_fields()
        # Within one call the same message objects are measured up to three times (before,
        # summary budget, after); the sizer measures each once. It never outlives the call.
        self._sizer = MessageSizer()
        self._input = list(messages)
        try:
            return self._compress(messages, current_tokens, focus_topic, force, memory_context)
        finally:
            self._sizer = None
            self._input = []

    def _compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None,
        focus_topic: str | None,
        force: bool,
        memory_context: str,
    ) -> list[dict[str, Any]]:
        if force:
            self.ineffective_compression_count = 0
            self.fallback_streak = 0
            self._clear_cooldown()
        try:
            before_tokens = self._count(messages)
        except (ValueError, RecursionError) as err:
            raise unmeasurable(messages, self.token_counter.count_messages, err) from None
        stats = CompressionStats(
            before_messages=len(messages),
            before_tokens=before_tokens,
            fit_target_tokens=self.fit_target_tokens,
        )
        self.last_stats = stats
        # Only what a provider would reject is rewritten; the rest passes through as is.
        source, self._repair = normalize_messages(messages)
        stats.repaired_messages = self._repair.changed + self._repair.messages_dropped

        if len(source) <= self._min_messages():
            if not self.quiet_mode:
                logger.warning(
                    "Cannot compress: only %d messages (need > %d)",
                    len(source),
                    self._min_messages(),
                )
            return self._no_op(source, stats, "too few messages")

        # The one reading of the transcript serves prune, boundaries and the summarizer:
        # pruning changes outputs, never what a message is, and keeps indexes aligned.
        readings = read_transcript(source)

        # Phase 1: prune old tool output (a warm cached head kept: cache_prune).
        pruned = self.prune_phase(source, readings, align_forward(source, self.protect_first_n))
        work = pruned.messages
        stats.pruned_count = pruned.pruned_count
        stats.shrunk_calls = pruned.shrunk_calls

        # Phase 2: boundaries.
        start = align_forward(work, self.protect_first_n)
        tail_budget = self._tail_budget_to_fit(work, start, stats.fit_target_tokens)
        end = (
            find_tail_cut(
                work,
                start,
                tail_budget,
                readings=readings,
                min_user_messages=self.min_tail_user_messages,
            )
            if start < len(work)
            else start
        )
        if start >= end:
            return self._no_op(work, stats, "nothing between head and tail")
        turns, earlier = self._turns_to_summarize(work, start, end)
        if not turns and earlier and end < len(work):
            # Only the earlier summary in the middle (all after it fit the 1.5x ceiling once
            # pruned): walk again behind it with the raw budget (CC-52's re-walk), or such a
            # session never shrinks again and overflows its window.
            end = find_tail_cut(
                work,
                end,
                int(tail_budget / TAIL_SOFT_CEILING),
                readings=readings,
                min_user_messages=self.min_tail_user_messages,
            )
            turns, earlier = self._turns_to_summarize(work, start, end)
        if not turns:
            return self._no_op(work, stats, "only an earlier summary to compress")
        stats.head_messages, stats.middle_messages = start, end - start
        stats.tail_messages = len(work) - end
        if not self.quiet_mode:
            logger.info(
                "Compressing turns %d-%d (%d messages), keeping %d head + %d tail; "
                "%d tokens against a %d threshold (window %d)",
                start + 1,
                end,
                end - start,
                start,
                len(work) - end,
                current_tokens or max(self.last_prompt_tokens, 0) or stats.before_tokens,
                self.threshold_tokens,
                self.context_length,
            )

        # Phase 3: summary, written from the original middle (prune keeps indexes aligned):
        # pruned turns are one-liners that lost exit codes and error lines.
        previous_before = self.previous_summary
        original, span = original_middle(source, readings, start, end)
        request = self._summary_request(
            turns, earlier, focus_topic, memory_context, original, span, tail=source[end:]
        )
        stats.summary_budget = request.budget_tokens
        body = self._generate_summary(request)
        stats.summary_check = self.last_summary_check
        stats.summary_rejections = list(self.last_summary_rejections)
        if body is None and self.abort_on_summary_failure:
            # Keep the middle rather than lose it to a transient failure (CC-87).
            self.previous_summary = previous_before
            self.last_compress_aborted = True
            return self._no_op(work, stats, f"summary failed: {self.last_summary_error}")
        if body is None:
            body = self._fallback_summary(request, end - start)
            stats.fallback_used = True

        # Phase 4: assembly, fitted to the window.
        body, assembly, fitted = self._assemble_fitted(work, start, end, body, request, stats)
        result = fitted.messages
        after_tokens = fitted.tokens
        if self.refuse_if_grow and self._would_grow(result, after_tokens, stats.before_tokens):
            # A summary larger than what it replaces only burns context (CC-115).
            self.previous_summary = previous_before
            self.last_compress_refused_would_grow = True
            return self._no_op(source, stats, "the summary would not shrink the conversation")
        self.compression_count += 1
        stats.compressed = True
        stats.summary_role = assembly.summary_role
        stats.summary_merged = assembly.merged
        stats.summary_tokens = self.token_counter.count_text(body)
        stats.removed_orphan_results = assembly.sanitize.removed_results
        stats.stubbed_calls = assembly.sanitize.stubbed_calls
        stats.after_tokens = after_tokens
        stats.fits, stats.not_fit_reason = fitted.fits, fitted.reason
        stats.fit_dropped_messages = fitted.dropped_messages
        stats.fit_clipped_messages = fitted.clipped_messages
        self._after_compaction(result, stats)
        return result

    def _assemble_fitted(
        self,
        work: list[dict[str, Any]],
        start: int,
        end: int,
        body: str,
        request: SummaryRequest,
        stats: CompressionStats,
    ) -> tuple[str, Assembly, FitResult]:
        rewrite = None
        if not stats.fallback_used and not needs_check(self.summarizer):

            def rewrite(budget: int) -> str | None:
                stats.summary_budget = budget
                return self._ask(replace(request, budget_tokens=budget))

        tail, stats.tail_capped_messages = cap_tail_assistants(
            work[end:], self.max_tail_assistant_tokens
        )
        placed = place_summary(
            work[:start],
            body,
            tail,
            has_user_turn=request.has_user_turn,
            orphan_call_policy=self.orphan_call_policy,
            target=stats.fit_target_tokens,
            count=self._count,
            count_text=self.token_counter.count_text,
            rewrite=rewrite,
        )
        if placed.body is not body:
            self.previous_summary = placed.body
        return placed.body, placed.assembly, placed.fitted

    def _tail_budget_to_fit(self, work: list[dict[str, Any]], start: int, target: int) -> int:
        """The tail budget, lowered when head + summary + tail could not fit the target (or
        the host's ``compaction_target_tokens``): what leaves the tail is then summarized
        rather than dropped by the fit step after."""
        target = min(target, self.compaction_target_tokens or target)
        room = target - self._count(work[:start]) - self.max_summary_tokens
        return max(0, min(self.tail_token_budget, room))

    def _exact_counter(self) -> ExactCounter:
        if isinstance(self.token_counter, ExactCounter):
            return self.token_counter
        if self._exact is None:
            self._exact = ExactCounter("o200k_base", cache_size=4_096)
        return self._exact

    def _would_grow(self, result: list[dict[str, Any]], after: int, before: int) -> bool:
        """Not smaller than the input, by the configured count and, where the rough margin
        could hide a growth, by the exact one (CC-115, :func:`.growth.would_grow`)."""
        exact = isinstance(self.token_counter, ExactCounter)
        return would_grow(self._input, result, after, before, self._exact_counter, exact)

    def _no_op(
        self, messages: Sequence[dict[str, Any]], stats: CompressionStats, reason: str
    ) -> list[dict[str, Any]]:
        """A pass that summarized nothing still counts as ineffective (CC-19).

        The list still goes through the tool-pair sanitizer: whatever ``compress`` returns
        is a valid provider sequence, even when the input was not (CE-03).
        """
        self.ineffective_compression_count += 1
        copies = [strip_host_markers(m) for m in messages]
        result, report = sanitize_tool_pairs(copies, self.orphan_call_policy)
        repaired = not self._repair.clean or report.stubbed_calls or report.stripped_calls
        if repaired and exact_saving(self._input, result, self._exact_counter()) < 0:
            # The repairs (stubs, ids, JSON arguments) would add tokens: repair by removal.
            result = lean_repair(self._input)
        stats.reason = reason
        stats.after_messages = len(result)
        stats.after_tokens = self._count(result)
        stats.fits = stats.after_tokens <= stats.fit_target_tokens
        if not stats.fits:
            stats.not_fit_reason = (
                f"{stats.after_tokens:,} tokens, over the target of "
                f"{stats.fit_target_tokens:,}, and nothing was compressed ({reason})"
            )
        return result

    def _turns_to_summarize(
        self, work: list[dict[str, Any]], start: int, end: int
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """The middle without earlier summaries, and those summaries' bodies (CC-110, CC-111)."""
        if self.previous_summary and not any(is_compaction_summary_message(m) for m in work):
            self.previous_summary = None  # carried over from an unrelated conversation
        turns, earlier = split_earlier_summaries(work[start:end])
        if earlier and not self.previous_summary:
            self.previous_summary = "\n\n".join(earlier)  # rehydrate after a restart
        return turns, earlier

    def _after_compaction(self, result: list[dict[str, Any]], stats: CompressionStats) -> None:
        stats.after_messages = len(result)
        stats.fallback_used = stats.fallback_used or self.last_summary_fallback_used
        self._record_compaction(stats.savings_pct, stats.after_tokens)
        if not self.quiet_mode:
            logger.info(
                "Compressed %d -> %d messages (~%d tokens saved)",
                stats.before_messages,
                stats.after_messages,
                stats.before_tokens - stats.after_tokens,
            )
        if self.compression_count >= 2:
            self._status(
                f"Session compressed {self.compression_count} times — accuracy may degrade. "
                "Consider /new to start fresh."
            )

    # -- lifecycle ---------------------------------------------------------------------

    def on_session_reset(self) -> None:
        self._reset_session_state()

    def on_session_end(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        self._reset_session_state()

    def get_status(self) -> dict[str, Any]:
        status = super().get_status()
        status.update(
            tail_token_budget=self.tail_token_budget,
            max_summary_tokens=self.max_summary_tokens,
            ineffective_compression_count=self.ineffective_compression_count,
            fallback_streak=self.fallback_streak,
            cooldown_remaining=self.cooldown_remaining(),
        )
        return status
