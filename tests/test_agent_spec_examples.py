"""The acceptance examples of agent-loop.md (1-12, 15) and memory.md (15), one test each.

Examples 13 and 14 (gateway hygiene) are in tests/test_agent_hygiene.py. The
model is scripted; stores, memory files and the built-in compressor are real. Where an
example fixes the engine's numbers exactly (2), a small context engine written against
the public plugin contract (``ContextEngine``) plays the compressor.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import (
    ROTATION,
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
from palimpsest.agent.events import CompactionEvent, TurnEnd, WarningEvent
from palimpsest.agent.flush import FLUSH_MESSAGE
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.compaction.engine import ContextEngine
from palimpsest.compaction.markers import COMPACTION_NOTE
from palimpsest.errors import ContextOverflowError, OutputLimitError
from palimpsest.messages import for_provider
from palimpsest.providers.base import Completion
from palimpsest.summarizers.llm import LLMSummarizer
from palimpsest.usage import CanonicalUsage


def compactions(events: list[Any], path: str | None = None) -> list[CompactionEvent]:
    return [
        e for e in events if isinstance(e, CompactionEvent) and (path is None or e.path == path)
    ]


class PassEngine(ContextEngine):
    """A plugin engine whose passes remove a fixed number of middle messages each."""

    def __init__(self, threshold: int, removals: list[int]) -> None:
        self.threshold_tokens = threshold
        self.context_length = threshold * 2
        self.protect_first_n, self.protect_last_n = 3, 20
        self.removals = list(removals)
        self.passes = 0

    @property
    def name(self) -> str:
        return "passes"

    def update_from_response(self, usage: dict[str, Any]) -> None:
        self.last_prompt_tokens = int(usage.get("prompt_tokens", 0))

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        return (prompt_tokens or 0) >= self.threshold_tokens

    def compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
    ) -> list[dict[str, Any]]:
        self.passes += 1
        cut = self.removals.pop(0) if self.removals else 0
        if not cut:
            return list(messages)
        self.compression_count += 1
        summary = {"role": "user", "content": f"[summary of {cut} messages]"}
        return [*messages[:3], summary, *messages[3 + cut :]]


BIG = 4_000  # characters: 1,000 rough tokens per message


class TestPreflight:
    @pytest.mark.parametrize(("seeded", "runs"), [(5, False), (13, True), (23, True), (24, True)])
    def test_1_preflight_skip_decided_by_tokens(self, tmp_path: Path, seeded: int, runs: bool):
        # AL-03's "more than protect_first_n + protect_last_n + 1 messages" (24) gives way to
        # tokens (issue 23): 13 or 23 messages of 1,000 tokens overflow an 8K window, and
        # preflight compacts them. Only a history with no middle to summarize (6 messages:
        # head 3, minimum tail 3) is left alone.
        msgs = history(seeded // 2 + 1, chars=BIG)[:seeded]
        agent = make_agent(
            tmp_path,
            ["ok"],
            messages=msgs,
            compressor=compressor(8_000, protect_last_n=20),
            context_length=None,
            builtin_tools=False,
        )
        assert agent.estimate_request() > agent.compressor.threshold_tokens
        events = list(agent.run("next question"))
        assert bool(compactions(events, "preflight")) is runs

    def test_2_preflight_passes_stop_below_the_threshold(self, tmp_path: Path):
        msgs = history(75, chars=BIG * 2)  # 150 messages, ~300,000 rough tokens
        engine = PassEngine(64_000, removals=[30, 100, 10])
        agent = make_agent(tmp_path, ["ok"], messages=msgs, compressor=engine, builtin_tools=False)
        assert agent.estimate_request() >= 300_000
        events = list(agent.run("go on"))
        assert engine.passes == 2  # the second pass brought it under 64,000
        assert len(compactions(events, "preflight")) == 2
        assert agent.estimate_request() < 64_000

    def test_2_preflight_runs_at_most_three_passes(self, tmp_path: Path):
        engine = PassEngine(64_000, removals=[5, 5, 5, 5, 5])
        agent = make_agent(
            tmp_path,
            ["ok"],
            messages=history(75, chars=BIG * 2),
            compressor=engine,
            builtin_tools=False,
        )
        list(agent.run("go on"))
        assert engine.passes == 3

    def test_2_a_pass_without_a_shorter_list_stops_at_once(self, tmp_path: Path):
        engine = PassEngine(64_000, removals=[0, 50, 50])
        agent = make_agent(
            tmp_path,
            ["ok"],
            messages=history(75, chars=BIG * 2),
            compressor=engine,
            builtin_tools=False,
        )
        list(agent.run("go on"))
        assert engine.passes == 1

    @pytest.mark.parametrize("with_tools", [True, False])
    def test_3_tool_schemas_count(self, tmp_path: Path, with_tools: bool):
        def make_tool(i: int) -> Any:
            def fn(x: str) -> str:
                return x

            fn.__name__ = f"tool_{i}"
            fn.__doc__ = f"Tool {i}. " + "Describes its long behaviour in detail. " * 100
            return fn

        tools = [make_tool(i) for i in range(12)] if with_tools else []
        agent = make_agent(
            tmp_path,
            ["ok"],
            messages=history(20, chars=5_000)[:39],  # 39 + the new message = 40
            compressor=compressor(128_000, protect_last_n=20),
            context_length=None,
            builtin_tools=False,
            system_message="Rules. " * 2_850,  # about 5,000 tokens with the identity
            tools=tools,
        )
        assert agent.compressor.threshold_tokens == 64_000
        schemas = agent.estimate_request() - agent.compressor.estimate_request_tokens(
            agent.messages, agent.system_prompt
        )
        events = list(agent.run("next"))
        if with_tools:
            assert 11_000 < schemas < 13_500
            assert compactions(events, "preflight")
        else:
            assert schemas == 0
            assert not compactions(events, "preflight")


class TestInLoop:
    @pytest.mark.parametrize(
        ("prompt", "completion", "fires"), [(70_000, 30_000, True), (50_000, 60_000, False)]
    )
    def test_4_after_round_uses_real_prompt_tokens(
        self, tmp_path: Path, prompt: int, completion: int, fires: bool
    ):
        def noop() -> str:
            """Does nothing."""
            return "done"

        usage = CanonicalUsage(input_tokens=prompt, output_tokens=completion, raw_usage={})
        reply = calls(call("noop", {}, "n"), usage=usage)
        agent = make_agent(
            tmp_path,
            [reply, answer("finished", prompt=20_000)],
            messages=history(30, chars=BIG),  # ~30,000 rough tokens: no preflight
            compressor=compressor(128_000, protect_last_n=20),
            context_length=None,
            tools=[noop],
        )
        events = list(agent.run("do the thing"))
        assert len(compactions(events, "after_round")) == (1 if fires else 0)
        if fires:
            assert compactions(events)[0].compacted


class TestReactive:
    def test_5_overflow_adopts_the_limit_compacts_and_retries_on_the_new_history(
        self, tmp_path: Path
    ):
        overflow = ContextOverflowError(
            "This model's maximum context length is 131072 tokens", limit=131_072
        )
        agent = make_agent(
            tmp_path,
            [overflow, "recovered"],
            messages=history(40, chars=BIG),
            compressor=compressor(200_000, protect_last_n=20),
            context_length=None,
        )
        events = list(agent.run("continue"))
        assert agent.compressor.context_length == 131_072
        assert len(compactions(events, "reactive")) == len(compactions(events)) == 1
        end = events[-1]
        assert isinstance(end, TurnEnd) and end.completed and end.text == "recovered"
        retried = agent.model.calls[1][0]  # type: ignore[attr-defined]
        assert retried[0]["content"] == agent.system_prompt
        assert retried[1:] == for_provider(agent.messages[:-1])
        assert len(retried) < len(agent.model.calls[0][0])  # type: ignore[attr-defined]

    def test_5_three_more_rejections_end_the_turn_with_advice(self, tmp_path: Path):
        limits = [131_072, 65_536, 32_768, 16_384]
        errors = [ContextOverflowError(f"maximum context length is {n}", limit=n) for n in limits]
        agent = make_agent(
            tmp_path,
            errors,
            messages=history(40, chars=BIG),
            compressor=compressor(200_000, protect_last_n=20),
            context_length=None,
        )
        events = list(agent.run("continue"))
        assert len(compactions(events, "reactive")) == 3
        end = events[-1]
        assert isinstance(end, TurnEnd) and not end.completed
        assert "/new" in (end.error or "") and "/compress" in (end.error or "")
        assert stored(agent) == agent.messages

    def test_6_output_cap_error_lowers_max_tokens_without_compaction(self, tmp_path: Path):
        cap = OutputLimitError(
            "1000 in the messages, 8000 in the completion, limit 8192",
            limit=8_192,
            input_tokens=1_000,
        )
        agent = make_agent(tmp_path, [cap, "fits now"], max_tokens=8_000)
        events = list(agent.run("write a long essay"))
        sent = [c[2] for c in agent.model.calls]  # type: ignore[attr-defined]
        assert sent[0] == 8_000 and sent[1] is not None and sent[1] < 8_000
        assert agent.compressor.compression_count == 0 and not compactions(events)
        assert isinstance(events[-1], TurnEnd) and events[-1].text == "fits now"

    def test_7_no_progress_gives_a_partial_result(self, tmp_path: Path):
        overflow = ContextOverflowError("prompt is too long", limit=None)
        agent = make_agent(tmp_path, [overflow], messages=history(2))
        end = agent.ask("hello")
        assert end.partial and not end.completed
        assert end.details["completed"] is False and end.details["partial"] is True
        assert (end.error or "").endswith("Cannot compress further.")
        assert end.details["error"] == end.error


class TestAfterCompaction:
    def test_8_todo_snapshot_keeps_only_active_items(self, tmp_path: Path):
        agent = make_agent(tmp_path, messages=history(12), compressor=compressor())
        agent.todos.write(
            [
                {"id": "1", "content": "write tests", "status": "pending"},
                {"id": "2", "content": "fix bug", "status": "in_progress"},
                {"id": "3", "content": "setup", "status": "completed"},
            ]
        )
        agent.compress()
        last = agent.messages[-1]
        assert last == {
            "role": "user",
            "content": "[Your active task list was preserved across context compression]\n"
            "- [ ] 1. write tests (pending)\n"
            "- [>] 2. fix bug (in_progress)",
        }
        assert "setup" not in last["content"]

    def test_8_only_completed_items_append_nothing(self, tmp_path: Path):
        agent = make_agent(tmp_path, messages=history(12), compressor=compressor())
        agent.todos.write([{"id": "3", "content": "setup", "status": "completed"}])
        agent.compress()
        assert not any(
            str(m["content"]).startswith("[Your active task list") for m in agent.messages
        )

    def test_9_split_and_notifications(self, tmp_path: Path):
        starts: list[tuple[str, dict[str, Any]]] = []

        class Recording(ContextCompressor):
            def on_session_start(self, session_id: str, **kwargs: Any) -> None:
                starts.append((session_id, kwargs))

        provider = RecordingProvider()
        memory = memory_manager(tmp_path / "home", provider)
        engine = Recording(8_000, threshold_percent=0.5, protect_last_n=4, quiet_mode=True)
        agent = make_agent(
            tmp_path,
            messages=history(12),
            compressor=engine,
            memory=memory,
            context_length=None,
            settings=ROTATION,
        )
        a = agent.session_id
        agent.compress()
        b = agent.session_id
        assert b != a
        store = agent.store
        assert store is not None
        assert store.get_session(a)["end_reason"] == "compression"  # type: ignore[index]
        assert store.get_session(b)["parent_session_id"] == a  # type: ignore[index]
        assert store.get_messages(b) == agent.messages
        memory.drain()
        assert (b, {"parent_session_id": a, "reset": False, "reason": "compression"}) in (
            provider.switches
        )
        assert starts[-1] == (b, {"boundary_reason": "compression", "old_session_id": a})
        memory.shutdown_all()

    def test_10_prompt_rebuild_shows_what_the_flush_saved(self, tmp_path: Path):
        home = tmp_path / "home"
        flush_reply = calls(
            call("memory", {"action": "add", "target": "memory", "content": "prefers uv"}, "m")
        )
        agent = make_agent(
            tmp_path,
            [flush_reply],
            messages=history(12),
            compressor=compressor(),
            memory=memory_manager(home),
        )
        assert "prefers uv" not in agent.system_prompt
        agent.compress()
        assert "prefers uv" in (home / "memories" / "MEMORY.md").read_text()
        assert "prefers uv" in agent.system_prompt
        assert agent.system_prompt.count(COMPACTION_NOTE) == 1  # CC-88, once
        for m in history(6, start=30):
            agent.append(m)
        agent.compress()
        assert agent.system_prompt.count(COMPACTION_NOTE) == 1
        assert agent.store.get_session(agent.session_id)["system_prompt"] == agent.system_prompt  # type: ignore[union-attr,index]


REQUEST = "Please review the database schema migrations for the orders table."


def handoff_summary(_: list[dict[str, Any]]) -> str:
    return (
        "## Active Task\nUser asked: '" + REQUEST + "'\n## Goal\nReview the database schema "
        "migrations of the orders table and report problems found.\n## Constraints & "
        "Preferences\nNone.\n## Completed Actions\nRead each migration and noted the index "
        "changes, the foreign keys and the column renames in the orders table one by one.\n"
        "## Active State\nAll migrations were read.\n## In Progress\nNone.\n## Blocked\nNone.\n"
        "## Key Decisions\nKeep the orders table layout.\n## Resolved Questions\nNone.\n"
        "## Pending User Asks\nNone.\n## Relevant Files\nNone.\n## Remaining Work\nReport.\n"
        "## Critical Context\nThe orders table holds the database schema under review."
    )


class TestManual:
    def test_11_compress_with_a_focus(self, tmp_path: Path):
        summarizer_model = ScriptedChatModel(default=handoff_summary)
        engine = compressor(summarizer=LLMSummarizer(summarizer_model))
        notes = "Checked the columns, indexes and foreign keys of this migration. " * 12
        msgs = [m for i in range(12) for m in (user(REQUEST), asst(f"Migration {i}: {notes}"))]
        agent = make_agent(tmp_path, messages=msgs, compressor=engine)
        result = agent.command("/compress database schema")
        assert result is not None
        prompts = [c[0][-1]["content"] for c in summarizer_model.calls]
        assert prompts and 'FOCUS TOPIC: "database schema"' in prompts[0]
        lines = result.text.splitlines()
        assert lines[0].startswith("Compressed: 24 → ")
        assert lines[1].startswith("Rough transcript estimate:")

    def test_12_nothing_to_compress(self, tmp_path: Path):
        summarizer_model = ScriptedChatModel(default=handoff_summary)
        engine = compressor(summarizer=LLMSummarizer(summarizer_model))
        agent = make_agent(tmp_path, messages=history(3)[:5], compressor=engine)
        result = agent.command("/compress")
        assert result is not None and "nothing to compress yet" in result.text.lower()
        assert summarizer_model.calls == [] and agent.model.calls == []  # type: ignore[attr-defined]
        assert len(agent.messages) == 5


def test_15_count_warning_goes_to_the_host_only(tmp_path: Path):
    agent = make_agent(tmp_path, messages=history(14), compressor=compressor())
    first = agent.command("/compress")
    assert first is not None
    assert not [e for e in first.events if isinstance(e, WarningEvent)]
    for m in history(8, start=50):
        agent.append(m)
    second = agent.command("/compress")
    assert second is not None
    warnings = [e.message for e in second.events if isinstance(e, WarningEvent)]
    text = "Session compressed 2 times — accuracy may degrade. Consider /new to start fresh."
    assert warnings == [text]
    assert all("accuracy may degrade" not in json.dumps(m) for m in agent.messages)
    assert "accuracy may degrade" not in agent.system_prompt


class TestMemoryFlush:
    """memory.md acceptance 15."""

    def flush_reply(self) -> Completion:
        return calls(
            call("memory", {"action": "add", "target": "user", "content": "likes tabs"}, "m")
        )

    def test_flush_before_a_manual_compaction(self, tmp_path: Path):
        home = tmp_path / "home"
        agent = make_agent(
            tmp_path,
            [self.flush_reply()],
            messages=history(20),
            compressor=compressor(),
            memory=memory_manager(home),
        )
        agent.compress()
        flushes = agent.model.calls  # type: ignore[attr-defined]
        assert len(flushes) == 1
        request, tools = flushes[0][0], flushes[0][1]
        assert [t["function"]["name"] for t in tools] == ["memory"]
        assert request[-1]["content"] == FLUSH_MESSAGE and FLUSH_MESSAGE.startswith("[System:")
        assert "likes tabs" in (home / "memories" / "USER.md").read_text()
        for listing in (agent.messages, stored(agent)):
            assert all("[System:" not in str(m.get("content")) for m in listing)

    def test_flush_on_the_reactive_path(self, tmp_path: Path):
        home = tmp_path / "home"
        overflow = ContextOverflowError("maximum context length is 100000 tokens", limit=100_000)
        agent = make_agent(
            tmp_path,
            [overflow, self.flush_reply(), "recovered"],
            messages=history(40, chars=BIG),
            compressor=compressor(200_000, protect_last_n=20),
            memory=memory_manager(home),
            context_length=None,
        )
        events = list(agent.run("continue"))
        assert compactions(events, "reactive")[0].compacted
        flush_calls = [c for c in agent.model.calls if c[1] and len(c[1]) == 1]  # type: ignore[attr-defined]
        assert len(flush_calls) == 1 and flush_calls[0][1][0]["function"]["name"] == "memory"
        assert "likes tabs" in (home / "memories" / "USER.md").read_text()
        assert all("[System:" not in str(m.get("content")) for m in stored(agent))
        assert isinstance(events[-1], TurnEnd) and events[-1].text == "recovered"
