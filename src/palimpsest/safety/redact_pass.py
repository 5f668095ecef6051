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

    __slots__ = ("_found",)

    def __init__(self) -> None:
        self._found: dict[tuple[bool, str], list[int]] = {}

    def positions(self, haystack: str, anchor: str, lowered: bool) -> list[int]:
        """Every offset of ``anchor`` in ``haystack`` (the lowered text when ``lowered``)."""
        key = (lowered, anchor)
        found = self._found.get(key)
        if found is None:
            found = []
            index = haystack.find(anchor)
            while index >= 0:
                found.append(index)
                index = haystack.find(anchor, index + 1)
            self._found[key] = found
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

    def apply(
        self, text: str, lowered: str, found: list[str], anchors: Anchors | None = None
    ) -> str:
        """``text`` with this pass's matches rewritten; each value removed goes to ``found``.
        ``anchors``: where anchors were found in this same text by earlier passes."""
        haystack = lowered if self.ignore_case else text
        if self.regex_scan:
            if not any(anchor in haystack for anchor in self.anchors):
                return text
            return self.pattern.sub(self._recording(found), text)
        if self.ignore_case and len(lowered) != len(text):
            # Unicode case folding changed lengths, so offsets would not line up.
            return self.pattern.sub(self._recording(found), text)
        starts: set[int] = set()
        if self.seek is not None:
            if any(anchor in haystack for anchor in self.anchors):
                starts = {text.rfind("\n", 0, m.start()) + 1 for m in self.seek.finditer(text)}
            return self._at(starts, text, found)
        anchors = anchors or Anchors()
        for anchor in self.anchors:
            at = anchors.positions(haystack, anchor, self.ignore_case)
            if self.lead_max:
                starts.update(
                    self._run_start(text, index) for index in at if self._led(text, index)
                )
            else:
                starts.update(at)
        return self._at(starts, text, found)

    def _at(self, starts: set[int], text: str, found: list[str]) -> str:
        """``text`` with the pattern's matches at ``starts`` rewritten."""
        if not starts:
            return text
        pieces: list[str] = []
        done = 0
        for start in sorted(starts):
            if start < done:
                continue
            match = self.pattern.match(text, start)
            if match is None:
                continue
            pieces.append(text[done:start])
            pieces.append(self._rewrite(match, found))
            done = match.end()
        if not pieces:
            return text
        pieces.append(text[done:])
        return "".join(pieces)

    def _rewrite(self, match: re.Match[str], found: list[str]) -> str:
        replacement = self.replacement
        new = replacement(match) if callable(replacement) else match.expand(replacement)
        found.extend(removed_values(match.group(0), new))
        return new

    def _recording(self, found: list[str]) -> Callable[[re.Match[str]], str]:
        return lambda match: self._rewrite(match, found)

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
