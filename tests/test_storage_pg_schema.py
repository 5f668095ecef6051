"""pg_schema: migrations applied once, also when several processes open a new database."""

from __future__ import annotations

import threading

import psycopg

from palimpsest.storage.pg_schema import HAS_CJK, MIGRATIONS, migrate, schema_version
from palimpsest.storage.pg_words import index_words


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
        # the store writes the word index (pg_words); a bare insert has none
        tsv = con.execute("SELECT tsv, words FROM messages WHERE content = 'plain words'")
        assert tsv.fetchone() == (None, 0)


def test_migration_3_indexes_stored_rows_again_with_fts5s_tokenizer(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as con:
        con.execute(
            "CREATE TABLE palimpsest_schema (version INTEGER PRIMARY KEY,"
            " name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)"
        )
        for number, (name, sql) in enumerate(MIGRATIONS[:2], 1):  # a version-2 store
            assert isinstance(sql, str)
            con.execute(sql.encode())
            con.execute("INSERT INTO palimpsest_schema VALUES (%s, %s, 0)", (number, name))
        con.execute(
            "INSERT INTO sessions (id, source, started_at, title) VALUES ('s', 'cli', 0, 'Plans')"
        )
        text = "Ines's follow-up: it's fairly done, in the end"
        con.execute(
            "INSERT INTO messages (session_id, role, content, tool_name, timestamp) VALUES"
            " ('s', 'user', %s, NULL, 0), ('s', 'tool', 'ran it', 'shell', 1)",
            (text,),
        )
        old = con.execute("SELECT tsv::text FROM messages ORDER BY id").fetchone()
        assert old is not None and "'follow-up'" in old[0]  # english, generated
        assert migrate(con) == len(MIGRATIONS)
        rows = con.execute("SELECT tsv::text, words FROM messages ORDER BY id").fetchall()
        first, second = index_words(text + "  "), index_words("ran it shell ")
        wanted = [
            (con.execute("SELECT %s::tsvector::text", (w.vector,)).fetchone() or ("",))[0]
            for w in (first, second)
        ]
        assert rows == [(wanted[0], first.count), (wanted[1], second.count)]
        assert rows[0][1] == 11  # FTS5's tokens, trailing stopwords included
        session = con.execute("SELECT word_total, meta_words, meta_tsv::text FROM sessions")
        total, meta, vector = session.fetchone() or (0, 0, "")
        assert total == first.count + second.count and meta > 0 and "'plan'" in vector
