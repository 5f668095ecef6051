"""A value recognised once is a secret everywhere: propagation, and keys wrapped over lines.

Rules recognise a secret by its context (``password=X``, ``Bearer X``); the same value a
line later, in prose or under a harmless name (``then psql accepted X``), has no context a
rule could read. :mod:`palimpsest.safety.redact` therefore records every value its passes
remove (:func:`removed_value`) and, once the text is done, removes every other occurrence of
those values too (:func:`mask_values`). Only values that could not be ordinary words are
carried (:func:`worth_carrying`): ``hunter2abcXYZ`` is, ``changeme`` or ``value`` is not, so
a ``secret: value`` in one line does not blank the word "value" in the rest of the text.

A token that a terminal or an editor wrapped over two lines leaves its tail on a line of
its own, right after the part a rule removed: :func:`redact_continuations` removes that
tail when it is one token of a key's alphabet that mixes letters and digits.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from .redact_values import REDACTED, announces_placeholder

__all__ = [
    "carried_values",
    "mask_values",
    "redact_continuations",
    "removed_value",
    "removed_values",
    "worth_carrying",
]

_MIN_CARRIED = 6
_MIN_TOKEN_IN_BLOCK = 16
_MAX_CONTINUATIONS = 8
_HAS_ALPHA = re.compile(r"[^\W\d_]")
_HAS_DIGIT = re.compile(r"\d")
_HAS_SYMBOL = re.compile(r"[^\w]|_")


def removed_value(old: str, new: str) -> str | None:
    """What a rewrite removed: ``old`` minus the prefix and suffix ``new`` kept around the marker."""
    at = new.find(REDACTED)
    if at < 0 or new == old:
        return None
    head, tail = new[:at], new[at + len(REDACTED) :]
    if len(head) + len(tail) > len(old) or not old.startswith(head) or not old.endswith(tail):
        return None
    return old[len(head) : len(old) - len(tail)] or None


def removed_values(old: str, new: str) -> list[str]:
    """Every value a rewrite removed, for a rewrite that left several markers (each cookie
    of a ``Cookie:`` header): ``old`` read against the text ``new`` kept between them.
    A value is the shortest stretch of ``old`` that reaches the next kept piece."""
    kept = new.split(REDACTED)
    if len(kept) <= 2:
        value = removed_value(old, new)
        return [value] if value else []
    if not old.startswith(kept[0]) or not old.endswith(kept[-1]):
        return []
    values: list[str] = []
    at, stop = len(kept[0]), len(old) - len(kept[-1])
    for piece in kept[1:-1]:
        end = old.find(piece, at + 1, stop) if piece else -1
        if end < 0:
            return values  # two markers side by side: where one value ends is unknown
        values.append(old[at:end])
        at = end + len(piece)
    if stop > at:
        values.append(old[at:stop])
    return values


@functools.lru_cache(maxsize=4096)
def worth_carrying(value: str) -> bool:
    """True when ``value`` cannot be an ordinary word, so its other occurrences are redacted.

    At least 6 characters mixing letters with digits or symbols (``hunter2abcXYZ``,
    ``Tr0ub4dor&3``), or 16+ letters of both cases (a random alphabetic key). Placeholders
    and the marker itself are never carried.
    """
    if len(value) < _MIN_CARRIED or REDACTED in value:
        return False
    if _HAS_ALPHA.search(value) and (_HAS_DIGIT.search(value) or _HAS_SYMBOL.search(value)):
        carried = not value.replace("_", "").replace("-", "").replace(".", "").isalpha()
    else:
        carried = (
            len(value) >= 16 and value.isalpha() and not value.islower() and not value.isupper()
        )
    return carried and not announces_placeholder(value)


def carried_values(values: Iterable[str]) -> set[str]:
    """The values (or, for multi-line values, the long tokens) worth carrying."""
    carried: set[str] = set()
    for value in set(values):
        parts = value.split()
        if len(parts) == 1:
            token = parts[0].strip("\"'")
            if worth_carrying(token):
                carried.add(token)
        elif parts:
            carried.update(t for t in parts if len(t) >= _MIN_TOKEN_IN_BLOCK and worth_carrying(t))
    return carried


def mask_values(text: str, values: Iterable[str]) -> tuple[str, list[str]]:
    """Every occurrence of a carried value in ``text`` replaced, and what was replaced.

    An occurrence must stand on its own: ``abc123`` inside ``xabc123y`` is another word.
    """
    wanted = sorted((v for v in carried_values(values) if v in text), key=lambda v: (-len(v), v))
    if not wanted:
        return text, []
    pattern = re.compile(
        r"(?<![A-Za-z0-9_])(?:" + "|".join(map(re.escape, wanted)) + r")(?![A-Za-z0-9_])"
    )
    hit: list[str] = []

    def replace(match: re.Match[str]) -> str:
        hit.append(match.group(0))
        return REDACTED

    return pattern.sub(replace, text), hit


# "[REDACTED]" then, on the next line, one token of a key's alphabet and nothing else.
_CONTINUATION = re.compile(
    r"(\[REDACTED\]['\"]?[ \t]*\r?\n[ \t]*)([A-Za-z0-9+/_-]{8,}+={0,2})(?=[ \t]*(?:\r?\n|$|['\"]))"
)


def _continuation(match: re.Match[str]) -> str:
    tail = match.group(2)
    if not (any(c.isdigit() for c in tail) and any(c.isalpha() for c in tail)):
        return match.group(0)
    if tail.replace("_", "").replace("-", "").isalpha():
        return match.group(0)
    return match.group(1) + REDACTED


def redact_continuations(text: str, found: list[str]) -> str:
    """The tail of a wrapped key (its own line, right after a redaction) redacted too."""
    if REDACTED not in text or "\n" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        new = _continuation(match)
        if new != match.group(0):
            found.append(match.group(2))
        return new

    for _ in range(_MAX_CONTINUATIONS):
        changed = _CONTINUATION.sub(replace, text)
        if changed == text:
            break
        text = changed
    return text
