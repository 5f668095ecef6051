"""Turn text into the form a model reads, and find the characters a person cannot see.

A scanner that matches raw text is beaten by the cheapest tricks: ``ignore`` written with a
Cyrillic ``о``, ``ｉｇｎｏｒｅ`` in fullwidth letters, a zero-width space inside a keyword, or
instructions smuggled in Unicode tag characters. A model reads through all of these. So the
scan runs on a *folded* copy of the text: NFKC, then every non-ASCII character that the
Unicode confusables table (through the maintained ``confusable-homoglyphs`` package, not a
hand-made table) lists as looking like an ASCII character is replaced by it, and invisible
characters are dropped. The stored text is never changed; folding only decides what to scan.

Invisible characters are reported separately and first (MEM-36): every format character
(Unicode category ``Cf``: zero-width characters, soft hyphen, U+2063, bidi controls, tag
characters), the blank "filler" letters, and the variation selectors used to smuggle bytes.
Emoji presentation selectors (U+FE0E, U+FE0F) are ordinary text and pass.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = [
    "INVISIBLE_CHARS",
    "STRICT_INVISIBLE_CHARS",
    "despaced",
    "first_invisible",
    "fold",
    "is_invisible",
    "mixed_script_word",
    "unleet",
]

INVISIBLE_CHARS = frozenset(
    "\u200b\u200c\u200d\u2060\ufeff\u202a\u202b\u202c\u202d\u202e"
)  # the seed set of MEM-36: zero-width characters and bidi embedding/override controls
STRICT_INVISIBLE_CHARS = INVISIBLE_CHARS | frozenset("\u2062\u2063\u2064\u2066\u2067\u2068\u2069")
"""The MEM-38 additions. Kept for callers; both modes now flag every invisible character."""

# Letters that render as blank space but are not Cf: Hangul fillers, braille blank,
# combining grapheme joiner, and the Mongolian vowel separator (Cf in newer Unicode only).
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f\u180e")
_EMOJI_SELECTORS = frozenset("\ufe0e\ufe0f")


def is_invisible(char: str) -> bool:
    """Whether ``char`` is invisible to a reader but still read by a model."""
    if char in _EMOJI_SELECTORS:
        return False
    code = ord(char)
    if 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:  # variation selectors
        return True
    return char in _BLANK_LETTERS or unicodedata.category(char) == "Cf"


def first_invisible(text: str) -> str | None:
    """The first invisible character in ``text``, or ``None``."""
    if text.isascii():
        return None
    hidden = _invisible_in(text)
    return min(hidden, key=text.index) if hidden else None


_ASCII = frozenset(map(chr, range(128)))
_FEW = 8
"""Up to this many distinct characters to change are replaced one by one (a C search
each); more go through one ``str.translate``, which looks up every character."""


def _non_ascii(text: str) -> set[str]:
    """The distinct non-ASCII characters of ``text``."""
    return set(text).difference(_ASCII)


def _invisible_in(text: str) -> set[str]:
    """The distinct invisible characters of ``text`` (each character is classified once)."""
    return {char for char in _non_ascii(text) if is_invisible(char)}


@lru_cache(maxsize=1)
def _fold_table() -> dict[int, str]:
    """Non-ASCII character -> the ASCII character it is confusable with (built once)."""
    from confusable_homoglyphs.confusables import confusables_data  # type: ignore[import-untyped]

    table: dict[int, str] = {}
    for char, homoglyphs in confusables_data.items():
        if len(char) != 1 or char.isascii():
            continue
        forms = [h["c"] for h in homoglyphs if len(h["c"]) == 1 and h["c"].isascii()]
        # The ASCII look-alikes of those look-alikes belong to the same class ("І" is listed
        # only as looking like "l", and "l" as looking like "I" and "1").
        forms += [
            h["c"]
            for form in list(forms)
            for h in confusables_data.get(form, [])
            if len(h["c"]) == 1 and h["c"].isascii()
        ]
        if forms:
            table[ord(char)] = min(forms, key=lambda c: _preference(char, c))
    return table


def _preference(char: str, candidate: str) -> tuple[bool, bool, bool]:
    """Sort key: the letter the character's Unicode name ends in, then letters, then digits."""
    named = unicodedata.name(char, "").rsplit(" ", 1)[-1].lower() == candidate.lower()
    return (not named, not candidate.isalpha(), not candidate.isalnum())


def fold(text: str) -> str:
    """``text`` as a model would read it: NFKC, homoglyphs folded, invisible characters gone."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", text)
    # Only the text's own non-ASCII characters can change (the table maps nothing else,
    # and to ASCII), so the work is per distinct character, not per character.
    table = _fold_table()
    changes: dict[str, str] = {}
    for char in _non_ascii(text):
        if is_invisible(char):
            changes[char] = ""
        elif (to := table.get(ord(char))) is not None:
            changes[char] = to
    if len(changes) > _FEW:
        return text.translate({ord(char): to for char, to in changes.items()})
    for char, to in changes.items():
        text = text.replace(char, to)
    return text


_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a"})
_LEET_WORD = re.compile(r"\b[a-z]*[013457@][a-z013457@]*\b", re.IGNORECASE)


def unleet(text: str) -> str:
    """Digits used as letters inside words read as letters (``1gn0re`` -> ``ignore``).

    Only words that also contain a letter are touched, so numbers and versions stay.
    """

    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        return word.translate(_LEET) if any(c.isalpha() for c in word) else word

    return _LEET_WORD.sub(swap, text)


_SPACED = re.compile(r"\b(?:[A-Za-z][ .\-_*]){3,}[A-Za-z]\b")


def despaced(text: str) -> str:
    """Letters spelled out one by one (``i g n o r e``, ``i.g.n.o.r.e``) joined into words."""
    return _SPACED.sub(lambda m: re.sub(r"[ .\-_*]", "", m.group(0)), text)


_WORD = re.compile(r"[^\W\d_]{2,}")
_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE")


def _script(char: str) -> str | None:
    name = unicodedata.name(char, "")
    return next((s for s in _SCRIPTS if name.startswith(s)), None)


def mixed_script_word(text: str) -> str | None:
    """The first word that mixes Latin letters with look-alike letters of another script.

    Real words keep to one script (``Grüße``, ``Straße``, ``ドキュメント``); a word such as
    ``pаypal`` with a Cyrillic ``а`` exists only to get past a filter.
    """
    if text.isascii():
        return None
    for match in _WORD.finditer(unicodedata.normalize("NFKC", text)):
        word = match.group(0)
        if word.isascii():
            continue
        scripts = {s for s in map(_script, word) if s is not None}
        if "LATIN" in scripts and len(scripts) > 1:
            return word
    return None
