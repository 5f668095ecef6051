"""Reading a saved output back: a byte window that never cuts a character, and a grep.

Both work on the file directly and never load it whole: a window is one seek and one read
of ``limit`` bytes, and grep streams the file a chunk at a time, so a gigabyte object is as
cheap to page through as a kilobyte one. Offsets are byte offsets into the stored file, the
only offsets that allow an O(1) seek; a window's ``end`` is the ``offset`` of the next one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError

__all__ = ["GREP_LINE_CHARS", "Match", "Window", "grep_file", "iter_lines", "read_window"]

#: A matching line longer than this is shown as this many characters around the match.
GREP_LINE_CHARS = 300
_MAX_CONTINUATION = 3  # a UTF-8 character has at most three continuation bytes


@dataclass(frozen=True)
class Window:
    """Bytes ``start``..``end`` of an object of ``total_bytes``, decoded as text."""

    digest: str
    text: str
    start: int
    end: int
    total_bytes: int
    kind: str

    @property
    def has_more(self) -> bool:
        return self.end < self.total_bytes


@dataclass(frozen=True)
class Match:
    """A matching line: 1-based ``line_number``, ``byte_offset`` where the line starts.

    A line longer than the read chunk is searched piece by piece; a match in a later piece
    has that piece's offset and the same line number.
    """

    line_number: int
    byte_offset: int
    line: str


def _continuation(byte: int) -> bool:
    return 0x80 <= byte <= 0xBF


def read_window(
    path: Path, offset: int = 0, limit: int = 20_000, *, digest: str = "", kind: str = "text"
) -> Window:
    """The window of about ``limit`` bytes at ``offset`` of the file, on character bounds.

    The start moves forward past continuation bytes and the end moves back onto the start
    of a character, so neither edge cuts a character; a window is never empty while bytes
    remain (a ``limit`` smaller than one character still returns that character). Bytes
    that are not valid UTF-8 are shown as U+FFFD.
    """
    if offset < 0:
        raise UserError(f"offset must be 0 or more, not {offset}")
    if limit < 1:
        raise UserError(f"limit must be at least 1 byte, not {limit}")
    with path.open("rb") as handle:
        total = os.fstat(handle.fileno()).st_size
        start = min(offset, total)
        handle.seek(start)
        # Enough for the skipped head and one whole character past a tiny limit.
        data = handle.read(limit + 2 * _MAX_CONTINUATION + 1)
    head = 0
    if start > 0:
        while head < min(_MAX_CONTINUATION, len(data)) and _continuation(data[head]):
            head += 1
    end = min(limit, len(data))
    steps = 0
    while end > head and end < len(data) and _continuation(data[end]) and steps < 3:
        end -= 1
        steps += 1
    if end <= head < len(data):
        end = head + 1
        while end < len(data) and _continuation(data[end]) and end - head <= _MAX_CONTINUATION:
            end += 1
    text = data[head:end].decode("utf-8", errors="replace")
    return Window(digest, text, start + head, start + end, total, kind)


def iter_lines(path: Path, chunk_size: int = 1024 * 1024) -> Iterator[tuple[int, int, bytes]]:
    """``(line_number, byte_offset, line)`` for each line, without its line break.

    At most about two chunks are held; a line longer than ``chunk_size`` comes out in
    pieces with the same line number.
    """
    number, offset, buffer = 1, 0, b""
    with path.open("rb") as handle:
        while True:
            data = handle.read(chunk_size)
            buffer += data
            begin = 0
            while (newline := buffer.find(b"\n", begin)) >= 0:
                yield number, offset, buffer[begin:newline]
                offset += newline + 1 - begin
                number += 1
                begin = newline + 1
            buffer = buffer[begin:]
            if not data:
                if buffer:
                    yield number, offset, buffer
                return
            if len(buffer) >= chunk_size:
                yield number, offset, buffer
                offset += len(buffer)
                buffer = b""


def excerpt(line: str, start: int, end: int, width: int = GREP_LINE_CHARS) -> str:
    """``line`` cut to about ``width`` characters around ``line[start:end]``."""
    if len(line) <= width:
        return line
    first = max(0, min(start - (width - min(end - start, width)) // 2, len(line) - width))
    piece = line[first : first + width]
    return ("…" if first else "") + piece + ("…" if first + width < len(line) else "")


def grep_file(
    path: Path,
    pattern: str,
    *,
    max_matches: int = 50,
    regex: bool = False,
    ignore_case: bool = False,
    chunk_size: int = 1024 * 1024,
) -> list[Match]:
    """The first ``max_matches`` lines of the file containing ``pattern``.

    ``pattern`` is literal text unless ``regex``; a bad regular expression is a
    :class:`~palimpsest.errors.UserError`. Lines are decoded with ``errors="replace"``.
    """
    if not pattern:
        raise UserError("the grep pattern is empty")
    if max_matches < 1:
        raise UserError(f"max_matches must be at least 1, not {max_matches}")
    try:
        compiled = re.compile(
            pattern if regex else re.escape(pattern), re.IGNORECASE if ignore_case else 0
        )
    except re.error as exc:
        raise UserError(f"invalid regular expression {pattern!r}: {exc}") from None
    matches: list[Match] = []
    for number, offset, raw in iter_lines(path, chunk_size):
        line = raw.decode("utf-8", errors="replace").removesuffix("\r")
        found = compiled.search(line)
        if found is None:
            continue
        matches.append(Match(number, offset, excerpt(line, found.start(), found.end())))
        if len(matches) >= max_matches:
            break
    return matches
