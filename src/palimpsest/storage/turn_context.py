"""A turn scored with a share of the turn before it: the answer is found through its question.

In a dialogue the words a later question uses are often in the turn *before* the answer:
"How did you feel at the top of the mountain?" is matched by the turn that asked it, while
the turn that answers ("Awestruck, and humbled.") shares no word with it and says too
little for an embedding to place it. The same holds in an agent session ("which database
version did we settle on?" ... "16, with the pgvector image"). So after the word and
meaning scores are fused (:mod:`.fusion`), each candidate turn passes a share of its
score to the next turn of its session (the next one with text that the search's own
filters let through):

    score(turn) = fused(turn) + CONTEXT_WEIGHT * fused(previous turn)

where ``fused(previous turn)`` is the previous turn's own fused score (0 when it was not a
candidate). A turn that is not a candidate itself but follows one becomes a candidate with
only that share. What a hit returns is unchanged: the turn itself, its session, its role.
Sessions are still ranked by their turns' own scores (:func:`~.ranking.rank_sessions` leaves
the share, ``context``, out: it is the previous turn's evidence, counted there).

Both backends share this module: :func:`successor_sql` writes the one query (with ``?``
placeholders; ``pyformat=True`` gives psycopg's ``%s``) and :func:`with_context` is a pure
function over hit dicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .fts_query import session_date
from .search_plan import SEARCH_COLUMNS

__all__ = ["CONTEXT_WEIGHT", "REPLIES_ONLY", "add_context", "successor_sql", "with_context"]

CONTEXT_WEIGHT = 0.4
"""The share of a turn's fused score that the reply after it gets (0 = turns scored
alone). Chosen on the LoCoMo tuning set only (3 samples, 383 questions,
benchmarks/search_recall_locomo.py): turn any@5 63.4% at 0.0, 67.1 at 0.25, 68.7 at 0.4,
68.4 at 0.5, 67.9 at 0.6, 66.3 at 0.75, 63.7 at 1.0 (0.25, 0.75 and 1.0 measured before
:data:`REPLIES_ONLY`, which changed nothing at 0.5); 0.4 is the best and the only one of
them that keeps multi-hop turn any@5 where it was (56.8%). Checked, not tuned, on both
halves of benchmarks/search_recall.py --vectors (docs/benchmarks.md)."""

REPLIES_ONLY = True
"""Only a reply gets the share: a next turn of another role than the scored one (the
other speaker's answer, the assistant's reply to the user). Two turns of one speaker in a
row are usually two separate things said, not a question and its answer."""


def successor_sql(
    ids: Sequence[int], filters: Sequence[str], params: Sequence[Any], *, pyformat: bool = False
) -> tuple[str, list[Any]]:
    """The query for the next turn (with text, passing ``filters``: SQL over ``m`` =
    messages and ``s`` = sessions) after each of ``ids`` in its own session: rows of
    :data:`~.search_plan.SEARCH_COLUMNS` plus the previous turn's id."""
    conditions = " AND ".join(
        [
            "m.session_id = p.session_id",
            "m.timestamp >= p.timestamp",
            "m.id > p.id",
            "COALESCE(m.content, '') <> ''",
            *filters,
        ]
    )
    marks = ", ".join("?" for _ in ids)
    sql = (
        "SELECT m.id, m.session_id, m.role, '', m.timestamp, s.source, s.model, s.title,"
        " 0.0, m.tool_name, s.started_at, n.prev"
        " FROM (SELECT p.id AS prev, (SELECT m.id FROM messages AS m"
        " JOIN sessions AS s ON s.id = m.session_id"
        f" WHERE {conditions} ORDER BY m.timestamp, m.id LIMIT 1) AS next"
        f" FROM messages AS p WHERE p.id IN ({marks})) AS n"
        " JOIN messages AS m ON m.id = n.next JOIN sessions AS s ON s.id = m.session_id"
    )
    if pyformat:
        sql = sql.replace("?", "%s")
    return sql, [*params, *ids]


def with_context(
    hits: Sequence[Mapping[str, Any]],
    successors: Mapping[int, Mapping[str, Any]],
    weight: float | None = None,
) -> list[dict[str, Any]]:
    """``hits`` (fused: each has ``fused``) rescored with their previous turn's share and
    joined by the turns that follow them, best first.

    ``successors`` maps a hit's id to the hit dict of the next turn of its session. Every
    returned hit has ``fused`` (its new score), ``context`` (the share it got from the turn
    before it), ``rank = -fused`` and ``session_rank = 0.0``; ties keep the newer turn first.
    """
    share = CONTEXT_WEIGHT if weight is None else float(weight)
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"context weight must be within 0..1, got {share}")
    own = {int(h["id"]): float(h["fused"]) for h in hits}
    roles = {int(h["id"]): h.get("role") for h in hits}
    merged: dict[int, dict[str, Any]] = {int(h["id"]): dict(h) for h in hits}
    context: dict[int, float] = {}
    if share > 0.0:
        for prev, nxt in successors.items():
            if prev not in own or (REPLIES_ONLY and nxt.get("role") == roles.get(prev)):
                continue
            item = int(nxt["id"])
            if item not in merged:
                merged[item] = {**nxt, "similarity": nxt.get("similarity")}
            context[item] = context.get(item, 0.0) + share * own[prev]
    out = []
    for item, hit in merged.items():
        hit["context"] = context.get(item, 0.0)
        hit["fused"] = own.get(item, 0.0) + hit["context"]
        hit["rank"] = -hit["fused"]
        hit["session_rank"] = 0.0
        out.append(hit)
    out.sort(key=lambda h: (-h["fused"], -int(h["id"])))
    return out


def add_context(
    con: Any,
    hits: Sequence[Mapping[str, Any]],
    filters: Sequence[str] = (),
    params: Sequence[Any] = (),
    *,
    weight: float | None = None,
    pyformat: bool = False,
) -> list[dict[str, Any]]:
    """:func:`with_context` over ``hits`` with their successors read through ``con`` (an
    apsw connection, or a psycopg one with ``pyformat=True``: both have ``execute``)."""
    share = CONTEXT_WEIGHT if weight is None else float(weight)
    ids = [int(h["id"]) for h in hits]
    successors: dict[int, dict[str, Any]] = {}
    if ids and share > 0.0:
        sql, args = successor_sql(ids, filters, params, pyformat=pyformat)
        for row in con.execute(sql, args).fetchall():
            hit = dict(zip(SEARCH_COLUMNS, row[:-1], strict=True))
            hit["session_date"] = session_date(hit.get("session_started"))
            successors[int(row[-1])] = hit
    return with_context(hits, successors, share)
