"""Shrinking a summary by whole lines, the least needed first (compaction/summary_lines.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from palimpsest.compaction.markers import END_MARKER, SHORT_SUMMARY_PREFIX
from palimpsest.compaction.summary_lines import (
    AIM_RANK,
    MIN_LINE_KEPT,
    TOP_RANK,
    drop_summary_lines,
    line_ranks,
)

FAILURE = "- Last failure: RUN `pytest -q tests/test_text.py` — FAILED tests/test_text.py::test_a"
CHANGED = "- changed: text.py"
NAMES = "- Identifiers worked with: `slugify`, `strip_accents`, `lower`"
SUMMARY = "\n".join(
    [
        SHORT_SUMMARY_PREFIX,
        "## Active Task",
        "User asked: 'Make `slugify` strip accents.'",
        "",
        "## Goal",
        "Make `slugify` strip accents.",
        "",
        "## Constraints & Preferences",
        "None.",
        "",
        "## Completed Actions",
        "1. READ text.py — 40 lines [tool: shell]",
        "2. RUN `pytest -q tests/test_text.py` — exit 1; 1 passed, 1 failed [tool: shell]",
        "3. EDIT text.py — ok [tool: apply_patch]",
        "",
        "## Active State",
        "- Working directory: /repo",
        FAILURE + "; not fixed yet",
        "",
        "## Blocked",
        "- RUN `pytest -q tests/test_text.py` — FAILED tests/test_text.py::test_a",
        "",
        "## Relevant Files",
        "- text.py — modified",
        "- README.md — read",
        "",
        "## Critical Context",
        NAMES,
        "",
        END_MARKER,
    ]
)


def ranked(text: str) -> dict[str, int | None]:
    lines = text.split("\n")
    return dict(zip(lines, line_ranks(lines), strict=True))


def test_the_facts_rank_highest_and_what_says_nothing_lowest() -> None:
    ranks = ranked(SUMMARY)
    assert ranks[FAILURE + "; not fixed yet"] == TOP_RANK
    assert ranks["- text.py — modified"] == TOP_RANK
    assert ranks["User asked: 'Make `slugify` strip accents.'"] == AIM_RANK + 1
    assert ranks[NAMES] == AIM_RANK
    assert ranks["None."] == 0
    # the blocker repeats the last failure, the goal repeats the request
    assert ranks["- RUN `pytest -q tests/test_text.py` — FAILED tests/test_text.py::test_a"] == 0
    assert ranks["Make `slugify` strip accents."] == 0
    # older actions are progress detail; the newest one ranks above them
    assert ranks["1. READ text.py — 40 lines [tool: shell]"] == 1
    assert ranks["3. EDIT text.py — ok [tool: apply_patch]"] == 2
    assert ranks["- README.md — read"] == 1
    assert ranks[SHORT_SUMMARY_PREFIX] is None and ranks[END_MARKER] is None
    assert ranks["## Goal"] is None


def test_lines_go_by_need_and_their_emptied_headings_with_them() -> None:
    out = drop_summary_lines(SUMMARY, len(SUMMARY) - 150)
    assert len(out) <= len(SUMMARY) - 150
    assert "## Constraints & Preferences" not in out and "None." not in out
    assert "## Blocked" not in out
    assert FAILURE in out and "- text.py — modified" in out and NAMES in out
    assert out.startswith(SHORT_SUMMARY_PREFIX) and out.endswith(END_MARKER)
    assert "\n\n\n" not in out


def test_below_the_facts_nothing_of_them_is_dropped() -> None:
    out = drop_summary_lines(SUMMARY, 0)  # asks for everything: only what is below the facts
    assert FAILURE in out and "- text.py — modified" in out and NAMES in out
    assert "User asked: 'Make `slugify` strip accents.'" in out
    assert "Completed Actions" not in out and "Working directory" not in out
    assert "## Active State" in out  # it still has the last failure under it


def test_with_the_facts_allowed_headings_then_names_go_first() -> None:
    facts_only = drop_summary_lines(SUMMARY, 0)
    goal = len(facts_only) - 40
    out = drop_summary_lines(facts_only, goal, TOP_RANK, headings=True)
    assert len(out) <= goal and out.count("## ") < facts_only.count("## ")
    assert FAILURE in out and "- text.py — modified" in out and NAMES in out  # headings first
    everything = drop_summary_lines(facts_only, 0, TOP_RANK, headings=True)
    assert [x for x in everything.split("\n") if x] == [SHORT_SUMMARY_PREFIX, END_MARKER]


def test_a_long_list_of_names_is_cut_between_names() -> None:
    names = "- Identifiers worked with: " + ", ".join(f"`name_{i}`" for i in range(40))
    text = "\n".join([SHORT_SUMMARY_PREFIX, "## Critical Context", names, END_MARKER])
    out = drop_summary_lines(text, len(text) - 100, AIM_RANK)
    assert "`name_0`, `name_1`" in out and out.count("`name_") < 40
    line = next(x for x in out.split("\n") if x.startswith("- Identifiers"))
    assert line.endswith("` …")  # whole names only


def test_a_long_paragraph_keeps_its_start() -> None:
    paragraph = "The agent " + "read the parser and ran the tests " * 40
    text = "\n".join([SHORT_SUMMARY_PREFIX, "## Notes", paragraph, END_MARKER])
    out = drop_summary_lines(text, len(text) - 300)
    kept = next(x for x in out.split("\n") if x.startswith("The agent"))
    assert len(kept) >= MIN_LINE_KEPT and kept.endswith(" …")
    assert len(out) <= len(text) - 300


def test_a_text_that_fits_is_returned_unchanged() -> None:
    assert drop_summary_lines(SUMMARY, len(SUMMARY)) == SUMMARY


@given(st.lists(st.text(alphabet="ab #-:.\n`", max_size=40), max_size=12), st.integers(0, 400))
def test_the_prefix_and_end_marker_always_stay(lines: list[str], goal: int) -> None:
    text = "\n".join([SHORT_SUMMARY_PREFIX, *lines, END_MARKER])
    for rank in (AIM_RANK - 1, TOP_RANK):
        out = drop_summary_lines(text, goal, rank, headings=rank == TOP_RANK)
        assert out.startswith(SHORT_SUMMARY_PREFIX) and out.endswith(END_MARKER)
        assert len(out) <= len(text)
