"""Fail-closed memory checkpoints (agent/checkpoint_gate.py), through the real agent loop.

Only the model is scripted; the store, the memory files and the compressor are real.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agent_helpers import RecordingProvider, call, calls, compressor, history, make_agent, stored
from agent_helpers import memory_manager as make_memory
from palimpsest import ScriptedChatModel
from palimpsest.agent.checkpoint_gate import (
    BLOCKED_CODE,
    RETRY_NEXT_TURN,
    blocked_message,
    checkpoint_failure,
    required_checkpoint,
)
from palimpsest.agent.events import CompactionEvent, TurnEnd, WarningEvent
from palimpsest.agent.flush import FlushResult
from palimpsest.cli.render import compaction_line
from palimpsest.config import Settings
from palimpsest.errors import ContextOverflowError
from palimpsest.memory.checkpoint import CHECKPOINT_API_VERSION

REQUIRED = {"memory": {"checkpoint_required": True, "flush_min_turns": 0}}
BEST_EFFORT = {"memory": {"flush_min_turns": 0}}


def settings(data: Mapping[str, Any]) -> Settings:
    return Settings.model_validate(dict(data))


class FailingProvider(RecordingProvider):
    """An external provider that keeps the checkpoint contract and fails its checkpoint."""

    name = "failing"
    checkpoint_api_version = CHECKPOINT_API_VERSION

    def on_pre_compress(self, messages: Sequence[Mapping[str, Any]]) -> str:
        raise OSError("the vector store is unreachable")


def agent_for(tmp_path: Path, replies: Sequence[Any], config: Mapping[str, Any], **kwargs: Any):
    kwargs.setdefault("memory", make_memory(tmp_path / "home"))
    return make_agent(
        tmp_path,
        model=ScriptedChatModel(list(replies)),
        messages=history(14, chars=1_200),
        compressor=compressor(8_000),
        settings=settings(config),
        context_length=None,
        **kwargs,
    )


def events_of(agent: Any, text: str) -> list[Any]:
    return list(agent.run(text))


# --- the decision -------------------------------------------------------------------


def test_what_counts_as_a_failed_checkpoint():
    assert checkpoint_failure(FlushResult(), None) is None
    assert checkpoint_failure(FlushResult(skipped="fewer than 6 user turns"), None) is None
    error = checkpoint_failure(FlushResult(ran=True, error="ProviderError: 503"), None)
    assert error == "the memory flush failed (ProviderError: 503)"
    unfit = checkpoint_failure(FlushResult(skipped="does not fit", unfit=True), None)
    assert unfit is not None and "could not be sent" in unfit
    refused = FlushResult(ran=True, results=['{"success": false, "error": "memory is full"}'])
    assert checkpoint_failure(refused, None) == (
        "a memory write of the flush was refused: memory is full"
    )
    done = FlushResult(ran=True, results=['{"success": true}'])
    assert checkpoint_failure(done, None) is None


def test_the_required_checkpoint_gives_the_same_context_as_best_effort(tmp_path: Path):
    memory = make_memory(tmp_path)
    context, failure = required_checkpoint(memory, [], FlushResult(), "the ledger note")
    assert (context, failure) == ("the ledger note", None)
    memory.add_provider(FailingProvider())
    context, failure = required_checkpoint(memory, [], FlushResult(), "note")
    assert context == "note"
    assert failure is not None and "'failing' failed its checkpoint: OSError" in failure
    assert required_checkpoint(None, [], FlushResult(), "n") == ("n", None)


# --- through the loop ---------------------------------------------------------------


def test_a_failing_flush_blocks_the_compaction_when_the_checkpoint_is_required(tmp_path: Path):
    agent = agent_for(tmp_path, [RuntimeError("provider down"), "done"], REQUIRED)
    sid, before = agent.session_id, list(agent.messages)
    events = events_of(agent, "continue the work")
    warnings = {e.code: e.message for e in events if isinstance(e, WarningEvent)}
    assert BLOCKED_CODE in warnings
    assert "Compaction not performed" in warnings[BLOCKED_CODE]
    assert "provider down" in warnings[BLOCKED_CODE]
    compaction = next(e for e in events if isinstance(e, CompactionEvent))
    assert not compaction.compacted and compaction.path == "preflight"
    assert compaction.reason is not None and "memory checkpoint failed" in compaction.reason
    # the CLI line says why
    assert "did not compact: " in compaction_line(compaction)
    assert "provider down" in compaction_line(compaction)
    # the conversation stayed as it was: same session, the old messages, the new turn
    assert agent.session_id == sid
    assert agent.messages[: len(before)] == before
    assert agent.messages[-1]["content"] == "done"
    assert agent.compressor.compression_count == 0
    assert stored(agent) == agent.messages
    assert isinstance(events[-1], TurnEnd) and events[-1].completed


def test_without_the_requirement_the_compaction_proceeds_as_before(tmp_path: Path):
    agent = agent_for(tmp_path, [RuntimeError("provider down"), "done"], BEST_EFFORT)
    sid = agent.session_id
    events = events_of(agent, "continue the work")
    codes = [e.code for e in events if isinstance(e, WarningEvent)]
    assert "memory_flush_failed" in codes and BLOCKED_CODE not in codes
    compaction = next(e for e in events if isinstance(e, CompactionEvent))
    assert compaction.compacted and agent.compressor.compression_count == 1
    # in place (the default) the session keeps its id; rotating, it moves on
    assert (agent.session_id == sid) == (compaction.mode == "in_place")


def test_a_refused_memory_write_blocks_the_compaction(tmp_path: Path):
    bad = calls(call("memory", {"action": "add", "target": "nowhere", "content": "x"}))
    agent = agent_for(tmp_path, [bad, "done"], REQUIRED)
    events = events_of(agent, "continue the work")
    compaction = next(e for e in events if isinstance(e, CompactionEvent))
    assert not compaction.compacted
    assert "a memory write of the flush was refused" in str(compaction.reason)
    good = calls(call("memory", {"action": "add", "target": "memory", "content": "kept"}))
    agent2 = agent_for(tmp_path / "b", [good, "done"], REQUIRED)
    events2 = events_of(agent2, "continue the work")
    assert next(e for e in events2 if isinstance(e, CompactionEvent)).compacted
    assert "kept" in agent2.system_prompt


def test_a_provider_that_fails_or_declares_no_version_blocks_it(tmp_path: Path):
    fine = calls()  # the flush saves nothing: not a failure
    failing = make_memory(tmp_path / "h1", FailingProvider())
    agent = agent_for(tmp_path / "a", [fine, "done"], REQUIRED, memory=failing)
    compaction = next(e for e in events_of(agent, "go on") if isinstance(e, CompactionEvent))
    assert not compaction.compacted and "unreachable" in str(compaction.reason)
    legacy = make_memory(tmp_path / "h2", RecordingProvider())
    agent2 = agent_for(tmp_path / "b", [fine, "done"], REQUIRED, memory=legacy)
    compaction2 = next(e for e in events_of(agent2, "go on") if isinstance(e, CompactionEvent))
    assert not compaction2.compacted
    assert "declares no checkpoint API version" in str(compaction2.reason)


def test_a_manual_compress_is_blocked_and_says_so(tmp_path: Path):
    down = RuntimeError("provider down")
    agent = agent_for(tmp_path, [down, down], REQUIRED)
    before = list(agent.messages)
    event = agent.compress()
    assert not event.compacted
    failed = "the memory flush failed (RuntimeError: provider down)"
    assert event.reason == f"memory checkpoint failed: {failed}"
    assert agent.messages == before
    result = agent.command("/compress")  # the command shows the warning
    assert result is not None
    warnings = {e.code: e.message for e in result.events if isinstance(e, WarningEvent)}
    assert warnings[BLOCKED_CODE] == blocked_message(failed)
    assert agent.messages == before
    assert agent.messages == before


def test_overflow_recovery_ends_the_turn_instead_of_looping(tmp_path: Path):
    overflow = ContextOverflowError("prompt is too long", limit=None)
    # preflight's flush fails, the request overflows, the reactive flush fails again
    replies = [RuntimeError("down"), overflow, RuntimeError("down"), "never sent"]
    agent = agent_for(tmp_path, replies, REQUIRED)
    events = events_of(agent, "continue the work")
    end = events[-1]
    assert isinstance(end, TurnEnd) and not end.completed
    assert end.error is not None and "memory checkpoint failed" in end.error
    paths = [e.path for e in events if isinstance(e, CompactionEvent)]
    assert paths == ["preflight", "reactive"]
    assert len(agent.model.calls) == 3  # type: ignore[attr-defined]
    assert agent.compressor.compression_count == 0


def test_a_background_candidate_whose_checkpoint_failed_is_never_swapped_in(tmp_path: Path):
    """Speculative compaction prepares the flush and the checkpoint off the turn; a failed
    required checkpoint leaves no candidate, and the compaction at the threshold runs in
    the turn, tries the checkpoint again, and is blocked there, visibly."""
    window = 16_000
    agent = make_agent(
        tmp_path,
        model=ScriptedChatModel(default="Noted. " + "details of the answer " * 40),
        messages=history(4, chars=600),
        compressor=compressor(window, protect_last_n=4),
        context_length=window,
        memory=make_memory(tmp_path / "home", FailingProvider()),
        settings=settings(REQUIRED),
        speculative=True,
    )
    spec = agent.speculative
    assert spec is not None
    seen: list[CompactionEvent] = []
    for turn in range(60):
        events = list(agent.run(f"Question {turn}: " + "please explain the parser " * 20))
        seen += [e for e in events if isinstance(e, CompactionEvent)]
        if seen:
            break
        for _ in range(500):  # the candidate gets every chance to be prepared
            if spec.state != "running":
                break
            time.sleep(0.01)
    assert seen, "the conversation never reached the threshold"
    assert not seen[0].compacted and "unreachable" in str(seen[0].reason)
    assert agent.compressor.compression_count == 0
    agent.close()


def test_the_tool_rounds_of_a_turn_do_not_retry_a_failed_checkpoint(tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("alpha\n")
    read = calls(call("read_file", {"path": "a.txt"}, "r1"))
    read2 = calls(call("read_file", {"path": "a.txt"}, "r2"))
    # preflight's flush fails; two tool rounds follow; then the answer
    replies = [RuntimeError("down"), read, read2, "done", RuntimeError("down again"), "next"]
    agent = agent_for(tmp_path, replies, REQUIRED, workdir=work)
    events = events_of(agent, "read a.txt twice")
    compactions = [e for e in events if isinstance(e, CompactionEvent)]
    assert [e.path for e in compactions] == ["preflight", "after_round", "after_round"]
    assert not any(e.compacted for e in compactions)
    assert compactions[1].reason == RETRY_NEXT_TURN
    assert len(agent.model.calls) == 4  # type: ignore[attr-defined]  # one flush, not three
    assert isinstance(events[-1], TurnEnd) and events[-1].text == "done"
    # the next turn tries the checkpoint again
    later = events_of(agent, "and now?")
    assert any(isinstance(e, WarningEvent) and e.code == BLOCKED_CODE for e in later)
    assert len(agent.model.calls) == 6  # type: ignore[attr-defined]
