"""``call_with_deadline``: a hung summary call is abandoned on time and cannot come back."""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from palimpsest import ContextCompressor, ScriptedChatModel
from palimpsest.errors import SummaryError
from palimpsest.providers.openai_chat import OpenAIChatModel
from palimpsest.summarizers.base import SummaryRequest
from palimpsest.summarizers.deadline import call_with_deadline, current_deadline
from palimpsest.summarizers.llm import MIN_CALL_TIMEOUT, LLMSummarizer
from providers_fixtures import ReplayServer, running_server


def request() -> SummaryRequest:
    turns = [{"role": "user", "content": "fix the parser"}, {"role": "assistant", "content": "ok"}]
    return SummaryRequest(turns, None, None, 200, "Summarize: fix the parser")


def test_a_call_that_finishes_returns_its_value_and_its_error():
    assert call_with_deadline(lambda: 42, 5.0) == 42
    with pytest.raises(KeyError):
        call_with_deadline(lambda: {}["missing"], 5.0)
    assert call_with_deadline(lambda: current_deadline(), None) is None  # no limit: inline


def test_a_call_that_hangs_is_abandoned_at_the_deadline():
    release = threading.Event()
    seen: list[object] = []

    def hang() -> str:
        deadline = current_deadline()
        seen.append(deadline)
        release.wait(10)
        return "late"

    started = time.monotonic()
    with pytest.raises(SummaryError) as raised:
        call_with_deadline(hang, 0.3)
    elapsed = time.monotonic() - started
    release.set()
    assert 0.25 <= elapsed < 2.0
    assert raised.value.cause_kind == "timeout"
    assert "did not finish within 0.3 s" in str(raised.value)
    deadline = seen[0]
    assert deadline is not None and deadline.abandoned.is_set()  # type: ignore[attr-defined]
    assert current_deadline() is None  # the caller's context never had one


def test_a_bad_timeout_is_refused():
    with pytest.raises(ValueError, match="positive"):
        call_with_deadline(lambda: 1, 0)


def test_the_llm_summarizer_passes_the_time_left_and_drops_a_late_reply():
    release = threading.Event()

    def blocked(messages: list[dict[str, object]]) -> str:
        release.wait(10)
        return "## Active Task\nlate summary"

    model = ScriptedChatModel([blocked, "## Active Task\nsecond call"])
    summarizer = LLMSummarizer(model, timeout=120)
    with pytest.raises(SummaryError):
        call_with_deadline(lambda: summarizer.summarize(request()), 0.3)
    summarizer.record_abandoned("abandoned")
    assert summarizer.cooldown_remaining() > 0 and summarizer.last_failure_kind == "timeout"
    release.set()
    for _ in range(100):  # the abandoned thread ends on its own
        if not any(t.name.endswith("/summary") for t in threading.enumerate()):
            break
        time.sleep(0.02)
    # the per-call timeout is the time left (floored at 1 s), not the summarizer's own 120 s
    assert model.calls[0][3]["timeout"] == MIN_CALL_TIMEOUT
    # the late reply made no second call and recorded no success over the timeout
    assert len(model.calls) == 1
    assert summarizer.last_failure_kind == "timeout" and summarizer.cooldown_remaining() > 0


TRACE: contextvars.ContextVar[str] = contextvars.ContextVar("trace", default="none")


def test_the_call_sees_the_callers_context_variables():
    token = TRACE.set("turn-7")
    try:
        assert call_with_deadline(TRACE.get, 5.0) == "turn-7"
    finally:
        TRACE.reset(token)


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    yield from running_server()


def test_an_sdk_model_drops_the_abandoned_connection_itself(replay: ReplayServer):
    """The real ``openai`` SDK against a server on 127.0.0.1 that answers after 8 s: the
    compressor gives up at 1 s, and the SDK, told the time left as its ``timeout``, closes
    the connection soon after instead of waiting out the server."""
    replay.slow(8.0)
    model = OpenAIChatModel(
        "gpt-test", base_url=f"{replay.url}/v1", api_key="sk-test", max_retries=0
    )
    compressor = ContextCompressor(
        4_000, LLMSummarizer(model), quiet_mode=True, summary_timeout=1.0
    )
    talk: list[dict[str, Any]] = []
    for i in range(20):
        talk += [
            {"role": "user", "content": f"Step {i}: port billing module {i}. " * 20},
            {"role": "assistant", "content": f"Module {i} ported, tests pass. " * 20},
        ]
    started = time.monotonic()
    compressor.compress(talk, force=True)
    returned = time.monotonic() - started
    assert compressor.last_summary_fallback_used and returned < 3.0
    assert "did not finish within 1 s" in str(compressor.last_summary_error)
    while any(t.name.endswith("/summary") for t in threading.enumerate()):
        time.sleep(0.05)
        assert time.monotonic() - started < 5.0, "the SDK kept waiting for the server"
    assert len(replay.requests) == 1  # no retry after the caller gave up
    assert replay.requests[0].path.endswith("/chat/completions")
