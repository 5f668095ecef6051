"""The per-session compression lock (AL-30, CC-116) on a real store file."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from agent_helpers import compressor, history, make_agent
from palimpsest.agent.events import CompactionEvent
from palimpsest.agent.lock import (
    busy_message,
    holder_id,
    release_compression_lock,
    take_compression_lock,
)
from palimpsest.storage.sessions import SessionStore


def test_one_holder_at_a_time(tmp_path: Path):
    store = SessionStore(tmp_path / "s.db")
    assert take_compression_lock(store, "s1", "a") is None
    assert take_compression_lock(store, "s1", "a") is None  # re-entrant for the holder
    assert take_compression_lock(store, "s1", "b") == "a"
    assert take_compression_lock(store, "s2", "b") is None  # per session
    release_compression_lock(store, "s1", "b")  # not ours: nothing happens
    assert take_compression_lock(store, "s1", "b") == "a"
    release_compression_lock(store, "s1", "a")
    assert take_compression_lock(store, "s1", "b") is None


def test_expired_and_dead_holders_are_taken_over(tmp_path: Path):
    store = SessionStore(tmp_path / "s.db")
    assert take_compression_lock(store, "s", "old", lease=10, clock=lambda: 100.0) is None
    assert take_compression_lock(store, "s", "new", clock=lambda: 105.0) == "old"
    assert take_compression_lock(store, "s", "new", clock=lambda: 111.0) is None
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = f"{socket.gethostname()}:{gone.stdout.strip()}:1"
    assert take_compression_lock(store, "d", dead) is None
    assert take_compression_lock(store, "d", "me") is None  # the holder process is gone
    alive = holder_id()
    assert take_compression_lock(store, "e", alive) is None
    assert take_compression_lock(store, "e", "me") == alive


def test_a_held_lock_stops_manual_and_automatic_compaction(tmp_path: Path):
    agent = make_agent(
        tmp_path,
        ["ok"],
        messages=history(14, chars=1_200),
        compressor=compressor(8_000),
        context_length=None,
    )
    assert agent.store is not None and agent.session_id is not None
    assert take_compression_lock(agent.store, agent.session_id, "other:1:1") is None
    result = agent.command("/compress")
    assert result is not None and result.text == busy_message("other:1:1")
    assert agent.model.calls == [] and agent.compressor.compression_count == 0  # type: ignore[attr-defined]
    events = list(agent.run("continue"))
    skipped = [e for e in events if isinstance(e, CompactionEvent)]
    assert skipped and not any(e.compacted for e in skipped)
    assert events[-1].text == "ok"  # type: ignore[union-attr]
    release_compression_lock(agent.store, agent.session_id, "other:1:1")
    assert agent.compress().compacted
    assert "holder unknown" not in busy_message(None) and "try again" in busy_message(None)
