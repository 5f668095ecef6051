"""Speculative compaction: prepared in the background, swapped in at the threshold only when
the span is unchanged, the compressor has not moved on, and the result still fits.

Everything is real (compressor, extractive and LLM summarizers, threads); the only double
is at the model boundary: a ``ScriptedChatModel`` for the LLM summarizer. The slow summary
is a gate the test opens, so "while it runs" is a fact, not a race with a sleep.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

import pytest

from compaction_helpers import asst, call, sys_, tool, user
from palimpsest import ContextCompressor, ScriptedChatModel, validate_transcript
from palimpsest.agent.speculative import SPECULATIVE_MARK, SpeculativeCompactor
from palimpsest.compaction.summary import HANDOFF_SECTIONS
from palimpsest.compaction.trigger import AWAITING_REAL_USAGE
from palimpsest.errors import SummaryError
from palimpsest.summarizers import ExtractiveSummarizer, LLMSummarizer, SummaryRequest
from palimpsest.summarizers.deadline import summary_thread_name

Message = dict[str, Any]

PAD = "".join(f"    line {i}: value = compute(item_{i})\n" for i in range(24))
THREAD = "palimpsest-speculative-compaction"
SUMMARY_THREAD = summary_thread_name(THREAD)
"""Where the summary of a background compaction runs (under its wall-clock limit)."""
SECRET = "sk-proj-Zq8wX3vN5tR7yU1iO4pA6sD9fG2hJ0kL"
# Window 8,000 at 50%: threshold 4,000 tokens, so the mark is at 2,800.
PROMPT = 3_000


class GatedSummarizer(ExtractiveSummarizer):
    """The deterministic summary, written only once the test opens the gate."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.gate = threading.Event()
        self.error = error
        self.threads: list[str] = []
        self.active = self.peak = 0
        self._count = threading.Lock()

    def summarize(self, request: SummaryRequest) -> str:
        with self._count:
            self.threads.append(threading.current_thread().name)
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            if not self.gate.wait(10):
                raise TimeoutError("the test never opened the gate")
            if self.error is not None:
                raise self.error
            return super().summarize(request)
        finally:
            with self._count:
                self.active -= 1


def round_(i: int, *, error: bool = True) -> list[Message]:
    """One agent round: a request, a command, its output, a remark."""
    cid = f"call-{i}"
    output = f"Traceback (most recent call last):\nModuleNotFoundError: dep_{i}\n" if error else ""
    return [
        user(f"Step {i}: check that module_{i}.py imports cleanly."),
        asst(f"Checking module_{i}.py.", [call(cid, command=f"python -c 'import module_{i}'")]),
        tool(cid, output + PAD),
        asst(f"module_{i}.py checked."),
    ]


def conversation(rounds: int = 12, *, error: bool = True) -> list[Message]:
    out = [sys_(), user("Audit every module of the package.")]
    for i in range(rounds):
        out.extend(round_(i, error=error))
    return out


def compressor(summarizer: Any = None, **kw: Any) -> ContextCompressor:
    options: dict[str, Any] = {
        "threshold_percent": 0.5,
        "protect_first_n": 2,
        "protect_last_n": 4,
        "quiet_mode": True,
    }
    options.update(kw)
    return ContextCompressor(8_000, summarizer or ExtractiveSummarizer(), **options)


def settle(spec: SpeculativeCompactor, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while spec.state == "running":
        assert time.monotonic() < deadline, "the preparation never finished"
        time.sleep(0.002)
    return spec.state


def join_worker(timeout: float = 10.0) -> None:
    for thread in threading.enumerate():
        if thread.name == THREAD:
            thread.join(timeout)
            assert not thread.is_alive()


@pytest.fixture
def gated() -> GatedSummarizer:
    return GatedSummarizer()


@pytest.fixture
def ready(gated: GatedSummarizer) -> tuple[SpeculativeCompactor, list[Message]]:
    """A ready candidate for ``conversation()``; the compactor and the messages."""
    live = compressor(gated)
    spec = SpeculativeCompactor(live)
    messages = conversation()
    assert spec.observe(messages, PROMPT)
    gated.gate.set()
    assert settle(spec) == "ready"
    return spec, messages


class TestSwap:
    def test_a_ready_candidate_is_what_a_synchronous_compaction_gives_plus_the_new(
        self, ready: tuple[SpeculativeCompactor, list[Message]]
    ) -> None:
        spec, messages = ready
        prepared = json.loads(json.dumps(messages))
        messages.extend(round_(90))  # the conversation went on while it was prepared
        result = spec.take(messages)
        assert result is not None
        expected = compressor().compress(prepared)
        assert result == [*expected, *round_(90)]
        assert result[-4:] == messages[-4:] and result[-1] is messages[-1]
        validate_transcript(result, strict=True)
        assert spec.state == "idle"
        assert spec.take(messages) is None  # taken once

    def test_the_summary_was_written_off_the_callers_thread(
        self, ready: tuple[SpeculativeCompactor, list[Message]], gated: GatedSummarizer
    ) -> None:
        assert gated.threads == [SUMMARY_THREAD]

    def test_the_live_compressor_records_the_compaction_on_take(self, gated: Any) -> None:
        statuses: list[str] = []
        live = compressor(gated, status_callback=statuses.append)
        live.compression_count = 1  # a second compaction makes the compressor speak up
        spec = SpeculativeCompactor(live)
        messages = conversation()
        live.update_from_response({"prompt_tokens": PROMPT})
        before = dict(vars(live))
        assert spec.observe(messages, PROMPT)
        gated.gate.set()
        settle(spec)
        # Prepared, not taken: the live compressor is exactly as it was.
        assert vars(live) == before and live.last_stats is before["last_stats"]
        assert statuses == []
        messages.extend(round_(90))
        result = spec.take(messages)
        assert result is not None
        assert live.compression_count == 2
        summary = next(m for m in result if m.get("_compressed_summary"))
        assert live.previous_summary and live.previous_summary in summary["content"]
        assert live.last_prompt_tokens == AWAITING_REAL_USAGE and live.awaiting_real_usage
        stats = spec.last_stats()
        assert stats is live.last_stats and stats is not None and stats.compressed
        assert stats.after_messages == len(result)
        assert stats.before_messages == len(messages)
        # Measured by parts: within a token of a whole count by the chars/4 rule.
        assert abs(stats.after_tokens - live.token_counter.count_messages(result)) <= 1
        assert abs(stats.before_tokens - live.token_counter.count_messages(messages)) <= 1
        assert live.ineffective_compression_count == 0  # it saved far more than 10%
        assert statuses == [
            "Session compressed 2 times — accuracy may degrade. Consider /new to start fresh."
        ]

    def test_an_equal_copy_of_the_history_counts_as_unchanged(
        self, ready: tuple[SpeculativeCompactor, list[Message]]
    ) -> None:
        spec, messages = ready
        assert spec.take(json.loads(json.dumps(messages))) is not None

    def test_a_pending_tool_call_is_left_to_the_tail(self, gated: GatedSummarizer) -> None:
        """The last round's call was not answered when the mark was reached: its result
        must not meet a stub or a summarized call in the candidate."""
        spec = SpeculativeCompactor(compressor(gated))
        messages = conversation()
        pending = round_(90)
        messages.extend(pending[:2])  # the request and the call; the result comes later
        assert spec.observe(messages, PROMPT)
        gated.gate.set()
        assert settle(spec) == "ready"
        messages.extend(pending[2:])
        result = spec.take(messages)
        assert result is not None
        validate_transcript(result, strict=True)
        answers = [m for m in result if m.get("tool_call_id") == "call-90"]
        assert answers == [pending[2]]


class TestNoStaleReuse:
    def test_a_changed_span_gives_none(
        self, ready: tuple[SpeculativeCompactor, list[Message]]
    ) -> None:
        spec, messages = ready
        assert spec.take(messages[:-5]) is None  # shorter than what was prepared
        assert spec.state == "idle"

    def test_a_replaced_message_gives_none(
        self, ready: tuple[SpeculativeCompactor, list[Message]]
    ) -> None:
        spec, messages = ready
        edited = list(messages)
        edited[5] = {**edited[5], "content": "something else"}
        assert spec.take(edited) is None

    @pytest.mark.parametrize("where", ["content", "arguments"])
    def test_an_in_place_edit_of_an_old_message_gives_none(
        self, ready: tuple[SpeculativeCompactor, list[Message]], where: str
    ) -> None:
        spec, messages = ready
        if where == "content":
            messages[4]["content"] += " (edited)"
        else:
            messages[3]["tool_calls"][0]["function"]["arguments"] = '{"command": "rm -rf /"}'
        assert spec.take(messages) is None
        assert spec.state == "idle"

    @pytest.mark.parametrize(
        "move_on",
        [
            pytest.param(lambda c, m: c.compress(m, force=True), id="a manual compaction"),
            pytest.param(lambda c, m: c.on_session_reset(), id="a session reset"),
            pytest.param(lambda c, m: c.update_model("other", 16_000), id="a new model"),
        ],
    )
    def test_a_compressor_that_moved_on_gives_none(self, gated: Any, move_on: Any) -> None:
        """Same messages, but the live compressor compacted, was reset or changed window."""
        live = compressor(gated)
        spec = SpeculativeCompactor(live)
        messages = conversation()
        assert spec.observe(messages, PROMPT)
        gated.gate.set()
        settle(spec)
        move_on(live, messages)
        count = live.compression_count
        assert spec.take(messages) is None
        assert live.compression_count == count

    def test_the_compacted_list_does_not_match_the_old_candidate(
        self, ready: tuple[SpeculativeCompactor, list[Message]]
    ) -> None:
        spec, messages = ready
        compacted = compressor().compress(messages)
        assert spec.take(compacted) is None

    def test_too_much_added_since_gives_none(self, gated: GatedSummarizer) -> None:
        """The candidate plus what came since would be over the threshold (which the
        compressor never sets above the window minus the output reserve)."""
        live = compressor(gated)
        assert live.threshold_tokens <= live.fit_target_tokens
        spec = SpeculativeCompactor(live)
        messages = conversation()
        assert spec.observe(messages, PROMPT)
        gated.gate.set()
        settle(spec)
        for i in range(100, 112):
            messages.extend(round_(i))
        assert spec.take(messages) is None
        assert spec.state == "idle" and live.compression_count == 0

    def test_cancel_drops_the_candidate(
        self, ready: tuple[SpeculativeCompactor, list[Message]]
    ) -> None:
        spec, messages = ready
        spec.cancel()
        assert spec.state == "idle" and spec.take(messages) is None


class TestFailure:
    def test_a_failing_summary_is_a_failed_state_never_an_exception(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        summarizer = GatedSummarizer(RuntimeError(f"summary model down, key {SECRET}"))
        live = compressor(summarizer, quiet_mode=False)
        spec = SpeculativeCompactor(live)
        messages = conversation()
        with caplog.at_level(logging.WARNING, logger="palimpsest"):
            assert spec.observe(messages, PROMPT)
            summarizer.gate.set()
            assert settle(spec) == "failed"
            join_worker()
        assert isinstance(spec.error, SummaryError) and spec.error.cause_kind == "fallback"
        assert spec.take(messages) is None
        # The worker's cooldown and fallback streak stay on the worker.
        assert live.summary_failure_cooldown_until == 0 and live.fallback_streak == 0
        assert live.compression_count == 0
        assert any("Speculative compaction failed" in r.getMessage() for r in caplog.records)
        assert all(SECRET not in r.getMessage() for r in caplog.records)
        # Not retried for the same history; the caller compacts synchronously instead.
        assert not spec.observe(messages, PROMPT)
        assert spec.state == "failed"

    def test_a_failing_prepare_hook_is_kept_as_the_error(self) -> None:
        boom = OSError("memory flush failed")

        def prepare(messages: list[Message]) -> str:
            raise boom

        spec = SpeculativeCompactor(compressor(), prepare=prepare)
        messages = conversation()
        assert spec.observe(messages, PROMPT)
        assert settle(spec) == "failed"
        assert spec.error is boom
        assert spec.take(messages) is None

    def test_nothing_to_compact_is_a_failure(self) -> None:
        spec = SpeculativeCompactor(compressor())
        messages = conversation(1)
        assert spec.observe(messages, PROMPT)
        assert settle(spec) == "failed"
        assert isinstance(spec.error, SummaryError) and spec.error.cause_kind == "no_op"


class TestNeverBlocks:
    def test_take_returns_at_once_while_the_summary_is_written(
        self, gated: GatedSummarizer
    ) -> None:
        spec = SpeculativeCompactor(compressor(gated))
        messages = conversation()
        assert spec.observe(messages, PROMPT)
        started = time.perf_counter()
        assert spec.take(messages) is None
        assert (
            time.perf_counter() - started < 1.0
        )  # at once: a blocking take would wait for the gate (never set here)
        assert spec.state == "running"
        gated.gate.set()
        assert spec.take(messages, wait=10) is not None  # a caller may choose to wait

    def test_a_ready_swap_is_quick(self, ready: tuple[SpeculativeCompactor, list[Message]]) -> None:
        spec, messages = ready
        messages.extend(round_(90))
        started = time.perf_counter()
        assert spec.take(messages) is not None
        assert time.perf_counter() - started < 0.5

    def test_one_background_thread_at_most(self, gated: GatedSummarizer) -> None:
        spec = SpeculativeCompactor(compressor(gated))
        messages = conversation()
        assert spec.observe(messages, PROMPT)
        assert not spec.observe(messages, PROMPT)  # already running for this history
        spec.cancel()
        messages.extend(round_(90))
        assert not spec.observe(messages, PROMPT)  # the dropped one is still finishing
        assert spec.state == "idle"
        gated.gate.set()
        join_worker()
        assert spec.state == "idle"  # its outcome was dropped
        assert spec.observe(messages, PROMPT)
        assert settle(spec) == "ready"
        assert (
            gated.threads == [SUMMARY_THREAD, SUMMARY_THREAD] and gated.peak == 1
        )  # never two at once


class TestObserve:
    def test_it_starts_between_the_mark_and_the_threshold_only(self) -> None:
        live = compressor()
        spec = SpeculativeCompactor(live)
        messages = conversation()
        mark = int(SPECULATIVE_MARK * live.threshold_tokens)
        assert not spec.observe(messages, mark - 1)
        assert not spec.observe(messages, live.threshold_tokens)  # compact now, not later
        assert not spec.observe(messages, AWAITING_REAL_USAGE)  # unknown is not zero
        assert spec.state == "idle"
        assert spec.observe(messages, mark)
        assert settle(spec) == "ready"

    def test_a_custom_mark(self) -> None:
        live = compressor()
        spec = SpeculativeCompactor(live, mark=0.9)
        assert not spec.observe(conversation(), int(0.85 * live.threshold_tokens))
        assert spec.observe(conversation(), int(0.9 * live.threshold_tokens))
        assert settle(spec) == "ready"

    def test_a_stale_ready_candidate_is_replaced(
        self, ready: tuple[SpeculativeCompactor, list[Message]], gated: GatedSummarizer
    ) -> None:
        spec, messages = ready
        assert not spec.observe(messages, PROMPT)  # still good for this history
        other = conversation(11)
        other[4] = {**other[4], "content": "a different request"}
        assert spec.observe(other, PROMPT)
        assert settle(spec) == "ready"
        assert spec.take(messages) is None and spec.state == "idle"

    def test_no_start_while_the_summary_model_cools_down(self) -> None:
        live = compressor(clock=lambda: 100.0)
        live.summary_failure_cooldown_until = 160.0
        spec = SpeculativeCompactor(live)
        assert not spec.observe(conversation(), PROMPT)

    def test_the_prepare_hook_runs_in_the_background_on_the_span(self) -> None:
        seen: list[tuple[str, list[Message]]] = []

        def prepare(messages: list[Message]) -> str:
            seen.append((threading.current_thread().name, messages))
            return ""

        spec = SpeculativeCompactor(compressor(), prepare=prepare)
        messages = conversation()
        assert spec.observe(messages, PROMPT)
        settle(spec)
        assert [name for name, _ in seen] == [THREAD]
        assert seen[0][1] == messages and seen[0][1] is not messages

    def test_closed_it_does_nothing(self) -> None:
        spec = SpeculativeCompactor(compressor())
        spec.close()
        assert not spec.observe(conversation(), PROMPT)
        assert spec.take(conversation()) is None and spec.state == "idle"

    @pytest.mark.parametrize("mark", [0, 1, 1.5, -0.2, True, "0.7"])
    def test_a_bad_mark_is_refused(self, mark: Any) -> None:
        with pytest.raises(ValueError, match="mark"):
            SpeculativeCompactor(compressor(), mark=mark)

    def test_bad_arguments_are_refused(self) -> None:
        with pytest.raises(TypeError, match="ContextCompressor"):
            SpeculativeCompactor(object())  # type: ignore[arg-type]
        spec = SpeculativeCompactor(compressor())
        with pytest.raises(TypeError, match="prompt_tokens"):
            spec.observe(conversation(), "3000")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="wait"):
            spec.take(conversation(), wait=-1)


def test_an_llm_summary_written_in_the_background_is_swapped_in() -> None:
    """The real LLM summarizer, verified, behind a scripted model that takes 0.3 s."""
    request = "Step 11: check that module_11.py imports cleanly."
    body = {
        "## Active Task": f"User asked: '{request}' The agent checks each module in turn.",
        "## Completed Actions": "\n".join(
            f"{i + 1}. RUN python -c 'import module_{i}': imports cleanly" for i in range(11)
        ),
    }
    text = "\n\n".join(
        f"{heading}\n{body.get(heading, 'The audit of the package goes on, module by module.')}"
        for heading, _ in HANDOFF_SECTIONS
    )
    calls: list[str] = []

    def slow_model(messages: list[Message]) -> str:
        calls.append(threading.current_thread().name)
        assert "NOTE-42" in json.dumps(messages)  # the prepare hook's text reached it
        time.sleep(0.3)
        return text

    live = compressor(LLMSummarizer(ScriptedChatModel(default=slow_model)))
    spec = SpeculativeCompactor(live, prepare=lambda messages: "NOTE-42: audit started")
    messages = conversation(error=False)
    assert spec.observe(messages, PROMPT)
    assert spec.take(messages) is None  # at once, while the model writes
    assert settle(spec) == "ready"
    result = spec.take(messages)
    assert result is not None and calls == [SUMMARY_THREAD]
    validate_transcript(result, strict=True)
    summary = next(m for m in result if m.get("_compressed_summary"))
    assert "The audit of the package goes on" in summary["content"]
    assert live.last_summary_check == "accepted" and live.compression_count == 1
