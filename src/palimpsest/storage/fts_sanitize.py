"""Rewrite free text into an FTS5 query that cannot raise a syntax error.

People type shell flags, file names, percentages and half-finished quotes into a search
box. Passed to FTS5 as-is, ``-rf`` is a column filter, ``C++`` a syntax error and
``"unterminated`` a crash. :func:`sanitize_query` keeps what the user meant (spec SS-48..
SS-50, SS-12):

* balanced quoted phrases are kept; ``AND``/``OR``/``NOT``, ``NEAR(...)`` and balanced
  parentheses keep their meaning; operators left dangling are trimmed;
* every other term is quoted with :func:`apsw.fts5query.quote`, so punctuation inside it
  is literal: ``-rf``, ``--force``, ``100%``, ``a_b``, ``my-app.config.ts`` and ``C++``
  become phrases that match under both the ``unicode61`` and ``trigram`` tokenizers;
* sentence punctuation and brackets at the edges of words are dropped.

The result is checked with :func:`apsw.fts5query.parse_query_string` before it is used.
Routing and SQL live in :mod:`.fts_query`.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import apsw.fts5query

__all__ = [
    "EDGE_PUNCTUATION",
    "MAX_QUERY_CHARS",
    "OPERATORS",
    "Token",
    "clean_query",
    "has_word",
    "lex_query",
    "query_terms",
    "quote_phrase",
    "quote_tokens",
    "sanitize_query",
]

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 2048
"""SS-12: longer queries are cut to this many characters before sanitizing."""


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

# Punctuation peeled off the ends of a bare term: sentence punctuation and brackets, never
# the characters that make a term what it is (leading ``-`` of ``-rf``, trailing ``+`` of
# ``C++`` or ``%`` of ``100%``, the ``.`` of ``.env``, ``$``, ``#``, ``@``, ``/``).
_LEAD_STRIP = "'`[{<,;:!?^|&~=}]>+"
_TRAIL_STRIP = "'`]}>,;:!?.^|&~=[{<"

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_NEAR_DISTANCE = re.compile(r",\s*(\d+)\s*$")
_EDGE_PUNCT = '()"' + "。、，！？：；「」『』（）【】《》〈〉"


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


def lex_query(text: str) -> list[_Tok]:
    """The cleaned tokens of ``text``: balanced, with dangling operators trimmed."""
    toks = _balance(_lex(clean_query(text)))
    while True:
        tidied = _lower_dangling(_tidy(toks))
        if tidied == toks:
            return toks
        toks = tidied


def quote_phrase(text: str) -> str:
    """``text`` as one FTS5 phrase (a bare word stays bare; operators are quoted)."""
    return _quote(text)


def sanitize_query(text: str, *, match_any: bool = False) -> str:
    """An FTS5 query for ``text`` that cannot raise a syntax error; ``""`` when nothing is left.

    Terms are AND-ed (FTS5's implicit AND). With ``match_any`` a plain query (no operators
    or parentheses) OR-joins its terms instead and drops common English stopwords, which
    widens recall for natural-language questions; BM25 still ranks rows matching more
    terms first. Explicit ``AND``/``OR``/``NOT`` always win over ``match_any``.
    """
    toks = lex_query(text)
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


def quote_tokens(tokens: Iterable[str]) -> str:
    """Whitespace-split tokens as quoted phrases; ``AND``/``OR``/``NOT`` stay operators."""
    toks = [_Tok("op", t) if t in _OPERATORS else _Tok("phrase", t) for t in tokens]
    return _render(_tidy(toks))


def has_word(text: str) -> bool:
    """True when ``text`` holds a letter or digit of any script."""
    return _has_word(text)


OPERATORS = _OPERATORS
Token = _Tok
"""One lexed item of a query: a term, a quoted phrase, an operator, a parenthesis, NEAR."""
EDGE_PUNCTUATION = _LEAD_STRIP + _TRAIL_STRIP + _EDGE_PUNCT
"""Characters stripped from the edges of a CJK-route token (brackets, quotes, 。、 ...)."""
