"""Conversation ranking from message hits (a pure function over hit dicts)."""

from __future__ import annotations

from typing import Any

from palimpsest.storage.ranking import rank_sessions


def hit(session: str, rank: float, session_rank: float = 0.0, source: str = "cli") -> Any:
    return {"session_id": session, "rank": rank, "session_rank": session_rank, "source": source}


def test_spread_evidence_breaks_a_near_tie_but_the_best_hit_decides() -> None:
    near = [hit("one", -2.6), hit("spread", -2.5), hit("spread", -2.0), hit("spread", -1.0)]
    assert rank_sessions(near, lambda s: s) == [("spread", "spread"), ("one", "one")]
    clear = [hit("one", -3.0), hit("spread", -2.5), hit("spread", -2.0), hit("spread", -1.0)]
    assert rank_sessions(clear, lambda s: s) == [("one", "one"), ("spread", "spread")]


def test_many_weak_hits_do_not_beat_a_strong_one() -> None:
    hits = [hit("strong", -10.0), *[hit("weak", -1.0) for _ in range(20)]]
    assert [r for r, _ in rank_sessions(hits, lambda s: s)] == ["strong", "weak"]


def test_metadata_counts_once_and_roots_group_sessions() -> None:
    roots = {"a1": "a", "a2": "a", "b": "b"}
    hits = [hit("b", -2.0), hit("a2", -1.0 - 1.5, session_rank=-1.5), hit("a1", -0.5)]
    ranked = rank_sessions(hits, roots.__getitem__)
    # a: 1.0 + 0.1 * 0.5 + 1.5 (metadata, once) = 2.55 > b: 2.0; a's best hit is in a2
    assert ranked == [("a", "a2"), ("b", "b")]
    assert rank_sessions(hits, roots.__getitem__, skip_root="a") == [("b", "b")]


def test_ties_keep_hit_order_and_cron_follows() -> None:
    hits = [hit("c1", -1.0, source="cron"), hit("t", -1.0), hit("c2", -5.0, source="cron")]
    assert [r for r, _ in rank_sessions(hits, lambda s: s)] == ["t", "c2", "c1"]


def test_a_replys_share_of_the_turn_before_it_is_not_counted_again() -> None:
    # "qa": a question turn (2.0) and its reply, which holds only the question's share
    # (turn_context: rank -0.8, context 0.8); "two": two turns of its own (1.9, 1.5)
    reply = {**hit("qa", -0.8), "context": 0.8}
    hits = [hit("qa", -2.0), hit("two", -1.9), hit("two", -1.5), reply]
    # qa's own evidence is 2.0 alone, two's 1.9 + 0.1 * 1.5 = 2.05: two comes first;
    # were the share counted as evidence, qa would be 2.0 + 0.1 * 0.8 = 2.08, first
    assert [r for r, _ in rank_sessions(hits, lambda s: s)] == ["two", "qa"]
    without = [hit("qa", -2.0), hit("two", -1.9), hit("two", -1.5), hit("qa", -0.8)]
    assert [r for r, _ in rank_sessions(without, lambda s: s)] == ["qa", "two"]
