"""Net cost per compaction: request, next call against no compaction, running saving."""

from __future__ import annotations

import pytest

from palimpsest.agent.compaction_cost import CompactionLedger, describe_cost
from palimpsest.usage import CanonicalUsage

# claude-sonnet-4-5 in genai-prices: input $3, cache read $0.30, 5-min write $3.75, output $15.
IN, READ, WRITE, OUT = 3.0, 0.3, 3.75, 15.0


def usd(tokens: int, rate: float) -> float:
    return tokens * rate / 1e6


def sonnet(clock: list[float], ttl: float | None = 300) -> CompactionLedger:
    return CompactionLedger(
        "claude-sonnet-4-5", provider="anthropic", ttl_seconds=ttl, clock=lambda: clock[0]
    )


def test_a_compaction_without_a_model_call_costs_nothing_and_saves_on_the_next_call() -> None:
    clock = [0.0]
    ledger = sonnet(clock)
    before = CanonicalUsage(input_tokens=10, cache_read_tokens=90_000, cache_write_tokens=2_000)
    assert ledger.observe_call(before) is None
    cost = ledger.compacted(request_usage=None, request_made=False, removed_tokens=60_000)
    assert cost.request_usd == 0.0 and not cost.settled
    assert "next call not made yet" in describe_cost(cost)
    clock[0] = 30.0
    after = CanonicalUsage(input_tokens=10, cache_write_tokens=34_000, output_tokens=500)
    settled = ledger.observe_call(after)
    assert settled is not None and settled.settled
    assert settled.next_call_usd == pytest.approx(usd(10, IN) + usd(34_000, WRITE) + usd(500, OUT))
    # without: 34,010 + 60,000 tokens, 92,010 of them still cached (the previous prompt)
    without = usd(92_010, READ) + usd(10, IN) + usd(1_990, WRITE) + usd(500, OUT)
    assert settled.without_usd == pytest.approx(without)
    assert settled.saving_usd == pytest.approx(without - settled.next_call_usd)
    assert ledger.running_saving_usd == pytest.approx(settled.saving_usd)
    assert "net saving" in describe_cost(settled)


def test_a_warm_cache_can_make_a_compaction_a_net_loss() -> None:
    clock = [0.0]
    ledger = sonnet(clock)
    ledger.observe_call(CanonicalUsage(input_tokens=5, cache_read_tokens=100_000))
    summary = CanonicalUsage(input_tokens=100_000, output_tokens=2_000)
    ledger.compacted(request_usage=summary, request_made=True, removed_tokens=5_000)
    clock[0] = 10.0
    settled = ledger.observe_call(CanonicalUsage(input_tokens=5, cache_write_tokens=95_000))
    assert settled is not None
    assert settled.request_usd == pytest.approx(usd(100_000, IN) + usd(2_000, OUT))
    assert settled.saving_usd is not None and settled.saving_usd < 0
    assert describe_cost(settled).count("-") >= 1


def test_a_cold_cache_prices_the_counterfactual_uncached() -> None:
    clock = [0.0]
    ledger = sonnet(clock)
    ledger.observe_call(CanonicalUsage(input_tokens=5, cache_read_tokens=100_000))
    ledger.compacted(request_usage=None, request_made=False, removed_tokens=50_000)
    clock[0] = 301.0  # past the 5-minute lifetime
    settled = ledger.observe_call(CanonicalUsage(input_tokens=5, cache_write_tokens=50_000))
    assert settled is not None
    assert settled.without_usd == pytest.approx(usd(5, IN) + usd(100_000, WRITE))


def test_unreported_usage_leaves_the_figures_unknown_and_stops_the_running_total() -> None:
    clock = [0.0]
    ledger = sonnet(clock)
    ledger.observe_call(CanonicalUsage(input_tokens=5, cache_read_tokens=10_000))
    ledger.compacted(request_usage=None, request_made=True, removed_tokens=5_000)
    settled = ledger.observe_call(CanonicalUsage(input_tokens=5, cache_write_tokens=5_000))
    assert settled is not None
    assert settled.request_usd is None and settled.saving_usd is None
    assert settled.reason == "summary usage not reported"
    assert ledger.running_saving_usd is None
    assert "unknown" in describe_cost(settled)
    # a later, fully priced compaction does not turn the running total back into a number
    ledger.compacted(request_usage=None, request_made=False, removed_tokens=1_000)
    later = ledger.observe_call(CanonicalUsage(input_tokens=5, cache_write_tokens=5_000))
    assert later is not None and later.saving_usd is not None
    assert ledger.running_saving_usd is None


def test_cache_reads_without_a_catalogue_rate_are_unknown_not_input_priced() -> None:
    ledger = CompactionLedger("gpt-3.5-turbo", provider="openai", ttl_seconds=300)
    ledger.observe_call(CanonicalUsage(input_tokens=5, cache_read_tokens=10_000))
    ledger.compacted(request_usage=None, request_made=False, removed_tokens=5_000)
    settled = ledger.observe_call(CanonicalUsage(input_tokens=3_000, cache_read_tokens=2_000))
    assert settled is not None
    assert settled.next_call_usd is None and settled.saving_usd is None
    assert settled.reason is not None and "cache read" in settled.reason


def test_no_call_before_the_compaction_leaves_the_comparison_unknown() -> None:
    ledger = sonnet([0.0])
    ledger.compacted(request_usage=None, request_made=False, removed_tokens=5_000)
    settled = ledger.observe_call(CanonicalUsage(input_tokens=5_000))
    assert settled is not None and settled.next_call_usd is not None
    assert settled.without_usd is None and settled.reason is not None
    assert "before the compaction" in settled.reason


def test_an_unpriced_model_is_unknown_everywhere() -> None:
    ledger = CompactionLedger("house-model-9", ttl_seconds=None)
    ledger.observe_call(CanonicalUsage(input_tokens=1_000))
    cost = ledger.compacted(
        request_usage=CanonicalUsage(input_tokens=900), request_made=True, removed_tokens=100
    )
    assert cost.request_usd is None and cost.reason == "no price for house-model-9"
    settled = ledger.observe_call(CanonicalUsage(input_tokens=800))
    assert settled is not None and settled.to_dict()["saving_usd"] is None


def test_later_calls_keep_adding_the_tokens_they_no_longer_read() -> None:
    clock = [0.0]
    ledger = sonnet(clock)
    ledger.observe_call(CanonicalUsage(input_tokens=5, cache_read_tokens=100_000))
    summary = CanonicalUsage(input_tokens=100_000, output_tokens=2_000)
    ledger.compacted(request_usage=summary, request_made=True, removed_tokens=70_000)
    clock[0] = 10.0
    first = ledger.observe_call(CanonicalUsage(input_tokens=5, cache_write_tokens=30_000))
    assert first is not None and first.saving_usd is not None and first.saving_usd < 0
    for step in range(3):
        clock[0] = 20.0 + step
        assert ledger.observe_call(CanonicalUsage(input_tokens=5, cache_read_tokens=30_000)) is None
    clock[0] = 400.0  # cold: the removed tokens would have been written again
    ledger.observe_call(CanonicalUsage(input_tokens=5, cache_write_tokens=31_000))
    entry = ledger.entries[0]
    assert entry.later_calls == 4
    assert entry.later_saving_usd == pytest.approx(3 * usd(70_000, READ) + usd(70_000, WRITE))
    assert ledger.running_saving_usd == pytest.approx(first.saving_usd + entry.later_saving_usd)
    line = describe_cost(entry)
    assert "net saving ~-$" in line and "more over 4 later call(s)" in line


def test_an_unreported_later_call_makes_the_later_saving_unknown() -> None:
    ledger = sonnet([0.0])
    ledger.observe_call(CanonicalUsage(input_tokens=5, cache_read_tokens=10_000))
    ledger.compacted(request_usage=None, request_made=False, removed_tokens=5_000)
    ledger.observe_call(CanonicalUsage(input_tokens=5, cache_write_tokens=5_000))
    ledger.observe_call(None)
    ledger.observe_call(CanonicalUsage(input_tokens=5, cache_read_tokens=5_000))
    entry = ledger.entries[0]
    assert entry.later_calls == 2 and entry.later_saving_usd is None
    assert ledger.running_saving_usd is None
    assert entry.to_dict()["later_saving_usd"] is None
