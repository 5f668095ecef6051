"""The MemoryProvider contract and the built-in provider over the L1 files."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest

from palimpsest.memory.providers import BuiltinMemoryProvider, MemoryProvider
from palimpsest.memory.store import MemoryStore


class Minimal(MemoryProvider):
    name = "minimal"

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.session_id = session_id


def test_abstract_members_required() -> None:
    with pytest.raises(TypeError):
        MemoryProvider()  # type: ignore[abstract]

    class Partial(MemoryProvider):
        def is_available(self) -> bool:
            return True

    with pytest.raises(TypeError):
        Partial()  # type: ignore[abstract]


def test_defaults_are_empty_or_noop(tmp_path: Path) -> None:
    p = Minimal()
    p.initialize("s1", home=tmp_path, platform="cli")
    assert p.system_prompt_block() == ""
    assert p.prefetch("anything", session_id="s1") == ""
    assert p.queue_prefetch("q") is None
    assert p.sync_turn("u", "a", session_id="s1") is None
    assert p.get_tool_schemas() == []
    assert p.on_pre_compress([{"role": "user", "content": "x"}]) == ""
    assert p.get_config_schema() == []
    assert p.recall_status() is None
    assert p.on_turn_start(1, "hi", remaining_tokens=10) is None
    assert p.on_session_end([]) is None
    assert p.on_session_switch("s2", parent_session_id="s1", reset=False, reason="x") is None
    assert p.on_delegation("task", "result", child_session_id="c") is None
    assert p.on_memory_write("add", "memory", "x", {"old_text": None}) is None
    assert p.save_config({}, tmp_path) is None
    with pytest.raises(NotImplementedError):
        p.handle_tool_call("x", {})
    p.initialize_for_inspection("s9", home=tmp_path, platform="cli")
    assert p.session_id == "s9"
    p.shutdown()


def test_full_lifecycle_is_declared() -> None:
    members = {
        "is_available",
        "initialize",
        "system_prompt_block",
        "prefetch",
        "queue_prefetch",
        "sync_turn",
        "get_tool_schemas",
        "handle_tool_call",
        "shutdown",
        "on_turn_start",
        "on_session_end",
        "on_session_switch",
        "on_pre_compress",
        "on_delegation",
        "on_memory_write",
        "get_config_schema",
        "save_config",
    }
    assert members <= set(dir(MemoryProvider))
    assert "session_id" in inspect.signature(MemoryProvider.prefetch).parameters
    assert MemoryProvider.__abstractmethods__ == {"is_available", "initialize"}


def test_builtin_provider(tmp_path: Path) -> None:
    store = MemoryStore(memory_char_limit=500)
    store.add("user", "likes jazz")
    builtin = BuiltinMemoryProvider(store)
    assert builtin.name == "builtin" and builtin.is_available()
    assert builtin.system_prompt_block() == ""  # nothing frozen before initialize
    builtin.initialize("s1", home=tmp_path, platform="cli")
    block = builtin.system_prompt_block()
    assert "USER PROFILE (who the user is)" in block and "likes jazz" in block
    assert builtin.prefetch("jazz") == ""
    assert [s["name"] for s in builtin.get_tool_schemas()] == ["memory"]
    answer = json.loads(
        builtin.handle_tool_call("memory", {"target": "memory", "action": "add", "content": "x"})
    )
    assert answer["success"] is True
    assert builtin.last_outcome is not None and builtin.last_outcome.result is not None
    assert json.loads(builtin.handle_tool_call("other", {}))["success"] is False
    # the snapshot is frozen: the write is not in the prompt until the next session
    assert "MEMORY (your personal notes)" not in builtin.system_prompt_block()


def test_builtin_turn_start_resets_breaker() -> None:
    builtin = BuiltinMemoryProvider(MemoryStore())
    for _ in range(4):
        last = json.loads(
            builtin.handle_tool_call(
                "memory", {"target": "memory", "action": "remove", "old_text": "z"}
            )
        )
    assert last.get("done") is True
    builtin.on_turn_start(2, "next")
    again = json.loads(
        builtin.handle_tool_call(
            "memory", {"target": "memory", "action": "remove", "old_text": "z"}
        )
    )
    assert "done" not in again


def test_public_names_exported() -> None:
    import palimpsest.memory as memory

    for name in memory.__all__:
        assert hasattr(memory, name), name
    # every class or constant imported into the package is listed (modules are not)
    public = {n for n in vars(memory) if not n.startswith("_") and n[0].isupper()}
    assert public <= set(memory.__all__)
