"""Codex rollouts: unknown line and item types are counted, a cut-off last line is left out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from palimpsest.messages import read_transcript_file, validate_transcript
from palimpsest.messages.formats_codex import convert_codex
from palimpsest.messages.formats_common import ConversionError, Notes, Record

FIXTURE = Path(__file__).parent / "data" / "transcripts" / "fixtures"
ROLLOUT = FIXTURE / "codex-unknown-and-cut-off.jsonl"


def test_counts_match_the_raw_file_and_the_notes_say_what_was_left_out() -> None:
    raw = []
    for line in ROLLOUT.read_text().split("\n"):
        try:
            raw.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    items = [r["payload"] for r in raw if r["type"] == "response_item"]
    loaded = read_transcript_file(ROLLOUT)
    messages = loaded.messages
    assert loaded.format == "codex"
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert sum(len(m.get("tool_calls", [])) for m in messages) == sum(
        i["type"] == "function_call" for i in items
    )
    assert loaded.notes == (
        "line 10 (the last line) is cut off (Unterminated string starting at, column 64); "
        "read the 9 lines before it",
        "skipped 2 records of a type this reader does not know: item ghost_snapshot x1, "
        "line turn_diff x1",
    )
    validate_transcript(messages)


def test_without_notes_an_unknown_item_is_still_refused() -> None:
    # convert_codex(records) keeps its old contract for callers that pass no notes
    record = Record("line 1", {"type": "response_item", "payload": {"type": "new_kind"}})
    with pytest.raises(ConversionError, match="line 1: unsupported Codex item type 'new_kind'"):
        convert_codex([record])
    notes = Notes()
    assert convert_codex([record], notes) == []
    assert notes.skipped == {"item new_kind": 1}
