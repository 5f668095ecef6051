"""Usage: unknown feeds the engine a calibrated estimate but is recorded as unknown, and
an unknown cost is None, not $0."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest.agent.events import UsageEvent
from palimpsest.agent.loop import Agent
from palimpsest.agent.usage_tracking import UsageTracker
from palimpsest.providers.base import Completion
from palimpsest.providers.openai_chat import OpenAIChatModel
from palimpsest.storage.sessions import SessionStore
from palimpsest.usage import CanonicalUsage, format_token_pair
from providers_fixtures import ReplayServer, running_server


def test_unknown_usage_falls_back_to_the_calibrated_estimate():
    tracker = UsageTracker("some-model")
    real = Completion(content="x", usage=CanonicalUsage(input_tokens=2_000, raw_usage={"a": 1}))
    usage, estimated = tracker.normalize(real, 1_000)  # the provider counts 2x our estimate
    assert not estimated and usage.input_tokens == 2_000
    usage, estimated = tracker.normalize(Completion(content="hello world"), 1_000)
    assert estimated and usage.input_tokens == 2_000 and usage.output_tokens > 0


def test_a_reported_zero_is_not_unknown():
    tracker = UsageTracker("some-model")
    usage, estimated = tracker.normalize(Completion(content="", usage=CanonicalUsage()), 500)
    assert not estimated and usage.prompt_tokens == 0


def test_unreported_calls_add_no_tokens_and_make_totals_a_lower_bound():
    tracker = UsageTracker("claude-opus-4-7")
    tracker.add(CanonicalUsage(input_tokens=1_000, output_tokens=10))
    assert tracker.totals.complete and tracker.cost_usd == pytest.approx(0.00525)
    assert tracker.add(None) is None
    assert tracker.total.input_tokens == 1_000 and tracker.total.request_count == 1
    assert tracker.unreported_calls == 1 and tracker.totals.calls == 2
    assert tracker.last_estimated and tracker.cost_usd is None
    assert tracker.totals.tokens("input_tokens") == "≥ 1,000 (1 call unreported)"
    described = tracker.describe()
    assert described["input_tokens"] == 1_000 and described["unreported_calls"] == 1
    assert described["cost_usd"] is None


def test_nothing_reported_is_unknown_not_zero():
    tracker = UsageTracker("llama")
    tracker.add(None)
    tracker.add(None)
    assert tracker.totals.tokens("prompt_tokens") == "unknown (2 calls unreported)"
    described = tracker.describe()
    assert described["input_tokens"] is None and described["total_tokens"] is None
    assert described["calls"] == 2


def test_costs():
    tracker = UsageTracker("gpt-4o-mini")
    cost = tracker.add(CanonicalUsage(input_tokens=1_000_000))
    assert cost == pytest.approx(0.15) and tracker.cost_usd == cost
    unknown = UsageTracker("no-such-model")
    assert unknown.add(CanonicalUsage(input_tokens=10)) is None
    assert unknown.cost_usd is None
    local = UsageTracker("qwen", base_url="http://127.0.0.1:8080/v1")
    assert local.add(CanonicalUsage(input_tokens=10)) == 0.0
    assert local.add(None) == 0.0  # a local route costs nothing, reported or not
    assert local.cost_usd == 0.0
    unknown.reset()
    assert unknown.cost_usd == 0.0 and unknown.total.request_count == 0
    assert unknown.describe()["unreported_calls"] == 0


class TestAStreamWithoutUsageEndToEnd:
    """A real HTTP server on 127.0.0.1 streams llama.cpp-style chunks (no usage) to the
    real openai SDK under the agent; the stored session must say "unknown", not 0."""

    @pytest.fixture
    def replay(self) -> Iterator[ReplayServer]:
        yield from running_server()

    def test_recorded_as_unreported_and_read_back(
        self, replay: ReplayServer, tmp_path: Path
    ) -> None:
        replay.file("openai/stream_llamacpp_no_usage.sse")
        replay.file("openai/stream_text.sse")  # the next call does report usage (18 tokens)
        model = OpenAIChatModel(
            "qwen2.5-0.5b-instruct",
            base_url=f"{replay.url}/v1",
            api_key="sk-test",
            max_retries=0,
        )
        store = SessionStore(tmp_path / "state.db")
        agent = Agent(model, store=store, context_length=32_000, stream=True, builtin_tools=False)
        first = [e for e in agent.run("Where do we deploy?") if isinstance(e, UsageEvent)]
        assert [e.usage for e in first] == [None]
        assert first[0].prompt_tokens is not None and first[0].prompt_tokens > 0
        assert agent.usage.totals.tokens("total_tokens") == "unknown (1 call unreported)"
        second = [e for e in agent.run("And then?") if isinstance(e, UsageEvent)]
        assert second[0].usage is not None and second[0].usage.total_tokens == 18
        sid = agent.session_id
        agent.close()
        store.close()

        with SessionStore(tmp_path / "state.db") as reopened:
            row = reopened.get_session(sid)
        assert row is not None
        assert (row["api_call_count"], row["unreported_calls"]) == (2, 1)
        assert row["input_tokens"] + row["output_tokens"] == 18  # only the reported call
        assert row["estimated_cost_usd"] == 0.0  # a loopback route: included, not unknown
        assert format_token_pair(
            row["input_tokens"],
            row["output_tokens"],
            row["unreported_calls"],
            row["api_call_count"],
        ).startswith("≥ ")
