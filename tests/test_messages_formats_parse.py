"""Parsing a transcript into one JSON value, JSONL records, or text; cut-off last lines."""

from __future__ import annotations

import pytest

from palimpsest.messages.formats_common import ConversionError
from palimpsest.messages.formats_parse import json_kind, parse

GOOD = '{"role": "user", "content": "a"}'


def test_json_document_and_one_line_jsonl() -> None:
    assert parse(f"[{GOOD}]").shape == "json"
    one = parse(GOOD)
    assert one.shape == "jsonl" and [r.where for r in one.records] == ["line 1"]
    # an object holding a known list is a whole document, not one record
    assert parse('{"messages": []}').shape == "json"


def test_cut_off_last_line_is_left_out_and_said() -> None:
    doc = parse(f"{GOOD}\n\n{GOOD}\n" + '{"role": "user", "cont')
    assert doc.shape == "jsonl"
    assert [r.where for r in doc.records] == ["line 1", "line 3"]
    assert doc.truncated is not None
    assert doc.truncated.startswith("line 4 (the last line) is cut off (")
    assert doc.truncated.endswith("read the 2 lines before it")


def test_a_broken_line_before_the_last_is_an_error() -> None:
    with pytest.raises(ConversionError, match="line 2: invalid JSON at column"):
        parse(f"{GOOD}\n{{broken\n{GOOD}\n")


def test_text_that_is_not_json_keeps_the_json_error() -> None:
    doc = parse("# aider chat started at 2025-01-01\n", "h.md")
    assert doc.shape == "text" and doc.name == "h.md"
    assert doc.json_error.startswith("invalid JSON at line 1, column 1")
    # a first line that is a JSON scalar is not JSONL either
    assert parse("42\nnot json\n").shape == "text"


def test_json_kind() -> None:
    assert json_kind({"a": 1, "b": 2}) == "object with keys a, b"
    assert json_kind({str(i): i for i in range(8)}).endswith("4, 5, ...")
    assert json_kind({}) == "empty object"
    assert (json_kind([]), json_kind("x"), json_kind(None), json_kind(1.5)) == (
        "array",
        "string",
        "null",
        "float",
    )
