"""Which past conversations answer a query best: message hits aggregated per conversation.

One strong message used to decide a session's place (its best hit). Evidence is often
spread over a conversation, though: the question's names in one turn, the fact in the
next. :func:`rank_sessions` scores a conversation (lineage root) by its best message
scores, weighted by :data:`SESSION_EVIDENCE_WEIGHTS` (the best decides), plus once the BM25 of its session's
title, date and source (``session_rank``, see :mod:`.retrieval`). The share a reply got
from the turn before it (``context``, :mod:`.turn_context`) is left out: it is that turn's
evidence, already counted. A pure function over hit dicts: no store, no SQL.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .retrieval import SESSION_WEIGHT
from .search_text import demote_cron

__all__ = ["SESSION_EVIDENCE_WEIGHTS", "rank_sessions"]

SESSION_EVIDENCE_WEIGHTS = (1.0, 0.1)
"""A conversation's best and second message scores count this much: the best decides, the
second breaks near-ties for evidence spread over turns. Measured on
benchmarks/search_recall.py at two sizes against (1.0,), (1.0, 0.5, 0.25) and
(1.0, 0.25, 0.1): heavier spread weights let a conversation with several partial matches
outrank the one holding the answer (session any@1 45.7% against 54.4% here at 1,480
questions; docs/benchmarks.md)."""


def rank_sessions(
    hits: Sequence[Mapping[str, Any]],
    root_of: Callable[[str], str],
    *,
    skip_root: str | None = None,
) -> list[tuple[str, str]]:
    """``(root, session id of its best hit)`` per conversation, best first.

    ``hits`` come ranked (``rank``: BM25, lower is better, already including
    ``SESSION_WEIGHT * session_rank``). Conversations whose root is ``skip_root`` are left
    out (SS-56); equal scores keep the hits' order; cron conversations follow the others
    (SS-58, a stable partition).
    """
    evidence: dict[str, list[float]] = {}
    meta: dict[str, float] = {}
    best: dict[str, Mapping[str, Any]] = {}
    for hit in hits:
        root = root_of(str(hit["session_id"]))
        if root == skip_root:
            continue
        session_rank = float(hit.get("session_rank") or 0.0)
        # a reply's share of the turn before it (turn_context) is that turn's evidence,
        # counted once already: only a turn's own score speaks for its conversation
        context = float(hit.get("context") or 0.0)
        message_rank = float(hit.get("rank") or 0.0) - SESSION_WEIGHT * session_rank + context
        evidence.setdefault(root, []).append(-message_rank)
        meta[root] = min(meta.get(root, 0.0), session_rank)
        best.setdefault(root, hit)
    order = {root: i for i, root in enumerate(best)}

    def score(root: str) -> float:
        top = sorted(evidence[root], reverse=True)
        spread = sum(w * s for w, s in zip(SESSION_EVIDENCE_WEIGHTS, top, strict=False))
        return spread - SESSION_WEIGHT * meta[root]

    ranked = sorted(best, key=lambda r: (-score(r), order[r]))
    return [
        (root_of(str(hit["session_id"])), str(hit["session_id"]))
        for hit in demote_cron([best[r] for r in ranked])
    ]
