"""Placing the summary and fitting the result (compaction/placement.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compaction_helpers import asst, sys_, user
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.compaction.markers import END_MARKER, SHORT_SUMMARY_PREFIX, SUMMARY_FLAG
from palimpsest.compaction.placement import MIN_REWRITE_BUDGET, place_summary, summary_clipped
from palimpsest.messages import content_text, load_transcript, validate_transcript
from palimpsest.tokens import RoughCounter

COUNTER = RoughCounter()


def long_summary(words: int) -> str:
    return "## Active Task\nport it\n\n## Critical Context\n" + " ".join(["fact"] * words)


def place(body: str, target: int, rewrite: Any = None) -> Any:
    return place_summary(
        [sys_(), user("Port the service.")],
        body,
        [user("next"), asst("done")],
        has_user_turn=True,
        orphan_call_policy="stub",
        target=target,
        count=COUNTER.count_messages,
        count_text=COUNTER.count_text,
        rewrite=rewrite,
    )


def test_a_summary_that_fits_is_placed_as_it_is() -> None:
    placed = place(long_summary(20), target=2_000, rewrite=lambda budget: "never asked")
    assert placed.body == long_summary(20)
    assert placed.fitted.fits and not summary_clipped(placed.fitted.messages)
    validate_transcript(placed.fitted.messages)


def test_a_clipped_summary_is_rewritten_to_a_smaller_budget() -> None:
    budgets: list[int] = []

    def rewrite(budget: int) -> str:
        budgets.append(budget)
        return long_summary(budget // 4)

    placed = place(long_summary(3_000), target=1_200, rewrite=rewrite)
    assert budgets and budgets[0] < COUNTER.count_text(long_summary(3_000))
    assert all(b >= MIN_REWRITE_BUDGET for b in budgets)
    assert placed.body != long_summary(3_000)
    assert placed.fitted.fits


def test_a_rewrite_that_comes_back_longer_is_not_used() -> None:
    """The extractive summarizer answers a budget even its terse form exceeds with every
    heading: a rewrite to 60 tokens came back at 272 after one to 163 had given 88, and the
    longer text was placed and clipped in its middle (the failure and the changed file)."""
    asked: list[int] = []
    short = long_summary(200)

    def rewrite(budget: int) -> str:
        asked.append(budget)
        return short if len(asked) == 1 else long_summary(1_000)

    placed = place(long_summary(3_000), target=300, rewrite=rewrite)
    assert len(asked) == 2  # the longer answer ended the rewrites
    assert placed.body == short


def test_without_a_rewrite_the_shrunk_summary_stays_shrunk() -> None:
    """The fit step shortens the summary's long Critical Context line (its start stays)
    and keeps the task; there is no rewrite to ask for a shorter one."""
    placed = place(long_summary(3_000), target=1_200)
    assert placed.body == long_summary(3_000)
    assert placed.fitted.fits and placed.fitted.summary_shrunk
    summary = next(
        content_text(m["content"]) for m in placed.fitted.messages if m.get(SUMMARY_FLAG)
    )
    assert "## Active Task\nport it" in summary and "fact fact" in summary
    assert placed.fitted.tokens > 1_000  # not the whole line dropped for a few tokens


def test_clipping_after_the_end_marker_is_not_a_clipped_summary() -> None:
    text = (
        "## Active Task\nx\n"
        + END_MARKER
        + "\n[… 10 characters clipped by palimpsest to fit the context window …]"
    )
    message: dict[str, Any] = {"role": "user", "content": text, SUMMARY_FLAG: True}
    assert not summary_clipped([message])
    message["content"] = (
        "[… 10 characters clipped by palimpsest to fit the context window …]\n" + END_MARKER
    )
    assert summary_clipped([message])
    assert content_text(message["content"])


def test_a_tiny_window_still_names_the_file_the_run_changed() -> None:
    """A reader fixture at 90% depth, window 638: head and tail leave the summary about a
    hundred tokens. The deterministic summary is rewritten down to the lines that say
    something, under the short note, instead of being cut through its middle (where the
    changed file was)."""
    path = (
        Path(__file__).parent / "data/transcripts/fixtures/swe-agent-1x-xml-function-calling.traj"
    )
    messages = [dict(m) for m in load_transcript(path, format="auto")[:11]]
    compressor = ContextCompressor(638, quiet_mode=True)
    result = compressor.compress(messages, force=True)
    assert compressor.last_stats.compressed
    summary = next(content_text(m["content"]) for m in result if m.get(SUMMARY_FLAG))
    assert summary.startswith(SHORT_SUMMARY_PREFIX)
    assert "- changed: /testbed/src/marshmallow/fields.py" in summary
