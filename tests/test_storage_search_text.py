"""Transcript formatting, match-centred windows and the small formatting rules of recall."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.safety.redact import REDACTED
from palimpsest.storage.search_text import (
    EARLIER_MARKER,
    LATER_MARKER,
    Snippet,
    demote_cron,
    format_conversation,
    format_when,
    highlight_spans,
    hit_snippets,
    hit_text,
    make_snippet,
    match_positions,
    match_preview,
    match_window,
    truncate_around_matches,
)
from palimpsest.storage.sessions import SessionStore

KEY = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34"


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


# -- redacted before cut ------------------------------------------------------------------


def test_tool_output_is_redacted_before_the_250_character_cut() -> None:
    output = "." * 240 + KEY + " " + "z" * 400  # the cut at 250 falls inside the key
    (block,) = format_conversation([{"role": "tool", "name": "sh", "content": output}]).split(
        "\n\n"
    )
    assert KEY[:10] not in block
    assert block.startswith("[TOOL:sh]: " + "." * 240 + "[REDAC")


def test_windows_and_previews_redact_before_they_cut() -> None:
    text = "x" * 1000 + " oauth " + "y" * 60 + f" key {KEY} " + "w" * 1000
    window = truncate_around_matches(text, "oauth", 100)
    preview = match_preview(text, "oauth", 100)
    for cut in (window, preview):
        assert "oauth" in cut and KEY[:8] not in cut and "[RED" in cut
    assert truncate_around_matches(f"short {KEY}", "short") == f"short {REDACTED}"


@pytest.mark.parametrize(
    ("text", "query", "marked"),
    [
        # the case: markers used to land inside the assignment and break the pattern
        ("config: password=hunter2abc", "password", f"config: >>>password<<<={REDACTED}"),
        ("config: password=hunter2abc", "hunter*", f"config: password={REDACTED}"),
        (f"use {KEY} now", "sk-proj", f"use {REDACTED} now"),
        ("DB_PASSWORD=s3cr3tValue", "password", f"DB_>>>PASSWORD<<<={REDACTED}"),
        ("we donated, then donate again", "donate", "we >>>donated<<<, then >>>donate<<< again"),
        ("deploying the deployment", "deploy*", ">>>deploying<<< the >>>deployment<<<"),
        ("use --force, not force", "--force", "use >>>--force<<<, not force"),
        ("我们讨论了数据库迁移方案", "数据库", "我们讨论了>>>数据库<<<迁移方案"),
        ("the [REDACTED] marker", "redacted", "the [REDACTED] marker"),
        ("a\n\tb   c", "b", "a >>>b<<< c"),
    ],
)
def test_snippet_marks_the_redacted_text(text: str, query: str, marked: str) -> None:
    assert make_snippet(text, query).marked() == marked


def test_snippet_cut_never_shows_part_of_a_key() -> None:
    # A raw 240-character window around "deploy" would end inside the key.
    text = "deploy " + "word " * 44 + f"{KEY} " + "tail " * 50
    raw_cut = text[:240]
    assert KEY[:8] in raw_cut and KEY not in raw_cut  # what a cut-then-redact would show
    snippet = make_snippet(text, "deploy")
    assert snippet.text.startswith("deploy ") and snippet.text.endswith("...")
    assert KEY[:8] not in snippet.text
    assert snippet.spans == ((0, 6),)


def test_snippet_window_holds_the_densest_matches() -> None:
    text = "kafka " + "filler " * 100 + "kafka lag kafka " + "filler " * 100
    snippet = make_snippet(text, "kafka", 120)
    assert snippet.text.startswith("...") and snippet.text.endswith("...")
    assert snippet.marked().count(">>>kafka<<<") == 2
    assert len(snippet.text) <= 120 + 6
    assert all(snippet.text[s:e] == "kafka" for s, e in snippet.spans)


@given(st.text(max_size=600), st.sampled_from(["a", "ab*", "password", "数据", "--x"]))
def test_snippet_spans_are_inside_and_ordered(text: str, query: str) -> None:
    snippet = make_snippet(text, query, 80)
    assert len(snippet.text) <= 80 + 6
    ends = [0]
    for start, end in snippet.spans:
        assert ends[-1] <= start < end <= len(snippet.text)
        ends.append(end)
    assert snippet.marked().replace(">>>", "").replace("<<<", "") == snippet.text or (
        ">>>" in text or "<<<" in text
    )


def test_highlight_spans_merge_and_skip_markers() -> None:
    assert highlight_spans("abc abcdef", "abc abc*") == [(0, 3), (4, 10)]
    assert highlight_spans(f"x {REDACTED} y", "redact*") == []
    assert highlight_spans("100% and 100", "100%") == [(0, 4)]  # literal, as searched
    assert Snippet("ab", ((0, 1),)).marked("[", "]") == "[a]b"


def test_hit_text_decodes_list_content_and_call_arguments() -> None:
    calls = [{"id": "1", "function": {"name": "sh", "arguments": json.dumps({"password": "p4ss"})}}]
    row = {
        "content": json.dumps([{"type": "text", "text": "hello"}]),
        "content_json": 1,
        "tool_name": None,
        "tool_calls": json.dumps(calls),
    }
    assert hit_text(row) == 'hello\nsh {"password": "p4ss"}'
    assert hit_text({"content": "{bad", "content_json": 1, "tool_calls": "[oops"}) == "{bad\n[oops"


def test_hit_snippets_read_the_rows_and_redact(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "state.db") as store:
        store.create_session("a", source="cli")
        ids = store.append_messages(
            "a",
            [
                {"role": "user", "content": "config: password=hunter2abc"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {
                                "name": "login",
                                "arguments": json.dumps({"user": "bob", "password": "hunter2abc"}),
                            },
                        }
                    ],
                },
            ],
        )
        hits = [{"id": ids[1]}, {"id": ids[0]}, {"id": 999}]
        with store.connection_for_reads() as con:
            snippets = hit_snippets(con, hits, "password")
    assert [s.marked() for s in snippets] == [
        f'login {{"user": "bob", ">>>password<<<": "{REDACTED}"}}',
        f"config: >>>password<<<={REDACTED}",
        "",
    ]
