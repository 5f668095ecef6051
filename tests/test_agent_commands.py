"""Slash commands: /compress, /new, /usage, /status, /undo, and what is not a command."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_helpers import (
    ROTATION,
    answer,
    call,
    calls,
    compressor,
    history,
    make_agent,
    memory_manager,
)
from palimpsest import ScriptedChatModel
from palimpsest.agent.commands import NOTHING_TO_COMPRESS, parse_command
from palimpsest.agent.events import CompactionEvent


@pytest.mark.parametrize(
    ("line", "parsed"),
    [
        ("/compress", ("/compress", "")),
        ("  /compress   API endpoints  ", ("/compress", "API endpoints")),
        ("/NEW", ("/new", "")),
        ("hello /compress", None),
        ("", None),
        ("//not a command", None),
    ],
)
def test_parse_command(line: str, parsed: tuple[str, str] | None):
    assert parse_command(line) == parsed


def test_not_a_command_returns_none_and_unknown_is_explained(tmp_path: Path):
    agent = make_agent(tmp_path)
    assert agent.command("what does /compress do?") is None
    result = agent.command("/frobnicate now")
    assert result is not None and "Unknown command /frobnicate" in result.text
    assert agent.model.calls == []  # type: ignore[attr-defined]


class TestCompress:
    def test_reply_and_rotation(self, tmp_path: Path):
        agent = make_agent(
            tmp_path, messages=history(12), compressor=compressor(), settings=ROTATION
        )
        old = agent.session_id
        result = agent.command("/compress parser modules")
        assert result is not None
        assert result.text.startswith("Compressed: 24 → ")
        assert f"Session continues as {agent.session_id}." in result.text
        assert agent.session_id != old
        events = [e for e in result.events if isinstance(e, CompactionEvent)]
        assert len(events) == 1 and events[0].path == "manual" and events[0].compacted
        assert events[0].parent_session_id == old

    def test_nothing_to_compress_makes_no_call(self, tmp_path: Path):
        agent = make_agent(tmp_path, messages=history(2), compressor=compressor())
        result = agent.command("/compress")
        assert result is not None and result.text == NOTHING_TO_COMPRESS
        assert agent.model.calls == []  # type: ignore[attr-defined]

    def test_force_clears_the_anti_thrash_block(self, tmp_path: Path):
        engine = compressor()
        agent = make_agent(tmp_path, messages=history(12), compressor=engine)
        engine.ineffective_compression_count = 5
        result = agent.command("/compress")
        assert result is not None and result.text.startswith("Compressed:")
        assert engine.compression_count == 1


class TestNew:
    def test_new_session_is_empty_and_the_old_one_ended(self, tmp_path: Path):
        agent = make_agent(tmp_path, ["hi"], messages=history(3), compressor=compressor())
        agent.todos.write([{"id": "1", "content": "x", "status": "pending"}])
        old = agent.session_id
        result = agent.command("/new")
        assert result is not None and agent.session_id != old
        assert agent.messages == [] and agent.todos.items() == []
        assert agent.ledger.pending_asks() == []
        store = agent.store
        assert store is not None
        assert store.get_session(old)["end_reason"] == "new_session"  # type: ignore[arg-type,index]
        assert store.get_session(agent.session_id)["ended_at"] is None  # type: ignore[arg-type,index]
        assert agent.usage_total.request_count == 0
        assert agent.ask("hello again").text == "hi"

    def test_flush_runs_only_after_enough_user_turns(self, tmp_path: Path):
        home = tmp_path / "home"
        flush = calls(call("memory", {"action": "add", "target": "user", "content": "uses vim"}))
        short = make_agent(
            tmp_path / "s", [flush], messages=history(2), memory=memory_manager(home)
        )
        short.command("/new")
        assert short.model.calls == []  # type: ignore[attr-defined]
        long = make_agent(tmp_path / "l", [flush], messages=history(6), memory=memory_manager(home))
        result = long.command("/new")
        assert result is not None and "Saved 1 memory update" in result.text
        assert "uses vim" in (home / "memories" / "USER.md").read_text()
        assert long.messages == []


class TestReports:
    def test_usage_with_real_figures(self, tmp_path: Path):
        model = ScriptedChatModel([answer("a", prompt=1_500, output=20)], model="gpt-4o-mini")
        agent = make_agent(tmp_path, model=model)
        agent.ask("one")
        result = agent.command("/usage")
        assert result is not None
        assert "1,500 in, 20 out" in result.text and "Cache: 0 read, 0 written" in result.text
        assert "Cost: ~$" in result.text and "Unreported" not in result.text

    def test_usage_unknown_cost_and_estimates_are_labelled(self, tmp_path: Path):
        agent = make_agent(tmp_path, ["no usage here"])
        agent.ask("one")
        text = agent.command("/usage").text  # type: ignore[union-attr]
        assert "Cost: unknown" in text and "Unreported: 1 call(s)" in text
        assert "Tokens: unknown (1 call unreported) in" in text and "Model calls: 1" in text

    def test_a_local_route_with_no_usage_reported_costs_unknown_not_zero(self, tmp_path: Path):
        agent = make_agent(tmp_path, ["no usage", "still none"])
        agent.usage.provider = "openai-compatible"  # a local server bills nothing...
        agent.usage.base_url = "http://127.0.0.1:8765/v1"
        agent.ask("one")
        agent.ask("two")
        text = agent.command("/usage").text  # type: ignore[union-attr]
        # ...but no call reported usage, so "$0.00" would be a figure nobody measured.
        assert "Cost: unknown (no call reported usage)" in text and "$0.00" not in text

    def test_status(self, tmp_path: Path):
        agent = make_agent(tmp_path, [answer("a", prompt=3_000)])
        agent.ask("one")
        text = agent.command("/status").text  # type: ignore[union-attr]
        assert "Context: ~3,0" in text and "/ 100,000 tokens" in text
        assert "Compaction threshold: 64,000 tokens" in text
        assert f"Session: {agent.session_id}" in text and "Compactions this session: 0" in text
