"""The prompt-cache decision: lifetimes, rates from genai-prices, warm vs cold, saving vs cost."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.compaction.cache_policy import (
    CACHE_TTL_SOURCES,
    CacheRates,
    CacheState,
    cache_rates,
    decide_rewrite,
    route_cache_ttl,
)
from palimpsest.usage import CanonicalUsage

SONNET = CacheRates(input=3.0, cache_read=0.3, cache_write=3.75)


def test_route_lifetimes_follow_the_providers_documentation() -> None:
    assert route_cache_ttl("anthropic", "claude-sonnet-4-5") == 300
    assert route_cache_ttl("anthropic", "claude-sonnet-4-5", "1h") == 3600
    assert route_cache_ttl("openrouter", "anthropic/claude-sonnet-4.5") == 300
    assert route_cache_ttl("openai", "gpt-5") == 300
    assert route_cache_ttl("openai-responses", "gpt-5") == 300
    assert route_cache_ttl("llamacpp", "qwen") is None
    assert route_cache_ttl(None, "gpt-5") is None
    assert all(url.startswith("https://") for url in CACHE_TTL_SOURCES.values())


def test_rates_come_from_the_catalogue_per_bucket() -> None:
    sonnet = cache_rates("claude-sonnet-4-5", provider="anthropic")
    assert sonnet == pytest.approx(SONNET) or (
        sonnet.input,
        sonnet.cache_read,
        sonnet.cache_write,
    ) == pytest.approx((3.0, 0.3, 3.75))
    assert sonnet.write == pytest.approx(3.75)
    gpt = cache_rates("gpt-5", provider="openai")
    assert gpt.cache_read == pytest.approx(0.125)
    assert gpt.cache_write is None and gpt.writes_billed_as_input
    assert gpt.write == pytest.approx(1.25)  # OpenAI caches a prefix as ordinary input


def test_a_bucket_the_catalogue_does_not_price_stays_unknown() -> None:
    old = cache_rates("gpt-3.5-turbo", provider="openai")
    assert old.input == pytest.approx(0.5)
    assert old.cache_read is None  # not the input rate borrowed
    nothing = cache_rates("no-such-model-anywhere-x1", provider=None)
    assert (nothing.input, nothing.cache_read, nothing.write) == (None, None, None)


def test_an_override_prices_the_buckets_it_names() -> None:
    rates = cache_rates(
        "claude-house", prices={"claude-house": {"input": 1, "output": 2, "cache_read": 0.5}}
    )
    assert (rates.input, rates.cache_read, rates.cache_write) == (1.0, 0.5, None)
    assert rates.write is None  # an Anthropic-like route bills writes: no rate, no figure


def test_the_cache_is_cold_before_a_call_after_its_lifetime_and_without_cache_use() -> None:
    state = CacheState(ttl_seconds=300)
    assert not state.warm(0.0)
    state.observe(CanonicalUsage(input_tokens=100, cache_write_tokens=5_000), 12, at=1_000.0)
    assert state.warm(1_200.0)
    assert not state.warm(1_300.0)
    state.observe(CanonicalUsage(input_tokens=5_000), 14, at=2_000.0)
    assert not state.warm(2_001.0)  # the provider cached nothing
    state.observe(None, 14, at=3_000.0)
    assert not state.warm(3_001.0)  # unreported usage proves no cache
    state.observe(CanonicalUsage(cache_read_tokens=9_000), 16, at=4_000.0)
    state.invalidate()
    assert not state.warm(4_001.0)
    assert not CacheState(ttl_seconds=None, at=0.0, prefix_messages=3, cached_tokens=9).warm(1)


def test_a_cold_cache_makes_any_rewrite_free() -> None:
    decision = decide_rewrite(
        warm=False, reclaimed_tokens=10, tokens_after_first_change=200_000, rates=None
    )
    assert decision.rewrite and "cold" in decision.reason


def test_a_deep_rewrite_of_a_warm_prefix_costs_more_than_it_saves() -> None:
    # 20K reclaimed at the start of a 200K prefix: 180K re-written at 3.75 - 0.3.
    decision = decide_rewrite(
        warm=True, reclaimed_tokens=20_000, tokens_after_first_change=200_000, rates=SONNET
    )
    assert not decision.rewrite
    assert decision.cost_usd == pytest.approx(180_000 * 3.45 / 1e6)
    assert decision.saving_usd == pytest.approx(20_000 * 0.3 * 8 / 1e6)


def test_a_shallow_rewrite_that_reclaims_most_of_what_follows_is_worth_it() -> None:
    decision = decide_rewrite(
        warm=True, reclaimed_tokens=20_000, tokens_after_first_change=22_000, rates=SONNET
    )
    assert decision.rewrite
    assert decision.saving_usd is not None and decision.cost_usd is not None
    assert decision.saving_usd > decision.cost_usd


def test_unknown_prices_keep_a_warm_cache() -> None:
    unknown = CacheRates(input=0.5, cache_read=None, cache_write=None, writes_billed_as_input=True)
    decision = decide_rewrite(
        warm=True, reclaimed_tokens=50_000, tokens_after_first_change=50_001, rates=unknown
    )
    assert not decision.rewrite and "unknown" in decision.reason
    assert decision.saving_usd is None and decision.cost_usd is None


def test_nothing_to_reclaim_is_never_a_rewrite() -> None:
    assert not decide_rewrite(
        warm=False, reclaimed_tokens=0, tokens_after_first_change=10, rates=SONNET
    ).rewrite


@given(
    reclaimed=st.integers(1, 500_000),
    extra=st.integers(0, 500_000),
    horizon=st.integers(0, 50),
)
def test_a_warm_rewrite_happens_exactly_when_saving_exceeds_cost(
    reclaimed: int, extra: int, horizon: int
) -> None:
    decision = decide_rewrite(
        warm=True,
        reclaimed_tokens=reclaimed,
        tokens_after_first_change=reclaimed + extra,
        rates=SONNET,
        horizon_calls=horizon,
    )
    saving = reclaimed * 0.3 * horizon
    cost = extra * (3.75 - 0.3)
    assert decision.rewrite == (saving > cost)


def _warm_calls(state: CacheState, calls: int, start: float = 0.0) -> float:
    """``calls`` calls 10 s apart, each reading the cache; returns the last call's time."""
    at = start
    for i in range(calls):
        at = start + 10.0 * i
        state.observe(CanonicalUsage(cache_read_tokens=30_000), 40, at=at)
    return at


def test_the_horizon_grows_with_the_warm_calls_since_the_last_rewrite() -> None:
    state = CacheState(ttl_seconds=300)
    assert state.horizon(8) == 8  # no call yet: the configured floor
    last = _warm_calls(state, 40)
    assert state.calls_since_rewrite == 40
    assert state.horizon(8) == 20  # half the warm stretch
    assert state.horizon(30) == 30  # never below the configured count
    state.rewritten()
    assert state.horizon(8) == 8 and state.calls_since_rewrite == 0
    last = _warm_calls(state, 30, start=last + 10.0)
    assert state.horizon(8) == 15
    # a gap past the lifetime: the next call writes the prefix afresh, the count restarts
    state.observe(CanonicalUsage(cache_write_tokens=30_000), 40, at=last + 400.0)
    assert state.calls_since_rewrite == 1 and state.horizon(8) == 8
    _warm_calls(state, 20, start=last + 410.0)
    state.invalidate()  # a compaction rewrote the prefix
    assert state.calls_since_rewrite == 0 and state.horizon(8) == 8


def test_a_provider_that_caches_nothing_never_builds_a_horizon() -> None:
    state = CacheState(ttl_seconds=300)
    for i in range(50):
        state.observe(CanonicalUsage(input_tokens=30_000), 40, at=10.0 * i)
    assert state.calls_since_rewrite == 1 and state.horizon(8) == 8


@given(calls=st.integers(0, 400), configured=st.integers(0, 64))
def test_the_horizon_is_the_larger_of_the_configured_count_and_half_the_warm_calls(
    calls: int, configured: int
) -> None:
    state = CacheState(ttl_seconds=300)
    _warm_calls(state, calls)
    assert state.horizon(configured) == max(configured, calls // 2)
