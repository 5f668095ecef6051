"""The Agent: its API end to end (scripted model, real store, real memory files)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import (
    RecordingProvider,
    answer,
    asst,
    call,
    calls,
    compressor,
    history,
    make_agent,
    memory_manager,
    stored,
    user,
)
from palimpsest import ScriptedChatModel
from palimpsest.agent.events import (
    CompactionEvent,
    TextDelta,
    TurnEnd,
    UsageEvent,
    WarningEvent,
)
from palimpsest.agent.loop import Agent
from palimpsest.errors import ConfigError
from palimpsest.storage.sessions import SessionStore


def add(a: int, b: int) -> int:
    """Add two integers.

    a: the first
    b: the second
    """
    return a + b


class TestPlainTurn:
    def test_answer_is_stored_and_the_prompt_is_reused_byte_for_byte(self, tmp_path: Path):
        agent = make_agent(tmp_path, ["Hello!", "Again."])
        end = agent.ask("hi there, what is new?")
        assert end == TurnEnd(completed=True, text="Hello!")
        agent.ask("and now?")
        assert stored(agent) == agent.messages
        assert [m["role"] for m in agent.messages] == ["user", "assistant"] * 2
        sent = agent.model.calls  # type: ignore[attr-defined]
        first, second = sent[0][0], sent[1][0]
        assert first[0]["role"] == "system" and first[0]["content"] == agent.system_prompt
        assert second[0]["content"] == first[0]["content"]
        assert second[1:] == agent.messages[:3]
        # the system prompt never enters the history (AL-02)
        assert all(m["role"] != "system" for m in agent.messages)

    def test_events_of_a_text_turn(self, tmp_path: Path):
        agent = make_agent(tmp_path, [answer("fine", prompt=1200)])
        events = list(agent.run("how are you doing today?"))
        kinds = [type(e) for e in events]
        assert kinds == [UsageEvent, TextDelta, TurnEnd]
        assert isinstance(events[0], UsageEvent) and not events[0].estimated

    def test_no_context_length_is_a_config_error(self):
        with pytest.raises(ConfigError, match="context length"):
            Agent(ScriptedChatModel([]), builtin_tools=False)


class TestUsage:
    def test_unknown_usage_is_estimated_for_the_engine_and_recorded_as_unknown(
        self, tmp_path: Path
    ):
        agent = make_agent(tmp_path, ["answer without usage"])
        events = list(agent.run("a question that has some words in it"))
        usage = next(e for e in events if isinstance(e, UsageEvent))
        assert usage.usage is None and usage.estimated and usage.estimate is not None
        assert usage.prompt_tokens == usage.estimate.prompt_tokens > 0
        assert agent.compressor.last_prompt_tokens == usage.prompt_tokens  # never a false 0
        assert agent.usage.unreported_calls == 1 and agent.usage_total.request_count == 0
        assert agent.cost_usd is None
        row = agent.store.get_session(agent.session_id)  # type: ignore[union-attr]
        assert (row["input_tokens"], row["output_tokens"]) == (0, 0)
        assert (row["api_call_count"], row["unreported_calls"]) == (1, 1)
        assert row["estimated_cost_usd"] is None
        assert agent.context_status()["estimated"] is True

    def test_mixed_reported_and_unreported_read_back_from_the_store(self, tmp_path: Path):
        agent = make_agent(tmp_path, [answer("a", prompt=1000, output=5), "no usage", "none"])
        for question in ("one", "two", "three"):
            agent.ask(question)
        sid = agent.session_id
        agent.close()
        agent.store.close()  # type: ignore[union-attr]
        with SessionStore(tmp_path / "state.db") as reopened:
            row = reopened.get_session(sid)
            listed = reopened.list_sessions(limit=5)
        assert row is not None
        assert (row["input_tokens"], row["output_tokens"], row["api_call_count"]) == (1000, 5, 3)
        assert row["unreported_calls"] == 2
        assert listed[0]["unreported_calls"] == 2 and listed[0]["total_tokens"] == 1005

    def test_real_usage_is_recorded_and_summed(self, tmp_path: Path):
        agent = make_agent(tmp_path, [answer("a", prompt=1000, output=5), answer("b", 1100, 7)])
        agent.ask("one")
        agent.ask("two")
        assert agent.usage_total.input_tokens == 2100 and agent.usage_total.output_tokens == 12
        assert agent.usage_total.request_count == 2
        row = agent.store.get_session(agent.session_id)  # type: ignore[union-attr]
        assert row["input_tokens"] == 2100
        assert agent.cost_usd is None  # "scripted" has no price: unknown, not $0

    def test_priced_model_has_a_cost(self, tmp_path: Path):
        model = ScriptedChatModel([answer("a", prompt=1_000_000, output=0)], model="gpt-4o-mini")
        agent = make_agent(tmp_path, model=model)
        agent.ask("price me")
        assert agent.cost_usd is not None and agent.cost_usd > 0


class TestAsync:
    def test_arun_gives_the_same_events_as_run(self, tmp_path: Path):
        script: list[Any] = [calls(call("add", {"a": 2, "b": 3}, "c")), "five"]
        sync_agent = make_agent(tmp_path / "s", list(script), tools=[add])
        sync_events = list(sync_agent.run("add 2 and 3"))

        async def collect() -> list[Any]:
            agent = make_agent(tmp_path / "a", list(script), tools=[add])
            return [e async for e in agent.arun("add 2 and 3")]

        async_events = asyncio.run(collect())

        def strip(events: list[Any]) -> list[Any]:
            return [
                (type(e).__name__, getattr(e, "content", getattr(e, "text", ""))) for e in events
            ]

        assert strip(async_events) == strip(sync_events)
        assert isinstance(async_events[-1], TurnEnd) and async_events[-1].text == "five"


class TestMemoryRecall:
    def test_fence_goes_into_the_request_only(self, tmp_path: Path):
        provider = RecordingProvider(recall="the user likes jazz")
        memory = memory_manager(tmp_path / "home", provider)
        agent = make_agent(tmp_path, ["noted", "welcome"], memory=memory)
        agent.ask("recommend some music for tonight")
        request = agent.model.calls[0][0]  # type: ignore[attr-defined]
        assert "<memory-context>" in request[-1]["content"]
        assert "the user likes jazz" in request[-1]["content"]
        assert all("<memory-context>" not in str(m["content"]) for m in stored(agent))
        assert "likes jazz" not in agent.system_prompt
        agent.ask("thanks!")  # trivial: no prefetch (MEM-09)
        assert provider.prefetched == ["recommend some music for tonight"]
        second = agent.model.calls[1][0]  # type: ignore[attr-defined]
        assert all("<memory-context>" not in str(m["content"]) for m in second)
        memory.shutdown_all()


class TestDurableGuards:
    """CC-22: restarting the process must not re-arm a compressor that was thrashing."""

    def test_a_restarted_agent_stays_blocked(self, tmp_path: Path):
        db = tmp_path / "state.db"
        short = [m for i in range(15) for m in (user(f"q{i}"), asst(f"a{i}"))]
        engine = compressor(2_000, threshold=0.05)
        agent = make_agent(
            tmp_path,
            model=ScriptedChatModel(default="ok"),
            store=SessionStore(db),
            messages=short,
            compressor=engine,
            context_length=None,
        )
        for i in range(2):  # two passes that cannot shrink anything: ineffective twice
            events = list(agent.run(f"question {i}"))
            assert [e.compacted for e in events if isinstance(e, CompactionEvent)] == [False]
        assert engine.ineffective_compression_count == 2
        sid = agent.session_id
        agent.close()
        agent.store.close()  # type: ignore[union-attr]

        fresh = compressor(2_000, threshold=0.05)
        restarted = make_agent(
            tmp_path,
            model=ScriptedChatModel(default="ok"),
            store=SessionStore(db),
            session_id=sid,
            compressor=fresh,
            context_length=None,
        )
        assert fresh.ineffective_compression_count == 2
        events = list(restarted.run("one more question"))
        assert not [e for e in events if isinstance(e, CompactionEvent)]
        assert [e.code for e in events if isinstance(e, WarningEvent)] == ["compression_blocked"]
        assert restarted.session_id == sid


class TestPressure:
    def test_pressure_warning_once_for_the_host_only(self, tmp_path: Path):
        agent = make_agent(tmp_path, [answer("a", prompt=56_000), answer("b", prompt=57_000)])
        first = [e for e in agent.run("one") if isinstance(e, WarningEvent)]
        assert [e.code for e in first] == ["context_pressure"]
        assert first[0].message.startswith("⚠️ Context is 87% to compaction threshold")
        second = [e for e in agent.run("two") if isinstance(e, WarningEvent)]
        assert second == []
        assert "Context is" not in agent.system_prompt
        assert all("Context is" not in str(m["content"]) for m in agent.messages)


def test_flush_can_be_turned_off(tmp_path: Path):
    from palimpsest.config import Settings

    settings = Settings.model_validate({"memory": {"flush_before_compression": False}})
    agent = make_agent(
        tmp_path,
        messages=history(12),
        compressor=compressor(),
        memory=memory_manager(tmp_path / "home"),
        settings=settings,
    )
    assert agent.compress().compacted
    assert agent.model.calls == []  # type: ignore[attr-defined]
