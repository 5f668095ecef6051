"""Search by meaning on real store files (:mod:`palimpsest.storage.vectors`).

Most tests use a small embedding function of their own (the model boundary: a caller may
pass any ``list[str] -> list[list[float]]``): each dimension is one concept, and a text's
vector counts its concept words, so "database" and "Postgres" are close while sharing no
word. The paraphrase test at the end uses the bundled model of the ``[vectors]`` extra.
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
import time
from pathlib import Path

import apsw
import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.storage.search import SessionSearch
from palimpsest.storage.sessions import SessionStore
from palimpsest.storage.upkeep import UpkeepPolicy
from palimpsest.storage.vectors import (
    DISTANCE_FUNCTION,
    _python_distance,
    load_vector_functions,
    pack,
    term_coverage,
    unpack,
)
from vector_helpers import TOPICS, concept_embedder

concepts = concept_embedder(TOPICS)


def _store(path: Path, **kwargs: object) -> SessionStore:
    return SessionStore(path, embedder=concepts, background_upkeep=False, **kwargs)  # type: ignore[arg-type]


def _fill(store: SessionStore) -> dict[str, int]:
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


def test_appends_do_not_embed_and_a_search_catches_up(tmp_path: Path) -> None:
    store = _store(tmp_path / "s.db")
    ids = _fill(store)
    assert store.database.scalar("SELECT count(*) FROM message_vectors") == 0
    assert store.vectors is not None and store.vectors.pending_count() == 8
    hits = store.search_messages("database release", limit=3)
    # the two "release" turns match a word; the Postgres turn shares none, found by meaning
    assert [h["id"] for h in hits][2] == ids["db"]
    assert hits[2]["similarity"] is not None and hits[2]["snippet"]
    assert store.vectors.pending_count() == 0
    store.close()
    with SessionStore(tmp_path / "s.db", background_upkeep=False) as plain:
        words = [h["id"] for h in plain.search_messages("database release", limit=3)]
        assert ids["db"] not in words  # words alone cannot find it


def test_filters_apply_to_meaning_hits(tmp_path: Path) -> None:
    store = _store(tmp_path / "s.db")
    ids = _fill(store)
    assert ids["db"] not in [
        h["id"] for h in store.search_messages("database", exclude_session_ids=["db"])
    ]
    assert store.search_messages("database", role_filter="assistant") == []
    store.close()


def test_the_tool_ranks_the_conversation_by_its_best_turn(tmp_path: Path) -> None:
    store = _store(tmp_path / "s.db")
    _fill(store)
    payload = SessionSearch(store).search("which vehicle or pet did they get", limit=2)
    assert payload["success"] and payload["results"][0]["session_id"] == "pets"
    store.close()


def test_vectors_go_with_their_message_and_are_redone_when_the_text_changes(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path / "s.db")
    ids = _fill(store)
    assert store.vectors is not None
    assert store.vectors.embed_pending() == 8
    before = store.database.scalar(
        "SELECT vector FROM message_vectors WHERE message_id = ?", (ids["pets"],)
    )
    store.database.write(
        lambda con: con.execute(
            "UPDATE messages SET content = 'We bought an electric car.' WHERE id = ?",
            (ids["pets"],),
        )
    )
    assert store.vectors.pending_count() == 1
    assert store.vectors.embed_pending() == 1
    after = store.database.scalar(
        "SELECT vector FROM message_vectors WHERE message_id = ?", (ids["pets"],)
    )
    assert before != after
    assert store.delete_session("trip")
    assert store.database.scalar("SELECT count(*) FROM message_vectors") == 6
    store.close()


def test_the_upkeep_thread_embeds_new_messages(tmp_path: Path) -> None:
    policy = UpkeepPolicy(start_after_writes=1, idle_seconds=0.05, wake_every_writes=1)
    store = SessionStore(tmp_path / "s.db", embedder=concepts, upkeep_policy=policy)
    _fill(store)
    assert store.vectors is not None
    deadline = time.monotonic() + 20
    while store.vectors.pending_count() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.vectors.pending_count() == 0
    store.close()


def test_a_failing_embedding_function_does_not_stop_appends(tmp_path: Path) -> None:
    def broken(texts: list[str]) -> list[list[float]]:
        raise RuntimeError("model server down")

    policy = UpkeepPolicy(start_after_writes=1, idle_seconds=0.05, wake_every_writes=1)
    store = SessionStore(tmp_path / "s.db", embedder=broken, upkeep_policy=policy)
    sid = store.create_session()
    for i in range(5):
        store.append_message(sid, "user", f"note {i}")
    assert store.message_count(sid) == 5
    assert store.upkeep is not None
    deadline = time.monotonic() + 20
    while not store.upkeep.stats.errors and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.upkeep.stats.errors >= 1
    with pytest.raises(RuntimeError, match="model server down"):
        store.search_messages("note")  # a search says so instead of returning words only
    store.close()


def test_vectors_of_another_model_are_not_compared(tmp_path: Path) -> None:
    store = _store(tmp_path / "s.db")
    _fill(store)
    assert store.vectors is not None and store.vectors.embed_pending() == 8
    store.close()
    other = SessionStore(
        tmp_path / "s.db",
        embedder=lambda texts: [[1.0, 0.0] for _ in texts],
        background_upkeep=False,
    )
    assert other.vectors is not None and other.vectors.pending_count() == 8
    other.close()


@given(
    st.lists(st.integers(-100, 100).map(float), min_size=3, max_size=3),
    st.lists(st.integers(-100, 100).map(float), min_size=3, max_size=3),
)
def test_packed_vectors_are_unit_length_and_both_distances_agree(
    a: list[float], b: list[float]
) -> None:
    pa, pb = pack(a), pack(b)
    ua = unpack(pa)
    if any(a):
        assert sum(x * x for x in ua) == pytest.approx(1.0, rel=1e-4)
    con = apsw.Connection(":memory:")
    if load_vector_functions(con) and any(a) and any(b):
        (native,) = con.execute(f"SELECT {DISTANCE_FUNCTION}(?, ?)", (pa, pb)).fetchone()
        assert _python_distance(pa, pb) == pytest.approx(native, abs=1e-5)


needs_extra = pytest.mark.skipif(
    importlib.util.find_spec("wordllama") is None, reason="the [vectors] extra is not installed"
)

PARAPHRASES = Path(__file__).parent / "data" / "vectors" / "paraphrases.json"


@needs_extra
def test_paraphrased_questions_find_turns_that_share_no_word(tmp_path: Path) -> None:
    """Hand-written, never used for tuning; the figure is in docs/search.md."""
    data = json.loads(PARAPHRASES.read_text())
    words = lambda text: set(re.findall(r"\w+", text.lower()))  # noqa: E731
    for pair in data["pairs"]:
        assert not words(pair["question"]) & words(pair["answer"]), pair["question"]
    found = {}
    for embedder in (None, "bundled"):
        store = SessionStore(
            tmp_path / f"{embedder}.db", embedder=embedder, background_upkeep=False
        )
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
        store.close()
    assert found[None] == 0
    assert found["bundled"] >= 9, found  # 9 of 12 at the shipped weight (docs/search.md)


COVERAGE = json.loads((Path(__file__).parent / "data" / "vectors" / "coverage.json").read_text())
COVERAGE_TURNS: dict[str, str] = COVERAGE["turns"]
COVERAGE_QUESTION: str = COVERAGE["question"]


def _coverage_store(store: SessionStore) -> dict[str, int]:
    ids = {}
    for sid, text in COVERAGE_TURNS.items():
        store.create_session(sid, source="cli")
        ids[sid] = store.append_message(sid, "user", text)
    return ids


def test_term_coverage_counts_the_question_words_each_turn_holds(tmp_path: Path) -> None:
    store = _store(tmp_path / "c.db")
    ids = _coverage_store(store)
    with store.database.reader() as con:
        got = term_coverage(con, COVERAGE_QUESTION, list(ids.values()))
        assert term_coverage(con, "violin lessons", [ids["kofi"]]) == {ids["kofi"]: 0.0}
        assert term_coverage(con, "", [ids["kofi"]]) == {}
    # words: topic, ingrid, thesis, project ("Ingrid's" is the word ingrid)
    assert got[ids["kofi"]] == 0.5 and got[ids["ingrid"]] == 0.75 and got[ids["other"]] == 0.0
    assert got[ids["ingrid0"]] == 0.25
    store.close()
