"""Aider chat histories: turns, edits as edit_file calls, aider's own output as observations."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.errors import TranscriptError
from palimpsest.messages import (
    detect_format,
    load_transcript,
    read_transcript,
    read_transcript_file,
    validate_transcript,
)
from palimpsest.messages.formats_aider import convert_aider
from palimpsest.summarizers.facts import extract_facts

HISTORY = Path(__file__).parent / "data" / "transcripts" / "fixtures" / "aider.chat.history.md"


def raw_counts(text: str) -> dict[str, int]:
    """What the file holds, counted from its lines (fenced blocks excluded)."""
    outside: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            outside.append(line)
    return {
        "sessions": sum(line.startswith("# aider chat started at") for line in outside),
        "edits": sum(line.startswith("> Applied edit to ") for line in outside),
        # '#### ' runs that are not aider commands
        "requests": len(
            [m for m in re.finditer(r"(?m)^#### (?!/).*(?:\n#### .*)*", "\n".join(outside))]
        ),
    }


def test_counts_match_the_raw_file() -> None:
    raw = raw_counts(HISTORY.read_text())
    assert raw == {"sessions": 2, "edits": 4, "requests": 3}
    loaded = read_transcript_file(HISTORY)
    messages = loaded.messages
    assert loaded.format == "aider" == detect_format(HISTORY)
    assert loaded.notes == ()
    calls = [c for m in messages for c in m.get("tool_calls", [])]
    assert len(calls) == raw["edits"]
    assert {c["function"]["name"] for c in calls} == {"edit_file"}
    results = [m for m in messages if m["role"] == "tool"]
    assert [m["content"] for m in results] == [
        "Applied edit to src/stats.py",
        "Applied edit to tests/test_stats.py",
        "Applied edit to src/stats.py",
        "Applied edit to src/report.py",
    ]
    assert Counter(m["role"] for m in messages)["assistant"] == 4
    validate_transcript(messages)


def test_the_reading_sees_requests_edits_and_aider_output() -> None:
    messages = load_transcript(HISTORY)
    readings = read_transcript(messages)
    requests = [r.text for r in readings if r.kind == "request"]
    assert requests == [
        "The median function returns the wrong value for lists with an even length.\n"
        "Please fix it and add a test.",
        "The mode function crashes on an empty list, make it raise ValueError instead.",
        "Rename `mode` to `most_common` everywhere.",
    ]
    host = [r for r in readings if r.extra.get("host_output") == "aider"]
    assert host and all(r.kind == "observation" for r in host)
    # sessions are all read; each begins with its start line
    starts = [r.text for r in host if r.text.startswith("aider chat started at")]
    assert starts[0].startswith("aider chat started at 2025-03-02 09:14:05\n")
    assert starts[1].startswith("aider chat started at 2025-03-03 16:40:12\n")
    # aider commands and what aider printed, one after another, are one output message
    assert any("\n/add src/stats.py tests/test_stats.py\nAdded src" in r.text for r in host)
    assert len(host) == 6
    # a multi-line output keeps its lines without '>'
    assert any("F401 'math' imported but unused\nimport math\n^" in r.text for r in host)


def test_edit_blocks_stay_in_the_reply_and_fences_hide_markers() -> None:
    messages = load_transcript(HISTORY)
    second = [m for m in messages if m["role"] == "assistant"][1]
    assert "<<<<<<< SEARCH\ndef mode(values):" in second["content"]
    assert "#### this line is inside a code block, not a user line" in second["content"]
    assert "> neither is this one" in second["content"]


def test_the_summary_facts_name_every_edited_file() -> None:
    facts = extract_facts(load_transcript(HISTORY))
    assert facts.modified_files() == ["src/stats.py", "tests/test_stats.py", "src/report.py"]


def test_edit_without_a_reply_gets_its_own_assistant_message() -> None:
    text = "# aider chat started at 2025-01-01 00:00:00\n\n#### /undo  \n> Applied edit to a.py  \n"
    messages = convert_aider(text)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    validate_transcript(messages)


def test_aider_lines_without_a_session_header_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("#### fix it  \n\nDone.\n\n> Applied edit to a.py  \n")
    with pytest.raises(TranscriptError, match="looks like an Aider chat history, but"):
        load_transcript(path)


def test_other_text_is_not_json_and_not_aider(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("just some notes\n")
    with pytest.raises(TranscriptError) as info:
        load_transcript(path)
    assert "invalid JSON at line 1" in str(info.value)
    assert "not JSON, JSONL, or an Aider chat history" in str(info.value)


_LINES = st.sampled_from(
    [
        "# aider chat started at 2025-01-01 00:00:00",
        "#### please fix it  ",
        "#### /add a.py  ",
        "#### <blank>  ",
        "> Applied edit to a.py  ",
        "> Applied edit to b/c.py  ",
        "> Tokens: 1k sent, 2 received.  ",
        "> Commit abc123 fix: thing  ",
        "a continuation line",
        "Here is the change:",
        "```python",
        "```",
        "<<<<<<< SEARCH",
        "=======",
        ">>>>>>> REPLACE",
        "",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_LINES, max_size=30))
def test_any_history_converts_to_a_valid_sequence(lines: list[str]) -> None:
    messages = convert_aider("# aider chat started at 2025-01-01 00:00:00\n" + "\n".join(lines))
    assert messages and all(m["role"] in ("user", "assistant", "tool") for m in messages)
    validate_transcript(messages)
    calls = sum(len(m.get("tool_calls", [])) for m in messages)
    assert calls == sum(m["role"] == "tool" for m in messages)
