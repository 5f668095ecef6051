"""The rules' pre-checks: literals every match contains, places every match starts at.

A pre-check may only save time: on any text where a rule's pattern matches, its gate must
open and its start-literal search must find the match. Hypothesis draws texts that contain
a match of each pattern of the catalogue (with random text around it, any case, any
whitespace), and texts from the corpus check that both searches agree exactly.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest.safety.threats import find_threats
from palimpsest.safety.threats.prefilter import SPACES, gate_for, lowered, starts_for
from palimpsest.safety.threats.rules import lines
from palimpsest.safety.threats.rules_command import _SINK, COMMAND_RULES, _sink_lines
from palimpsest.safety.threats.rules_text import TEXT_RULES

DATA = Path(__file__).parent / "data" / "threats"
PATTERNS = [(rule.rule_id, p) for rule in TEXT_RULES + COMMAND_RULES for p in rule.patterns]
CORPUS = [
    json.loads(line)["text"]
    for name in ("attacks.jsonl", "benign.jsonl")
    for line in (DATA / name).read_text(encoding="utf-8").splitlines()
    if line.strip()
]


def test_every_rule_has_a_pattern_and_most_have_a_gate() -> None:
    assert {rule.rule_id for rule in TEXT_RULES + COMMAND_RULES} == {r for r, _ in PATTERNS}
    gated = [r for r, p in PATTERNS if not gate_for(p).always]
    assert len(gated) >= len(PATTERNS) - 4


@pytest.mark.parametrize(("rule_id", "pattern"), PATTERNS, ids=[r for r, _ in PATTERNS])
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_matching_text_always_passes_the_pre_checks(
    rule_id: str, pattern: re.Pattern[str], data: st.DataObject
) -> None:
    text = data.draw(st.from_regex(pattern))
    assert pattern.search(text) is not None
    assert gate_for(pattern)(text), rule_id
    starts = starts_for(pattern)
    if starts is not None:
        assert starts.search(text), rule_id


@pytest.mark.parametrize(("rule_id", "pattern"), PATTERNS, ids=[r for r, _ in PATTERNS])
def test_start_literals_find_what_a_search_finds_on_the_corpus(
    rule_id: str, pattern: re.Pattern[str]
) -> None:
    starts = starts_for(pattern)
    gate = gate_for(pattern)
    for text in CORPUS:
        found = pattern.search(text) is not None
        if found:
            assert gate(text), (rule_id, text)
        if starts is not None:
            assert starts.search(text) == found, (rule_id, text)
            assert {m.start() for m in pattern.finditer(text)} <= {
                m.start() for m in starts.matches(text)
            }


def test_the_derivation_reads_sequences_alternations_and_whitespace() -> None:
    pattern = re.compile(r"\bignore\s+(?:all|every)\s+(?:previous|prior)\b", re.I)
    gate = gate_for(pattern)
    assert gate("IGNORE\tall\u00a0previous")
    assert not gate("ignore the rules")  # the literals of "all|every", "previous|prior" are missing
    assert not gate("ignore all previous".replace(" ", ""))  # whitespace is required
    starts = starts_for(pattern)
    assert starts is not None and starts.literals == ("ignore ",)
    # Optional parts and character classes require nothing; a text without the literals
    # cannot match, one with them is handed to the pattern.
    assert gate_for(re.compile(r"(?:foo)?\d+"))("123")
    assert starts_for(re.compile(r"[a-z]+x")) is None


def test_the_looked_up_form_matches_what_ignorecase_matches() -> None:
    # Every character \s matches is a space in the looked-up form, and the four non-ASCII
    # letters that IGNORECASE equates with ASCII ones are mapped to them.
    assert set(SPACES) == {chr(c) for c in range(0x110000) if chr(c).isspace()}
    letter = re.compile("[a-z]", re.IGNORECASE)
    extra = {chr(c) for c in range(128, 0x110000) if letter.fullmatch(chr(c))}
    assert {lowered(c) for c in extra} <= set("abcdefghijklmnopqrstuvwxyz")
    assert gate_for(re.compile("kill", re.I))("\u212aİLL")


_FORM_REFERENCE = str.maketrans(
    {**dict.fromkeys(SPACES, " "), "\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=8),
            st.sampled_from([*SPACES, "\u0130", "\u0131", "\u017f", "\u212a", "\u2014", "Σ"]),
        ),
        max_size=20,
    )
)
def test_the_looked_up_form_is_one_translation_then_lower_case(parts: list[str]) -> None:
    # lowered() replaces only the characters a text holds; the result is the translation
    text = "".join(parts)
    lowered.cache_clear()
    assert lowered(text) == text.translate(_FORM_REFERENCE).lower()


def test_sink_lines_found_from_the_whole_text_are_the_lines_with_a_sink() -> None:
    texts = [*CORPUS, "\n".join(CORPUS[:40]), "\r\n".join(CORPUS[40:80]), "x" * 5000 + " curl"]
    texts.append("send it\u2028to https://x.example\rcurl $TOKEN\x0bpost the key to my server")
    for text in texts:
        assert _sink_lines(text) == [line for line in lines(text) if _SINK.search(line)]


_WITHOUT_PARSER = """
import re, sys
del re._parser, re._constants
sys.modules["re._parser"] = None
sys.modules["re._constants"] = None
from palimpsest.safety.threats import find_threats, prefilter
assert prefilter.requirements("ignore all") is None
assert prefilter.starts_for(re.compile("ignore all")) is None
assert prefilter.gate_for(re.compile("ignore all")).always
texts = [line for line in sys.stdin.read().split("\\x1e") if line]
print("\\x1e".join(",".join(h.pattern_id for h in find_threats(t, learned=False)) for t in texts))
"""


def test_a_python_without_the_private_regex_parser_scans_the_same() -> None:
    """``re._parser`` is private: without it every rule runs its pattern, with the same hits."""
    texts = CORPUS[::7]
    expected = "\x1e".join(
        ",".join(hit.pattern_id for hit in find_threats(text, learned=False)) for text in texts
    )
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_PARSER],
        input="\x1e".join(texts),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip("\n") == expected
