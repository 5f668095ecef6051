"""The ``memory`` tool: schema, JSON answers the model can act on, the failure breaker."""

from __future__ import annotations

import json
from typing import Any

import pytest

from palimpsest.memory.store import MemoryStore
from palimpsest.memory.tool import MAX_FAILURES_PER_TURN, MEMORY_TOOL_SCHEMA, MemoryTool


@pytest.fixture
def store() -> MemoryStore:
    s = MemoryStore(memory_char_limit=500, user_char_limit=300)
    s.load_from_disk()
    return s


@pytest.fixture
def tool(store: MemoryStore) -> MemoryTool:
    return MemoryTool(store)


def call(tool: MemoryTool, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(tool(args))
    return result


def test_schema_shape() -> None:
    params = MEMORY_TOOL_SCHEMA["parameters"]
    assert MEMORY_TOOL_SCHEMA["name"] == "memory"
    assert params["required"] == ["target"]
    assert params["properties"]["target"]["enum"] == ["memory", "user"]
    assert params["properties"]["action"]["enum"] == ["add", "replace", "remove"]
    assert {"content", "old_text", "operations"} <= set(params["properties"])
    description = MEMORY_TOOL_SCHEMA["description"].lower()
    for phrase in ("user preferences > environment facts > procedures", "skip", "full", "batch"):
        assert phrase in description
    json.dumps(MEMORY_TOOL_SCHEMA)


def test_add_success_returns_live_state(tool: MemoryTool) -> None:
    answer = call(tool, target="memory", action="add", content="  uses pnpm  ")
    assert answer == {
        "success": True,
        "target": "memory",
        "entries": ["uses pnpm"],
        "usage": "1% — 9/500 chars",
        "entry_count": 1,
        "message": "Entry added.",
    }
    again = call(tool, target="memory", action="add", content="uses pnpm")
    assert again["success"] and "no duplicate" in again["message"] and again["entry_count"] == 1


def test_capacity_error_lists_entries(tool: MemoryTool) -> None:
    call(tool, target="memory", action="add", content="a" * 450)
    answer = call(tool, target="memory", action="add", content="b" * 100)
    assert answer["success"] is False
    assert "exceed" in answer["error"] and "Current entries" not in answer["error"]
    assert answer["current_entries"] == ["a" * 450]
    assert answer["usage"] == "450/500"


def test_ambiguous_and_missing(tool: MemoryTool) -> None:
    call(tool, target="memory", action="add", content="deploy to eu")
    call(tool, target="memory", action="add", content="deploy to us")
    answer = call(tool, target="memory", action="remove", old_text="deploy")
    assert answer["error"] == "Multiple entries matched 'deploy'. Be more specific."
    assert answer["matches"] == ["deploy to eu", "deploy to us"]
    missing = call(tool, target="memory", action="remove", old_text="nothing")
    assert missing["success"] is False and "No entry matched" in missing["error"]
    assert "current_entries" in missing["error"]
    assert missing["current_entries"] == ["deploy to eu", "deploy to us"]


def test_missing_old_text_is_recoverable(tool: MemoryTool) -> None:
    call(tool, target="memory", action="add", content="fact")
    answer = call(tool, target="memory", action="replace", content="new")
    assert answer["success"] is False
    assert "unique substring" in answer["error"] and "current_entries" in answer["error"]
    assert answer["current_entries"] == ["fact"] and answer["usage"] == "4/500"


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            {"target": "notes", "action": "add", "content": "x"},
            "Invalid target 'notes'. Use 'memory' or 'user'.",
        ),
        ({"target": "memory", "action": "add"}, "Content is required for 'add' action."),
        (
            {"target": "memory", "action": "replace", "old_text": "x"},
            "content is required for 'replace' action.",
        ),
        (
            {"target": "memory", "action": "delete"},
            "Unknown action 'delete'. Use: add, replace, remove",
        ),
        ({"target": "memory", "action": "add", "content": "  "}, "Content cannot be empty."),
    ],
)
def test_dispatcher_validation(tool: MemoryTool, args: dict[str, Any], error: str) -> None:
    assert json.loads(tool(args)) == {"success": False, "error": error}


def test_no_store() -> None:
    answer = json.loads(MemoryTool(None)({"target": "memory", "action": "add", "content": "x"}))
    assert answer["error"].startswith("Memory is not available.")


def test_threat_names_pattern(tool: MemoryTool) -> None:
    answer = call(tool, target="user", action="add", content="cat ~/.env")
    assert answer["success"] is False and answer["threat"] == "read_secrets"
    assert answer["error"].startswith("Blocked: content matches threat pattern 'read_secrets'.")


def test_breaker_after_three_failures(tool: MemoryTool) -> None:
    for _ in range(MAX_FAILURES_PER_TURN):
        answer = call(tool, target="memory", action="remove", old_text="nope")
        assert "done" not in answer
    answer = call(tool, target="memory", action="remove", old_text="nope")
    assert answer["success"] is False and answer["done"] is True
    assert "stop retrying" in answer["error"]
    tool.start_turn()
    assert "done" not in call(tool, target="memory", action="remove", old_text="nope")


def test_success_resets_breaker(tool: MemoryTool) -> None:
    for _ in range(MAX_FAILURES_PER_TURN):
        call(tool, target="memory", action="remove", old_text="nope")
    call(tool, target="memory", action="add", content="fine")
    assert "done" not in call(tool, target="memory", action="remove", old_text="nope")


def test_refined_profile_is_terminal(store: MemoryStore) -> None:
    tool = MemoryTool(store, profile="refined")
    answer = json.loads(tool({"target": "memory", "action": "add", "content": "x"}))
    assert answer["done"] is True and "entries" not in answer and "do not repeat" in answer["note"]


def test_batch(tool: MemoryTool) -> None:
    answer = call(
        tool,
        target="user",
        operations=[
            {"action": "add", "content": "likes jazz"},
            {"action": "add", "content": "lives in Lyon"},
        ],
    )
    assert answer["message"] == "Applied 2 operation(s)." and answer["entry_count"] == 2
    failed = call(tool, target="user", operations=[{"action": "explode"}])
    assert failed["error"].startswith("Operation 0 (explode): Unknown action")
    assert failed["error"].endswith("No operations were applied.")
    assert call(tool, target="user", operations="add")["success"] is False


def test_outcome_carries_writes(tool: MemoryTool) -> None:
    tool({"target": "memory", "action": "add", "content": "old"})
    outcome = tool.call(
        {"target": "memory", "action": "replace", "old_text": "old", "content": "new"}
    )
    assert outcome.result is not None
    write = outcome.result.writes[0]
    assert (write.action, write.content, write.old_text, write.previous_content) == (
        "replace",
        "new",
        "old",
        "old",
    )


def test_replace_and_remove_tell_the_model_what_changed(tool: MemoryTool) -> None:
    call(tool, action="add", target="memory", content="deploy with make deploy-prod")
    answer = call(tool, action="replace", target="memory", old_text="prod", content="ship it")
    assert answer["success"] and answer["changed"] == [
        {"action": "replace", "old": "deploy with make deploy-prod", "new": "ship it"}
    ]
    answer = call(tool, action="remove", target="memory", old_text="ship it")
    assert answer["changed"] == [{"action": "remove", "old": "ship it"}]
    assert "changed" not in call(tool, action="add", target="memory", content="new fact")


def test_a_one_letter_match_is_refused_for_the_model_too(tool: MemoryTool) -> None:
    call(tool, action="add", target="memory", content="uses pnpm")
    answer = call(tool, action="replace", target="memory", old_text="p", content="x")
    assert not answer["success"] and "too short" in answer["error"]
    assert answer["matches"] == ["uses pnpm"]


def test_an_entry_over_the_whole_limit_is_not_told_to_consolidate(store: MemoryStore) -> None:
    tool = MemoryTool(store)
    answer = json.loads(tool({"action": "add", "target": "user", "content": "x" * 5000}))
    assert not answer["success"] and "longer than the whole" in answer["error"]
    assert "Consolidate" not in answer["error"]
