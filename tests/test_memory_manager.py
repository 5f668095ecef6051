"""MemoryManager: one external provider, routing, mirroring, fencing, background order."""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from palimpsest.compaction.markers import SUMMARY_PREFIX
from palimpsest.config import settings_from_dict
from palimpsest.errors import PluginNotFoundError
from palimpsest.memory.facts import FactStoreProvider
from palimpsest.memory.manager import MemoryManager
from palimpsest.memory.providers import BuiltinMemoryProvider, MemoryProvider
from palimpsest.memory.registry import available_providers, load_provider
from palimpsest.memory.shim import call_memory_write
from palimpsest.memory.store import MemoryStore


class Recorder(MemoryProvider):
    """A real provider implementation that records what the manager asks of it."""

    def __init__(
        self, name: str = "rec", tools: list[dict[str, Any]] | None = None, recall: str = ""
    ) -> None:
        self.name = name
        self.tools = tools if tools is not None else [{"name": f"{name}_tool", "parameters": {}}]
        self.recall = recall
        self.events: list[tuple[Any, ...]] = []

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.events.append(("initialize", session_id, kwargs.get("agent_context")))

    def system_prompt_block(self) -> str:
        return f"{self.name} block"

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        self.events.append(("prefetch", query))
        return self.recall

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        self.events.append(("queue_prefetch", query))

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "") -> None:
        time.sleep(0.01)  # a slow backend must still see turns in order
        self.events.append(("sync", user_content, assistant_content))

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return self.tools

    def handle_tool_call(self, name: str, args: Mapping[str, Any], **kwargs: Any) -> str:
        if args.get("boom"):
            raise RuntimeError("backend down")
        self.events.append(("tool", name, dict(args)))
        return json.dumps({"success": True, "by": self.name})

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: Mapping[str, Any] | None = None
    ) -> None:
        self.events.append(("write", action, target, content, dict(metadata or {})))

    def on_session_end(self, messages: Any) -> None:
        self.events.append(("end", len(messages)))

    def on_session_switch(
        self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False, **kw: Any
    ) -> None:
        self.events.append(("switch", new_session_id, parent_session_id, kw.get("reason")))

    def on_pre_compress(self, messages: Any) -> str:
        return f"{self.name} insight"

    def shutdown(self) -> None:
        self.events.append(("shutdown",))


@pytest.fixture
def manager() -> MemoryManager:
    m = MemoryManager(MemoryStore(memory_char_limit=500), core_tool_names={"read_file"})
    yield m
    m.shutdown_all()


class TestRegistration:
    def test_builtin_first_and_not_removable(self, manager: MemoryManager) -> None:
        assert isinstance(manager.providers[0], BuiltinMemoryProvider)
        with pytest.raises(ValueError, match="cannot be removed"):
            manager.remove_provider("builtin")
        with pytest.warns(UserWarning, match="always registered"):
            assert manager.add_provider(BuiltinMemoryProvider()) is False

    def test_second_external_refused(self, manager: MemoryManager) -> None:
        first, second = Recorder("one"), Recorder("two")
        assert manager.add_provider(first) is True
        with pytest.warns(UserWarning, match=r"memory\.provider") as record:
            assert manager.add_provider(second) is False
        assert "'two'" in str(record[0].message) and "'one'" in str(record[0].message)
        assert manager.external is first
        assert manager.get_all_tool_names() == ["memory", "one_tool"]

    def test_remove_external_then_add_another(self, manager: MemoryManager) -> None:
        manager.add_provider(Recorder("one"))
        manager.remove_provider("one")
        assert manager.external is None and "one_tool" not in manager.get_all_tool_names()
        assert manager.add_provider(Recorder("two")) is True

    def test_schema_failure_leaves_manager_untouched(self, manager: MemoryManager) -> None:
        class Broken(Recorder):
            def get_tool_schemas(self) -> list[dict[str, Any]]:
                raise RuntimeError("cannot reach schema server")

        with pytest.warns(RuntimeWarning, match="schemas failed to load"):
            assert manager.add_provider(Broken("broken")) is False
        assert manager.providers == (manager.builtin,)
        assert manager.get_all_tool_names() == ["memory"]

    def test_unavailable_refused(self, manager: MemoryManager) -> None:
        class Offline(Recorder):
            def is_available(self) -> bool:
                return False

        with pytest.warns(RuntimeWarning, match="not available"):
            assert manager.add_provider(Offline("off")) is False

    def test_core_names_duplicates_and_nameless(self, manager: MemoryManager) -> None:
        tools = [
            {"name": "read_file", "parameters": {}},
            {"name": "memory", "parameters": {}},
            {"description": "no name"},
            {"name": "recall", "parameters": {}},
        ]
        assert manager.add_provider(Recorder("ext", tools=tools))
        assert manager.get_all_tool_names() == ["memory", "recall"]
        defs = manager.tool_definitions(existing={"recall"})
        assert [d["function"]["name"] for d in defs] == ["memory"]
        assert all(d["type"] == "function" for d in defs)


class TestRouting:
    def test_calls_reach_the_right_provider(self, manager: MemoryManager) -> None:
        ext = Recorder("ext")
        manager.add_provider(ext)
        answer = json.loads(manager.handle_tool_call("ext_tool", {"q": 1}))
        assert answer == {"success": True, "by": "ext"}
        mem = json.loads(
            manager.handle_tool_call(
                "memory", {"target": "memory", "action": "add", "content": "x"}
            )
        )
        assert mem["success"] is True and mem["entries"] == ["x"]
        assert [e[0] for e in ext.events] == ["tool", "write"]

    def test_unknown_tool_and_failures(self, manager: MemoryManager) -> None:
        manager.add_provider(Recorder("ext"))
        assert json.loads(manager.handle_tool_call("nope", {})) == {
            "success": False,
            "error": "No memory provider handles tool 'nope'",
        }
        failed = json.loads(manager.handle_tool_call("ext_tool", {"boom": True}))
        assert failed["error"] == "Memory tool 'ext_tool' failed: backend down"

    def test_builtin_writes_mirrored_with_metadata(self, manager: MemoryManager) -> None:
        ext = Recorder("ext")
        manager.add_provider(ext)
        manager.initialize_all("s1", platform="cli")
        call = manager.handle_tool_call
        call("memory", {"target": "user", "action": "add", "content": "likes jazz"})
        call(
            "memory",
            {"target": "user", "action": "replace", "old_text": "jazz", "content": "likes blues"},
        )
        call("memory", {"target": "user", "action": "remove", "old_text": "nothing"})  # fails
        call("memory", {"target": "user", "action": "add", "content": "likes blues"})  # no-op
        call(
            "memory",
            {
                "target": "memory",
                "operations": [
                    {"action": "add", "content": "a"},
                    {"action": "add", "content": "b"},
                ],
            },
        )
        writes = [e for e in ext.events if e[0] == "write"]
        assert [(w[1], w[2], w[3]) for w in writes] == [
            ("add", "user", "likes jazz"),
            ("replace", "user", "likes blues"),
            ("add", "memory", "a"),
            ("add", "memory", "b"),
        ]
        assert writes[1][4]["old_text"] == "jazz"
        assert writes[1][4]["previous_content"] == "likes jazz"
        assert writes[1][4]["session_id"] == "s1"


class TestShim:
    def test_signatures(self) -> None:
        seen: list[Any] = []

        def legacy(action: str, target: str, content: str) -> None:
            seen.append(("legacy", action, target, content))

        def positional(action: str, target: str, content: str, metadata: Any, /) -> None:
            seen.append(("positional", metadata))

        def keyword(action: str, target: str, content: str, *, metadata: Any = None) -> None:
            seen.append(("keyword", metadata))

        def with_session(
            action: str, target: str, content: str, metadata: Any = None, *, session_id: str = ""
        ) -> None:
            seen.append(("session", session_id))

        def kwargs_only(*args: Any, **kwargs: Any) -> None:
            seen.append(("var", args, sorted(kwargs)))

        meta = {"old_text": "x"}
        for hook in (legacy, positional, keyword, with_session, kwargs_only):
            call_memory_write(hook, "add", "memory", "c", meta, session_id="s1", unknown=1)
        assert seen == [
            ("legacy", "add", "memory", "c"),
            ("positional", meta),
            ("keyword", meta),
            ("session", "s1"),
            ("var", ("add", "memory", "c", meta), ["session_id", "unknown"]),
        ]

    def test_old_provider_hook_through_manager(self, manager: MemoryManager) -> None:
        class Old(Recorder):
            def on_memory_write(self, action: str, target: str, content: str) -> None:  # type: ignore[override]
                self.events.append(("old-write", action, content))

        old = Old("old")
        manager.add_provider(old)
        manager.handle_tool_call("memory", {"target": "memory", "action": "add", "content": "z"})
        assert ("old-write", "add", "z") in old.events


class TestRecall:
    def test_fence_only_in_outgoing_request(self, manager: MemoryManager) -> None:
        manager.add_provider(Recorder("ext", recall="- user likes jazz"))
        stored = [
            {"role": "system", "content": "rules"},
            {"role": "user", "content": "recommend some music"},
        ]
        before = copy.deepcopy(stored)
        request = manager.prepare_request(stored)
        assert stored == before
        assert "<memory-context>" not in json.dumps(stored)
        assert request[-1]["content"].startswith("recommend some music\n\n<memory-context>\n")
        assert "- user likes jazz\n</memory-context>" in request[-1]["content"]
        # the next turn's stored history still carries no fence
        stored.append({"role": "assistant", "content": "try Coltrane"})
        stored.append({"role": "user", "content": "more like that"})
        manager.prepare_request(stored)
        assert "memory-context" not in json.dumps(stored)

    def test_trivial_prompt_skips_prefetch(self, manager: MemoryManager) -> None:
        ext = Recorder("ext", recall="fact")
        manager.add_provider(ext)
        assert manager.memory_context_block("thanks!") == ""
        assert not [e for e in ext.events if e[0] == "prefetch"]

    def test_prefetch_query_is_redacted(self, manager: MemoryManager) -> None:
        ext = Recorder("ext")
        manager.add_provider(ext)
        key = "sk-proj-" + "Zx9" * 12
        manager.prefetch_all(f"use key {key} please")
        assert key not in json.dumps(ext.events) and "[REDACTED]" in json.dumps(ext.events)

    def test_hanging_provider_is_bounded_and_skipped(self) -> None:
        release = threading.Event()
        calls: list[str] = []

        class Hang(Recorder):
            def prefetch(self, query: str, *, session_id: str = "") -> str:
                calls.append(query)
                release.wait(10)
                return "late"

        manager = MemoryManager(MemoryStore(), prefetch_timeout=0.3)
        manager.add_provider(Hang("hang"))
        try:
            start = time.monotonic()
            assert manager.prefetch_all("first question") == ""
            assert time.monotonic() - start < 2
            assert manager.prefetch_all("second question") == ""
            assert calls == ["first question"]
        finally:
            release.set()
            manager.shutdown_all()

    def test_failing_prefetch_does_not_stop_others(self, manager: MemoryManager) -> None:
        class Bad(Recorder):
            def system_prompt_block(self) -> str:
                raise RuntimeError("x")

            def prefetch(self, query: str, *, session_id: str = "") -> str:
                raise RuntimeError("x")

        manager.store.add("memory", "frozen fact")
        manager.add_provider(Bad("bad"))
        manager.initialize_all("s1")
        assert manager.prefetch_all("question") == ""
        assert "frozen fact" in manager.build_system_prompt()


class TestLifecycle:
    def test_system_prompt_and_pre_compress(self, manager: MemoryManager) -> None:
        manager.store.add("memory", "uses pnpm")
        manager.add_provider(Recorder("ext"))
        manager.initialize_all("s1", platform="cli")
        prompt = manager.build_system_prompt()
        assert prompt.index("uses pnpm") < prompt.index("ext block")
        assert manager.on_pre_compress([]) == "ext insight"

    def test_sync_order_redaction_and_boundary(self, manager: MemoryManager) -> None:
        ext = Recorder("ext")
        manager.add_provider(ext)
        manager.initialize_all("s1")
        secret = "ghp_" + "Q7w" * 12
        for n in range(5):
            manager.sync_all(f"user {n} {secret}", f"assistant {n}")
            manager.queue_prefetch_all(f"next {n}")
        manager.session_boundary([{"role": "user", "content": "x"}], "s2", reason="compression")
        assert manager.drain(5)
        kinds = [e for e in ext.events if e[0] in ("sync", "queue_prefetch", "end", "switch")]
        assert [e[0] for e in kinds] == ["sync", "queue_prefetch"] * 5 + ["end", "switch"]
        assert [e[1] for e in kinds if e[0] == "sync"] == [f"user {n} [REDACTED]" for n in range(5)]
        assert kinds[-1] == ("switch", "s2", "s1", "compression")
        assert manager.session_id == "s2"

    def test_compaction_summary_never_synced(self, manager: MemoryManager) -> None:
        ext = Recorder("ext")
        manager.add_provider(ext)
        manager.sync_all(f"{SUMMARY_PREFIX}\nthe user wanted X", "ok")
        manager.sync_all([{"type": "text", "text": "real question"}], "answer")
        assert manager.drain(5)
        assert [e for e in ext.events if e[0] == "sync"] == [("sync", "real question", "answer")]

    def test_initialize_passes_primary_context(self, manager: MemoryManager) -> None:
        ext = Recorder("ext")
        manager.add_provider(ext)
        manager.initialize_all("s1", agent_context="subagent")
        assert ext.events[0] == ("initialize", "s1", "subagent")

    def test_shutdown_reverse_order(self) -> None:
        order: list[str] = []

        class Builtin(BuiltinMemoryProvider):
            def shutdown(self) -> None:
                order.append("builtin")

        class Ext(Recorder):
            def shutdown(self) -> None:
                order.append("ext")

        manager = MemoryManager(builtin=Builtin(MemoryStore()))
        manager.add_provider(Ext("ext"))
        manager.shutdown_all()
        assert order == ["ext", "builtin"]


class TestDiscovery:
    def test_entry_point_registry(self) -> None:
        assert "facts" in available_providers()
        assert isinstance(load_provider("facts"), FactStoreProvider)

    def test_unknown_name_lists_available(self) -> None:
        with pytest.raises(PluginNotFoundError) as info:
            load_provider("honcho")
        assert "facts" in info.value.available and "facts" in str(info.value)

    def test_chosen_by_config(self, isolated_home: Path) -> None:
        settings = settings_from_dict({"memory": {"provider": "facts", "memory_char_limit": 123}})
        manager = MemoryManager.from_settings(settings)
        try:
            assert isinstance(manager.external, FactStoreProvider)
            assert manager.store.limits["memory"] == 123
            assert {"memory", "fact_store", "fact_search"} == set(manager.get_all_tool_names())
        finally:
            manager.shutdown_all()
        plain = MemoryManager.from_settings(settings_from_dict({}))
        assert plain.external is None

    def test_unknown_configured_provider(self) -> None:
        with pytest.raises(PluginNotFoundError):
            MemoryManager.from_settings(settings_from_dict({"memory": {"provider": "nope"}}))
