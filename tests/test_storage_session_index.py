"""The session metadata index, and migrating files written by the previous schema (v5)."""

from __future__ import annotations

import shutil
from pathlib import Path

import apsw
import pytest

from palimpsest.storage import migrations
from palimpsest.storage.session_index import SESSION_TABLE, date_words_sql, session_matches
from palimpsest.storage.sessions import SessionStore

STORES = Path(__file__).parent / "data" / "stores"
JUNE_7_2023_NOON_UTC = 1686139200.0


def indexed(store: SessionStore) -> dict[str, tuple[str, str, str]]:
    with store.connection_for_reads() as con:
        rows = con.execute(
            f"SELECT s.id, f.title, f.started, f.source FROM {SESSION_TABLE} AS f"
            " JOIN sessions AS s ON s.rowid = f.rowid"
        )
        return {sid: (title, started, source) for sid, title, started, source in rows}


def test_date_words() -> None:
    con = apsw.Connection(":memory:")
    (words,) = con.execute(f"SELECT {date_words_sql('?1')}", (JUNE_7_2023_NOON_UTC,)).fetchall()[0]
    assert words == "2023-06-07 June 7 2023 Wednesday"
    assert con.execute(f"SELECT {date_words_sql('NULL')}").fetchall()[0][0] == ""


def test_triggers_follow_every_change(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "state.db") as store:
        store.create_session("a", source="telegram", title="Garden plans")
        assert indexed(store)["a"][0] == "Garden plans"
        assert indexed(store)["a"][2] == "telegram"
        store.set_session_title("a", "Allotment")
        store.database.write(
            lambda con: con.execute(
                "UPDATE sessions SET started_at = ? WHERE id = 'a'", (JUNE_7_2023_NOON_UTC,)
            )
        )
        assert indexed(store)["a"][:2] == ("Allotment", "2023-06-07 June 7 2023 Wednesday")
        with store.connection_for_reads() as con:
            assert set(session_matches(con, "june AND allotment", 5)) == {"a"}
            assert session_matches(con, "garden", 5) == {}
        store.delete_session("a")
        assert indexed(store) == {}
        store.database.write(
            lambda con: con.execute(
                f"INSERT INTO {SESSION_TABLE} ({SESSION_TABLE}, rank) VALUES ('integrity-check', 1)"
            )
        )


def test_a_store_without_the_index_searches_on(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "state.db") as store:
        store.create_session("a", title="Garden plans")
        (hit,) = store.append_messages("a", [{"role": "user", "content": "tomato seedlings"}])
        store.database.write(lambda con: con.execute(f"DROP TABLE {SESSION_TABLE}"))
        assert [h["id"] for h in store.search_messages("garden tomato")] == [hit]
        store.rebuild_fts()  # the repair recreates it
        assert set(indexed(store)) == {"a"}


@pytest.mark.parametrize("layout", ["inline", "external"])
def test_a_file_written_by_schema_version_5_migrates(tmp_path: Path, layout: str) -> None:
    """The fixture files were written by the code before this migration (main at 23f33d5)."""
    path = tmp_path / "state.db"
    shutil.copy(STORES / f"state_v5_{layout}.db", path)
    con = apsw.Connection(str(path))
    assert migrations.schema_version(con) == 5
    (sql,) = con.execute("SELECT sql FROM sqlite_master WHERE name = 'messages_fts'").fetchall()[0]
    assert "porter" not in sql
    con.close()
    with SessionStore(path) as store:
        assert store.schema_version == len(migrations.MIGRATIONS)
        assert store.fts_layout == layout
        assert store.verify() == []
        assert len(store.get_messages("old_june")) == 3
        # stemming now works on the old rows, both ways
        assert [h["session_id"] for h in store.search_messages("research donate")] == ["old_june"]
        assert [h["session_id"] for h in store.search_messages("--force")] == ["old_june"]
        assert {h["session_id"] for h in store.search_messages("force")} == {"old_june", "later"}
        assert [h["session_id"] for h in store.search_messages("数据库")] == ["old_june"]
        # the session metadata of old sessions was indexed by the migration
        assert store.search_messages("what did we do in June")[0]["session_id"] == "old_june"
        assert store.search_messages("garden")[0]["session_id"] == "old_june"
        # new writes go through the new triggers
        store.append_messages("later", [{"role": "user", "content": "researchers donated"}])
        assert len(store.search_messages("research", match="all")) == 2
        assert store.verify() == []
    with SessionStore(path) as again:  # a second open finds nothing to do
        assert again.schema_version == len(migrations.MIGRATIONS)
