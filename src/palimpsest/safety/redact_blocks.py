"""Secret values that sit on the lines after their name: ``Password:`` + newline, YAML blocks.

Assignment rules read a name and a value on one line. Two shapes put the value below:

* **Next-line values**: a prompt or a note ends with a secret's name and a colon, and the
  value is the whole next line (``Enter the new password:`` then ``Tr0ub4dor&3``; YAML's
  plain scalar continued on an indented line). The next line must be one token that mixes
  letters with digits or looks random (:func:`~.redact_values.looks_secret`): sudo's
  ``Sorry, try again.`` and an OpenAPI ``type: string`` are left.
* **YAML block scalars** (``key: |``, ``|-``, ``>``, ``>-``, with an indentation digit or
  chomping sign) under a secret's name: every line indented deeper than the key is the
  value, and goes. A placeholder (``${SIGNING_SECRET}``, ``<set in vault>``), a block a
  pass already redacted (a PEM body), or prose (mostly words) stays.

Only strong names count (``password``, ``token``, ``secret``, ``*_key`` of the strong
list); ``description: |`` and ``token_help: >-`` are not names of secrets.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .redact_values import (
    KEY_WORDS,
    REDACTED,
    announces_placeholder,
    looks_secret,
)

__all__ = ["on_escaped_lines", "redact_blocks"]

# Where a line ends in ":" (or ": |", ": >-", a comment after): found by its literal
# colon, which the regex engine scans for fast; the name before it is checked apart.
_LINE_END = re.compile(r":[ \t]*([|>](?:[1-9][+-]?|[+-][1-9]?)?)?[ \t]*(?:#[^\n]*)?\r?\n")
_NAME_BEFORE = re.compile(
    rf"(?<![A-Za-z0-9])(?:{KEY_WORDS})(?![A-Za-z0-9_])\\?[\"']?[ \t]*\Z", re.IGNORECASE
)
_NAME_REACH = 64
_WORD = re.compile(r"[A-Za-z][a-z]+[,.;:!?]?")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _next_line_value(token: str) -> bool:
    if len(token) < 6 or token[0] in "$%{<*-#/~." or announces_placeholder(token):
        return False
    if REDACTED in token or "://" in token:
        return False
    has_alpha = any(c.isalpha() for c in token)
    has_digit = any(c.isdigit() for c in token)
    return (has_alpha and has_digit) or looks_secret(token)


def _is_prose(body: str) -> bool:
    words = body.split()
    return len(words) >= 3 and sum(bool(_WORD.fullmatch(w)) for w in words) * 3 >= len(words) * 2


def _block_end(text: str, start: int, key_indent: int) -> int:
    """Where the block scalar starting at ``start`` ends: the first line not indented past the key."""
    end = start
    while end < len(text):
        newline = text.find("\n", end)
        line_end = len(text) if newline < 0 else newline + 1
        line = text[end:line_end].rstrip("\r\n")
        if line.strip() and _indent(line) <= key_indent:
            break
        end = line_end
    return end


def on_escaped_lines(text: str, rewrite: Callable[[str], str]) -> str:
    """Apply a line-aware ``rewrite`` to a JSON string body whose line breaks are ``\\n``.

    Tool-call arguments are stored as JSON text, so a YAML block or a wrapped key inside
    them has the two characters ``\\n`` where its lines break. When ``text`` has no real
    line break and no escaped backslash, the escapes are turned into line breaks, the
    rewrite runs, and they are turned back: the round trip is exact.
    """
    if "\n" in text or "\\n" not in text or "\\\\" in text:
        return rewrite(text)
    lines = text.replace("\\r\\n", "\r\n").replace("\\n", "\n")
    done = rewrite(lines)
    if done == lines:
        return text
    return done.replace("\r\n", "\\r\\n").replace("\n", "\\n")


def redact_blocks(text: str, found: list[str]) -> str:
    """``text`` with next-line and block-scalar values under secret names redacted
    (also inside a JSON string, see :func:`on_escaped_lines`)."""
    return on_escaped_lines(text, lambda lines: _redact_blocks(lines, found))


def _redact_blocks(text: str, found: list[str]) -> str:
    if "\n" not in text or ":" not in text:
        return text
    pieces: list[str] = []
    done = 0
    for match in _LINE_END.finditer(text):
        if match.start() < done:
            continue
        line_start = text.rfind("\n", 0, match.start()) + 1
        name = _NAME_BEFORE.search(
            text, max(line_start, match.start() - _NAME_REACH), match.start()
        )
        if name is None:
            continue
        key_indent = _indent(text[line_start : name.start()] + "x")
        body_start = match.end()
        if match.group(1):
            body_end = _block_end(text, body_start, key_indent)
            body = text[body_start:body_end]
            stripped = body.strip()
            if (
                not stripped
                or REDACTED in body
                or announces_placeholder(stripped)
                or _is_prose(stripped)
            ):
                continue
            lead = body[: len(body) - len(body.lstrip(" \t\r\n"))]  # blank lines, indent
            ending = "\r\n" if body.endswith("\r\n") else "\n" if body.endswith("\n") else ""
            pieces += [text[done:body_start], f"{lead}{REDACTED}{ending}"]
            found.append(stripped)
            done = body_end
            continue
        newline = text.find("\n", body_start)
        line_end = len(text) if newline < 0 else newline
        line = text[body_start:line_end].rstrip("\r")
        token = line.strip()
        if not token or any(c.isspace() for c in token) or not _next_line_value(token):
            continue
        at = body_start + line.index(token)
        pieces += [text[done:at], REDACTED]
        found.append(token)
        done = at + len(token)
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)
