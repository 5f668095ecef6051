"""Word hits and meaning hits merged into one ranking: one tuned weight, any backend.

Full-text search finds the turns that share the question's words; vector search
(:mod:`.vectors`) finds the turns closest in meaning, including those that share no word
with it ("which database version did we settle on" for a turn about "Postgres 16").
:func:`fuse_hits` merges the two candidate lists into one:

* the word score of a turn is its BM25 relevance times the share of the query's words it
  holds (*coverage*: a turn with the person, the topic and the detail beats one repeating
  two of them; Lucene's classic "coord" factor), plus its session's title/date BM25
  (``session_rank``, :mod:`.retrieval`), divided by the best one of the query, so the best
  word hit scores 1 and a turn the word search did not return scores 0;
* the meaning score is its cosine similarity rescaled over the meaning candidates, from
  0 (the least similar returned) to 1 (the most similar); a turn the vector search did
  not return scores 0;
* fused = ``(1 - weight) * words + weight * meaning``; ties keep the newer turn first.

Sessions are then ranked by their best turn (:func:`~.ranking.rank_sessions` over the
fused hits, which carry ``rank = -fused`` and no separate session score, as both are
already inside). Everything here is a pure function over hit dicts (``id``,
``session_id``, ``rank``, ``similarity``), so the SQLite store and a PostgreSQL store that
scores a float-array column in Python share it. :data:`FUSION_WEIGHT` was tuned on a
part of the recall benchmark's questions and checked on the rest (docs/search.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .retrieval import SESSION_WEIGHT

__all__ = ["FUSION_WEIGHT", "SEMANTIC_CANDIDATES", "fuse_hits", "fused_scores", "word_relevance"]

FUSION_WEIGHT = 0.2
"""How much the meaning score counts against the word score (0 = words only). Tuned on
the even-numbered conversations of benchmarks/search_recall.py (0.1 to 1.0 in steps of
0.1, word scores weighed by coverage; 0.2 and 0.3 tied best there, the smaller is kept)
and reported on the odd-numbered ones (docs/search.md)."""


SEMANTIC_CANDIDATES = 50
"""The vector search returns this many nearest turns per query."""


def fused_scores(
    lexical: Mapping[int, float], semantic: Mapping[int, float], weight: float
) -> dict[int, float]:
    """Fused score per turn id (see the module docstring).

    ``lexical``: id -> word relevance (higher is better, e.g. ``-bm25``); ``semantic``:
    id -> cosine similarity. Ids in either map get a score.
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"fusion weight must be within 0..1, got {weight}")
    best_word = max((v for v in lexical.values() if v > 0), default=0.0)
    low = min(semantic.values(), default=0.0)
    high = max(semantic.values(), default=0.0)
    spread = high - low
    out: dict[int, float] = {}
    for item in {*lexical, *semantic}:
        word = lexical.get(item, 0.0) / best_word if best_word > 0 and item in lexical else 0.0
        if item in semantic:
            meaning = (semantic[item] - low) / spread if spread > 0 else 1.0
        else:
            meaning = 0.0
        out[item] = (1.0 - weight) * max(word, 0.0) + weight * meaning
    return out


def word_relevance(hit: Mapping[str, Any], coverage: Mapping[int, float] | None) -> float:
    """A word hit's relevance (higher is better): its own BM25 times its coverage (the
    share of the query's words it holds; 1 when ``coverage`` does not know it), plus its
    session's metadata BM25."""
    session_rank = float(hit.get("session_rank") or 0.0)
    own = -float(hit.get("rank") or 0.0) + SESSION_WEIGHT * session_rank
    if coverage is not None:
        own *= coverage.get(int(hit["id"]), 1.0)
    return own - SESSION_WEIGHT * session_rank


def fuse_hits(
    word_hits: Sequence[Mapping[str, Any]],
    meaning_hits: Sequence[Mapping[str, Any]],
    weight: float = FUSION_WEIGHT,
    coverage: Mapping[int, float] | None = None,
) -> list[dict[str, Any]]:
    """One ranked list of hit dicts from both searches, best first.

    ``word_hits`` carry ``rank`` (BM25, lower is better, ``SESSION_WEIGHT *
    session_rank`` included) and ``session_rank``; ``meaning_hits`` carry ``similarity``;
    ``coverage`` maps a turn id to the share of the query's words the turn holds (0..1,
    the backend counts it in its word index: :func:`word_relevance`). A turn found by
    both keeps the word hit's fields. Every returned hit has ``fused`` (its score), ``rank = -fused`` and
    ``session_rank = 0.0`` (the session's own BM25 is already in the word score), so
    :func:`~.ranking.rank_sessions` ranks sessions by their best fused turn.
    """
    merged: dict[int, dict[str, Any]] = {}
    lexical: dict[int, float] = {}
    semantic: dict[int, float] = {}
    for hit in word_hits:
        item = int(hit["id"])
        merged.setdefault(item, dict(hit))
        lexical.setdefault(item, word_relevance(hit, coverage))
    for hit in meaning_hits:
        item = int(hit["id"])
        merged.setdefault(item, dict(hit))
        semantic[item] = float(hit["similarity"])
    scores = fused_scores(lexical, semantic, weight)
    out = []
    for item, hit in merged.items():
        hit["fused"] = scores[item]
        hit["similarity"] = semantic.get(item)
        hit["rank"] = -scores[item]
        hit["session_rank"] = 0.0
        out.append(hit)
    out.sort(key=lambda h: (-h["fused"], -int(h["id"])))
    return out
