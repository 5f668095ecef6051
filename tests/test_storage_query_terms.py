"""Parsing plain queries into content words and exact forms, and the exact-form check."""

from __future__ import annotations

import apsw
import apsw.fts5query
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.storage.query_terms import STOPWORDS, exact_match, parse_terms


@pytest.mark.parametrize(
    ("query", "words", "exact"),
    [
        # stopwords fit for questions are not evidence
        ("What did she research during her trip?", ("research", "trip"), ()),
        ("who was he with when they met", ("met",), ()),
        # possessives become the word, hyphenated words become words (never phrases)
        ("Caroline's team's plan", ("caroline", "team", "plan"), ()),
        ("the teams’ follow-up", ("teams", "follow"), ()),
        ("home-baked bread", ("home", "baked", "bread"), ()),
        # operator-like tokens are exact forms
        ("git push --force", ("git", "push"), ("--force",)),
        ("rm -rf build", ("rm", "build"), ("-rf",)),
        ("100% full", ("full",), ("100%",)),
        ("C++ templates", ("templates",), ("C++",)),
        ("rename a_b", ("rename",), ("a_b",)),
        ("edit my-app.config.ts", ("edit",), ("my-app.config.ts",)),
        # a quoted phrase is an exact form; its words are not stemmed
        ('"Researching" seeds', ("seeds",), ("Researching",)),
        ('"deploy  on friday"', (), ("deploy on friday",)),
        # "may" is a month, not a stopword
        ("what happened in May", ("happened", "may"), ()),
        # only stopwords: they are kept, there is nothing else
        ("the who", ("the", "who"), ()),
        ("Docker docker DOCKER", ("docker",), ()),
    ],
)
def test_parse_terms(query: str, words: tuple[str, ...], exact: tuple[str, ...]) -> None:
    terms = parse_terms(query)
    assert (terms.words, terms.exact, terms.explicit) == (words, exact, False)


@pytest.mark.parametrize("query", ["docker AND build", "a OR b", "(a b)", "deploy*", "NEAR(a b)"])
def test_fts_syntax_is_explicit(query: str) -> None:
    assert parse_terms(query).explicit


def test_question_words_are_stopwords() -> None:
    for word in [
        "who",
        "what",
        "when",
        "where",
        "why",
        "how",
        "did",
        "does",
        "the",
        "a",
        "he",
        "she",
        "his",
        "her",
        "during",
    ]:
        assert word in STOPWORDS
    for word in ("may", "june", "first", "last", "force"):
        assert word not in STOPWORDS


def test_match_texts() -> None:
    terms = parse_terms("git push --force")
    assert terms.match_all() == 'git push "--force"'
    assert terms.match_any() == '(git OR push) AND "--force"'
    assert terms.match_any(["push"]) == 'push AND "--force"'
    assert (
        terms.match_candidates(["push"]) == '(push AND "--force") AND ((git OR push) AND "--force")'
    )


@pytest.mark.parametrize(
    ("text", "needle", "found"),
    [
        ("git push --force origin", "--force", True),
        ("force the rebuild", "--force", False),
        ("git push --force-with-lease", "--force", True),
        ("the disk was 100% full", "100%", True),
        ("the disk was 100 percent full", "100%", False),
        ("grew 1100%", "100%", False),
        ("written in C++17", "C++", True),
        ("written in C", "C++", False),
        ("rename a_b now", "a_b", True),
        ("rename a b now", "a_b", False),
        ("rename xa_b now", "a_b", False),
        ("edit my-app.config.ts", "my-app.config.ts", True),
        ("edit my app config ts", "my-app.config.ts", False),
        ("rm -rf /", "-rf", True),
        ("I was Researching", "researching", True),
        ("I was researched", "researching", False),
        ("we donated seeds", "donate", False),
        ("deploy\n on   friday", "deploy on friday", True),
        (None, "x", False),
        ("x", "   ", False),
    ],
)
def test_exact_match(text: str | None, needle: str, found: bool) -> None:
    assert exact_match(text, needle) is found


@settings(max_examples=300, deadline=None)
@given(query=st.text(max_size=80))
def test_any_string_gives_parseable_match_texts(query: str) -> None:
    terms = parse_terms(query)
    con = apsw.Connection(":memory:")
    con.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
    for text in (terms.match_all(), terms.match_any(), terms.match_candidates(terms.words[:1])):
        if text and terms.count:
            apsw.fts5query.parse_query_string(text)
            con.execute("SELECT rowid FROM t WHERE t MATCH ?", (text,)).fetchall()
    for needle in terms.exact:
        exact_match(query, needle)
