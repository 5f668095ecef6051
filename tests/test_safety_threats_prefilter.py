"""The rules' literal pre-checks: sound (never skip a rule that would fire) and used.

Soundness is what matters: a pre-check that skipped a firing rule would let a planted
instruction through. It is checked three ways: the literal sets of small patterns by hand,
every rule on the threat corpus and on generated text (a rule that fires always finds one
of its literals), and whole scans with and without the pre-check (the same hits).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.safety.threats import find_threats, scan
from palimpsest.safety.threats.directives import DIRECTIVE_CATEGORIES
from palimpsest.safety.threats.prefilter import (
    ASCII_LOOKALIKES,
    present_literals,
    required_literals,
)

DATA = Path(__file__).parent / "data" / "threats"
TEXTS = [
    json.loads(line)["text"]
    for name in ("attacks.jsonl", "benign.jsonl")
    for line in (DATA / name).read_text(encoding="utf-8").splitlines()
    if line.strip()
]
RULES = [r for r in scan._STRICT_ALL if r.literals is not None]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("abc", {"abc"}),
        ("IGNORE", {"ignore"}),
        ("a|b", {"a", "b"}),
        ("[ab]cd|ef", {"cd", "ef"}),
        ("[ab]|cd", {"a", "b", "cd"}),
        ("you|your|yourself", {"you"}),
        (r"(?:foo|bar)\s+bazqux", {"bazqux"}),
        (r"[ab]cd", {"cd"}),
        (r"\bfoo(?!bar)", {"foo"}),
        (r"(?:ab){2,}", {"ab"}),
        (r"x*", None),
        (r"a{0,3}", None),
        (r"foo|\w+", None),
        (r"[a-z]+", None),
        ("caf\u00e9", None),
    ],
)
def test_required_literals_of_small_patterns(pattern: str, expected: set[str] | None) -> None:
    found = required_literals(pattern, re.IGNORECASE)
    assert found == (frozenset(expected) if expected is not None else None)


def test_lookalikes_are_every_non_ascii_character_that_meets_ascii() -> None:
    chars = "".join(chr(c) for c in range(128, sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    matched = set(re.findall(r"[\x00-\x7f]", chars, re.IGNORECASE))
    lowered = {c for c in chars if any(x.isascii() for x in c.lower())}
    assert matched | lowered == set(ASCII_LOOKALIKES)


def test_present_literals() -> None:
    literals = frozenset({"ignore", "mode"})
    assert present_literals("Please IGNORE this", literals) == {"ignore"}
    assert present_literals("a note \u2014 nothing here", literals) == frozenset()
    assert present_literals("Ignore \u2014 da mode", literals) == {"ignore", "mode"}
    # the Kelvin sign matches "k" under IGNORECASE: no pre-check for such text
    assert present_literals("\u212aeep it", frozenset({"keep"})) is None


def test_most_directive_rules_have_a_pre_check() -> None:
    directive = [r for r in scan._DEFAULT if r.category in DIRECTIVE_CATEGORIES]
    assert directive
    assert all(r.literals for r in directive)


def _sound(text: str) -> None:
    for rule in RULES:
        assert rule.literals is not None
        if rule.test(text):
            held = present_literals(text, rule.literals)
            assert held is None or not held.isdisjoint(rule.literals), (rule.rule_id, text)


def test_a_firing_rule_always_finds_a_literal_on_the_corpus() -> None:
    fired = 0
    for text in TEXTS:
        for view in (text, text.upper(), f"1. RUN `{text}` \u2014 exit 0 [tool: bash]"):
            _sound(view)
            fired += any(r.test(view) for r in RULES)
    assert fired > 100  # the corpus exercises the rules


_FRAGMENTS = sorted({w for text in TEXTS for w in re.findall(r"\S+", text)})[:4000]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(_FRAGMENTS),
            st.sampled_from([" ", "\n", "  ", ": ", "\u2014", "\u212a", "\u017f", "<|", "|>"]),
        ),
        max_size=30,
    )
)
def test_a_firing_rule_always_finds_a_literal_on_generated_text(parts: list[str]) -> None:
    text = " ".join(parts)
    _sound(text)
    _sound(text.upper())


def test_scans_are_the_same_with_and_without_the_pre_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = TEXTS + [f"{i}. RUN `{t[:80]}` \u2014 exit 0 [tool: bash]" for i, t in enumerate(TEXTS)]
    cases = [
        (mode, only, texts if mode == "standard" else texts[::4])  # strict is slower
        for mode in ("standard", "strict")
        for only in (None, DIRECTIVE_CATEGORIES)
    ]

    def hits() -> list[list[list[scan.ThreatHit]]]:
        # the rules alone: the learned detector does not use the pre-check
        return [
            [find_threats(t, mode, learned=False, only=only) for t in some]  # type: ignore[arg-type]
            for mode, only, some in cases
        ]

    with_check = hits()
    monkeypatch.setattr(scan, "present_literals", lambda text, literals: None)
    without = hits()
    assert with_check == without
    assert any(hits for per_case in without for hits in per_case)
