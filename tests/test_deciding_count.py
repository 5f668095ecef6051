"""The UTF-8 bound never under-counts the exact count, and decides only when it settles."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.deciding_count import DecidingCount, deciding_count, utf8_bound
from palimpsest.messages import load_transcript
from palimpsest.tokens import ExactCounter, RoughCounter

DATA = Path(__file__).parent / "data" / "transcripts"
FILES = sorted(
    p
    for p in DATA.rglob("*")
    if p.is_file() and p.suffix in (".traj", ".json", ".jsonl") and "fixtures" not in p.parts
)
DENSE = sorted((DATA / "dense").glob("*.json"))
EXACT = ExactCounter("o200k_base")


def test_the_dense_set_is_what_it_claims() -> None:
    # Each file is one chars/4 gets at least 2x wrong: the reason this module exists.
    assert len(DENSE) == 4
    for path in DENSE:
        messages = json.loads(path.read_text(encoding="utf-8"))
        assert EXACT.count_messages(messages) > 2 * RoughCounter().count_messages(messages)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(DATA)))
def test_bound_is_never_below_the_exact_count(path: Path) -> None:
    messages = load_transcript(path)
    assert utf8_bound(messages) >= EXACT.count_messages(messages)
    assert utf8_bound(messages) >= ExactCounter("cl100k_base").count_messages(messages)


text = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=300)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"role": st.sampled_from(["user", "assistant", "tool", "system"]), "content": text}
        ),
        max_size=6,
    )
)
def test_bound_holds_for_any_text(messages: list[dict[str, Any]]) -> None:
    assert utf8_bound(messages) >= EXACT.count_messages(messages)


def test_the_bound_decides_only_when_it_is_within_the_limit() -> None:
    messages = json.loads((DATA / "dense" / "cjk-docs.json").read_text(encoding="utf-8"))
    bound = utf8_bound(messages)
    calls: list[int] = []

    def exact() -> ExactCounter:
        calls.append(1)
        return EXACT

    assert deciding_count(messages, bound, exact) == DecidingCount(bound, "bound")
    assert calls == []
    over = deciding_count(messages, bound - 1, exact)
    assert over.method == "exact" and over.tokens == EXACT.count_messages(messages)
    assert calls == [1]
    assert over.label == "exact o200k_base" and over.shown() == f"{over.tokens:,}"
    assert DecidingCount(1234, "bound").shown() == "≤1,234"


def test_empty_list_costs_nothing() -> None:
    assert utf8_bound([]) == 0 == EXACT.count_messages([])
