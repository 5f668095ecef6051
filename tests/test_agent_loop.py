"""The agent's turn flow end to end: scripted model, real store, real memory files."""

from __future__ import annotations

import asyncio
import threading
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
    valid_tool_pairs,
)
from palimpsest import ScriptedChatModel
from palimpsest.agent.events import (
    CompactionEvent,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnd,
    UsageEvent,
    WarningEvent,
)
from palimpsest.agent.loop import Agent
from palimpsest.agent.turn import CANCELLED_RESULT
from palimpsest.errors import ConfigError, ProviderError, RateLimitError
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


class TestTools:
    def test_parallel_calls_run_and_results_follow_in_call_order(self, tmp_path: Path):
        slow_started = threading.Event()

        def slow(x: int) -> str:
            """Slow tool."""
            slow_started.wait(2)
            return f"slow {x}"

        def fast(x: int) -> str:
            """Fast tool."""
            slow_started.set()  # proves both ran at the same time
            return f"fast {x}"

        reply = calls(call("slow", {"x": 1}, "a"), call("fast", {"x": 2}, "b"))
        agent = make_agent(tmp_path, [reply, "done"], tools=[slow, fast])
        events = list(agent.run("run both tools please"))
        results = [e for e in events if isinstance(e, ToolResultEvent)]
        assert [(r.call_id, r.content) for r in results] == [("a", "slow 1"), ("b", "fast 2")]
        assert [e.call_id for e in events if isinstance(e, ToolCallEvent)] == ["a", "b"]
        tools = [m for m in agent.messages if m["role"] == "tool"]
        assert [m["tool_call_id"] for m in tools] == ["a", "b"]
        assert stored(agent) == agent.messages

    def test_bad_calls_become_tool_results_and_the_turn_goes_on(self, tmp_path: Path):
        reply = calls(
            call("nope", {}, "u"),
            call("add", "{not json", "j"),
            call("add", {"a": "x"}, "s"),
        )
        agent = make_agent(tmp_path, [reply, "sorry, fixed"], tools=[add])
        end = agent.ask("add things")
        assert end.completed and end.text == "sorry, fixed"
        results = {m["tool_call_id"]: m["content"] for m in agent.messages if m["role"] == "tool"}
        assert "Unknown tool" in results["u"]
        assert "JSON" in results["j"] or "json" in results["j"]
        assert "Invalid arguments" in results["s"]
        assert valid_tool_pairs(agent.messages)

    def test_ledger_sees_tool_calls(self, tmp_path: Path):
        (tmp_path / "work").mkdir()
        reply = calls(call("write_file", {"path": "a.txt", "content": "hello"}, "w"))
        agent = make_agent(tmp_path, [reply, "written"], workdir=tmp_path / "work")
        agent.ask("write a file")
        assert (tmp_path / "work" / "a.txt").read_text() == "hello"
        assert any(p.endswith("a.txt") for p in agent.ledger.files_modified())

    def test_builtin_tools_are_offered(self, tmp_path: Path):
        home = tmp_path / "home"
        agent = make_agent(tmp_path, ["ok"], memory=memory_manager(home))
        names = set(agent.tools.names())
        assert {"todo", "memory", "session_search", "read_output", "context_status"} <= names
        bare = make_agent(tmp_path / "b", ["ok"], store=False, builtin_tools=False)
        assert bare.tools.names() == []

    def test_context_status_tool_reports_without_touching_the_prompt(self, tmp_path: Path):
        reply = calls(call("context_status", {}, "s"))
        agent = make_agent(tmp_path, [reply, "noted"])
        agent.ask("how full is the context?")
        result = next(m for m in agent.messages if m["role"] == "tool")
        assert "context_length" in result["content"] and "100000" in result["content"]
        assert "threshold" not in agent.system_prompt.lower()


class TestBadOutput:
    def test_empty_answer_warns_and_ends_cleanly(self, tmp_path: Path):
        agent = make_agent(tmp_path, [""])
        events = list(agent.run("say something"))
        assert any(isinstance(e, WarningEvent) and e.code == "empty_answer" for e in events)
        end = events[-1]
        assert isinstance(end, TurnEnd) and end.completed and end.text == ""
        assert [m["role"] for m in stored(agent)] == ["user"]

    def test_max_iterations_stops_the_turn(self, tmp_path: Path):
        loop = calls(call("add", {"a": 1, "b": 1}, "x"))
        agent = make_agent(tmp_path, model=ScriptedChatModel(default=loop), tools=[add])
        agent.max_iterations = 3
        end = agent.ask("loop forever")
        assert not end.completed and "max_iterations" in (end.error or "")
        assert len(agent.model.calls) == 3  # type: ignore[attr-defined]
        assert valid_tool_pairs(agent.messages) and stored(agent) == agent.messages

    def test_provider_error_ends_the_turn_with_a_clear_error(self, tmp_path: Path):
        err = RateLimitError("slow down", status_code=429, provider="x")
        agent = make_agent(tmp_path, [err])
        end = agent.ask("hello there friend")
        assert not end.completed and "HTTP 429" in (end.error or "")
        agent.model.enqueue("back")  # type: ignore[attr-defined]
        assert agent.ask("again?").text == "back"  # the session goes on

    def test_unclassified_provider_error(self, tmp_path: Path):
        agent = make_agent(tmp_path, [ProviderError("boom")])
        assert "boom" in (agent.ask("hello").error or "")


class TestUsage:
    def test_unknown_usage_is_estimated_never_zero(self, tmp_path: Path):
        agent = make_agent(tmp_path, ["answer without usage"])
        events = list(agent.run("a question that has some words in it"))
        usage = next(e for e in events if isinstance(e, UsageEvent))
        assert usage.estimated and usage.usage.input_tokens > 0
        assert agent.compressor.last_prompt_tokens == usage.usage.input_tokens
        row = agent.store.get_session(agent.session_id)  # type: ignore[union-attr]
        assert row["input_tokens"] == usage.usage.input_tokens and row["api_call_count"] == 1
        assert agent.context_status()["estimated"] is True

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


class TestResume:
    def test_resume_loads_history_and_prompt(self, tmp_path: Path):
        agent = make_agent(tmp_path, ["first answer"])
        agent.ask("first question")
        sid, prompt = agent.session_id, agent.system_prompt
        agent.close()
        again = make_agent(tmp_path, ["second answer"], store=agent.store, session_id=sid)
        assert again.session_id == sid and again.messages == agent.messages
        assert again.system_prompt == prompt
        again.ask("second question")
        assert len(stored(again)) == 4

    def test_unknown_session_id_creates_that_session(self, tmp_path: Path):
        agent = make_agent(tmp_path, ["x"], session_id="my-session")
        assert agent.session_id == "my-session"
        assert agent.store.get_session("my-session") is not None  # type: ignore[union-attr]

    def test_resume_lands_on_the_tip_after_a_compaction(self, tmp_path: Path):
        agent = make_agent(
            tmp_path, messages=history(12), compressor=compressor(), context_length=None
        )
        root = agent.session_id
        agent.compress()
        tip = agent.session_id
        assert tip != root
        again = make_agent(tmp_path, store=agent.store, session_id=root, compressor=compressor())
        assert again.session_id == tip and again.messages == agent.messages
        assert again.compressor.compression_count == 1


class TestInterrupt:
    def test_interrupt_from_a_tool_stops_before_the_next_call(self, tmp_path: Path):
        holder: dict[str, Agent] = {}

        def stop() -> str:
            """Ask the agent to stop."""
            holder["agent"].interrupt()
            return "stopping"

        reply = calls(call("stop", {}, "s"))
        agent = make_agent(tmp_path, [reply], tools=[stop])
        holder["agent"] = agent
        end = agent.ask("stop yourself")
        assert end.interrupted and not end.completed
        assert len(agent.model.calls) == 1  # type: ignore[attr-defined]
        assert valid_tool_pairs(agent.messages) and stored(agent) == agent.messages
        agent.model.enqueue("resumed")  # type: ignore[attr-defined]
        assert agent.ask("go on").text == "resumed"

    def test_keyboard_interrupt_in_a_tool_leaves_a_valid_stored_history(self, tmp_path: Path):
        def ctrl_c() -> str:
            """Raises like Ctrl-C."""
            raise KeyboardInterrupt

        def fine() -> str:
            """Fine."""
            return "ok"

        reply = calls(call("fine", {}, "f"), call("ctrl_c", {}, "k"))
        agent = make_agent(tmp_path, [reply], tools=[ctrl_c, fine])
        events = list(agent.run("do two things"))
        end = events[-1]
        assert isinstance(end, TurnEnd) and end.interrupted
        assert valid_tool_pairs(agent.messages)
        assert CANCELLED_RESULT in [m["content"] for m in agent.messages if m["role"] == "tool"]
        assert stored(agent) == agent.messages

    def test_keyboard_interrupt_during_the_model_call(self, tmp_path: Path):
        agent = make_agent(tmp_path, [KeyboardInterrupt()])
        end = agent.ask("anything")
        assert end.interrupted
        assert stored(agent) == agent.messages == [{"role": "user", "content": "anything"}]


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
