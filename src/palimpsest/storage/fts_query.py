"""Turn what a user types into a search plan: a safe FTS5 query, a route and the exact SQL.

People type shell flags, file names, percentages and half-finished quotes into a search
box. Passed to FTS5 as-is, ``-rf`` is a column filter, ``C++`` a syntax error and
``"unterminated`` a crash. This module owns the rules that make every input safe while
still finding what was meant (spec SS-47..SS-53):

* :func:`sanitize_query` rewrites free text into an FTS5 query that cannot raise a syntax
  error: balanced quoted phrases are kept, ``AND``/``OR``/``NOT``/``NEAR(...)`` and
  balanced parentheses keep their meaning, dangling operators are trimmed, and every
  other term is quoted with :func:`apsw.fts5query.quote` so punctuation inside it is
  literal. ``-rf``, ``--force``, ``100%``, ``a_b``, ``my-app.config.ts`` and ``C++``
  become quoted phrases that match under both the ``unicode61`` and ``trigram``
  tokenizers. The result is checked with :func:`apsw.fts5query.parse_query_string`.
* :func:`route_for` picks the index from the query's script, up front (SS-53): three or
  more CJK characters use the trigram index, one or two use ``LIKE``.
* :func:`build_search` builds the SQL for that route (BM25 rank, snippet, filters and an
  unconditional ``LIMIT``); :func:`run_search` executes a plan. Building and running are
  separate so the SQL can be tested exactly and printed by ``palimpsest sessions search
  --sql``.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import apsw
import apsw.fts5query

__all__ = [
    "MAX_QUERY_CHARS",
    "SEARCH_COLUMNS",
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
]

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 2048
"""SS-12: longer queries are cut to this many characters before sanitizing."""

SNIPPET_TOKENS = 40
"""Tokens of context in an FTS snippet (SS-47)."""

LIKE_SNIPPET_BEFORE = 40
LIKE_SNIPPET_CHARS = 120
"""SS-52: a LIKE snippet is 120 characters starting 40 before the first match."""

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

_OPERATORS = frozenset({"AND", "OR", "NOT"})
_KEYWORDS = frozenset({"AND", "OR", "NOT", "NEAR"})

# A few English words that carry no search signal. Dropped only when terms are OR-joined,
# where each of them would otherwise match (and rank) most of the store.
_STOPWORDS_TEXT = """
a about after all also an and any are as at be been before but by can could did do does
for from had has have how i if in into is it its me my no not of on or our so than that
the their them then there these they this to up us was we were what when where which who
why will with would you your
"""
_STOPWORDS = frozenset(_STOPWORDS_TEXT.split())

# SS-52 detection ranges: CJK ideographs (+ extension A/B), CJK punctuation, kana, hangul.
_CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x3000, 0x303F),
    (0x3040, 0x309F),
    (0x30A0, 0x30FF),
    (0xAC00, 0xD7AF),
)

# Punctuation peeled off the ends of a bare term: sentence punctuation and brackets, never
# the characters that make a term what it is (leading ``-`` of ``-rf``, trailing ``+`` of
# ``C++`` or ``%`` of ``100%``, the ``.`` of ``.env``, ``$``, ``#``, ``@``, ``/``).
_LEAD_STRIP = "'`[{<,;:!?^|&~=}]>+"
_TRAIL_STRIP = "'`]}>,;:!?.^|&~=[{<"

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_NEAR_DISTANCE = re.compile(r",\s*(\d+)\s*$")
_EDGE_PUNCT = '()"' + "。、，！？：；「」『』（）【】《》〈〉"


def is_cjk(char: str) -> bool:
    """True for a character in one of the SS-52 CJK ranges."""
    code = ord(char)
    return any(lo <= code <= hi for lo, hi in _CJK_RANGES)


def cjk_count(text: str) -> int:
    """How many CJK characters ``text`` holds."""
    return sum(1 for ch in text if is_cjk(ch))


def clean_query(text: str) -> str:
    """SS-12: cap at :data:`MAX_QUERY_CHARS`, turn control characters into spaces, strip."""
    text = _CONTROL.sub(" ", text[:MAX_QUERY_CHARS])
    # Unassigned code points and lone surrogates cannot be encoded for SQLite.
    text = "".join(" " if unicodedata.category(ch) in ("Cs", "Cn") else ch for ch in text)
    return text.strip()


# -- lexing ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Tok:
    kind: Literal["term", "phrase", "op", "open", "close", "near", "dist"]
    text: str = ""
    prefix: bool = False
    near: tuple[_Tok, ...] = ()
    distance: int | None = None


def _has_word(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def _term(chunk: str) -> _Tok | None:
    """A bare chunk of user text as a term, or None when nothing searchable is left."""
    chunk = chunk.lstrip(_LEAD_STRIP + "*").rstrip(_TRAIL_STRIP)
    prefix = chunk.endswith("*")
    chunk = chunk.rstrip("*").rstrip(_TRAIL_STRIP)
    if not _has_word(chunk):
        return None
    if chunk in _OPERATORS:
        return _Tok("op", chunk)
    return _Tok("term", chunk, prefix=prefix)


def _in_near(out: list[_Tok]) -> bool:
    """True when the tokens so far end inside an open ``NEAR(`` group."""
    i = len(out) - 1
    while i >= 0 and out[i].kind in ("term", "phrase"):
        i -= 1
    return i >= 1 and out[i].kind == "open" and out[i - 1].text == "NEAR"


def _split_bare(segment: str, out: list[_Tok]) -> None:
    """Lex text outside quotes: parentheses, NEAR groups, operators and terms."""
    for piece in re.split(r"(\(|\))", segment):
        if piece in ("(", ")"):
            out.append(_Tok("open" if piece == "(" else "close"))
            continue
        distance = None
        found = _NEAR_DISTANCE.search(piece) if _in_near(out) else None
        if found:
            piece, distance = piece[: found.start()], int(found.group(1))
        for chunk in piece.split():
            tok = _term(chunk)
            if tok is not None:
                out.append(tok)
        if distance is not None:
            out.append(_Tok("dist", distance=distance))


def _lex(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    # Balanced double-quoted phrases are protected first (SS-48 step 1); a final unpaired
    # quote is just punctuation.
    parts = text.split('"')
    if len(parts) % 2 == 0:
        last = parts.pop()
        parts[-1] += " " + last
    for i, part in enumerate(parts):
        if i % 2:
            after = parts[i + 1] if i + 1 < len(parts) else ""
            if _has_word(part):
                out.append(_Tok("phrase", " ".join(part.split()), prefix=after.startswith("*")))
            continue
        if i and part.startswith("*"):
            part = part.lstrip("*")
        _split_bare(part, out)
    return _group_near(out)


def _group_near(toks: list[_Tok]) -> list[_Tok]:
    """Fold ``NEAR ( a b , 5 )`` into one token; a bare ``NEAR`` stays a plain term."""
    out: list[_Tok] = []
    i = 0
    while i < len(toks):
        tok = toks[i]
        if tok.text == "NEAR" and i + 1 < len(toks) and toks[i + 1].kind == "open":
            j = i + 2
            while j < len(toks) and toks[j].kind in ("term", "phrase"):
                j += 1
            inner = tuple(toks[i + 2 : j])
            distance = None
            if j < len(toks) and toks[j].kind == "dist":
                distance = toks[j].distance
                j += 1
            if inner and j < len(toks) and toks[j].kind == "close":
                out.append(_Tok("near", near=inner, distance=distance))
                i = j + 1
                continue
        if tok.kind == "dist":
            tok = _Tok("term", str(tok.distance))
        out.append(tok)
        i += 1
    return out


# -- cleaning and rendering -------------------------------------------------------------


def _balance(toks: list[_Tok]) -> list[_Tok]:
    """Drop every parenthesis when they do not pair up (SS-48: no brackets survive)."""
    depth = 0
    for tok in toks:
        if tok.kind == "open":
            depth += 1
        elif tok.kind == "close":
            depth -= 1
            if depth < 0:
                break
    if depth == 0:
        return toks
    return [t for t in toks if t.kind not in ("open", "close")]


def _tidy(toks: list[_Tok]) -> list[_Tok]:
    """Trim dangling operators and empty groups until nothing changes (SS-48 step 4)."""
    changed = True
    while changed:
        changed = False
        out: list[_Tok] = []
        for tok in toks:
            prev = out[-1] if out else None
            if tok.kind == "op" and (prev is None or prev.kind in ("op", "open")):
                changed = True  # operator with nothing on its left
                continue
            if tok.kind == "close":
                if prev is not None and prev.kind == "op":
                    out.pop()  # "(a OR)" -> "(a"
                    changed = True
                    prev = out[-1] if out else None
                if prev is not None and prev.kind == "open":
                    out.pop()  # "()" -> nothing
                    changed = True
                    continue
            out.append(tok)
        while out and out[-1].kind == "op":
            out.pop()
            changed = True
        toks = out
    return toks


def _quote(text: str) -> str:
    quoted = apsw.fts5query.quote(text)
    # fts5query.quote leaves bare words alone, but a bare AND/OR/NOT/NEAR is an operator.
    if quoted.upper() in _KEYWORDS:
        quoted = f'"{quoted}"'
    return quoted


def _phrase(tok: _Tok) -> str:
    return _quote(tok.text) + ("*" if tok.prefix else "")


def _primary(tok: _Tok) -> bool:
    return tok.kind in ("term", "phrase", "near", "close")


def _render(toks: list[_Tok]) -> str:
    parts: list[str] = []
    prev: _Tok | None = None
    for tok in toks:
        if prev is not None and _primary(prev) and tok.kind in ("term", "phrase", "near", "open"):
            # FTS5 only allows an implicit AND between phrases; next to a group spell it.
            implicit = prev.kind != "close" and tok.kind != "open"
            parts.append(" " if implicit else " AND ")
        elif prev is not None and prev.kind != "open" and tok.kind != "close":
            parts.append(" ")
        if tok.kind in ("term", "phrase"):
            parts.append(_phrase(tok))
        elif tok.kind == "near":
            inner = " ".join(_phrase(t) for t in tok.near)
            suffix = f", {tok.distance}" if tok.distance is not None else ""
            parts.append(f"NEAR({inner}{suffix})")
        elif tok.kind == "op":
            parts.append(tok.text)
        else:
            parts.append("(" if tok.kind == "open" else ")")
        prev = tok
    return "".join(parts)


def _any_terms(toks: list[_Tok]) -> list[_Tok]:
    """OR-join the items of a plain query, dropping stopwords when others remain."""
    items = [t for t in toks if t.kind in ("term", "phrase", "near")]
    kept = [t for t in items if not (t.kind == "term" and t.text.lower() in _STOPWORDS)]
    items = kept or items
    out: list[_Tok] = []
    for tok in items:
        if out:
            out.append(_Tok("op", "OR"))
        out.append(tok)
    return out


def _is_plain(toks: list[_Tok]) -> bool:
    return all(t.kind in ("term", "phrase", "near") for t in toks)


def _lower_dangling(toks: list[_Tok]) -> list[_Tok]:
    """SS-48 trims leading/trailing operators case-insensitively: ``hello and`` -> ``hello``."""
    while toks and toks[0].kind == "term" and toks[0].text.upper() in _OPERATORS:
        toks = toks[1:]
    while toks and toks[-1].kind == "term" and toks[-1].text.upper() in _OPERATORS:
        toks = toks[:-1]
    return toks


def sanitize_query(text: str, *, match_any: bool = False) -> str:
    """An FTS5 query for ``text`` that cannot raise a syntax error; ``""`` when nothing is left.

    Terms are AND-ed (FTS5's implicit AND). With ``match_any`` a plain query (no operators
    or parentheses) OR-joins its terms instead and drops common English stopwords, which
    widens recall for natural-language questions; BM25 still ranks rows matching more
    terms first. Explicit ``AND``/``OR``/``NOT`` always win over ``match_any``.
    """
    toks = _balance(_lex(clean_query(text)))
    while True:
        tidied = _lower_dangling(_tidy(toks))
        if tidied == toks:
            break
        toks = tidied
    if not toks:
        return ""
    if match_any and _is_plain(toks) and len(toks) > 1:
        toks = _any_terms(toks)
    rendered = _render(toks)
    try:
        apsw.fts5query.parse_query_string(rendered)
    except apsw.fts5query.ParseError:  # pragma: no cover - a bug in the rules above
        log.warning("sanitized query %r did not parse; searching its terms only", rendered)
        plain = [t for t in toks if t.kind in ("term", "phrase")]
        rendered = " ".join(_phrase(t) for t in plain)
    return rendered


def query_terms(text: str) -> list[str]:
    """The words of a query, lower-cased, without operators and quotes (for highlighting)."""
    words = clean_query(text).replace('"', " ").split()
    terms = []
    for word in words:
        if word in _OPERATORS:
            continue
        word = word.strip(_LEAD_STRIP + _TRAIL_STRIP + "*()").lower()
        if word:
            terms.append(word)
    return terms


# -- routing ----------------------------------------------------------------------------


def _cjk_tokens(text: str) -> list[str]:
    """SS-52 preparation: outer quotes stripped, split on whitespace, operators kept."""
    text = text.strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        text = text[1:-1]
    tokens = []
    for token in text.split():
        bare = token.strip(_LEAD_STRIP + _TRAIL_STRIP + _EDGE_PUNCT)
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
    tokens = [t for t in _cjk_tokens(text) if t not in _OPERATORS]
    cjk_tokens = [cjk_count(t) for t in tokens if cjk_count(t)]
    if has_trigram and sum(cjk_tokens) >= 3 and all(n >= 3 for n in cjk_tokens):
        return "trigram"
    return "like"


def _trigram_query(text: str) -> str:
    out: list[_Tok] = []
    for token in _cjk_tokens(text):
        if token in _OPERATORS:
            out.append(_Tok("op", token))
        elif cjk_count(token) or len(token) >= 3:
            # A trigram phrase shorter than three characters matches nothing, so a short
            # Latin word would empty the whole AND; it is left out instead.
            out.append(_Tok("phrase", token))
    return _render(_tidy(out))


def _like_terms(text: str) -> list[str]:
    terms = [t.replace('"', "") or t for t in _cjk_tokens(text) if t not in _OPERATORS]
    # Lone punctuation would match nearly every row; keep it only if nothing else is left.
    wordy = [t for t in terms if _has_word(t)]
    return (wordy or terms)[:32]


# -- SQL --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchPlan:
    """The SQL for one search, its parameters, and how it was routed.

    ``match`` is the FTS5 query (fts/trigram routes) or the LIKE terms joined by spaces.
    ``fallback`` is the LIKE plan to run if the FTS statement fails anyway (SS-50).
    """

    sql: str
    params: tuple[Any, ...]
    route: Route
    match: str = ""
    fallback: SearchPlan | None = None


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
    members("m.session_id", [str(s) for s in exclude_session_ids], negate=True)
    # SS-38: rewound rows (inactive and not compaction-archived) are hidden from search.
    where.append("(m.active = 1 OR m.compacted = 1)")
    return where, params


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


def _fts_sql(table: str, where: list[str]) -> str:
    select = _SELECT.format(
        snippet=f"snippet({table}, 0, '>>>', '<<<', '...', {SNIPPET_TOKENS})",
        rank=f"{table}.rank",
    )
    conditions = " AND ".join([f"{table} MATCH ?", *where])
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
    match_any: bool = False,
) -> SearchPlan:
    """The :class:`SearchPlan` for ``query``; run it with :func:`run_search`.

    Every route selects :data:`SEARCH_COLUMNS` and ends in ``LIMIT ? OFFSET ?``.
    ``role_filter``, ``source`` and ``exclude_sources`` take a list or a comma-separated
    string. A blank query gives route ``none``, whose SQL returns no rows.
    """
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
    if route == "trigram":
        match = _trigram_query(text)
        table = "messages_fts_trigram"
    else:
        match = sanitize_query(text, match_any=match_any)
        table = "messages_fts"
    fallback_terms = _like_terms(text) if route == "trigram" else query_terms(text) or [text]
    fallback = _like_plan(fallback_terms, where, params, limit, offset)
    sql = _fts_sql(table, where)
    return SearchPlan(sql, (match, *params, limit, offset), route, match, fallback)


def run_search(connection: apsw.Connection, plan: SearchPlan) -> list[dict[str, Any]]:
    """Execute ``plan``; rows come back as dicts keyed by :data:`SEARCH_COLUMNS`.

    Should the FTS statement still fail (a damaged index, an FTS5 rule this module does
    not know), the error is logged and the plan's LIKE fallback runs instead of silently
    returning nothing (SS-50).
    """
    try:
        cursor = connection.execute(plan.sql, plan.params)
        return [dict(zip(SEARCH_COLUMNS, row, strict=True)) for row in cursor]
    except apsw.SQLError as exc:
        if plan.fallback is None:
            raise
        log.warning("full-text search failed (%s); falling back to LIKE", exc)
        return run_search(connection, plan.fallback)
