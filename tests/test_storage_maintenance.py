"""Index upkeep off the write path: bounded merge steps, incremental optimize, WAL truncation.

``verify`` has its own tests beside the schema (tests/test_storage_schema.py); these cover
:func:`palimpsest.storage.maintenance.maintain` on real store files.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from palimpsest.storage.maintenance import MaintenanceReport, maintain, merge_step
from palimpsest.storage.sessions import SessionStore

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
]


def _fill(store: SessionStore, appends: int) -> None:
    """``appends`` single-message transactions: one new FTS5 segment each."""
    store.create_session("s1")
    for i in range(appends):
        text = f"{WORDS[i % len(WORDS)]} note {i} about {WORDS[(i * 7) % len(WORDS)]}"
        store.append_message("s1", "user", text)


def _data_rows(store: SessionStore) -> int:
    return int(store.database.scalar("SELECT count(*) FROM messages_fts_data"))


def _hits(store: SessionStore, query: str) -> list[int]:
    return sorted(h["id"] for h in store.search_messages(query, limit=500))


@pytest.fixture(params=["inline", "external"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> SessionStore:
    # No background upkeep: these tests count the merge steps maintain() itself takes.
    s = SessionStore(tmp_path / "state.db", fts_layout=request.param, background_upkeep=False)
    request.addfinalizer(s.close)
    return s


def test_optimize_merges_segments_and_keeps_every_answer(store: SessionStore) -> None:
    _fill(store, 300)
    before = {w: _hits(store, w) for w in WORDS[:4]}
    rows_before = _data_rows(store)
    report = maintain(store.database, optimize=True, step_pages=8)
    assert report.finished and report.optimized
    assert report.merge_steps["messages_fts"] >= 1
    assert _data_rows(store) < rows_before
    assert {w: _hits(store, w) for w in WORDS[:4]} == before
    assert all(before.values())
    assert store.verify() == []
    # A single segment is left: the next optimize has nothing to merge.
    again = maintain(store.database, optimize=True)
    assert again.merge_steps["messages_fts"] == 0


def test_merge_step_reports_whether_it_merged(store: SessionStore) -> None:
    _fill(store, 60)

    def step(pages: int) -> bool:
        return store.database.write(lambda con: merge_step(con, table="messages_fts", pages=pages))

    assert step(-64) is True
    while step(-64):
        pass
    assert step(-64) is False
    assert step(64) is False


def test_budget_stops_merging_and_says_so(store: SessionStore) -> None:
    _fill(store, 100)
    report = maintain(store.database, optimize=True, budget_seconds=0)
    assert report.finished is False and report.optimized is False
    assert report.merge_steps == {"messages_fts": 0, "messages_fts_trigram": 0}
    assert maintain(store.database, optimize=True).finished


def test_budget_is_checked_between_steps(store: SessionStore) -> None:
    """A clock that advances one second per reading: a 1.5 s budget allows one step."""
    _fill(store, 200)
    ticks = iter(range(1000))
    report = maintain(
        store.database,
        optimize=True,
        step_pages=1,
        budget_seconds=1.5,
        clock=lambda: float(next(ticks)),
    )
    assert report.finished is False
    assert report.merge_steps == {"messages_fts": 1, "messages_fts_trigram": 0}
    assert maintain(store.database, optimize=True).finished


def test_wal_is_truncated(store: SessionStore) -> None:
    _fill(store, 40)
    wal = Path(f"{store.path}-wal")
    assert wal.exists() and wal.stat().st_size > 0
    report = maintain(store.database)
    assert report.checkpointed
    assert report.wal_bytes_before is not None and report.wal_bytes_before > 0
    assert report.wal_bytes_after == 0 == os.stat(wal).st_size


def test_report_is_plain_data(store: SessionStore) -> None:
    report = maintain(store.database)
    data = report.as_dict()
    assert isinstance(report, MaintenanceReport)
    assert set(data) == {
        "merge_steps",
        "optimized",
        "finished",
        "secrets_kept",
        "checkpointed",
        "wal_bytes_before",
        "wal_bytes_after",
        "seconds",
    }
    assert data["seconds"] >= 0


def test_appends_still_land_between_steps(store: SessionStore, tmp_path: Path) -> None:
    """A second store on the same file appends while merging is pending; nothing is lost."""
    _fill(store, 120)
    other = SessionStore(store.path)
    try:
        ticks = iter(range(1000))

        def clock() -> float:
            # every reading of the clock, append one message from the other connection
            n = next(ticks)
            other.append_message("s1", "assistant", f"between steps {n} omega")
            return 0.0

        report = maintain(store.database, optimize=True, step_pages=4, clock=clock)
        assert report.finished
        stored = store.message_count("s1")
        assert stored == 120 + next(ticks)
        assert len(_hits(store, "omega")) == stored - 120
        assert store.verify() == []
    finally:
        other.close()


def test_rejects_a_step_below_one_page(store: SessionStore) -> None:
    with pytest.raises(ValueError, match="step_pages"):
        maintain(store.database, step_pages=0)
