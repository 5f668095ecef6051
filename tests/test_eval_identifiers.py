"""Identifiers the eval counts: code-shaped names from the agent's own words."""

from __future__ import annotations

from palimpsest.eval.identifiers import code_identifiers, identifier_present, prose_identifiers


def test_prose_takes_backticks_and_code_shaped_words_only() -> None:
    text = "The `Schema.dump(obj)` call in FieldMapper breaks load_config; see #1867 and PROJ-12."
    names = prose_identifiers(text)
    assert {"dump", "FieldMapper", "load_config", "#1867", "PROJ-12"} <= set(names)
    assert "The" not in names and "breaks" not in names


def test_code_takes_called_names_and_skips_agent_vocabulary() -> None:
    names = code_identifiers("edit 15:15\n    distance = gap(elem - elem2)\nend_of_edit")
    assert "gap" in names
    assert "end_of_edit" not in names


def test_calls_of_the_language_are_not_task_identifiers() -> None:
    names = code_identifiers("for i in range(3): total = abs(x) + data.decode().count(k)")
    assert not {"range", "abs", "decode", "count"} & set(names)
    assert "has_close_elements" in code_identifiers("has_close_elements(numbers, 0.5)")


def test_paths_are_not_identifiers() -> None:
    assert code_identifiers("cd /marshmallow-code__marshmallow/src") == []


def test_presence_is_a_whole_word_match() -> None:
    assert identifier_present("load", "call load() now")
    assert not identifier_present("load", "load_config")
    assert identifier_present("#1867", "fixes #1867.")


def test_keywords_called_like_functions_are_not_identifiers() -> None:
    names = code_identifiers("while(x) { if(y) return(z); } local_10 = next_cypher(a);")
    assert "while" not in names and "if" not in names and "return" not in names
    assert {"local_10", "next_cypher"} <= set(names)


def test_camel_names_are_found_without_backtracking_on_base64() -> None:
    """The camelCase pattern nested a repeat that backtracked exponentially on a long
    mixed-case run: one base64 blob in a tool output stalled `eval continuity` for minutes."""
    import base64
    import random
    import time

    blob = base64.b64encode(random.Random(7).randbytes(6_000)).decode()
    started = time.process_time()
    code_identifiers(f"payload {blob} then parseConfig(x) and HTTPServer")
    assert time.process_time() - started < 2.0  # was: no answer within 10 minutes
    found = code_identifiers("call parseConfig(x); getHTTPHeader; HTTPServer; camelCaseName")
    assert found == ["parseConfig", "getHTTPHeader", "HTTPServer", "camelCaseName", "parseConfig"]
