"""pg_words: the PostgreSQL word index's terms are FTS5's porter unicode61 terms."""

from __future__ import annotations

import apsw
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.storage.pg_words import (
    MAX_LEXEME_BYTES,
    MAX_POSITIONS,
    index_words,
    query_lexemes,
)


def _fts5_tokens(text: str) -> list[str]:
    con = apsw.Connection(":memory:")
    tokenize = con.fts5_tokenizer("porter", ["unicode61"])
    return [t[2] for t in tokenize(text.encode(), apsw.FTS5_TOKENIZE_DOCUMENT, None)]


def _parse(vector: str) -> dict[str, int]:
    """``lexeme -> occurrences`` of a literal this module wrote (no quotes inside)."""
    found = {}
    for entry in vector.split():
        lexeme, _, positions = entry.rpartition(":")
        found[lexeme.strip("'")] = len(positions.split(","))
    return found


def test_terms_and_length_are_fts5s() -> None:
    text = "Ines's follow-up on v2.3.1: it's fairly done, in the end. Done!"
    words = index_words(text)
    tokens = _fts5_tokens(text)
    assert words.count == len(tokens) == 16  # trailing stopwords counted too
    counts = _parse(words.vector)
    assert counts["in"] == 2  # "Ines" and "in": Porter gives both "in"
    assert counts["done"] == 2 and counts["fairli"] == 1 and counts["v2"] == 1
    assert "follow-up" not in counts and "3.5" not in counts


def test_queries_are_stemmed_alike_and_deduplicated() -> None:
    assert query_lexemes(["running", "runs", "fairly", "Inés"]) == ["run", "fairli", "in"]
    assert query_lexemes(["the"]) == ["the"]  # stopwords are indexed, so asked for
    assert query_lexemes([]) == []


def test_postgres_limits_are_respected() -> None:
    long = "x" * (MAX_LEXEME_BYTES + 1)
    words = index_words(f"{long} word " + "again " * (MAX_POSITIONS + 10))
    assert words.count == 2 + MAX_POSITIONS + 10  # the length still counts everything
    counts = _parse(words.vector)
    assert long not in counts and counts["again"] == MAX_POSITIONS
    assert query_lexemes([long]) == []


@given(st.text(max_size=200))
def test_length_is_always_the_fts5_token_count(text: str) -> None:
    words = index_words(text)
    assert words.count == len(_fts5_tokens(text))
    assert sum(_parse(words.vector).values()) <= words.count
