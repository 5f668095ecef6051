"""pg_db: the SQLite dialect the shared modules write, and the PostgreSQL write path."""

from __future__ import annotations

import threading

import psycopg
import pytest

from palimpsest.errors import DatabaseLockedError
from palimpsest.storage.pg_db import PgDatabase, translate


def test_placeholders_and_percent_signs() -> None:
    assert translate("SELECT 1 WHERE a = ? AND b LIKE '%x'") == (
        "SELECT 1 WHERE a = %s AND b LIKE '%%x'"
    )


def test_insert_or_ignore_becomes_on_conflict_do_nothing() -> None:
    assert translate("INSERT OR IGNORE INTO t (a, b) VALUES (?, ?)") == (
        "INSERT INTO t (a, b) VALUES (%s, %s) ON CONFLICT DO NOTHING"
    )


def test_insert_or_replace_updates_on_the_key() -> None:
    assert translate("INSERT OR REPLACE INTO state_meta (key, value) VALUES (?, ?)") == (
        "INSERT INTO state_meta (key, value) VALUES (%s, %s)"
        " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
    )
    composite = translate("INSERT OR REPLACE INTO history_imports (path, key, size) VALUES (?,?,?)")
    assert composite.endswith("ON CONFLICT (path, key) DO UPDATE SET size = EXCLUDED.size")


@pytest.fixture
def db(pg_url: str) -> PgDatabase:
    database = PgDatabase(pg_url, max_size=4)
    with database.connection() as con:
        con.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL)")
    yield database  # type: ignore[misc]
    database.close()


def test_dialect_changes_and_rows(db: PgDatabase) -> None:
    def put(con: object) -> int:
        con.execute("INSERT OR IGNORE INTO kv (k, v) VALUES (?, ?)", ("a", 1))  # type: ignore[attr-defined]
        con.execute("INSERT OR IGNORE INTO kv (k, v) VALUES (?, ?)", ("a", 2))  # type: ignore[attr-defined]
        return int(con.changes())  # type: ignore[attr-defined]

    assert db.write(put) == 0  # the second insert was ignored
    assert db.query("SELECT k, v FROM kv WHERE ? IS NULL", (None,)) == [{"k": "a", "v": 1}]
    assert db.scalar("SELECT v FROM kv WHERE k = ?", ("a",)) == 1


def test_a_failed_write_leaves_nothing(db: PgDatabase) -> None:
    def half(con: object) -> None:
        con.execute("INSERT INTO kv (k, v) VALUES (?, ?)", ("b", 1))  # type: ignore[attr-defined]
        raise ValueError("stop")

    with pytest.raises(ValueError):
        db.write(half)
    assert db.scalar("SELECT count(*) FROM kv") == 0


def test_nested_writes_join_the_open_transaction(db: PgDatabase) -> None:
    def outer(con: object) -> None:
        db.write(lambda inner: inner.execute("INSERT INTO kv (k, v) VALUES (?, ?)", ("c", 1)))
        raise ValueError("roll back both")

    with pytest.raises(ValueError):
        db.write(outer)
    assert db.scalar("SELECT count(*) FROM kv") == 0


def test_serializable_read_then_write_is_atomic(db: PgDatabase) -> None:
    """Eight threads read a counter and write it back +1: no increment is lost."""

    def bump(con: object) -> None:
        found = con.execute("SELECT v FROM kv WHERE k = ?", ("n",)).fetchall()  # type: ignore[attr-defined]
        value = found[0][0] if found else 0
        con.execute("INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)", ("n", value + 1))  # type: ignore[attr-defined]

    def work() -> None:
        for _ in range(10):
            db.write(bump)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert db.scalar("SELECT v FROM kv WHERE k = ?", ("n",)) == 80


def test_endless_conflicts_end_in_a_locked_error(pg_url: str) -> None:
    database = PgDatabase(pg_url, max_size=1, attempts=2)
    try:

        def conflict(con: psycopg.Connection) -> None:  # type: ignore[type-arg]
            raise psycopg.errors.SerializationFailure("simulated")

        with pytest.raises(DatabaseLockedError, match="nothing was written"):
            database.transact(conflict)
    finally:
        database.close()


def test_a_snapshot_block_reads_one_snapshot(pg_url: str) -> None:
    db = PgDatabase(pg_url)
    try:
        db.transact(lambda con: con.execute("CREATE TABLE snap (n INTEGER)"))
        with db.snapshot() as con:
            before = con.execute("SELECT count(*) FROM snap").fetchone()
            db.transact(lambda other: other.execute("INSERT INTO snap VALUES (1)"))
            assert con.execute("SELECT count(*) FROM snap").fetchone() == before == (0,)
        with db.reader() as con:  # a plain reader sees each commit
            assert con.execute("SELECT count(*) FROM snap").fetchone() == (1,)
    finally:
        db.close()
