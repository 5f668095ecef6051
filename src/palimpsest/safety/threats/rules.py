"""What a rule is: an id, a category, and a test over the folded text.

Most rules are regular expressions. Command rules (deletes, ``curl | sh``) also look at the
clause before the match: "never run ``rm -rf /``" is a warning a developer keeps, "run
``rm -rf /``" is an instruction, and only the second is refused. Some rules need two things
on one line (a network tool *and* a secret); those are plain functions.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .prefilter import required_literals

__all__ = ["Rule", "command", "lines", "negated", "regex", "words"]


@dataclass(frozen=True)
class Rule:
    """One detector. ``test`` gets the folded text and says whether the rule fires.

    ``literals``: lower-cased strings at least one of which is in every text the rule
    fires on (:mod:`.prefilter`); the scan skips the rule on ASCII text holding none of
    them. ``None``: no such pre-check.
    """

    rule_id: str
    category: str
    test: Callable[[str], bool]
    literals: frozenset[str] | None = None


_FLAGS = re.IGNORECASE | re.MULTILINE


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, _FLAGS)


def words(*alternatives: str) -> str:
    """A non-capturing alternation of phrases, each with flexible inner whitespace."""
    return "(?:" + "|".join(a.replace(" ", r"\s+") for a in alternatives) + ")"


def regex(rule_id: str, category: str, pattern: str, *, needs: str | None = None) -> Rule:
    """A rule that fires when ``pattern`` is found.

    ``needs`` is a cheaper pattern that every match of ``pattern`` contains (its leading
    verbs, say); text without it is skipped without running ``pattern``. It only saves time:
    it must never be narrower than ``pattern``.
    """
    compiled = _compile(pattern)
    literals = required_literals(pattern, _FLAGS)
    if needs is None:
        return Rule(rule_id, category, lambda text: compiled.search(text) is not None, literals)
    gate = _compile(needs)
    return Rule(
        rule_id,
        category,
        lambda text: gate.search(text) is not None and compiled.search(text) is not None,
        literals if literals is not None else required_literals(needs, _FLAGS),
    )


# A warning names the command after a negation in the same clause: "never run", "do not
# use", "avoid". "Do not forget to run" and "don't hesitate to" are instructions, not warnings.
_NEGATION = re.compile(
    r"\b(?:never|not|don'?t|doesn'?t|mustn'?t|shouldn'?t|avoid(?:s|ing)?|no|without|"
    r"careful|dangerous|forbidden|prohibited|blocked|refuse)\b(?![\s\w]{0,12}\b(?:forget|hesitate|fail|skip)\b)",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[.;:!?\n]|\b(?:and|then|but|so)\b", re.IGNORECASE)


def negated(text: str, start: int) -> bool:
    """Whether the match at ``start`` sits in a clause that warns against it."""
    window = text[max(0, start - 120) : start]
    ends = list(_CLAUSE_END.finditer(window))
    clause = window[ends[-1].end() :] if ends else window
    return _NEGATION.search(clause) is not None


def command(rule_id: str, category: str, pattern: str) -> Rule:
    """A regex rule that ignores matches a note warns against ("never run …")."""
    compiled = _compile(pattern)

    def test(text: str) -> bool:
        return any(not negated(text, m.start()) for m in compiled.finditer(text))

    return Rule(rule_id, category, test, required_literals(pattern, _FLAGS))


_LONG_LINE = 2_000


def lines(text: str) -> list[str]:
    """The text's lines, long ones cut into overlapping windows so work stays linear."""
    out: list[str] = []
    for line in text.splitlines() or [text]:
        if len(line) <= _LONG_LINE:
            out.append(line)
            continue
        step = _LONG_LINE // 2
        out.extend(line[i : i + _LONG_LINE] for i in range(0, len(line) - step, step))
    return out
