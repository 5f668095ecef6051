"""OpenHands evaluation records and trajectories, counted against the raw events."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from palimpsest.errors import TranscriptError
from palimpsest.messages import (
    detect_format,
    load_transcript,
    read_transcript,
    read_transcript_file,
    validate_transcript,
)
from palimpsest.messages.formats_openhands import convert_openhands

FIXTURES = Path(__file__).parent / "data" / "transcripts" / "fixtures"
RECORD = FIXTURES / "openhands-eval-record.json"
TRAJECTORY = FIXTURES / "openhands-codeact-trajectory.json"
PAIRS = FIXTURES / "openhands-eval-pairs.json"


def raw_events(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    items = data["history"] if isinstance(data, dict) else data
    out: list[dict[str, Any]] = []
    for item in items:
        out.extend(item if isinstance(item, list) else [item])
    return out


def roles(messages: list[dict[str, Any]]) -> Counter[str]:
    return Counter(m["role"] for m in messages)


def test_evaluation_record_counts_match_the_raw_events() -> None:
    events = raw_events(RECORD)
    calls = [
        e for e in events if "tool_call_metadata" in e and e.get("action") not in (None, "finish")
    ]
    results = [e for e in events if "tool_call_metadata" in e and "observation" in e]
    responses = {e["tool_call_metadata"]["model_response"]["id"] for e in calls}
    loaded = read_transcript_file(RECORD)
    messages = loaded.messages
    assert loaded.format == "openhands" == detect_format(RECORD)
    assert len(calls) == 7 and len(results) == 7 and len(responses) == 6
    assert sum(len(m.get("tool_calls", [])) for m in messages) == len(calls)
    assert roles(messages) == {
        "system": 1,
        # the task, and the condensation note
        "user": 1 + sum(e.get("action") == "condensation" for e in events),
        # one per model response, plus the finish
        "assistant": len(responses) + 1,
        "tool": len(results),
    }
    # every call is answered by its own result, in a sequence a provider accepts
    assert {m["tool_call_id"] for m in messages if m["role"] == "tool"} == {
        e["tool_call_metadata"]["tool_call_id"] for e in results
    }
    validate_transcript(messages)
    assert loaded.notes == (
        "skipped 1 record of a type this reader does not know: action mystery_tool x1",
    )


def test_evaluation_record_shapes() -> None:
    messages = load_transcript(RECORD)
    # two calls of one model response join one assistant message, with its text
    first = messages[2]
    assert first["content"] == "Let me look at the repository first."
    assert [c["id"] for c in first["tool_calls"]] == ["toolu_01", "toolu_02"]
    # arguments come from the model response's own call
    edit = next(m for m in messages if m.get("tool_calls", [{}])[0].get("id") == "toolu_04")
    assert json.loads(edit["tool_calls"][0]["function"]["arguments"])["command"] == "str_replace"
    # a command's exit code is written the way OpenHands shows it to the model
    assert messages[6]["content"].endswith("[The command completed with exit code 1.]")
    error = next(m for m in messages if m.get("tool_call_id") == "toolu_06")
    assert error["_is_error"] is True
    assert messages[-1] == {
        "role": "assistant",
        "content": "Fixed _cstack in astropy/modeling/separable.py: the right block now holds "
        "the right matrix.\nI fixed `_cstack` so nested compound models keep their separability.",
    }


def test_evaluation_record_reading() -> None:
    readings = read_transcript(load_transcript(RECORD))
    kinds = [r.kind for r in readings]
    assert kinds.count("request") == 1 and readings[1].kind == "request"
    assert [r.index for r in readings if r.kind == "summary"] == [9]
    assert readings[9].extra["summary_source"] == "openhands"
    exit_codes = [r.observation.exit_code for r in readings if r.observation]
    assert exit_codes.count(1) == 1 and exit_codes.count(0) == 2


def test_codeact_trajectory_without_tool_metadata_is_text_actions() -> None:
    events = raw_events(TRAJECTORY)
    loaded = read_transcript_file(TRAJECTORY)
    messages = loaded.messages
    agent_actions = [e for e in events if e.get("action") in ("run", "edit", "run_ipython")]
    assert loaded.format == "openhands"
    assert roles(messages) == {"user": 2 + len(agent_actions), "assistant": len(agent_actions) + 2}
    readings = read_transcript(messages)
    acted = [r for r in readings if r.actions]
    assert [a.tool for r in acted for a in r.actions] == [
        "execute_bash",
        "edit_file",
        "execute_ipython_cell",
    ]
    assert acted[0].actions[0].command == "pytest tests/test_api.py -x"
    observations = [r for r in readings if r.kind == "observation"]
    assert len(observations) == len(agent_actions)
    assert observations[0].observation is not None and observations[0].observation.exit_code == 1
    assert [r.text for r in readings if r.kind == "request"] == [
        "Fix the failing test tests/test_api.py::test_login",
        "Thanks. Also add a changelog entry.",
    ]
    assert loaded.notes == (
        "skipped 2 records of a type this reader does not know: action mystery_new_action x1, "
        "observation mystery_new_observation x1",
    )
    validate_transcript(messages)


def test_older_pair_history() -> None:
    messages = load_transcript(PAIRS)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[2]["content"].startswith("EXECUTION RESULT of [execute_bash]:\n10:")
    assert messages[3]["content"] == "Use \\A and \\Z anchors."


def test_output_jsonl_with_a_cut_off_last_line_reads_the_rest() -> None:
    loaded = read_transcript_file(FIXTURES / "openhands-output-truncated.jsonl")
    assert loaded.messages == load_transcript(RECORD)
    assert loaded.notes[0].startswith("line 2 (the last line) is cut off")
    assert loaded.notes[0].endswith("read the 1 line before it")


def test_output_jsonl_with_several_runs_is_refused(tmp_path: Path) -> None:
    record = json.loads(RECORD.read_text())
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(record) + "\n" + json.dumps({**record, "instance_id": "b"}) + "\n")
    with pytest.raises(TranscriptError, match="holds 2 evaluation records") as info:
        load_transcript(path)
    assert "astropy__astropy-12907, b" in str(info.value)


def test_history_that_is_half_events_is_refused(tmp_path: Path) -> None:
    record = json.loads(RECORD.read_text())
    record["history"].append({"kind": "MessageEvent", "llm_message": {}})
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(record))
    with pytest.raises(TranscriptError) as info:
        load_transcript(path)
    text = str(info.value)
    assert "looks like an OpenHands run, but history[22]" in text
    assert "found object with keys kind, llm_message" in text
    # the same file forced as SWE-agent says why it is not one, instead of roleless messages
    with pytest.raises(TranscriptError, match=r"not a SWE-agent trajectory: found history\[0\]"):
        load_transcript(path, format="swe-agent")


def test_convert_openhands_on_events_directly() -> None:
    events = [
        {"action": "message", "source": "user", "args": {"content": "hi"}},
        {"observation": "agent_state_changed", "source": "environment", "extras": {}},
        {"action": "message", "source": "agent", "args": {"content": "hello"}},
    ]
    assert convert_openhands(events) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]


@pytest.mark.parametrize(
    ("path", "modified"),
    [(RECORD, ["astropy/modeling/separable.py"]), (TRAJECTORY, ["app/api.py"])],
)
def test_the_summary_facts_name_the_edited_files(path: Path, modified: list[str]) -> None:
    from palimpsest.summarizers.facts import extract_facts

    assert extract_facts(load_transcript(path)).modified_files() == modified


def test_v1_sdk_events_are_named_and_refused(tmp_path: Path) -> None:
    path = tmp_path / "v1.json"
    events = [{"kind": "SystemPromptEvent", "id": "e1"}, {"kind": "MessageEvent", "id": "e2"}]
    path.write_text(json.dumps({"instance_id": "x", "history": events}))
    with pytest.raises(
        TranscriptError, match=r"history\[0\] is an OpenHands V1 \(software-agent-sdk\)"
    ):
        load_transcript(path)


def test_a_result_whose_call_is_not_in_the_history_is_not_an_orphan_tool_message() -> None:
    events = [
        {"action": "message", "source": "user", "args": {"content": "go"}},
        {
            "observation": "run",
            "source": "agent",
            "cause": 7,
            "content": "done",
            "extras": {"metadata": {"exit_code": 0}},
            "tool_call_metadata": {"function_name": "execute_bash", "tool_call_id": "gone"},
        },
    ]
    messages = convert_openhands(events)
    assert messages[1] == {
        "role": "user",
        "content": "EXECUTION RESULT of [run]:\ndone\n[The command completed with exit code 0.]",
    }
    validate_transcript(messages)
