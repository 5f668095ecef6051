"""Claude Code records that are not the person's ask: read as noise, summary or results."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from palimpsest.messages import read_transcript, read_transcript_file, validate_transcript
from palimpsest.messages.formats_claude import convert_claude_code
from palimpsest.messages.formats_common import Notes, Record

FIXTURE = Path(__file__).parent / "data" / "transcripts" / "fixtures"
NOT_REQUESTS = FIXTURE / "claude-code-not-requests.jsonl"


def raw_records() -> list[dict[str, object]]:
    out = []
    for line in NOT_REQUESTS.read_text().split("\n"):
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # the cut-off last line
    return out


def test_counts_match_the_raw_file() -> None:
    records = raw_records()
    main = [r for r in records if r.get("type") in ("user", "assistant") and not r["isSidechain"]]
    blocks = [
        b
        for r in main
        if isinstance(r["message"]["content"], list)  # type: ignore[index]
        for b in r["message"]["content"]  # type: ignore[index]
    ]
    loaded = read_transcript_file(NOT_REQUESTS)
    messages = loaded.messages
    counts = Counter(m["role"] for m in messages)
    assert counts["tool"] == sum(b["type"] == "tool_result" for b in blocks) == 3
    assert sum(len(m.get("tool_calls", [])) for m in messages) == 3
    assert counts["assistant"] == sum(r["type"] == "assistant" for r in main) == 4
    tool_result_only = sum(
        isinstance(r["message"]["content"], list)  # type: ignore[index]
        and all(b["type"] == "tool_result" for b in r["message"]["content"])  # type: ignore[index]
        for r in main
        if r["type"] == "user"
    )
    user_records = sum(r["type"] == "user" for r in main)
    assert counts["user"] == user_records - tool_result_only == 10
    assert loaded.notes == (
        "line 23 (the last line) is cut off (Unterminated string starting at, column 58); "
        "read the 22 lines before it",
        "skipped 1 record of a type this reader does not know: mystery-record x1",
    )
    validate_transcript(messages)


def test_only_the_real_asks_read_as_requests() -> None:
    messages = read_transcript_file(NOT_REQUESTS).messages
    readings = read_transcript(messages)
    assert [r.text for r in readings if r.kind == "request"] == [
        "The checkout page shows the wrong total when a coupon is applied. Find and fix it.",
        "Apply the coupon before tax, then rerun the tests.",
    ]
    noise = Counter(r.extra.get("noise") for r in readings if r.kind == "noise")
    assert noise == {
        "claude-code meta": 2,  # the caveat and the expanded skill (isMeta)
        "claude-code local command": 2,  # /model and /review wrappers
        "claude-code local command output": 1,
        "claude-code interruption": 2,
    }
    summaries = [r for r in readings if r.kind == "summary"]
    assert len(summaries) == 1 and summaries[0].extra["summary_source"] == "claude-code"


def test_a_compact_summary_is_a_summary_whatever_its_wording() -> None:
    line = {
        "type": "user",
        "isCompactSummary": True,
        "message": {"role": "user", "content": "Earlier: the user wanted retries."},
    }
    messages = convert_claude_code([Record("line 1", line)])
    assert read_transcript(messages)[0].kind == "summary"


def test_unknown_record_types_are_counted_not_refused() -> None:
    notes = Notes()
    records = [
        Record("line 1", {"type": "brand-new", "x": 1}),
        Record("line 2", {"type": "system", "subtype": "compact_boundary"}),
        Record("line 3", {"type": "user", "message": {"role": "user", "content": "hi"}}),
    ]
    assert convert_claude_code(records, notes) == [{"role": "user", "content": "hi"}]
    assert notes.skipped == {"brand-new": 1}


def test_the_summary_facts_quote_the_real_ask() -> None:
    from palimpsest.summarizers.facts import extract_facts

    facts = extract_facts(read_transcript_file(NOT_REQUESTS).messages)
    assert facts.newest_request == "Apply the coupon before tax, then rerun the tests."
