"""Retention: age, size budget, live outputs never collected, and what counts as live."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from palimpsest.config import OutputsSettings, Settings
from palimpsest.outputs.retention import (
    TMP_MAX_AGE_SECONDS,
    RetentionPolicy,
    live_digests,
    open_messages_sql,
)
from palimpsest.outputs.store import OutputStore
from palimpsest.storage.sessions import SessionStore

DAY = 86_400.0
NOW = 2_000_000_000.0


@pytest.fixture
def store(tmp_path: Path) -> OutputStore:
    return OutputStore(tmp_path / "outputs")


def aged(store: OutputStore, text: str, days_ago: float, **options: object) -> str:
    found = store.put_text(text, **options)  # type: ignore[arg-type]
    store.index.write(
        lambda con: con.execute(
            "UPDATE objects SET last_used = ? WHERE digest = ?",
            (NOW - days_ago * DAY, found.digest),
        )
    )
    return found.digest


def test_policy_validates_and_reads_settings() -> None:
    with pytest.raises(ValueError):
        RetentionPolicy(0, 1.0)
    with pytest.raises(ValueError):
        RetentionPolicy(1, 0.0)
    default = RetentionPolicy.from_settings()
    assert default == RetentionPolicy(2048 * 1024 * 1024, 30 * DAY)
    settings = Settings(outputs=OutputsSettings(max_total_mb=1.5, max_age_days=2))
    assert RetentionPolicy.from_settings(settings) == RetentionPolicy(1572864, 2 * DAY)
    assert RetentionPolicy.from_settings(settings.outputs, max_age_days=1).max_age_seconds == DAY


def test_gc_on_a_store_never_written_creates_nothing(store: OutputStore) -> None:
    report = store.gc(RetentionPolicy(1, 1.0))
    assert report.removed_count == 0 and not store.root.exists()


def test_old_outputs_go_first_then_the_least_recently_used(store: OutputStore) -> None:
    old = aged(store, "o" * 1000, days_ago=40)
    lru = aged(store, "l" * 1000, days_ago=5)
    mid = aged(store, "m" * 1000, days_ago=3)
    new = aged(store, "n" * 1000, days_ago=1)
    report = store.gc(RetentionPolicy(2000, 30 * DAY), now=NOW)
    assert report.removed == (old, lru)
    assert (report.removed_count, report.removed_bytes) == (2, 2000)
    assert (report.remaining_count, report.remaining_bytes) == (2, 2000)
    assert {f.digest for f in store.scan_objects()} == {mid, new}
    assert {o.digest for o in store.list()} == {mid, new}


def test_live_outputs_are_never_removed_and_the_overrun_is_reported(store: OutputStore) -> None:
    live_old = aged(store, "a" * 3000, days_ago=400)
    dead = aged(store, "b" * 100, days_ago=400)
    report = store.gc(RetentionPolicy(1000, DAY), live={live_old}, now=NOW)
    assert report.removed == (dead,)
    assert (report.kept_live_count, report.kept_live_bytes) == (1, 3000)
    assert report.over_budget_live and report.remaining_bytes == 3000
    assert store.resolve(live_old) is not None


def test_dry_run_removes_nothing(store: OutputStore) -> None:
    digest = aged(store, "x", days_ago=100)
    stale = store.root / "tmp" / "put-dead.part"
    stale.write_bytes(b"half")
    os.utime(stale, (NOW - 2 * TMP_MAX_AGE_SECONDS,) * 2)
    report = store.gc(RetentionPolicy(10**9, DAY), now=NOW, dry_run=True)
    assert report.dry_run and report.removed == (digest,) and report.temp_files_removed == 1
    assert store.resolve(digest) is not None and stale.exists()


def test_temp_files_missing_files_and_orphans(store: OutputStore) -> None:
    gone = store.put_text("gone\n")
    gone.path.unlink()
    orphan = store.put_text("orphan\n")
    store.index.write(lambda con: store.index.delete(con, [orphan.digest]))
    stale = store.root / "tmp" / "put-dead.part"
    fresh = store.root / "tmp" / "put-busy.part"
    stale.write_bytes(b"half")
    fresh.write_bytes(b"streaming")
    now = time.time()
    os.utime(stale, (now - TMP_MAX_AGE_SECONDS - 60,) * 2)
    report = store.gc(RetentionPolicy(10**9, 30 * DAY), now=now)
    assert (report.temp_files_removed, report.missing_rows_removed, report.adopted) == (1, 1, 1)
    assert not stale.exists() and fresh.exists()
    assert [o.digest for o in store.list()] == [orphan.digest]


def test_open_messages_sql_runs_and_only_reads_open_sessions() -> None:
    sql = open_messages_sql()
    assert "s.ended_at IS NULL" in sql and "GLOB :hex" in sql


@pytest.fixture
def sessions(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "state.db")


def test_a_reference_from_an_open_session_is_live(
    sessions: SessionStore, store: OutputStore
) -> None:
    sessions.create_session("open", "cli")
    sessions.create_session("closed", "cli")
    sessions.end_session("closed", "user_exit")
    held = store.put_text("held\n", session_id="open", call_id="c1")
    dropped = store.put_text("dropped\n", session_id="closed")
    store.put_text("loose\n")
    assert live_digests(sessions, store) == {held.digest}
    assert dropped.digest not in live_digests(sessions, store)


def test_a_path_mentioned_only_in_a_continuation_is_live(
    sessions: SessionStore, store: OutputStore
) -> None:
    saved = store.put_text("big test log\n", session_id="parent")
    mentioned_as_digest = store.put_text("other\n")
    block = f"<persisted-output>\nFull output saved to: {saved.path}\n</persisted-output>"
    sessions.create_session("parent", "cli")
    sessions.append_message("parent", "tool", block, tool_call_id="c1")
    assert live_digests(sessions, store) == {saved.digest}
    # Compaction ends the parent; the kept tail (with the path) moves to the continuation,
    # here as list content, which the store keeps as JSON text.
    sessions.start_continuation(
        "parent",
        session_id="child",
        messages=[{"role": "user", "content": [{"type": "text", "text": block}]}],
    )
    sessions.append_message("child", "assistant", f"see {mentioned_as_digest.digest.upper()}")
    assert live_digests(sessions, store) == {saved.digest, mentioned_as_digest.digest}
    sessions.end_session("child", "user_exit")
    assert live_digests(sessions, store) == set()


def test_a_digest_in_tool_call_arguments_is_live(
    sessions: SessionStore, store: OutputStore
) -> None:
    saved = store.put_text("log\n")
    sessions.create_session("s", "cli")
    call = {"id": "c1", "type": "function",
            "function": {"name": "read_output", "arguments": json.dumps({"name": saved.digest})}}  # fmt: skip
    sessions.append_message("s", "assistant", None, tool_calls=[call])
    assert live_digests(sessions, store) == {saved.digest}
