"""Running a word-index search: bounded BM25, ``auto`` widening, session metadata.

:func:`~.fts_query.build_search` writes the SQL; this module decides, against the data,
the two parameters that depend on it and merges what the steps return:

* **Candidates by rarity, not recency.** BM25 scoring is what makes a broad question slow
  (every matching row is read and scored). When the words of an ``any`` query match more
  than ``budget`` rows in all, the candidates are the rows holding the rarest words
  (added rarest first while their document counts fit the budget), and BM25 ranks those
  with every word of the query. An old message holding all the rare words is therefore
  always a candidate, however many newer messages hold the common ones. Only when even
  the rarest word (or an ``all``/typed query) matches more than ``budget`` rows are the
  newest ``budget`` of them ranked (``rowid >= floor``). Document counts are capped
  counts of FTS5 matches (``LIMIT budget + 1``): no scoring, no vocabulary table.
* **auto.** The ``all`` plan runs first; when it returns fewer than ``offset + limit``
  rows the ``any`` plan fills up (rows are merged by id and ordered by BM25, which is
  comparable because both plans rank the same phrases).
* **Session metadata.** Sessions whose title, start date (as words) or source match the
  query's words add their BM25 (:data:`SESSION_WEIGHT` times it) to the rank of their
  messages' hits, and in ``any``/``auto`` a matching session none of whose messages
  matched contributes its first message, so "what did we do in June" reaches June's
  sessions. Each hit carries ``session_rank`` (0.0 when its session did not match).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import apsw

from .query_terms import EXACT_FUNCTION, exact_match
from .search_plan import SEARCH_COLUMNS, SearchPlan
from .session_index import session_matches

__all__ = ["SESSION_WEIGHT", "choose_candidates", "prepare_connection", "run_word_plan"]

SESSION_WEIGHT = 1.0
"""How much a session-metadata BM25 counts next to a message's own BM25."""

SESSION_MATCHES = 50
"""At most this many matching sessions are read from the metadata index."""


def prepare_connection(con: apsw.Connection) -> None:
    """Register :data:`~.query_terms.EXACT_FUNCTION`, which word-index plans call."""

    def exact(*args: Any) -> int:
        return int(exact_match(args[0], args[1]))

    con.create_scalar_function(EXACT_FUNCTION, exact, 2, deterministic=True)


def _capped_count(con: apsw.Connection, table: str, match: str, cap: int) -> int:
    sql = f"SELECT count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ? LIMIT ?)"
    found: Any = con.execute(sql, (match, cap)).fetchall()[0][0]
    return int(found)


def _newest_floor(con: apsw.Connection, table: str, match: str, budget: int) -> int:
    sql = (
        f"SELECT COALESCE(MIN(rowid), 0) FROM (SELECT rowid FROM {table}"
        f" WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT ?)"
    )
    found: Any = con.execute(sql, (match, budget)).fetchall()[0][0]
    return int(found)


def choose_candidates(
    con: apsw.Connection, plan: SearchPlan, table: str = "messages_fts"
) -> tuple[str, int]:
    """``(match, floor)`` for ``plan``: the FTS5 query to rank and the lowest rowid kept."""
    budget = plan.budget
    if budget is None:
        return plan.match, 0
    cap = budget + 1
    match = plan.match
    terms = plan.terms
    known_small = False
    if plan.mode == "any" and terms is not None and len(terms.words) > 1:
        counts = {w: _capped_count(con, table, terms.match_any([w]), cap) for w in terms.words}
        if sum(counts.values()) <= budget:
            known_small = True
        else:
            rare: list[str] = []
            total = 0
            for word in sorted(terms.words, key=lambda w: counts[w]):
                if rare and total + counts[word] > budget:
                    break
                rare.append(word)
                total += counts[word]
            if len(rare) < len(terms.words):
                match = terms.match_candidates(rare)
            known_small = total <= budget
    if known_small or _capped_count(con, table, match, cap) <= budget:
        return match, 0
    return match, _newest_floor(con, table, match, budget)


def _execute(con: apsw.Connection, plan: SearchPlan, need: int) -> list[dict[str, Any]]:
    match, floor = choose_candidates(con, plan)
    params = (match, floor, *plan.params[2:-2], need, 0)
    return [dict(zip(SEARCH_COLUMNS, row, strict=True)) for row in con.execute(plan.sql, params)]


def _first_message(
    con: apsw.Connection, plan: SearchPlan, session_id: str
) -> dict[str, Any] | None:
    conditions = " AND ".join(["m.session_id = ?", *plan.filters])
    sql = (
        "SELECT m.id, m.session_id, m.role, substr(COALESCE(m.content, ''), 1, 120),"
        " m.timestamp, s.source, s.model, s.title, 0.0, m.tool_name, s.started_at"
        " FROM messages AS m JOIN sessions AS s ON s.id = m.session_id"
        f" WHERE {conditions} ORDER BY (m.role IN ('user', 'assistant')) DESC, m.id LIMIT 1"
    )
    found = con.execute(sql, (session_id, *plan.filter_params)).fetchall()
    return dict(zip(SEARCH_COLUMNS, found[0], strict=True)) if found else None


def run_word_plan(con: apsw.Connection, plan: SearchPlan) -> list[dict[str, Any]]:
    """Execute a word-index ``plan`` (see the module docstring); ranked hits, best first."""
    prepare_connection(con)
    limit, offset = int(plan.params[-2]), int(plan.params[-1])
    need = limit + offset
    if need <= 0:
        return []
    rows = _execute(con, plan, need)
    if plan.widen is not None and len(rows) < need:
        seen = {r["id"] for r in rows}
        rows += [r for r in _execute(con, plan.widen, need) if r["id"] not in seen]
    sessions = session_matches(con, plan.meta_match, SESSION_MATCHES)
    for row in rows:
        row["session_rank"] = sessions.get(str(row["session_id"]), 0.0)
        row["rank"] = float(row["rank"] or 0.0) + SESSION_WEIGHT * row["session_rank"]
    if sessions and plan.mode in ("any", "auto"):
        present = {str(r["session_id"]) for r in rows}
        for sid, rank in list(sessions.items())[:need]:
            if sid in present:
                continue
            first = _first_message(con, plan, sid)
            if first is not None:
                first["session_rank"] = rank
                first["rank"] = SESSION_WEIGHT * rank
                rows.append(first)
    rows.sort(key=lambda r: (r["rank"], -int(r["id"])))
    return rows[offset:need]


def with_limit(plan: SearchPlan, limit: int, offset: int = 0) -> SearchPlan:
    """``plan`` (and its ``widen`` plan) with another ``LIMIT``/``OFFSET``."""
    widen = plan.widen and with_limit(plan.widen, limit, offset)
    return dataclasses.replace(plan, params=(*plan.params[:-2], limit, offset), widen=widen)
