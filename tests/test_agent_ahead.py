"""Speculative compaction inside the agent (``Agent(speculative=True)``): the flush and the
summary run in the background from the mark on, and the threshold crossing swaps the
candidate in without a model call or a summary in the way."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from agent_helpers import ROTATION, compressor, history, make_agent, memory_manager
from palimpsest import ScriptedChatModel
from palimpsest.agent.events import CompactionEvent, TurnEnd
from palimpsest.agent.flush import FLUSH_MESSAGE
from palimpsest.agent.speculative import SpeculativeCompactor
from palimpsest.messages import validate_transcript
from palimpsest.providers.base import Completion
from palimpsest.summarizers import ExtractiveSummarizer, SummaryRequest
from palimpsest.summarizers.deadline import summary_thread_name

SUMMARY_SECONDS = 1.0
WINDOW = 16_000  # threshold 8,000 at 50%: the mark is at 5,600


class SlowSummarizer(ExtractiveSummarizer):
    """The deterministic summary, written slowly, recording the threads it ran on."""

    def __init__(self) -> None:
        self.threads: list[str] = []

    def summarize(self, request: SummaryRequest) -> str:
        self.threads.append(threading.current_thread().name)
        time.sleep(SUMMARY_SECONDS)
        return super().summarize(request)


class Model:
    """Answers turns with a long reply; answers a flush with one memory note (any thread)."""

    def __init__(self) -> None:
        self.flush_threads: list[str] = []
        self.log: list[str] = []

    def __call__(self, messages: list[dict[str, Any]]) -> Completion:
        if str(messages[-1].get("content", "")).startswith(FLUSH_MESSAGE[:30]):
            self.flush_threads.append(threading.current_thread().name)
            self.log.append("flush")
            args = '{"action": "add", "target": "memory", "content": "prefers uv"}'
            call = {
                "id": "m1",
                "type": "function",
                "function": {"name": "memory", "arguments": args},
            }
            return Completion(content=None, tool_calls=[call], finish_reason="tool_calls")
        return Completion(content="Noted. " + "details of the answer " * 40, finish_reason="stop")


def _agent(tmp_path: Path, model: Model, summarizer: SlowSummarizer) -> Any:
    engine = compressor(WINDOW, protect_last_n=4, summarizer=summarizer)
    return make_agent(
        tmp_path,
        model=ScriptedChatModel(default=model),
        messages=history(4, chars=600),
        compressor=engine,
        context_length=WINDOW,
        memory=memory_manager(tmp_path / "home"),
        speculative=True,
        settings=ROTATION,  # the swap is seen as the continuation it starts
    )


def _wait_ready(spec: SpeculativeCompactor, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while spec.state == "running" and time.monotonic() < deadline:
        time.sleep(0.02)


def test_the_threshold_crossing_swaps_in_the_prepared_compaction(tmp_path: Path) -> None:
    model, summarizer = Model(), SlowSummarizer()
    agent = _agent(tmp_path, model, summarizer)
    spec = agent.speculative
    assert isinstance(spec, SpeculativeCompactor)
    first = agent.session_id
    swapped: list[CompactionEvent] = []
    for turn in range(60):
        events = list(agent.run(f"Question {turn}: " + "please explain the parser " * 20))
        assert isinstance(events[-1], TurnEnd) and events[-1].completed
        swapped += [e for e in events if isinstance(e, CompactionEvent) and e.compacted]
        if swapped:
            break
        _wait_ready(spec)  # the user takes a moment to type: the candidate gets ready
    assert swapped, "the conversation never reached the threshold"
    event = swapped[0]
    assert event.path == "preflight"  # answers without tool calls: the next turn's check
    # No summary stood between the crossing and the next request: one written there takes
    # SUMMARY_SECONDS (it sleeps), a prepared swap a few ms. The bound sits well between
    # the two, not at 50 ms, which a busy 2-core machine running two test workers crossed
    # (75 ms seen).
    assert event.seconds < SUMMARY_SECONDS / 4, event.seconds
    assert all(name.startswith("palimpsest-speculative") for name in summarizer.threads), (
        summarizer.threads
    )
    assert model.flush_threads and all(
        name.startswith("palimpsest-speculative") for name in model.flush_threads
    )
    # The flush ran before the transcript changed, and its memory is in the new prompt.
    assert "prefers uv" in (tmp_path / "home" / "memories" / "MEMORY.md").read_text()
    assert "prefers uv" in agent.system_prompt
    # The usual steps around a compaction happened: continuation, valid stored history.
    assert agent.session_id != first
    assert agent.store.get_session(agent.session_id)["parent_session_id"] == first
    validate_transcript(agent.messages)
    assert agent.store.get_messages(agent.session_id) == agent.messages
    agent.close()


def test_without_a_ready_candidate_the_compaction_runs_synchronously(tmp_path: Path) -> None:
    model, summarizer = Model(), SlowSummarizer()
    agent = _agent(tmp_path, model, summarizer)
    done: list[CompactionEvent] = []
    for turn in range(60):  # no pause between turns: the candidate is never ready in time
        events = list(agent.run(f"Question {turn}: " + "please explain the parser " * 20))
        done += [e for e in events if isinstance(e, CompactionEvent) and e.compacted]
        if done:
            break
    assert done
    assert done[0].seconds >= SUMMARY_SECONDS  # the summary was written in the turn
    assert summary_thread_name("MainThread") in summarizer.threads
    assert "flush" in model.log
    validate_transcript(agent.messages)
    agent.close()


def test_manual_compress_drops_the_candidate(tmp_path: Path) -> None:
    model, summarizer = Model(), SlowSummarizer()
    agent = _agent(tmp_path, model, summarizer)
    spec = agent.speculative
    assert spec is not None
    for turn in range(60):
        list(agent.run(f"Question {turn}: " + "please explain the parser " * 20))
        if spec.state != "idle":
            break
    assert spec.state != "idle"
    event = agent.compress("parser")
    assert event.compacted and event.path == "manual"
    assert spec.state == "idle"
    agent.close()
