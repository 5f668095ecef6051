"""pg_search: BM25 on tsvector, candidates by rarity, literal forms, on a real server."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest import open_store
from palimpsest.errors import QueryError
from palimpsest.storage import Store, pg_search


@pytest.fixture
def store(pg_url: str) -> Store:
    opened = open_store(pg_url)
    yield opened  # type: ignore[misc]
    opened.close()


def _on_both(
    store: Store, tmp_path: Path, texts: list[str], query: str, match: str, limit: int
) -> dict[str, list[tuple[int, float]]]:
    """``texts`` as one session in ``store`` and in a fresh SQLite store, then ``query``
    on each: ``backend -> [(index of the hit's text, its rank), ...]``."""
    lite = open_store(tmp_path / "lite.db", background_upkeep=False)
    got = {}
    for name, opened in (("pg", store), ("sqlite", lite)):
        opened.create_session("s")
        ids = opened.append_messages("s", [{"role": "user", "content": t} for t in texts])
        hits = opened.search_hits(query, match=match, limit=limit)
        got[name] = [(ids.index(h["id"]), h["rank"]) for h in hits]
    lite.close()
    return got


def test_more_query_words_rank_higher(store: Store) -> None:
    store.create_session("s")
    ids = store.append_messages(
        "s",
        [
            {"role": "user", "content": "the cache was cold"},
            {"role": "user", "content": "the cache was cold and the zeppelin landed"},
            {"role": "user", "content": "a zeppelin had landed"},  # as long, in tokens
            *({"role": "user", "content": f"filler line {i}"} for i in range(20)),
        ],
    )
    hits = store.search_hits("zeppelin cache", match="any", limit=5)
    # both words first; then equal scores, newest first
    assert [h["id"] for h in hits[:3]] == [ids[1], ids[2], ids[0]]
    assert hits[0]["rank"] < hits[1]["rank"] == hits[2]["rank"] < 0
    common = store.search_hits("filler zeppelin", match="any", limit=30)
    assert common[0]["id"] == ids[2]  # the rarer word outweighs the common one


def test_document_length_is_counted_in_tokens_as_fts5_counts_it(
    store: Store, tmp_path: Path
) -> None:
    texts = [
        "thesis project thesis project for Kofi",  # few distinct words, repeated
        "Ingrid says the thesis project keeps her busy most evenings of the week",
        *(f"small talk number {i} about the garden" for i in range(20)),
    ]
    got = _on_both(store, tmp_path, texts, "Ingrid thesis project", "any", 2)
    ranks = {name: dict(hits) for name, hits in got.items()}
    # the same BM25 on both backends, repeated words and stopwords counted in the length
    assert ranks["pg"] == pytest.approx(ranks["sqlite"], rel=1e-6)


def test_an_old_rare_match_beats_the_window(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pg_search, "RANK_WINDOW", 10)
    store.create_session("s")
    old = store.append_message("s", "user", "the quokka deploy happened")
    store.append_messages("s", [{"role": "user", "content": f"deploy {i}"} for i in range(40)])
    hits = store.search_hits("quokka deploy", match="any", limit=3)
    assert hits[0]["id"] == old


def test_exact_forms_and_filters_apply_inside_the_window_as_on_sqlite(
    store: Store, tmp_path: Path
) -> None:
    # The window is the newest RANK_WINDOW rows holding the words (an exact form's words
    # too, as SQLite's MATCH holds them); the form itself is checked inside the window,
    # never used to reach further back (which walked the whole table at 1M messages).
    texts = [
        "deploy build_v1_2 went out",
        *(f"deploy build v1 2 number {i}" for i in range(pg_search.RANK_WINDOW + 49)),
        "deploy build_v1_2 again today",
    ]
    got = _on_both(store, tmp_path, texts, "deploy build_v1_2", "all", 5)
    assert [i for i, _ in got["pg"]] == [i for i, _ in got["sqlite"]] == [len(texts) - 1]


def test_literal_forms_are_found_even_when_split_differently(store: Store) -> None:
    store.create_session("s")
    glued = store.append_message("s", "user", "see x--dry-run.log for details")
    assert [h["id"] for h in store.search_hits("--dry-run")] == [glued]


def test_stopwords_only_and_bad_modes(store: Store) -> None:
    store.create_session("s")
    row = store.append_message("s", "user", "the and of")
    store.append_message("s", "user", "nothing shared")
    # indexed as FTS5 indexes them: a query of stopwords only is a word query
    hits = store.search_hits("the")
    assert [h["id"] for h in hits] == [row] and hits[0]["rank"] < 0
    with pytest.raises(QueryError):
        store.search_hits("x", match="some")


#: Texts on which the two backends ranked differently before the word index used
#: SQLite's tokenizer (each line says what PostgreSQL's ``english`` configuration did).
PARITY_TEXTS = [
    "I can help with that. What matters most to you here?",  # trailing stopwords lost
    "I can help with that matter.",
    "Ines looked at another apartment in Riverside",  # Porter: "Ines" and "in" are "in"
    "The meeting is in the morning, in the big room, in town",
    "we settled on release v2.3.1 after the 3.5 hotfix",  # one token each in PostgreSQL
    "the release after 3 or 5 weeks",
    "the follow-up call went fine",  # "follow-up" indexed whole beside its parts
    "follow the call up later",
    "the weather was fairly calm",  # Snowball: fairly -> fair; Porter: fairli
    "a fair price for the fair",
    "Kofi adopted a tortoise",  # the same text twice: ties go to the oldest row
    "Kofi adopted a tortoise",
    "Dalia adopted a beagle and a tortoise",
    *(f"small talk number {i} about the garden and the weather" for i in range(12)),
]

PARITY_QUERIES = [
    ("what matters here", "any", 2),
    ("help with that", "any", 2),
    ("What did Ines say about the apartment?", "auto", 2),
    ("release 5", "any", 2),  # not "3.5": an exact form (see docs/postgres.md)
    ("follow-up call", "any", 2),
    ("fair weather", "any", 2),
    ("Kofi adopted tortoise", "auto", 1),
    ("Which tortoise did Kofi adopt?", "auto", 3),
    ("garden weather fair", "auto", 3),
    ("who is it", "any", 2),
]


def test_rankings_match_sqlite_on_texts_that_split_them(store: Store, tmp_path: Path) -> None:
    lite = open_store(tmp_path / "lite.db", background_upkeep=False)
    got: dict[str, list[list[tuple[int, float]]]] = {}
    for name, opened in (("pg", store), ("sqlite", lite)):
        opened.create_session("s")
        ids = opened.append_messages("s", [{"role": "user", "content": t} for t in PARITY_TEXTS])
        got[name] = [
            [
                (ids.index(h["id"]), h["rank"])
                for h in opened.search_hits(query, match=match, limit=limit)
            ]
            for query, match, limit in PARITY_QUERIES
        ]
    lite.close()
    for (query, _, _), pg, sqlite in zip(PARITY_QUERIES, got["pg"], got["sqlite"], strict=True):
        assert [i for i, _ in pg] == [i for i, _ in sqlite], query
        assert [r for _, r in pg] == pytest.approx([r for _, r in sqlite], rel=1e-9), query
        assert sqlite, query  # every query finds something


def test_estimated_document_frequencies_match_sqlites(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from palimpsest.storage import word_rank

    # small thresholds: both backends estimate a common word's count from its newest
    # matches instead of counting them all (word_rank.document_frequencies)
    for module in (word_rank, pg_search):
        monkeypatch.setattr(module, "DF_SAMPLE", 8)
        monkeypatch.setattr(module, "OWN_RANK_FROM", 20)
    texts = [  # "deploy" in the newest 61 of 101 rows: estimated 101 (8 * 101 / 8)
        *(f"lunch plans number {i}" for i in range(40)),
        *(f"deploy {'ran fine' if i % 3 else 'failed'} on node {i}" for i in range(60)),
        "the deploy failed again on the quokka node",
    ]
    got = _on_both(store, tmp_path, texts, "quokka deploy failed", "any", 4)
    assert [i for i, _ in got["pg"]] == [i for i, _ in got["sqlite"]]
    assert [r for _, r in got["pg"]] == pytest.approx([r for _, r in got["sqlite"]], rel=1e-9)
    assert got["pg"][0][0] == len(texts) - 1
    monkeypatch.setattr(pg_search, "OWN_RANK_FROM", 10**9)  # exact counts: other scores
    exact = store.search_hits("quokka deploy failed", match="any", limit=4)
    assert exact[1]["rank"] != pytest.approx(got["pg"][1][1], rel=1e-6)
