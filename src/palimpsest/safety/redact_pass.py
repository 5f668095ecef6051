"""The pass machinery of :mod:`.redact`: one pattern, the literals its matches start with,
and where those literals occur in a text (found once for every pass that seeks them)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .redact_reuse import removed_values

__all__ = ["Anchors", "Pass", "Replacement"]


Replacement = str | Callable[[re.Match[str]], str]


class Anchors:
    """Where each anchor occurs in one text, found once for every pass that seeks it.

    Several passes share anchors (``token``, ``secret``, ``pass``, ``key`` start names for
    the assignment, weak-name, prose and labelled rules), and each ``str.find`` over a long
    text costs about as much as a cheap pass; valid until a pass changes the text."""

    __slots__ = ("_found", "_has")

    def __init__(self) -> None:
        self._found: dict[tuple[bool, str], list[int]] = {}
        self._has: dict[tuple[bool, str], bool] = {}

    def positions(
        self,
        haystack: str,
        anchor: str,
        lowered: bool,
        spans: list[tuple[int, int]] | None = None,
    ) -> list[int]:
        """Every offset of ``anchor`` in ``haystack`` (the lowered text when ``lowered``);
        with ``spans`` (sorted, disjoint), those of occurrences that lie inside one, unless
        the whole text was already searched for ``anchor``."""
        key = (lowered, anchor)
        found = self._found.get(key)
        if found is not None:
            return found
        if not self._has_characters(haystack, anchor, lowered):
            found = []
        elif spans is not None:
            return [index for low, high in spans for index in _find(haystack, anchor, low, high)]
        else:
            found = _find(haystack, anchor, 0, len(haystack))
        self._found[key] = found
        return found

    def _has_characters(self, haystack: str, anchor: str, lowered: bool) -> bool:
        """Whether every character of ``anchor`` occurs in ``haystack``: the trigger shared
        by all passes. Looking for one character is a ``memchr``-like scan that stops at
        the first one, several times cheaper than looking for a word that is absent (most
        anchors are: program names, the passwords' names in other scripts, capitals), and
        each character is looked for once per text; an anchor with a missing character
        costs no scan of its own (in an ASCII text, a non-ASCII one costs nothing)."""
        has = self._has
        for char in anchor:
            key = (lowered, char)
            present = has.get(key)
            if present is None:
                present = has[key] = char in haystack
            if not present:
                return False
        return True


def _find(haystack: str, anchor: str, low: int, high: int) -> list[int]:
    """Every offset of ``anchor`` lying wholly inside ``haystack[low:high]``."""
    found = []
    index = haystack.find(anchor, low, high)
    while index >= 0:
        found.append(index)
        index = haystack.find(anchor, index + 1, high)
    return found


@dataclass(frozen=True)
class Pass:
    """One pattern, the literals every match starts with, and how to rewrite a match.

    Matching only at anchor positions (found with ``str.find``, which is far faster than
    letting the regex engine try every offset) keeps each pass linear and cheap; a pass
    whose anchors are absent costs one substring scan.
    """

    anchors: tuple[str, ...]
    pattern: re.Pattern[str]
    replacement: Replacement
    ignore_case: bool = False
    regex_scan: bool = False  # short, common anchors: let the regex engine scan in C
    # A token whose anchor sits inside it (the ":" of a Telegram token): a match starts
    # up to ``lead_max`` characters of ``lead`` before the anchor, at the run's beginning;
    # an anchor with fewer than ``lead_min`` of them right before it starts no match.
    lead: str = ""
    lead_max: int = 0
    lead_min: int = 0
    # A format that fills a whole line (a ``.pgpass`` entry) and whose anchor is a short
    # pattern, not a literal: each match of ``seek`` marks a line the pattern is tried at
    # the start of (once an anchor is present at all).
    seek: re.Pattern[str] | None = None
    # A short pattern every match holds at most ``near_reach`` characters after its start (a
    # program's password flag after its name; its matches must never overlap): anchors are
    # looked for only within reach before a match of ``near`` in the text (one scan of the
    # text for all of them, cheaper than one per anchor), and a text without one skips the
    # pass.
    near: re.Pattern[str] | None = None
    near_reach: int = 0

    def apply(
        self, text: str, lowered: str, found: list[str], anchors: Anchors | None = None
    ) -> str:
        """``text`` with this pass's matches rewritten; each value removed goes to ``found``.
        ``anchors``: where anchors were found in this same text by earlier passes."""
        haystack = lowered if self.ignore_case else text
        if self.regex_scan:
            if not any(anchor in haystack for anchor in self.anchors):
                return text
            return self._sub(text, found)
        if self.ignore_case and len(lowered) != len(text):
            # Unicode case folding changed lengths, so offsets would not line up.
            return self._sub(text, found)
        starts: set[int] = set()
        if self.seek is not None:
            if any(anchor in haystack for anchor in self.anchors):
                starts = {text.rfind("\n", 0, m.start()) + 1 for m in self.seek.finditer(text)}
            return self._at(starts, text, found)
        anchors = anchors or Anchors()
        spans = None if self.near is None else self._spans(text)
        if spans == []:
            return text
        for anchor in self.anchors:
            at = anchors.positions(haystack, anchor, self.ignore_case, spans)
            if self.lead_max:
                starts.update(
                    self._run_start(text, index) for index in at if self._led(text, index)
                )
            else:
                starts.update(at)
        return self._at(starts, text, found)

    def _spans(self, text: str) -> list[tuple[int, int]]:
        """Where this pass's anchors can occur given ``near``: a match starts at most
        ``near_reach`` characters before a match of ``near`` (at or after its start), and
        its anchor lies within ``lead_max`` characters after its start (sorted, merged)."""
        assert self.near is not None
        reach, after = self.near_reach, self.lead_max + max(map(len, self.anchors))
        spans: list[tuple[int, int]] = []
        for match in self.near.finditer(text):
            low, high = max(0, match.start() - reach), match.start() + after
            if spans and low <= spans[-1][1]:
                spans[-1] = (spans[-1][0], high)
            else:
                spans.append((low, high))
        return spans

    def _at(self, starts: set[int], text: str, found: list[str]) -> str:
        """``text`` with the pattern's matches at ``starts`` rewritten."""
        if not starts:
            return text
        pieces: list[str] = []
        done, changed = 0, False
        for start in sorted(starts):
            if start < done:
                continue
            match = self.pattern.match(text, start)
            if match is None:
                continue
            new = self._rewrite(match, found)
            changed = changed or new != match.group(0)
            pieces.append(text[done:start])
            pieces.append(new)
            done = match.end()
        if not changed:
            return text
        pieces.append(text[done:])
        return "".join(pieces)

    def _sub(self, text: str, found: list[str]) -> str:
        """``text`` with every match of the pattern rewritten, scanned by the regex engine;
        ``text`` itself when no rewrite changed anything."""
        changed = False

        def rewrite(match: re.Match[str]) -> str:
            nonlocal changed
            new = self._rewrite(match, found)
            changed = changed or new != match.group(0)
            return new

        new_text = self.pattern.sub(rewrite, text)
        return new_text if changed else text

    def _rewrite(self, match: re.Match[str], found: list[str]) -> str:
        replacement = self.replacement
        new = replacement(match) if callable(replacement) else match.expand(replacement)
        found.extend(removed_values(match.group(0), new))
        return new

    def _led(self, text: str, index: int) -> bool:
        """``lead_min`` characters of ``lead`` right before ``index`` (``str.strip`` tells in
        C: ``-`` and ``.`` are everywhere, tokens with 32 hex digits before them are not)."""
        need = self.lead_min
        return index >= need and not text[index - need : index].strip(self.lead)

    def _run_start(self, text: str, index: int) -> int:
        start, floor = index, max(0, index - self.lead_max)
        while start > floor and text[start - 1] in self.lead:
            start -= 1
        return start
