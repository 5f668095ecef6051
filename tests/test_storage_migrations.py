"""The migration registry and the migrations that change stored data, on files written by
older versions (tests/data/stores)."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from palimpsest.storage import fts_layout, migrations
from palimpsest.storage.sessions import SessionStore


def test_a_second_migration_with_a_taken_name_is_refused() -> None:
    def m001_initial(con: apsw.Connection) -> None:  # same name as the first migration
        raise AssertionError("never run")

    with pytest.raises(ValueError, match="duplicate migration name 'm001_initial'"):
        migrations.migration(m001_initial)
    assert migrations.MIGRATIONS["m001_initial"] is not m001_initial


def test_each_migration_applies_once_and_the_version_follows() -> None:
    con = apsw.Connection(":memory:")
    assert migrations.schema_version(con) == 0
    assert migrations.pending_migrations(con) == list(migrations.MIGRATIONS)
    first = next(iter(migrations.MIGRATIONS))
    assert migrations.apply_migration(con, name=first) is True
    assert migrations.apply_migration(con, name=first) is False
    assert migrations.applied_migrations(con) == [first]
    assert migrations.schema_version(con) == 1
    for name in migrations.pending_migrations(con):
        migrations.apply_migration(con, name=name)
    assert migrations.schema_version(con) == len(migrations.MIGRATIONS)
    assert migrations.pending_migrations(con) == []


def test_m008_counts_unreported_calls_on_a_store_written_before_it(tmp_path: Path) -> None:
    """A schema-6 file (main at e97dec0) gains ``unreported_calls`` = 0 and keeps its
    counters; an unreported call then adds one call and no tokens."""
    path = tmp_path / "state.db"
    path.write_bytes(
        (Path(__file__).parent / "data" / "stores" / "state_v6_inline.db").read_bytes()
    )
    before = apsw.Connection(str(path))
    old = {
        r[0]: r[1:] for r in before.execute("SELECT id, input_tokens, api_call_count FROM sessions")
    }
    before.close()
    assert old
    with SessionStore(path) as store:
        assert store.schema_version == len(migrations.MIGRATIONS)
        sid = next(iter(old))
        row = store.get_session(sid)
        assert row is not None and row["unreported_calls"] == 0
        assert (row["input_tokens"], row["api_call_count"]) == old[sid]
        store.record_usage(sid, None)
        row = store.get_session(sid)
    assert row is not None
    assert row["unreported_calls"] == 1 and row["api_call_count"] == (old[sid][1] or 0) + 1
    assert row["input_tokens"] == old[sid][0]


def test_m009_adds_history_imports_to_a_store_written_before_it(tmp_path: Path) -> None:
    """A schema-6 file gains the ``history_imports`` table, empty, and keeps its sessions."""
    path = tmp_path / "state.db"
    path.write_bytes(
        (Path(__file__).parent / "data" / "stores" / "state_v6_inline.db").read_bytes()
    )
    with SessionStore(path) as store:
        before = store.session_count()
        assert store.schema_version == len(migrations.MIGRATIONS)
        with store.connection_for_reads() as con:
            assert fts_layout.table_exists(con, "history_imports")
            columns = [row[1] for row in con.execute("PRAGMA table_info(history_imports)")]
            assert con.execute("SELECT count(*) FROM history_imports").fetchall() == [(0,)]
        assert store.session_count() == before > 0
    assert columns[:4] == ["path", "key", "agent", "session_id"]
    assert "m009_history_imports" in migrations.MIGRATIONS
