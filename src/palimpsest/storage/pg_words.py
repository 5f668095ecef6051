"""The PostgreSQL word index's words, cut and stemmed by SQLite's own tokenizer.

The SQLite store indexes text with FTS5's ``porter unicode61`` tokenizer. PostgreSQL's
``english`` configuration differs from it in ways that move rankings apart (the recall
benchmark ranked 169 of 300 questions' top 5 differently): its parser keeps ``3.5``,
``v2.3.1``, ``a_b`` or an e-mail address as one token where ``unicode61`` cuts them into
words, it adds a hyphenated word whole beside its parts, Snowball's English stemmer is
not Porter's (``fairly``: ``fair`` against ``fairli``), and a ``tsvector`` loses its
trailing stopwords, so its highest position undercounts a message's length.

So the PostgreSQL store does not ask the server to tokenize. :func:`index_words` runs the
very tokenizer the SQLite index uses (through ``apsw``, a core dependency) on the same
indexed text and writes the ``tsvector`` itself: one lexeme per distinct stemmed token,
with as many positions as the token occurs (up to :data:`MAX_POSITIONS`), and the
message's token count kept apart (``messages.words``), FTS5's document length for BM25.
Queries are stemmed the same way (:func:`query_lexemes`), so both backends see the same
terms, the same term frequencies and the same lengths.

Positions here are occurrence numbers (1, 2, 3 ... per lexeme), not places in the text:
the store never asks PostgreSQL for phrases (exact forms are checked with ``ILIKE``), and
a position past PostgreSQL's limit of 16,383 would otherwise merge a long message's
later occurrences into one. Stopwords are indexed, as FTS5 indexes them: Porter's stems
collide with them (``Ines`` and ``in`` are both ``in``), so leaving them out changed
document frequencies, and a query of stopwords only (``who is she``) is a word query on
both backends.
"""

from __future__ import annotations

import functools
import threading
from collections import Counter
from collections.abc import Iterable
from typing import Any

import apsw

from .session_index import WORD_TOKENIZER

__all__ = ["MAX_LEXEME_BYTES", "MAX_POSITIONS", "IndexedWords", "index_words", "query_lexemes"]

MAX_POSITIONS = 256
"""Positions PostgreSQL keeps per lexeme: a term frequency is counted up to this."""

MAX_LEXEME_BYTES = 2046
"""PostgreSQL's longest lexeme; longer tokens (a base64 blob) count toward the length only."""

_MAX_VECTOR_BYTES = 900_000
"""Stay under PostgreSQL's 1 MB ``tsvector``: lexemes past this are left out (a message
with that much distinct vocabulary is a data dump, and its length still counts)."""

_LOCAL = threading.local()


def _tokenize(text: str, reason: int) -> list[str]:
    """The stemmed tokens of ``text``, in order (a list built in C: no offsets)."""
    tokenizer: Any = getattr(_LOCAL, "tokenizer", None)
    if tokenizer is None:
        connection = apsw.Connection(":memory:")
        kind, _, args = WORD_TOKENIZER.partition(" ")
        tokenizer = connection.fts5_tokenizer(kind, args.split())
        _LOCAL.connection, _LOCAL.tokenizer = connection, tokenizer
    found: list[str] = tokenizer(
        text.encode("utf-8", "replace"),
        reason,
        None,
        include_offsets=False,
        include_colocated=False,
    )
    return found


def _quoted(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


class IndexedWords:
    """One text's ``tsvector`` literal (:attr:`vector`) and token count (:attr:`count`)."""

    __slots__ = ("count", "vector")

    def __init__(self, vector: str, count: int) -> None:
        self.vector = vector
        self.count = count


def index_words(text: str) -> IndexedWords:
    """The ``tsvector`` literal and FTS5 token count of ``text`` (module docstring)."""
    tokens = _tokenize(text, apsw.FTS5_TOKENIZE_DOCUMENT)
    parts: list[str] = []
    size = 0
    for stem, times in Counter(tokens).items():
        if len(stem) * 4 > MAX_LEXEME_BYTES and len(stem.encode("utf-8")) > MAX_LEXEME_BYTES:
            continue
        times = min(times, MAX_POSITIONS)
        size += len(stem) + 8 + 2 * times
        if size > _MAX_VECTOR_BYTES:
            break
        quoted = _quoted(stem) if "'" in stem or "\\" in stem else f"'{stem}'"
        parts.append(f"{quoted}:{_positions(times)}")
    return IndexedWords(" ".join(parts), len(tokens))


@functools.lru_cache(maxsize=MAX_POSITIONS)
def _positions(times: int) -> str:
    return ",".join(map(str, range(1, times + 1)))


def query_lexemes(words: Iterable[str]) -> list[str]:
    """The distinct lexemes of a query's ``words`` in order, stemmed as :func:`index_words`
    stems text."""
    found: dict[str, None] = {}
    for word in words:
        for stem in _tokenize(word, apsw.FTS5_TOKENIZE_QUERY):
            if len(stem.encode("utf-8")) <= MAX_LEXEME_BYTES:
                found[stem] = None
    return list(found)
