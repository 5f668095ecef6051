"""The store's background upkeep (:mod:`palimpsest.storage.upkeep`) on real store files.

It must start only after some writes, merge the full-text indexes without losing or
changing an answer, keep the WAL bounded when nobody runs ``maintain`` (SQLite's own
autocheckpoint is off while it runs), and stop with the store.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from palimpsest.storage.db import DEFAULT_WAL_AUTOCHECKPOINT
from palimpsest.storage.fts_layout import (
    IDLE_CRISIS_MERGE,
    TRIGRAM_TABLE,
    WORD_TABLE,
    set_crisis_merge,
)
from palimpsest.storage.sessions import SessionStore
from palimpsest.storage.upkeep import BackgroundUpkeep, UpkeepPolicy

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]


def _wal_bytes(path: Path) -> int:
    try:
        return os.stat(f"{path}-wal").st_size
    except FileNotFoundError:
        return 0


def _append(store: SessionStore, sid: str, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        text = f"{WORDS[i % len(WORDS)]} note {i} about {WORDS[(i * 7) % len(WORDS)]}"
        store.append_message(sid, "user", text)


def _data_rows(store: SessionStore) -> int:
    return int(store.database.scalar("SELECT count(*) FROM messages_fts_data"))


def test_the_thread_starts_after_enough_writes_and_stops_on_close(tmp_path: Path) -> None:
    policy = UpkeepPolicy(start_after_writes=20, start_after_seconds=3600)
    store = SessionStore(tmp_path / "s.db", upkeep_policy=policy)
    upkeep = store.upkeep
    assert upkeep is not None and not upkeep.running
    sid = store.create_session()  # write 1
    _append(store, sid, 18)  # writes 2..19
    assert not upkeep.running
    _append(store, sid, 1, start=18)  # write 20
    assert upkeep.running
    con = store.database.writer
    assert con.execute("PRAGMA wal_autocheckpoint").fetchall()[0][0] == 0
    thread = upkeep._thread
    store.close()
    assert thread is not None and not thread.is_alive() and not upkeep.running


def test_a_short_lived_store_never_starts_a_thread(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        sid = store.create_session()
        _append(store, sid, 5)
        assert store.upkeep is not None and not store.upkeep.running
    with SessionStore(tmp_path / "s.db", background_upkeep=False) as store:
        assert store.upkeep is None
        _append(store, sid, 100)
        assert store.message_count() == 105


def test_it_merges_segments_and_every_answer_stays_the_same(tmp_path: Path) -> None:
    plain = SessionStore(tmp_path / "plain.db", background_upkeep=False)
    kept = SessionStore(tmp_path / "kept.db", upkeep_policy=UpkeepPolicy(start_after_writes=1))
    try:
        for store in (plain, kept):
            sid = store.create_session("s1")
            _append(store, sid, 400)
        assert kept.upkeep is not None and kept.upkeep.wait_idle(30)
        assert kept.upkeep.stats.merge_steps > 0 and kept.upkeep.stats.errors == 0
        # Merged: fewer, fuller index pages for the same rows.
        assert _data_rows(kept) < _data_rows(plain)
        for word in WORDS:
            want = sorted(h["id"] for h in plain.search_messages(word, limit=500))
            assert sorted(h["id"] for h in kept.search_messages(word, limit=500)) == want
            assert len(want) > 0
        assert kept.verify() == []
    finally:
        plain.close()
        kept.close()


def test_the_wal_stays_bounded_over_50000_appends_without_maintain(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    policy = UpkeepPolicy(wal_checkpoint_bytes=1 << 20, wal_hard_bytes=8 << 20)
    largest = 0
    with SessionStore(path, upkeep_policy=policy) as store:
        sid = store.create_session()
        for i in range(50_000):
            store.append_message(sid, "user", f"{WORDS[i % len(WORDS)]} turn {i} of the long run")
            if i % 250 == 0:
                largest = max(largest, _wal_bytes(path))
        assert store.upkeep is not None
        stats = store.upkeep.stats
        assert stats.checkpoints > 0 and stats.errors == 0
        assert store.message_count(sid) == 50_000
    # Without checkpoints these appends leave a WAL of hundreds of MB; the hard bound is
    # 8 MiB, plus what arrives while one checkpoint runs.
    assert largest < 16 << 20, largest


def test_stop_gives_sqlite_its_autocheckpoint_back(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SessionStore(path, background_upkeep=False) as store:
        upkeep = BackgroundUpkeep(store.database, UpkeepPolicy(start_after_writes=1))
        upkeep.attach()
        store.create_session("s1")
        assert upkeep.running
        upkeep.stop()
        assert not upkeep.running
        # wal_autocheckpoint() returns nothing; the pragma reads the current value.
        con = store.database.writer
        assert con.execute("PRAGMA wal_autocheckpoint").fetchall()[0][0] == (
            DEFAULT_WAL_AUTOCHECKPOINT
        )
        upkeep.start()  # a stopped upkeep never starts again
        assert not upkeep.running


def _crisis(store: SessionStore) -> list[int]:
    return [
        int(store.database.scalar(f"SELECT v FROM {t}_config WHERE k = 'crisismerge'"))
        for t in (WORD_TABLE, TRIGRAM_TABLE)
    ]


def test_crisis_merges_are_raised_while_the_thread_runs_and_put_back_on_close(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    policy = UpkeepPolicy(start_after_writes=1, crisis_segments=300)
    store = SessionStore(path, upkeep_policy=policy)
    assert _crisis(store) == [IDLE_CRISIS_MERGE] * 2
    sid = store.create_session()
    _append(store, sid, 50)
    assert store.upkeep is not None and store.upkeep.wait_idle(30)
    assert _crisis(store) == [300, 300]
    store.close()
    with SessionStore(path, background_upkeep=False) as reopened:
        assert _crisis(reopened) == [IDLE_CRISIS_MERGE] * 2


def test_a_raised_bound_left_by_a_killed_process_is_put_back(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SessionStore(path, background_upkeep=False) as store:
        sid = store.create_session()
        # What a process killed while its thread ran leaves in the file.
        store.database.write(
            lambda con: [set_crisis_merge(con, t, 256) for t in (WORD_TABLE, TRIGRAM_TABLE)]
        )
    with SessionStore(path, upkeep_policy=UpkeepPolicy(start_after_writes=1)) as store:
        _append(store, sid, 5)
        assert store.upkeep is not None and store.upkeep.wait_idle(30)
        assert _crisis(store) == [256, 256]
        # Another process's store stopping puts 16 back; this thread raises it again
        # when it next goes idle.
        store.database.write(lambda con: set_crisis_merge(con, WORD_TABLE, IDLE_CRISIS_MERGE))
        _append(store, sid, 40, start=5)
        assert store.upkeep.wait_idle(30) and store.upkeep.wait_idle(30)
        assert _crisis(store) == [256, 256]
    with SessionStore(path, background_upkeep=False) as store:
        assert _crisis(store) == [IDLE_CRISIS_MERGE] * 2


def test_bulk_appends_merge_too_only_while_the_thread_is_behind(tmp_path: Path) -> None:
    # The thread sleeps until told (no idle wake-ups), so the test alone decides "behind".
    policy = UpkeepPolicy(
        start_after_writes=1, bulk_messages=10, idle_seconds=3600, wake_every_writes=10_000
    )
    with SessionStore(tmp_path / "s.db", upkeep_policy=policy) as store:
        sid = store.create_session()
        upkeep = store.upkeep
        assert upkeep is not None and upkeep.wait_idle(30)
        assert not upkeep.behind

        def bulk(n: int, start: int) -> None:
            store.append_messages(
                sid,
                [{"role": "user", "content": f"bulk deploy note {start + i}"} for i in range(n)],
            )

        bulk(20, 0)
        assert upkeep.stats.shared_merges == 0  # not behind: the thread merges alone
        # Behind: merging without a break for longer than behind_seconds.
        upkeep._busy_since = time.monotonic() - policy.behind_seconds - 1
        assert upkeep.behind
        bulk(9, 100)  # under bulk_messages: a turn never pays
        store.append_message(sid, "user", "one more deploy turn")
        assert upkeep.stats.shared_merges == 0
        bulk(20, 200)
        assert upkeep.stats.shared_merges == 1
        assert store.verify() == []
        assert len(store.search_messages("deploy", limit=100)) == 50


def test_policy_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        UpkeepPolicy(bulk_messages=1)
    with pytest.raises(ValueError):
        UpkeepPolicy(crisis_segments=8)
    with pytest.raises(ValueError):
        UpkeepPolicy(crisis_segments=2001)
    with pytest.raises(ValueError):
        UpkeepPolicy(step_pages=0)
    with pytest.raises(ValueError):
        UpkeepPolicy(wal_checkpoint_bytes=10, wal_hard_bytes=5)


def test_appends_wait_at_most_about_one_step(tmp_path: Path) -> None:
    policy = UpkeepPolicy(start_after_writes=1)
    with SessionStore(tmp_path / "s.db", upkeep_policy=policy) as store:
        sid = store.create_session()
        worst = 0.0
        for i in range(3000):
            t0 = time.perf_counter()
            store.append_message(sid, "user", f"{WORDS[i % len(WORDS)]} turn {i}")
            worst = max(worst, time.perf_counter() - t0)
        assert store.upkeep is not None and store.upkeep.stats.merge_steps > 0
        # Generous for a loaded CI machine; an in-write merge of 64 pages per level or a
        # checkpoint would show as a much longer spike only at scale (see benchmarks).
        assert worst < 0.5, worst


def test_a_starved_thread_hands_the_wal_bound_to_the_writer(tmp_path: Path) -> None:
    """The thread is started but never scheduled (its wake-ups go nowhere): the WAL must
    still stop growing, because the writer's own autocheckpoint comes back past the hard
    size, and go off again once a checkpoint has reset the file."""
    path = tmp_path / "s.db"
    policy = UpkeepPolicy(wal_checkpoint_bytes=1 << 20, wal_hard_bytes=2 << 20)
    with SessionStore(path, background_upkeep=False) as store:
        upkeep = BackgroundUpkeep(store.database, policy)
        upkeep.attach()
        store.database.set_wal_autocheckpoint(0)  # what start() does before its thread runs
        upkeep._thread = threading.Thread(target=lambda: None)  # started, never runs a step
        sid = store.create_session()
        largest = 0
        for i in range(6_000):
            store.append_message(sid, "user", f"{WORDS[i % len(WORDS)]} turn {i} " + "x" * 400)
            largest = max(largest, _wal_bytes(path))
        assert upkeep.stats.writer_backstops >= 1
        assert upkeep.stats.checkpoints == 0  # the thread itself did nothing
        # hard size plus one autocheckpoint interval of SQLite (1000 pages of 4 KiB)
        assert largest < (2 << 20) + 1000 * 4096 + (1 << 20), largest
        upkeep._thread = None
        upkeep.stop()
