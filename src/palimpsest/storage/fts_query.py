"""Turn what a user types into a search plan: a route, an FTS5 query and the exact SQL.

* :func:`route_for` picks the index from the query's script, up front (SS-51..SS-53):
  three or more CJK characters per word use the trigram index, one or two use ``LIKE``,
  everything else the stemmed word index, the query reduced to words and exact forms by
  :mod:`.query_terms` (or, with FTS5 syntax, made safe by
  :func:`~.fts_sanitize.sanitize_query`, re-exported here) in a match mode (``all``,
  ``any``, ``auto``).
* :func:`build_search` builds the SQL for that route -- BM25 rank, snippet, filters and
  an unconditional ``LIMIT`` -- and :func:`run_search` executes it. Building and running
  are separate so the SQL can be tested exactly and printed by ``palimpsest sessions
  search --sql``. Word-index plans are run by :mod:`.retrieval` (candidates by the
  rarest words, ``auto`` widening, session metadata).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import apsw

from ..errors import QueryError
from .fts_sanitize import (
    EDGE_PUNCTUATION,
    MAX_QUERY_CHARS,
    OPERATORS,
    clean_query,
    has_word,
    query_terms,
    quote_phrase,
    quote_tokens,
    sanitize_query,
)
from .query_terms import EXACT_FUNCTION, QueryTerms, parse_terms
from .retrieval import run_word_plan
from .search_plan import SEARCH_COLUMNS, MatchMode, Route, SearchPlan
from .word_rank import RANK_CLAUSE

__all__ = [
    "AUTO_MAX_TERMS",
    "CJK_RANGES",
    "MAX_QUERY_CHARS",
    "RANK_WINDOW",
    "SEARCH_COLUMNS",
    "MatchMode",
    "Route",
    "SearchPlan",
    "build_search",
    "cjk_count",
    "clean_query",
    "is_cjk",
    "query_terms",
    "route_for",
    "run_search",
    "sanitize_query",
    "search_filters",
    "session_date",
]

log = logging.getLogger(__name__)

SNIPPET_TOKENS = 40
"""Tokens of context in an FTS snippet (SS-47)."""

LIKE_SNIPPET_BEFORE = 40
LIKE_SNIPPET_CHARS = 120
"""SS-52: a LIKE snippet is 120 characters starting 40 before the first match."""

RANK_WINDOW = 2000
"""BM25 ranks at most this many candidate messages per query.

Scoring is the cost of a broad query: every ranked row's size and term positions are
read. On the word index the candidates are the rows holding the query's rarest words
(see :mod:`.retrieval`), so an old message with the rare words is never pushed out by
newer rows holding common ones; only when every word is that common are the newest
matches ranked. The trigram index ranks the newest matches. Queries with fewer matches
are ranked exactly."""

AUTO_MAX_TERMS = 3
"""``auto`` tries AND first only for queries with at most this many content terms."""

# SS-52 detection ranges: CJK ideographs (+ extension A/B), CJK punctuation, kana, hangul.
# The schema builds the trigram triggers' GLOB class from this same tuple, so a query the
# router sends to the trigram index and the rows that index holds agree on what "CJK" is.
CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x3000, 0x303F),
    (0x3040, 0x309F),
    (0x30A0, 0x30FF),
    (0xAC00, 0xD7AF),
)


# One character class for all the ranges: the router and the snippet highlighter test
# every character of a query (per hit), so this runs in C instead of a Python loop.
_CJK_CLASS = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in CJK_RANGES) + "]")


def is_cjk(char: str) -> bool:
    """True for a character in one of the SS-52 CJK ranges."""
    return len(char) == 1 and _CJK_CLASS.match(char) is not None


def cjk_count(text: str) -> int:
    """How many CJK characters ``text`` holds."""
    return len(_CJK_CLASS.findall(text))


# -- routing ----------------------------------------------------------------------------


def _cjk_tokens(text: str) -> list[str]:
    """SS-52 preparation: outer quotes stripped, split on whitespace, operators kept."""
    text = text.strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        text = text[1:-1]
    tokens = []
    for token in text.split():
        bare = token.strip(EDGE_PUNCTUATION)
        tokens.append(bare or token)
    return tokens


def route_for(text: str, *, has_fts: bool = True, has_trigram: bool = True) -> Route:
    """Which index answers ``text`` (decided from its script, never after an empty result)."""
    text = clean_query(text)
    if not text:
        return "none"
    if not has_fts:
        return "like"
    if cjk_count(text) == 0:
        return "fts" if sanitize_query(text) else "like"
    tokens = [t for t in _cjk_tokens(text) if t not in OPERATORS]
    cjk_tokens = [cjk_count(t) for t in tokens if cjk_count(t)]
    if has_trigram and sum(cjk_tokens) >= 3 and all(n >= 3 for n in cjk_tokens):
        return "trigram"
    return "like"


def _trigram_query(text: str) -> str:
    # A trigram phrase shorter than three characters matches nothing, so a short Latin
    # word would empty the whole AND; it is left out instead.
    kept = [t for t in _cjk_tokens(text) if t in OPERATORS or cjk_count(t) or len(t) >= 3]
    return quote_tokens(kept)


def _like_terms(text: str) -> list[str]:
    terms = [t.replace('"', "") or t for t in _cjk_tokens(text) if t not in OPERATORS]
    # Lone punctuation would match nearly every row; keep it only if nothing else is left.
    wordy = [t for t in terms if has_word(t)]
    return (wordy or terms)[:32]


# -- SQL --------------------------------------------------------------------------------


def _as_list(value: str | Iterable[str] | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = value.split(",")
    return [v.strip() for v in value if v and v.strip()]


def _filters(
    role_filter: str | Iterable[str] | None,
    source: str | Iterable[str] | None,
    exclude_sources: str | Iterable[str] | None,
    exclude_session_ids: Iterable[str],
) -> tuple[list[str], list[Any]]:
    where: list[str] = []
    params: list[Any] = []

    def members(column: str, values: list[str], negate: bool = False) -> None:
        if values:
            marks = ", ".join("?" for _ in values)
            where.append(f"{column} {'NOT IN' if negate else 'IN'} ({marks})")
            params.extend(values)

    members("m.role", _as_list(role_filter))
    members("s.source", _as_list(source))
    members("s.source", _as_list(exclude_sources), negate=True)
    excluded = [str(s) for s in exclude_session_ids]
    if excluded:
        # The caller's own sessions: their live rows are in its context already, but the
        # rows an in-place compaction archived (active = 0, compacted = 1) are not.
        marks = ", ".join("?" for _ in excluded)
        where.append(f"(m.session_id NOT IN ({marks}) OR (m.active = 0 AND m.compacted = 1))")
        params.extend(excluded)
    # SS-38: rewound rows (inactive and not compaction-archived) are hidden from search.
    where.append("(m.active = 1 OR m.compacted = 1)")
    return where, params


def search_filters(
    role_filter: str | Iterable[str] | None = None,
    source: str | Iterable[str] | None = None,
    exclude_sources: str | Iterable[str] | None = None,
    exclude_session_ids: Iterable[str] = (),
) -> tuple[list[str], list[Any]]:
    """The SQL conditions (over ``m`` = messages, ``s`` = sessions) and parameters every
    search route applies; the vector search (:mod:`.vectors`) applies the same ones."""
    return _filters(role_filter, source, exclude_sources, exclude_session_ids)


_SELECT = (
    "SELECT m.id AS id, m.session_id AS session_id, m.role AS role, {snippet} AS snippet,"
    " m.timestamp AS timestamp, s.source AS source, s.model AS model,"
    " s.title AS session_title, {rank} AS rank, m.tool_name AS tool_name,"
    " s.started_at AS session_started"
)

_INDEXED = (
    "(COALESCE(m.content, '') || ' ' || COALESCE(m.tool_name, '') || ' '"
    " || COALESCE(m.tool_calls, ''))"
)


def _fts_snippet(table: str, snippets: bool) -> str:
    """SQLite's ``snippet()`` for the hits, or ``''`` for callers that make their own
    (from redacted text) and would throw it away: it re-reads each returned row."""
    if not snippets:
        return "''"
    return f"snippet({table}, 0, '>>>', '<<<', '...', {SNIPPET_TOKENS})"


def _fts_sql(table: str, where: list[str], windowed: bool, snippets: bool) -> str:
    select = _SELECT.format(snippet=_fts_snippet(table, snippets), rank=f"{table}.rank")
    match = [f"{table} MATCH ?"]
    if windowed:
        # Rank only the newest N matches: the subquery walks the index newest-first and
        # stops after N rows (no scoring), and FTS5 applies the rowid bound itself.
        match.append(
            f"{table}.rowid >= (SELECT COALESCE(MIN(rowid), 0) FROM (SELECT rowid FROM {table}"
            f" WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT ?))"
        )
    conditions = " AND ".join([*match, *where])
    return (
        f"{select} FROM {table} JOIN messages AS m ON m.id = {table}.rowid"
        f" JOIN sessions AS s ON s.id = m.session_id"
        f" WHERE {conditions} ORDER BY {table}.rank LIMIT ? OFFSET ?"
    )


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _like_plan(
    terms: Sequence[str], where: list[str], params: list[Any], limit: int, offset: int
) -> SearchPlan:
    clauses = []
    like_params: list[Any] = []
    for term in terms:
        clauses.append(
            "(m.content LIKE ? ESCAPE '\\' OR m.tool_name LIKE ? ESCAPE '\\'"
            " OR m.tool_calls LIKE ? ESCAPE '\\')"
        )
        like_params.extend([f"%{_escape_like(term)}%"] * 3)
    first = terms[0].lower()
    snippet = (
        f"substr({_INDEXED}, max(1, instr(lower({_INDEXED}), ?) - {LIKE_SNIPPET_BEFORE}),"
        f" {LIKE_SNIPPET_CHARS})"
    )
    select = _SELECT.format(snippet=snippet, rank="0.0")
    conditions = " AND ".join(["(" + " OR ".join(clauses) + ")", *where])
    # Newest first. Ids grow with insertion time, and ordering by the primary key lets
    # SQLite walk the table backwards and stop at LIMIT instead of sorting every match.
    sql = (
        f"{select} FROM messages AS m JOIN sessions AS s ON s.id = m.session_id"
        f" WHERE {conditions} ORDER BY m.id DESC LIMIT ? OFFSET ?"
    )
    all_params = (first, *like_params, *params, limit, offset)
    return SearchPlan(sql, all_params, "like", " ".join(terms))


def _none_plan(limit: int, offset: int) -> SearchPlan:
    select = _SELECT.format(snippet="''", rank="0.0")
    sql = (
        f"{select} FROM messages AS m JOIN sessions AS s ON s.id = m.session_id"
        " WHERE 0 LIMIT ? OFFSET ?"
    )
    return SearchPlan(sql, (limit, offset), "none")


def _word_sql(where: list[str], exact: int, snippets: bool) -> str:
    """SQL over the word index: ``MATCH ?``, ``rowid >= ?``, one exact check per ``?``."""
    table = "messages_fts"
    select = _SELECT.format(snippet=_fts_snippet(table, snippets), rank=f"{table}.rank")
    checks = [f"{EXACT_FUNCTION}({_INDEXED}, ?)"] * exact
    conditions = " AND ".join(
        [f"{table} MATCH ?", f"{table}.rowid >= ?", RANK_CLAUSE, *checks, *where]
    )
    return (
        f"{select} FROM {table} JOIN messages AS m ON m.id = {table}.rowid"
        f" JOIN sessions AS s ON s.id = m.session_id"
        f" WHERE {conditions} ORDER BY {table}.rank LIMIT ? OFFSET ?"
    )


def _word_plans(
    text: str,
    mode: MatchMode,
    where: list[str],
    params: list[Any],
    limit: int,
    offset: int,
    budget: int | None,
    snippets: bool,
) -> SearchPlan:
    """The word-index plan for ``text`` in ``mode`` (with its ``widen`` plan in auto)."""
    terms = parse_terms(text)
    meta = " OR ".join(quote_phrase(w) for w in terms.words)
    common: dict[str, Any] = {
        "budget": budget,
        "meta_match": meta,
        "filters": tuple(where),
        "filter_params": tuple(params),
    }

    def plan(match: str, kind: str, found: QueryTerms | None, **extra: Any) -> SearchPlan:
        exact = found.exact if found is not None else ()
        sql = _word_sql(where, len(exact), snippets)
        values = (match, 0, *exact, *params, limit, offset)
        return SearchPlan(sql, values, "fts", match, mode=kind, terms=found, **common, **extra)

    if terms.explicit or terms.count == 0:
        return plan(sanitize_query(text, match_any=mode == "any"), "typed", None)
    if mode == "auto" and terms.count <= AUTO_MAX_TERMS:
        wide = plan(terms.match_any(), "any", terms) if len(terms.words) > 1 else None
        return plan(terms.match_all(), "auto", terms, widen=wide)
    if mode != "all":
        return plan(terms.match_any(), "any", terms)
    return plan(terms.match_all(), "all", terms)


def build_search(
    query: str,
    *,
    role_filter: str | Iterable[str] | None = None,
    source: str | Iterable[str] | None = None,
    exclude_sources: str | Iterable[str] | None = None,
    limit: int = 20,
    offset: int = 0,
    exclude_session_ids: Iterable[str] = (),
    has_trigram: bool = True,
    has_fts: bool = True,
    match: MatchMode | None = None,
    match_any: bool = False,
    rank_window: int | None = RANK_WINDOW,
    snippets: bool = True,
) -> SearchPlan:
    """The :class:`SearchPlan` for ``query``; run it with :func:`run_search`.

    Every route selects :data:`SEARCH_COLUMNS` and ends in ``LIMIT ? OFFSET ?``.
    ``match`` is ``all``, ``any`` or ``auto`` (the default; ``match_any=True`` is an older
    spelling of ``any``); see docs/search.md. BM25 ranks at most ``rank_window``
    candidates (None: every match); see :data:`RANK_WINDOW`. ``snippets=False`` leaves
    the ``snippet`` column of the index routes empty (``''``) instead of running FTS5's
    ``snippet()``, for callers that make their own from redacted text.
    ``role_filter``, ``source`` and ``exclude_sources`` take a list or a comma-separated
    string. ``exclude_session_ids`` leaves out those sessions' live rows, not the rows an
    in-place compaction archived there. A blank query gives route ``none``, whose SQL
    returns no rows.
    """
    mode: MatchMode = match or ("any" if match_any else "auto")
    if mode not in ("all", "any", "auto"):
        raise QueryError(f"unknown match mode {mode!r}; use all, any or auto")
    limit = max(0, int(limit))
    offset = max(0, int(offset))
    text = clean_query(query)
    where, params = _filters(role_filter, source, exclude_sources, exclude_session_ids)
    route = route_for(text, has_fts=has_fts, has_trigram=has_trigram)
    if route == "none":
        return _none_plan(limit, offset)
    if route == "like":
        terms = _like_terms(text) if cjk_count(text) else text.split()[:32]
        return _like_plan(terms, where, params, limit, offset)
    budget = None if rank_window is None else max(1, int(rank_window))
    if route == "fts":
        fallback = _like_plan(query_terms(text) or [text], where, params, limit, offset)
        found = _word_plans(text, mode, where, params, limit, offset, budget, snippets)
        return dataclasses.replace(found, fallback=fallback)
    fts_match = _trigram_query(text)
    table = "messages_fts_trigram"
    fallback = _like_plan(_like_terms(text), where, params, limit, offset)
    head: tuple[Any, ...] = (fts_match,)
    if budget is not None:
        head = (fts_match, fts_match, budget)
    sql = _fts_sql(table, where, budget is not None, snippets)
    return SearchPlan(sql, (*head, *params, limit, offset), route, fts_match, fallback)


def run_search(connection: apsw.Connection, plan: SearchPlan) -> list[dict[str, Any]]:
    """Execute ``plan``; rows come back as dicts keyed by :data:`SEARCH_COLUMNS`, plus
    ``session_rank`` (see :mod:`.retrieval`) and ``session_date`` (the session's start
    as words, local time).

    Should the FTS statement still fail (a damaged index, an FTS5 rule this module does
    not know), the error is logged and the plan's LIKE fallback runs instead of silently
    returning nothing (SS-50).
    """
    try:
        if plan.route == "fts":
            rows = run_word_plan(connection, plan)
        else:
            cursor = connection.execute(plan.sql, plan.params)
            rows = [dict(zip(SEARCH_COLUMNS, row, strict=True)) for row in cursor]
    except apsw.SQLError as exc:
        if plan.fallback is None:
            raise
        log.warning("full-text search failed (%s); falling back to LIKE", exc)
        return run_search(connection, plan.fallback)
    for row in rows:
        row.setdefault("session_rank", 0.0)
        row["session_date"] = session_date(row.get("session_started"))
    return rows


def session_date(epoch: Any) -> str:
    """``Wednesday, June 07, 2023`` for epoch seconds (local time); ``""`` when unknown."""
    try:
        return datetime.fromtimestamp(float(epoch)).strftime("%A, %B %d, %Y")
    except (TypeError, ValueError, OverflowError, OSError):
        return ""
