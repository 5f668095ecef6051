"""The trigram index holds exactly the CJK rows: triggers, migration m005, verify, search.

Both FTS layouts are exercised. The external layout is the delicate one: FTS5's
``'delete'`` command must only ever be given rows the index holds, with their exact
indexed text, or the index is silently corrupted -- FTS5's ``integrity-check`` (with
``rank = 1``, which compares an external-content index against its source rows) is the
judge throughout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest.storage import fts_layout, migrations
from palimpsest.storage.fts_layout import TRIGRAM_TABLE, WORD_TABLE
from palimpsest.storage.fts_query import CJK_RANGES, build_search, cjk_count, is_cjk, run_search
from palimpsest.storage.maintenance import verify
from palimpsest.storage.sessions import SessionStore

LAYOUTS = ("inline", "external")


def fresh(layout: str) -> apsw.Connection:
    """An in-memory database at the current schema in ``layout`` with one session ``s``."""
    con = apsw.Connection(":memory:")
    for name in migrations.MIGRATIONS:
        migrations.apply_migration(con, name=name)
    fts_layout.install_fts(con, layout, with_trigram=True)  # type: ignore[arg-type]
    con.execute("INSERT INTO sessions (id, source, started_at) VALUES ('s', 'cli', 0)")
    return con


def insert(con: apsw.Connection, content: str, tool_name: str | None = None) -> int:
    con.execute(
        "INSERT INTO messages (session_id, role, content, tool_name, timestamp)"
        " VALUES ('s', 'user', ?, ?, 0)",
        (content, tool_name),
    )
    return int(con.last_insert_rowid())


def ids(con: apsw.Connection, sql: str, params: tuple[object, ...] = ()) -> set[int]:
    return {int(r[0]) for r in con.execute(sql, params)}


def check_indexes(con: apsw.Connection) -> None:
    """Both indexes pass FTS5's integrity-check and hold exactly the rows they should."""
    for table in (WORD_TABLE, TRIGRAM_TABLE):
        con.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
    texts = {
        int(r[0]): str(r[1])
        for r in con.execute(f"SELECT m.id, {fts_layout.INDEXED_TEXT} FROM messages AS m")
    }
    assert ids(con, f"SELECT rowid FROM {WORD_TABLE}_docsize") == set(texts)
    cjk = {i for i, text in texts.items() if cjk_count(text)}
    assert ids(con, f"SELECT rowid FROM {TRIGRAM_TABLE}_docsize") == cjk
    con.execute("UPDATE sessions SET message_count = (SELECT count(*) FROM messages)")
    assert verify(con) == []


def search_ids(con: apsw.Connection, query: str, route: str) -> set[int]:
    plan = build_search(query, limit=10_000, rank_window=None)
    assert plan.route == route, query
    return {int(hit["id"]) for hit in run_search(con, plan)}


# -- one definition of "CJK" -------------------------------------------------------------


def test_the_trigger_condition_and_the_router_agree_on_every_code_point() -> None:
    # Every code point but the surrogates, as one character inside ASCII text, through
    # the exact condition the triggers use (ASCII shortcut + GLOB class).
    con = apsw.Connection(":memory:")
    in_sql = ids(
        con,
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1114111),"
        " m AS (SELECT x, 'ab' || char(x) || 'cd' AS content, NULL AS tool_name,"
        " NULL AS tool_calls FROM c WHERE x < 55296 OR x > 57343)"
        f" SELECT x FROM m WHERE {fts_layout.IS_CJK_ROW}",
    )
    in_python = {code for lo, hi in CJK_RANGES for code in range(lo, hi + 1)}
    assert in_sql == in_python
    assert all(is_cjk(chr(code)) for code in in_python)
    edges = {code for lo, hi in CJK_RANGES for code in (lo - 1, lo, hi, hi + 1)}
    assert {code for code in edges if is_cjk(chr(code))} == edges & in_sql  # the router's test


@given(st.text(max_size=40))
@settings(max_examples=300)
def test_the_row_condition_is_cjk_count_above_zero(text: str) -> None:
    if "\x00" in text:
        text = text.replace("\x00", "")  # GLOB stops at NUL; no message text carries one
    con = apsw.Connection(":memory:")
    found = con.execute(
        f"SELECT {fts_layout.IS_CJK_ROW} FROM (SELECT ? AS content, NULL AS tool_name,"
        " NULL AS tool_calls) AS m",
        (text,),
    ).fetchall()
    assert bool(found[0][0]) == (cjk_count(text) > 0)


# -- the triggers -------------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_kind_of_change_keeps_both_indexes_exact(layout: str) -> None:
    con = fresh(layout)
    latin = insert(con, "deploy the walrus service")
    cjk = insert(con, "我们讨论了数据库迁移方案")
    mixed = insert(con, "docker compose 数据库 restart")
    tool = insert(con, "", tool_name="shell")
    check_indexes(con)
    assert ids(con, f"SELECT rowid FROM {TRIGRAM_TABLE}") == {cjk, mixed}

    steps = [
        ("UPDATE messages SET content = 'データベースの移行' WHERE id = ?", latin),  # Latin->CJK
        ("UPDATE messages SET content = 'plain words now' WHERE id = ?", cjk),  # CJK->Latin
        (
            "UPDATE messages SET content = '서버가 다시 시작됨 docker' WHERE id = ?",
            mixed,
        ),  # CJK->CJK
        ("UPDATE messages SET content = 'other words' WHERE id = ?", cjk),  # Latin->Latin
        ("UPDATE messages SET tool_name = '数据库工具' WHERE id = ?", tool),  # CJK via tool name
        ("UPDATE messages SET active = 0 WHERE id = ?", mixed),  # text unchanged
        ("UPDATE messages SET content = content WHERE id = ?", latin),  # same text rewritten
        ("DELETE FROM messages WHERE id = ?", cjk),  # Latin row deleted
        ("DELETE FROM messages WHERE id = ?", mixed),  # CJK row deleted
        ("UPDATE messages SET tool_name = NULL WHERE id = ?", tool),  # CJK->empty
    ]
    for sql, row in steps:
        con.execute(sql, (row,))
        check_indexes(con)
    assert ids(con, f"SELECT rowid FROM {TRIGRAM_TABLE}") == {latin}
    assert search_ids(con, "データベース", "trigram") == {latin}
    assert search_ids(con, "walrus", "fts") == set()


@pytest.mark.parametrize("text", ["deploy the walrus", "latin words", "zebra quokka"])
def test_a_delete_command_for_a_row_the_index_never_held_is_caught(text: str) -> None:
    # Made on purpose, to show what an unguarded external-layout trigger would do with a
    # Latin row, and that the checks the other tests rely on would see it.
    con = fresh("external")
    latin = insert(con, text)
    insert(con, "我们讨论了数据库迁移方案 deploy words")
    con.execute("UPDATE sessions SET message_count = 2")
    assert verify(con) == []
    try:
        con.execute(
            f"INSERT INTO {TRIGRAM_TABLE} ({TRIGRAM_TABLE}, rowid, content)"
            " VALUES ('delete', ?, ?)",
            (latin, f"{text}  "),
        )
    except apsw.CorruptError:
        return  # FTS5 sometimes notices at once, failing the statement that fed it
    assert any("integrity-check failed" in p for p in verify(con))


def test_verify_counts_only_cjk_rows_for_the_trigram_index(tmp_path: Path) -> None:
    # Inline: an external-content index would call the stray row corrupt instead.
    with SessionStore(tmp_path / "s.db", fts_layout="inline") as store:
        sid = store.create_session()
        first, _ = store.append_messages(
            sid,
            [{"role": "user", "content": "latin only"}, {"role": "user", "content": "数据库迁移"}],
        )
        assert store.verify() == []
        store.database.write(
            lambda con: con.execute(
                f"INSERT INTO {TRIGRAM_TABLE} (rowid, content) VALUES (?, 'latin only  ')",
                (first,),
            )
        )
        assert store.verify() == [
            f"{TRIGRAM_TABLE}: 2 indexed documents for 1 messages with CJK text"
        ]
        store.rebuild_fts()
        assert store.verify() == []


@pytest.mark.parametrize("layout", LAYOUTS)
def test_new_indexes_never_merge_inside_a_write(tmp_path: Path, layout: str) -> None:
    with SessionStore(tmp_path / "s.db", fts_layout=layout, background_upkeep=False) as store:
        for table in (WORD_TABLE, TRIGRAM_TABLE):
            found = store.database.query(f"SELECT k, v FROM {table}_config WHERE k != 'version'")
            assert {r["k"]: r["v"] for r in found} == dict(fts_layout.FTS_WRITE_SETTINGS)
        sid = store.create_session()
        for i in range(40):
            store.append_message(sid, "user", f"note {i} about the deploy")
        assert store.verify() == []
        assert len(store.search_messages("deploy", limit=100)) == 40


def _segments(con: apsw.Connection, table: str) -> int:
    return int(con.execute(f"SELECT count(DISTINCT segid) FROM {table}_idx").fetchone()[0])


def test_crisis_merge_is_the_level_size_at_which_a_commit_merges(tmp_path: Path) -> None:
    # What the upkeep relies on: with automerge off, only crisismerge makes a commit merge,
    # and raising it leaves every commit's segment for the thread.
    with SessionStore(tmp_path / "s.db", background_upkeep=False) as store:
        sid = store.create_session()
        con = store.database.writer
        assert fts_layout.crisis_merge(con, WORD_TABLE) == fts_layout.IDLE_CRISIS_MERGE
        for i in range(40):
            store.append_message(sid, "user", f"note {i} about the deploy")
        assert _segments(con, WORD_TABLE) < fts_layout.IDLE_CRISIS_MERGE
        store.database.write(lambda c: fts_layout.set_crisis_merge(c, WORD_TABLE, 64))
        assert fts_layout.crisis_merge(con, WORD_TABLE) == 64
        before = _segments(con, WORD_TABLE)
        for i in range(40):
            store.append_message(sid, "user", f"later note {i} about the deploy")
        assert _segments(con, WORD_TABLE) == before + 40
        assert store.verify() == []
        assert len(store.search_messages("deploy", limit=100)) == 80


# -- random sequences (hypothesis) ----------------------------------------------------------

_PIECES = [
    "数据库",
    "迁移",
    "方案",
    "データ",
    "ベース",
    "서버가",
    "재시작",
    "。",
    "docker",
    "deploy",
    "the",
    "walrus",
    "C++",
    "café",
    "—",
    "😀",
    " ",
]
_TEXTS = st.lists(st.sampled_from(_PIECES), max_size=8).map("".join)
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("insert"), _TEXTS, st.booleans()),
        st.tuples(st.just("update"), st.integers(0, 20), _TEXTS, st.booleans()),
        st.tuples(st.just("delete"), st.integers(0, 20)),
    ),
    min_size=1,
    max_size=25,
)
_CJK_QUERIES = ["数据库", "据库迁", "迁移方案", "データベース", "タベー", "서버가재시작"]


@pytest.mark.parametrize("layout", LAYOUTS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_OPS)
def test_random_changes_keep_indexes_sound_and_search_exact(
    layout: str, ops: list[tuple[Any, ...]]
) -> None:
    con = fresh(layout)
    live: list[int] = []
    for op in ops:
        if op[0] == "insert":
            _, text, as_tool = op
            live.append(insert(con, "", str(text)) if as_tool else insert(con, str(text)))
        elif live and op[0] == "update":
            _, pick, text, as_tool = op
            column = "tool_name" if as_tool else "content"
            con.execute(
                f"UPDATE messages SET {column} = ? WHERE id = ?",
                (text, live[int(pick) % len(live)]),
            )
        elif live and op[0] == "delete":
            con.execute("DELETE FROM messages WHERE id = ?", (live.pop(int(op[1]) % len(live)),))
    check_indexes(con)
    texts = {
        int(r[0]): str(r[1])
        for r in con.execute(f"SELECT m.id, {fts_layout.INDEXED_TEXT} FROM messages AS m")
    }
    for query in _CJK_QUERIES:
        expected = {i for i, text in texts.items() if query in text}
        assert search_ids(con, query, "trigram") == expected, query
    # The trade-off: a mixed OR query reaches Latin words only inside CJK rows.
    expected = {i for i, t in texts.items() if "数据库" in t or ("docker" in t and cjk_count(t))}
    assert search_ids(con, "数据库 OR docker", "trigram") == expected


# -- migration m005 from the previous schema ------------------------------------------------

_OLD_TEXT = {
    r: f"COALESCE({r}.content, '') || ' ' || COALESCE({r}.tool_name, '') || ' ' || "
    f"COALESCE({r}.tool_calls, '')"
    for r in ("new", "old", "m")
}


def _old_trigram_index(con: apsw.Connection, layout: str) -> None:
    """The trigram table and triggers exactly as schema version 4 created them (every row)."""
    new, old, m = _OLD_TEXT["new"], _OLD_TEXT["old"], _OLD_TEXT["m"]
    t = TRIGRAM_TABLE
    for table in (WORD_TABLE, TRIGRAM_TABLE):
        fts_layout.drop_index(con, table)
    if layout == "external":
        con.execute(
            f"CREATE VIEW messages_fts_src AS SELECT m.id AS id, {m} AS content FROM messages AS m"
        )
        for table, options in ((WORD_TABLE, ""), (t, ", tokenize='trigram'")):
            con.execute(
                f"CREATE VIRTUAL TABLE {table} USING fts5(content,"
                f" content='messages_fts_src', content_rowid='id'{options});"
                f"CREATE TRIGGER {table}_insert AFTER INSERT ON messages BEGIN"
                f" INSERT INTO {table} (rowid, content) VALUES (new.id, {new}); END;"
                f"CREATE TRIGGER {table}_delete AFTER DELETE ON messages BEGIN"
                f" INSERT INTO {table} ({table}, rowid, content) VALUES ('delete', old.id, {old});"
                " END;"
                f"CREATE TRIGGER {table}_update AFTER UPDATE ON messages"
                f" WHEN ({old}) IS NOT ({new}) BEGIN"
                f" INSERT INTO {table} ({table}, rowid, content) VALUES ('delete', old.id, {old});"
                f" INSERT INTO {table} (rowid, content) VALUES (new.id, {new}); END;"
            )
    else:
        for table, options in ((WORD_TABLE, ""), (t, ", tokenize='trigram'")):
            con.execute(
                f"CREATE VIRTUAL TABLE {table} USING fts5(content{options});"
                f"CREATE TRIGGER {table}_insert AFTER INSERT ON messages BEGIN"
                f" INSERT INTO {table} (rowid, content) VALUES (new.id, {new}); END;"
                f"CREATE TRIGGER {table}_delete AFTER DELETE ON messages BEGIN"
                f" DELETE FROM {table} WHERE rowid = old.id; END;"
                f"CREATE TRIGGER {table}_update AFTER UPDATE ON messages"
                f" WHEN ({old}) IS NOT ({new}) BEGIN"
                f" DELETE FROM {table} WHERE rowid = old.id;"
                f" INSERT INTO {table} (rowid, content) VALUES (new.id, {new}); END;"
            )
    fts_layout.set_meta(con, "fts_layout", layout)


def make_version_4(path: Path, layout: str) -> dict[str, int]:
    con = apsw.Connection(str(path))
    names = list(migrations.MIGRATIONS)
    for name in names[: names.index("m005_trigram_cjk_only")]:
        with con:
            migrations.apply_migration(con, name=name)
    _old_trigram_index(con, layout)
    con.execute(
        "INSERT INTO sessions (id, source, started_at, message_count) VALUES ('old', 'cli', 0, 4)"
    )
    rows = {
        "latin": insert_in(con, "old", "restart the kubernetes cluster"),
        "cjk": insert_in(con, "old", "我们讨论了数据库迁移方案"),
        "mixed": insert_in(con, "old", "docker データベース restart"),
        "gone": insert_in(con, "old", "temporary 数据库 note"),
    }
    con.execute(
        "UPDATE messages SET content = 'rolled back the kubernetes change' WHERE id = ?",
        (rows["latin"],),
    )
    con.execute("DELETE FROM messages WHERE id = ?", (rows["gone"],))
    con.execute("UPDATE sessions SET message_count = 3")
    # Schema version 4 indexed every row in the trigram index.
    assert ids(con, f"SELECT rowid FROM {TRIGRAM_TABLE}_docsize") == {
        rows["latin"],
        rows["cjk"],
        rows["mixed"],
    }
    assert migrations.schema_version(con) == names.index("m005_trigram_cjk_only")
    con.close()
    return rows


def insert_in(con: apsw.Connection, sid: str, content: str) -> int:
    con.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, 0)",
        (sid, content),
    )
    return int(con.last_insert_rowid())


@pytest.mark.parametrize("layout", LAYOUTS)
def test_migration_keeps_only_cjk_rows_in_the_trigram_index(tmp_path: Path, layout: str) -> None:
    path = tmp_path / "state.db"
    rows = make_version_4(path, layout)
    with SessionStore(path) as store:
        assert store.schema_version == len(migrations.MIGRATIONS)
        assert store.fts_layout == layout
        assert store.verify() == []
        assert [h["id"] for h in store.search_messages("数据库")] == [rows["cjk"]]
        assert [h["id"] for h in store.search_messages("データベース")] == [rows["mixed"]]
        assert [h["id"] for h in store.search_messages("kubernetes")] == [rows["latin"]]
        assert {h["id"] for h in store.search_messages("restart")} == {rows["mixed"]}
        assert len(store.get_messages("old")) == 3
        # New writes go through the new triggers.
        added = store.append_messages(
            "old",
            [{"role": "user", "content": "plain"}, {"role": "user", "content": "新しい数据库"}],
        )
        assert store.verify() == []
    con = apsw.Connection(str(path))
    assert ids(con, f"SELECT rowid FROM {TRIGRAM_TABLE}_docsize") == {
        rows["cjk"],
        rows["mixed"],
        added[1],
    }
    assert len(ids(con, f"SELECT rowid FROM {WORD_TABLE}_docsize")) == 5
    applied = [r[0] for r in con.execute("SELECT name FROM migrations ORDER BY rowid")]
    assert applied[applied.index("m005_trigram_cjk_only") :] == list(migrations.MIGRATIONS)[4:]
    check_integrity = (
        f"INSERT INTO {TRIGRAM_TABLE} ({TRIGRAM_TABLE}, rank) VALUES ('integrity-check', 1)"
    )
    con.execute(check_integrity)
    con.close()
