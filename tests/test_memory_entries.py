"""Picking the entry a replace or remove means (memory/entries.py find_entry)."""

from __future__ import annotations

import pytest

from palimpsest.errors import MemoryMatchError
from palimpsest.memory.entries import MIN_MATCH_CHARS, find_entry

ENTRIES = ["uses pnpm for installs", "deploy with make deploy-prod", "ok"]


def test_a_short_match_is_refused_with_its_candidates() -> None:
    with pytest.raises(MemoryMatchError, match="too short") as info:
        find_entry(ENTRIES, ENTRIES, "p")
    assert len("p") < MIN_MATCH_CHARS and len(info.value.matches) == 2


def test_a_short_text_that_is_a_whole_entry_is_fine() -> None:
    assert find_entry(ENTRIES, ENTRIES, "ok") == 2


def test_several_entries_are_listed_and_one_is_found() -> None:
    assert find_entry(ENTRIES, ENTRIES, "pnpm") == 0
    with pytest.raises(MemoryMatchError, match="Multiple entries") as many:
        find_entry(["alpha one", "alpha two"], ["alpha one", "alpha two"], "alpha")
    assert many.value.matches == ["alpha one", "alpha two"]


def test_nothing_matched_is_said_whatever_the_length() -> None:
    with pytest.raises(MemoryMatchError, match="No entry matched 'zz'"):
        find_entry(ENTRIES, ENTRIES, "zz")
