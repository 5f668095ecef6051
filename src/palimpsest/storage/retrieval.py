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
  counts of FTS5 matches (``LIMIT budget + 1``): no scoring, no vocabulary table. When the
  rare words' rows are fewer than asked for, the places left go to the best of the newest
  rows matching any word. The rank function itself is chosen in :mod:`.word_rank`.
* **auto.** The ``all`` plan runs first; when it returns fewer than ``offset + limit``
  rows the ``any`` plan fills the places left (rows are merged by id and ordered by
  BM25; an ``any`` plan restricted to its rarest words counts them twice, so its rows
  may score higher, but they only take the places the ``all`` rows left). When a capped count (no
  scoring) already shows fewer ``all`` rows than asked for and the ``any`` plan ranks
  every candidate, the ``any`` plan runs alone: its candidates include every ``all`` row,
  and ranking is the expensive step (FTS5's ``bm25()`` reads each phrase's whole document
  list for its IDF, once per ranked statement).
* **Session metadata.** Sessions whose title, start date (as words) or source match the
  query's words add their BM25 (:data:`SESSION_WEIGHT` times it) to the rank of their
  messages' hits, and in ``any``/``auto`` a matching session none of whose messages
  matched contributes its first message, so "what did we do in June" reaches June's
  sessions. Each hit carries ``session_rank`` (0.0 when its session did not match).
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any

import apsw

from .query_terms import EXACT_FUNCTION, exact_match
from .search_plan import SEARCH_COLUMNS, SearchPlan
from .session_index import session_matches
from .word_rank import frequencies_to_rank, newest_walks, ranked_sql, register_rank

__all__ = ["SESSION_WEIGHT", "choose_candidates", "prepare_connection", "run_word_plan"]

SESSION_WEIGHT = 1.0
"""How much a session-metadata BM25 counts next to a message's own BM25."""

SESSION_MATCHES = 50
"""At most this many matching sessions are read from the metadata index."""


WORD_TABLE = "messages_fts"

_PREPARED: weakref.WeakSet[apsw.Connection] = weakref.WeakSet()


def prepare_connection(con: apsw.Connection) -> None:
    """Register :data:`~.query_terms.EXACT_FUNCTION`, which word-index plans call.

    Once per connection: registering a function again expires every statement SQLite has
    prepared on the connection, so each search would prepare its SQL afresh.
    """
    if con in _PREPARED:
        return
    register_rank(con)

    def exact(*args: Any) -> int:
        return int(exact_match(args[0], args[1]))

    con.create_scalar_function(EXACT_FUNCTION, exact, 2, deterministic=True)
    _PREPARED.add(con)


def _capped_counts(con: apsw.Connection, table: str, matches: list[str], cap: int) -> list[int]:
    """How many rows match each FTS5 query in ``matches``, each count stopping at ``cap``."""
    return [count for count, _ in newest_walks(con, table, matches, cap)]


def _newest_floor(con: apsw.Connection, table: str, match: str, budget: int) -> int:
    """The rowid of the ``budget``-th newest match when more than ``budget`` rows match
    (rank only those from there on), else 0 (rank them all). Reads ``budget + 1`` rowids,
    newest first, in one statement."""
    sql = f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT 2 OFFSET ?"
    found: Any = con.execute(sql, (match, budget - 1)).fetchall()
    return int(found[0][0]) if len(found) == 2 else 0


def choose_candidates(
    con: apsw.Connection, plan: SearchPlan, table: str = WORD_TABLE
) -> tuple[str, int]:
    """``(match, floor)`` for ``plan``: the FTS5 query to rank and the lowest rowid kept."""
    budget = plan.budget
    if budget is None:
        return plan.match, 0
    match = plan.match
    terms = plan.terms
    if plan.mode == "any" and terms is not None and len(terms.words) > 1:
        found = _capped_counts(con, table, [terms.match_any([w]) for w in terms.words], budget + 1)
        counts = dict(zip(terms.words, found, strict=True))
        if sum(found) <= budget:
            return match, 0
        rare: list[str] = []
        total = 0
        for word in sorted(terms.words, key=lambda w: counts[w]):
            if rare and total + counts[word] > budget:
                break
            rare.append(word)
            total += counts[word]
        if len(rare) < len(terms.words):
            match = terms.match_candidates(rare)
        if total <= budget:
            return match, 0
    return match, _newest_floor(con, table, match, budget)


def _execute(
    con: apsw.Connection,
    plan: SearchPlan,
    need: int,
    chosen: tuple[str, int] | None = None,
) -> list[dict[str, Any]]:
    match, floor = chosen or choose_candidates(con, plan)
    params = (match, floor, *plan.params[2:-2], need, 0)
    dfs = None if plan.mode == "typed" else frequencies_to_rank(con, match)
    sql = ranked_sql(plan.sql, dfs)
    return [dict(zip(SEARCH_COLUMNS, row, strict=True)) for row in con.execute(sql, params)]


def _ranked_rows(con: apsw.Connection, plan: SearchPlan, need: int) -> list[dict[str, Any]]:
    """The plan's best ``need`` rows; in ``auto``, filled up from its ``widen`` plan.

    BM25 costs more than finding rows: FTS5's ``bm25()`` reads every phrase's whole
    document list once per statement (for its IDF), whatever the rowid window. So when
    fewer rows hold every term than are asked for (a capped count, no scoring), widening
    is certain, and if the ``any`` plan then ranks all its candidates (no window) those
    include every row the ``all`` plan would return, with the same filters and exact
    checks: the ``any`` plan runs alone, one ranked statement instead of two.
    """
    widen = plan.widen
    if widen is not None and _capped_counts(con, WORD_TABLE, [plan.match], need)[0] < need:
        chosen = choose_candidates(con, widen)
        if chosen[1] == 0:
            return _candidate_rows(con, widen, need, chosen)
    rows = _candidate_rows(con, plan, need)
    if widen is not None and len(rows) < need:
        # Fill up only the places left: a windowed ``any`` plan that ranks the rarest
        # word's phrases twice (see QueryTerms.match_candidates) scores its rows higher
        # than the ``all`` plan scores the same words, which must not push out an old row
        # holding every term.
        rows = _filled(rows, _candidate_rows(con, widen, need), need)
    return rows


def _candidate_rows(
    con: apsw.Connection, plan: SearchPlan, need: int, chosen: tuple[str, int] | None = None
) -> list[dict[str, Any]]:
    """The plan's ranked rows; when its candidates were only the rows holding the rarest
    words and those are fewer than ``need``, the places left go to the best of the newest
    rows matching any word (ranked after them): a question is never answered with one row
    because its other words are common."""
    chosen = chosen or choose_candidates(con, plan)
    rows = _execute(con, plan, need, chosen)
    if len(rows) < need and chosen[0] != plan.match:
        floor = _newest_floor(con, WORD_TABLE, plan.match, plan.budget or need)
        rows = _filled(rows, _execute(con, plan, need, (plan.match, floor)), need)
    return rows


def _filled(
    rows: list[dict[str, Any]], more: list[dict[str, Any]], need: int
) -> list[dict[str, Any]]:
    """``rows`` then the best of ``more`` not already there, up to ``need`` rows."""
    seen = {r["id"] for r in rows}
    fill = sorted(
        (r for r in more if r["id"] not in seen), key=lambda r: (r["rank"], -int(r["id"]))
    )
    return rows + fill[: need - len(rows)]


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
    rows = _ranked_rows(con, plan, need)
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
