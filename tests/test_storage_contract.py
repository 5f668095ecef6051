"""The store contract (palimpsest.storage.contract), run against every backend.

Each test takes the ``store`` fixture, parametrized over SQLite (a temp file) and
PostgreSQL (a fresh schema on the server of ``PALIMPSEST_TEST_PG_URL``; skipped with the
reason when there is none, failed under ``PALIMPSEST_REQUIRE_PG=1``). A behaviour that
holds on one backend and not the other fails here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest import open_store
from palimpsest.errors import SessionNotFoundError
from palimpsest.storage import SessionSearch, Store, VectorSearch
from palimpsest.storage.ranking import rank_sessions
from palimpsest.usage import CanonicalUsage

SECRET = "sk-proj-" + "Q7xv3LmN9pR2tY8wK4bZ6cH1jD5fG0aS"


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        opened = open_store(tmp_path / "state.db")
    else:
        opened = open_store(request.getfixturevalue("pg_url"))
    assert opened.backend == request.param
    try:
        yield opened
    finally:
        opened.close()


def _chat(store: Store, sid: str, *texts: str) -> list[int]:
    roles = ["user", "assistant"]
    return store.append_messages(
        sid, [{"role": roles[i % 2], "content": t} for i, t in enumerate(texts)]
    )


# -- sessions ---------------------------------------------------------------------------


def test_is_a_store(store: Store) -> None:
    assert isinstance(store, Store)
    assert store.schema_version >= 1
    assert not store.read_only


def test_create_is_idempotent_and_keeps_the_first_row(store: Store) -> None:
    sid = store.create_session("s1", source="telegram", model="m1", model_config={"t": 1})
    assert store.ensure_session("s1", source="cli", model="other") == "s1"
    row = store.require_session(sid)
    assert (row["source"], row["model"], row["model_config"]) == ("telegram", "m1", {"t": 1})
    assert store.get_session("nope") is None
    with pytest.raises(SessionNotFoundError):
        store.require_session("nope")
    with pytest.raises(SessionNotFoundError):
        store.create_session("child", parent_session_id="missing")


def test_titles_are_unique(store: Store) -> None:
    store.create_session("a", title="Build API")
    store.create_session("b")
    with pytest.raises(ValueError, match="already in use"):
        store.set_session_title("b", "Build API")
    assert store.set_session_title("b", "Other")
    assert store.set_session_title("b", "")  # clears
    assert store.require_session("b")["title"] is None


def test_end_reopen_delete(store: Store) -> None:
    store.create_session("p")
    store.create_session("c", parent_session_id="p")
    assert store.end_session("p", "user_exit")
    assert not store.end_session("p", "timeout")  # the first reason wins
    assert store.require_session("p")["end_reason"] == "user_exit"
    store.reopen_session("p")
    assert store.require_session("p")["ended_at"] is None
    store.update_system_prompt("p", "be brief")
    assert store.require_session("p")["system_prompt"] == "be brief"
    with pytest.raises(SessionNotFoundError):
        store.update_system_prompt("nope", "x")
    _chat(store, "p", "hello", "hi")
    assert store.delete_session("p")
    assert store.get_session("p") is None
    assert store.require_session("c")["parent_session_id"] is None  # orphaned, kept
    assert store.message_count() == 0


def test_counts_and_prefix_resolution(store: Store) -> None:
    store.create_session("20240101_000000_abcdef", source="cli")
    store.create_session("20240101_000000_123456", source="telegram")
    _chat(store, "20240101_000000_abcdef", "one", "two", "three")
    assert store.session_count() == 2
    assert store.session_count("telegram") == 1
    assert store.message_count() == 3
    assert store.message_count("20240101_000000_abcdef") == 3
    assert store.resolve_session_id("abc") == "20240101_000000_abcdef"
    assert store.resolve_session_id("2024") is None  # ambiguous
    assert store.require_session("20240101_000000_abcdef")["message_count"] == 3


# -- messages ---------------------------------------------------------------------------

MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": [{"type": "text", "text": "look"}], "name": "ann"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
        ],
        "reasoning": "thinking",
    },
    {"role": "tool", "tool_call_id": "c1", "content": "found it"},
    {"role": "assistant", "content": "done", "finish_reason": "stop", "vendor": {"x": [1]}},
]


def test_messages_round_trip_in_order(store: Store) -> None:
    store.create_session("s")
    ids = store.append_messages("s", MESSAGES)
    assert ids == sorted(ids) and len(set(ids)) == len(MESSAGES)
    assert store.get_messages("s") == MESSAGES
    one = store.append_message("s", "user", "and again", token_count=3)
    assert one > ids[-1]
    assert store.get_messages("s")[-1] == {"role": "user", "content": "and again"}
    assert store.require_session("s")["tool_call_count"] == 1
    assert store.append_messages("s", []) == []


def test_tool_results_are_found_by_their_calls_name(store: Store) -> None:
    store.create_session("s")
    store.append_messages("s", MESSAGES[:3])
    store.append_messages("s", [{"role": "tool", "tool_call_id": "c1", "content": "zzz"}])
    hits = store.search_messages("grep", role_filter="tool")
    assert [h["role"] for h in hits] == ["tool"]


def test_append_is_all_or_nothing(store: Store) -> None:
    with pytest.raises(SessionNotFoundError):
        store.append_messages("missing", [{"role": "user", "content": "x"}])
    store.create_session("s")
    with pytest.raises(ValueError):
        store.append_messages("s", [{"role": "user", "content": "x"}], token_counts=[1, 2])
    assert store.message_count() == 0


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    texts=st.lists(
        st.text(
            st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=40
        ),
        min_size=1,
        max_size=5,
    )
)
def test_any_text_comes_back_unchanged(store: Store, texts: list[str]) -> None:
    sid = store.create_session()
    batch = [{"role": "user", "content": t} for t in texts]
    store.append_messages(sid, batch)
    assert store.get_messages(sid) == batch


# -- lineage ----------------------------------------------------------------------------


def test_continuation_chain(store: Store) -> None:
    store.create_session("root", source="cli", title="Build API", model="m")
    _chat(store, "root", "first", "reply")
    child = store.start_continuation("root", messages=[{"role": "user", "content": "summary"}])
    parent = store.require_session("root")
    row = store.require_session(child)
    assert parent["end_reason"] == "compression"
    assert row["started_at"] >= parent["ended_at"]
    assert (row["title"], row["source"], row["model"]) == ("Build API #2", "cli", "m")
    assert store.seed_message_count(child) == 1
    assert store.get_messages(child) == [{"role": "user", "content": "summary"}]
    grandchild = store.start_continuation(child)
    assert store.compression_chain("root") == ["root", child, grandchild]
    assert store.compression_chain(child) == ["root", child, grandchild]
    assert store.get_compression_tip("root") == grandchild
    assert store.resume_target("root") == grandchild  # no descendant holds messages: the tip
    assert store.lineage_root(grandchild) == "root"
    assert store.lineage(child) == ["root", child, grandchild]
    assert [m["role"] for m in store.export_session(grandchild, chain=True)] == [
        "user",
        "assistant",
    ]
    listed = store.list_sessions()
    assert len(listed) == 1
    assert (listed[0]["id"], listed[0]["chain_length"]) == (grandchild, 3)
    assert listed[0]["_lineage_root_id"] == "root"
    assert len(store.list_sessions(include_children=True)) == 3
    store.end_session(grandchild, "user_exit")
    with pytest.raises(ValueError, match="already ended"):
        store.start_continuation(grandchild)


def test_subagents_and_branches_are_not_continuations(store: Store) -> None:
    store.create_session("p")
    store.create_session("sub", parent_session_id="p")
    store.end_session("p", "compression")
    assert store.get_compression_tip("p") == "p"
    assert set(store.lineage("sub")) == {"p", "sub"}


# -- accounting -------------------------------------------------------------------------


def test_token_accounting(store: Store) -> None:
    store.create_session("s")
    store.update_token_counts("s", input_tokens=10, output_tokens=5, estimated_cost_usd=0.5)
    store.update_token_counts("s", input_tokens=1, model="gpt", billing_provider="openai")
    store.update_token_counts("s", model="other")  # fills only an empty column
    store.record_usage("s", None)
    store.record_usage("s", CanonicalUsage(input_tokens=3, output_tokens=2), 0.25)
    row = store.require_session("s")
    assert (row["input_tokens"], row["output_tokens"]) == (14, 7)
    assert row["estimated_cost_usd"] == pytest.approx(0.75)
    assert (row["model"], row["billing_provider"]) == ("gpt", "openai")
    assert (row["api_call_count"], row["unreported_calls"]) == (2, 1)
    store.update_token_counts("new", input_tokens=1)  # a missing session is created
    assert store.require_session("new")["source"] == "unknown"
    store.update_token_counts("s", input_tokens=2, absolute=True)
    assert store.require_session("s")["input_tokens"] == 2


# -- search -----------------------------------------------------------------------------


def test_search_stems_and_modes(store: Store) -> None:
    store.create_session("a")
    store.create_session("b")
    _chat(store, "a", "We are deploying the billing service tonight", "fine")
    _chat(store, "b", "The billing dashboard is slow", "deploy tomorrow then")
    found = store.search_messages("deployed billing", match="all")
    assert [h["session_id"] for h in found] == ["a"]
    assert ">>>deploying<<<" in found[0]["snippet"]
    anyhits = store.search_messages("deployed billing", match="any")
    assert {h["session_id"] for h in anyhits} == {"a", "b"}
    assert anyhits[0]["session_id"] == "a"  # holds both words
    assert all(h["rank"] <= anyhits[-1]["rank"] for h in anyhits)
    auto = store.search_messages("deployed billing")
    assert auto[0]["session_id"] == "a" and len(auto) >= 3  # filled up from any
    assert store.search_messages("") == []
    assert store.search_messages("zebra") == []


def test_search_filters(store: Store) -> None:
    store.create_session("a", source="cli")
    store.create_session("b", source="tool")
    _chat(store, "a", "postgres upgrade plan", "postgres upgrade done")
    _chat(store, "b", "postgres upgrade from a tool")
    assert {h["role"] for h in store.search_messages("postgres", role_filter="user")} == {"user"}
    assert {h["session_id"] for h in store.search_messages("postgres", source="tool")} == {"b"}
    assert {h["session_id"] for h in store.search_messages("postgres", exclude_sources="tool")} == {
        "a"
    }
    assert {
        h["session_id"] for h in store.search_messages("postgres", exclude_session_ids=["a"])
    } == {"b"}
    assert len(store.search_messages("postgres", limit=1, offset=1)) == 1


def test_search_literal_and_cjk(store: Store) -> None:
    store.create_session("s")
    _chat(
        store,
        "s",
        "run it with --dry-run first",
        "pinned to v2.3.1 in the lockfile",
        "数据库迁移已经完成了",
        "something else entirely",
    )
    assert "v2.3.1" in store.search_messages("v2.3.1")[0]["snippet"]
    assert "dry" in store.search_messages("--dry-run")[0]["snippet"]
    cjk = store.search_messages("数据库迁移")
    assert len(cjk) == 1 and "数据库" in cjk[0]["snippet"]


def _topics(texts: list[str]) -> list[list[float]]:
    """A tiny embedding (the model boundary): one dimension per topic's words."""
    topics = [{"database", "postgres", "schema"}, {"pet", "kitten", "cat"}]
    return [
        [float(len(set(t.lower().replace(".", " ").split()) & words)) + 0.01 for words in topics]
        for t in texts
    ]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_search_by_meaning_finds_a_turn_that_shares_no_word(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    target = tmp_path / "m.db" if backend == "sqlite" else request.getfixturevalue("pg_url")
    with open_store(target, embedder=_topics) as meaning:
        assert meaning.backend == backend
        meaning.create_session("db", source="cli")
        meaning.create_session("pets", source="cli")
        meaning.append_messages("pets", [{"role": "user", "content": "We adopted a kitten."}])
        wanted = meaning.append_messages("db", [{"role": "user", "content": "We run Postgres."}])
        hits = meaning.search_messages("which database", limit=1)
        assert [h["id"] for h in hits] == wanted and hits[0]["similarity"] is not None
        payload = SessionSearch(meaning).search("which database", limit=1)
        assert [r["session_id"] for r in payload["results"]] == ["db"]
        assert (
            meaning.search_messages("which database", exclude_session_ids=["db"], limit=1)[0][
                "session_id"
            ]
            == "pets"
        )


@pytest.fixture(params=["sqlite", "postgresql"])
def meaning(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A store of either backend with the :func:`_topics` embedder and nothing embedding
    in the background, so the tests see exactly what is pending."""
    if request.param == "sqlite":
        opened = open_store(tmp_path / "m.db", embedder=_topics, background_upkeep=False)
    else:
        url = request.getfixturevalue("pg_url")
        opened = open_store(url, embedder=_topics, background_embedding=False)
    try:
        yield opened
    finally:
        opened.close()


def test_without_an_embedder_there_are_no_vectors(store: Store) -> None:
    assert store.vectors is None
    store.create_session("s", source="cli")
    _chat(store, "s", "We run Postgres.")
    hits = store.search_hits("postgres")
    assert hits and all(h.get("similarity") is None for h in hits)


def test_vectors_are_filled_off_the_append_path_and_caught_up_by_a_search(
    meaning: Store,
) -> None:
    index = meaning.vectors
    assert index is not None and isinstance(index, VectorSearch)
    assert index.model.name and 0.0 <= index.weight <= 1.0
    meaning.create_session("db", source="cli")
    _chat(meaning, "db", "We run Postgres.", "Sure.", "With a schema per tenant.")
    assert index.pending_count() == 3  # appends never embed
    assert index.embed_step(batch=2) == 2
    assert index.pending_count() == 1
    _chat(meaning, "db", "And a kitten in the office.")
    hits = meaning.search_hits("database", limit=5)  # a search embeds what is new first
    assert index.pending_count() == 0 and index.embed_pending() == 0
    assert hits[0]["similarity"] is not None


COVERAGE = json.loads((Path(__file__).parent / "data" / "vectors" / "coverage.json").read_text())


def test_with_vectors_the_turn_holding_more_of_the_question_leads(meaning: Store) -> None:
    ids = {}
    for sid, text in COVERAGE["turns"].items():
        meaning.create_session(sid, source="cli")
        ids[sid] = meaning.append_message(sid, "user", text)
    # words alone (BM25) put the turn repeating "thesis project" first; weighed by the
    # share of the question's words each turn holds, the one naming Ingrid too leads
    hits = meaning.search_hits(COVERAGE["question"], limit=2)
    assert [h["id"] for h in hits] == [ids["ingrid"], ids["kofi"]]


def test_session_dates_and_titles_are_searchable(store: Store) -> None:
    store.create_session("garden", source="telegram", title="Tomato garden")
    _chat(store, "garden", "what should I plant", "beans")
    store.create_session("other", source="cli")
    _chat(store, "other", "plant a server in the rack", "ok")
    month = datetime.fromtimestamp(store.require_session("garden")["started_at"]).strftime("%B")
    hits = store.search_messages(f"tomato {month}", match="any")
    assert hits and hits[0]["session_id"] == "garden"
    assert hits[0]["session_rank"] < 0
    assert {h["session_id"] for h in store.search_messages("telegram")} == {"garden"}


def test_snippets_are_redacted(store: Store) -> None:
    store.create_session("s")
    _chat(
        store,
        "s",
        f"my key is OPENAI_API_KEY={SECRET}",
        f"then I pasted {SECRET} again for the deploy",
    )
    hits = store.search_messages("deploy pasted")
    assert hits
    assert all(SECRET not in h["snippet"] for h in hits)
    assert SECRET in store.session_secrets(["s"])["s"]


def test_best_message_decides(store: Store) -> None:
    store.create_session("strong")
    store.create_session("spread")
    _chat(store, "strong", "kubernetes ingress certificate renewal failed", "ok")
    _chat(store, "spread", "kubernetes is fine", "the ingress is fine", "a certificate", "renewal")
    hits = store.search_hits("kubernetes ingress certificate renewal", match="any")
    ranked = rank_sessions(hits, lambda sid: sid)
    assert ranked[0][0] == "strong"
    assert all(h["snippet"] == "" for h in hits)


def test_session_search_tool(store: Store) -> None:
    store.create_session("old", source="cli", title="Redis outage")
    _chat(store, "old", "redis evicted keys under memory pressure", "raise maxmemory")
    store.create_session("me", source="cli")
    _chat(store, "me", "redis again?")
    tool = SessionSearch(store)
    result = json.loads(tool(query="redis maxmemory", current_session_id="me"))
    assert result["success"] and [r["session_id"] for r in result["results"]] == ["old"]
    assert "maxmemory" in result["results"][0]["preview"]
    recent = json.loads(tool(query="", current_session_id="me"))
    assert [r["session_id"] for r in recent["results"]] == ["old"]


# -- transcripts and maintenance ---------------------------------------------------------


def test_import_and_export(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([*MESSAGES[:2], {"role": "assistant", "content": "ok"}]))
    sid = store.import_transcript(path, title="notes")
    assert store.require_session(sid)["title"] == "notes"
    assert store.export_session(sid)[-1] == {"role": "assistant", "content": "ok"}
    again = store.import_transcript(path, title="notes", again=True)
    assert store.require_session(again)["title"] == "notes #2"


def test_verify_and_repair(store: Store) -> None:
    store.create_session("s")
    _chat(store, "s", "hello", "there")
    assert store.verify() == []
    store.database.write(
        lambda con: con.execute("UPDATE sessions SET message_count = 9 WHERE id = ?", ("s",))
    )
    assert any("s" in line for line in store.verify())
    assert store.repair()
    assert store.verify() == []
    assert store.require_session("s")["message_count"] == 2


def test_shared_gateway_takes_the_sqlite_dialect(store: Store) -> None:
    """The small key-value state of the agent goes through ``database`` on both backends."""
    store.database.write(
        lambda con: con.execute(
            "INSERT OR REPLACE INTO state_meta (key, value) VALUES (?, ?)", ("k", "1")
        )
    )
    store.database.write(
        lambda con: con.execute(
            "INSERT OR REPLACE INTO state_meta (key, value) VALUES (?, ?)", ("k", "2")
        )
    )
    store.database.write(
        lambda con: con.execute(
            "INSERT OR IGNORE INTO state_meta (key, value) VALUES (?, ?)", ("k", "3")
        )
    )
    assert store.database.scalar("SELECT value FROM state_meta WHERE key = ?", ("k",)) == "2"
    with store.database.reader() as con:
        assert (
            con.execute("SELECT count(*) FROM state_meta WHERE ? IS NULL", (None,)).fetchall()[0][0]
            >= 1
        )
