"""SessionStore on real SQLite files: schema, migrations, indexes, lifecycle, lineage, I/O."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import Any

import apsw
import pytest

from palimpsest.errors import (
    DatabaseCorruptError,
    DatabaseLockedError,
    SessionNotFoundError,
    StorageError,
    TranscriptError,
)
from palimpsest.messages import load_transcript, transcript_problems
from palimpsest.storage import migrations, schema
from palimpsest.storage.db import RetryPolicy
from palimpsest.storage.sessions import SessionStore, default_db_path
from palimpsest.usage import CanonicalUsage

TRANSCRIPTS = sorted(
    p
    for p in (Path(__file__).parent / "data" / "transcripts").rglob("*")
    if p.is_file() and p.suffix != ".md"
)
LAYOUTS = ("inline", "external")


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with SessionStore(tmp_path / "state.db") as opened:
        yield opened


def fts_ids(db: Path, table: str, match: str) -> list[int]:
    con = apsw.Connection(str(db))
    try:
        return [
            r[0] for r in con.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (match,))
        ]
    finally:
        con.close()


# -- schema and migrations -------------------------------------------------------------


def columns(con: apsw.Connection, table: str) -> set[str]:
    return {row[1] for row in con.execute(f"PRAGMA table_info({table})")}


def test_blank_database_gets_the_whole_schema(tmp_path: Path) -> None:
    path = tmp_path / "new" / "state.db"
    with SessionStore(path) as store:
        assert store.schema_version == len(migrations.MIGRATIONS)
        assert store.has_fts5 and store.has_trigram
        assert store.fts_layout == "external"  # the default for new files since issue 11
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    con = apsw.Connection(str(path))
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
    assert {"sessions", "messages", "messages_fts", "messages_fts_trigram"} <= names
    assert {"state_meta", "schema_version", "migrations", "compression_locks"} <= names
    assert {"idx_sessions_title_unique", "idx_messages_session"} <= names
    assert con.execute("PRAGMA journal_mode").fetchall()[0][0] == "wal"
    assert {
        "source", "model_config", "parent_session_id", "end_reason", "cache_write_tokens",
        "reasoning_tokens", "estimated_cost_usd", "api_call_count", "message_count",
        "compression_fallback_streak", "compression_failure_cooldown_until",
    } <= columns(con, "sessions")  # fmt: skip
    assert {
        "session_id", "role", "content", "tool_name", "tool_calls", "tool_call_id",
        "reasoning", "timestamp", "token_count", "_compressed_summary", "active", "compacted",
    } <= columns(con, "messages")  # fmt: skip
    applied = [r[0] for r in con.execute("SELECT name FROM migrations ORDER BY rowid")]
    assert applied == list(migrations.MIGRATIONS)
    con.close()


STORES = Path(__file__).parent / "data" / "stores"


def _index_state(path: Path) -> tuple[list[Any], list[Any]]:
    """The word index's definition and its segment pages: equal only if not rebuilt (the
    structure record, id 10, holds a cookie that changes with any configuration write)."""
    con = apsw.Connection(str(path))
    try:
        sql = con.execute("SELECT sql FROM sqlite_master WHERE name = 'messages_fts'").fetchall()
        data = con.execute(
            "SELECT id, block FROM messages_fts_data WHERE id != 10 ORDER BY id"
        ).fetchall()
        return sql, data
    finally:
        con.close()


@pytest.mark.parametrize(
    ("made_by", "layout"),
    [("state_v6_inline.db", "inline"), ("state_v5_external.db", "external")],
)
def test_an_existing_file_keeps_its_layout_and_is_not_rebuilt(
    tmp_path: Path, made_by: str, layout: str
) -> None:
    # state_v6_inline.db was written by main at e97dec0 (schema 6, the old inline default).
    path = tmp_path / "state.db"
    path.write_bytes((STORES / made_by).read_bytes())
    if made_by == "state_v6_inline.db":
        before = _index_state(path)
    with SessionStore(path, background_upkeep=False) as store:
        assert store.schema_version == len(migrations.MIGRATIONS)
        assert store.fts_layout == layout
        assert store.verify() == []
        hits = store.search_messages("researched")
        if made_by == "state_v6_inline.db":
            assert len(hits) == 20 and _index_state(path) == before
            assert [h["role"] for h in store.search_messages("数据库")] == ["assistant"]
        merging = store.database.query("SELECT k, v FROM messages_fts_config WHERE k != 'version'")
        assert {r["k"]: r["v"] for r in merging} == {"automerge": 0, "crisismerge": 16}
    with SessionStore(path, background_upkeep=False) as store:
        assert store.fts_layout == layout


def test_an_explicit_layout_still_switches_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.write_bytes((STORES / "state_v6_inline.db").read_bytes())
    with SessionStore(path, fts_layout="external") as store:
        assert store.fts_layout == "external" and store.verify() == []
        assert len(store.search_messages("kubernetes", limit=100)) == 60


def test_default_path_is_under_palimpsest_home(isolated_home: Path) -> None:
    assert default_db_path() == isolated_home / "state.db"
    with SessionStore() as store:
        assert store.path == isolated_home / "state.db"
    assert (isolated_home / "state.db").exists()


V1_SCHEMA = """
CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL);
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO migrations VALUES ('m001_initial', 0);
INSERT INTO schema_version VALUES (1);
CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT,
  model_config TEXT, system_prompt TEXT, parent_session_id TEXT REFERENCES sessions(id),
  started_at REAL NOT NULL, ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0,
  tool_call_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0,
  output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0,
  cache_write_tokens INTEGER DEFAULT 0, reasoning_tokens INTEGER DEFAULT 0,
  billing_provider TEXT, billing_base_url TEXT, billing_mode TEXT, estimated_cost_usd REAL,
  actual_cost_usd REAL, cost_status TEXT, cost_source TEXT, pricing_version TEXT, title TEXT,
  api_call_count INTEGER DEFAULT 0);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL, content TEXT,
  tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL,
  token_count INTEGER, finish_reason TEXT, reasoning TEXT, reasoning_content TEXT,
  reasoning_details TEXT, codex_reasoning_items TEXT, codex_message_items TEXT);
CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT);
INSERT INTO sessions (id, source, started_at, title, input_tokens, message_count)
  VALUES ('old', 'cli', 1000.0, 'Old work', 42, 2);
INSERT INTO messages (session_id, role, content, timestamp)
  VALUES ('old', 'user', 'please migrate the kubernetes cluster', 1001.0);
INSERT INTO messages (session_id, role, content, tool_name, tool_calls, timestamp)
  VALUES ('old', 'assistant', NULL, NULL,
          '[{"id":"c1","type":"function","function":{"name":"kubectl","arguments":"{}"}}]',
          1002.0);
"""


def test_migrates_a_version_1_database_and_keeps_its_data(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    con = apsw.Connection(str(path))
    con.execute(V1_SCHEMA)
    con.close()

    with SessionStore(path) as store:
        assert store.schema_version == len(migrations.MIGRATIONS)
        session = store.require_session("old")
        assert (session["title"], session["input_tokens"], session["message_count"]) == (
            "Old work",
            42,
            2,
        )
        assert session["compression_fallback_streak"] == 0
        messages = store.get_messages("old")
        assert messages[0] == {"role": "user", "content": "please migrate the kubernetes cluster"}
        assert messages[1]["tool_calls"][0]["function"]["name"] == "kubectl"
        assert store.verify() == []
    # The FTS tables were created and backfilled from the old rows.
    assert fts_ids(path, "messages_fts", "kubernetes") == [1]
    assert fts_ids(path, "messages_fts", "kubectl") == [2]
    # Latin-only rows stay out of the trigram index (only 3+ CJK-character queries use it).
    assert fts_ids(path, "messages_fts_trigram", '"bernet"') == []


def test_a_migration_and_its_record_commit_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.db"
    SessionStore(path).close()

    def m999_broken(con: apsw.Connection) -> None:
        con.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("migration failed halfway")

    monkeypatch.setitem(migrations.MIGRATIONS, "m999_broken", m999_broken)
    with pytest.raises(RuntimeError, match="halfway"):
        SessionStore(path)
    con = apsw.Connection(str(path))
    assert not con.execute("SELECT 1 FROM sqlite_master WHERE name = 'half_done'").fetchall()
    assert not con.execute("SELECT 1 FROM migrations WHERE name = 'm999_broken'").fetchall()
    assert con.execute("SELECT version FROM schema_version").fetchall() == [
        (len(migrations.MIGRATIONS) - 1,)
    ]
    con.close()


def test_a_database_from_a_newer_version_is_not_touched(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    SessionStore(path).close()
    con = apsw.Connection(str(path))
    con.execute("UPDATE schema_version SET version = 99")
    con.close()
    with pytest.raises(StorageError, match="newer palimpsest"):
        SessionStore(path)


def test_a_corrupt_file_raises_and_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    garbage = b"this is not a database" * 500
    path.write_bytes(garbage)
    with pytest.raises(DatabaseCorruptError) as caught:
        SessionStore(path)
    assert caught.value.path == str(path)
    assert str(path) in str(caught.value) and "Nothing was changed" in str(caught.value)
    assert "not an SQLite database" in str(caught.value) and "Move it aside" in str(caught.value)
    assert path.read_bytes() == garbage


def test_a_lock_held_past_the_retry_budget_raises_locked(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    retry = RetryPolicy(attempts=3, busy_timeout_ms=20, min_sleep=0.0, max_sleep=0.01)
    with SessionStore(path, retry=retry) as store:
        sid = store.create_session()
        other = apsw.Connection(str(path))
        other.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(DatabaseLockedError) as caught:
                store.append_message(sid, "user", "blocked")
            assert caught.value.path == str(path)
        finally:
            other.execute("ROLLBACK")
            other.close()
        store.append_message(sid, "user", "now it goes through")
        assert store.message_count(sid) == 1


def test_tracer_sees_every_statement(tmp_path: Path) -> None:
    seen: list[str] = []
    with SessionStore(tmp_path / "s.db", tracer=lambda sql, _: seen.append(sql)) as store:
        store.create_session("t1")
    assert any("BEGIN IMMEDIATE" in sql for sql in seen)
    assert any("INSERT OR IGNORE INTO sessions" in sql for sql in seen)


# -- full-text indexes -------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
def test_triggers_keep_both_indexes_in_sync(tmp_path: Path, layout: str) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path, fts_layout=layout) as store:  # type: ignore[arg-type]
        sid = store.create_session()
        first, second = store.append_messages(
            sid,
            [
                {"role": "user", "content": "deploy the walrus service 数据库迁移方案"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "shell", "arguments": '{"cmd": "deploy_prod_eu"}'},
                        }
                    ],
                },
            ],
        )
        for table, walrus, cjk in (
            ("messages_fts", "walrus", "walrus"),
            ("messages_fts_trigram", '"walrus"', '"数据库"'),
        ):
            assert fts_ids(path, table, walrus) == [first]
            assert fts_ids(path, table, cjk) == [first]
        assert fts_ids(path, "messages_fts", "deploy_prod_eu") == [second]
        assert fts_ids(path, "messages_fts", "shell") == [second]

        store.database.write(
            lambda con: con.execute(
                "UPDATE messages SET content = 'the penguin service 数据库' WHERE id = ?",
                (first,),
            )
        )
        for table in ("messages_fts", "messages_fts_trigram"):
            assert fts_ids(path, table, '"walrus"') == []
            assert fts_ids(path, table, '"penguin"') == [first]
        # An update that does not change the indexed text leaves the index alone.
        store.database.write(
            lambda con: con.execute("UPDATE messages SET active = 1 WHERE id = ?", (first,))
        )
        assert store.verify() == []

        store.database.write(lambda con: con.execute("DELETE FROM messages WHERE id = ?", (first,)))
        for table in ("messages_fts", "messages_fts_trigram"):
            assert fts_ids(path, table, '"penguin"') == []
        # The tool-call row has no CJK text, so only the word index holds it.
        assert fts_ids(path, "messages_fts_trigram", '"deploy_prod"') == []
        store.database.write(
            lambda con: con.execute("UPDATE sessions SET message_count = 1 WHERE id = ?", (sid,))
        )
        assert store.verify() == []


def test_switching_layout_rebuilds_and_keeps_search_working(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with SessionStore(path) as store:
        sid = store.create_session()
        store.append_messages(
            sid, [{"role": "user", "content": f"note {i} otter"} for i in range(50)]
        )
    with SessionStore(path, fts_layout="external") as store:
        assert store.fts_layout == "external"
        assert store.verify() == []
        assert len(store.search_messages("otter", limit=100)) == 50
    with SessionStore(path) as store:  # None keeps the file's layout
        assert store.fts_layout == "external"
    with SessionStore(path, fts_layout="inline") as store:
        assert store.fts_layout == "inline"
        assert len(store.search_messages("otter", limit=100)) == 50


@pytest.mark.parametrize("layout", LAYOUTS)
def test_verify_finds_a_damaged_index_and_rebuild_repairs_it(tmp_path: Path, layout: str) -> None:
    with SessionStore(tmp_path / "s.db", fts_layout=layout) as store:  # type: ignore[arg-type]
        sid = store.create_session()
        store.append_messages(sid, [{"role": "user", "content": f"line {i}"} for i in range(5)])
        store.database.write(
            lambda con: con.execute(
                "INSERT INTO messages_fts (rowid, content) VALUES (999, 'stale words')"
            )
        )
        assert store.verify() != []
        store.rebuild_fts()
        assert store.verify() == []
        assert [h["id"] for h in store.search_messages("line", limit=10)] != []


def test_search_messages_runs_on_the_read_connection(store: SessionStore) -> None:
    sid = store.create_session(title="Search me")
    store.append_message(sid, "user", "我们讨论了数据库迁移方案")
    store.append_message(
        sid,
        "assistant",
        "",
        tool_calls=[
            {
                "id": "c",
                "type": "function",
                "function": {"name": "x", "arguments": '{"t": "deploy_prod_eu"}'},
            }
        ],
    )
    hits = store.search_messages("deploy_prod_eu")
    assert [h["session_id"] for h in hits] == [sid]
    assert hits[0]["session_title"] == "Search me"
    assert [h["id"] for h in store.search_messages("数据库")] == [1]
    assert store.search_messages("deploy_prod_eu", exclude_session_ids=[sid]) == []


# -- sessions and messages ---------------------------------------------------------------


def test_create_is_insert_or_ignore_and_end_reason_first_wins(store: SessionStore) -> None:
    store.create_session("s1", "telegram", model="m1", model_config={"temperature": 0.1})
    store.ensure_session("s1", "cli", model="other")
    row = store.require_session("s1")
    assert (row["source"], row["model"], row["model_config"]) == (
        "telegram",
        "m1",
        {"temperature": 0.1},
    )
    assert store.end_session("s1", "compression") is True
    assert store.end_session("s1", "reset") is False
    assert store.require_session("s1")["end_reason"] == "compression"
    store.reopen_session("s1")
    assert store.require_session("s1")["ended_at"] is None
    assert store.get_session("missing") is None
    with pytest.raises(SessionNotFoundError):
        store.require_session("missing")
    with pytest.raises(SessionNotFoundError):
        store.append_message("missing", "user", "hi")


def test_counters_follow_the_spec(store: SessionStore) -> None:
    store.create_session("s1")
    store.append_message("s1", "user", "a")
    store.append_message("s1", "user", "b")
    assert store.require_session("s1")["message_count"] == 2
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        for i in range(2)
    ]
    store.append_messages(
        "s1",
        [
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_call_id": "c0", "content": "r0"},
            {"role": "tool", "tool_call_id": "c1", "content": "r1"},
        ],
    )
    assert store.require_session("s1")["tool_call_count"] == 2
    store.create_session("s2")
    store.append_message("s2", "tool", "alone", tool_call_id="x")
    assert store.require_session("s2")["tool_call_count"] == 0
    # A tool result without a name is indexed under the name of the call it answers,
    # also when it is appended on its own after the call...
    assert store.search_messages("r0")[0]["tool_name"] == "f"
    store.append_message(
        "s1",
        "assistant",
        None,
        tool_calls=[
            {"id": "c7", "type": "function", "function": {"name": "grep_repo", "arguments": "{}"}}
        ],
    )
    store.append_message("s1", "tool", "r7 found", tool_call_id="c7")
    hits = {h["role"]: h for h in store.search_messages("grep_repo")}
    assert set(hits) == {"assistant", "tool"} and hits["tool"]["tool_name"] == "grep_repo"
    # ... but exported exactly as it came in.
    assert store.get_messages("s1")[3] == {"role": "tool", "tool_call_id": "c0", "content": "r0"}


def test_token_counts_add_up_and_model_fills_only_once(store: SessionStore) -> None:
    store.update_token_counts("s1", 200, 100, model="first")
    store.update_token_counts("s1", 100, 50, model="second", estimated_cost_usd=0.25)
    row = store.require_session("s1")
    assert (row["input_tokens"], row["output_tokens"], row["model"]) == (300, 150, "first")
    assert row["source"] == "unknown" and row["estimated_cost_usd"] == 0.25
    store.record_usage(
        "s1",
        CanonicalUsage(
            input_tokens=10,
            output_tokens=5,
            cache_read_tokens=7,
            cache_write_tokens=3,
            reasoning_tokens=2,
        ),
        cost_usd=0.5,
    )
    row = store.require_session("s1")
    assert (row["input_tokens"], row["cache_read_tokens"], row["cache_write_tokens"]) == (310, 7, 3)
    assert (row["reasoning_tokens"], row["api_call_count"], row["estimated_cost_usd"]) == (
        2,
        1,
        0.75,
    )
    store.update_token_counts("s1", 1, 2, absolute=True)
    assert store.require_session("s1")["input_tokens"] == 1


def test_a_failed_batch_leaves_nothing_behind(store: SessionStore) -> None:
    sid = store.create_session()
    store.database.write(
        lambda con: con.execute(
            "CREATE TRIGGER boom BEFORE INSERT ON messages WHEN new.content = 'boom'"
            " BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
        )
    )
    batch = [{"role": "user", "content": "fine"}, {"role": "user", "content": "boom"}]
    with pytest.raises(apsw.ConstraintError, match="injected failure"):
        store.append_messages(sid, batch)
    assert store.message_count(sid) == 0
    assert store.require_session(sid)["message_count"] == 0
    assert store.search_messages("fine") == []
    with pytest.raises(ValueError, match="role"):
        store.append_messages(sid, [{"content": "no role"}])


def test_message_fields_round_trip(store: SessionStore) -> None:
    sid = store.create_session()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "be brief"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:x"}},
            ],
            "name": "ann",
        },
        {
            "role": "assistant",
            "content": "ok",
            "reasoning": "think",
            "reasoning_details": [{"type": "r"}],
            "finish_reason": "stop",
        },
        {
            "role": "user",
            "content": "summary",
            "_compressed_summary": True,
            "_compressed_summary_has_user_turn": False,
        },
        {"role": "tool", "tool_call_id": "c9", "name": "read_file", "content": "text"},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c9", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
    ]
    store.append_messages(sid, messages)
    assert store.get_messages(sid) == messages
    assert store.search_messages("read_file")[0]["tool_name"] == "read_file"


def test_titles_are_unique_and_sanitized(store: SessionStore) -> None:
    a = store.create_session(title="  hello\x00  world ")
    assert store.require_session(a)["title"] == "hello world"
    b = store.create_session()
    with pytest.raises(ValueError, match="already in use"):
        store.set_session_title(b, "hello world")
    assert store.set_session_title(a, "hello world") is True
    assert store.set_session_title(b, "") is True
    assert store.require_session(b)["title"] is None
    assert store.set_session_title("missing", "x") is False


def test_delete_orphans_children_and_prefix_resolution(store: SessionStore) -> None:
    store.create_session("20260101_000000_aaaaaa")
    store.create_session("20260101_000000_aaaabb", parent_session_id="20260101_000000_aaaaaa")
    store.append_message("20260101_000000_aaaaaa", "user", "bye")
    assert store.resolve_session_id("20260101_000000_aaaab") == "20260101_000000_aaaabb"
    assert store.resolve_session_id("20260101_000000_aaaa") is None  # ambiguous
    assert store.resolve_session_id("2026%") is None
    assert store.delete_session("20260101_000000_aaaaaa") is True
    assert store.get_session("20260101_000000_aaaabb")["parent_session_id"] is None  # type: ignore[index]
    assert store.message_count() == 0
    assert store.delete_session("20260101_000000_aaaaaa") is False


# -- compression continuations, lineage, listing -----------------------------------------


def build_chain(store: SessionStore) -> dict[str, str]:
    """A -> B -> C -> D by compression, plus a delegate S created while A was live."""
    a = store.create_session("A", "telegram", model="m", title="Build API", user_id="u1")
    store.append_messages(
        a,
        [{"role": "user", "content": "build the API"}, {"role": "assistant", "content": "A work"}],
    )
    s = store.create_session("S", "subagent", parent_session_id=a)
    store.append_message(s, "user", "delegated task")
    store.database.write(
        lambda con: con.execute(
            "UPDATE sessions SET compression_fallback_streak = 2 WHERE id = 'A'"
        )
    )
    ids = {"A": a, "S": s}
    parent = a
    for name in ("B", "C", "D"):
        seed = [
            {"role": "user", "content": f"[summary before {name}]", "_compressed_summary": True}
        ]
        ids[name] = store.start_continuation(parent, messages=seed, session_id=name)
        store.append_message(ids[name], "assistant", f"{name} work")
        parent = ids[name]
    return ids


def test_three_compressions_and_a_delegate(store: SessionStore) -> None:
    ids = build_chain(store)
    a, b = store.require_session("A"), store.require_session("B")
    assert a["end_reason"] == "compression"
    assert b["parent_session_id"] == "A" and b["started_at"] >= a["ended_at"]
    assert (b["source"], b["model"], b["user_id"]) == ("telegram", "m", "u1")
    assert b["compression_fallback_streak"] == 2
    titles = [store.require_session(n)["title"] for n in "ABCD"]
    assert titles == ["Build API", "Build API #2", "Build API #3", "Build API #4"]
    for start in ("A", "B", "C", "D"):
        assert store.get_compression_tip(start) == "D"
    assert store.get_compression_tip("S") == "S"
    assert store.get_compression_tip("unknown") == "unknown"
    # The delegate is in the family but never on the compression path.
    assert store.compression_chain("C") == ["A", "B", "C", "D"]
    assert set(store.lineage("C")) == {"A", "B", "C", "D", "S"}
    assert store.lineage_root("D") == "A" and store.lineage_root("S") == "A"
    assert ids["S"] not in store.compression_chain("A")


def test_a_live_delegate_created_after_the_parent_is_still_not_a_tip(store: SessionStore) -> None:
    store.create_session("P", title="Parent")
    store.create_session("X", parent_session_id="P")  # while P is live
    store.end_session("P", "reset")
    assert store.get_compression_tip("P") == "P"
    with pytest.raises(ValueError, match="already ended"):
        store.start_continuation("P")


def test_list_projects_each_chain_onto_its_tip(store: SessionStore) -> None:
    build_chain(store)
    store.record_usage("A", CanonicalUsage(input_tokens=100, output_tokens=10), cost_usd=1.0)
    store.record_usage("D", CanonicalUsage(input_tokens=50, output_tokens=5), cost_usd=0.5)
    time.sleep(0.001)
    other = store.create_session("E", title="Other")
    store.append_message(other, "user", "line one\nline two " + "x" * 80)
    rows = store.list_sessions()
    assert [r["id"] for r in rows] == ["E", "D"]
    tip = rows[1]
    assert tip["_lineage_root_id"] == "A"
    assert tip["started_at"] == store.require_session("A")["started_at"]
    assert tip["title"] == "Build API #4" and tip["message_count"] == 2
    assert tip["chain_length"] == 4
    assert (tip["input_tokens"], tip["estimated_cost_usd"], tip["total_tokens"]) == (150, 1.5, 165)
    assert tip["preview"] == "[summary before D]"
    assert rows[0]["preview"] == "line one line two " + "x" * 42 + "..."
    assert rows[0]["last_active"] >= rows[0]["started_at"]
    # Children come back on request; the source filter applies to roots.
    assert {r["id"] for r in store.list_sessions(include_children=True)} == set("ABCDES")
    assert [r["id"] for r in store.list_sessions(source="telegram")] == ["D"]
    assert [r["id"] for r in store.list_sessions(limit=1, offset=1)] == ["D"]


def test_branch_children_are_listed(store: SessionStore) -> None:
    store.create_session("P")
    store.end_session("P", "branched")
    store.create_session("BR", parent_session_id="P")
    assert {r["id"] for r in store.list_sessions()} == {"P", "BR"}


def test_chain_export_is_the_original_history(store: SessionStore) -> None:
    build_chain(store)
    exported = store.export_session("C", chain=True)
    assert [m["content"] for m in exported] == [
        "build the API",
        "A work",
        "B work",
        "C work",
        "D work",
    ]
    assert store.export_session("C")[0]["_compressed_summary"] is True
    with pytest.raises(SessionNotFoundError):
        store.export_session("nope")


# -- transcripts -------------------------------------------------------------------------


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.name)
def test_every_real_transcript_round_trips(store: SessionStore, path: Path) -> None:
    original = load_transcript(path)
    if transcript_problems(original):
        # A transcript compress would refuse is refused on import too (issue 20); the
        # refusal and --lenient are tested in test_storage_import_check.
        with pytest.raises(TranscriptError):
            store.import_transcript(path)
        return
    sid = store.import_transcript(path)
    assert store.export_session(sid) == original
    session = store.require_session(sid)
    assert session["source"] == "import" and session["title"] == path.name
    assert session["message_count"] == len(original)
    # Stored as JSON text it survives a dump and reload, too.
    assert json.loads(json.dumps(store.export_session(sid))) == original
    assert store.verify() == []


def test_importing_twice_numbers_the_title(store: SessionStore) -> None:
    path = TRANSCRIPTS[0]
    first = store.import_transcript(path)
    second = store.import_transcript(path, title=path.name, again=True)  # a copy on purpose
    assert store.require_session(second)["title"] == f"{path.name} #2"
    assert first != second


def test_a_bad_transcript_writes_nothing(store: SessionStore, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    from palimpsest.errors import TranscriptError

    with pytest.raises(TranscriptError):
        store.import_transcript(bad)
    assert store.session_count() == 0


def test_there_are_real_transcripts_to_round_trip() -> None:
    assert len(TRANSCRIPTS) >= 9


# -- SQLite builds without FTS5 or trigram (SS-08, SS-09) ------------------------------------


def test_a_build_without_fts5_still_stores_and_searches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(schema, "fts_support", lambda con: (False, False))
    with SessionStore(tmp_path / "s.db") as store:
        assert (store.has_fts5, store.has_trigram, store.fts_layout) == (False, False, None)
        sid = store.create_session()
        store.append_message(sid, "user", "the beaver builds a dam 数据库迁移")
        assert [h["session_id"] for h in store.search_messages("beaver")] == [sid]
        assert [h["session_id"] for h in store.search_messages("迁移")] == [sid]
        assert store.verify() == []


def test_a_missing_trigram_index_is_created_and_backfilled_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.db"
    with monkeypatch.context() as patched:
        patched.setattr(schema, "fts_support", lambda con: (True, False))
        with SessionStore(path) as store:
            sid = store.create_session()
            store.append_message(sid, "user", "我们讨论了数据库迁移方案")
            assert store.search_messages("数据库")[0]["session_id"] == sid  # via LIKE
            assert store.verify() == []
    assert fts_ids(path, "messages_fts", "walrus") == []
    with SessionStore(path) as store:  # a build with trigram: the index appears, filled
        assert store.has_trigram
        assert fts_ids(path, "messages_fts_trigram", '"数据库"') == [1]
        assert store.verify() == []


def test_resume_lands_on_the_tip_or_its_first_child_with_messages(store: SessionStore) -> None:
    build_chain(store)
    assert store.resume_target("A") == "D"
    # An empty continuation whose newest child holds the conversation (SS-36).
    store.start_continuation("D", session_id="E")  # no seed messages
    assert store.resume_target("A") == "E"
    store.create_session("F", parent_session_id="E")
    store.append_message("F", "user", "picked up here")
    assert store.resume_target("B") == "F"
    assert store.resume_target("unknown") == "unknown"


def test_search_messages_snippets_are_redacted_before_they_are_marked(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "state.db") as store:
        store.create_session("s", source="cli")
        store.append_message("s", "user", "config: password=hunter2abc for the staging box")
        hits = store.search_messages("password staging")
    assert hits and "hunter2abc" not in hits[0]["snippet"]
    assert ">>>staging<<<" in hits[0]["snippet"]


def test_last_message_time_is_the_newest_stored_message(store: SessionStore) -> None:
    store.create_session("s1", source="cli")
    assert store.last_message_time("s1") is None
    before = time.time()
    store.append_message("s1", "user", "hi")
    store.append_message("s1", "assistant", "hello")
    found = store.last_message_time("s1")
    assert found is not None and before - 1 <= found <= time.time() + 1
    assert store.last_message_time("nope") is None
