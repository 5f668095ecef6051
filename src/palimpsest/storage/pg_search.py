"""Session search on PostgreSQL: the SQLite store's semantics on ``tsvector`` and ``pg_trgm``.

The hits have the SQLite search's shape and meaning (:data:`~.search_plan.SEARCH_COLUMNS`
plus ``session_rank`` and ``session_date``; ``rank`` lower is better), so everything
above the store (:mod:`.ranking`'s best-message-decides session scoring, redacted
snippets, the ``session_search`` tool) works unchanged. How a query runs:

* **Words** are cut and stemmed by SQLite's own ``porter unicode61`` tokenizer, in the
  store when it writes a row and here for the query (:mod:`.pg_words`), so both backends
  index and ask for the same terms; stopwords are dropped as :mod:`.query_terms` drops
  them. They are looked up in the GIN index on ``messages.tsv``. ``all`` requires every
  word, ``any`` one of them, ``auto`` runs ``all`` and fills the places left from
  ``any``. Rows are scored with FTS5's BM25 (k1 1.2, b 0.75, FTS5's IDF) over the
  query's lexemes, with document frequencies found as on SQLite (exact, or from the
  newest 1,000 matches past 20,000 rows: :func:`_lexemes`), a message's
  length in tokens (``messages.words``, FTS5's count), and the row count and average
  length over the whole store, summed from per-session counters (:func:`_stats`), as
  FTS5 takes them.
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
from .pg_words import query_lexemes
from .query_terms import parse_terms
from .retrieval import SESSION_MATCHES, SESSION_WEIGHT
from .search_plan import SEARCH_COLUMNS
from .store_common import SearchFilters
from .word_rank import DF_SAMPLE, OWN_RANK_FROM

__all__ = ["doc_length", "search_hits"]


DF_CAP = 100_000
"""Sessions' metadata matches are counted up to this many rows."""

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


class _Terms:
    """A query's distinct lexemes and what is counted of each (:func:`_lexemes`)."""

    def __init__(
        self, lexemes: list[str], counts: list[int], dfs: list[float], meta_dfs: list[int]
    ) -> None:
        self.lexemes = lexemes
        #: matching messages, counted up to ``RANK_WINDOW + 1`` (candidates by rarity)
        self.counts = counts
        #: document frequencies for the IDF, as the SQLite store takes them
        self.dfs = dfs
        #: sessions whose metadata matches, up to :data:`DF_CAP`
        self.meta_dfs = meta_dfs


def _lexemes(con: psycopg.Connection[Any], phrases: Sequence[str]) -> _Terms:
    """The distinct lexemes of ``phrases`` (:func:`~.pg_words.query_lexemes`) in order
    and their counts (:class:`_Terms`).

    Document frequencies are found as :mod:`.word_rank` finds them on SQLite: the newest
    :data:`~.word_rank.DF_SAMPLE` matches of each lexeme are read (ids only); fewer than
    that is the exact count, more is extrapolated from how densely they lie among the
    newest ids. When no lexeme is estimated in :data:`~.word_rank.OWN_RANK_FROM` rows or
    more, SQLite ranks with FTS5's exact counts, and so are they counted here (up to
    that many rows). A count never reads every row of a common word, which took about a
    second per word at 200,000 messages.
    """
    lexemes = list(dict.fromkeys(phrases))
    if not lexemes:
        return _Terms([], [], [], [])
    # one scalar subquery per lexeme, each with its tsquery as a parameter: the planner
    # sees each word's frequency (a common word walks the id index backwards and stops,
    # a rare one reads its few GIN entries), where a lexeme taken from a joined array
    # got one generic plan that read every match of a common word
    parts: list[str] = []
    params: list[Any] = []
    for lexeme in lexemes:
        parts += [
            "(SELECT count(*) FROM (SELECT 1 FROM messages WHERE tsv @@ %s::tsquery LIMIT %s) c)",
            "(SELECT count(*) || ' ' || COALESCE(min(id), 0) FROM (SELECT id FROM messages"
            " WHERE tsv @@ %s::tsquery ORDER BY id DESC LIMIT %s) c)",
            "(SELECT count(*) FROM (SELECT 1 FROM sessions WHERE meta_tsv @@ %s::tsquery"
            " LIMIT %s) c)",
        ]
        query = _tsquery_literal(lexeme)
        params += [query, RANK_WINDOW + 1, query, DF_SAMPLE, query, DF_CAP]
    row = con.execute("SELECT " + ", ".join(parts), params).fetchone() or ()
    found = [(lexeme, *row[3 * i : 3 * i + 3]) for i, lexeme in enumerate(lexemes)]
    counts = [int(r[1]) for r in found]
    walks = [tuple(int(v) for v in str(r[2]).split()) for r in found]
    newest: int | None = None
    dfs: list[float] = []
    for count, oldest in walks:
        if count < DF_SAMPLE:
            dfs.append(float(count))
            continue
        if newest is None:
            top = con.execute("SELECT max(id) FROM messages").fetchone()
            newest = int(top[0] or 0) if top else 0
        estimate = max(float(count), count * newest / max(1, newest - oldest + 1))
        dfs.append(round(estimate, 1))  # as word_rank.ranked_sql writes it into the SQL
    if max(dfs) < OWN_RANK_FROM and any(c > RANK_WINDOW for c in counts):
        one = "(SELECT count(*) FROM (SELECT 1 FROM messages WHERE tsv @@ %s::tsquery LIMIT %s) c)"
        exact = con.execute(
            "SELECT " + ", ".join([one] * len(lexemes)),
            [v for x in lexemes for v in (_tsquery_literal(x), OWN_RANK_FROM)],
        ).fetchone()
        dfs = [float(v) for v in exact or ()]
    elif max(dfs) < OWN_RANK_FROM:
        dfs = [float(c) for c in counts]
    return _Terms([str(r[0]) for r in found], counts, dfs, [int(r[3]) for r in found])


_STATS: dict[str, tuple[float, tuple[int, float, int, float]]] = {}
"""``server -> (when, statistics)``, kept :data:`STATS_SECONDS`."""

STATS_SECONDS = 30.0


def _stats(con: psycopg.Connection[Any]) -> tuple[int, float, int, float]:
    """``(messages, their average length, sessions, their metadata's average length)``
    over the whole store, as FTS5 counts its rows and tokens: sums of the per-session
    counters the writes keep (``message_count``, ``word_total``, ``meta_words``), so one
    statement over the sessions, never the messages; cached for a few seconds, since BM25
    needs only their size."""
    key = f"{con.info.dsn} {con.info.parameter_status('search_path') or ''}"
    now = time.monotonic()
    cached = _STATS.get(key)
    if cached is not None and now - cached[0] < STATS_SECONDS:
        return cached[1]
    row = con.execute(
        "SELECT COALESCE(sum(message_count), 0), COALESCE(sum(word_total), 0), count(*),"
        " COALESCE(sum(meta_words), 0) FROM sessions"
    ).fetchone()
    messages, words, sessions, meta = (int(v) for v in row) if row else (0, 0, 0, 0)
    found = (
        messages,
        words / messages if messages else 1.0,
        sessions,
        meta / sessions if sessions else 1.0,
    )
    _STATS[key] = (now, found)
    return found


def _idf(total: int, df: float) -> float:
    """FTS5's IDF, floored just above zero (a word in every row still counts a little)."""
    return max(1e-6, math.log((total - df + 0.5) / (df + 0.5)))


def doc_length(expression: str) -> str:
    """SQL for a ``tsvector`` column's document length: the token count the writes keep
    beside it (``messages.words`` for ``tsv``, ``sessions.meta_words`` for ``meta_tsv``;
    :mod:`.pg_words`), at least 1."""
    alias, _, column = expression.rpartition(".")
    counts = {"tsv": "words", "meta_tsv": "meta_words"}
    return f"GREATEST(1, {alias + '.' if alias else ''}{counts[column]})"


def _bm25(alias: str, column: str) -> str:
    """SQL summing Okapi BM25 (k1 1.2, b 0.75) over the query lexemes a row holds.

    ``setweight`` marks the query's lexemes and ``ts_filter`` keeps only those (both in
    C), so each row unnests two or three entries, not its whole vector; a lexeme's
    positions are its occurrences (:mod:`.pg_words`). Parameters: the lexemes, again the
    lexemes and their IDFs, the average document length.
    """
    tf = "array_length(u.positions, 1)"
    return (
        f"(SELECT COALESCE(sum(q.idf * ({tf} * 2.2) / ({tf} + 1.2 * (0.25 + 0.75 *"
        f" {doc_length(f'{alias}.{column}')} / GREATEST(%s, 1.0)))), 0.0)"
        f" FROM unnest(ts_filter(setweight({alias}.{column}, 'A', %s::text[]), '{{a}}')) AS u"
        " JOIN unnest(%s::text[], %s::float8[]) AS q(lexeme, idf) ON q.lexeme = u.lexeme)"
    )


def _filled(
    rows: list[dict[str, Any]], more: list[dict[str, Any]], need: int
) -> list[dict[str, Any]]:
    """``rows`` then the best of ``more`` not already there (ties: newest first), up to
    ``need`` rows: :mod:`.retrieval`'s fill-up."""
    seen = {r["id"] for r in rows}
    fill = sorted(
        (r for r in more if r["id"] not in seen), key=lambda r: (r["rank"], -int(r["id"]))
    )
    return rows + fill[: need - len(rows)]


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
        # one phrase per query word, as FTS5 sees the query: two words with one stem
        # ("run running") are two phrases of one lexeme, and BM25 counts it twice
        self.phrases = [x for word in terms.words for x in query_lexemes([word])]
        terms_found = _lexemes(con, self.phrases)
        self.lexemes, self.dfs = terms_found.lexemes, terms_found.counts
        self.meta_dfs = terms_found.meta_dfs
        self.stats = _stats(con) if self.lexemes else (0, 1.0, 0, 1.0)
        total, self.avgdl = self.stats[:2]
        self.idf = {x: _idf(total, df) for x, df in zip(self.lexemes, terms_found.dfs, strict=True)}
        self.where = _pg(where)
        self.params = list(params)
        for form in self.exact:
            self.where.append(f"{_INDEXED_M} ILIKE %s")
            self.params.append(_like(form))
        #: the exact forms' words as a tsquery (every one required), or ""
        self.exact_words = " & ".join(
            _tsquery_literal(x) for x in dict.fromkeys(query_lexemes(self.exact))
        )

    def tsquery(self, lexemes: Sequence[str], joiner: str) -> str:
        return f" {joiner} ".join(_tsquery_literal(x) for x in lexemes)

    def ranked(
        self, match: str, need: int, floor_newest: int | None, twice: Sequence[str] = ()
    ) -> list[dict[str, Any]]:
        """BM25-ranked rows matching the tsquery ``match`` (the newest ``floor_newest``
        of them when given, else all), best ``need``; the lexemes ``twice`` count twice
        (as FTS5 counts the rare words of a candidates query, :mod:`.retrieval`)."""
        rank = "-" + _bm25("m", "tsv")
        # an exact form's words narrow the rows as they do on SQLite, whose MATCH holds
        # them (as a phrase; here every one of them, and ILIKE checks the form itself)
        words = f"({match}) & {self.exact_words}" if self.exact_words else match
        conditions = ["m.tsv @@ %s::tsquery", *self.where]
        params: list[Any] = [words, *self.params]
        if floor_newest is not None:
            # The window is the newest ``floor_newest`` rows that hold the words, and the
            # filters and the exact forms apply inside it, as on SQLite (``rowid >=
            # floor``, retrieval._newest_floor). Taking the newest rows that pass
            # everything instead walked the table back row by row for a rare exact form
            # (1.9 s at 1,000,000 messages for `toolu_bash_004 changed`). The floor is
            # found first and written into the statement as a number, so that the planner
            # sees how far back it is: as a subquery (or a parameter of a prepared
            # statement) it is planned as a third of the table.
            row = self.con.execute(
                "SELECT COALESCE(min(w.id), 0) FROM (SELECT id FROM messages"
                " WHERE tsv @@ %s::tsquery ORDER BY id DESC LIMIT %s) AS w",
                (words, floor_newest),
            ).fetchone()
            conditions.append(f"m.id >= {int(row[0]) if row else 0:d}")
        inner = (
            f"SELECT m.id FROM messages AS m JOIN sessions AS s ON s.id = m.session_id"
            f" WHERE {' AND '.join(conditions)}"
        )
        # ties in FTS5's rank order: the oldest row first
        sql = _SELECT.format(rank=rank) + f" WHERE m.id IN ({inner}) ORDER BY rank, m.id LIMIT %s"
        scored = [*self.phrases, *twice]
        idfs = [self.idf[x] for x in scored]
        cursor = self.con.execute(sql, (self.avgdl, self.lexemes, scored, idfs, *params, need))
        return _rows(cursor)

    def count(self, match: str, cap: int) -> int:
        """How many rows match ``match`` (no filters, as :mod:`.retrieval` counts), up
        to ``cap``."""
        row = self.con.execute(
            "SELECT count(*) FROM (SELECT 1 FROM messages WHERE tsv @@ %s::tsquery LIMIT %s) AS c",
            (match, cap),
        ).fetchone()
        return int(row[0]) if row else 0

    def run(self, mode: str, need: int) -> list[dict[str, Any]]:
        """The ``all``, ``any`` or ``auto`` plan, as :mod:`.retrieval` runs it on SQLite."""
        if not self.lexemes:
            return self.literal(need) if self.exact else []
        every = self.tsquery(self.lexemes, "&")
        if mode == "all":
            return self.ranked(every, need, RANK_WINDOW)
        if mode == "any":
            return self.any(need)
        # auto: when fewer rows hold every word than asked for and the any plan ranks
        # all its candidates, that plan alone answers (its best rows, not the all rows
        # first: the SQLite store's choice)
        if self.count(every, need) < need and not self.candidates()[1]:
            return self.any(need)
        found = self.ranked(every, need, RANK_WINDOW)
        return _filled(found, self.any(need), need) if len(found) < need else found

    def candidates(self) -> tuple[list[str] | None, bool]:
        """``(rare, windowed)``: the rarest lexemes whose rows the any plan ranks (None:
        every lexeme's), and whether only the newest :data:`RANK_WINDOW` of them are
        ranked; :func:`~.retrieval.choose_candidates` over lexemes."""
        if len(self.lexemes) == 1:
            return None, self.dfs[0] > RANK_WINDOW
        if sum(self.dfs) <= RANK_WINDOW:
            return None, False
        rare: list[str] = []
        total = 0
        for i in sorted(range(len(self.lexemes)), key=lambda i: self.dfs[i]):
            if rare and total + self.dfs[i] > RANK_WINDOW:
                break
            rare.append(self.lexemes[i])
            total += self.dfs[i]
        return (rare if len(rare) < len(self.lexemes) else None), total > RANK_WINDOW

    def any(self, need: int) -> list[dict[str, Any]]:
        """Candidates by rarity (see the module docstring), then the newest rows."""
        rare, windowed = self.candidates()
        everything = self.tsquery(self.lexemes, "|")
        window = RANK_WINDOW if windowed else None
        if rare is None:
            return self.ranked(everything, need, window)
        found = self.ranked(self.tsquery(rare, "|"), need, window, twice=rare)
        if len(found) < need:
            found = _filled(found, self.ranked(everything, need, RANK_WINDOW), need)
        return found

    def literal(self, need: int) -> list[dict[str, Any]]:
        """Rows holding every exact form, newest first (rank 0).

        The word index narrows the scan first (every word of each form: the same tokenizer
        cut the stored text); only when that finds nothing is every row scanned.
        """
        words = [x for x in (query_lexemes([form]) for form in self.exact) if x]
        narrowed = [*self.where, *("m.tsv @@ %s::tsquery" for _ in words)]
        for conditions, params in (
            (narrowed, [*self.params, *(self.tsquery(x, "&") for x in words)]),
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
        total, avgdl = self.stats[2:]
        meta = {x: _idf(total, df) for x, df in zip(self.lexemes, self.meta_dfs, strict=True)}
        found = self.con.execute(
            f"SELECT s.id, -{_bm25('s', 'meta_tsv')} AS r FROM sessions AS s"
            " WHERE s.meta_tsv @@ %s::tsquery ORDER BY r, s.rowid LIMIT %s",
            (
                avgdl,
                self.lexemes,
                self.phrases,
                [meta[x] for x in self.phrases],
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
