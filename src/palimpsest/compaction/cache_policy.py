"""Whether rewriting old messages is worth breaking the provider's prompt cache.

A provider that caches prompt prefixes bills the cached part of the next request at a
fraction of the input price (Anthropic: 0.1x; OpenAI: 0.1x to 0.5x) for as long as the
cache is warm. Any rewrite of a message inside that prefix (a pruned tool result, a
shrunk argument) turns every token after it back into uncached input, written to the cache
again (Anthropic bills that write at 1.25x input). One prune that reclaims 20K tokens deep
in a 200K prefix can make the next call cost several times what it would have (OpenCode
#32515 measured 7.5x). So while the cache is warm, a rewrite must pay for itself:

    saving  = reclaimed tokens x cache-read rate x horizon (calls they would be read on)
    cost    = tokens after the first rewritten message x (write rate - cache-read rate)

The horizon (:meth:`CacheState.horizon`) is the larger of the configured
``compression.cache_horizon_calls`` and half the calls made since the prefix was last
rewritten while the cache stayed warm. That half is the batching rule: each rewrite pays
once for the protected tail after it, so pruning every call pays that tail every call,
and deferring pays a cache read of the deferred tokens every call. When prunable output
accrues at r tokens a call, pruning whenever ``reclaimed x read x calls_since / 2``
exceeds the rewrite's cost is the economic batch size (reclaimed = r x calls_since, so the
rule is ``r x read x calls_since^2 / 2 > cost``: the deferred reads of one cycle match
one rewrite), which minimises the cost per call; deferring while warm collects many small
prunes into one bulk rewrite. A long warm stretch without a rewrite (the first prune of
a session that has run a hundred calls) gets a long horizon, so a big prune goes through
at once, where a fixed 8 calls would hold it back. The figure restarts at 0 after a
rewrite, a compaction, or a cold cache. Measured against the prune-every-time seed in
docs/benchmarks.md ("Prompt-cache cost"): the rule costs what a fixed horizon of 8 to 16
does there (0.911x the seed), 8% above a policy that prunes the seed's results with no
rewrite cost at all (0.841x), the least any timing of those prunes could reach.

This module holds the cache state the pruning passes consult (:class:`CacheState`), the
route's cache lifetime (:data:`CACHE_TTL_SECONDS`, with sources) and rates
(:class:`CacheRates`, from :mod:`palimpsest.pricing`), and the decision itself
(:func:`decide_rewrite`). A cold cache (no call yet, the lifetime passed, or the provider
reported no cache reads on a route that bills them) makes every rewrite free: with nothing
cached there is nothing to lose. Unknown prices keep the cache: a decision that needs a
rate nobody quoted is not made on a guess.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..pricing import ModelPrice, estimate_usage_cost
from ..usage import CanonicalUsage

__all__ = [
    "CACHE_TTL_SECONDS",
    "CACHE_TTL_SOURCES",
    "DEFAULT_HORIZON_CALLS",
    "CacheRates",
    "CacheState",
    "RewriteDecision",
    "cache_rates",
    "decide_rewrite",
    "route_cache_ttl",
]

CACHE_TTL_SECONDS: dict[str, float] = {
    "anthropic:5m": 300.0,
    "anthropic:1h": 3600.0,
    "openai": 300.0,
}
"""How long a route keeps a cached prefix after its last use, in seconds.

- ``anthropic:5m`` / ``anthropic:1h``: Anthropic prompt caching, ``cache_control`` with the
  default 5-minute lifetime or ``"ttl": "1h"`` (writes billed at 1.25x and 2x input), each
  hit refreshing it (docs.claude.com, build-with-claude/prompt-caching). OpenRouter passes
  the markers through to Claude with the same lifetimes.
- ``openai``: automatic prefix caching; cached prefixes "generally remain active for 5 to
  10 minutes of inactivity", up to an hour off-peak (platform.openai.com, guides/
  prompt-caching). The lower bound is used: a cache assumed warm that is cold costs one
  deferred prune, one assumed cold that is warm costs a rewrite of the whole prefix.
"""

CACHE_TTL_SOURCES: dict[str, str] = {
    "anthropic:5m": "https://docs.claude.com/en/docs/build-with-claude/prompt-caching",
    "anthropic:1h": "https://docs.claude.com/en/docs/build-with-claude/prompt-caching",
    "openai": "https://platform.openai.com/docs/guides/prompt-caching",
}

DEFAULT_HORIZON_CALLS = 8
"""The least number of calls a reclaimed token is assumed to be read on before the next
compaction or the end of the session rewrites the prefix anyway (a conservative count:
agent turns run a few rounds each, and a compaction follows within tens of calls on a long
run). :meth:`CacheState.horizon` lengthens it on a long warm stretch."""


def route_cache_ttl(
    provider: str | None, model: str | None = None, ttl: str | None = "5m"
) -> float | None:
    """The route's cache lifetime in seconds, ``None`` when the route has no known cache.

    ``ttl`` is the configured ``model.cache_ttl`` (Anthropic routes only).
    """
    route = (provider or "").lower()
    name = (model or "").lower()
    if route == "anthropic" or (route == "openrouter" and "claude" in name):
        return CACHE_TTL_SECONDS["anthropic:1h" if ttl == "1h" else "anthropic:5m"]
    if route in ("openai", "openai-responses", "azure") or (
        route == "openrouter" and name.startswith(("openai/", "gpt-"))
    ):
        return CACHE_TTL_SECONDS["openai"]
    return None


@dataclass(frozen=True)
class CacheRates:
    """USD per million tokens for the three buckets a rewrite moves tokens between.

    ``None`` is a rate nobody quoted. ``cache_write`` is ``None`` on routes that bill no
    separate write (OpenAI: a prefix is cached as ordinary input), which
    ``writes_billed_as_input`` says; there the write rate *is* the input rate.
    """

    input: float | None
    cache_read: float | None
    cache_write: float | None
    writes_billed_as_input: bool = False

    @property
    def write(self) -> float | None:
        """The rate a re-sent, uncached token is billed at."""
        return self.input if self.writes_billed_as_input else self.cache_write


_SAMPLE = 10_000  # a small request, below every long-context price tier


def _rate(model: str, usage: CanonicalUsage, **route: Any) -> float | None:
    cost = estimate_usage_cost(model, usage, **route)
    if cost.amount_usd is None:
        return None
    return cost.amount_usd * 1_000_000 / _SAMPLE


def cache_rates(
    model: str,
    *,
    provider: str | None = None,
    base_url: str | None = None,
    prices: Mapping[str, ModelPrice | Mapping[str, Any]] | None = None,
) -> CacheRates:
    """The route's rates through :func:`~palimpsest.pricing.estimate_usage_cost`.

    Each bucket is priced alone on a small sample, so overrides, the genai-prices
    catalogue and "unknown" all mean here what they mean for a cost figure.
    """
    route: dict[str, Any] = {"provider": provider, "base_url": base_url, "prices": prices}
    anthropic_like = "claude" in model.lower() or (provider or "").lower() == "anthropic"
    return CacheRates(
        input=_rate(model, CanonicalUsage(input_tokens=_SAMPLE), **route),
        cache_read=_rate(model, CanonicalUsage(cache_read_tokens=_SAMPLE), **route),
        cache_write=_rate(model, CanonicalUsage(cache_write_tokens=_SAMPLE), **route),
        writes_billed_as_input=not anthropic_like,
    )


@dataclass
class CacheState:
    """What the last model call says about the provider's prompt cache.

    ``prefix_messages`` is how many messages of the conversation the last request carried
    (the prefix the provider may have cached), ``cached_tokens`` what it reported reading
    from or writing to its cache, ``at`` when the call returned (the caller's clock,
    seconds). ``ttl_seconds`` is the route's lifetime (``None``: no known cache).
    ``calls_since_rewrite`` counts the calls since the cached prefix was last rewritten
    (a prune inside it, a compaction) or the cache went cold: the session's own figure
    for :meth:`horizon`.
    """

    ttl_seconds: float | None = None
    at: float | None = None
    prefix_messages: int = 0
    cached_tokens: int = 0
    calls: int = 0
    calls_since_rewrite: int = 0

    def observe(self, usage: CanonicalUsage | None, prefix_messages: int, at: float) -> None:
        """Record one call: its usage (``None``: unreported) and the request's length."""
        if not self.warm(at):
            self.calls_since_rewrite = 0  # this call wrote its prefix afresh
        self.calls += 1
        self.calls_since_rewrite += 1
        self.at = at
        self.prefix_messages = prefix_messages
        self.cached_tokens = (
            0 if usage is None else usage.cache_read_tokens + usage.cache_write_tokens
        )

    def invalidate(self) -> None:
        """The prefix was rewritten (a compaction): nothing of it is cached any more."""
        self.prefix_messages = 0
        self.cached_tokens = 0
        self.calls_since_rewrite = 0

    def rewritten(self) -> None:
        """A prune rewrote part of the cached prefix: the batching count starts again."""
        self.calls_since_rewrite = 0

    def horizon(self, configured: int = DEFAULT_HORIZON_CALLS) -> int:
        """Calls a token reclaimed now is counted as saved on (module docstring).

        The larger of ``configured`` and half the calls since the last rewrite: the
        economic batch rule when prunable output accrues call by call.
        """
        return max(configured, self.calls_since_rewrite // 2, 0)

    def warm(self, now: float) -> bool:
        """True while the last call's prefix is still cached on the provider."""
        if self.ttl_seconds is None or self.at is None or self.prefix_messages == 0:
            return False
        if self.cached_tokens <= 0:
            return False  # the provider reported no cache use: nothing to keep
        return now - self.at < self.ttl_seconds


@dataclass(frozen=True)
class RewriteDecision:
    """Whether to rewrite inside the cached prefix, with the figures behind the answer."""

    rewrite: bool
    reason: str
    saving_usd: float | None = None
    cost_usd: float | None = None


def decide_rewrite(
    *,
    warm: bool,
    reclaimed_tokens: int,
    tokens_after_first_change: int,
    rates: CacheRates | None,
    horizon_calls: int = DEFAULT_HORIZON_CALLS,
) -> RewriteDecision:
    """Rewrite only when the cache is cold or the rewrite saves more than it costs.

    ``tokens_after_first_change`` counts the prefix tokens from the first rewritten message
    to the end of the cached prefix, before the rewrite; ``reclaimed_tokens`` what the
    rewrite removes. The saving is the reclaimed tokens not read from cache on the next
    ``horizon_calls`` calls; the cost is the rest of those tokens billed once at the write
    rate instead of the cache-read rate.
    """
    if reclaimed_tokens <= 0:
        return RewriteDecision(False, "nothing to reclaim")
    if not warm:
        return RewriteDecision(True, "the prompt cache is cold: a rewrite costs nothing extra")
    if rates is None or rates.cache_read is None or rates.write is None:
        return RewriteDecision(False, "the cache is warm and its prices are unknown")
    saving = reclaimed_tokens * rates.cache_read * max(horizon_calls, 0) / 1_000_000
    rewritten = max(tokens_after_first_change - reclaimed_tokens, 0)
    cost = rewritten * (rates.write - rates.cache_read) / 1_000_000
    if not (math.isfinite(saving) and math.isfinite(cost)):
        return RewriteDecision(False, "the cache is warm and its prices are not finite")
    if saving > cost:
        return RewriteDecision(True, "the rewrite saves more than it costs", saving, cost)
    return RewriteDecision(
        False, "the cache is warm: the rewrite would cost more than it saves", saving, cost
    )
