"""The draft merges the span's facts with the previous summary before anything is cut."""

from __future__ import annotations

import json
from typing import Any

from palimpsest.messages.reading import read_transcript
from palimpsest.summarizers.draft import MAX_NAMES, NAMES_LABEL, build_draft
from palimpsest.summarizers.facts import extract_facts
from palimpsest.summarizers.previous import parse_previous


def _facts(turns: list[dict[str, Any]]) -> Any:
    return extract_facts(turns, read_transcript(turns), None)


def _call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


TURNS = [
    {"role": "user", "content": "Fix parse_config in settings.py. Always keep the tests green."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [_call("c1", "bash", command="pytest -q")],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "FAILED test_parse_config\nexit code 1"},
    {"role": "assistant", "content": "I decided to rewrite parse_config instead of patching it."},
]


def test_a_first_draft_holds_the_span_alone() -> None:
    draft = build_draft(_facts(TURNS), parse_previous(None), None, None)
    assert draft.ask is not None and "parse_config" in draft.ask
    assert draft.goal == draft.ask  # no previous goal: the first request
    assert [e.action.verb for e in draft.entries if e.action] == ["RUN"]
    assert draft.entries[0].informative  # a failed run is worth keeping
    assert "parse_config" in draft.names
    assert any("pytest" in b for b in draft.blocked)
    assert any("Still failing" in r for r in draft.remaining)


def test_an_update_carries_the_previous_summary_over() -> None:
    previous = (
        "## Goal\nShip v2\n\n## Completed Actions\n1. EDIT a.py — ok [tool: edit]\n\n"
        "## Key Decisions\n- Use SQLite\n\n"
        f"## Critical Context\n- {NAMES_LABEL} `OldName`, `parse_config`\n"
    )
    draft = build_draft(_facts(TURNS), parse_previous(previous), None, None)
    assert draft.goal == "Ship v2"
    assert draft.entries[0].raw == "EDIT a.py — ok [tool: edit]"
    assert draft.entries[0].written
    assert draft.decisions[0] == "Use SQLite"
    assert draft.names.count("parse_config") == 1  # the span's own first, each once
    assert draft.names[-1] == "OldName"
    assert len(draft.names) <= MAX_NAMES
    assert not any(item.startswith(NAMES_LABEL) for item in draft.critical)


def test_focus_items_come_first() -> None:
    facts = _facts(TURNS)
    draft = build_draft(facts, parse_previous("## Key Decisions\n- Use SQLite"), "rewrite", None)
    assert draft.focus == ["rewrite"]
    assert "rewrite" in draft.decisions[0]
