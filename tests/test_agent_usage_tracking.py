"""Usage: unknown is estimated (calibrated), never zero; cost unknown is None, not $0."""

from __future__ import annotations

from palimpsest.agent.usage_tracking import UsageTracker, usage_unknown
from palimpsest.providers.base import Completion
from palimpsest.usage import CanonicalUsage


def test_unknown_usage_falls_back_to_the_calibrated_estimate():
    tracker = UsageTracker("some-model")
    real = Completion(content="x", usage=CanonicalUsage(input_tokens=2_000, raw_usage={"a": 1}))
    usage, estimated = tracker.normalize(real, 1_000)  # the provider counts 2x our estimate
    assert not estimated and usage.input_tokens == 2_000
    usage, estimated = tracker.normalize(Completion(content="hello world"), 1_000)
    assert estimated and usage.input_tokens > 1_000 and usage.output_tokens > 0
    assert usage_unknown(CanonicalUsage()) and not usage_unknown(CanonicalUsage(raw_usage={}))


def test_totals_and_cost():
    tracker = UsageTracker("gpt-4o-mini")
    cost = tracker.add(CanonicalUsage(input_tokens=1_000_000), estimated=False)
    assert cost is not None and cost > 0 and tracker.cost_usd == cost
    unknown = UsageTracker("no-such-model")
    assert unknown.add(CanonicalUsage(input_tokens=10), estimated=True) is None
    assert unknown.cost_usd is None and unknown.estimated_calls == 1
    local = UsageTracker("qwen", base_url="http://127.0.0.1:8080/v1")
    assert local.add(CanonicalUsage(input_tokens=10), estimated=False) == 0.0
    unknown.reset()
    assert unknown.cost_usd == 0.0 and unknown.total.request_count == 0
    assert unknown.describe()["estimated_calls"] == 0
