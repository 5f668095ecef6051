"""Scan many short texts at once: the rules' pre-checks answered for all of them together.

A handoff summary is checked line by line (:mod:`.directives`), a few hundred lines per
compaction. Scanned one by one, every line asks every rule's pre-check (:mod:`.prefilter`:
does the text contain one of the literal words each match needs?), and on a summary that
was most of the check's time although a line opens a rule's gate a handful of times in
all. Here the looked-up forms of every view of every text are joined into one string, each
literal a gate names is searched for in it once (a C substring search, skipping to the
next text at each hit), and a text is scanned with only the rules whose gate some view of
it opens. A gate that is closed on every view of a text makes its rule's test say False
on each of them (every test begins with its gate: ``Rule.gate``), so the hits are the
ones :func:`.scan.find_threats` reports for each text alone: the same rules fire, in the
same order, and rules without a gate run on every text.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from .prefilter import Gate, lowered
from .scan import _DEFAULT, ThreatHit, _hits, _views

__all__ = ["find_threats_each"]

_SEPARATOR = "\x00"
"""Between two texts' forms; a literal that spans one only opens a gate too many (the
rule then runs and decides), never one too few."""


class _Holders:
    """Which texts' looked-up forms contain a word, found in the joined forms."""

    def __init__(self, forms: list[str], owners: list[int]) -> None:
        self._joined = _SEPARATOR.join(forms)
        self._starts: list[int] = []
        at = 0
        for form in forms:
            self._starts.append(at)
            at += len(form) + len(_SEPARATOR)
        self._owners = owners  # the text each form belongs to
        self._ends = [start + len(form) for start, form in zip(self._starts, forms, strict=True)]
        self._found: dict[str, frozenset[int]] = {}

    def of(self, word: str) -> frozenset[int]:
        """The texts one of whose forms contains ``word``."""
        known = self._found.get(word)
        if known is not None:
            return known
        joined, starts, ends, owners = self._joined, self._starts, self._ends, self._owners
        texts: set[int] = set()
        at = joined.find(word)
        while at >= 0:
            form = bisect_right(starts, at) - 1
            texts.add(owners[form])
            at = joined.find(word, max(ends[form] + 1, at + 1))  # the next form
        found = self._found[word] = frozenset(texts)
        return found

    def opened(self, gate: Gate, everyone: frozenset[int]) -> frozenset[int]:
        """The texts on one of whose forms ``gate`` could open."""
        if gate.branches is None:
            return everyone
        out: set[int] = set()
        for branch in gate.branches:
            met = everyone
            for words in branch:
                holders: set[int] = set()
                for word in words:
                    holders |= self.of(word)
                met = met & holders
                if not met:
                    break
            out |= met
        return frozenset(out)


def find_threats_each(
    texts: Sequence[str], *, only: frozenset[str] | None = None
) -> list[list[ThreatHit]]:
    """``[find_threats(text, only=only) for text in texts]`` (standard mode, learned
    detector on), with each rule's pre-check answered for all texts in one pass."""
    views = [_views(text, "standard") for text in texts]
    forms: list[str] = []
    owners: list[int] = []
    for index, text_views in enumerate(views):
        for _how, view in text_views:
            forms.append(lowered(view))
            owners.append(index)
    holders = _Holders(forms, owners)
    everyone = frozenset(range(len(texts)))
    closed: list[set[str]] = [set() for _ in texts]
    for rule in _DEFAULT:
        if rule.gate is None or (only is not None and rule.category not in only):
            continue
        opened = holders.opened(rule.gate, everyone)
        for index in everyone - opened:
            closed[index].add(rule.rule_id)
    return [
        list(_hits(text, "standard", True, only, closed[index], views[index]))
        for index, text in enumerate(texts)
    ]
