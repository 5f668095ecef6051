"""Stored text made safe to print on a terminal: control and bidi characters shown, not obeyed.

A session holds whatever a tool printed or a model wrote. Printed raw, ``ESC[2J`` clears the
screen of whoever runs ``sessions search``, ``\\x9b`` (the one-byte CSI) does the same on
terminals that take C1 codes, ``\\r`` overwrites a line, and U+202E (right-to-left override)
makes ``exe.txt`` read as ``txt.exe``. Every human-facing print of stored text goes through
:func:`for_terminal`, which replaces those characters with a visible escape (``\\x1b``,
``\\u202e``), so the text reads as what it is.

Escaped: C0 controls (except newline and tab where the output has lines, which
``keep_lines=False`` escapes too), DEL, C1 controls, the bidi embeddings, overrides, isolates
and marks (U+202A-202E, U+2066-2069, U+200E, U+200F, U+061C), the line and paragraph
separators U+2028/U+2029, and lone surrogates (which would otherwise make the print fail).
Backslashes are left alone: the result is for reading, not for parsing back.

JSON output is not escaped this way (it must decode to exactly what is stored):
:func:`json_for_terminal` writes the same characters as JSON ``\\uXXXX`` escapes, which a
JSON reader decodes to the original (``json.dumps`` already escapes C0 controls itself).
"""

from __future__ import annotations

import functools
import re

__all__ = ["TERMINAL_UNSAFE", "for_terminal", "json_for_terminal"]

_BIDI = (
    *range(0x202A, 0x202F),  # LRE, RLE, PDF, LRO, RLO
    *range(0x2066, 0x206A),  # LRI, RLI, FSI, PDI
    0x200E,  # LRM
    0x200F,  # RLM
    0x061C,  # ALM
    0x2028,  # LINE SEPARATOR
    0x2029,  # PARAGRAPH SEPARATOR
)

TERMINAL_UNSAFE: frozenset[int] = frozenset(
    (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *_BIDI, *range(0xD800, 0xE000))
)
"""Code points :func:`for_terminal` escapes (newline and tab only when ``keep_lines`` is off)."""


def _visible(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}


def _pattern(table: dict[int, str]) -> re.Pattern[str]:
    """One character class of ``table``'s code points, as ranges (a class of 2,000 single
    characters is far slower to match than a dozen ranges)."""
    runs: list[list[int]] = []
    for code in sorted(table):
        if runs and code == runs[-1][1] + 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    parts = (
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in runs
    )
    return re.compile("[" + "".join(parts) + "]")


_Table = tuple[dict[int, str], re.Pattern[str]]


@functools.cache
def _tables() -> tuple[_Table, _Table, _Table]:
    """The escape tables and their patterns (one line, with lines, JSON), built on first use:
    about 10 ms that ``palimpsest --help`` and every command printing no stored text skip."""
    one_line = {code: _NAMED.get(code, _visible(code)) for code in TERMINAL_UNSAFE}
    with_lines = {k: v for k, v in one_line.items() if k not in (0x09, 0x0A)}
    # C0 controls never reach the JSON table raw: json.dumps escapes them
    json_table = {code: f"\\u{code:04x}" for code in TERMINAL_UNSAFE if code >= 0x7F}
    return (
        (one_line, _pattern(one_line)),
        (with_lines, _pattern(with_lines)),
        (json_table, _pattern(json_table)),
    )


def for_terminal(text: object, *, keep_lines: bool = True) -> str:
    """``text`` (``str()`` of anything else) with every terminal-unsafe character escaped.

    ``keep_lines=True`` leaves newlines and tabs (a message body, a memory entry);
    ``keep_lines=False`` escapes them too, for text that must stay on one line.
    """
    value = text if isinstance(text, str) else str(text)
    one_line, with_lines, _ = _tables()
    table, pattern = with_lines if keep_lines else one_line
    # A regex finds the rare unsafe character at C speed; clean text comes back as it is.
    return pattern.sub(lambda found: table[ord(found.group())], value)


def json_for_terminal(json_text: str) -> str:
    """JSON text with DEL, C1, bidi, separator and lone-surrogate characters as ``\\uXXXX``.

    They can only occur inside JSON strings, where the escape decodes to the same
    character, so the data is exactly what it was.
    """
    table, pattern = _tables()[2]
    return pattern.sub(lambda found: table[ord(found.group())], json_text)
