"""The scan itself: normalize, decode, run the catalogue, explain the first hit per category.

The pipeline reads top-down:

1. invisible characters, on the raw text (MEM-36: they are checked first, and their
   message keeps the seed wording);
2. the *views* of the text a model could read: the folded text (NFKC, homoglyphs, invisible
   characters dropped), and the decoded form of every embedded base64, hex or
   percent-encoded run (two levels deep, bounded); strict mode adds digits-as-letters and
   spelled-out words;
3. the catalogue, category by category in :data:`CATEGORY_ORDER`; within a category the
   first rule that fires on any view is the hit, so :func:`find_threats` reports at most one
   hit per category and the snapshot notice stays short;
4. the learned detector (:mod:`.learned`): whether the text reads as an instruction to the
   model, which catches paraphrases, other languages and personas no rule names. Its hit
   has its own category, ``model_instruction``, and says which kind of attack it resembles.

Strict mode runs the default rules on the default views first and only then adds its own,
and lowers the learned detector's threshold, which is what makes it a superset of the
default mode.

One zero-width character alone (a copy-pasted U+200B, a joiner inside an emoji sequence)
is common in ordinary text, so in the default mode it is reported only when something
else in the text is a threat; then it is still reported first. Several of them, or any
other invisible character (bidi controls, tag characters, U+2063), are always reported.
Strict mode reports every invisible character.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Container, Iterator
from dataclasses import dataclass
from typing import Literal

from ...errors import MemoryThreatError
from .categories import CATEGORY_ORDER, explain
from .decode import decoded_views
from .learned import KIND_WORDING, instruction_score
from .normalize import despaced, first_invisible, fold, is_invisible, unleet
from .rules import Rule
from .rules_command import COMMAND_RULES
from .rules_text import TEXT_RULES
from .strict import STRICT_RULES, mixed_script_rule

__all__ = [
    "MAX_SCAN_CHARS",
    "ScanMode",
    "ThreatHit",
    "check_content",
    "find_threats",
    "pattern_ids",
    "scan_threats",
]

ScanMode = Literal["standard", "strict"]

MAX_SCAN_CHARS = 65_536
"""Strict mode refuses larger entries (MEM-38); the snapshot blocks them in both modes."""

LEARNED_CATEGORY = "model_instruction"
STRICT_MARGIN = -0.25
"""Strict mode flags learned scores this far below the trained threshold too."""

_LONE_OK = frozenset("\u200b\u200c\u200d\u2060\ufeff")


@dataclass(frozen=True)
class ThreatHit:
    """One scan result: which rule matched, its category and the message for the model.

    ``decoded`` names the encoding the payload was hidden in (``"base64"``), or is ``None``
    when the rule matched the text as written.
    """

    pattern_id: str
    category: str
    message: str
    decoded: str | None = None


def _ordered(rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
    rank = {name: i for i, name in enumerate(CATEGORY_ORDER)}
    return tuple(sorted(rules, key=lambda r: rank.get(r.category, len(rank))))


_DEFAULT = _ordered(TEXT_RULES + COMMAND_RULES)
_STRICT_EXTRA = _ordered(STRICT_RULES)
_MIXED = mixed_script_rule()


def pattern_ids(mode: ScanMode = "standard") -> list[str]:
    """The rule ids of a catalogue, in scan order (invisible characters come first)."""
    rules = _DEFAULT + ((_MIXED, *_STRICT_EXTRA) if mode == "strict" else ())
    return [rule.rule_id for rule in rules]


def _views(text: str, mode: ScanMode) -> list[tuple[str | None, str]]:
    folded = fold(text)
    views: list[tuple[str | None, str]] = [(None, folded)]
    views.extend((how, fold(decoded)) for how, decoded in decoded_views(folded))
    if mode == "strict":
        extra = [(how, variant(view)) for how, view in views for variant in (unleet, despaced)]
        views.extend((how, view) for how, view in extra if (how, view) not in views)
    return views


def _hit(rule: Rule, how: str | None) -> ThreatHit:
    where = f" It was hidden in {how} text." if how else ""
    return ThreatHit(
        pattern_id=rule.rule_id,
        category=rule.category,
        message=f"Blocked: content matches threat pattern '{rule.rule_id}'.{where} {explain(rule.category)}",
        decoded=how,
    )


def _lone_zero_width(text: str) -> bool:
    """Whether the only invisible characters are one zero-width character (or joiners
    inside emoji sequences): the residue of copy and paste, not a hidden payload."""
    found = 0
    for i, char in enumerate(text):
        if char.isascii() or not is_invisible(char):
            continue
        if char not in _LONE_OK:
            return False
        if (
            char == "\u200d"
            and 0 < i < len(text) - 1
            and not text[i - 1].isascii()
            and not text[i + 1].isascii()
        ):
            continue  # a joiner between two non-ASCII symbols: an emoji sequence
        found += 1
        if found > 1:
            return False
    return True


def _learned(text: str, mode: ScanMode) -> ThreatHit | None:
    score = instruction_score(text)
    threshold = score.threshold + (STRICT_MARGIN if mode == "strict" else 0.0)
    if score.logit <= threshold:
        return None
    kind = score.kind or "override"
    excerpt = score.window if len(score.window) <= 80 else score.window[:77] + "..."
    return ThreatHit(
        pattern_id=f"model_{kind}",
        category=LEARNED_CATEGORY,
        message=(
            f"Blocked: content reads as an instruction to the model ({kind}; learned detector "
            f"score {score.logit:.2f} over {threshold:.2f}, on {excerpt!r}). "
            f"{explain(LEARNED_CATEGORY, KIND_WORDING[kind])}"
        ),
    )


def _invisible(text: str) -> ThreatHit | None:
    char = first_invisible(text)
    if char is None:
        return None
    code = f"U+{ord(char):04X}"
    name = unicodedata.name(char, "unnamed character").title()
    return ThreatHit(
        pattern_id=f"invisible_unicode_{code}",
        category="invisible_unicode",
        message=(
            f"Blocked: content contains invisible unicode character {code} (possible injection). "
            f"({name}.) {explain('invisible_unicode')}"
        ),
    )


def _hits(
    text: str,
    mode: ScanMode,
    learned: bool = True,
    only: frozenset[str] | None = None,
    closed: Container[str] = (),
    views: list[tuple[str | None, str]] | None = None,
) -> Iterator[ThreatHit]:
    """The hits of ``text``; ``closed`` names rules whose pre-check (``Rule.gate``) is
    already known to rule ``text`` out, which are not run, and ``views`` are
    ``_views(text, mode)`` when the caller has them (see :mod:`.batch`)."""
    if only is not None:  # a caller that wants some categories: the others are not run
        learned = learned and LEARNED_CATEGORY in only
        if "invisible_unicode" not in only:
            yield from _rule_hits(text, mode, learned, only, closed, views)
            return
    invisible = _invisible(text)
    if invisible is not None and (mode == "strict" or not _lone_zero_width(text)):
        yield invisible
        invisible = None
    for hit in _rule_hits(text, mode, learned, only, closed, views):
        if invisible is not None:  # a lone zero-width character counts once something else does
            yield invisible
            invisible = None
        yield hit


def _rule_hits(
    text: str,
    mode: ScanMode,
    learned: bool,
    only: frozenset[str] | None = None,
    closed: Container[str] = (),
    views: list[tuple[str | None, str]] | None = None,
) -> Iterator[ThreatHit]:
    if views is None:
        views = _views(text, mode)
    default_views = views if mode == "standard" else _views(text, "standard")
    seen: set[str] = set()
    # Pass 1: the default catalogue on the default views; pass 2 (strict): everything else.
    passes: list[tuple[tuple[Rule, ...], list[tuple[str | None, str]], bool]] = [
        (_DEFAULT, default_views, False)
    ]
    if mode == "strict":
        passes.append((_DEFAULT + _STRICT_EXTRA, views, True))
        if (only is None or _MIXED.category in only) and _MIXED.test(text):
            seen.add(_MIXED.category)
            yield _hit(_MIXED, None)
    for rules, candidate_views, strict in passes:
        for rule in rules:
            if rule.category in seen or (only is not None and rule.category not in only):
                continue
            if rule.rule_id in closed:
                continue  # its pre-check rules the text out: its test would say False
            test = rule.test_in(strict)
            for how, view in candidate_views:
                if test(view):
                    seen.add(rule.category)
                    yield _hit(rule, how)
                    break
    if learned:
        hit = _learned(text, mode)
        if hit is not None:
            yield hit


def scan_threats(
    text: str, mode: ScanMode = "standard", *, learned: bool = True
) -> ThreatHit | None:
    """The first threat found in ``text``, or ``None`` when it is safe to store.

    ``learned=False`` runs the rules alone (the benchmark's baseline).
    """
    return next(_hits(text, mode, learned), None)


def find_threats(
    text: str,
    mode: ScanMode = "standard",
    *,
    learned: bool = True,
    only: frozenset[str] | None = None,
) -> list[ThreatHit]:
    """Every threat found in ``text``, at most one per category, in scan order.

    ``only`` limits the scan to those categories (the hits are the ones an unlimited scan
    finds in them, in the same order; a lone zero-width character, which counts only beside
    another hit, counts only beside one in ``only``); rules of other categories are not run.
    """
    return list(_hits(text, mode, learned, only))


def check_content(text: str, mode: ScanMode = "standard") -> None:
    """Raise :class:`MemoryThreatError` when ``text`` must not be stored (rules and the
    learned detector)."""
    if mode == "strict" and len(text) > MAX_SCAN_CHARS:
        raise MemoryThreatError(
            f"Blocked: content is too large to scan ({len(text):,} chars; "
            f"the limit is {MAX_SCAN_CHARS:,}).",
            category="too_large",
        )
    hit = scan_threats(text, mode)
    if hit is not None:
        raise MemoryThreatError(hit.message, category=hit.category, pattern=hit.pattern_id)
