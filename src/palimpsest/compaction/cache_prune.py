"""Pruning that knows the prompt cache: the proactive pass (CC-45) and the compaction's head.

Two passes rewrite messages the provider may still hold in its prompt cache:

- the **proactive prune** (spec CC-45, ``compression.proactive_prune_tokens``), run before a
  model call once the prompt passes that size: old tool results over
  ``proactive_prune_min_result_chars`` become one-liners, when that reclaims at least
  ``proactive_prune_min_reclaim_tokens``;
- the **prune phase of a compaction**, whose head (``protect_first_n``) is the one part of
  the cached prefix that survives the compaction.

With ``compression.cache_aware`` on (the default), both ask :func:`.cache_policy.decide_rewrite`
first: while the cache is warm, a rewrite inside the cached prefix happens only when it
saves more than it costs at the route's prices over the session's horizon
(:meth:`.cache_policy.CacheState.horizon`: deferred prunes collect into one bulk rewrite);
otherwise only what lies beyond the prefix is pruned (often nothing: the newest messages
are protected). A cold cache prunes everything eligible: nothing cached is lost. With it
off, they prune whenever there is something to prune, as the seed did.

The rewrite starts at the oldest prunable result, as the seed's does. Starting it later
(the start point with the largest net saving, leaving older results for later) was
measured and rejected: it splits one bulk rewrite into several, each paying for the
protected tail again (docs/benchmarks.md, "Prompt-cache cost").

:class:`CacheAwarePruning` is the compressor's share of this: the state the host keeps
current (:meth:`observe_call`) and the two entry points.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..messages.reading import MessageReading
from ..tokens import message_budget_tokens
from .cache_policy import (
    DEFAULT_HORIZON_CALLS,
    CacheRates,
    CacheState,
    RewriteDecision,
    decide_rewrite,
)
from .prune import PruneResult, prune_tool_results

__all__ = [
    "CacheAwarePruning",
    "ProactivePrune",
    "first_change",
    "proactive_prune",
    "reclaimed_tokens",
]

PROACTIVE_MIN_RECLAIM_TOKENS = 4_096
PROACTIVE_MIN_RESULT_CHARS = 8_000


@dataclass(frozen=True)
class ProactivePrune:
    """What one proactive pass did. ``messages`` is the input object when nothing changed."""

    messages: list[dict[str, Any]]
    pruned_count: int
    reclaimed_tokens: int
    reason: str
    decision: RewriteDecision | None = None

    @property
    def changed(self) -> bool:
        return self.pruned_count > 0


def first_change(before: Sequence[Any], after: Sequence[Any]) -> int | None:
    """The first index whose message object differs (prune copies only what it changes)."""
    for i, (old, new) in enumerate(zip(before, after, strict=False)):
        if old is not new:
            return i
    return None


def reclaimed_tokens(before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]]) -> int:
    """Rough tokens removed, counting only the messages prune replaced."""
    return sum(
        message_budget_tokens(old) - message_budget_tokens(new)
        for old, new in zip(before, after, strict=False)
        if old is not new
    )


def _span_tokens(messages: Sequence[dict[str, Any]], start: int, end: int) -> int:
    return sum(message_budget_tokens(m) for m in messages[start:end])


def _unchanged(messages: list[dict[str, Any]], reason: str, decision: Any = None) -> ProactivePrune:
    return ProactivePrune(messages, 0, 0, reason, decision)


def proactive_prune(
    messages: list[dict[str, Any]],
    *,
    current_tokens: int | None,
    trigger_tokens: int,
    protect_last_n: int,
    min_result_chars: int = PROACTIVE_MIN_RESULT_CHARS,
    min_reclaim_tokens: int = PROACTIVE_MIN_RECLAIM_TOKENS,
    style: Literal["summary", "placeholder"] = "summary",
    cache: CacheState | None = None,
    rates: CacheRates | None = None,
    now: float = 0.0,
    horizon_calls: int = DEFAULT_HORIZON_CALLS,
) -> ProactivePrune:
    """CC-45's prune-only pass; with ``cache`` given, it keeps a warm cached prefix.

    Returns the input list itself (count 0) when the pass is off (``trigger_tokens <= 0``),
    the prompt is below ``trigger_tokens``, the list is too short, nothing was pruned, the
    reclaim is below ``min_reclaim_tokens``, or (cache-aware) the rewrite inside the warm
    prefix would cost more than it saves and nothing beyond the prefix is worth pruning.
    """
    if trigger_tokens <= 0:
        return _unchanged(messages, "proactive pruning is off")
    if current_tokens is None or current_tokens < trigger_tokens:
        return _unchanged(messages, "below the proactive prune size")
    if len(messages) <= protect_last_n + 2:
        return _unchanged(messages, "too few messages")

    def run(keep_before: int) -> tuple[PruneResult, int]:
        pruned = prune_tool_results(
            messages,
            protect_last_n=protect_last_n,
            tail_token_budget=None,
            style=style,
            keep_before=keep_before,
            min_chars=min_result_chars,
        )
        return pruned, reclaimed_tokens(messages, pruned.messages)

    pruned, reclaimed = run(0)
    if pruned.pruned_count == 0 and pruned.shrunk_calls == 0:
        return _unchanged(messages, "nothing to prune")
    if reclaimed < min_reclaim_tokens:
        return _unchanged(messages, f"reclaims {reclaimed:,} tokens, under {min_reclaim_tokens:,}")
    decision: RewriteDecision | None = None
    if cache is not None:
        start = first_change(messages, pruned.messages)
        prefix = min(cache.prefix_messages, len(messages))
        if start is not None and start < prefix:
            decision = decide_rewrite(
                warm=cache.warm(now),
                reclaimed_tokens=reclaimed,
                tokens_after_first_change=_span_tokens(messages, start, prefix),
                rates=rates,
                horizon_calls=cache.horizon(horizon_calls),
            )
            if decision.rewrite:
                cache.rewritten()
            else:
                pruned, reclaimed = run(prefix)
                if pruned.pruned_count == 0 or reclaimed < min_reclaim_tokens:
                    return _unchanged(messages, decision.reason, decision)
    count = pruned.pruned_count + pruned.shrunk_calls
    reason = decision.reason if decision is not None else "pruned"
    return ProactivePrune(pruned.messages, count, reclaimed, reason, decision)


class CacheAwarePruning:
    """The compressor's cache state and its two cache-aware entry points.

    The host (the agent loop) calls :meth:`observe_call` after every model call and
    :meth:`prune_before_call` before one; the compaction's prune phase asks
    :meth:`head_floor` how much of the head to leave as it is.
    """

    cache_aware: bool = True
    cache_state: CacheState | None = None
    cache_rates: CacheRates | None = None
    cache_horizon_calls: int = DEFAULT_HORIZON_CALLS
    proactive_prune_tokens: int = 0
    proactive_min_reclaim_tokens: int = PROACTIVE_MIN_RECLAIM_TOKENS
    proactive_min_result_chars: int = PROACTIVE_MIN_RESULT_CHARS
    cache_clock: Callable[[], float] = staticmethod(time.monotonic)
    last_cache_decision: RewriteDecision | None = None
    protect_last_n: int
    prune_style: Literal["summary", "placeholder"]
    tail_token_budget: int

    def prune_phase(
        self, source: list[dict[str, Any]], readings: Sequence[MessageReading], head_end: int
    ) -> PruneResult:
        """Phase 1 of a compaction: the prune, leaving a warm cached head as it is when
        rewriting it would not pay (:meth:`head_floor`)."""

        def run(keep_before: int) -> PruneResult:
            return prune_tool_results(
                source,
                protect_last_n=self.protect_last_n,
                tail_token_budget=self.tail_token_budget,
                style=self.prune_style,
                readings=readings,
                keep_before=keep_before,
            )

        pruned = run(0)
        floor = self.head_floor(source, pruned.messages, head_end)
        return run(floor) if floor else pruned

    def configure_cache(
        self,
        *,
        ttl_seconds: float | None,
        rates: CacheRates | None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        """Tell the engine the route's cache lifetime and prices (the host knows the route)."""
        self.cache_state = CacheState(ttl_seconds=ttl_seconds)
        self.cache_rates = rates
        if clock is not None:
            self.cache_clock = clock

    def observe_call(self, usage: Any, prefix_messages: int) -> None:
        """Record a model call's usage and how many conversation messages it carried."""
        if self.cache_state is not None:
            self.cache_state.observe(usage, prefix_messages, self.cache_clock())

    def prune_before_call(
        self, messages: list[dict[str, Any]], current_tokens: int | None
    ) -> ProactivePrune:
        """CC-45's proactive pass, cache-aware when ``cache_aware`` is on."""
        result = proactive_prune(
            messages,
            current_tokens=current_tokens,
            trigger_tokens=self.proactive_prune_tokens,
            protect_last_n=self.protect_last_n,
            min_result_chars=self.proactive_min_result_chars,
            min_reclaim_tokens=self.proactive_min_reclaim_tokens,
            style=self.prune_style,
            cache=self.cache_state if self.cache_aware else None,
            rates=self.cache_rates,
            now=self.cache_clock(),
            horizon_calls=self.cache_horizon_calls,
        )
        self.last_cache_decision = result.decision
        return result

    def head_floor(
        self, source: list[dict[str, Any]], pruned: list[dict[str, Any]], head_end: int
    ) -> int:
        """How many leading messages the compaction's prune must leave as they are.

        The head is what stays of the cached prefix after a compaction; while the cache is
        warm it is rewritten only when that saves more than the rest of the head costs to
        cache again. 0 (no floor) when the cache is cold, unknown or cache-awareness is off.
        """
        state = self.cache_state
        if not self.cache_aware or state is None:
            return 0
        head = min(head_end, state.prefix_messages, len(source))
        start = first_change(source[:head], pruned[:head])
        if start is None:
            return 0
        decision = decide_rewrite(
            warm=state.warm(self.cache_clock()),
            reclaimed_tokens=reclaimed_tokens(source[:head], pruned[:head]),
            tokens_after_first_change=_span_tokens(source, start, head),
            rates=self.cache_rates,
            horizon_calls=state.horizon(self.cache_horizon_calls),
        )
        self.last_cache_decision = decision
        return 0 if decision.rewrite else head
