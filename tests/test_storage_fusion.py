"""Word and meaning hits fused into one ranking (:mod:`palimpsest.storage.fusion`)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.storage.fusion import fuse_hits, fused_scores, word_relevance
from palimpsest.storage.ranking import rank_sessions

ranks = st.dictionaries(st.integers(1, 60), st.floats(0.01, 40.0), max_size=12)
sims = st.dictionaries(st.integers(1, 60), st.floats(-1.0, 1.0), max_size=12)


@given(ranks, sims, st.floats(0.0, 1.0))
def test_every_score_is_between_zero_and_one_and_every_id_is_scored(
    lexical: dict[int, float], semantic: dict[int, float], weight: float
) -> None:
    scores = fused_scores(lexical, semantic, weight)
    assert set(scores) == set(lexical) | set(semantic)
    assert all(-1e-9 <= s <= 1.0 + 1e-9 for s in scores.values())


@given(ranks, sims)
def test_weight_zero_keeps_the_word_order_and_weight_one_the_meaning_order(
    lexical: dict[int, float], semantic: dict[int, float]
) -> None:
    words = fused_scores(lexical, semantic, 0.0)
    for a in lexical:
        for b in lexical:
            if lexical[a] > lexical[b]:
                assert words[a] >= words[b]
    meaning = fused_scores(lexical, semantic, 1.0)
    for a in semantic:
        for b in semantic:
            if semantic[a] > semantic[b]:
                assert meaning[a] >= meaning[b]


def test_a_turn_found_both_ways_beats_one_found_one_way() -> None:
    scores = fused_scores({1: 5.0, 2: 5.0}, {1: 0.8, 3: 0.8, 4: 0.1}, 0.5)
    assert scores[1] > scores[2] and scores[1] > scores[3]
    assert scores[4] == pytest.approx(0.0)  # the least similar meaning candidate


def test_a_weight_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match=r"within 0\.\.1"):
        fused_scores({1: 1.0}, {}, 1.5)


def _hit(mid: int, sid: str, **extra: float) -> dict[str, object]:
    return {"id": mid, "session_id": sid, "source": "cli", **extra}


def test_fused_hits_rank_sessions_by_their_best_turn() -> None:
    words = [_hit(1, "a", rank=-9.0, session_rank=0.0), _hit(2, "b", rank=-3.0)]
    meaning = [
        _hit(3, "c", similarity=0.9),
        _hit(2, "b", similarity=0.85),
        _hit(4, "a", similarity=0.1),
    ]
    fused = fuse_hits(words, meaning, 0.5)
    # 2: (3/9) * 0.5 + (0.75/0.8) * 0.5; 3: 0 + 1 * 0.5; 1: 1 * 0.5 + 0 (tie: newer first)
    assert [h["id"] for h in fused] == [2, 3, 1, 4]
    assert [h["fused"] for h in fused][:3] == pytest.approx([0.6354, 0.5, 0.5], abs=1e-3)
    assert all(h["rank"] == -h["fused"] and h["session_rank"] == 0.0 for h in fused)
    assert fused[2]["similarity"] is None  # a word-only hit has no similarity
    order = [sid for _, sid in rank_sessions(fused, lambda s: s)]
    assert order == ["b", "c", "a"]


def test_with_meaning_only_the_closest_turn_leads() -> None:
    fused = fuse_hits([], [_hit(7, "x", similarity=0.3), _hit(8, "y", similarity=0.6)], 0.1)
    assert [h["id"] for h in fused] == [8, 7]


def test_coverage_lets_the_turn_with_every_word_beat_one_repeating_some() -> None:
    # BM25 prefers 1 (two words, each twice), but 2 holds all four of the query's words
    words = [
        _hit(1, "a", rank=-11.5, session_rank=0.0),
        _hit(2, "b", rank=-8.2, session_rank=0.0),
        _hit(3, "c", rank=-2.0, session_rank=0.0),
    ]
    plain = fuse_hits(words, [], 0.1)
    assert [h["id"] for h in plain] == [1, 2, 3]
    covered = fuse_hits(words, [], 0.1, {1: 0.5, 2: 1.0})
    assert [h["id"] for h in covered] == [2, 1, 3]  # 3 is not in the map: left as it was
    assert covered[0]["fused"] == pytest.approx(0.9)
    assert covered[1]["fused"] == pytest.approx(0.9 * 5.75 / 8.2)


def test_coverage_scales_the_message_score_not_the_session_match() -> None:
    hit = _hit(1, "a", rank=-6.0 - 2.0, session_rank=-2.0)  # message 6, session 2
    assert word_relevance(hit, None) == pytest.approx(8.0)
    assert word_relevance(hit, {1: 0.5}) == pytest.approx(3.0 + 2.0)
    assert word_relevance(hit, {1: 0.0}) == pytest.approx(2.0)
