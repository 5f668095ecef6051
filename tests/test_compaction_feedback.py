"""Manual compression feedback: headlines, token lines, notes and failure reasons (CC-113/114)."""

from __future__ import annotations

from typing import Any

import pytest

from palimpsest.compaction.feedback import summarize_manual_compression

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz123456"


def msgs(n: int) -> list[dict[str, Any]]:
    return [{"role": ("user" if i % 2 == 0 else "assistant"), "content": f"m{i}"} for i in range(n)]


def test_example_15_compressed_with_denser_summary_note() -> None:
    out = summarize_manual_compression(msgs(12), msgs(4), 120_000, 130_000)
    assert out["noop"] is False
    assert out["headline"] == "Compressed: 12 → 4 messages"
    assert out["token_line"] == "Rough transcript estimate: ~120,000 → ~130,000 tokens"
    assert out["note"] is not None
    assert "rough" in out["note"] and "denser summaries" in out["note"]


def test_example_15_noop_with_equal_tokens() -> None:
    before = msgs(12)
    out = summarize_manual_compression(before, list(before), 50_000, 50_000)
    assert out["noop"] is True
    assert out["headline"] == "No changes from compression: 12 messages"
    assert out["token_line"] == "Rough transcript estimate: ~50,000 tokens (unchanged)"
    assert out["token_line"].endswith("(unchanged)")
    assert out["note"] is None


def test_noop_compares_contents_not_identity() -> None:
    out = summarize_manual_compression(msgs(3), msgs(3), 10, 10)
    assert out["noop"] is True


def test_noop_with_different_tokens_shows_both_figures() -> None:
    before = msgs(5)
    out = summarize_manual_compression(before, before, 1_000, 1_200)
    assert out["headline"] == "No changes from compression: 5 messages"
    assert out["token_line"] == "Rough transcript estimate: ~1,000 → ~1,200 tokens"
    assert out["note"] is None


@pytest.mark.parametrize(
    ("after_count", "before_tokens", "after_tokens", "has_note"),
    [
        (4, 120_000, 130_000, True),
        (4, 120_000, 30_000, False),  # tokens fell
        (4, 120_000, 120_000, False),  # tokens equal
        (12, 100, 200, False),  # same count but different content: not fewer messages
        (14, 100, 200, False),  # more messages
    ],
)
def test_normal_note_only_when_fewer_messages_but_more_tokens(
    after_count: int, before_tokens: int, after_tokens: int, has_note: bool
) -> None:
    after = [{"role": "user", "content": f"other {i}"} for i in range(after_count)]
    out = summarize_manual_compression(msgs(12), after, before_tokens, after_tokens)
    assert out["headline"] == f"Compressed: 12 → {after_count} messages"
    assert (out["note"] is not None) is has_note


def test_refused_headline_wins_over_everything() -> None:
    before = msgs(9)
    out = summarize_manual_compression(
        before,
        before,
        900,
        900,
        refused_would_grow=True,
        aborted=True,
        fallback_used=True,
        failure_reason="boom",
    )
    assert out["headline"] == (
        "Compression refused (summary would grow the conversation): 9 messages preserved"
    )
    assert "no messages were removed" in out["note"]
    assert "Reason" not in out["note"]
    assert out["refused_would_grow"] is True


def test_aborted_headline_and_redacted_reason() -> None:
    before = msgs(9)
    out = summarize_manual_compression(
        before,
        before,
        900,
        900,
        aborted=True,
        fallback_used=True,
        failure_reason=f"401 bad key {SECRET}",
    )
    assert out["headline"] == "Compression aborted: 9 messages preserved"
    assert out["note"].startswith("Summary generation failed, so no messages were removed.")
    assert out["note"].endswith(" Reason: 401 bad key [REDACTED]")
    assert SECRET not in repr(out)
    assert out["failure_reason"] == "401 bad key [REDACTED]"
    assert out["aborted"] is True


def test_fallback_headline_note_and_dropped_count() -> None:
    out = summarize_manual_compression(
        msgs(20),
        msgs(8),
        20_000,
        6_000,
        fallback_used=True,
        dropped_count=11,
        failure_reason="Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789 timed out",
    )
    assert out["headline"] == "Compressed with fallback: 20 → 8 messages"
    assert "limited fallback context" in out["note"]
    assert "11 message(s) were removed" in out["note"]
    assert out["note"].endswith(" Reason: Authorization: Bearer [REDACTED] timed out")
    assert out["dropped_count"] == 11
    assert out["fallback_used"] is True


@pytest.mark.parametrize("given", [None, True, False, "7", 2.0])
def test_dropped_count_falls_back_to_the_message_difference(given: Any) -> None:
    out = summarize_manual_compression(
        msgs(20), msgs(8), 1, 1, fallback_used=True, dropped_count=given
    )
    assert out["dropped_count"] == 12
    assert "12 message(s) were removed" in out["note"]


def test_dropped_count_is_never_negative() -> None:
    out = summarize_manual_compression(msgs(3), msgs(5), 1, 1)
    assert out["dropped_count"] == 0


def test_zero_is_a_real_dropped_count() -> None:
    out = summarize_manual_compression(msgs(20), msgs(8), 1, 1, dropped_count=0)
    assert out["dropped_count"] == 0


def test_failure_without_reason_has_no_reason_suffix() -> None:
    out = summarize_manual_compression(msgs(4), msgs(4), 1, 1, aborted=True, failure_reason="  ")
    assert out["note"] == "Summary generation failed, so no messages were removed."
    assert out["failure_reason"] is None


def test_reason_is_kept_but_not_shown_on_a_normal_run() -> None:
    out = summarize_manual_compression(msgs(12), msgs(4), 100, 50, failure_reason=f"x {SECRET}")
    assert out["headline"] == "Compressed: 12 → 4 messages"
    assert out["note"] is None
    assert out["failure_reason"] == "x [REDACTED]"


def test_result_carries_all_fields() -> None:
    out = summarize_manual_compression(msgs(12), msgs(4), 120_000, 130_000)
    assert out == {
        "noop": False,
        "headline": "Compressed: 12 → 4 messages",
        "token_line": "Rough transcript estimate: ~120,000 → ~130,000 tokens",
        "note": out["note"],
        "aborted": False,
        "fallback_used": False,
        "refused_would_grow": False,
        "before_count": 12,
        "after_count": 4,
        "before_tokens": 120_000,
        "after_tokens": 130_000,
        "dropped_count": 8,
        "failure_reason": None,
    }
