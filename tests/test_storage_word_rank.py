"""Our BM25 over the word index: FTS5's numbers where counts are exact, bounded walks beyond.

Against real FTS5 tables (``porter unicode61``, like ``messages_fts``): the function gives
FTS5's own ``bm25()`` values when it is handed exact document counts; the phrase list we
read from a query agrees with FTS5's phrase numbering for every query shape the planner
writes; counts are exact below the sample and extrapolated above it; and a search through
the store ranks the same rows first either way.
"""

from __future__ import annotations

import random
from pathlib import Path

import apsw
import pytest

from palimpsest.storage import word_rank
from palimpsest.storage.fts_query import build_search
from palimpsest.storage.retrieval import choose_candidates
from palimpsest.storage.sessions import SessionStore
from palimpsest.storage.word_rank import (
    RANK_FUNCTION,
    document_frequencies,
    frequencies_to_rank,
    fts5_idf,
    phrases_of,
    ranked_sql,
    register_rank,
)

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "lambda", "sigma"]


@pytest.fixture
def con() -> apsw.Connection:
    db = apsw.Connection(":memory:")
    db.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(content, tokenize='porter unicode61')")
    rng = random.Random(7)
    for _ in range(300):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 25)))
        db.execute("INSERT INTO messages_fts (content) VALUES (?)", (text,))
    register_rank(db)
    return db


def _counts(db: apsw.Connection, phrases: list[str]) -> list[float]:
    return [
        float(db.execute("SELECT count(*) FROM messages_fts(?)", (p,)).fetchall()[0][0])
        for p in phrases
    ]


@pytest.mark.parametrize(
    "match",
    [
        "alpha",
        "alpha beta",
        "alpha OR beta OR kappa",
        '"alpha beta" gamma',
        "(alpha OR zeta) AND theta",
    ],
)
def test_exact_counts_give_fts5_bm25_values(con: apsw.Connection, match: str) -> None:
    dfs = ", ".join(f"{df:.1f}" for df in _counts(con, phrases_of(match)))
    ours = con.execute(
        "SELECT rowid, rank FROM messages_fts WHERE messages_fts MATCH ?"
        f" AND rank MATCH '{RANK_FUNCTION}({dfs})' ORDER BY rowid",
        (match,),
    ).fetchall()
    theirs = con.execute(
        "SELECT rowid, bm25(messages_fts) FROM messages_fts WHERE messages_fts MATCH ?"
        " ORDER BY rowid",
        (match,),
    ).fetchall()
    assert ours and [r for r, _ in ours] == [r for r, _ in theirs]
    for (_, a), (_, b) in zip(ours, theirs, strict=True):
        assert a == pytest.approx(b, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(
    "query",
    [
        "alpha",
        "what did alpha say about beta",
        "Caroline's follow-up on gamma",
        "run --force with -rf",
        '"alpha beta" and kappa',
        "my-app.config.ts C++ 100% a_b",
        "and or not",
    ],
)
@pytest.mark.parametrize("mode", ["all", "any", "auto"])
def test_phrase_list_agrees_with_fts5_numbering(
    con: apsw.Connection, query: str, mode: str
) -> None:
    con.register_fts5_function("phrase_count", lambda api, *a: api.phrase_count)
    plan = build_search(query, match=mode, rank_window=2)  # type: ignore[arg-type]
    if plan.route != "fts" or plan.mode == "typed":
        pytest.skip("not a word-index plan of ours")
    matches = [plan.match, choose_candidates(con, plan)[0]]
    if plan.widen is not None:
        matches.append(plan.widen.match)
    for match in matches:
        found = con.execute(
            "SELECT phrase_count(messages_fts) FROM messages_fts WHERE messages_fts MATCH ?"
            " LIMIT 1",
            (match,),
        ).fetchall()
        if found:  # the query may match nothing here; the count is then never asked
            assert found[0][0] == len(phrases_of(match)), match


def test_counts_are_exact_below_the_sample_and_extrapolated_above(tmp_path: Path) -> None:
    db = apsw.Connection(str(tmp_path / "t.db"))
    db.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(content)")
    with db:
        for i in range(1, 6001):
            words = (
                ["filler"] + (["common"] if i % 3 == 0 else []) + (["rare"] if i % 600 == 0 else [])
            )
            db.execute(
                "INSERT INTO messages_fts (rowid, content) VALUES (?, ?)", (i, " ".join(words))
            )
    rare, common = document_frequencies(db, ["rare", "common"], sample=500)
    assert rare == 10.0  # fewer than the sample: exact
    assert common == pytest.approx(2000, rel=0.02)  # 500 in the newest 1,500 rows of 6,000
    assert document_frequencies(db, ["common"], sample=5000) == [2000.0]


def test_fts5_ranks_when_no_phrase_is_common(con: apsw.Connection) -> None:
    assert frequencies_to_rank(con, "alpha beta") is None  # 300 rows: FTS5's walks are short
    sql = "SELECT 1 WHERE messages_fts.rank MATCH 'bm25()'"
    assert ranked_sql(sql, None) == sql
    assert ranked_sql(sql, [12.0, 3.5]) == (
        f"SELECT 1 WHERE messages_fts.rank MATCH '{RANK_FUNCTION}(12.0, 3.5)'"
    )


def test_idf_is_fts5s_and_never_negative() -> None:
    assert fts5_idf(1000, 10) == pytest.approx(4.55, abs=0.01)
    assert fts5_idf(10, 9) == 1e-6 and fts5_idf(10, 10) == 1e-6


def test_the_store_ranks_the_same_rows_first_with_estimated_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a tiny sample every common word's count is estimated: the best rows stay first."""
    rng = random.Random(3)
    with SessionStore(tmp_path / "state.db") as store:
        store.create_session("s", source="cli")
        batch = []
        for i in range(3000):
            words = [rng.choice(WORDS) for _ in range(rng.randint(3, 30))]
            batch.append({"role": "user", "content": " ".join(words) + f" n{i}"})
        store.append_messages("s", batch)
        queries = ["alpha beta", "kappa sigma theta", "which gamma went with delta"]
        exact = {
            q: [h["id"] for h in store.search_messages(q, limit=5, match="any")] for q in queries
        }
        monkeypatch.setattr(word_rank, "DF_SAMPLE", 50)
        monkeypatch.setattr(word_rank, "OWN_RANK_FROM", 100)
        with store.connection_for_reads() as db:
            assert frequencies_to_rank(db, "alpha OR beta") is not None  # really estimated
        for q in queries:
            estimated = [h["id"] for h in store.search_messages(q, limit=5, match="any")]
            assert estimated[:3] == exact[q][:3], q
