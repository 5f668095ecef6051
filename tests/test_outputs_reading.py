"""Reading saved outputs: windows on character bounds, streamed grep."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest.errors import UserError
from palimpsest.outputs.reading import excerpt, grep_file, iter_lines, read_window


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "o.txt"
    path.write_bytes(data)
    return path


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(max_size=300), limit=st.integers(1, 40), offset=st.integers(0, 20))
def test_windows_never_cut_a_character_and_tile_the_file(
    tmp_path: Path, text: str, limit: int, offset: int
) -> None:
    data = text.encode("utf-8", "surrogatepass")
    path = write(tmp_path, data)
    if "\ufffd" in text or any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return  # only valid text can show that nothing was replaced
    # Paging from 0 by `end` reproduces the file exactly, with no replacement characters.
    pieces, position = [], 0
    while True:
        window = read_window(path, position, limit)
        assert window.start == position and "\ufffd" not in window.text
        pieces.append(window.text)
        if not window.has_more:
            break
        assert window.end > position
        position = window.end
    assert "".join(pieces) == text
    # From any offset the window starts and ends on a character boundary.
    window = read_window(path, offset, limit)
    assert window.text.encode() == data[window.start : window.end]
    assert window.start >= min(offset, len(data)) and window.start - offset <= 3


def test_a_limit_smaller_than_a_character_still_returns_it(tmp_path: Path) -> None:
    path = write(tmp_path, "\U0001f600x".encode())
    window = read_window(path, 0, 1)
    assert (window.text, window.start, window.end, window.total_bytes) == ("\U0001f600", 0, 4, 5)
    assert read_window(path, 1, 2).text == "x"  # starts past the continuation bytes


def test_past_the_end_is_empty_and_bad_arguments_are_user_errors(tmp_path: Path) -> None:
    path = write(tmp_path, b"abc")
    window = read_window(path, 10, 5)
    assert (window.text, window.start, window.end, window.has_more) == ("", 3, 3, False)
    with pytest.raises(UserError, match="offset"):
        read_window(path, -1, 5)
    with pytest.raises(UserError, match="limit"):
        read_window(path, 0, 0)


def test_invalid_bytes_show_as_replacement_characters(tmp_path: Path) -> None:
    assert read_window(write(tmp_path, b"a\xffb"), 0, 10).text == "a\ufffdb"


def test_iter_lines_numbers_offsets_and_long_lines(tmp_path: Path) -> None:
    path = write(tmp_path, b"one\ntwo\r\n" + b"x" * 25 + b"\nlast")
    got = list(iter_lines(path, chunk_size=10))
    assert got[:2] == [(1, 0, b"one"), (2, 4, b"two\r")]
    long_pieces = [g for g in got if g[0] == 3]
    assert b"".join(g[2] for g in long_pieces) == b"x" * 25 and len(long_pieces) > 1
    assert long_pieces[0][1] == 9 and got[-1] == (4, 35, b"last")


def test_grep_literal_regex_case_and_limit(tmp_path: Path) -> None:
    lines = [f"line {i}: {'ERROR a.b' if i % 10 == 0 else 'ok'}" for i in range(100)]
    path = write(tmp_path, ("\n".join(lines) + "\n").encode())
    found = grep_file(path, "a.b", chunk_size=64)
    assert [m.line_number for m in found] == list(range(1, 101, 10))
    assert found[1].line == "line 10: ERROR a.b"
    assert found[1].byte_offset == len(("\n".join(lines[:10]) + "\n").encode())
    assert grep_file(path, "a.b", max_matches=3)[-1].line_number == 21
    assert grep_file(path, "AXB") == [] and len(grep_file(path, "a.b", regex=True)) == 10
    assert len(grep_file(path, "error", ignore_case=True)) == 10
    assert grep_file(path, r"line \d+: ok$", regex=True, max_matches=200)[0].line_number == 2
    with pytest.raises(UserError, match="invalid regular expression"):
        grep_file(path, "(", regex=True)
    with pytest.raises(UserError, match="empty"):
        grep_file(path, "")


def test_a_long_matching_line_is_cut_around_the_match(tmp_path: Path) -> None:
    path = write(tmp_path, b"a" * 5000 + b"NEEDLE" + b"b" * 5000 + b"\n")
    (match,) = grep_file(path, "NEEDLE")
    assert "NEEDLE" in match.line and len(match.line) <= 302
    assert match.line.startswith("…") and match.line.endswith("…")
    assert excerpt("short", 0, 1) == "short"
