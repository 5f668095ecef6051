"""Retrieval on a real store: each query shape of issue 11, match modes, bounded ranking."""

from __future__ import annotations

import dataclasses
import json
import string
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest.storage.fts_query import build_search, run_search
from palimpsest.storage.retrieval import choose_candidates, prepare_connection, with_limit
from palimpsest.storage.search import SessionSearch
from palimpsest.storage.sessions import SessionStore

JUNE_7_2023_NOON_UTC = 1686139200.0
MARCH_3_2024_NOON_UTC = 1709467200.0

DOCS: dict[str, tuple[str, str]] = {
    # key: (session, text)
    "researching": ("garden", "I was Researching heirloom tomato varieties all week"),
    "donated": ("garden", "we donated the spare seedlings to the school"),
    "team": ("work", "the team reviewed the roadmap on monday"),
    "followup": ("work", "schedule a follow up with the vendor"),
    "force": ("shell", "git push --force origin main was refused"),
    "bare_force": ("shell", "do not force the lid open"),
    "rf": ("shell", "then I ran rm -rf build to start over"),
    "rfless": ("shell", "the rf module needs a new antenna"),
    "pct": ("shell", "the disk was 100% full again"),
    "hundred": ("shell", "we counted 100 boxes"),
    "cpp": ("shell", "the parser is written in C++ with templates"),
    "c": ("shell", "the old parser was written in C"),
    "snake": ("shell", "rename the helper a_b to something clearer"),
    "ab": ("shell", "grade a b or c"),
    "dotted": ("shell", "edit my-app.config.ts and restart"),
    "spaced": ("shell", "my app config ts files"),
    "zh": ("shell", "我们讨论了数据库迁移方案"),
}


@pytest.fixture(scope="module")
def corpus(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[SessionStore, dict[str, int]]]:
    path = tmp_path_factory.mktemp("retrieval") / "state.db"
    with SessionStore(path) as store:
        store.create_session("garden", source="telegram", title="Allotment")
        store.create_session("work", source="cli", title="Quarterly planning")
        store.create_session("shell", source="cli", title="Shell notes")
        store.database.write(
            lambda con: con.execute(
                "UPDATE sessions SET started_at = CASE id WHEN 'garden' THEN ? ELSE ? END",
                (JUNE_7_2023_NOON_UTC, MARCH_3_2024_NOON_UTC),
            )
        )
        ids = {}
        for key, (sid, text) in DOCS.items():
            (ids[key],) = store.append_messages(sid, [{"role": "user", "content": text}])
        yield store, ids


CASES: list[tuple[str, str, set[str], set[str]]] = [
    # (query, mode, must be among hits, must not be among hits)
    ("research", "auto", {"researching"}, set()),  # stemming: query shorter than text
    ("researched tomatoes", "all", {"researching"}, set()),  # both words stemmed
    ("donate", "auto", {"donated"}, set()),
    ("donating", "all", {"donated"}, set()),
    ('"donate"', "auto", set(), {"donated"}),  # quoted: the exact form only
    ('"donated"', "auto", {"donated"}, set()),
    ('"Researching"', "all", {"researching"}, set()),
    ("What did the team review?", "auto", {"team"}, set()),  # stopwords are not evidence
    ("What did the team review?", "all", {"team"}, set()),
    ("team's roadmap", "all", {"team"}, set()),  # possessive
    ("follow-up", "all", {"followup"}, set()),  # hyphenated: words, not a phrase
    ("vendor's follow-up", "auto", {"followup"}, set()),
    ("--force", "auto", {"force"}, {"bare_force"}),
    ("force", "auto", {"force", "bare_force"}, set()),
    ("-rf", "any", {"rf"}, {"rfless"}),
    ("100%", "auto", {"pct"}, {"hundred"}),
    ("C++", "auto", {"cpp"}, {"c"}),
    ("a_b", "all", {"snake"}, {"ab"}),
    ("my-app.config.ts", "auto", {"dotted"}, {"spaced"}),
    ("数据库", "auto", {"zh"}, set()),  # CJK routing is kept
    ("迁移", "auto", {"zh"}, set()),
]


@pytest.mark.parametrize(("query", "mode", "wanted", "unwanted"), CASES)
def test_query_shapes(
    corpus: tuple[SessionStore, dict[str, int]],
    query: str,
    mode: str,
    wanted: set[str],
    unwanted: set[str],
) -> None:
    store, ids = corpus
    found = {h["id"] for h in store.search_messages(query, match=mode)}
    assert {ids[k] for k in wanted} <= found, query
    assert not found & {ids[k] for k in unwanted}, query


@pytest.mark.parametrize(
    ("query", "session"),
    [
        ("what did we do in June", "garden"),
        ("June 2023", "garden"),
        ("wednesday", "garden"),
        ("allotment", "garden"),
        ("telegram chats", "garden"),
        ("anything from March 2024", "shell"),
    ],
)
def test_session_metadata_is_searchable(
    corpus: tuple[SessionStore, dict[str, int]], query: str, session: str
) -> None:
    store, _ = corpus
    hits = store.search_messages(query)
    assert hits and hits[0]["session_id"] == session, query
    assert hits[0]["session_rank"] < 0
    # shown in results: the session's date as words (noon UTC: the same day in most zones)
    expected = "Wednesday, June 07, 2023" if session == "garden" else "Sunday, March 03, 2024"
    assert hits[0]["session_date"] == expected


def test_metadata_boosts_the_messages_of_matching_sessions(
    corpus: tuple[SessionStore, dict[str, int]],
) -> None:
    store, ids = corpus
    hits = store.search_messages("seedlings or tomato varieties in June", match="any")
    assert {h["id"] for h in hits[:2]} == {ids["researching"], ids["donated"]}
    assert all(h["session_rank"] < 0 for h in hits[:2])
    # the metadata match adds to the message's own BM25
    plain = store.search_messages("seedlings or tomato varieties", match="any")
    assert {h["id"]: h["rank"] for h in hits}[ids["donated"]] < {h["id"]: h["rank"] for h in plain}[
        ids["donated"]
    ]


def test_match_modes(corpus: tuple[SessionStore, dict[str, int]]) -> None:
    store, ids = corpus
    # all: every word; any: any word, BM25 puts the row with more of them first
    assert store.search_messages("vendor roadmap", match="all") == []
    either = [h["id"] for h in store.search_messages("vendor roadmap", match="any")]
    assert set(either) == {ids["followup"], ids["team"]}
    # auto: AND finds nothing for this short query, so any fills up
    auto = [h["id"] for h in store.search_messages("vendor roadmap")]
    assert set(auto) == set(either)
    # a long natural-language question goes straight to any
    plan = build_search("which vendor did the team schedule a follow up with on the roadmap")
    assert plan.mode == "any" and plan.widen is None
    # a short one tries all first and keeps any to widen with
    short = build_search("vendor roadmap")
    assert short.mode == "auto" and short.widen is not None and short.widen.mode == "any"
    with pytest.raises(Exception, match="unknown match mode"):
        build_search("x", match="most")  # type: ignore[arg-type]


def test_auto_keeps_and_when_it_finds_enough(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "state.db") as store:
        store.create_session("s")
        both = store.append_messages(
            "s", [{"role": "user", "content": f"kafka lag alert {i}"} for i in range(5)]
        )
        one = store.append_messages("s", [{"role": "user", "content": "kafka " * 20}])
        auto = [h["id"] for h in store.search_messages("kafka lag", limit=5)]
        assert set(auto) == set(both)  # AND filled the page; ANY never ran
        wider = [h["id"] for h in store.search_messages("kafka lag", limit=6)]
        assert set(wider) == {*both, *one}


def test_old_strong_match_beats_5000_newer_weak_matches(tmp_path: Path) -> None:
    """The recency window ranked only the newest 2,000 matches: an old answer was lost."""
    with SessionStore(tmp_path / "state.db") as store:
        store.create_session("old")
        (answer,) = store.append_messages(
            "old", [{"role": "user", "content": "the zanzibar quokka deploy notes are final"}]
        )
        store.create_session("new")
        store.append_messages(
            "new",
            [{"role": "user", "content": f"deploy notes for build {i}"} for i in range(5000)],
        )
        question = "where are the zanzibar quokka deploy notes"
        hits = store.search_messages(question, limit=5)
        assert hits[0]["id"] == answer
        # the candidates were chosen by the rare words, so nothing fell to a window
        plan = build_search(question)
        with store.connection_for_reads() as con:
            match, floor = choose_candidates(con, plan)
        assert floor == 0
        assert match == "(zanzibar OR quokka) AND (zanzibar OR quokka OR deploy OR notes)"
        tool = SessionSearch(store, None)
        payload = tool.search(question, limit=1)
        assert [r["session_id"] for r in payload["results"]] == ["old"]


def test_only_common_words_rank_the_newest_budget(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "state.db") as store:
        store.create_session("s")
        store.append_messages(
            "s", [{"role": "user", "content": f"deploy notes {i}"} for i in range(30)]
        )
        plan = build_search("deploy notes", match="any", rank_window=10)
        with store.connection_for_reads() as con:
            _match, floor = choose_candidates(con, plan)
            rows = run_search(con, plan)
        assert floor > 0 and len(rows) == 10
        assert all(int(r["id"]) >= floor for r in rows)


@pytest.mark.parametrize(("matches", "budget"), [(10, 10), (11, 10), (25, 10), (3, 1)])
def test_window_floor_at_the_budget_boundary(tmp_path: Path, matches: int, budget: int) -> None:
    """Exactly ``budget`` matches are all ranked (floor 0); one more, and the floor is the
    ``budget``-th newest match, so exactly ``budget`` rows are ranked."""
    with SessionStore(tmp_path / "state.db") as store:
        store.create_session("s")
        ids = store.append_messages(
            "s",
            [{"role": "user", "content": f"deploy {i}"} for i in range(matches)]
            + [{"role": "user", "content": "unrelated text"}],
        )[:matches]
        plan = build_search("deploy", match="all", rank_window=budget, limit=100)
        with store.connection_for_reads() as con:
            _match, floor = choose_candidates(con, plan)
            rows = run_search(con, plan)
        if matches <= budget:
            assert floor == 0 and len(rows) == matches
        else:
            assert floor == sorted(ids)[-budget]
            assert sorted(int(r["id"]) for r in rows) == sorted(ids)[-budget:]


def test_rare_words_are_counted_in_one_pass(tmp_path: Path) -> None:
    """Each word's capped count decides the candidates; counts above the budget are capped,
    and the rarest words are kept while their counts fit."""
    with SessionStore(tmp_path / "state.db") as store:
        store.create_session("s")
        rows = [{"role": "user", "content": f"alpha common {i}"} for i in range(4)]
        rows += [{"role": "user", "content": f"beta common {i}"} for i in range(5)]
        rows += [{"role": "user", "content": f"common filler {i}"} for i in range(40)]
        store.append_messages("s", rows)
        plan = build_search("alpha beta common", match="any", rank_window=10)
        with store.connection_for_reads() as con:
            match, floor = choose_candidates(con, plan)
            # alpha (4) + beta (5) fit in 10; common (49) does not
            assert match == "(alpha OR beta) AND (alpha OR beta OR common)"
            assert floor == 0
            narrow = build_search("alpha beta common", match="any", rank_window=8)
            match, floor = choose_candidates(con, narrow)
            assert match == "(alpha) AND (alpha OR beta OR common)"
            assert floor == 0


def test_prepare_connection_is_idempotent(tmp_path: Path) -> None:
    """Preparing the same connection again keeps the exact check working (it is
    registered once; registering again would expire every prepared statement)."""
    with SessionStore(tmp_path / "state.db") as store:
        store.create_session("s")
        (hit,) = store.append_messages("s", [{"role": "user", "content": "git push --force"}])
        store.append_messages("s", [{"role": "user", "content": "force of habit"}])
        with store.connection_for_reads() as con:
            for _ in range(3):
                prepare_connection(con)
                rows = run_search(con, build_search("--force"))
                assert [int(r["id"]) for r in rows] == [hit]


def test_session_ranking_finds_evidence_spread_over_a_session(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "state.db") as store:
        store.create_session("spread")
        store.append_messages(
            "spread",
            [
                {"role": "user", "content": "the greenhouse heater broke"},
                {"role": "user", "content": "ordered a greenhouse thermostat"},
                {"role": "user", "content": "greenhouse heater fixed with the thermostat"},
            ],
        )
        store.create_session("single")
        store.append_messages(
            "single", [{"role": "user", "content": "greenhouse heater thermostat"}]
        )
        for i in range(20):
            store.create_session(f"other{i}")
            store.append_messages(f"other{i}", [{"role": "user", "content": f"unrelated {i}"}])
        payload = SessionSearch(store, None).search("greenhouse heater thermostat", limit=2)
        # both conversations hold the evidence; the unrelated ones never outrank them
        assert {r["session_id"] for r in payload["results"]} == {"spread", "single"}
        assert json.loads(SessionSearch(store, None).run("greenhouse", match="bogus"))["success"]


_ALPHABET = st.sampled_from(
    [
        *(string.ascii_letters + string.digits + string.punctuation + " "),
        *["AND", "OR", "NOT", "NEAR(", '"', "'s", "-", "*", "数据库", "é", "\x00", "’"],
    ]
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=st.one_of(st.lists(_ALPHABET, max_size=20).map(" ".join), st.text(max_size=50)))
def test_any_query_runs_without_error(
    corpus: tuple[SessionStore, dict[str, int]], query: str
) -> None:
    store, _ = corpus
    with store.connection_for_reads() as con:
        prepare_connection(con)
        for mode in ("all", "any", "auto"):
            plan = build_search(query, match=mode, rank_window=2)  # type: ignore[arg-type]
            # no fallback: a syntax error must surface here, not turn into a LIKE scan
            assert isinstance(run_search(con, dataclasses.replace(plan, fallback=None)), list)


def test_a_query_of_hundreds_of_words_is_counted(tmp_path: Path) -> None:
    """Word counts go several to a statement; a 2,048-character query of distinct words
    (more than one statement's worth) still chooses candidates and runs."""
    with SessionStore(tmp_path / "state.db") as store:
        store.create_session("s")
        (hit,) = store.append_messages("s", [{"role": "user", "content": "w0 w1 w2 zzz"}])
        store.append_messages(
            "s", [{"role": "user", "content": f"w{i % 300} filler"} for i in range(40)]
        )
        query = " ".join(f"w{i}" for i in range(400))[:2048]
        plan = build_search(query, match="any", rank_window=100)
        assert plan.terms is not None and len(plan.terms.words) > 300
        with store.connection_for_reads() as con:
            # every word counted (43 matches in all, within the budget): rank them all
            assert choose_candidates(con, plan) == (plan.match, 0)
            rows = run_search(con, plan)
            narrow = dataclasses.replace(plan, budget=20)
            match, floor = choose_candidates(con, narrow)
        assert int(rows[0]["id"]) == hit
        assert match != plan.match and floor == 0  # the rarest words' rows, all ranked


def test_auto_keeps_an_old_and_row_when_the_widening_is_windowed(tmp_path: Path) -> None:
    """``auto`` ranks once when the any-term candidates hold every all-term row; when the
    any-term plan only ranks its newest rows, the old all-term row still comes back
    (before, the fill-up rows, scored with the rare word counted twice, pushed it out)."""
    with SessionStore(tmp_path / "state.db") as store:
        store.create_session("s")
        (old,) = store.append_messages("s", [{"role": "user", "content": "kafka lag spike"}])
        store.append_messages(
            "s",
            [{"role": "user", "content": f"kafka topic {i}"} for i in range(20)]
            + [{"role": "user", "content": f"lag in the ui {i}"} for i in range(20)],
        )
        windowed = build_search("kafka lag", limit=5, rank_window=8)
        exhaustive = build_search("kafka lag", limit=5, rank_window=None)
        with store.connection_for_reads() as con:
            assert windowed.widen is not None and exhaustive.widen is not None
            assert choose_candidates(con, windowed.widen)[1] > old  # newest rows only
            assert choose_candidates(con, exhaustive.widen)[1] == 0
            for plan in (windowed, exhaustive):
                ids = [int(r["id"]) for r in run_search(con, plan)]
                assert len(ids) == 5 and old in ids


def test_rare_word_candidates_are_filled_up_to_the_limit(tmp_path: Path) -> None:
    """The rarest word holds one row and the others are too common to rank them all: the
    rare row comes first and the newest rows holding the other words fill the places left
    (at 1M messages a question used to return that one row alone)."""
    with SessionStore(tmp_path / "state.db") as store:
        store.create_session("s")
        (old,) = store.append_messages(
            "s", [{"role": "user", "content": "we fixed the zorblax deploys by rotating keys"}]
        )
        store.append_messages(
            "s", [{"role": "user", "content": f"deploys went fine, step {i}"} for i in range(60)]
        )
        plan = build_search("how did we fix the zorblax deploys", match="any", rank_window=10)
        with store.connection_for_reads() as con:
            assert choose_candidates(con, plan)[0] != plan.match  # the rare word's rows only
            rows = run_search(con, with_limit(plan, 8))
    assert len(rows) == 8
    assert int(rows[0]["id"]) == old
    assert len({r["id"] for r in rows}) == 8
