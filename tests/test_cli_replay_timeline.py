"""The replay's records: what a compaction line says, and library logs kept in the timeline."""

from __future__ import annotations

import io
import json
import logging

import pytest
from rich.console import Console

from palimpsest.agent.events import CompactionEvent
from palimpsest.cli.replay_timeline import Timeline, compaction_record, count_text, routed_logs


def event(**overrides: object) -> CompactionEvent:
    fields: dict[str, object] = {
        "path": "preflight",
        "before_messages": 120,
        "after_messages": 20,
        "before_tokens": 90_000,
        "after_tokens": 12_000,
        "compacted": True,
        "session_id": "s2",
        "parent_session_id": "s1",
        "seconds": 0.25,
    }
    fields.update(overrides)
    return CompactionEvent(**fields)  # type: ignore[arg-type]


def test_a_rotation_names_the_continuation_and_its_parent() -> None:
    record, text = compaction_record(3, event(mode="rotation"))
    assert record["messages_removed"] == 100 and record["mode"] == "rotation"
    assert "(preflight, rotation): 120 → 20 messages (100 removed)" in text
    assert "continues in s2 (parent s1)" in text


def test_in_place_says_the_session_is_kept() -> None:
    _, text = compaction_record(3, event(mode="in_place", session_id="s1"))
    assert "(preflight, in place)" in text
    assert "stays in s1 (earlier messages archived in it)" in text


def test_nothing_compacted_gives_the_reason_redacted() -> None:
    record, text = compaction_record(
        1, event(compacted=False, reason="summary failed: key sk-proj-abcdefghijklmnop1234567890")
    )
    assert "did not compact" in text and "abcdefghijklmnop1234567890" not in text
    assert "messages_removed" not in record


def test_count_text_pluralises() -> None:
    assert (count_text(1, "turn"), count_text(1_200, "turn")) == ("1 turn", "1,200 turns")


@pytest.mark.parametrize("as_json", [True, False])
def test_library_logs_become_timeline_records_not_stderr(
    as_json: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    out = io.StringIO()
    timeline = Timeline(Console(file=out, width=200), as_json=as_json)
    with routed_logs(timeline, verbose=False):
        logging.getLogger("palimpsest.compaction").warning("need > 7 (token=%s)", "hunter2abcXYZ")
    assert capsys.readouterr().err == ""
    assert timeline.records[0]["event"] == "log" and timeline.records[0]["level"] == "warning"
    if as_json:
        assert json.loads(out.getvalue())["message"].startswith("need > 7")
    else:
        assert out.getvalue() == ""  # text lines only with --verbose
