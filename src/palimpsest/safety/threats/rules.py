"""What a rule is: an id, a category, and a test over the folded text.

Most rules are regular expressions. Command rules (deletes, ``curl | sh``) also look at the
clause before the match: "never run ``rm -rf /``" is a warning a developer keeps, "run
``rm -rf /``" is an instruction, and only the second is refused. Some rules need two things
on one line (a network tool *and* a secret); those are plain functions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .mentions import is_mention, is_question_about
from .prefilter import Gate, gate_for, starts_for

__all__ = ["Rule", "command", "gated", "lines", "negated", "regex", "words"]


@dataclass(frozen=True)
class Rule:
    """One detector. ``test`` gets the folded text and says whether the rule fires.

    ``strict_test``, when set, is what strict mode runs instead: a rule that lets quoted
    mentions of an attack pass in the default mode (:mod:`.mentions`) fires on them there.
    ``patterns`` are the expressions the rule's pre-check is derived from (every hit
    matches one of them; :mod:`.prefilter`), empty when it has none. ``gate`` is that
    pre-check when both tests begin with it: a text it rules out fails ``test`` and
    ``strict_test`` (:mod:`.batch` answers it for many texts at once).
    """

    rule_id: str
    category: str
    test: Callable[[str], bool]
    strict_test: Callable[[str], bool] | None = None
    patterns: tuple[re.Pattern[str], ...] = ()
    gate: Gate | None = None

    def test_in(self, strict: bool) -> Callable[[str], bool]:
        """The test for a mode."""
        return self.strict_test if strict and self.strict_test is not None else self.test


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE | re.MULTILINE)


def words(*alternatives: str) -> str:
    """A non-capturing alternation of phrases, each with flexible inner whitespace."""
    return "(?:" + "|".join(a.replace(" ", r"\s+") for a in alternatives) + ")"


def regex(
    rule_id: str,
    category: str,
    pattern: str,
    *,
    needs: str | None = None,
    mentions: bool = False,
    questions: bool = False,
) -> Rule:
    """A rule that fires when ``pattern`` is found.

    Text without any of the literals the pattern requires (:mod:`.prefilter`) is skipped
    without running it. ``needs`` is a cheaper pattern that every match of ``pattern``
    contains (its leading verbs, say); text without it is skipped too. It only saves time:
    it must never be narrower than ``pattern``.

    ``mentions=True``: in the default mode a match that is a quoted mention of the wording
    (:func:`.mentions.is_mention`) does not count; ``questions=True`` also lets a question
    about a third party's behaviour pass (:func:`.mentions.is_question_about`). Strict mode
    counts every match.
    """
    compiled = _compile(pattern)
    literals = gate_for(compiled)
    starts = starts_for(compiled)
    gate = _compile(needs) if needs is not None else None

    def may_match(text: str) -> bool:
        return literals(text) and (gate is None or gate.search(text) is not None)

    def matches(text: str) -> Iterable[re.Match[str]]:
        return compiled.finditer(text) if starts is None else starts.matches(text)

    def found(text: str) -> bool:
        if not may_match(text):
            return False
        return compiled.search(text) is not None if starts is None else starts.search(text)

    skips = [check for on, check in ((mentions, is_mention), (questions, is_question_about)) if on]
    if not skips:
        return Rule(rule_id, category, found, patterns=(compiled,), gate=literals)

    def used(text: str) -> bool:
        if not may_match(text):
            return False
        return any(not any(skip(text, m.start(), m.end()) for skip in skips) for m in matches(text))

    return Rule(rule_id, category, used, strict_test=found, patterns=(compiled,), gate=literals)


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
    literals = gate_for(compiled)
    starts = starts_for(compiled)

    def test(text: str) -> bool:
        if not literals(text):
            return False
        found = compiled.finditer(text) if starts is None else starts.matches(text)
        return any(not negated(text, m.start()) for m in found)

    return Rule(rule_id, category, test, patterns=(compiled,), gate=literals)


def gated(
    rule_id: str, category: str, test: Callable[[str], bool], *patterns: re.Pattern[str]
) -> Rule:
    """A rule whose ``test`` fires only on text where one of ``patterns`` matches; the
    literals those patterns require (:mod:`.prefilter`) are checked first."""
    literals = gate_for(*patterns)
    return Rule(
        rule_id,
        category,
        lambda text: literals(text) and test(text),
        patterns=patterns,
        gate=literals,
    )


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
