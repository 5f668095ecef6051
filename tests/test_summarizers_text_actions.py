"""Text actions in a session that also used native calls: restored only where answered."""

from __future__ import annotations

import json
from typing import Any

from palimpsest.messages.reading import read_transcript
from palimpsest.summarizers.base import SummaryRequest
from palimpsest.summarizers.extractive import ExtractiveSummarizer
from palimpsest.summarizers.facts import extract_facts
from palimpsest.summarizers.text_actions import recover_text_actions

TRAILER = "(Open file: /repo/get_seed.py)\n(Current directory: /repo)\nbash-$"


def _call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}  # fmt: skip


def _mixed() -> list[dict[str, Any]]:
    """A native-calls start, then SWE-agent text actions answered by observations."""
    return [
        {"role": "user", "content": "Recover the seed."},
        {"role": "assistant", "content": "Listing first.", "tool_calls": [_call("a", "bash", command="ls")]},
        {"role": "tool", "tool_call_id": "a", "content": "release"},
        {"role": "assistant", "content": "I will write a script.\n```\ncreate get_seed.py\n```"},
        {"role": "user", "content": "[File: /repo/get_seed.py (1 lines total)]\n1:\n" + TRAILER},
        {"role": "assistant", "content": "Now run it.\n```\npython get_seed.py\n```"},
        {"role": "user", "content": "Traceback (most recent call last):\n  File \"get_seed.py\", line 9\n"
                                    "AttributeError: 'Solver' object has no attribute 'modle'\n" + TRAILER},
    ]  # fmt: skip


def test_the_reading_alone_loses_them() -> None:
    # the premise: once native calls appear, untagged fences are not actions to the reading
    readings = read_transcript(_mixed())
    assert readings[3].actions == () and readings[4].kind == "observation"


def test_an_answered_fenced_block_is_restored_as_the_action() -> None:
    restored = recover_text_actions(read_transcript(_mixed()))
    assert [a.command for a in restored[3].actions] == ["create get_seed.py"]
    assert restored[3].text == "I will write a script."
    assert [a.command for a in restored[5].actions] == ["python get_seed.py"]
    assert restored[1] == read_transcript(_mixed())[1]  # native reading untouched


def test_the_summary_names_the_file_and_the_failure() -> None:
    facts = extract_facts(_mixed())
    verbs = [(a.verb, a.target) for a in facts.actions]
    assert ("WRITE", "get_seed.py") in verbs
    assert any(path.endswith("get_seed.py") for path in facts.files)
    body = ExtractiveSummarizer().summarize(
        SummaryRequest(_mixed(), None, None, 2_000, "", readings=None)
    )
    assert "get_seed.py" in body
    assert "AttributeError: 'Solver' object has no attribute 'modle'" in body


def test_code_in_prose_of_a_native_run_stays_prose() -> None:
    turns = [
        {"role": "user", "content": "How do I list files?"},
        {"role": "assistant", "content": None, "tool_calls": [_call("a", "bash", command="pwd")]},
        {"role": "tool", "tool_call_id": "a", "content": "/repo"},
        {"role": "assistant", "content": "Use this:\n```\nrm -rf build\n```"},
        {"role": "user", "content": "Thanks, and what about hidden ones?"},
    ]
    readings = read_transcript(turns)
    assert recover_text_actions(readings) == readings
    targets = [a.target for a in extract_facts(turns).actions]
    assert len(targets) == 1 and "pwd" in targets[0]


def test_a_block_answered_by_a_native_result_is_left_alone() -> None:
    turns = [
        {"role": "user", "content": "Go."},
        {"role": "assistant", "content": "Example:\n```\nmake all\n```", "tool_calls": [_call("a", "bash", command="make test")]},
        {"role": "tool", "tool_call_id": "a", "content": "ok"},
    ]  # fmt: skip
    readings = read_transcript(turns)
    restored = recover_text_actions(readings)
    assert [a.command for a in restored[1].actions] == ["make test"]
