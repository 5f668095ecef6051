"""The query sanitizer on its own: exact rewrites, stripping, OR-joining, cleaning."""

from __future__ import annotations

import apsw.fts5query
import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.storage.fts_sanitize import (
    MAX_QUERY_CHARS,
    clean_query,
    query_terms,
    quote_tokens,
    sanitize_query,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("hello world", "hello world"),
        ("hello AND", "hello"),
        ("hello and", "hello"),
        ("OR world", "world"),
        ("***", ""),
        ("deploy*", "deploy*"),
        ("chat-send", '"chat-send"'),
        ("P2.2", '"P2.2"'),
        ("my-app.config.ts", '"my-app.config.ts"'),
        ("-rf", '"-rf"'),
        ("C++", '"C++"'),
        ("100%", '"100%"'),
        ("a AND OR b", "a AND b"),
        ("(a OR b) c", "(a OR b) AND c"),
        ('"quoted phrase" x', '"quoted phrase" x'),
        ('"my app"* x', '"my app"* x'),
        ("NEAR(foo bar, 5)", "NEAR(foo bar, 5)"),
        ("NEAR foo", '"NEAR" foo'),
        ('"AND"', '"AND"'),
        ("", ""),
        ("   ", ""),
    ],
)
def test_sanitize_exact(raw: str, expected: str) -> None:
    assert sanitize_query(raw) == expected


@pytest.mark.parametrize("raw", ["C++", '"unterminated', "(problem", "{test}", "a)(b"])
def test_sanitize_strips_syntax_characters(raw: str) -> None:
    out = sanitize_query(raw)
    # Only a complete quoted phrase may carry punctuation; no bare bracket or quote remains.
    assert "(" not in out and "{" not in out and ")" not in out
    assert out.count('"') % 2 == 0


def test_match_any_or_joins_and_drops_stopwords() -> None:
    assert sanitize_query("how did we fix the docker build", match_any=True) == (
        "fix OR docker OR build"
    )
    # explicit operators win; a single term has nothing to join
    assert sanitize_query("docker AND build", match_any=True) == "docker AND build"
    assert sanitize_query("the", match_any=True) == "the"


def test_clean_query_caps_and_strips_control_characters() -> None:
    assert clean_query("a\x00b\x1bc\x7f") == "a b c"
    assert len(clean_query("x" * 5000)) == MAX_QUERY_CHARS
    assert clean_query("tab\there\nnew") == "tab\there\nnew"


def test_query_terms() -> None:
    assert query_terms('"OAuth Refresh" AND token*') == ["oauth", "refresh", "token"]


def test_quote_tokens_keeps_operators() -> None:
    assert quote_tokens(["数据库", "OR", 'a"b', "AND"]) == '数据库 OR "a""b"'


@given(st.text(max_size=80))
def test_output_always_parses(text: str) -> None:
    out = sanitize_query(text)
    if out:
        apsw.fts5query.parse_query_string(out)
    assert len(clean_query(text)) <= MAX_QUERY_CHARS
