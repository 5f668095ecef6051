"""Session search on PostgreSQL: the SQLite store's semantics on ``tsvector`` and ``pg_trgm``.

The hits have the SQLite search's shape and meaning (:data:`~.search_plan.SEARCH_COLUMNS`
plus ``session_rank`` and ``session_date``; ``rank`` lower is better), so everything
above the store (:mod:`.ranking`'s best-message-decides session scoring, redacted
snippets, the ``session_search`` tool) works unchanged. How a query runs:

* **Words** (``english`` stemming, stopwords dropped as :mod:`.query_terms` drops them)
  are looked up in the GIN index on ``messages.tsv``. ``all`` requires every word,
  ``any`` one of them, ``auto`` runs ``all`` and fills the places left from ``any``.
  Rows are scored with Okapi BM25 (k1 1.2, b 0.75, FTS5's IDF) over the query's
  lexemes, with document frequencies counted in the index (capped). A document's length
  is its number of tokens, as FTS5 counts it: the highest word position in its
  ``tsvector`` (positions count the stopwords the vector leaves out), not
  ``length(tsvector)``, its distinct lexemes, which made a message repeating its words
  shorter than FTS5 sees it and moved rankings apart (:func:`doc_length`).
* **Candidates by rarity**, as on SQLite (:mod:`.retrieval`): the rows holding the
  rarest words while their counts fit :data:`~.fts_query.RANK_WINDOW`, then the newest
  rows matching any word, so an old message holding the rare words is always ranked.
* **Exact forms** (``v2.3.1``, ``--dry-run``, ``node_modules``: what the query parser
  keeps as literal text) must appear literally (``ILIKE`` on the rows the words found).
* **CJK queries** go to the ``pg_trgm`` index of the CJK rows (``ILIKE`` per term), and
  punctuation-only ones to a plain ``ILIKE`` scan, newest first, as the SQLite trigram
  and LIKE routes do.
* **Session metadata** (title, start date as words, source; ``sessions.meta_tsv``)
  adds its BM25 to the session's hits, and in ``any``/``auto`` a matching session with no
  matching message contributes its first message.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import psycopg

from ..errors import QueryError
from .fts_query import (
    RANK_WINDOW,
    _like_terms,
    cjk_count,
    clean_query,
    route_for,
    session_date,
)
from .pg_schema import CJK_PATTERN, INDEXED_TEXT
from .query_terms import parse_terms
from .retrieval import SESSION_MATCHES, SESSION_WEIGHT
from .search_plan import SEARCH_COLUMNS
from .store_common import SearchFilters

__all__ = ["doc_length", "search_hits"]

DF_CAP = 100_000
"""Document frequencies are counted up to this many rows (an index-only count)."""

AVGDL_SAMPLE = 2_000
"""The average document length is taken over this many newest rows."""

_SELECT = (
    "SELECT m.id, m.session_id, m.role, '' AS snippet, m.timestamp, s.source, s.model,"
    " s.title AS session_title, {rank} AS rank, m.tool_name, s.started_at AS session_started"
    " FROM messages AS m JOIN sessions AS s ON s.id = m.session_id"
)
_COLUMNS = SEARCH_COLUMNS
_INDEXED_M = INDEXED_TEXT.replace("content", "m.content").replace("tool_", "m.tool_")


def _pg(where: Sequence[str]) -> list[str]:
    """The shared filter clauses (written with ``?``) for psycopg."""
    return [w.replace("?", "%s") for w in where]


def _like(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _tsquery_literal(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _lexemes(
    con: psycopg.Connection[Any], words: Sequence[str]
) -> tuple[list[str], list[int], list[int]]:
    """The distinct ``english`` lexemes of ``words`` in order (stopwords give none), and
    how many messages and how many sessions' metadata hold each (counted in the GIN
    indexes up to :data:`DF_CAP`): one round trip."""
    if not words:
        return [], [], []
    found = con.execute(
        "WITH x AS (SELECT u.lexeme, min(w.n) AS n"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS w(word, n),"
        " unnest(to_tsvector('english', w.word)) AS u GROUP BY u.lexeme)"
        " SELECT x.lexeme,"
        " (SELECT count(*) FROM (SELECT 1 FROM messages"
        "  WHERE tsv @@ quote_literal(x.lexeme)::tsquery LIMIT %s) AS c),"
        " (SELECT count(*) FROM (SELECT 1 FROM sessions"
        "  WHERE meta_tsv @@ quote_literal(x.lexeme)::tsquery LIMIT %s) AS c)"
        " FROM x ORDER BY x.n, x.lexeme",
        (list(words), DF_CAP, DF_CAP),
    ).fetchall()
    return (
        [str(r[0]) for r in found],
        [int(r[1]) for r in found],
        [int(r[2]) for r in found],
    )


_STATS: dict[tuple[str, str], tuple[float, int, float]] = {}
"""``(server, table) -> (when, rows, average document length)``, kept STATS_SECONDS."""

STATS_SECONDS = 30.0


def _stats(con: psycopg.Connection[Any], table: str, column: str) -> tuple[int, float]:
    """How many rows ``table`` has and the average length (:func:`doc_length`) of
    ``column`` over its newest :data:`AVGDL_SAMPLE` rows; cached for a few seconds, since
    both move slowly and BM25 needs only their size."""
    key = (f"{con.info.dsn} {con.info.parameter_status('search_path') or ''}", table)
    now = time.monotonic()
    cached = _STATS.get(key)
    if cached is not None and now - cached[0] < STATS_SECONDS:
        return cached[1], cached[2]
    order = "id" if table == "messages" else "rowid"
    row = con.execute(
        f"SELECT (SELECT GREATEST(reltuples, 0)::bigint FROM pg_class"
        f" WHERE oid = '{table}'::regclass), (SELECT avg({doc_length(column)}) FROM"
        f" (SELECT {column} FROM {table} ORDER BY {order} DESC LIMIT %s) AS t)",
        (AVGDL_SAMPLE,),
    ).fetchone()
    total = int(row[0]) if row and row[0] is not None else 0
    if total < 10_000:  # small or never analysed: count
        counted = con.execute(f"SELECT count(*) FROM {table}").fetchone()
        total = int(counted[0]) if counted else 0
    avgdl = float(row[1]) if row and row[1] is not None else 1.0
    _STATS[key] = (now, total, avgdl)
    return total, avgdl


def _idf(total: int, df: int) -> float:
    """FTS5's IDF, floored just above zero (a word in every row still counts a little)."""
    return max(1e-6, math.log((total - df + 0.5) / (df + 0.5)))


def doc_length(expression: str) -> str:
    """SQL for the token length of the ``tsvector`` ``expression``: its highest word
    position (``to_tsvector`` numbers every token, stopwords included, so this is FTS5's
    document length for the same text; capped at 16,383 by PostgreSQL), at least 1."""
    # positions are sorted within a lexeme: each lexeme's last one, no row per position
    return (
        f"GREATEST(1, COALESCE((SELECT max(d.positions[cardinality(d.positions)])"
        f" FROM unnest({expression}) AS d), 1))"
    )


def _bm25(alias: str, column: str) -> str:
    """SQL summing Okapi BM25 (k1 1.2, b 0.75) over the query lexemes a row holds.

    ``setweight`` marks the query's lexemes and ``ts_filter`` keeps only those (both in
    C), so each row unnests two or three entries, not its whole vector. Parameters: the
    lexemes, again the lexemes and their IDFs, the average document length.
    """
    tf = "array_length(u.positions, 1)"
    return (
        f"(SELECT COALESCE(sum(q.idf * ({tf} * 2.2) / ({tf} + 1.2 * (0.25 + 0.75 *"
        f" {doc_length(f'{alias}.{column}')} / GREATEST(%s, 1.0)))), 0.0)"
        f" FROM unnest(ts_filter(setweight({alias}.{column}, 'A', %s::text[]), '{{a}}')) AS u"
        " JOIN unnest(%s::text[], %s::float8[]) AS q(lexeme, idf) ON q.lexeme = u.lexeme)"
    )


def _rows(cursor: psycopg.Cursor[Any]) -> list[dict[str, Any]]:
    return [dict(zip(_COLUMNS, row, strict=True)) for row in cursor.fetchall()]


class _Query:
    """One search's parsed terms, lexeme weights and shared filters."""

    def __init__(
        self,
        con: psycopg.Connection[Any],
        text: str,
        where: list[str],
        params: list[Any],
    ) -> None:
        self.con = con
        terms = parse_terms(text)
        self.exact = [e for e in terms.exact if e]
        self.lexemes, self.dfs, self.meta_dfs = _lexemes(con, terms.words)
        total, self.avgdl = _stats(con, "messages", "tsv") if self.lexemes else (0, 1.0)
        self.idfs = [_idf(total, df) for df in self.dfs]
        self.where = _pg(where)
        self.params = list(params)
        for form in self.exact:
            self.where.append(f"{_INDEXED_M} ILIKE %s")
            self.params.append(_like(form))

    def tsquery(self, lexemes: Sequence[str], joiner: str) -> str:
        return f" {joiner} ".join(_tsquery_literal(x) for x in lexemes)

    def ranked(self, match: str, need: int, floor_newest: int | None) -> list[dict[str, Any]]:
        """BM25-ranked rows matching the tsquery ``match`` (the newest ``floor_newest``
        of them when given, else all), best ``need``."""
        rank = "-" + _bm25("m", "tsv")
        conditions = ["m.tsv @@ %s::tsquery", *self.where]
        inner = (
            f"SELECT m.id FROM messages AS m JOIN sessions AS s ON s.id = m.session_id"
            f" WHERE {' AND '.join(conditions)} ORDER BY m.id DESC"
        )
        params: list[Any] = [match, *self.params]
        if floor_newest is not None:
            inner += " LIMIT %s"
            params.append(floor_newest)
        sql = (
            _SELECT.format(rank=rank)
            + f" WHERE m.id IN ({inner}) ORDER BY rank, m.id DESC LIMIT %s"
        )
        cursor = self.con.execute(
            sql,
            (self.avgdl, self.lexemes, self.lexemes, self.idfs, *params, need),
        )
        return _rows(cursor)

    def run(self, mode: str, need: int) -> list[dict[str, Any]]:
        if not self.lexemes:
            return self.literal(need) if self.exact else []
        if mode == "all":
            return self.ranked(self.tsquery(self.lexemes, "&"), need, RANK_WINDOW)
        if mode == "any":
            return self.any(need)
        found = self.ranked(self.tsquery(self.lexemes, "&"), need, RANK_WINDOW)
        if len(found) < need:
            seen = {r["id"] for r in found}
            more = [r for r in self.any(need) if r["id"] not in seen]
            found += more[: need - len(found)]
        return found

    def any(self, need: int) -> list[dict[str, Any]]:
        """Candidates by rarity (see the module docstring), then the newest rows."""
        order = sorted(range(len(self.lexemes)), key=lambda i: self.dfs[i])
        rare: list[str] = []
        budget = 0
        for i in order:
            if budget + self.dfs[i] > RANK_WINDOW:
                break
            rare.append(self.lexemes[i])
            budget += self.dfs[i]
        everything = self.tsquery(self.lexemes, "|")
        if len(rare) == len(self.lexemes):
            return self.ranked(everything, need, None)
        found = self.ranked(self.tsquery(rare, "|"), need, None) if rare else []
        if len(found) < need:
            seen = {r["id"] for r in found}
            more = [r for r in self.ranked(everything, need, RANK_WINDOW) if r["id"] not in seen]
            found += more[: need - len(found)]
        return found

    def literal(self, need: int) -> list[dict[str, Any]]:
        """Rows holding every exact form, newest first (rank 0).

        The word index narrows the scan first (``plainto_tsquery`` of each form: the same
        parser split the stored text); only when that finds nothing is every row scanned,
        since a form glued to other characters may have been split differently there.
        """
        narrowed = [
            *self.where,
            *("m.tsv @@ plainto_tsquery('english', %s)" for _ in self.exact),
        ]
        for conditions, params in (
            (narrowed, [*self.params, *self.exact]),
            (self.where, self.params),
        ):
            sql = (
                _SELECT.format(rank="0.0")
                + f" WHERE {' AND '.join(conditions)} ORDER BY m.id DESC LIMIT %s"
            )
            found = _rows(self.con.execute(sql, (*params, need)))
            if found:
                return found
        return []

    def sessions(self) -> dict[str, float]:
        """``session id -> -BM25`` of the sessions whose metadata matches any word."""
        if not self.lexemes:
            return {}
        total, avgdl = _stats(self.con, "sessions", "meta_tsv")
        idfs = [_idf(total, df) for df in self.meta_dfs]
        found = self.con.execute(
            f"SELECT s.id, -{_bm25('s', 'meta_tsv')} AS r FROM sessions AS s"
            " WHERE s.meta_tsv @@ %s::tsquery ORDER BY r, s.rowid DESC LIMIT %s",
            (
                avgdl,
                self.lexemes,
                self.lexemes,
                idfs,
                self.tsquery(self.lexemes, "|"),
                SESSION_MATCHES,
            ),
        ).fetchall()
        return {str(sid): float(r) for sid, r in found}

    def first_message(self, session_id: str) -> dict[str, Any] | None:
        conditions = ["m.session_id = %s", *self.where]
        sql = (
            _SELECT.format(rank="0.0")
            + f" WHERE {' AND '.join(conditions)}"
            + " ORDER BY (m.role IN ('user', 'assistant')) DESC, m.id LIMIT 1"
        )
        found = _rows(self.con.execute(sql, (session_id, *self.params)))
        return found[0] if found else None


def _trigram(
    con: psycopg.Connection[Any],
    terms: Sequence[str],
    where: list[str],
    params: list[Any],
    need: int,
    cjk: bool = False,
) -> list[dict[str, Any]]:
    """Rows holding every term literally, newest first; ``cjk`` adds the trigram index's
    predicate (only rows with CJK text are in it) so the planner can use the index."""
    conditions = [*_pg(where)] + [f"{_INDEXED_M} ILIKE %s" for _ in terms]
    if cjk:
        conditions.append(f"{_INDEXED_M} ~ '{CJK_PATTERN}'")
    sql = (
        _SELECT.format(rank="0.0")
        + f" WHERE {' AND '.join(conditions)} ORDER BY m.id DESC LIMIT %s"
    )
    cursor = con.execute(sql, (*params, *(_like(t) for t in terms), need))
    return _rows(cursor)


def search_hits(
    con: psycopg.Connection[Any], query: str, filters: SearchFilters
) -> list[dict[str, Any]]:
    """Ranked hits for ``query``, best first (see the module docstring); no snippets."""
    match = filters.match
    if match not in ("all", "any", "auto"):
        raise QueryError(f"unknown match mode {match!r}; use all, any or auto")
    limit, offset = max(0, int(filters.limit)), max(0, int(filters.offset))
    need = limit + offset
    text = clean_query(query)
    route = route_for(text)
    if need <= 0 or route == "none":
        return []
    where, params = filters.conditions()
    if route != "fts":
        terms = _like_terms(text) if route == "trigram" else text.split()[:32]
        rows = _trigram(con, terms or [text], where, params, need, cjk=cjk_count(text) > 0)
    else:
        plan = _Query(con, text, where, params)
        rows = plan.run(match, need)
        sessions = plan.sessions()
        for row in rows:
            row["session_rank"] = sessions.get(str(row["session_id"]), 0.0)
            row["rank"] = float(row["rank"] or 0.0) + SESSION_WEIGHT * row["session_rank"]
        if sessions and match in ("any", "auto"):
            present = {str(r["session_id"]) for r in rows}
            for sid, rank in list(sessions.items())[:need]:
                if sid in present:
                    continue
                first = plan.first_message(sid)
                if first is not None:
                    first["session_rank"] = rank
                    first["rank"] = SESSION_WEIGHT * rank
                    rows.append(first)
        rows.sort(key=lambda r: (r["rank"], -int(r["id"])))
        if not rows and (plan.exact or not plan.lexemes):
            rows = _trigram(con, text.split()[:32], where, params, need)
    for row in rows:
        row["rank"] = float(row["rank"] or 0.0)
        row.setdefault("session_rank", 0.0)
        row["session_date"] = session_date(row.get("session_started"))
    return rows[offset:need]
