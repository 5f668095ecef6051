"""Search by meaning on a real PostgreSQL server (:mod:`palimpsest.storage.pg_vectors`).

As in test_storage_vectors (the SQLite side), most tests use a small embedding function
of their own (the model boundary): one dimension per concept, so "database" and
"Postgres" are close while sharing no word. The paraphrase test uses the bundled model of
the ``[vectors]`` extra. Skipped without a server (see tests/conftest.py).
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import random
import time
from array import array
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.storage.pg_store import PostgresSessionStore
from palimpsest.storage.pg_vectors import nearest_ids
from palimpsest.storage.search import SessionSearch
from palimpsest.storage.vectors import pack
from vector_helpers import TOPICS, concept_embedder

concepts = concept_embedder(TOPICS)


def _store(url: str, embedder: Any = concepts, **kwargs: Any) -> PostgresSessionStore:
    return PostgresSessionStore(url, embedder=embedder, background_embedding=False, **kwargs)


def _count(store: PostgresSessionStore, sql: str, params: Any = None) -> int:
    return int(store.database.scalar(sql, params))


def _fill(store: PostgresSessionStore) -> dict[str, int]:
    ids = {}
    for sid, turns in {
        "db": ["Which one do we run?", "After the meeting we went with Postgres 16."],
        "pets": ["Lena adopted a small tabby kitten.", "Lovely, kittens are fun."],
        "trip": ["Flights to Lisbon got booked for August.", "Enjoy Portugal!"],
        "noise": ["Which release notes should I read?", "The ones for the new release."],
    }.items():
        store.create_session(sid, source="cli")
        got = store.append_messages(sid, [{"role": "user", "content": t} for t in turns])
        ids[sid] = got[1] if sid == "db" else got[0]
    return ids


def test_appends_do_not_embed_and_a_search_catches_up(pg_url: str) -> None:
    store = _store(pg_url)
    ids = _fill(store)
    assert _count(store, "SELECT count(*) FROM message_vectors") == 0
    assert store.vectors is not None and store.vectors.pending_count() == 8
    hits = store.search_messages("database release", limit=3)
    # the two "release" turns match a word; the Postgres turn shares none, found by meaning
    assert [h["id"] for h in hits][2] == ids["db"]
    assert hits[2]["similarity"] is not None and hits[2]["snippet"]
    assert store.vectors.pending_count() == 0
    store.close()
    with PostgresSessionStore(pg_url) as plain:
        words = [h["id"] for h in plain.search_messages("database release", limit=3)]
        assert ids["db"] not in words  # words alone cannot find it


def test_filters_and_offsets_apply_to_meaning_hits(pg_url: str) -> None:
    store = _store(pg_url)
    ids = _fill(store)
    assert ids["db"] not in [
        h["id"] for h in store.search_messages("database", exclude_session_ids=["db"])
    ]
    assert store.search_messages("database", role_filter="assistant") == []
    assert store.search_messages("database", source="telegram") == []
    first_two = [h["id"] for h in store.search_hits("database", limit=2)]
    assert [h["id"] for h in store.search_hits("database", limit=1, offset=1)] == first_two[1:]
    assert store.search_hits("database", limit=0) == []
    store.close()


def test_the_tool_ranks_the_conversation_by_its_best_turn(pg_url: str) -> None:
    store = _store(pg_url)
    _fill(store)
    payload = SessionSearch(store).search("which vehicle or pet did they get", limit=2)
    assert payload["success"] and payload["results"][0]["session_id"] == "pets"
    store.close()


def test_vectors_go_with_their_message_and_are_redone_when_the_text_changes(
    pg_url: str,
) -> None:
    store = _store(pg_url)
    ids = _fill(store)
    assert store.vectors is not None
    assert store.vectors.embed_pending() == 8
    read = "SELECT vector FROM message_vectors WHERE message_id = ?"
    before = store.database.scalar(read, (ids["pets"],))
    store.database.write(
        lambda con: con.execute(
            "UPDATE messages SET content = 'We bought an electric car.' WHERE id = ?",
            (ids["pets"],),
        )
    )
    assert store.vectors.pending_count() == 1
    assert store.vectors.embed_pending() == 1
    assert store.database.scalar(read, (ids["pets"],)) != before
    assert store.delete_session("trip")
    assert _count(store, "SELECT count(*) FROM message_vectors") == 6
    assert store.verify() == []
    store.close()


def test_the_background_thread_embeds_new_messages(pg_url: str) -> None:
    store = PostgresSessionStore(pg_url, embedder=concepts)
    assert store.vectors is not None and not store.vectors.running
    _fill(store)
    assert store.vectors.running  # an append started it
    deadline = time.monotonic() + 20
    while store.vectors.pending_count() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.vectors.pending_count() == 0
    store.close()
    assert not store.vectors.running


def test_a_failing_embedding_function_does_not_stop_appends(pg_url: str) -> None:
    def broken(texts: list[str]) -> list[list[float]]:
        raise RuntimeError("model server down")

    store = PostgresSessionStore(pg_url, embedder=broken)
    sid = store.create_session()
    for i in range(5):
        store.append_message(sid, "user", f"note {i}")
    assert store.message_count(sid) == 5
    assert store.vectors is not None
    deadline = time.monotonic() + 20
    while not store.vectors.errors and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.vectors.errors >= 1
    with pytest.raises(RuntimeError, match="model server down"):
        store.search_messages("note")  # a search says so instead of returning words only
    store.close()


def test_a_bad_embedder_fails_the_open(pg_url: str) -> None:
    with pytest.raises(ValueError, match="unknown embedding model"):
        PostgresSessionStore(pg_url, embedder="minilm")


def test_vectors_of_another_model_are_not_compared(pg_url: str) -> None:
    store = _store(pg_url)
    _fill(store)
    assert store.vectors is not None and store.vectors.embed_pending() == 8
    store.close()
    other = _store(pg_url, embedder=lambda texts: [[1.0, 0.0] for _ in texts])
    assert other.vectors is not None and other.vectors.pending_count() == 8
    with other.database.connection() as con:
        assert other.vectors.nearest(con, "database") == []  # none of its model yet
    other.close()


def test_only_the_newest_window_is_scored(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from palimpsest.storage import pg_vectors

    store = _store(pg_url)
    ids = _fill(store)
    assert store.vectors is not None
    store.vectors.embed_pending()
    monkeypatch.setattr(pg_vectors, "VECTOR_WINDOW", 2)  # the two "noise" turns only
    with store.database.connection() as con:
        near = store.vectors.nearest(con, "Postgres database")
    assert ids["db"] not in [h["id"] for h in near] and len(near) == 2
    store.close()


@pytest.mark.parametrize("numpy", [True, False])
@given(
    query=st.lists(st.integers(-9, 9).map(float), min_size=3, max_size=3),
    others=st.lists(st.lists(st.integers(-9, 9).map(float), min_size=3, max_size=3), max_size=8),
    limit=st.integers(0, 9),
)
def test_nearest_ids_are_the_closest_by_cosine_ties_newest_first(
    numpy: bool, query: list[float], others: list[list[float]], limit: int
) -> None:
    import sys

    packed = [pack(v) for v in others]
    ids = list(range(10, 10 + len(others)))
    saved = sys.modules.get("numpy")
    if not numpy:
        sys.modules["numpy"] = None  # type: ignore[assignment]  # import fails: the loop
    try:
        got = nearest_ids(pack(query), [*ids, 99], [*packed, pack([1.0, 2.0])], limit)
    finally:
        if not numpy:
            if saved is None:
                del sys.modules["numpy"]
            else:
                sys.modules["numpy"] = saved
    unit = array("f", pack(query)).tolist()
    cosine = {
        i: sum(a * b for a, b in zip(unit, array("f", blob).tolist(), strict=True))
        for i, blob in zip(ids, packed, strict=True)
    }
    assert 99 not in [i for i, _ in got]  # another width is never close
    assert len(got) == min(limit, len(ids))
    for i, score in got:
        assert score == pytest.approx(cosine[i], abs=1e-5)
    scores = [score for _, score in got]
    assert all(a >= b - 1e-6 for a, b in itertools.pairwise(scores))
    if got:  # nothing left out is clearly closer than the last one kept
        left = [cosine[i] for i in ids if i not in dict(got)]
        assert all(c <= got[-1][1] + 1e-5 for c in left)


needs_extra = pytest.mark.skipif(
    importlib.util.find_spec("wordllama") is None, reason="the [vectors] extra is not installed"
)

PARAPHRASES = Path(__file__).parent / "data" / "vectors" / "paraphrases.json"


@needs_extra
def test_paraphrased_questions_find_turns_that_share_no_word(pg_url: str) -> None:
    """The SQLite paraphrase test's data and bar, on PostgreSQL."""
    data = json.loads(PARAPHRASES.read_text())
    found = {}
    for embedder in (None, "bundled"):
        store = _store(pg_url, embedder=embedder)
        rng = random.Random(5)
        answers = {}
        turns = data["distractors"]
        for i in range(0, len(turns), 2):
            store.create_session(f"d{i}", source="cli")
            store.append_messages(
                f"d{i}", [{"role": "user", "content": t} for t in turns[i : i + 2]]
            )
        for j, pair in enumerate(data["pairs"]):
            store.create_session(f"p{j}", source="cli")
            filler = rng.choice(turns)
            got = store.append_messages(
                f"p{j}",
                [{"role": "user", "content": filler}, {"role": "user", "content": pair["answer"]}],
            )
            answers[j] = got[1]
        found[embedder] = sum(
            answers[j] in [h["id"] for h in store.search_messages(p["question"], limit=5)]
            for j, p in enumerate(data["pairs"])
        )
        for row in store.list_sessions(limit=1000):  # the next run starts empty
            store.delete_session(row["id"])
        store.close()
    assert found[None] == 0
    assert found["bundled"] >= 9, found  # as on SQLite (docs/search.md)
