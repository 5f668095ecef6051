"""Query sanitizing, script routing and the search SQL, run against real FTS5 tables."""

from __future__ import annotations

import json
import string
from collections.abc import Iterator
from pathlib import Path

import apsw
import apsw.fts5query
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest.storage.fts_query import (
    CJK_RANGES,
    SEARCH_COLUMNS,
    build_search,
    cjk_count,
    is_cjk,
    route_for,
    run_search,
    sanitize_query,
)
from palimpsest.storage.retrieval import prepare_connection

# The exact names of spec SS-03/SS-06/SS-07: one indexed column over content, tool name
# and tool-call arguments, kept in sync by triggers.
SCHEMA = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT, title TEXT,
    parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    timestamp REAL NOT NULL, token_count INTEGER,
    active INTEGER NOT NULL DEFAULT 1, compacted INTEGER NOT NULL DEFAULT 0
);
CREATE VIRTUAL TABLE messages_fts USING fts5(content);
CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(content, tokenize='trigram');
CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts (rowid, content) VALUES (new.id,
    COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' '
    || COALESCE(new.tool_calls, ''));
  INSERT INTO messages_fts_trigram (rowid, content) VALUES (new.id,
    COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' '
    || COALESCE(new.tool_calls, ''));
END;
"""

DOCS: dict[str, str] = {
    "rf": "then I ran rm -rf build/ to start over",
    "force": "git push --force origin main was refused",
    "pct": "the disk was 100% full again",
    "snake": "rename the helper a_b to something clearer",
    "dotted": "edit my-app.config.ts and restart the dev server",
    "cpp": "the parser is written in C++ with templates",
    "phrase": "we agreed the exact phrase deploy on friday is banned",
    "near": "the kubernetes cluster lost its ingress controller overnight",
    "colon": "set timeout:30 in the retry block",
    "path": "run scripts/build.sh before packaging",
    "email": "mail user@host about the outage",
    "apos": "it's the cache again",
    "zh": "我们讨论了数据库迁移方案",
    "ja": "データベースの移行計画をレビューしました",
    "plain": "hello world from the docs",
}

CASES: list[tuple[str, str]] = [
    ("-rf", "rf"),
    ("rm -rf", "rf"),
    ("--force", "force"),
    ("100%", "pct"),
    ("a_b", "snake"),
    ("my-app.config.ts", "dotted"),
    ("C++", "cpp"),
    ('"exact phrase deploy"', "phrase"),
    ('"exact phrase', "phrase"),
    ("NEAR(kubernetes ingress, 5)", "near"),
    ("NEAR(kubernetes ingress)", "near"),
    ("(kubernetes OR openshift) ingress", "near"),
    ("(kubernetes", "near"),
    ("kubernetes)", "near"),
    ("kuber*", "near"),
    ("*kubernetes", "near"),
    ("timeout:30", "colon"),
    ("scripts/build.sh", "path"),
    ("user@host", "email"),
    ("it's", "apos"),
    ("hello AND", "plain"),
    ("OR hello", "plain"),
    ("NOT hello", "plain"),
    ("hello NOT", "plain"),
    ("{hello}", "plain"),
    ("hello^", "plain"),
    ("hello +world", "plain"),
    ('hello "world', "plain"),
    ("Hello World", "plain"),
]


def make_db(path: Path | str = ":memory:") -> apsw.Connection:
    con = apsw.Connection(str(path))
    con.execute(SCHEMA)
    return con


def add(
    con: apsw.Connection,
    content: str | None,
    *,
    session: str = "s1",
    role: str = "user",
    source: str = "cli",
    tool_name: str | None = None,
    tool_calls: str | None = None,
    ts: float = 1.0,
) -> int:
    con.execute(
        "INSERT OR IGNORE INTO sessions (id, source, model, title, started_at)"
        " VALUES (?, ?, 'm', ?, 0)",
        (session, source, f"title {session}"),
    )
    con.execute(
        "INSERT INTO messages (session_id, role, content, tool_name, tool_calls, timestamp)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (session, role, content, tool_name, tool_calls, ts),
    )
    return con.last_insert_rowid()


@pytest.fixture(scope="module")
def corpus() -> Iterator[tuple[apsw.Connection, dict[str, int]]]:
    con = make_db()
    ids = {key: add(con, text, ts=float(i)) for i, (key, text) in enumerate(DOCS.items())}
    yield con, ids
    con.close()


def match_ids(con: apsw.Connection, table: str, query: str) -> set[int]:
    rows = con.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (query,))
    return {r[0] for r in rows}


# -- the sanitizer ------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "key"), CASES)
@pytest.mark.parametrize("table", ["messages_fts", "messages_fts_trigram"])
def test_sanitized_terms_still_match(
    corpus: tuple[apsw.Connection, dict[str, int]], raw: str, key: str, table: str
) -> None:
    con, ids = corpus
    query = sanitize_query(raw)
    if table == "messages_fts_trigram" and raw.startswith("NEAR"):
        # NEAR distances count trigrams, not words: a word-index query only.
        pytest.skip("not a trigram query")
    assert ids[key] in match_ids(con, table, query), (raw, query)


# -- routing ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "route"),
    [
        ("docker", "fts"),
        ("数据库", "trigram"),
        ("迁移", "like"),
        ("移", "like"),
        ("数据库 迁移", "like"),  # one CJK token is too short for trigram
        ("数据库 migration", "trigram"),
        ("データベース", "trigram"),
        ("***", "like"),
        ("", "none"),
        ("   ", "none"),
    ],
)
def test_route_for(query: str, route: str) -> None:
    assert route_for(query) == route


def test_route_without_trigram_or_fts() -> None:
    assert route_for("数据库", has_trigram=False) == "like"
    assert route_for("docker", has_fts=False) == "like"


def test_cjk_count_ranges() -> None:
    assert cjk_count("数据库 データ 한국어 abc") == 9


def test_cjk_edges_follow_the_ranges() -> None:
    """The character class agrees with ``CJK_RANGES`` at every range's edges."""
    for lo, hi in CJK_RANGES:
        for code in (lo - 1, lo, hi, hi + 1):
            inside = any(a <= code <= b for a, b in CJK_RANGES)
            assert is_cjk(chr(code)) is inside, hex(code)
            assert cjk_count("a" + chr(code) + "b") == int(inside)
    assert is_cjk("") is False
    assert cjk_count("-]^\\") == 0  # class metacharacters are not in it


# -- the SQL ----------------------------------------------------------------------------


def test_fts_sql_exact() -> None:
    plan = build_search("docker", role_filter="user,assistant", source="cli", limit=5)
    assert plan.route == "fts"
    assert plan.sql == (
        "SELECT m.id AS id, m.session_id AS session_id, m.role AS role,"
        " snippet(messages_fts, 0, '>>>', '<<<', '...', 40) AS snippet,"
        " m.timestamp AS timestamp, s.source AS source, s.model AS model,"
        " s.title AS session_title, messages_fts.rank AS rank, m.tool_name AS tool_name,"
        " s.started_at AS session_started"
        " FROM messages_fts JOIN messages AS m ON m.id = messages_fts.rowid"
        " JOIN sessions AS s ON s.id = m.session_id"
        " WHERE messages_fts MATCH ? AND messages_fts.rowid >= ?"
        " AND messages_fts.rank MATCH 'bm25()'"
        " AND m.role IN (?, ?) AND s.source IN (?)"
        " AND (m.active = 1 OR m.compacted = 1)"
        " ORDER BY messages_fts.rank LIMIT ? OFFSET ?"
    )
    # MATCH and the rowid floor are filled in at run time (candidates by rarity)
    assert plan.params == ("docker", 0, "user", "assistant", "cli", 5, 0)
    assert plan.budget == 2000 and build_search("docker", rank_window=None).budget is None
    exact = build_search("git --force")
    assert "palimpsest_exact((COALESCE(m.content, '')" in exact.sql
    assert exact.params == ('git "--force"', 0, "--force", 20, 0)
    assert plan.fallback is not None and plan.fallback.route == "like"


def test_trigram_sql_uses_trigram_table() -> None:
    plan = build_search("数据库", exclude_session_ids=["a", "b"])
    assert plan.route == "trigram"
    assert "snippet(messages_fts_trigram, 0, '>>>', '<<<', '...', 40)" in plan.sql
    assert "messages_fts_trigram MATCH ?" in plan.sql
    assert "m.session_id NOT IN (?, ?)" in plan.sql
    assert plan.params == ("数据库", "数据库", 2000, "a", "b", 20, 0)


def test_like_sql_exact() -> None:
    plan = build_search("迁移", limit=3)
    indexed = (
        "(COALESCE(m.content, '') || ' ' || COALESCE(m.tool_name, '') || ' '"
        " || COALESCE(m.tool_calls, ''))"
    )
    assert plan.route == "like"
    assert plan.sql == (
        "SELECT m.id AS id, m.session_id AS session_id, m.role AS role,"
        f" substr({indexed}, max(1, instr(lower({indexed}), ?) - 40), 120) AS snippet,"
        " m.timestamp AS timestamp, s.source AS source, s.model AS model,"
        " s.title AS session_title, 0.0 AS rank, m.tool_name AS tool_name,"
        " s.started_at AS session_started"
        " FROM messages AS m JOIN sessions AS s ON s.id = m.session_id"
        " WHERE ((m.content LIKE ? ESCAPE '\\' OR m.tool_name LIKE ? ESCAPE '\\'"
        " OR m.tool_calls LIKE ? ESCAPE '\\')) AND (m.active = 1 OR m.compacted = 1)"
        " ORDER BY m.id DESC LIMIT ? OFFSET ?"
    )
    assert plan.params == ("迁移", "%迁移%", "%迁移%", "%迁移%", 3, 0)


def test_every_plan_is_limited() -> None:
    for query in ("docker", "数据库", "迁移", "***", "", "a" * 3000):
        plan = build_search(query, limit=7, offset=2)
        assert plan.sql.endswith("LIMIT ? OFFSET ?")
        assert plan.params[-2:] == (7, 2)


def test_like_escapes_wildcards(tmp_path: Path) -> None:
    con = make_db(tmp_path / "s.db")
    add(con, "progress 100% done")
    add(con, "progress 1000 done")
    rows = run_search(con, build_search("100%", has_fts=False))
    assert [r["snippet"] for r in rows] == ["progress 100% done  "]


# -- running against a real database ----------------------------------------------------


@pytest.fixture
def db(tmp_path: Path) -> Iterator[apsw.Connection]:
    con = make_db(tmp_path / "state.db")
    yield con
    con.close()


def search(con: apsw.Connection, query: str, **kwargs: object) -> list[dict[str, object]]:
    return run_search(con, build_search(query, **kwargs))  # type: ignore[arg-type]


def test_rows_have_all_columns_and_snippet(db: apsw.Connection) -> None:
    add(db, "the Docker build failed with exit code 137", session="a")
    rows = search(db, "docker")
    assert len(rows) == 1
    assert set(rows[0]) == {*SEARCH_COLUMNS, "session_rank", "session_date"}
    assert ">>>Docker<<<" in str(rows[0]["snippet"])
    assert rows[0]["session_title"] == "title a"


def test_snippets_false_skips_sqlite_snippet_only(db: apsw.Connection) -> None:
    """Same hits, same order, same ranks; only the ``snippet`` column is left empty."""
    for i in range(5):
        add(db, f"the Docker build failed {'again ' * i}with exit code 137", session="a")
    with_snippets = search(db, "docker build", limit=3)
    plan = build_search("docker build", limit=3, snippets=False)
    assert "snippet(" not in plan.sql
    assert plan.widen is None or "snippet(" not in plan.widen.sql
    without = run_search(db, plan)
    assert [(r["id"], r["rank"]) for r in without] == [(r["id"], r["rank"]) for r in with_snippets]
    assert all(r["snippet"] == "" for r in without)
    assert all(">>>" in str(r["snippet"]) for r in with_snippets)


def test_case_insensitive_and_bm25_order(db: apsw.Connection) -> None:
    weak = add(db, "docker " + "filler words " * 40)
    strong = add(db, "docker docker Docker")
    assert [r["id"] for r in search(db, "DOCKER")] == [strong, weak]


def test_chinese_and_japanese_substrings(db: apsw.Connection) -> None:
    zh = add(db, "我们讨论了数据库迁移方案")
    ja = add(db, "データベースの移行計画をレビューしました")
    add(db, "nothing to see here")
    trigram = search(db, "数据库")
    assert [r["id"] for r in trigram] == [zh]
    assert ">>>数据库<<<" in str(trigram[0]["snippet"])
    like = search(db, "迁移")
    assert [r["id"] for r in like] == [zh]
    assert "迁移" in str(like[0]["snippet"])
    assert [r["id"] for r in search(db, "データベース")] == [ja]
    assert [r["id"] for r in search(db, "移行")] == [ja]
    assert [r["id"] for r in search(db, "計")] == [ja]


def test_tool_call_arguments_are_searchable(db: apsw.Connection) -> None:
    calls = json.dumps(
        [{"id": "c1", "function": {"name": "deploy", "arguments": '{"env": "deploy_prod_eu"}'}}]
    )
    hit = add(db, "", role="assistant", tool_calls=calls)
    tool = add(db, "ok", role="tool", tool_name="kubectl_apply")
    assert [r["id"] for r in search(db, "deploy_prod_eu")] == [hit]
    assert [r["id"] for r in search(db, "kubectl_apply")] == [tool]


def test_filters_and_offset(db: apsw.Connection) -> None:
    a = add(db, "alpha note", session="s1", role="user", source="cli")
    b = add(db, "alpha note", session="s2", role="assistant", source="cron")
    c = add(db, "alpha note", session="s3", role="tool", source="tool")
    every = {r["id"] for r in search(db, "alpha")}
    assert every == {a, b, c}
    assert {r["id"] for r in search(db, "alpha", role_filter=["user"])} == {a}
    assert {r["id"] for r in search(db, "alpha", source="cron")} == {b}
    assert {r["id"] for r in search(db, "alpha", exclude_sources="tool,cron")} == {a}
    assert {r["id"] for r in search(db, "alpha", exclude_session_ids=["s1", "s2"])} == {c}
    assert len(search(db, "alpha", limit=2)) == 2
    assert len(search(db, "alpha", limit=2, offset=2)) == 1


def test_rewound_rows_are_hidden_but_archived_rows_are_found(db: apsw.Connection) -> None:
    live = add(db, "gamma ray")
    archived = add(db, "gamma ray")
    rewound = add(db, "gamma ray")
    db.execute("UPDATE messages SET active = 0, compacted = 1 WHERE id = ?", (archived,))
    db.execute("UPDATE messages SET active = 0, compacted = 0 WHERE id = ?", (rewound,))
    assert {r["id"] for r in search(db, "gamma")} == {live, archived}


def test_no_usable_terms_fall_back_to_like(db: apsw.Connection) -> None:
    arrow = add(db, "use a -> b here")
    add(db, "nothing")
    assert [r["id"] for r in search(db, "->")] == [arrow]
    assert search(db, "") == []


def test_broken_fts_falls_back_to_like(db: apsw.Connection) -> None:
    hit = add(db, "epsilon value")
    db.execute("DROP TABLE messages_fts")
    assert [r["id"] for r in search(db, "epsilon")] == [hit]


# -- fuzz -------------------------------------------------------------------------------

_ALPHABET = st.sampled_from(
    [
        *(string.ascii_letters + string.digits + string.punctuation + " \t\n"),
        *["AND", "OR", "NOT", "NEAR", "NEAR(", '"', "(", ")", "*", "-", ":", "^", "+"],
        *"数据库迁移データベース한국어\x00\x01\x1b\x7f\u200b\u3000é",
    ]
)
_QUERIES = st.one_of(
    st.lists(_ALPHABET, max_size=30).map(" ".join),
    st.lists(_ALPHABET, max_size=30).map("".join),
    st.text(max_size=60),
)


@pytest.fixture(scope="module")
def fuzz_db() -> Iterator[apsw.Connection]:
    con = make_db()
    for text in [*DOCS.values(), "AND OR NOT NEAR ( ) * - : ^ +", "数据库 迁移 データ"]:
        add(con, text)
    yield con
    con.close()


@pytest.mark.slow
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=_QUERIES)
def test_fuzz_no_query_raises(fuzz_db: apsw.Connection, query: str) -> None:
    sanitized = sanitize_query(query)
    if sanitized:
        apsw.fts5query.parse_query_string(sanitized)
        for table in ("messages_fts", "messages_fts_trigram"):
            match_ids(fuzz_db, table, sanitized)  # must not raise
    prepare_connection(fuzz_db)
    for match in ("all", "any", "auto"):
        plan = build_search(query, match=match, limit=5)  # type: ignore[arg-type]
        # execute directly: a fallback would hide a syntax error
        list(fuzz_db.execute(plan.sql, plan.params))
        if plan.widen is not None:
            list(fuzz_db.execute(plan.widen.sql, plan.widen.params))


def test_through_the_real_store(tmp_path: Path) -> None:
    from palimpsest.storage.sessions import SessionStore

    with SessionStore(tmp_path / "state.db") as store:
        store.create_session("s", source="cli")
        call = {"id": "c", "type": "function", "function": {"name": "deploy", "arguments": "{}"}}
        call["function"]["arguments"] = json.dumps({"target": "deploy_prod_eu"})
        ids = store.append_messages(
            "s",
            [
                {"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "user", "content": "我们讨论了数据库迁移方案 and C++ with -rf"},
            ],
        )
        assert [h["id"] for h in store.search_messages("deploy_prod_eu")] == [ids[0]]
        for query in ("数据库", "迁移", "-rf", "数据库 C++"):
            assert [h["id"] for h in store.search_messages(query)] == [ids[1]], query
        assert store.search_messages("scripts/build.sh") == []  # a list, never an error
        # the word index sees "C++" as the word "c", which the tool call's id also is
        assert ids[1] in [h["id"] for h in store.search_messages("C++")]


def test_rank_window_ranks_only_the_newest_matches(db: apsw.Connection) -> None:
    strong_old = add(db, "zebra zebra zebra")
    weak = [add(db, "zebra " + "filler " * 30) for _ in range(3)]
    assert search(db, "zebra", rank_window=None)[0]["id"] == strong_old
    windowed = search(db, "zebra", rank_window=3)
    assert {r["id"] for r in windowed} == set(weak)
    # fewer matches than the window: exact ranking over all of them
    assert search(db, "zebra", rank_window=10)[0]["id"] == strong_old
