"""Closing interrupted tool rounds and fencing recall onto the request (pure functions)."""

from __future__ import annotations

from agent_helpers import asst, call, user
from palimpsest.agent.history import CANCELLED_RESULT, attach_fence, cancelled_results


def test_open_calls_get_a_cancelled_result():
    calls_msg = {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("a", {}, "1"), call("b", {}, "2")],
    }
    done = {"role": "tool", "tool_call_id": "1", "content": "ok"}
    added = cancelled_results([user("go"), calls_msg, done])
    assert added == [
        {"role": "tool", "tool_call_id": "2", "name": "b", "content": CANCELLED_RESULT}
    ]
    assert cancelled_results([user("go"), calls_msg, done, *added]) == []
    assert cancelled_results([user("go"), asst("fine")]) == []
    assert cancelled_results([calls_msg, user("a new turn")]) == []


def test_fence_goes_on_the_turns_message_in_a_copy():
    history = [user("the request"), asst("ok"), user("[Your active task list ...]")]
    out = attach_fence(history, "<memory-context>x</memory-context>", "the request")
    assert out[0]["content"] == "the request\n\n<memory-context>x</memory-context>"
    assert out[2] == history[2] and history[0]["content"] == "the request"
    fallback = attach_fence(history, "F", "not there")
    assert fallback[2]["content"].endswith("\n\nF")
    parts = attach_fence([{"role": "user", "content": [{"type": "text", "text": "q"}]}], "F", "q")
    assert parts[0]["content"][-1] == {"type": "text", "text": "F"}
    assert attach_fence(history, "", "the request") == history
