"""The agent's shared state (agent/state.py): the operations every step relies on, run on a
real agent with a real store, and the steps driven on the state directly (no loop.py)."""

from __future__ import annotations

from pathlib import Path

from agent_helpers import ROTATION, answer, asst, compressor, history, make_agent, stored, user
from palimpsest.agent.commands import run_command
from palimpsest.agent.compaction_step import manual_compaction
from palimpsest.agent.driver import drain
from palimpsest.agent.state import AFTER_COMPACTION_SHARE, AgentState
from palimpsest.storage.sessions import SessionStore


def test_append_stores_each_message_at_once(tmp_path: Path) -> None:
    agent = make_agent(tmp_path)
    assert isinstance(agent, AgentState)
    agent.append(user("first"))
    assert stored(agent) == [user("first")]
    agent.append(asst("second"))
    # a fresh store handle on the same file sees both: written, not only buffered
    again = SessionStore(tmp_path / "state.db")
    assert agent.session_id is not None
    assert [m["content"] for m in again.get_messages(agent.session_id)] == ["first", "second"]


def test_build_request_puts_the_fence_on_the_turns_own_message(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, messages=[user("old question"), asst("old answer")])
    agent.append(user("new question"))
    agent._fence_target = "new question"
    request = agent.build_request("<memory-context>x</memory-context>")
    assert request[0] == {"role": "system", "content": agent.system_prompt}
    assert [m["content"] for m in request[1:3]] == ["old question", "old answer"]
    assert request[3]["content"] == "new question\n\n<memory-context>x</memory-context>"
    assert agent.messages[-1]["content"] == "new question"  # the history is untouched


def test_aim_compaction_leaves_room_for_what_every_request_carries(tmp_path: Path) -> None:
    engine = compressor(8_000)
    agent = make_agent(tmp_path, compressor=engine, builtin_tools=True)
    agent.aim_compaction()
    share = int(engine.threshold_tokens * AFTER_COMPACTION_SHARE)
    overhead = agent.request_overhead()
    assert overhead > 0  # the system prompt and the builtin tools' schemas
    assert engine.compaction_target_tokens == share - overhead


def test_steps_run_on_the_state_without_the_loop(tmp_path: Path) -> None:
    """/compress, /status and /new call the step functions with the state itself."""
    agent = make_agent(
        tmp_path,
        [answer("summary")],
        messages=history(12),
        compressor=compressor(8_000),
        speculative=False,
        settings=ROTATION,
    )
    first = agent.session_id
    _events, outcome = drain(agent.model, manual_compaction(agent, "parser"))
    assert outcome.compacted and agent.session_id != first
    status = run_command(agent, "/status")
    assert status is not None and f"Session: {agent.session_id}" in status.text
    compacted = agent.session_id
    new = run_command(agent, "/new")
    assert new is not None and agent.session_id not in (first, compacted)
    assert agent.messages == []
