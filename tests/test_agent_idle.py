"""Idle compaction through the real loop: a resumed, idle, large session compacts first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apsw

from agent_helpers import answer, history, make_agent
from palimpsest import ScriptedChatModel
from palimpsest.agent.events import CompactionEvent
from palimpsest.agent.loop import Agent
from palimpsest.config import settings_from_dict
from palimpsest.storage.sessions import SessionStore

IDLE = settings_from_dict({"compression": {"idle_minutes": 60, "idle_min_share": 0.5}})


def _age(db: Path, session_id: str, seconds: float) -> None:
    """Make the session's stored messages ``seconds`` older (as if written back then)."""
    con = apsw.Connection(str(db))
    con.execute(
        "UPDATE messages SET timestamp = timestamp - ? WHERE session_id = ?", (seconds, session_id)
    )
    con.close()


def _resume(tmp_path: Path, messages: list[dict[str, Any]], idle_seconds: float) -> Agent:
    """A stored session ``idle_seconds`` old, resumed by a new agent on the same file."""
    db = tmp_path / "state.db"
    store = SessionStore(db)
    sid = store.create_session(source="cli", model="scripted")
    store.append_messages(sid, messages)
    _age(db, sid, idle_seconds)
    model = ScriptedChatModel([answer("welcome back")])
    return Agent(model, store=store, session_id=sid, context_length=40_000, settings=IDLE)


def _compactions(events: list[Any]) -> list[CompactionEvent]:
    return [e for e in events if isinstance(e, CompactionEvent)]


def test_idle_compaction_fires_on_a_large_resumed_session(tmp_path: Path) -> None:
    agent = _resume(tmp_path, history(20, chars=1_800), idle_seconds=2 * 3600)
    assert agent.estimate_request() < agent.compressor.threshold_tokens  # no preflight due
    before = len(agent.messages)
    events = list(agent.run("where were we?"))
    found = _compactions(events)
    assert [(e.path, e.compacted) for e in found] == [("idle", True)]
    assert found[0].reason is not None and "idle for 120 minutes" in found[0].reason
    first_request = agent.model.calls[0][0]  # type: ignore[attr-defined]
    assert len(first_request) < before  # compacted before the first model call
    assert first_request[-1]["content"] == "where were we?"


def test_a_small_idle_session_is_left_alone(tmp_path: Path) -> None:
    agent = _resume(tmp_path, history(3), idle_seconds=2 * 3600)
    events = list(agent.run("where were we?"))
    assert _compactions(events) == []
    assert len(agent.model.calls[0][0]) == 1 + 6 + 1  # type: ignore[attr-defined]


def test_a_large_session_not_idle_long_enough_is_left_alone(tmp_path: Path) -> None:
    agent = _resume(tmp_path, history(20, chars=1_800), idle_seconds=30 * 60)
    assert _compactions(list(agent.run("where were we?"))) == []


def test_a_live_agent_left_idle_compacts_on_its_next_turn(tmp_path: Path) -> None:
    model = ScriptedChatModel([answer("first"), answer("second")])
    agent = make_agent(
        tmp_path,
        messages=history(20, chars=1_800),
        model=model,
        context_length=40_000,
        settings=IDLE,
    )
    assert _compactions(list(agent.run("one"))) == []  # just stored: not idle
    assert agent.store is not None and agent.session_id is not None
    _age(tmp_path / "state.db", agent.session_id, 3 * 3600)
    assert [e.path for e in _compactions(list(agent.run("two")))] == ["idle"]
