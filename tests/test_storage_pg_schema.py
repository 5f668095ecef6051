"""pg_schema: migrations applied once, also when several processes open a new database."""

from __future__ import annotations

import threading

import psycopg

from palimpsest.storage.pg_schema import HAS_CJK, MIGRATIONS, migrate, schema_version


def test_migrate_once_and_again(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as con:
        assert schema_version(con) == 0
        assert migrate(con) == len(MIGRATIONS)
        assert migrate(con) == len(MIGRATIONS)  # nothing left to do
        assert schema_version(con) == len(MIGRATIONS)
        rows = con.execute("SELECT version, name FROM palimpsest_schema").fetchall()
        assert rows == [(n, name) for n, (name, _) in enumerate(MIGRATIONS, 1)]


def test_concurrent_openers_apply_each_step_once(pg_url: str) -> None:
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            with psycopg.connect(pg_url, autocommit=True) as con:
                migrate(con)
        except BaseException as exc:  # collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with psycopg.connect(pg_url) as con:
        assert con.execute("SELECT count(*) FROM palimpsest_schema").fetchone() == (
            len(MIGRATIONS),
        )


def test_the_trigram_index_holds_cjk_rows_only(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as con:
        migrate(con)
        found = con.execute("SELECT pg_get_indexdef('idx_messages_trgm'::regclass)").fetchone()
        assert found is not None and "gin_trgm_ops" in found[0] and "WHERE" in found[0]
        con.execute("INSERT INTO sessions (id, source, started_at) VALUES ('s', 'cli', 0)")
        con.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES"
            " ('s', 'user', 'plain words', 0), ('s', 'user', '数据库迁移', 0)"
        )
        cjk = con.execute(f"SELECT content FROM messages WHERE {HAS_CJK}").fetchall()
        assert cjk == [("数据库迁移",)]
        tsv = con.execute("SELECT tsv::text FROM messages WHERE content = 'plain words'")
        assert tsv.fetchone() == ("'plain':1 'word':2",)  # english stemming
