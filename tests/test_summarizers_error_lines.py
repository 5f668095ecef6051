"""Error lines recognised by their form: what a program printed, never a name or a success."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.summarizers.error_lines import (
    error_lines,
    is_error_line,
    last_error_line,
    mentions_failure,
)

DATA = Path(__file__).parent / "data" / "transcripts"


@pytest.mark.parametrize(
    "line",
    [
        "Error: 'ascii' codec can't decode byte 0xc3 in position 4",
        "error: pathspec 'x' did not match any file(s) known to git",
        "fatal: not a git repository (or any of the parent directories): .git",
        "ValueError: bad value",
        "marshmallow.exceptions.ValidationError: {'x': ['Missing data']}",
        "AssertionError",
        "Bareiss failed with: TypeError Invalid NaN comparison",
        "E   AssertionError: assert 1 == 2",
        "FAILED tests/test_x.py::test_round - AssertionError: 1 != 2",
        "src/a.c:12:5: error: expected ';' before '}' token",
        "main.go:3: error: undefined: foo",
        "usage: x [-h]\nx: error: the following arguments are required: path",
        "bash: foo: command not found",
        "cat: missing.txt: No such file or directory",
        "error[E0308]: mismatched types",
        "npm ERR! missing script: test",
        "Segmentation fault (core dumped)",
        "  File x, in f: KeyError: 'k'",
    ],
)
def test_error_forms_are_recognised(line: str) -> None:
    assert error_lines(line), line


@pytest.mark.parametrize(
    "line",
    [
        "File created successfully at: /x/reproduce_error.py",
        "WRITE reproduce_error.py",
        "def test_error_message(self):",
        "    raise ValueError('a listing, not a failure')",
        "    except ValueError:",
        "ERROR:",
        "Error handling improved in 2.0",
        "collected 3 items / 0 errors",
        "The file /repo/error_utils.py has been edited.",
        "12:    msg = 'no errors here'",
    ],
)
def test_names_and_successes_are_not_errors(line: str) -> None:
    assert not error_lines(line), line


def test_the_last_error_is_the_one_quoted() -> None:
    output = (
        "Testing case 1\nError: 'ascii' codec can't decode byte 0xc3\n"
        "Testing case 2\nBareiss failed with: TypeError Invalid NaN comparison\ndone"
    )
    assert last_error_line(output) == "Bareiss failed with: TypeError Invalid NaN comparison"
    assert last_error_line("all good\n3 passed") is None


@pytest.mark.parametrize(
    ("line", "failed"),
    [
        ("File created successfully at: /x/reproduce_error.py", False),
        ("The file /t/error_handler.py has been edited. Here's the result", False),
        ("No replacement was performed, old_str `x` did not appear verbatim in a.py.", True),
        ("Your proposed edit has introduced new syntax error(s).", True),
        ("The path /repo/missing_error.py does not exist.", True),
        ("Invalid `view_range` parameter", True),
        ("[File: /t/error_codes.py (12 lines total)]", False),
    ],
)
def test_file_tool_answers(line: str, failed: bool) -> None:
    assert mentions_failure(line) is failed


@given(st.from_regex(r"[a-z]{1,8}_error(?:_[a-z]{1,8})?\.(?:py|txt|log)", fullmatch=True))
def test_a_file_named_for_errors_is_never_an_error(name: str) -> None:
    for line in (name, f"File created successfully at: /tmp/{name}", f"WRITE {name}"):
        assert not is_error_line(line)
        assert not mentions_failure(line)


def test_a_bare_label_is_read_with_the_next_line() -> None:
    text = "ERROR:\n\nInvalid `path` parameter: y is not an absolute path"
    assert error_lines(text) == ["ERROR: Invalid `path` parameter: y is not an absolute path"]
    assert error_lines("ERROR:") == []  # nothing to quote


def test_the_last_error_line_at_the_end_of_a_long_output() -> None:
    from palimpsest.summarizers.error_lines import last_error_line_at_end

    noise = "ok line\n" * 2_000
    assert last_error_line_at_end(noise, 4_000) is None
    trace = noise + "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'k'\n"
    assert last_error_line_at_end(trace, 4_000) == "KeyError: 'k'"
    assert last_error_line_at_end(noise + "ERROR:\nInvalid `path`: /x\n", 4_000) == (
        "ERROR: Invalid `path`: /x"
    )
    # an error further back than the window is not read
    assert last_error_line_at_end("Error: early\n" + noise, 4_000) is None
    assert (
        last_error_line_at_end("File created successfully at: /x/reproduce_error.py", 100) is None
    )


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from([
            "ok", "", "   ", "Error: bad thing", "ERROR:", "Invalid path", "ValueError:",
            "  detail", "E   AssertionError", "FAILED t.py::x - boom", "x failed with: TypeError",
            "bash: foo: command not found", "Traceback (most recent call last):",
            "File created successfully at: /a/error.py", "error", "=== 1 failed in 1s ===",
        ]),
        max_size=12,
    ),
    st.integers(min_value=1, max_value=200),
)  # fmt: skip
def test_at_end_agrees_with_the_full_reading(lines: list[str], window: int) -> None:
    from palimpsest.summarizers.error_lines import last_error_line_at_end

    text = "\n".join(lines)
    assert last_error_line_at_end(text, window) == last_error_line(text[-window:])


# Pieces of every form, whole and cut, joined with the separators the forms care about.
_PIECES = [
    "Error", "Error: ", "ValueError: x", "pkg.mod.KeyError", "Exception: ", "Interrupt",
    "KeyboardInterrupt", "Failure", "error", "error[E0308]: x", "ERROR: x", "fatal: x", "Fatal",
    "FATAL:", "panic: x", "npm ERR! x", "npm ERR!", "git: error: x", "cc: fatal error: x",
    "a.c:12:5: error x", "a.c:3: fatal error", "E   x", "E  ", "E", "FAILED t::x", "FAILED",
    "=== 1 failed in 1s", "== 2 errors", "x failed with: y", "failed with", "raised OSError: ",
    ": command not found", "sh: x: No such file or directory", ": Permission denied",
    "Segmentation fault", "(core dumped)", "Traceback (most recent call last)", "Trace",
    "make_error", "as error:", "TypeError)", "x", "12", ":", ".", "_", "  ",
]  # fmt: skip
_JOINS = ["", " ", "\n", "\n\n", "  \n", ": ", "\r\n"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_PIECES), st.sampled_from(_JOINS)), max_size=10))
def test_the_forms_kept_for_a_text_find_what_every_form_finds(
    parts: list[tuple[str, str]],
) -> None:
    # Only forms whose literals occur are tried (for speed); the matches must be the same.
    from palimpsest.summarizers.error_lines import _BRANCHES, _FORMS, _forms_for

    text = "".join(piece + join for piece, join in parts)
    forms = _forms_for(text)
    found = [m.span() for m in forms.finditer(text)] if forms is not None else []
    assert found == [m.span() for m in _FORMS.finditer(text)]
    for branch, words in _BRANCHES:  # each form's literals are in every match of it
        if re.search(branch, text, re.M):
            assert any(word in text for word in words), branch


def test_the_forms_kept_agree_on_real_tool_outputs() -> None:
    from palimpsest.summarizers.error_lines import _FORMS, _forms_for

    outputs = []
    for path in sorted((DATA / "mini-swe-agent").glob("*.json")):
        for message in json.loads(path.read_text(encoding="utf-8")):
            content = message.get("content")
            if isinstance(content, str):
                outputs.append(content)
    assert len(outputs) > 20
    narrowed = 0
    for text in outputs:
        forms = _forms_for(text)
        narrowed += forms is not _FORMS
        found = [m.span() for m in forms.finditer(text)] if forms is not None else []
        assert found == [m.span() for m in _FORMS.finditer(text)]
    assert narrowed > len(outputs) // 2  # most outputs hold the words of a few forms only
