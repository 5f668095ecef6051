"""Built-in tools on real memory files, a real SQLite store and real output files."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from palimpsest.agent.builtin_tools import (
    context_status_tool,
    memory_tool,
    read_output_tool,
    session_search_tool,
)
from palimpsest.agent.registry import ToolRegistry
from palimpsest.agent.tools import ToolContext, ToolOutcome
from palimpsest.memory.manager import MemoryManager
from palimpsest.memory.store import MemoryStore
from palimpsest.memory.tool import MEMORY_TOOL_SCHEMA
from palimpsest.outputs.store import OutputStore
from palimpsest.storage.search import SessionSearch
from palimpsest.storage.sessions import SessionStore


def payload(outcome: ToolOutcome) -> dict[str, Any]:
    assert not outcome.is_error, outcome.content
    data: dict[str, Any] = json.loads(outcome.content)
    return data


class TestMemoryTool:
    def test_on_a_store_writes_the_real_file(self, isolated_home: Path) -> None:
        store = MemoryStore(memory_char_limit=500, user_char_limit=300)
        store.load_from_disk()
        registry = ToolRegistry([memory_tool(store)])
        result = payload(
            registry.call("memory", {"target": "memory", "action": "add", "content": "uses uv"})
        )
        assert result["success"] is True and result["entries"] == ["uses uv"]
        assert "uses uv" in store.path("memory").read_text()
        assert registry.get("memory") is not None
        assert registry.schemas()[0]["function"]["parameters"] == MEMORY_TOOL_SCHEMA["parameters"]

    def test_on_a_manager(self, isolated_home: Path) -> None:
        manager = MemoryManager(MemoryStore(memory_char_limit=500, user_char_limit=300))
        manager.store.load_from_disk()
        registry = ToolRegistry([memory_tool(manager)])
        result = payload(
            registry.call("memory", '{"target": "user", "action": "add", "content": "likes tea"}')
        )
        assert result["success"] is True
        assert "likes tea" in manager.store.path("user").read_text()

    def test_schema_errors_come_from_the_registry(self, isolated_home: Path) -> None:
        registry = ToolRegistry([memory_tool(MemoryStore())])
        outcome = registry.call("memory", {"target": "elsewhere", "action": "add"})
        assert outcome.is_error and "target: 'elsewhere' is not one of" in outcome.content

    def test_breaker_resets_when_the_turn_changes(self, isolated_home: Path) -> None:
        store = MemoryStore(memory_char_limit=500, user_char_limit=300)
        store.load_from_disk()
        registry = ToolRegistry([memory_tool(store)])
        bad = {"target": "memory", "action": "remove", "old_text": "nothing like this"}
        answers = [payload(registry.call("memory", bad, ToolContext(turn=1))) for _ in range(4)]
        assert answers[-1].get("done") is True  # the breaker tripped in turn 1
        fresh = payload(registry.call("memory", bad, ToolContext(turn=2)))
        assert fresh.get("done") is None and fresh["success"] is False

    def test_refuses_other_objects(self) -> None:
        with pytest.raises(TypeError):
            memory_tool("memory")  # type: ignore[arg-type]


@pytest.fixture
def sessions(tmp_path: Path) -> Iterator[SessionStore]:
    store = SessionStore(tmp_path / "state.db")
    yield store
    store.close()


def add_session(store: SessionStore, sid: str, *texts: str) -> None:
    store.create_session(sid, source="cli", model="m")
    store.append_messages(
        sid,
        [
            {"role": "user" if i % 2 == 0 else "assistant", "content": t}
            for i, t in enumerate(texts)
        ],
    )


class TestSessionSearchTool:
    def test_finds_past_sessions_and_skips_the_current_one(self, sessions: SessionStore) -> None:
        add_session(sessions, "old", "the nginx reload failed", "fixed the nginx config")
        add_session(sessions, "now", "nginx again today")
        current = ["now"]
        registry = ToolRegistry([session_search_tool(SessionSearch(sessions), lambda: current[0])])
        result = payload(registry.call("session_search", {"query": "nginx"}))
        assert [r["session_id"] for r in result["results"]] == ["old"]
        current[0] = "old"  # asked at every call: the id rotates on compaction
        result = payload(registry.call("session_search", {"query": "nginx"}))
        assert [r["session_id"] for r in result["results"]] == ["now"]

    def test_recent_mode_and_clamped_limit(self, sessions: SessionStore) -> None:
        for i in range(7):
            add_session(sessions, f"s{i}", f"question {i}")
        registry = ToolRegistry([session_search_tool(SessionSearch(sessions), lambda: None)])
        result = payload(registry.call("session_search", {"limit": 50}))
        assert result["mode"] == "recent" and len(result["results"]) == 5
        bad = registry.call("session_search", {"limit": "many"})
        assert bad.is_error and "limit" in bad.content


class TestReadOutputTool:
    @pytest.fixture
    def outputs(self, tmp_path: Path) -> OutputStore:
        return OutputStore(tmp_path / "outputs")

    def test_windows_by_bytes(self, outputs: OutputStore) -> None:
        saved = outputs.put_text("0123456789" * 5, tool_name="run_shell")
        registry = ToolRegistry([read_output_tool(outputs)])
        short = saved.digest[:12]
        first = registry.call("read_output", {"name": str(saved.path), "offset": 0, "limit": 12})
        assert first.content == (
            f"[output {short}: bytes 0-12 of 50]\n012345678901\n[read on with offset=12]"
        )
        last = registry.call("read_output", {"name": saved.digest[:10], "offset": 45})
        assert last.content == f"[output {short}: bytes 45-50 of 50]\n56789"

    def test_pattern_lists_matching_lines_with_offsets(self, outputs: OutputStore) -> None:
        saved = outputs.put_text("ok 1\nFAILED test_a\nok 2\nFAILED test_b\n")
        registry = ToolRegistry([read_output_tool(outputs)])
        found = registry.call("read_output", {"name": saved.digest, "pattern": "FAILED"})
        assert found.content.splitlines() == [
            f"[output {saved.digest[:12]}: 2 lines contain 'FAILED']",
            "line 2 (offset 5): FAILED test_a",
            "line 4 (offset 24): FAILED test_b",
        ]

    def test_binary_output_is_described_not_shown(self, outputs: OutputStore) -> None:
        saved = outputs.put_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
        text = (
            ToolRegistry([read_output_tool(outputs)])
            .call("read_output", {"name": saved.digest})
            .content
        )
        assert "PNG image" in text and "not shown as text" in text

    def test_missing_output_lists_what_exists(self, outputs: OutputStore) -> None:
        registry = ToolRegistry([read_output_tool(outputs)])
        none = registry.call("read_output", {"name": "0123456789abcdef"})
        assert none.is_error and "No outputs are saved." in none.content
        saved = outputs.put_text("x" * 10)
        outcome = registry.call("read_output", {"name": "0123456789abcdef"})
        assert outcome.is_error
        assert "no saved output named '0123456789abcdef'" in outcome.content
        assert saved.digest[:12] in outcome.content

    @pytest.mark.parametrize("name", ["../secret.txt", "/etc/passwd"])
    def test_escapes_are_refused(self, outputs: OutputStore, tmp_path: Path, name: str) -> None:
        (tmp_path / "secret.txt").write_text("no")
        outcome = ToolRegistry([read_output_tool(outputs)]).call("read_output", {"name": name})
        assert outcome.is_error and outcome.content.startswith("PermissionError:")
        assert "outside the output store" in outcome.content

    def test_bad_window(self, outputs: OutputStore) -> None:
        saved = outputs.put_text("0123456789" * 5)
        registry = ToolRegistry([read_output_tool(outputs)])
        assert (
            "limit must be"
            in registry.call("read_output", {"name": saved.digest, "limit": 0}).content
        )
        past = registry.call("read_output", {"name": saved.digest, "offset": 50})
        assert past.content == f"[output {saved.digest[:12]}: bytes 50-50 of 50]\n"

    def test_the_tool_is_pinned(self, outputs: OutputStore) -> None:
        item = read_output_tool(outputs)
        assert item.max_result_chars == math.inf


class TestContextStatusTool:
    def test_returns_the_mapping_as_json_with_no_arguments(self) -> None:
        state = {"tokens": 1200, "limit": 128000, "threshold": 108800}
        tool = context_status_tool(lambda: state)
        assert tool.name == "context_status"
        assert tool.parameters["properties"] == {}
        registry = ToolRegistry([tool])
        assert payload(registry.call("context_status", None)) == state
        state["tokens"] = 5000  # pulled fresh at every call
        assert payload(registry.call("context_status", "")) == state
        extra = registry.call("context_status", {"verbose": True})
        assert extra.is_error and "unexpected field(s) verbose" in extra.content

    def test_unknown_values_stay_unknown(self) -> None:
        registry = ToolRegistry([context_status_tool(lambda: {"tokens": None})])
        assert payload(registry.call("context_status", None)) == {"tokens": None}
