"""The value a search is built into: SQL, parameters, route, and what running it needs.

Kept apart from :mod:`.fts_query` (which builds plans) and :mod:`.retrieval` (which runs
the word-index ones), so both can name it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .query_terms import QueryTerms

__all__ = ["SEARCH_COLUMNS", "MatchMode", "Route", "SearchPlan"]

SEARCH_COLUMNS = (
    "id",
    "session_id",
    "role",
    "snippet",
    "timestamp",
    "source",
    "model",
    "session_title",
    "rank",
    "tool_name",
    "session_started",
)
"""The columns every plan selects, in this order, whatever its route."""

Route = Literal["fts", "trigram", "like", "none"]

MatchMode = Literal["all", "any", "auto"]
"""``all``: every term; ``any``: BM25 over any term; ``auto``: all for a short keyword
query when that finds enough rows, else any (see docs/search.md)."""


@dataclass(frozen=True)
class SearchPlan:
    """The SQL for one search, its parameters, and how it was routed.

    ``match`` is the FTS5 query (fts/trigram routes) or the LIKE terms joined by spaces.
    ``fallback`` is the LIKE plan to run if the FTS statement fails anyway (SS-50).

    Word-index (``fts``) plans also carry what :mod:`.retrieval` needs at run time:
    ``mode`` (``all``, ``any`` or ``typed`` for a query with FTS5 syntax), ``widen`` (in
    ``auto`` mode, the ``any`` plan that fills up when ``all`` finds too few rows),
    ``terms`` (the parsed query, for choosing candidates by the rarest words),
    ``budget`` (how many candidates BM25 may rank; None: all), ``meta_match`` (the FTS5
    query for session titles, dates and sources) and the filter SQL for the rows a
    session-metadata match contributes. Their SQL has ``MATCH ?`` and ``rowid >= ?`` as
    its first two parameters and ``LIMIT ? OFFSET ?`` as its last two.
    """

    sql: str
    params: tuple[Any, ...]
    route: Route
    match: str = ""
    fallback: SearchPlan | None = None
    mode: str = ""
    widen: SearchPlan | None = None
    terms: QueryTerms | None = None
    budget: int | None = None
    meta_match: str = ""
    filters: tuple[str, ...] = ()
    filter_params: tuple[Any, ...] = ()
