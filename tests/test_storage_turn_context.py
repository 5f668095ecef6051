"""A turn scored with a share of the turn before it (:mod:`palimpsest.storage.turn_context`).

The store tests use a small embedding function of their own (the model boundary): one
dimension per concept, so the short answers below ("Awestruck, and humbled.") sit far
from the question in meaning as well as in words, as they do with a real model.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.storage import Store, open_store, turn_context
from palimpsest.storage.turn_context import successor_sql, with_context
from vector_helpers import concept_embedder

CONCEPTS = [
    {"mountain", "climb", "summit", "peak", "hike"},
    {"feel", "felt", "feeling", "happy", "sad"},
    {"car", "engine", "garage", "tyre"},
]


concepts = concept_embedder(CONCEPTS)


QUESTION = "How did Mel feel at the top of the mountain?"
DIALOGUE = [
    ("user", "Mel, how did you feel when you got to the top of the mountain?"),
    ("assistant", "Awestruck, and humbled."),
]
DISTRACTORS = [
    ("user", "The mountain road was closed, so Mel took the car to the garage."),
    ("assistant", "Mel said the top of the car needs a new coat of paint."),
    ("user", "I feel the engine is louder at the top of the hill."),
    ("assistant", "How did the tyre feel after the repair?"),
    ("user", "Mel walked to the top of the street."),
    ("assistant", "The mountain bike is in the garage."),
    ("user", "Did Mel feel the car pull to one side?"),
    ("assistant", "At the top of the list: fix the engine."),
]


@pytest.fixture(params=["sqlite", "postgresql"])
def dialogue(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Store, int]]:
    """A store of either backend holding the distractors and the climb dialogue, and the
    id of its short answer; nothing embeds in the background (a search catches up)."""
    if request.param == "sqlite":
        store = open_store(tmp_path / "s.db", embedder=concepts, background_upkeep=False)
    else:
        store = open_store(
            request.getfixturevalue("pg_url"), embedder=concepts, background_embedding=False
        )
    try:
        for i in range(0, len(DISTRACTORS), 2):
            store.create_session(f"d{i}", source="cli")
            store.append_messages(
                f"d{i}", [{"role": r, "content": t} for r, t in DISTRACTORS[i : i + 2]]
            )
        store.create_session("climb", source="cli")
        ids = store.append_messages("climb", [{"role": r, "content": t} for r, t in DIALOGUE])
        yield store, ids[1]
    finally:
        store.close()


def _top(store: Store, query: str, **kwargs: Any) -> list[int]:
    return [int(h["id"]) for h in store.search_messages(query, limit=5, **kwargs)]


def test_a_short_answer_is_found_through_the_question_before_it(
    dialogue: tuple[Store, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, answer = dialogue
    found = store.search_messages(QUESTION, limit=5)
    assert answer in [int(h["id"]) for h in found]
    hit = next(h for h in found if int(h["id"]) == answer)
    # what the hit returns is the answer turn itself
    assert hit["role"] == "assistant" and hit["session_id"] == "climb"
    assert "Awestruck" in hit["snippet"]
    monkeypatch.setattr(turn_context, "CONTEXT_WEIGHT", 0.0)
    assert answer not in _top(store, QUESTION)


def test_the_share_respects_the_search_filters(dialogue: tuple[Store, int]) -> None:
    store, answer = dialogue
    assert answer not in _top(store, QUESTION, role_filter="user")
    assert answer not in _top(store, QUESTION, exclude_session_ids=["climb"])
    assert answer in _top(store, QUESTION, role_filter="assistant")


def _hit(item: int, fused: float, role: str = "user", session: str = "a") -> dict[str, Any]:
    return {"id": item, "session_id": session, "role": role, "fused": fused, "rank": -fused}


def test_the_next_turn_joins_with_a_share_of_its_question() -> None:
    hits = [_hit(1, 1.0), _hit(5, 0.6), _hit(7, 0.55)]
    successors = {1: _hit(2, 0.0, "assistant"), 5: _hit(6, 0.0, "assistant")}
    got = with_context(hits, successors, 0.5)
    assert [h["id"] for h in got] == [1, 5, 7, 2, 6]
    assert got[3]["fused"] == pytest.approx(0.5) and got[3]["context"] == pytest.approx(0.5)
    assert all(h["rank"] == -h["fused"] and h["session_rank"] == 0.0 for h in got)
    # a reply that was a candidate itself adds its own score to the share
    got = with_context([*hits, _hit(2, 0.2, "assistant")], successors, 0.5)
    assert got[1]["id"] == 2 and got[1]["fused"] == pytest.approx(0.7)


def test_a_turn_of_the_same_speaker_gets_no_share() -> None:
    got = with_context([_hit(1, 1.0)], {1: _hit(2, 0.0, "user")}, 0.5)
    assert [h["id"] for h in got] == [1]


def test_weight_zero_changes_nothing_and_a_weight_out_of_range_is_refused() -> None:
    hits = [_hit(3, 0.9), _hit(1, 0.4)]
    got = with_context(hits, {3: _hit(4, 0.0, "assistant")}, 0.0)
    assert [(h["id"], h["fused"]) for h in got] == [(3, 0.9), (1, 0.4)]
    with pytest.raises(ValueError, match="context weight"):
        with_context(hits, {}, 1.5)


@given(
    st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12),
    st.floats(0.0, 1.0),
)
def test_no_turn_loses_score_and_the_order_is_by_score(scores: list[float], w: float) -> None:
    hits = [_hit(2 * i, s, "user") for i, s in enumerate(scores)]
    successors = {2 * i: _hit(2 * i + 1, 0.0, "assistant") for i in range(len(scores))}
    got = with_context(hits, successors, w)
    by_id = {h["id"]: h["fused"] for h in got}
    for i, s in enumerate(scores):
        assert by_id[2 * i] == pytest.approx(s)
        # weight 0 turns the feature off: the replies do not join the candidates
        assert by_id.get(2 * i + 1) == (pytest.approx(w * s) if w > 0 else None)
    assert [h["fused"] for h in got] == sorted((h["fused"] for h in got), reverse=True)


def test_the_query_is_written_for_either_driver() -> None:
    sql, params = successor_sql([4, 9], ["m.role IN (?)"], ["user"])
    assert sql.count("?") == 3 and params == ["user", 4, 9]
    pg, _ = successor_sql([4, 9], ["m.role IN (?)"], ["user"], pyformat=True)
    assert "?" not in pg and pg.count("%s") == 3
