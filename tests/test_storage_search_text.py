"""Transcript formatting, match-centred windows and the small formatting rules of recall."""

from __future__ import annotations

from datetime import datetime

from hypothesis import given
from hypothesis import strategies as st

from palimpsest.storage.search_text import (
    EARLIER_MARKER,
    LATER_MARKER,
    demote_cron,
    format_conversation,
    format_when,
    match_positions,
    match_window,
    truncate_around_matches,
)


def test_format_conversation_shapes() -> None:
    long_output = "a" * 250 + "MIDDLE" + "z" * 250
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": None},
        {
            "role": "assistant",
            "content": "checking",
            "tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
                {"id": "2", "name": "grep"},
                {"id": "3"},
            ],
        },
        {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "cat"}}]},
        {"role": "tool", "tool_call_id": "1", "name": "ls", "content": long_output},
        {"role": "tool", "tool_call_id": "2", "content": "no name here"},
        {"role": "user", "content": [{"type": "text", "text": "part one"}]},
    ]
    assert format_conversation(messages) == "\n\n".join(
        [
            "[SYSTEM]: be brief",
            "[USER]: ",
            "[ASSISTANT]: [Called: ls, grep, ?]",
            "[ASSISTANT]: checking",
            "[ASSISTANT]: [Called: cat]",
            "[TOOL:ls]: " + "a" * 250 + "\n...[truncated]...\n" + "z" * 250,
            "[TOOL]: no name here",
            "[USER]: part one",
        ]
    )


def test_short_text_is_unchanged() -> None:
    assert truncate_around_matches("short text", "text", 100) == "short text"


def test_acceptance_window_places_match_a_quarter_in() -> None:
    text = "x" * 200_000 + "oauth refresh" + "y" * (100_000 - len("oauth refresh"))
    assert len(text) == 300_000
    assert match_window(text, "oauth refresh", 100_000) == (175_000, 275_000)
    out = truncate_around_matches(text, "oauth refresh", 100_000)
    assert out.startswith(EARLIER_MARKER) and out.endswith(LATER_MARKER)
    body = out[len(EARLIER_MARKER) : -len(LATER_MARKER)]
    assert body.index("oauth refresh") == 25_000


def test_window_near_the_end_is_shifted_back() -> None:
    text = "x" * 1000 + "needle"
    start, end = match_window(text, "needle", 100)
    assert (start, end) == (len(text) - 100, len(text))
    assert not truncate_around_matches(text, "needle", 100).endswith(LATER_MARKER)


def test_no_match_keeps_the_start() -> None:
    text = "abc " * 100
    assert truncate_around_matches(text, "zzz", 40) == text[:40] + LATER_MARKER


def test_phrase_beats_proximity_beats_terms() -> None:
    # (a) the whole phrase wins over scattered terms
    text = "alpha " + "." * 500 + " beta " + "." * 500 + " alpha beta"
    assert match_positions(text, "alpha beta") == [text.index("alpha beta")]
    # (b) no phrase: the rarest term where the other term is within 200 characters
    text = "gamma " + "." * 500 + " delta " + "." * 500 + " delta ... gamma"
    assert match_positions(text, "gamma delta") == [text.rindex("gamma")]
    # (c) nothing close: every occurrence of every term
    text = "eps " + "." * 500 + " zeta"
    assert match_positions(text, "eps zeta") == [0, text.index("zeta")]
    assert match_positions(text, "AND OR") == []


def test_window_covers_the_densest_cluster() -> None:
    text = "kafka" + "." * 5000 + "kafka kafka kafka" + "." * 5000
    start, end = match_window(text, "kafka", 1000)
    assert start <= text.index("kafka kafka") < end
    assert text[start:end].count("kafka") == 3


@given(
    st.text(alphabet="ab \n", max_size=400),
    st.sampled_from(["a", "ab", "b a", "zz"]),
    st.integers(1, 120),
)
def test_window_is_bounded_and_holds_a_match(text: str, query: str, size: int) -> None:
    start, end = match_window(text, query, size)
    assert 0 <= start <= end <= len(text)
    assert end - start == min(size, len(text))
    positions = match_positions(text, query)
    if positions and len(text) > size:
        assert any(start <= p < end for p in positions)


def test_format_when() -> None:
    stamp = datetime(2026, 3, 5, 14, 30).timestamp()
    assert format_when(stamp) == "March 05, 2026 at 02:30 PM"
    assert format_when(str(stamp)) == "March 05, 2026 at 02:30 PM"
    assert format_when(None) == "unknown"
    assert format_when("2026-03-05T14:30:00") == "2026-03-05T14:30:00"
    assert format_when(1e20) == "1e+20"


def test_demote_cron_is_a_stable_partition() -> None:
    hits = [
        {"id": 1, "source": "cron"},
        {"id": 2, "source": "telegram"},
        {"id": 3, "source": "cron"},
        {"id": 4, "source": "cli"},
        {"id": 5, "source": None},
    ]
    assert [h["id"] for h in demote_cron(hits)] == [2, 4, 5, 1, 3]
