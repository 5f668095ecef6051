"""Literal pre-checks for the rules: words a rule cannot match without, found by ``in``.

A rule's regular expression is tried at every position of the text, and with
``IGNORECASE`` and long alternations that costs about 100 ns a character per rule; the
summary's directive check runs 21 of them over every line of a 300-line summary (issue 27).
Most text holds none of the words a rule needs ("ignore", "instructions", "mode", ...),
and a substring test answers that far cheaper than the regex.

:func:`required_literals` reads a pattern's parse tree and returns a set of literal
strings such that every match contains at least one of them (lower-cased), or ``None``
when it cannot name such a set (a branch with no literal, a class, a repetition that may
be empty). A sequence needs each of its parts, so the part with the longest shortest
literal is taken; an alternation needs one of its branches' sets. Lookarounds, anchors
and character classes require nothing. It only ever says "may match": a rule is skipped
on a text only when none of its literals occurs in it, which proves the regex cannot
match.

Literals are ASCII (a rule with another literal gets no pre-check). Under IGNORECASE
four non-ASCII characters match ASCII letters (:data:`ASCII_LOOKALIKES`: dotted and
dotless i, the long s, the Kelvin sign), so text holding one of them gets no pre-check;
any other non-ASCII character matches no ASCII literal and lower-cases to non-ASCII, so
``literal in text.lower()`` is exact there too (a test recomputes the four).
"""

from __future__ import annotations

from re import _constants as _c  # type: ignore[attr-defined]
from re import _parser as _p  # type: ignore[attr-defined]
from typing import Any

__all__ = ["ASCII_LOOKALIKES", "present_literals", "required_literals"]

ASCII_LOOKALIKES = frozenset("\u0130\u0131\u017f\u212a")
"""The non-ASCII characters that ``re.IGNORECASE`` matches with an ASCII character
(or that ``str.lower`` turns into one): İ, ı, ſ and the Kelvin sign."""

_REPEATS = (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT)


def _score(literals: frozenset[str]) -> tuple[int, int]:
    """Prefer sets whose shortest literal is longest (rarer), then smaller sets."""
    return min(len(x) for x in literals), -len(literals)


def _required(items: Any) -> frozenset[str] | None:
    best: frozenset[str] | None = None
    run = ""

    def offer(found: frozenset[str] | None) -> None:
        nonlocal best
        if found and (best is None or _score(found) > _score(best)):
            best = found

    for op, av in items:
        if op is _c.LITERAL:
            run += chr(av).lower()
            continue
        if run:
            offer(frozenset({run}))
            run = ""
        found: frozenset[str] | None = None
        if op is _c.SUBPATTERN:
            found = _required(av[3])
        elif op is _c.ATOMIC_GROUP:
            found = _required(av)
        elif op is _c.BRANCH:
            branches = [_required(branch) for branch in av[1]]
            if all(b is not None for b in branches):
                found = frozenset().union(*(b for b in branches if b is not None))
        elif op is _c.IN and av and all(kind is _c.LITERAL for kind, _ in av):
            found = frozenset(chr(code).lower() for _, code in av)  # [ab], or a|b
        elif op in _REPEATS and av[0] >= 1:
            found = _required(av[2])
        offer(found)
    if run:
        offer(frozenset({run}))
    return best


def required_literals(pattern: str, flags: int = 0) -> frozenset[str] | None:
    """Lower-cased literals at least one of which every match of ``pattern`` contains,
    or ``None`` when no such set is known (see the module docstring).

    A literal that contains another of the set is dropped (the shorter one is found
    wherever the longer is). ``None`` too when a literal is not ASCII.
    """
    try:
        found = _required(_p.parse(pattern, flags))
    except Exception:  # an unfamiliar parse tree: no pre-check, never a wrong one
        return None
    if not found or not all(x.isascii() for x in found):
        return None
    return frozenset(x for x in found if not any(y != x and y in x for y in found))


def present_literals(text: str, literals: frozenset[str]) -> frozenset[str] | None:
    """Which of ``literals`` occur in ``text`` (case-insensitively), or ``None`` when
    ``text`` holds one of :data:`ASCII_LOOKALIKES` and the pre-check does not apply."""
    if not text.isascii() and not ASCII_LOOKALIKES.isdisjoint(text):
        return None
    low = text.lower()
    return frozenset([x for x in literals if x in low])
