"""The turn flow: tool rounds, bad model output, interrupts (scripted model, real store)."""

from __future__ import annotations

import threading
from pathlib import Path

from agent_helpers import (
    call,
    calls,
    make_agent,
    memory_manager,
    stored,
    valid_tool_pairs,
)
from palimpsest import ScriptedChatModel
from palimpsest.agent.events import (
    ToolCallEvent,
    ToolResultEvent,
    TurnEnd,
    WarningEvent,
)
from palimpsest.agent.history import CANCELLED_RESULT
from palimpsest.agent.loop import Agent
from palimpsest.errors import ProviderError, RateLimitError


def add(a: int, b: int) -> int:
    """Add two integers.

    a: the first
    b: the second
    """
    return a + b


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


class TestRepairs:
    def test_calls_without_ids_get_ids_their_results_name(self, tmp_path: Path):
        bare = {"type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}
        agent = make_agent(tmp_path, [calls(bare), "three"], tools=[add])
        agent.ask("add")
        assistant = next(m for m in agent.messages if m.get("tool_calls"))
        cid = assistant["tool_calls"][0]["id"]
        assert cid and valid_tool_pairs(agent.messages)
        assert next(m for m in agent.messages if m["role"] == "tool")["tool_call_id"] == cid

    def test_a_session_stored_mid_round_is_closed_before_the_next_turn(self, tmp_path: Path):
        open_round = [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [call("add", {}, "x")]},
        ]
        agent = make_agent(tmp_path, ["hello"], messages=open_round)
        agent.ask("are you there?")
        assert valid_tool_pairs(agent.messages) and stored(agent) == agent.messages
        request = agent.model.calls[0][0]  # type: ignore[attr-defined]
        assert request[3]["role"] == "tool" and request[3]["content"] == CANCELLED_RESULT


def test_a_caller_that_stops_reading_leaves_a_valid_history(tmp_path: Path):
    reply = calls(call("add", {"a": 1, "b": 2}, "a1"), call("add", {"a": 3, "b": 4}, "a2"))
    agent = make_agent(tmp_path, [reply], tools=[add])
    for event in agent.run("add twice"):
        if isinstance(event, ToolCallEvent):
            break  # the host gave up in the middle of the round
    assert valid_tool_pairs(agent.messages) and stored(agent) == agent.messages
    agent.model.enqueue("fine")  # type: ignore[attr-defined]
    assert agent.ask("still there?").text == "fine"  # and the agent is usable again


def test_an_oversized_text_action_observation_is_saved_and_previewed(tmp_path: Path) -> None:
    """SWE-agent style: the command is in the assistant's text, its output comes back as
    the next user message. A huge one is budgeted like a tool result, a person's message
    never is."""
    action = {"role": "assistant", "content": "DISCUSSION\nLet me look.\n\n```\ncat big.log\n```"}
    seeded = [
        {"role": "system", "content": "SETTING: you are an autonomous programmer"},
        {"role": "user", "content": "Fix the bug in parser.py"},
        action,
    ]
    agent = make_agent(
        tmp_path, ["DISCUSSION\nI see.\n\n```\nls\n```"], messages=seeded, context_length=16_000
    )
    output = "\n".join(f"line {i}: value={i * 7} status=ok" for i in range(6000))  # ~170K chars
    list(agent.run(output + "\n(Open file: n/a)\n(Current directory: /repo)\nbash-$"))
    stored = next(m for m in reversed(agent.messages) if m["role"] == "user")
    assert len(str(stored["content"])) < 20_000 < len(output)
    assert agent.output_guard.stats.spilled == 1

    person = make_agent(tmp_path / "p", ["ok"], context_length=16_000)
    long_question = "Please read this carefully. " * 4000
    list(person.run(long_question))
    assert person.messages[0]["content"] == long_question  # not an observation: untouched
