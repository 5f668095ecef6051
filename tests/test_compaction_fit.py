"""The fit step: a compacted list fits the window minus the output reserve, or says why not."""

from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any

import pytest

from compaction_helpers import asst, call, sys_, tool, user
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.compaction.fit import (
    CLIP_MARKER,
    DEFAULT_OUTPUT_RESERVE,
    MIN_CLIPPED_CHARS,
    fit_target,
    fit_to_window,
    output_reserve,
)
from palimpsest.compaction.markers import (
    END_MARKER,
    SHORT_SUMMARY_PREFIX,
    SUMMARY_FLAG,
    SUMMARY_PREFIX,
)
from palimpsest.messages import content_text, load_transcript, validate_transcript
from palimpsest.tokens import estimate_messages_tokens_rough

DATA = Path(__file__).parent / "data" / "transcripts"
PYDICOM = DATA / "swe-agent" / "pydicom-1458__gpt4_default.traj"
count = estimate_messages_tokens_rough
MARKER_START = CLIP_MARKER.split("{")[0]


def summary(text: str = "what happened") -> dict[str, Any]:
    return {"role": "user", "content": f"[summary] {text}", SUMMARY_FLAG: True}


class TestReserve:
    def test_explicit_max_tokens_is_the_reserve(self) -> None:
        assert output_reserve(200_000, 65_536) == 65_536
        assert fit_target(200_000, 65_536) == 134_464

    @pytest.mark.parametrize(
        ("window", "reserve"), [(200_000, DEFAULT_OUTPUT_RESERVE), (8_000, 2_000), (100, 25)]
    )
    def test_default_reserve_is_at_most_a_quarter(self, window: int, reserve: int) -> None:
        assert output_reserve(window) == reserve
        assert fit_target(window) == window - reserve

    @pytest.mark.parametrize("bad", [None, 0, -1, True, 300_000])
    def test_unusable_caps_fall_back_to_the_default(self, bad: Any) -> None:
        assert output_reserve(200_000, bad) == DEFAULT_OUTPUT_RESERVE


class TestFitToWindow:
    def test_a_list_that_fits_is_returned_as_is(self) -> None:
        msgs = [sys_(), summary(), user("go"), asst("done")]
        result = fit_to_window(msgs, 10_000, count)
        assert result.fits and result.messages == msgs and result.reason is None

    def test_tail_shrinks_by_whole_groups_and_keeps_the_newest_request(self) -> None:
        big = "x" * 4_000
        msgs = [
            sys_(),
            summary(),
            asst(None, [call("a"), call("b")]),
            tool("a", big),
            tool("b", big),
            asst("looked"),
            user("now fix the parser"),
            asst("fixed"),
        ]
        original = copy.deepcopy(msgs)
        result = fit_to_window(msgs, 200, count)
        assert msgs == original
        assert result.fits and result.dropped_messages >= 3
        validate_transcript(result.messages, strict=True)
        texts = [content_text(m.get("content")) for m in result.messages]
        assert "now fix the parser" in texts
        assert not any(m.get("tool_call_id") for m in result.messages)  # the group went whole

    def test_dropping_never_leaves_the_summary_next_to_its_own_role(self) -> None:
        msgs = [sys_(), summary(), asst("x" * 3_000), user("the request"), asst("ok")]
        result = fit_to_window(msgs, 120, count)
        roles = [m["role"] for m in result.messages]
        assert all(a != b for a, b in itertools.pairwise(roles))
        assert result.messages[1][SUMMARY_FLAG]
        assert "the request" in content_text(result.messages[1]["content"])

    def test_oversized_messages_are_clipped_with_a_visible_marker(self) -> None:
        output = "START " + "y" * 40_000 + " END"
        msgs = [sys_(), summary(), user("run it"), asst(None, [call("c")]), tool("c", output)]
        result = fit_to_window(msgs, 2_000, count)
        assert result.fits and result.clipped_messages == 1
        clipped = result.messages[-1]["content"]
        assert MARKER_START in clipped and clipped.startswith("START") and clipped.endswith("END")
        validate_transcript(result.messages, strict=True)

    def test_list_content_is_clipped_part_by_part(self) -> None:
        parts = [{"type": "text", "text": "z" * 20_000}, {"type": "image_url", "image_url": {}}]
        msgs = [sys_(), summary(), {"role": "user", "content": parts}]
        result = fit_to_window(msgs, 3_000, count)
        new_parts = result.messages[-1]["content"]
        assert MARKER_START in new_parts[0]["text"] and new_parts[1] == parts[1]

    def test_the_system_prompt_is_never_clipped_and_the_reason_says_so(self) -> None:
        prompt = "rules " * 5_000
        msgs = [sys_(prompt), summary(), user("hi"), asst("hello")]
        result = fit_to_window(msgs, 1_000, count)
        assert not result.fits
        assert result.messages[0]["content"] == prompt
        assert result.reason is not None and "system prompt" in result.reason
        assert "over the target of 1,000" in result.reason

    def test_no_message_is_clipped_below_the_minimum(self) -> None:
        msgs = [sys_(), summary(), user("q" * 5_000), asst("a" * 5_000)]
        result = fit_to_window(msgs, 10, count)
        assert not result.fits
        for m in result.messages[2:]:
            assert len(content_text(m["content"])) >= MIN_CLIPPED_CHARS


class TestCompressorFits:
    def test_pydicom_at_8000_fits_the_target(self) -> None:
        """Issue 8: pydicom at --context-length 8000 came out at 10,470 tokens with exit 0."""
        messages = load_transcript(PYDICOM)
        c = ContextCompressor(8_000, quiet_mode=True)
        out = c.compress(messages, force=True)
        stats = c.last_stats
        assert stats.compressed and stats.fits and stats.not_fit_reason is None
        assert stats.fit_target_tokens == 6_000
        assert count(out) <= 6_000 == c.fit_target_tokens
        validate_transcript(out, strict=True)

    def test_an_unfittable_result_says_why(self) -> None:
        messages = [sys_("policy " * 20_000)]
        for i in range(12):
            messages += [user(f"request {i} " + "w" * 800), asst(f"answer {i}")]
        c = ContextCompressor(8_000, quiet_mode=True)
        c.compress(messages, force=True)
        stats = c.last_stats
        assert not stats.fits and stats.not_fit_reason
        assert "system prompt" in stats.not_fit_reason

    def test_the_no_op_path_reports_whether_it_fits(self) -> None:
        c = ContextCompressor(1_000, quiet_mode=True)
        c.compress([user("x" * 8_000), asst("ok")])
        assert c.last_stats.reason == "too few messages"
        assert not c.last_stats.fits and "nothing was compressed" in str(
            c.last_stats.not_fit_reason
        )
        c.compress([user("hi"), asst("ok")])
        assert c.last_stats.fits and c.last_stats.not_fit_reason is None

    def test_an_explicit_output_cap_sets_the_target(self) -> None:
        c = ContextCompressor(20_000, max_tokens=12_000, quiet_mode=True)
        assert c.fit_target_tokens == 8_000


def test_results_of_a_summary_merged_into_a_call_are_never_dropped() -> None:
    """Found by the any-JSON property: the summary merged into an assistant message with
    calls, and the shrink step took its stub result for a droppable stray unit."""
    merged = asst("[summary] s", [call("c")]) | {SUMMARY_FLAG: True}
    msgs = [sys_(), merged, tool("c", "r" * 2_000), user("q" * 2_000), asst("a")]
    result = fit_to_window(msgs, 50, count)
    validate_transcript(result.messages, strict=True)
    assert result.messages[2]["tool_call_id"] == "c"


class TestMergedSummary:
    """Issue 8 follow-up: clipping a summary merged into a tail message cut across its end
    marker, losing the summary's last sections (its identifiers) and the marker itself."""

    def test_only_the_text_after_the_end_marker_is_clipped(self) -> None:
        from palimpsest.compaction.fit import _clip_message
        from palimpsest.compaction.markers import END_MARKER, SUMMARY_FLAG

        summary = "## Active Task\nport it\n\n## Critical Context\n- `keep_me`\n\n" + END_MARKER
        message = {"role": "user", "content": summary + "\n\n" + "x" * 5_000, SUMMARY_FLAG: True}
        clipped = _clip_message(message, 0.5)["content"]
        assert clipped.startswith(summary)
        assert "clipped by palimpsest" in clipped.partition(END_MARKER)[2]
        assert len(clipped) < len(message["content"]) * 0.6

    def test_a_clipped_deterministic_summary_is_rewritten_smaller_not_cut(self) -> None:
        from palimpsest.compaction.compressor import ContextCompressor
        from palimpsest.compaction.markers import END_MARKER
        from palimpsest.messages import content_text, load_transcript

        here = Path(__file__).parent / "data" / "transcripts" / "swe-agent"
        messages = load_transcript(here / "ctf_web_i_got_id_demo.traj")
        compressor = ContextCompressor(4_000, quiet_mode=True)
        result = compressor.compress(messages, force=True)
        (summary,) = [m for m in result if m.get("_compressed_summary")]
        before_marker = content_text(summary["content"]).partition(END_MARKER)[0]
        assert "clipped by palimpsest" not in before_marker
        assert "## Critical Context" in before_marker
        assert compressor.last_stats.fits
        assert compressor.last_stats.summary_budget < 2_000


def test_a_summary_that_must_shrink_gives_up_the_long_note_first() -> None:
    body = "## Relevant Files\n- changed: /repo/pkg/a.py\n\n" + END_MARKER
    summary = {"role": "user", "content": SUMMARY_PREFIX + "\n" + body, SUMMARY_FLAG: True}
    messages = [sys_("You are terse."), summary, user("next?")]
    target = estimate_messages_tokens_rough(messages) - 60
    result = fit_to_window(messages, target, estimate_messages_tokens_rough)
    text = content_text(result.messages[1]["content"])
    assert text == SHORT_SUMMARY_PREFIX + "\n" + body  # nothing of the summary itself cut
    assert result.fits


def test_the_newest_user_message_stays_when_it_reads_as_an_observation() -> None:
    """A LangGraph run that passes a text-action agent's observation back as the user turn:
    on its own the newest user message reads as an observation, not a request, and the
    shrink step dropped it, leaving the model the summary and the last tool result only."""
    envelope = "\n(Open file: /testbed/src/app.py)\n(Current directory: /testbed)\nbash-$"
    newest = "curl: (7) Failed to connect to web.chal.example port 8000" + envelope
    msgs = [
        sys_(),
        summary() | {"role": "assistant"},
        user("older output " + "o" * 3_000 + envelope),
        asst("reading it " + "r" * 3_000),
        user(newest),
        asst("let me look again", [call("c")]),
        tool("c", "t" * 3_000),
    ]
    result = fit_to_window(msgs, 500, count)  # the tool result must be clipped as well
    validate_transcript(result.messages, strict=True)
    users = [m for m in result.messages if m["role"] == "user" and not m.get(SUMMARY_FLAG)]
    assert users and content_text(users[-1]["content"]) == newest
    assert result.dropped_messages == 2  # the older observation and the reply to it
    assert result.messages[-1]["tool_call_id"] == "c"  # what the model answers next
    assert result.fits and result.clipped_messages >= 1


class TestSummaryByLines:
    """The reader fixtures of the continuity eval (465–937-token windows): clipping the
    summary's middle removed its changed file and last failure, and the list still did not
    fit. The summary now loses whole lines, its facts last and only when that fits."""

    BODY = "\n".join(
        [
            "## Completed Actions",
            "1. READ src/app.py — 120 lines [tool: shell]",
            "2. RUN `pytest -q` — exit 1; 3 passed, 1 failed [tool: shell]",
            "3. EDIT src/app.py — ok [tool: apply_patch]",
            "",
            "## Active State",
            "- Last failure: RUN `pytest -q` — FAILED tests/test_app.py::test_total; not fixed",
            "",
            "## Key Decisions",
            "None.",
            "",
            "## Relevant Files",
            "- changed: src/app.py",
            "",
            "## Critical Context",
            "- Identifiers worked with: `cart_total`, `coupon`",
            "",
            END_MARKER,
        ]
    )

    def messages(self, system: str = "You are terse.") -> list[dict[str, Any]]:
        text = SHORT_SUMMARY_PREFIX + "\n" + self.BODY
        return [sys_(system), {"role": "user", "content": text, SUMMARY_FLAG: True}, asst("ok")]

    def summary_of(self, result: Any) -> str:
        return content_text(result.messages[1]["content"])

    def test_progress_lines_go_first_and_the_facts_stay(self) -> None:
        messages = self.messages()
        target = count(messages) - 25
        result = fit_to_window(messages, target, count)
        text = self.summary_of(result)
        assert result.fits and result.summary_shrunk
        assert "1. READ src/app.py" not in text and "None." not in text
        assert "- changed: src/app.py" in text and "FAILED tests/test_app.py::test_total" in text
        assert "`cart_total`" in text and MARKER_START not in text
        assert text.endswith(END_MARKER)

    def test_a_shrink_that_cannot_fit_keeps_every_fact(self) -> None:
        messages = self.messages(system="policy " * 400)  # the system prompt alone is over
        result = fit_to_window(messages, 300, count)
        text = self.summary_of(result)
        assert not result.fits
        assert "Completed Actions" not in text  # what says least went anyway
        for fact in ("- changed: src/app.py", "test_total", "`cart_total`", "## Relevant Files"):
            assert fact in text
        assert MARKER_START not in text

    def test_headings_then_names_go_before_the_changed_file_and_the_failure(self) -> None:
        messages = self.messages()
        result = fit_to_window(messages, count(messages) - 72, count)
        text = self.summary_of(result)
        assert result.fits and "- changed: src/app.py" in text and "test_total" in text
        assert "## " not in text and "`cart_total`" not in text
