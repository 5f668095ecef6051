"""The agent's side of cache-aware pruning and of the net cost of each compaction.

Three hooks, each a function of :class:`~.state.AgentState` so the step modules stay as
they were and only call in:

- :func:`configure_cache` (once, when the agent is built): tells the engine the route's
  cache lifetime and prices (:mod:`palimpsest.compaction.cache_policy`) and the usage
  tracker's :class:`~.compaction_cost.CompactionLedger` the same lifetime;
- :func:`prune_before_call` (before every model call): the engine's proactive, cache-aware
  prune (CC-45). The live history is rewritten in place; the stored session keeps the
  originals (the writer only appends). Skipped when the provider clears old tool results
  itself (``compression.server_tool_clearing`` on an Anthropic model with
  ``tool_clearing``);
- :func:`observe_call` (after every model call) and :func:`record_compaction` (after a
  compaction): the cache state and the compaction ledger.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..compaction.cache_policy import cache_rates, route_cache_ttl
from ..pricing import prices_from_settings
from ..summarizers.continuation import Continuation
from ..usage import CanonicalUsage
from .compaction_cost import CompactionCost

if TYPE_CHECKING:
    from ..compaction.engine import ContextEngine
    from .state import AgentState

__all__ = [
    "configure_cache",
    "observe_call",
    "prune_before_call",
    "record_compaction",
    "server_clears_tool_results",
]

log = logging.getLogger("palimpsest.agent")


def configure_cache(agent: AgentState) -> None:
    """Give the engine and the compaction ledger the route's cache lifetime and prices."""
    model = agent.model_name
    provider = getattr(agent.model, "provider", None)
    ttl = route_cache_ttl(provider, model, agent.settings.model.cache_ttl)
    agent.usage.compactions.ttl_seconds = ttl
    configure = getattr(agent.compressor, "configure_cache", None)
    if not callable(configure):
        return
    rates = cache_rates(
        model,
        provider=provider,
        base_url=getattr(agent.model, "base_url", None),
        prices=prices_from_settings(agent.settings),
    )
    configure(ttl_seconds=ttl, rates=rates)
    offer_continuation(agent)


def offer_continuation(agent: AgentState) -> None:
    """Let an LLM summarizer on the agent's own model continue the cached conversation.

    Only when the summarizer's model is the agent's model object (same model, same route):
    then the last request is the provider's cached prefix, and the summary instructions
    can follow it instead of repeating the turns (:mod:`palimpsest.summarizers.continuation`).
    """
    engine = agent.compressor
    summarizer = getattr(engine, "summarizer", None)
    if (
        not hasattr(summarizer, "continuation")
        or getattr(summarizer, "model", None) is not agent.model
    ):
        return
    state = getattr(engine, "cache_state", None)
    if state is None:
        return

    def last_request() -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None] | None:
        return agent.last_request

    def warm() -> bool:
        return bool(state.warm(engine.cache_clock()))  # type: ignore[attr-defined]

    def span(request: Any) -> tuple[int, int, int] | None:
        stats = getattr(engine, "last_stats", None)
        sent = agent.last_request_len
        if stats is None or sent is None or agent.last_request is None:
            return None
        first, last = stats.head_messages + 1, stats.head_messages + stats.middle_messages
        if last > sent or first > last:
            return None  # the span reaches past what the provider has cached
        return first, last, sent - last

    summarizer.continuation = Continuation(  # type: ignore[union-attr]
        model=agent.model,
        last_request=last_request,
        warm=warm,
        rates=lambda: getattr(engine, "cache_rates", None),
        span=span,
    )


def server_clears_tool_results(agent: AgentState) -> bool:
    """True when the provider clears old tool results on its side (context editing)."""
    return bool(
        agent.settings.compression.server_tool_clearing
        and getattr(agent.model, "tool_clearing", None)
    )


def prune_before_call(agent: AgentState) -> int:
    """Run the engine's proactive prune on the live history; returns messages rewritten."""
    engine = agent.compressor
    prune = getattr(engine, "prune_before_call", None)
    if not callable(prune) or server_clears_tool_results(agent):
        return 0
    result = prune(agent.messages, agent.current_prompt_tokens())
    if not result.changed:
        return 0
    changed = sum(
        1 for old, new in zip(agent.messages, result.messages, strict=True) if old is not new
    )
    agent.messages[:] = result.messages
    last = getattr(engine, "last_prompt_tokens", 0)
    if isinstance(last, int) and last > 0:
        # the next size check reads the shorter history, not the stale figure
        engine.last_prompt_tokens = max(last - result.reclaimed_tokens, 1)
    log.info(
        "proactive prune: %d message(s), ~%d tokens (%s)",
        changed,
        result.reclaimed_tokens,
        result.reason,
    )
    return changed


def observe_call(agent: AgentState, usage: CanonicalUsage | None, request_messages: int) -> None:
    """Tell the engine what the call read from the cache and how long its prefix was."""
    observe = getattr(agent.compressor, "observe_call", None)
    if callable(observe):
        observe(usage, request_messages)


def _summary_usage(engine: ContextEngine) -> tuple[bool, CanonicalUsage | None, str | None]:
    """Whether the summary called a model, with what usage, on which model."""
    summarizer: Any = getattr(engine, "summarizer", None)
    if summarizer is None or not hasattr(summarizer, "last_usage"):
        return False, None, None  # extractive: no request was sent
    return True, summarizer.last_usage, getattr(summarizer, "last_model", None)


def summary_usage_before(engine: ContextEngine) -> Any:
    """The summarizer's last usage object before a compaction (to tell a new one apart)."""
    return getattr(getattr(engine, "summarizer", None), "last_usage", None)


def record_compaction(
    agent: AgentState, before_tokens: int, after_tokens: int, usage_before: Any
) -> CompactionCost:
    """Enter a finished compaction in the ledger: its request now, its saving next call."""
    engine = agent.compressor
    made, usage, model = _summary_usage(engine)
    if made and usage is usage_before:
        usage = None  # no new usage came back: the summary call reported none (or failed)
    invalidate = getattr(getattr(engine, "cache_state", None), "invalidate", None)
    if callable(invalidate):
        invalidate()
    return agent.usage.compactions.compacted(
        request_usage=usage,
        request_made=made,
        removed_tokens=before_tokens - after_tokens,
        request_model=model,
    )
