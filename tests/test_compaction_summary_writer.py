"""How the compressor obtains a summary body (compaction/summary_writer.py).

Verification itself is tested in test_compaction_verify.py; these tests pin the outcomes a
summarizer can produce (raise, return nothing, return text) and the request it is given.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from compaction_helpers import StubSummarizer, asst, sys_, user
from palimpsest.compaction import summary_writer
from palimpsest.compaction.compressor import ContextCompressor
from palimpsest.compaction.markers import is_compaction_summary_message
from palimpsest.compaction.summary import MIN_SUMMARY_TOKENS
from palimpsest.config import Settings
from palimpsest.messages import content_text, validate_transcript
from palimpsest.safety.redact import redact
from palimpsest.summarizers.base import RedactedText
from palimpsest.summarizers.deadline import DEFAULT_SUMMARY_TIMEOUT


def conversation(turns: int = 40) -> list[dict[str, Any]]:
    messages = [sys_(), user("Port the billing service to async IO, keep the public API.")]
    for i in range(turns):
        messages += [asst(f"step {i}: " + "reasoning " * 150), user(f"continue with part {i}")]
    return messages


def summary_text(result: list[dict[str, Any]]) -> str:
    return content_text(next(m for m in result if is_compaction_summary_message(m))["content"])


class TestOutcomes:
    def test_a_raising_summarizer_falls_back_and_says_why(self) -> None:
        compressor = ContextCompressor(
            4_000, StubSummarizer(error=RuntimeError("model down")), quiet_mode=True
        )
        result = compressor.compress(conversation(), force=True)
        validate_transcript(result)
        assert compressor.last_summary_error == "RuntimeError: model down"
        assert compressor.last_stats.fallback_used
        # a summarizer without its own cooldown gets the compressor's
        assert compressor.cooldown_remaining() > 0
        # the deterministic fallback still names the goal
        assert "billing service" in summary_text(result)

    def test_an_empty_reply_is_a_failure_not_a_summary(self) -> None:
        compressor = ContextCompressor(4_000, StubSummarizer(body="   "), quiet_mode=True)
        compressor.compress(conversation(), force=True)
        assert compressor.last_summary_error == "the summarizer returned an empty summary"
        assert compressor.last_stats.fallback_used

    def test_a_body_is_redacted_and_becomes_the_previous_summary(self) -> None:
        body = "## Active Task\nDeploy with password=hunter2abc now"
        compressor = ContextCompressor(4_000, StubSummarizer(body=body), quiet_mode=True)
        result = compressor.compress(conversation(), force=True)
        assert "hunter2abc" not in summary_text(result)
        assert compressor.previous_summary is not None
        assert "hunter2abc" not in compressor.previous_summary

    def test_a_reply_marked_redacted_is_not_redacted_a_second_time(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        body = redact("## Active Task\nDeploy with password=hunter2abc now")
        assert "hunter2abc" not in body
        seen: list[str] = []

        def counting(text: str, *args: Any) -> str:
            seen.append(text)
            return redact(text, *args)

        monkeypatch.setattr(summary_writer, "redact", counting)
        stub = StubSummarizer(body=RedactedText(body))
        result = ContextCompressor(4_000, stub, quiet_mode=True).compress(
            conversation(), force=True
        )
        assert body in summary_text(result)
        assert body not in seen  # the request's goal is redacted, the reply is not
        plain = StubSummarizer(body=body)
        ContextCompressor(4_000, plain, quiet_mode=True).compress(conversation(), force=True)
        assert body in seen  # an unmarked reply is redacted as before

    def test_a_marked_reply_that_cleaning_changes_is_redacted_again(self) -> None:
        # the mark stands for the text as the summarizer returned it, not for what
        # the compressor makes of it
        raw = "<think>password=hunter2abc</think>## Active Task\nDeploy with password=hunter2abc"
        stub = StubSummarizer(body=RedactedText(raw))
        result = ContextCompressor(4_000, stub, quiet_mode=True).compress(
            conversation(), force=True
        )
        assert "hunter2abc" not in summary_text(result)


class TestRequest:
    def test_the_goal_comes_from_the_head_and_the_budget_has_its_floor(self) -> None:
        stub = StubSummarizer()
        ContextCompressor(4_000, stub, quiet_mode=True).compress(conversation(), force=True)
        (request,) = stub.requests
        assert request.goal is not None and request.goal.startswith("Port the billing service")
        assert request.budget_tokens >= MIN_SUMMARY_TOKENS
        assert request.readings is not None and len(request.readings) == len(request.turns)


class HangingSummarizer:
    """A summarizer whose call blocks until released (a model that hangs)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0

    def summarize(self, request: Any) -> str:
        self.calls += 1
        self.release.wait(10)
        return "## Active Task\nlate"


class TestTimeout:
    def test_a_summary_call_that_hangs_is_abandoned_and_the_deterministic_one_used(self) -> None:
        hanging = HangingSummarizer()
        compressor = ContextCompressor(4_000, hanging, quiet_mode=True, summary_timeout=0.4)
        started = time.monotonic()
        result = compressor.compress(conversation(), force=True)
        elapsed = time.monotonic() - started
        hanging.release.set()
        validate_transcript(result)
        assert elapsed < 3.0
        assert compressor.last_stats.fallback_used
        assert compressor.last_summary_error is not None
        assert "did not finish within 0.4 s" in compressor.last_summary_error
        # the deterministic fallback, not the static marker: it names the goal
        assert "billing service" in summary_text(result)
        assert "late" not in summary_text(result)

    def test_the_timeout_comes_from_the_config_and_can_be_turned_off(self) -> None:
        settings = Settings()
        assert ContextCompressor.from_settings(settings, context_length=8_000).summary_timeout == (
            DEFAULT_SUMMARY_TIMEOUT
        )
        assert settings.compression.summary_timeout_seconds == DEFAULT_SUMMARY_TIMEOUT
        off = Settings.model_validate({"compression": {"summary_timeout_seconds": None}})
        assert ContextCompressor.from_settings(off, context_length=8_000).summary_timeout is None
        with pytest.raises(ValueError, match="positive"):
            ContextCompressor(4_000, summary_timeout=0)
