"""Cheap pre-checks for the rule catalogue: literal words every match must contain.

Python's regular expressions try a pattern such as ``\\b(?:ignore|disregard|…)\\s+…`` at
every position of the text, and the catalogue has thirty of them: on a 2 KB entry that is
most of the scan's cost, although an ordinary note matches none. But every match of a
pattern contains at least one of a few literal words (an override contains ``ignore`` or
``disregard`` or …), and ``word in text`` runs in C at memory speed. So each rule first
asks whether its text contains one of its pattern's *required literals*, and runs the
pattern only when it does.

The literals are derived from the pattern itself (its parse tree, through the standard
library's ``re._parser``), not written by hand, so they cannot drift from the rule. A
requirement is a list of word sets, and a match contains a word of *each* set: a sequence
requires what each of its parts requires (its literal runs, what its groups require); an
inner alternation requires the union of what its branches require (nothing, if one branch
requires nothing); optional and negative parts require nothing. A pattern whose top level
is an alternation gets one requirement per branch, and the gate opens when any branch's
is met. When in doubt the derivation gives up and the rule always runs its pattern, which
is slower, never wrong.

A pattern whose every match *begins* with one of a few literals (``\\b(?:ignore|forget|…)\\s``)
is not searched at all: :class:`Starts` finds where those literals occur and tries the
pattern only there (``pattern.match(text, at)``), which finds exactly the matches a search
would, at a fraction of the cost.

Matching is case-insensitive, so the literals are lower case and the text is compared in
lower case, after mapping the four non-ASCII letters that Python's case-insensitive
matching equates with ASCII letters (``İ``, ``ı``, ``ſ``, ``K``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

__all__ = ["Gate", "Starts", "gate_for", "lowered", "requirements", "starts_for"]

_P: Any
_C: Any
try:  # the parser is private API; without it every rule just runs its pattern
    from re import _constants as _C  # type: ignore[attr-defined, no-redef]
    from re import _parser as _P  # type: ignore[attr-defined, no-redef]
except ImportError:  # pragma: no cover - a Python without them
    _P = None
    _C = None

_REPEATS = () if _C is None else (_C.MAX_REPEAT, _C.MIN_REPEAT, _C.POSSESSIVE_REPEAT)
_MIN_LITERAL = 1
"""Literal runs at least this long count (a single ``{`` still narrows a conjunction;
:func:`_rank` prefers longer ones)."""
_MAX_SET = 64
"""An alternation of more literals than this is treated as requiring nothing."""
_MAX_CLASS = 4
"""A character class of at most this many characters extends a literal run (``ba[rz]``)."""
_KEEP = 3
"""Sets kept per requirement: the most selective ones."""

# The non-ASCII characters that re.IGNORECASE equates with an ASCII letter.
_CASE_EXTRA = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}
SPACES = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""Every character ``\\s`` matches (a test checks the list against ``str.isspace``): in
the looked-up form each is a plain space, so ``ignore\\s+all`` requires ``ignore all``."""
_ASCII_FORM = str.maketrans(dict.fromkeys(SPACES[:10], " "))
_FORM = str.maketrans({**dict.fromkeys(SPACES, " "), **_CASE_EXTRA})
_FORM_SWAPS = {chr(code): to for code, to in _FORM.items() if chr(code) != to}
_FORM_CHARS = frozenset(_FORM_SWAPS)

Words = frozenset[str]
Requirement = tuple[Words, ...]
"""A match contains at least one word of every set (lower case); () requires nothing."""


@lru_cache(maxsize=16)
def lowered(text: str) -> str:
    """``text`` in the form the literals are looked up in (cached: every rule asks)."""
    if text.isascii():
        return text.translate(_ASCII_FORM).lower()
    # ``text.translate(_FORM)``, one C search per character the text holds of the table
    # (the values are ASCII letters and spaces, none of them a key that changes)
    for char in _FORM_CHARS.intersection(text):
        text = text.replace(char, _FORM_SWAPS[char])
    return text.lower()


def _rank(words: Words) -> tuple[int, int]:
    return (min(map(len, words)), -len(words))


def _best(sets: list[Words]) -> Requirement:
    unique = sorted(set(sets), key=lambda words: (_rank(words), sorted(words)), reverse=True)
    return tuple(unique[:_KEEP])


def _either(options: list[Requirement]) -> Words | None:
    """One set that every option's match meets: the union of each option's best set."""
    out: set[str] = set()
    for option in options:
        if not option:
            return None
        out |= option[0]
    return frozenset(out) if len(out) <= _MAX_SET else None


def _class_chars(items: list[tuple[Any, Any]]) -> list[str] | None:
    """The characters of a small class of plain ASCII characters, else None."""
    chars: list[str] = []
    for op, av in items:
        if op is not _C.LITERAL or not isinstance(av, int) or av >= 128:
            return None
        chars.append(chr(av).lower())
    unique = sorted(set(chars))
    return unique if len(unique) <= _MAX_CLASS else None


def _is_spaces(op: object, av: Any) -> bool:
    """Whether the node is \\s repeated at least once (\\s+, \\s{1,3})."""
    if op not in _REPEATS:
        return False
    low, _high, sub = av
    return low >= 1 and list(sub) == [(_C.IN, [(_C.CATEGORY, _C.CATEGORY_SPACE)])]


def _sequence(items: list[tuple[Any, Any]]) -> Requirement:
    sets: list[Words] = []
    run: list[str] = [""]

    def close() -> None:
        nonlocal run
        if run[0] and min(map(len, run)) >= _MIN_LITERAL:
            sets.append(frozenset(run))
        run = [""]

    for op, av in items:
        if op is _C.LITERAL and isinstance(av, int) and av < 128:
            run = [r + chr(av).lower() for r in run]
            continue
        if _is_spaces(op, av):
            # Whitespace reads as spaces: "ignore\\s+all" needs "ignore " and then " all".
            run = [r + " " for r in run]
            if av[1] == 1:
                continue  # exactly one: the run goes on
            close()
            run = [" "]
            continue
        if op is _C.IN and isinstance(av, list):
            chars = _class_chars(av)
            if chars is not None and len(run) * len(chars) <= _MAX_SET:
                run = [r + c for r in run for c in chars]
                continue
        close()
        sets.extend(_node(op, av))
    close()
    return _best(sets)


def _node(op: object, av: Any) -> Requirement:
    if op is _C.SUBPATTERN:
        return _sequence(list(av[-1]))
    if op is _C.ATOMIC_GROUP:
        return _sequence(list(av))
    if op is _C.BRANCH:
        either = _either([_sequence(list(branch)) for branch in av[1]])
        return () if either is None else (either,)
    if op in _REPEATS:
        low, _high, sub = av
        return _sequence(list(sub)) if low >= 1 else ()
    if op is _C.ASSERT:
        _direction, sub = av
        return _sequence(list(sub))  # a lookaround's text is in the text too
    return ()  # anchors, classes, negative lookarounds, back-references: nothing required


def _alternatives(items: list[tuple[Any, Any]]) -> list[Requirement]:
    """One requirement per top-level branch (anchors and groups around it looked through)."""
    core = [(op, av) for op, av in items if op is not _C.AT]
    if len(core) == 1:
        op, av = core[0]
        if op is _C.SUBPATTERN:
            return _alternatives(list(av[-1]))
        if op is _C.BRANCH:
            return [_sequence(list(branch)) for branch in av[1]]
    return [_sequence(items)]


def requirements(pattern: str | re.Pattern[str]) -> list[Requirement] | None:
    """Per top-level branch, what every match of it contains; None when unknown."""
    if _P is None:  # pragma: no cover
        return None
    source = pattern.pattern if isinstance(pattern, re.Pattern) else pattern
    flags = pattern.flags if isinstance(pattern, re.Pattern) else 0
    try:
        return _alternatives(list(_P.parse(source, flags)))
    except Exception:  # a parser change must not break the scan
        return None


class Gate:
    """Whether a text can match: some branch's requirement is met (or one requires nothing)."""

    __slots__ = ("branches",)

    def __init__(self, branches: list[Requirement] | None) -> None:
        if branches is None or any(not b for b in branches):
            self.branches: tuple[tuple[tuple[str, ...], ...], ...] | None = None
        else:
            unique = {tuple(tuple(sorted(s)) for s in b) for b in branches}
            self.branches = tuple(sorted(unique))

    @property
    def always(self) -> bool:
        """True when the gate cannot rule anything out."""
        return self.branches is None

    def __call__(self, text: str) -> bool:
        if self.branches is None:
            return True
        low = lowered(text)
        return any(
            all(any(word in low for word in words) for words in branch) for branch in self.branches
        )


def gate_for(*patterns: str | re.Pattern[str]) -> Gate:
    """A gate that opens whenever any of ``patterns`` could match."""
    branches: list[Requirement] = []
    for pattern in patterns:
        found = requirements(pattern)
        if found is None:
            return Gate(None)
        branches.extend(found)
    return Gate(branches)


_MIN_START = 1
"""Start literals shorter than this would say nothing."""
_MAX_PLACES = 256
"""More candidate places than this in one text: a plain search is cheaper."""


def _starts(items: list[tuple[Any, Any]]) -> list[str] | None:
    """Literals one of which every match of the sequence begins with, or None."""
    index = 0
    while index < len(items) and items[index] == (_C.AT, _C.AT_BOUNDARY):
        index += 1  # \\b takes no characters; pattern.match still checks it
    items = items[index:]
    if items and items[0][0] in _REPEATS and items[0][1][0] == 0 and items[0][1][1] == 1:
        # An optional start ("(?:ba|z)?sh"): a match begins with it or with what follows.
        with_it = _starts(list(items[0][1][2]) + items[1:])
        without = _starts(items[1:])
        if with_it is None or without is None:
            return None
        both = sorted(set(with_it + without))
        return both if len(both) <= 2 * _MAX_SET else None
    run: list[str] = [""]
    for op, av in items:
        if op is _C.LITERAL and isinstance(av, int) and av < 128:
            run = [r + chr(av).lower() for r in run]
            continue
        if op is _C.IN and isinstance(av, list):
            chars = _class_chars(av)
            if chars is not None and len(run) * len(chars) <= _MAX_SET:
                run = [r + c for r in run for c in chars]
                continue
        if _is_spaces(op, av):
            run = [r + " " for r in run]
            break
        if op is _C.SUBPATTERN or op is _C.BRANCH:
            # A group: what its branches begin with follows the run ("n" + "c|cat|etcat",
            # as the parser factors "nc|ncat|netcat"); nothing after it is looked at.
            branches = [list(av[-1])] if op is _C.SUBPATTERN else [list(b) for b in av[1]]
            out: list[str] = []
            for branch in branches:
                found = _starts(branch)
                if found is None:
                    break
                out.extend(found)
            else:
                joined = sorted({r + o for r in run for o in out})
                if len(joined) <= 2 * _MAX_SET:
                    return joined
        break
    if not run[0]:
        return None
    return run


class Starts:
    """The places a pattern can match, found from the literals its matches begin with."""

    __slots__ = ("literals", "pattern")

    def __init__(self, pattern: re.Pattern[str], literals: tuple[str, ...]) -> None:
        self.pattern = pattern
        self.literals = literals

    def _places(self, text: str) -> list[int] | None:
        """Where a literal occurs, in order; None when there are too many places."""
        low = lowered(text)
        if len(low) != len(text):  # pragma: no cover - lowered keeps lengths; be safe
            return None
        places: set[int] = set()
        for literal in self.literals:
            at = low.find(literal)
            while at >= 0:
                places.add(at)
                at = low.find(literal, at + 1)
            if len(places) > _MAX_PLACES:
                return None
        return sorted(places)

    def matches(self, text: str) -> list[re.Match[str]]:
        """Every match that starts at an occurrence of a literal, in text order (a plain
        ``finditer`` when there are too many places)."""
        places = self._places(text)
        if places is None:
            return list(self.pattern.finditer(text))
        found = (self.pattern.match(text, at) for at in places)
        return [match for match in found if match is not None]

    def match_starts(self, text: str) -> list[int] | None:
        """Where matches start, in order (every start a search could report), or None when
        there are too many candidate places to look at one by one."""
        places = self._places(text)
        if places is None:
            return None
        return [at for at in places if self.pattern.match(text, at) is not None]

    def search(self, text: str) -> bool:
        """Whether the pattern matches anywhere in ``text``."""
        return bool(self.matches(text))


def starts_for(pattern: re.Pattern[str]) -> Starts | None:
    """A :class:`Starts` for ``pattern``, or None when its matches can begin anywhere."""
    if _P is None:  # pragma: no cover
        return None
    try:
        found = _starts(list(_P.parse(pattern.pattern, pattern.flags)))
    except Exception:  # a parser change must not break the scan
        return None
    if not found or min(map(len, found)) < _MIN_START:
        return None
    return Starts(pattern, tuple(sorted(set(found))))
