"""ShareGPT turns as chat messages: Hermes tool calls, text actions, and the reading of both."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from palimpsest.messages.reading import read_transcript
from palimpsest.trajectories.sharegpt import first_request, to_chat_messages, turn_messages

REAL = Path(__file__).parent / "data" / "trajectories" / "real_sharegpt.jsonl"


def real_entries() -> list[dict[str, Any]]:
    return [json.loads(line) for line in REAL.read_text(encoding="utf-8").splitlines()]


def call(name: str, **arguments: Any) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def response(content: str) -> str:
    return f"<tool_response>\n{json.dumps({'name': 'x', 'content': content})}\n</tool_response>"


def test_roles_and_hermes_calls() -> None:
    turns = [
        {"from": "system", "value": "be brief"},
        {"from": "human", "value": "list files"},
        {
            "from": "gpt",
            "value": "Looking.\n" + call("terminal", command="ls") + call("read", path="a"),
        },
        {"from": "tool", "value": response("a.py\nb.py") + response("print(1)")},
        {"from": "gpt", "value": "Done."},
    ]
    groups = turn_messages(turns)
    assert [len(g) for g in groups] == [1, 1, 1, 2, 1]
    assistant = groups[2][0]
    assert assistant["content"] == "Looking."
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["terminal", "read"]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"command": "ls"}
    assert [m["tool_call_id"] for m in groups[3]] == ["call_2_0", "call_2_1"]
    assert groups[3][0]["content"] == "a.py\nb.py"
    readings = read_transcript(to_chat_messages(turns))
    assert [r.kind for r in readings] == [
        "system", "request", "assistant", "observation", "observation", "assistant"
    ]  # fmt: skip
    assert readings[2].actions[0].command == "ls"
    assert readings[3].observation is not None and readings[3].observation.action_index == 2


def test_text_actions_pair_with_tool_turns() -> None:
    turns = [
        {"from": "human", "value": "fix it"},
        {"from": "gpt", "value": "Run the tests.\n```mswea_bash_command\npytest -q\n```"},
        {"from": "tool", "value": "<returncode>1</returncode>\n<output>\n1 failed\n</output>"},
        {"from": "gpt", "value": "Check status.\n```mswea_bash_command\ngit status\n```"},
        {"from": "tool", "value": "clean"},
    ]
    messages = to_chat_messages(turns)
    assert messages[4] == {"role": "user", "content": "OBSERVATION:\nclean"}
    readings = read_transcript(messages)
    assert [r.kind for r in readings] == ["request", "assistant", "observation"] * 1 + [
        "assistant",
        "observation",
    ]
    assert readings[2].observation is not None and readings[2].observation.exit_code == 1
    assert readings[4].observation is not None and readings[4].observation.output == "clean"


def test_malformed_call_block_stays_text() -> None:
    turns = [{"from": "gpt", "value": "<tool_call>not json</tool_call>"}]
    assert to_chat_messages(turns) == [
        {"role": "assistant", "content": "<tool_call>not json</tool_call>"}
    ]


def test_first_request() -> None:
    assert (
        first_request([{"from": "system", "value": "s"}, {"from": "human", "value": " q "}]) == "q"
    )
    assert first_request([{"from": "system", "value": "s"}]) is None


def test_real_trajectories_read_as_actions() -> None:
    for e in real_entries():
        readings = read_transcript(to_chat_messages(e["conversations"]))
        actions = [a for r in readings for a in r.actions]
        observations = [r for r in readings if r.kind == "observation"]
        assert len(actions) >= 8, e["id"]
        assert all(r.observation is not None for r in observations)
        assert (
            sum(r.observation.action_index is not None for r in observations)
            >= len(observations) - 1
        ), e["id"]
