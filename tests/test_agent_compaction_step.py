"""``compress_context``: the steps around a compaction, and what happens when one fails."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

from agent_helpers import (
    ROTATION,
    call,
    calls,
    compressor,
    history,
    make_agent,
    memory_manager,
    stored,
    user,
)
from palimpsest import ScriptedChatModel
from palimpsest.agent.compaction_step import LEDGER_MARKER
from palimpsest.agent.events import CompactionEvent, TurnEnd, WarningEvent
from palimpsest.agent.ledger import LEDGER_HEADER
from palimpsest.agent.todo import INJECTION_HEADER
from palimpsest.agent.tools import ToolOutcome
from palimpsest.compaction.markers import is_compaction_summary_message
from palimpsest.summarizers.llm import LLMSummarizer
from palimpsest.tokens import estimate_messages_tokens_rough


def injected(messages: list[dict[str, Any]]) -> list[str]:
    return [
        str(m["content"]).split("\n", 1)[0]
        for m in messages
        if str(m.get("content")).startswith((LEDGER_HEADER, INJECTION_HEADER))
    ]


def test_ledger_and_todos_are_injected_once_after_each_compaction(tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    write = calls(call("write_file", {"path": "notes.txt", "content": "x"}, "w"))
    agent = make_agent(
        tmp_path, [write, "written"], messages=history(12), compressor=compressor(), workdir=work
    )
    agent.ask("write notes.txt please")
    agent.todos.write([{"id": "1", "content": "ship it", "status": "in_progress"}])
    agent.compress()
    assert injected(agent.messages) == [LEDGER_HEADER, INJECTION_HEADER]
    ledger = next(m for m in agent.messages if m.get(LEDGER_MARKER))
    assert "notes.txt" in ledger["content"]
    assert agent.messages[-1]["content"].startswith(INJECTION_HEADER)
    for m in history(6, start=40):
        agent.append(m)
    agent.compress()
    assert injected(agent.messages) == [LEDGER_HEADER, INJECTION_HEADER]
    # the marker survives the store: a resumed agent still recognises its ledger
    assert any(m.get(LEDGER_MARKER) for m in stored(agent))


def test_the_summarizer_is_told_what_the_ledger_carries(tmp_path: Path):
    summarizer_model = ScriptedChatModel(default="## Active Task\nNone.")
    engine = compressor(summarizer=LLMSummarizer(summarizer_model))
    agent = make_agent(tmp_path, messages=history(12, chars=900), compressor=engine)
    agent.compress()
    prompt = summarizer_model.calls[0][0][-1]["content"]
    assert agent.ledger.summarizer_note() in prompt


def test_a_store_failure_at_the_split_keeps_the_compacted_list(tmp_path: Path):
    agent = make_agent(tmp_path, messages=history(12), compressor=compressor(), settings=ROTATION)
    sid = agent.session_id
    assert agent.store is not None and sid is not None
    agent.store.delete_session(sid)  # the continuation cannot find its parent now
    result = agent.command("/compress")
    assert result is not None
    codes = [e.code for e in result.events if isinstance(e, WarningEvent)]
    assert "session_split_failed" in codes
    assert agent.session_id == sid and len(agent.messages) < 24
    assert agent.compressor.compression_count == 1


def test_an_engine_error_leaves_the_history_alone(tmp_path: Path):
    agent = make_agent(tmp_path, messages=history(12), compressor=compressor())
    agent.messages.append({"role": "bogus", "content": "x"})  # not a transcript
    before = list(agent.messages)
    event = agent.compress()
    assert not event.compacted and event.reason
    assert agent.messages == before


def test_ctrl_c_while_summarizing_leaves_the_session_consistent(tmp_path: Path):
    summarizer_model = ScriptedChatModel([KeyboardInterrupt()])
    engine = compressor(8_000, summarizer=LLMSummarizer(summarizer_model))
    msgs = history(14, chars=1_200)
    agent = make_agent(tmp_path, ["unused"], messages=msgs, compressor=engine, context_length=None)
    events = list(agent.run("next step please"))
    end = events[-1]
    assert isinstance(end, TurnEnd) and end.interrupted
    assert agent.messages == [*msgs, user("next step please")]
    assert stored(agent) == agent.messages
    assert agent.store.get_session(agent.session_id)["end_reason"] is None  # type: ignore[union-attr,index]


def test_async_turn_compacts_through_the_same_flow(tmp_path: Path):
    home = tmp_path / "home"
    flush = calls(call("memory", {"action": "add", "target": "memory", "content": "async ok"}))
    agent = make_agent(
        tmp_path,
        model=ScriptedChatModel([flush], default="done"),
        messages=history(14, chars=1_200),
        compressor=compressor(8_000),
        memory=memory_manager(home),
        context_length=None,
    )

    async def go() -> list[Any]:
        return [e async for e in agent.arun("continue the work")]

    events = asyncio.run(go())
    compaction = next(e for e in events if isinstance(e, CompactionEvent))
    assert compaction.path == "preflight" and compaction.compacted
    assert "async ok" in agent.system_prompt
    assert isinstance(events[-1], TurnEnd) and events[-1].text == "done"
    assert stored(agent) == agent.messages


def test_the_continuation_takes_the_next_lineage_title(tmp_path: Path):
    agent = make_agent(tmp_path, messages=history(12), compressor=compressor(), settings=ROTATION)
    assert agent.store is not None and agent.session_id is not None
    agent.store.set_session_title(agent.session_id, "Build API")
    agent.compress()
    assert agent.store.get_session(agent.session_id)["title"] == "Build API #2"  # type: ignore[index]


def test_the_continuation_row_holds_the_guards_after_the_compaction(tmp_path: Path):
    from palimpsest.agent.persistence import read_guards, save_guards

    engine = compressor()
    agent = make_agent(tmp_path, messages=history(12), compressor=engine)
    engine.ineffective_compression_count = 1  # one weak pass before: stored on the row
    agent.guards = save_guards(agent.store, agent.session_id, engine, agent.guards)
    agent.compress()  # a good pass resets the count; the child inherited the old 1
    assert engine.ineffective_compression_count == 0
    row = read_guards(agent.store, agent.session_id)  # type: ignore[arg-type]
    assert row is not None and row.ineffective == 0


def test_the_ledger_yields_when_it_would_undo_what_the_summary_saved(tmp_path: Path):
    """In a tiny window a long ledger can outweigh a small saving: the compaction still
    shrinks the context (the ledger is left out), or a recovery pass would see no progress."""
    work = tmp_path / "work"
    work.mkdir()
    agent = make_agent(
        tmp_path, messages=history(6, chars=300), compressor=compressor(), workdir=work
    )
    for n in range(20):  # a ledger larger than the few short turns it would sit beside
        agent.ledger.record_call(
            "write_file",
            {"path": f"src/package/module_number_{n}.py", "content": "x"},
            ToolOutcome(f"Wrote src/package/module_number_{n}.py"),
            turn=1,
        )
    before = estimate_messages_tokens_rough(agent.messages)
    event = agent.compress()
    assert event.compacted
    assert not any(m.get(LEDGER_MARKER) for m in agent.messages)
    assert estimate_messages_tokens_rough(agent.messages) < before
    # with room to spare the ledger is there, as usual
    agent2 = make_agent(
        tmp_path / "b", messages=history(12, chars=900), compressor=compressor(), workdir=work
    )
    agent2.ledger.record_call(
        "write_file", {"path": "a.py", "content": "x"}, ToolOutcome("Wrote a.py"), turn=1
    )
    assert agent2.compress().compacted
    assert any(m.get(LEDGER_MARKER) for m in agent2.messages)


def test_a_window_too_small_for_the_protected_head_and_tail_keeps_only_the_task(
    tmp_path: Path,
):
    """Eight large messages over the threshold: the protected head (3) and tail (3) leave a
    middle too small to shrink. Automatic and reactive compaction then keep just the first
    message as the head, so the session does not overflow on every later turn (measured
    with the real 0.5B model at 2,048 tokens); a manual /compress does not."""
    big = [
        user(f"Log {i}: " + "numbers 12345 67890 " * 60)
        if i % 2 == 0
        else {"role": "assistant", "content": f"Answer {i}: " + "looked at it " * 40}
        for i in range(7)
    ]
    engine = compressor(4_000, protect_last_n=3)
    agent = make_agent(tmp_path, ["fine"], messages=big, compressor=engine, context_length=4_000)
    events = list(agent.run("And this one? " + "numbers 12345 " * 40))
    done = [e for e in events if isinstance(e, CompactionEvent) and e.compacted]
    assert done and done[0].path == "preflight"
    assert isinstance(events[-1], TurnEnd) and events[-1].completed
    assert agent.messages[0] == big[0]  # the task stays
    assert engine.protect_first_n == 3  # the engine's setting is back
    assert done[0].after_messages < done[0].before_messages + 1
    manual = make_agent(
        tmp_path / "m",
        messages=big,
        compressor=compressor(4_000, protect_last_n=3),
        context_length=4_000,
    )
    assert not manual.compress().compacted


def test_a_summary_call_that_hangs_is_abandoned_and_the_deterministic_summary_used(
    tmp_path: Path,
):
    release = threading.Event()

    def hang(messages: list[dict[str, Any]]) -> str:
        release.wait(10)
        return "## Active Task\nLATE SUMMARY FROM THE HUNG CALL"

    summary_model = ScriptedChatModel([hang], default="## Active Task\nsecond")
    engine = compressor(summarizer=LLMSummarizer(summary_model), summary_timeout=0.5)
    agent = make_agent(tmp_path, messages=history(12, chars=900), compressor=engine)
    started = time.monotonic()
    result = agent.command("/compress")
    elapsed = time.monotonic() - started
    assert result is not None
    release.set()
    assert elapsed < 3.0  # about the timeout, not the 10 s the call would have taken
    event = next(e for e in result.events if isinstance(e, CompactionEvent))
    assert event.compacted and event.fallback_used
    warning = next(e for e in result.events if isinstance(e, WarningEvent))
    assert warning.code == "summary_failed" and "did not finish within 0.5 s" in warning.message
    summary = next(m for m in agent.messages if is_compaction_summary_message(m))
    assert "Request 0" in str(summary["content"]) or "parser_" in str(summary["content"])
    for _ in range(100):  # let the abandoned call return: it must change nothing
        if not any(t.name.endswith("/summary") for t in threading.enumerate()):
            break
        time.sleep(0.02)
    assert "LATE SUMMARY" not in str(agent.messages)
    assert stored(agent) == agent.messages
    assert len(summary_model.calls) == 1  # abandoned: no retry behind the caller's back
