"""TodoStore and the todo tool (spec agent-loop.md AL-17, AL-18)."""

from __future__ import annotations

import json

import pytest

from palimpsest.agent.registry import ToolRegistry
from palimpsest.agent.todo import INJECTION_HEADER, TodoItem, TodoStore, todo_tool


def store_with(*items: dict[str, object]) -> TodoStore:
    store = TodoStore()
    store.write(list(items))
    return store


class TestAcceptanceExample8:
    def test_only_active_items_are_injected(self) -> None:
        store = store_with(
            {"id": 1, "content": "write tests", "status": "pending"},
            {"id": 2, "content": "fix bug", "status": "in_progress"},
            {"id": 3, "content": "setup", "status": "completed"},
        )
        assert store.format_for_injection() == (
            "[Your active task list was preserved across context compression]\n"
            "- [ ] 1. write tests (pending)\n"
            "- [>] 2. fix bug (in_progress)"
        )
        assert "setup" not in (store.format_for_injection() or "")

    def test_only_completed_items_inject_nothing(self) -> None:
        store = store_with(
            {"id": 3, "content": "setup", "status": "completed"},
            {"id": 4, "content": "old idea", "status": "cancelled"},
        )
        assert store.format_for_injection() is None
        assert TodoStore().format_for_injection() is None


class TestWriteRules:
    def test_invalid_status_becomes_pending(self) -> None:
        store = store_with(
            {"id": "a", "content": "x", "status": "doing"},
            {"id": "b", "content": "y"},
            {"id": "c", "content": "z", "status": " In_Progress "},
        )
        assert [i.status for i in store.items()] == ["pending", "pending", "in_progress"]

    @pytest.mark.parametrize(
        "bad", [{"id": "2"}, {"id": "2", "content": "  "}, {"id": "2", "content": 5}]
    )
    def test_empty_or_missing_content_rejects_the_whole_write(self, bad: dict[str, object]) -> None:
        store = store_with({"id": "1", "content": "keep me", "status": "pending"})
        with pytest.raises(ValueError, match="empty or missing content"):
            store.write([{"id": "1", "content": "new", "status": "completed"}, bad])
        assert store.items() == [TodoItem("1", "keep me", "pending")]

    def test_content_is_capped_with_a_marker(self) -> None:
        store = store_with({"id": "1", "content": "a" * 5000})
        content = store.items()[0].content
        assert len(content) == 4000
        assert content.endswith("… [truncated]")
        assert content.startswith("a" * 3900)

    def test_list_is_capped_at_256_items(self) -> None:
        store = store_with(*({"id": str(i), "content": f"t{i}"} for i in range(300)))
        items = store.items()
        assert len(items) == 256
        assert items[-1].id == "255"

    def test_duplicate_ids_last_wins_and_takes_last_position(self) -> None:
        store = store_with(
            {"id": "1", "content": "first"},
            {"id": "2", "content": "second"},
            {"id": "1", "content": "again", "status": "completed"},
        )
        assert store.items() == [
            TodoItem("2", "second", "pending"),
            TodoItem("1", "again", "completed"),
        ]

    def test_merge_updates_by_id_and_extends(self) -> None:
        store = store_with({"id": "1", "content": "one"}, {"id": "2", "content": "two"})
        store.write(
            [{"id": "1", "status": "completed"}, {"id": "3", "content": "three"}], merge=True
        )
        assert store.items() == [
            TodoItem("1", "one", "completed"),
            TodoItem("2", "two", "pending"),
            TodoItem("3", "three", "pending"),
        ]
        with pytest.raises(ValueError):
            store.write([{"id": "4", "status": "pending"}], merge=True)
        assert len(store.items()) == 3

    def test_replace_drops_the_old_list(self) -> None:
        store = store_with({"id": "1", "content": "one"})
        store.write([{"id": "9", "content": "nine"}])
        assert [i.id for i in store.items()] == ["9"]

    @pytest.mark.parametrize("bad", ["not a list", [3], [None]])
    def test_non_object_entries_are_refused(self, bad: object) -> None:
        with pytest.raises(ValueError):
            TodoStore().write(bad)  # type: ignore[arg-type]


class TestRender:
    def test_markers_empty_id_and_nesting(self) -> None:
        store = store_with(
            {"id": "1", "content": "build", "status": "in_progress"},
            {"id": "1.1", "content": "parse", "status": "completed", "parent": "1"},
            {"id": "1.1.1", "content": "lexer", "status": "pending", "parent": "1.1"},
            {"id": "", "content": "mystery", "status": "cancelled"},
        )
        assert store.render() == (
            "- [>] 1. build (in_progress)\n"
            "  - [x] 1.1. parse (completed)\n"
            "    - [ ] 1.1.1. lexer (pending)\n"
            "- [~] ?. mystery (cancelled)"
        )
        assert TodoStore().render() == "(no tasks)"

    def test_unknown_status_uses_question_marker(self) -> None:
        store = TodoStore.from_list([])
        store._items = [TodoItem("1", "odd", "weird")]  # only reachable by hand
        assert store.render() == "- [?] 1. odd (weird)"

    def test_parent_stays_visible_while_a_descendant_is_active(self) -> None:
        store = store_with(
            {"id": "1", "content": "epic", "status": "completed"},
            {"id": "2", "content": "story", "status": "completed", "parent": "1"},
            {"id": "3", "content": "task", "status": "pending", "parent": "2"},
            {"id": "4", "content": "done", "status": "completed"},
        )
        assert store.format_for_injection() == (
            f"{INJECTION_HEADER}\n"
            "- [x] 1. epic (completed)\n"
            "  - [x] 2. story (completed)\n"
            "    - [ ] 3. task (pending)"
        )

    def test_parent_cycle_still_renders_every_item(self) -> None:
        store = store_with(
            {"id": "a", "content": "A", "parent": "b"}, {"id": "b", "content": "B", "parent": "a"}
        )
        assert store.render().count("\n") == 1


class TestPersistence:
    def test_round_trip(self) -> None:
        store = store_with(
            {"id": 1, "content": "one", "status": "in_progress"},
            {"id": 2, "content": "two", "parent": 1},
        )
        data = store.to_list()
        assert data == [
            {"id": "1", "content": "one", "status": "in_progress"},
            {"id": "2", "content": "two", "status": "pending", "parent": "1"},
        ]
        restored = TodoStore.from_list(json.loads(json.dumps(data)))
        assert restored.items() == store.items()


class TestTodoTool:
    def test_read_write_and_merge_through_the_registry(self) -> None:
        store = TodoStore()
        registry = ToolRegistry([todo_tool(store)])
        empty = registry.call("todo", None)
        assert not empty.is_error and "(no tasks)" in empty.content
        written = registry.call(
            "todo",
            json.dumps({"todos": [{"id": 1, "content": "a"}, {"id": 2, "content": "b"}]}),
        )
        assert "- [ ] 1. a (pending)" in written.content
        assert "2 task(s): 2 pending, 0 in progress, 0 completed, 0 cancelled" in written.content
        merged = registry.call(
            "todo", {"todos": [{"id": "2", "status": "in_progress"}], "merge": True}
        )
        assert "- [>] 2. b (in_progress)" in merged.content
        assert "- [ ] 1. a (pending)" in merged.content

    def test_bad_write_is_an_error_and_keeps_the_list(self) -> None:
        store = store_with({"id": "1", "content": "keep"})
        outcome = ToolRegistry([todo_tool(store)]).call("todo", {"todos": [{"id": "2"}]})
        assert outcome.is_error
        assert "ValueError" in outcome.content and "empty or missing content" in outcome.content
        assert store.items() == [TodoItem("1", "keep", "pending")]

    def test_unknown_status_through_the_tool_becomes_pending(self) -> None:
        store = TodoStore()
        outcome = ToolRegistry([todo_tool(store)]).call(
            "todo", {"todos": [{"id": "1", "content": "x", "status": "nope"}]}
        )
        assert not outcome.is_error and "- [ ] 1. x (pending)" in outcome.content

    def test_schema_rejects_a_bad_shape(self) -> None:
        outcome = ToolRegistry([todo_tool(TodoStore())]).call("todo", {"todos": "x"})
        assert outcome.is_error and "todos: 'x' is not of type 'array'" in outcome.content
