"""The memory flush: one call, only the memory tool, applied to disk, no trace left."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_helpers import call, calls, history, memory_manager
from palimpsest.agent.driver import drive_sync
from palimpsest.agent.flush import (
    FLUSH_MAX_TOKENS,
    FLUSH_MESSAGE,
    FlushResult,
    flush_memories,
    flush_skip_reason,
)
from palimpsest.errors import ContextOverflowError
from palimpsest.providers.base import ScriptedChatModel


def run(model: ScriptedChatModel, flow: Any) -> FlushResult:
    box: dict[str, FlushResult] = {}

    def wrapper() -> Any:
        box["r"] = yield from flow

    assert list(drive_sync(model, wrapper())) == []
    return box["r"]


def test_the_flush_message_is_a_system_note():
    assert FLUSH_MESSAGE.startswith("[System:")
    assert "preferences" in FLUSH_MESSAGE and "corrections" in FLUSH_MESSAGE


def test_one_call_with_only_the_memory_tool_applied_to_disk(tmp_path: Path):
    memory = memory_manager(tmp_path)
    messages = history(3)
    before = [dict(m) for m in messages]
    reply = calls(
        call("memory", {"action": "add", "target": "memory", "content": "repo uses uv"}, "a"),
        call("todo", {"todos": []}, "b"),  # not offered: ignored
        call("memory", "{broken", "c"),
    )
    model = ScriptedChatModel([reply])
    result = run(model, flush_memories(memory, "SYSTEM", messages, max_tokens=900))
    assert result.ran and len(result.applied) == 1 and "skipped" in result.results[1]
    assert "repo uses uv" in (tmp_path / "memories" / "MEMORY.md").read_text()
    [(request, tools, max_tokens, options)] = model.calls
    assert request[0] == {"role": "system", "content": "SYSTEM"}
    assert request[1:-1] == before and request[-1]["content"] == FLUSH_MESSAGE
    assert [t["function"]["name"] for t in tools] == ["memory"]
    assert max_tokens == 900 and options == {"temperature": 0.3}
    assert messages == before  # nothing was added to the caller's list


def test_default_output_cap(tmp_path: Path):
    model = ScriptedChatModel(["nothing to save"])
    result = run(model, flush_memories(memory_manager(tmp_path), "S", history(2)))
    assert result.ran and result.applied == [] and model.calls[0][2] == FLUSH_MAX_TOKENS


def test_a_failing_flush_is_reported_not_raised(tmp_path: Path):
    model = ScriptedChatModel([ContextOverflowError("too long", limit=10)])
    result = run(model, flush_memories(memory_manager(tmp_path), "S", history(2)))
    assert result.ran and result.error is not None and "ContextOverflowError" in result.error


def test_skip_reasons(tmp_path: Path):
    memory = memory_manager(tmp_path)
    assert flush_skip_reason(None, history(3)) == "no memory"
    assert flush_skip_reason(memory, history(1)) == "fewer than 3 messages"
    assert flush_skip_reason(memory, history(2), min_turns=6) == "fewer than 6 user turns"
    assert flush_skip_reason(memory, history(6), min_turns=6) is None
    model = ScriptedChatModel([])
    assert run(model, flush_memories(None, "S", history(3))).skipped == "no memory"
    assert model.calls == []
