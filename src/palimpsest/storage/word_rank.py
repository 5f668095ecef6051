"""BM25 over the word index whose cost does not grow with the archive.

FTS5's own ``bm25()`` computes each phrase's IDF by walking that phrase's whole document
list, once per ranked statement. At a million messages a common word's list holds
hundreds of thousands of entries, and walking it costs more than scoring the few
thousand candidate rows a search actually ranks (``benchmarks/store_scale.py``). This
module ranks with the same formula (``k1`` 1.2, ``b`` 0.75, FTS5's IDF, lower is better)
but takes each phrase's document frequency from a bounded walk:

* the newest :data:`DF_SAMPLE` matches of the phrase are read, newest first (rowids only,
  no positions, no scoring);
* fewer than that: the count is exact, as FTS5's;
* more: the count is extrapolated from how densely those matches lie among the newest
  rowids (``DF_SAMPLE * newest_rowid / span``). Only the IDF of words in more than
  :data:`DF_SAMPLE` messages is estimated, and an error there moves a common word's weight
  little (IDF is a logarithm).

The scoring itself runs in :data:`RANK_FUNCTION`, an FTS5 auxiliary function registered
on the connection, with the frequencies written into the statement as literals (plan SQL
names FTS5's ``bm25()`` in :data:`RANK_CLAUSE`, which :func:`ranked_sql` replaces). It is
used only where it pays (:data:`OWN_RANK_FROM`). Queries typed in FTS5 syntax (prefixes,
``NEAR``, operators) keep FTS5's ``bm25()``: their phrases are not ours to count.
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Sequence
from typing import Any

import apsw

__all__ = [
    "DF_SAMPLE",
    "OWN_RANK_FROM",
    "RANK_CLAUSE",
    "RANK_FUNCTION",
    "document_frequencies",
    "frequencies_to_rank",
    "fts5_idf",
    "newest_walks",
    "phrases_of",
    "ranked_sql",
    "register_rank",
]

RANK_FUNCTION = "palimpsest_bm25"
"""SQL name of the auxiliary function (registered by :func:`register_rank`)."""

RANK_CLAUSE = "messages_fts.rank MATCH 'bm25()'"
"""The condition plan SQL carries to choose the rank function: FTS5's own ``bm25()`` until
:func:`ranked_sql` puts :data:`RANK_FUNCTION` with the phrases' frequencies in its place.
Choosing the function this way (not ``ORDER BY function(...)``) keeps FTS5's own sorter:
rows are ranked inside the index and joined to their messages only as they are read."""

DF_SAMPLE = 1000
"""Newest matches read per phrase to learn its document frequency."""

OWN_RANK_FROM = 20_000
"""Our BM25 takes over from FTS5's when a phrase is estimated in this many messages or
more: below it FTS5's whole-list walk costs about as much as our per-row scoring adds
(``benchmarks/store_scale.py``, 200,000 and 1,000,000 messages)."""

K1 = 1.2
B = 0.75

_PHRASE = re.compile(r'"(?:[^"]|"")*"|[^\s()"]+')
_OPERATORS = frozenset({"AND", "OR", "NOT"})
_COUNTS_PER_STATEMENT = 100
"""Queries per counting statement (SQLite allows 2,000 result columns by default; a
2,048-character query can hold several hundred words)."""

_REGISTERED: weakref.WeakSet[apsw.Connection] = weakref.WeakSet()


def fts5_idf(rows: float, df: float) -> float:
    """FTS5's IDF: ``ln((N - n + 0.5) / (n + 0.5))``, never below a tiny positive value."""
    value = math.log((rows - df + 0.5) / (df + 0.5)) if df < rows else 0.0
    return value if value > 0.0 else 1e-6


def _score(api: apsw.FTS5ExtensionApi, *dfs: Any) -> float:
    state = api.aux_data
    if state is None:
        rows = max(1, api.row_count)
        average = api.column_total_size(0) / rows or 1.0
        state = (average, tuple(fts5_idf(rows, min(float(df), rows)) for df in dfs))
        api.aux_data = state
    average, idfs = state
    norm = K1 * (1.0 - B + B * api.column_size(0) / average)
    if len(idfs) == 1 and api.phrase_count == 1:
        tf = api.inst_count
        return -(idfs[0] * tf * (K1 + 1.0) / (tf + norm)) if tf else 0.0
    score = 0.0
    for i in range(min(len(idfs), api.phrase_count)):
        tf = len(api.phrase_locations(i)[0])
        if tf:
            score += idfs[i] * tf * (K1 + 1.0) / (tf + norm)
    return -score


def register_rank(con: apsw.Connection) -> None:
    """Register :data:`RANK_FUNCTION` on ``con`` (once per connection)."""
    if con in _REGISTERED:
        return
    con.register_fts5_function(RANK_FUNCTION, _score)
    _REGISTERED.add(con)


def phrases_of(match: str) -> list[str]:
    """The phrases (quoted or bare) of a query this package wrote, in FTS5's phrase order.

    Only for queries built from :class:`~.query_terms.QueryTerms` (phrases, ``AND``,
    ``OR`` and parentheses); typed FTS5 syntax is ranked by FTS5 itself."""
    return [p for p in _PHRASE.findall(match) if p not in _OPERATORS]


def newest_walks(
    con: apsw.Connection, table: str, phrases: Sequence[str], cap: int
) -> list[tuple[int, int]]:
    """``(count, oldest rowid)`` over the newest ``cap`` matches of each FTS5 query in
    ``phrases``: a capped count without scoring, several queries to a statement."""
    one = (
        f"(SELECT count(*) || ' ' || COALESCE(min(rowid), 0) FROM (SELECT rowid FROM {table}"
        f" WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT ?))"
    )
    found: list[tuple[int, int]] = []
    for start in range(0, len(phrases), _COUNTS_PER_STATEMENT):
        chunk = phrases[start : start + _COUNTS_PER_STATEMENT]
        sql = "SELECT " + ", ".join([one] * len(chunk))
        params = [value for phrase in chunk for value in (phrase, cap)]
        row: Any = con.execute(sql, params).fetchall()[0]
        for cell in row:
            count, oldest = str(cell).split()
            found.append((int(count), int(oldest)))
    return found


def document_frequencies(
    con: apsw.Connection,
    phrases: Sequence[str],
    table: str = "messages_fts",
    sample: int | None = None,
) -> list[float]:
    """Each phrase's document count: exact below ``sample`` (default :data:`DF_SAMPLE`),
    extrapolated beyond."""
    if not phrases:
        return []
    sample = DF_SAMPLE if sample is None else sample
    unique = list(dict.fromkeys(phrases))
    walks = dict(zip(unique, newest_walks(con, table, unique, sample), strict=True))
    newest: int | None = None
    counts: list[float] = []
    for phrase in phrases:
        count, oldest = walks[phrase]
        if count < sample:
            counts.append(float(count))
            continue
        if newest is None:
            top: Any = con.execute(f"SELECT max(rowid) FROM {table}").fetchall()
            newest = int(top[0][0] or 0)
        span = max(1, newest - oldest + 1)
        counts.append(max(float(count), count * newest / span))
    return counts


def frequencies_to_rank(con: apsw.Connection, match: str) -> list[float] | None:
    """The document frequencies to rank ``match`` with, or None when FTS5's ``bm25()`` is
    the better choice: no phrase matches (by the estimate) :data:`OWN_RANK_FROM` rows or
    more, so FTS5's IDF walks are short and its C scoring is faster than ours per row."""
    phrases = phrases_of(match)
    if not phrases:
        return None
    dfs = document_frequencies(con, phrases)
    return dfs if max(dfs) >= OWN_RANK_FROM else None


def ranked_sql(sql: str, dfs: Sequence[float] | None) -> str:
    """``sql`` with :data:`RANK_CLAUSE` naming our BM25 over ``dfs`` (one per phrase, in
    order); unchanged (FTS5's ``bm25()``) when ``dfs`` is None."""
    if not dfs:
        return sql
    args = ", ".join(f"{df:.1f}" for df in dfs)
    return sql.replace(RANK_CLAUSE, f"messages_fts.rank MATCH '{RANK_FUNCTION}({args})'")
