"""Session titles: cleaning user-given titles and numbering them along a lineage.

A compression continuation inherits its parent's title with the next number
(``Build API`` -> ``Build API #2`` -> ``Build API #3``; spec SS-31, SS-32), and titles are
unique across sessions, so one title names one conversation. Titles come from users and
models, so :func:`sanitize_title` removes control and invisible characters first (SS-33).
"""

from __future__ import annotations

import re

import apsw

__all__ = [
    "MAX_TITLE_LENGTH",
    "escape_like",
    "next_title_in_lineage",
    "pick_next_title",
    "sanitize_title",
    "title_base",
]

MAX_TITLE_LENGTH = 100

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_INVISIBLE = re.compile("[\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufffc\ufff9-\ufffb]")
_NUMBERED = re.compile(r"^(?P<base>.*) #(?P<n>\d+)$", re.DOTALL)


def sanitize_title(title: str | None) -> str | None:
    """The title with control/invisible characters removed and whitespace collapsed.

    Returns ``None`` for an empty result; raises ``ValueError`` past 100 characters.
    """
    if not title:
        return None
    cleaned = _INVISIBLE.sub("", _CONTROL.sub("", title))
    cleaned = " ".join(cleaned.split())
    if not cleaned:
        return None
    if len(cleaned) > MAX_TITLE_LENGTH:
        raise ValueError(f"Title too long ({len(cleaned)} chars, max {MAX_TITLE_LENGTH})")
    return cleaned


def title_base(title: str) -> str:
    """``title`` without a trailing `` #<digits>``."""
    match = _NUMBERED.match(title)
    return match.group("base") if match else title


def escape_like(text: str) -> str:
    """``text`` as a literal inside a ``LIKE ... ESCAPE '\\'`` pattern."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def pick_next_title(base: str, existing: list[str]) -> str:
    """The next free title given the titles already used in the lineage family."""
    numbers = []
    for title in existing:
        if title == base:
            numbers.append(1)  # the unnumbered original counts as #1
            continue
        match = _NUMBERED.match(title)
        if match and match.group("base") == base:
            numbers.append(int(match.group("n")))
    if not numbers:
        return base
    return f"{base} #{max(numbers) + 1}"


def next_title_in_lineage(con: apsw.Connection, title: str) -> str:
    """SS-32: the title a continuation of a session titled ``title`` should get."""
    base = title_base(title)
    pattern = escape_like(base) + " #%"
    found = [
        row[0]
        for row in con.execute(
            "SELECT title FROM sessions WHERE title = ? OR title LIKE ? ESCAPE '\\'",
            (base, pattern),
        )
    ]
    return pick_next_title(base, found)
